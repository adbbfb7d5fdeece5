#pragma once
// HttpStream: one plain-HTTP/1.1 GET whose answer is read on a thread of its own, straight from the socket into
// the consumer's buffers. For WADO-RS retrievals, where a study is one long multipart answer: through
// QNetworkAccessManager the same 150 MiB cost three times the CPU of reading the socket directly (its HTTP
// thread's buffers, one wake-up of the receiving thread per read, and a copy out) — measured with perf, 0.13
// against 0.04 CPU-seconds — and on a 2-core workstation that CPU is what the PACS needs to send.
//
// Only what a streaming GET needs: Content-Length, chunked or until-close bodies; a timeout for each wait (no byte
// for that long ends it); cancel from any thread. TLS, proxies and every other request stay with
// QNetworkAccessManager (DicomWebClient chooses).

#include "spectrum/core/error.h"
#include "spectrum/core/result.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QUrl>

#include <atomic>

namespace spectrum {

struct HttpHead
{
    int status = 0;
    QList<QPair<QByteArray, QByteArray>> fields;  ///< names in lower case, values trimmed
    QByteArray value(const QByteArray &lowerCaseName) const;
};

/// What takes the answer, called on the stream's thread.
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

/// Runs the GET to its end (blocking: call it on a worker thread). `url` is http://; `fields` are sent as they
/// are (Accept, Authorization…). The error says what broke: ErrorCode::Network (connection, a broken answer),
/// ErrorCode::Timeout (nothing for `timeoutMs`), ErrorCode::Cancelled, or the consumer's own.
Error runHttpGet(const QUrl &url, const QList<QPair<QByteArray, QByteArray>> &fields, int timeoutMs, HttpBodyConsumer &consumer,
                 const HttpCancel &cancel);

} // namespace spectrum
