// SPDX-License-Identifier: Apache-2.0
#pragma once
// One error type for every layer: a scoped code plus a human-readable message.
// Errors are values: they cross threads and signals by copy, never as exceptions.

#include <QMetaType>
#include <QString>

namespace spectrum {

enum class ErrorCode {
    None = 0,
    Cancelled,        // the caller cancelled the job
    InvalidArgument,  // a parameter the caller passed is wrong (bad range, bad size…)
    InvalidKey,       // a blob key that could escape its store or is not allowed
    NotFound,
    OutOfRange,       // a byte range outside the blob
    Io,               // the operating system refused a read, write, rename, fsync…
    DiskFull,         // no space left on the device, or the store's budget cannot hold the blob
    Corrupt,          // stored or received data does not match its checksum or structure
    Timeout,
    Network,
    Protocol,         // a peer sent something the protocol does not allow
    Authentication,   // credentials missing or refused
    Unsupported,      // a valid input we do not handle (transfer syntax, photometric…)
    InvalidDicom,     // input that is not a well-formed DICOM object
    Busy,             // the resource is held by someone else (another process owns the cache), or the server asks us to slow down
    Changed,          // the resource changed since it was first read (a conditional request's precondition failed)
    NotAllowed,       // the peer does not take this kind of request from us (a cache shared read-only)
    Internal,         // a bug: a state that should not be reachable
};

class Error
{
public:
    Error() = default;
    Error(ErrorCode code, QString message) : m_code(code), m_message(std::move(message)) {}

    ErrorCode code() const { return m_code; }
    QString message() const { return m_message; }
    bool isError() const { return m_code != ErrorCode::None; }

    /// "not found: no blob 'x'" — the code's name, then the message.
    QString toString() const;
    static QString codeName(ErrorCode code);

    /// The one place where DCMTK conditions (module, code, text of an OFCondition) become our errors.
    /// Callers in DCMTK-linked modules pass `cond.module(), cond.code(), cond.text()`; core stays DCMTK-free.
    static Error fromDcmtkCondition(unsigned short module, unsigned short code, const char *text,
                                    const QString &context);

    /// The same error with `context: ` in front of its message.
    Error withContext(const QString &context) const;

    friend bool operator==(const Error &a, const Error &b) { return a.m_code == b.m_code && a.m_message == b.m_message; }

private:
    ErrorCode m_code = ErrorCode::None;
    QString m_message;
};

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::Error)
