// SPDX-License-Identifier: Apache-2.0
#pragma once
// MultipartReader: parses a multipart body (RFC 2046; DICOMweb's multipart/related) as it arrives, in pieces of
// any size. Each part's headers are reported as soon as they are complete, its bytes as they come (never
// the bytes of a delimiter that might still be arriving), and its end as soon as the next delimiter is seen —
// so a WADO-RS instance can go to the cache and the decoder while the rest of the study is still on the wire.
//
// A part with a Content-Length header is taken by its length, without searching its bytes for the delimiter
// (the search cost more than the rest of the parse); the delimiter must then follow exactly, or it is an error.
//
// Bounded: the memory held between feeds is at most the delimiter's length (in a part) or maxHeaderBytes
// (in a part's headers); longer headers, a missing delimiter line end or a body that stops before the closing
// delimiter are errors, never a silently short part.

#include "spectrum/core/error.h"
#include "spectrum/core/result.h"

#include <QByteArray>
#include <QList>
#include <QPair>

#include <functional>

namespace spectrum {

/// A part's header fields, names in lower case, values trimmed, in order.
struct MultipartHeaders
{
    QList<QPair<QByteArray, QByteArray>> fields;
    QByteArray value(const QByteArray &lowerCaseName) const;
};

class MultipartReader
{
public:
    /// The boundary parameter of a Content-Type such as `multipart/related; type="application/dicom";
    /// boundary=abc` (quoted or not). InvalidArgument when it is not multipart or has no usable boundary.
    static Result<QByteArray> boundaryOf(const QByteArray &contentType);

    explicit MultipartReader(QByteArray boundary, qint64 maxHeaderBytes = 64 * 1024);

    std::function<void(int index, const MultipartHeaders &headers)> onPartBegin;
    /// Bytes of part `index`, in order; the pointer is valid during the call only.
    std::function<void(int index, const char *data, qint64 length)> onPartData;
    /// Part `index` is complete. Returning an error stops the reader with it.
    std::function<Error(int index)> onPartEnd;

    /// Parses the next bytes of the body. After the first error every call returns it again.
    Error feed(const char *data, qint64 length);
    Error feed(const QByteArray &bytes) { return feed(bytes.constData(), bytes.size()); }
    /// The body ended: an error unless the closing delimiter was seen.
    Error finish();

    /// Inside a part whose Content-Length is known, with nothing of it held back: how many of its bytes are
    /// still to come. A caller may copy up to that many straight from its source into its own buffer and
    /// report them with takeBody() — one copy less than feed(), which hands them over through onPartData.
    qint64 bodyBytesWanted() const;
    /// The next `length` bytes of the current part (at most bodyBytesWanted()) were taken by the caller.
    Error takeBody(qint64 length);
    /// Inside a part's bytes (as opposed to a delimiter or headers, which are short).
    bool isInPartBody() const { return m_state == State::Data; }

    bool isComplete() const { return m_state == State::Epilogue; }
    int partsCompleted() const { return m_parts; }

private:
    enum class State { Preamble, AfterDelimiter, Headers, Data, DelimiterExpected, Epilogue, Failed };
    Error partEnded();
    /// Consumes what it can of [data, data + length); returns how much.
    qint64 parse(const char *data, qint64 length);
    Error fail(const QString &message);

    QByteArray m_delimiter;  ///< CRLF "--" boundary
    qint64 m_maxHeaderBytes;
    QByteArray m_carry;      ///< unconsumed bytes from earlier feeds
    State m_state = State::Preamble;
    int m_parts = 0;         ///< parts completed
    qint64 m_remaining = -1; ///< bytes of the current part still to come, when its headers gave a Content-Length
    Error m_error;
};

} // namespace spectrum
