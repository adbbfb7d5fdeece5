// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading one HTTP/1.1 answer (RFC 9112) from wherever its bytes come: interim 1xx answers passed over, the status
// line and header fields, then the body by its framing — a Content-Length, chunks, or until the connection closes —
// into an HttpBodyConsumer, straight into its memory when it offers some. The socket is httpstream.cpp's; the
// fuzzer (tests/fuzz/fuzz_httpanswer.cpp) feeds bytes from memory, split anywhere.

#include "spectrum/core/error.h"
#include "spectrum/core/result.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

#include <atomic>

namespace spectrum {

struct HttpHead
{
    int status = 0;
    bool http11 = true;                            ///< HTTP/1.1 (else 1.0: a kept connection only when it says so)
    QList<QPair<QByteArray, QByteArray>> fields;  ///< names in lower case, values trimmed
    QByteArray value(const QByteArray &lowerCaseName) const;
};

/// What takes the answer, called on the reading thread.
class HttpBodyConsumer
{
public:
    virtual ~HttpBodyConsumer() = default;
    /// The status line and header fields are in. An error stops the exchange with it.
    virtual Error head(const HttpHead &head) = 0;
    /// Memory for at most `wanted` of the next body bytes, read into it directly; null: hand them to feed().
    /// `*capacity` (≤ wanted) says how much it holds.
    virtual char *directBuffer(qint64 wanted, qint64 *capacity) = 0;
    /// `n` bytes were read into the last directBuffer().
    virtual Error tookDirect(qint64 n) = 0;
    virtual Error feed(const char *data, qint64 n) = 0;
    /// The body is complete.
    virtual Error end() = 0;
};

/// Makes a cancel reach a stream blocked in the kernel at once (a pipe it also waits on).
class HttpCancel
{
public:
    HttpCancel();
    ~HttpCancel();
    HttpCancel(const HttpCancel &) = delete;
    HttpCancel &operator=(const HttpCancel &) = delete;
    void cancel();
    bool isCancelled() const { return m_cancelled.load(); }
    int fd() const { return m_pipe[0]; }

private:
    std::atomic<bool> m_cancelled{false};
    int m_pipe[2] = {-1, -1};
};

/// Where an answer's bytes come from.
class HttpAnswerSource
{
public:
    virtual ~HttpAnswerSource() = default;
    /// Up to `capacity` bytes (at least one), or 0 at the end of the stream. `bulk`: into a large buffer that wants
    /// many bytes (a body) — a socket may then wait for a good share of them before it returns.
    virtual Result<qint64> receive(char *into, qint64 capacity, bool bulk) = 0;
};

struct HttpAnswerEnd
{
    Error error;               ///< what broke (ErrorCode::Network for a broken answer), or the consumer's own
    bool nothingCame = false;  ///< the error came before any byte of the answer (a kept connection the peer closed)
    bool reusable = false;     ///< ended by its framing, and the peer did not ask to close: the connection may serve another
};

/// Reads one answer to a `method` request from `source` into `consumer` (its end() called once the body is
/// whole). `peer` names the other end in errors. `cancel` (may be null) is looked at between reads.
HttpAnswerEnd readHttpAnswer(HttpAnswerSource &source, const QByteArray &method, const QString &peer, HttpBodyConsumer &consumer,
                             const HttpCancel *cancel = nullptr);

} // namespace spectrum
