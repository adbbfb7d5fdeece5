// SPDX-License-Identifier: Apache-2.0
#pragma once
// HttpStream: one plain-HTTP/1.1 exchange whose answer is read on a thread of its own, straight from the socket into
// the consumer's buffers. For WADO-RS retrievals, where a study is one long multipart answer, and for S3's GETs,
// HEADs and PUTs over plain HTTP (hundreds of objects a study, over connections kept open between them): through
// QNetworkAccessManager the same 150 MiB cost three times the CPU of reading the socket directly (its HTTP
// thread's buffers, one wake-up of the receiving thread per read, and a copy out) — measured with perf, 0.13
// against 0.04 CPU-seconds — and on a 2-core workstation that CPU is what the PACS needs to send.
//
// Only what these need: a request with or without a body; Content-Length, chunked or until-close answers; a
// timeout for each wait (no byte for that long ends it); cancel from any thread; connections kept open for the
// next request to the same peer (HttpConnections), one retried afresh when the peer had closed it meanwhile. TLS,
// proxies and every other request stay with QNetworkAccessManager (the clients choose: canStreamDirectly()).

#include "httpanswer.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QUrl>

#include <QMutex>

#include <atomic>
#include <vector>

namespace spectrum {

/// Connections left open by answers that ended cleanly, per peer ("host:port"), for the next request there.
/// Process-wide (every client to a peer shares them); idle ones are closed after kIdleMs, or when the peer has
/// closed them (seen before reuse).
class HttpConnections
{
public:
    static HttpConnections &shared();
    ~HttpConnections();
    /// An open connection to `peer`, or -1. The caller owns it.
    int take(const QByteArray &peer);
    /// Back for reuse (closed when `peer` has kMaxIdlePerPeer idle already).
    void give(const QByteArray &peer, int fd);
    int idle(const QByteArray &peer) const;
    /// Closes every idle connection (tests; a store whose address changed).
    void clear();

    static constexpr qint64 kIdleMs = 15000;
    static constexpr int kMaxIdlePerPeer = 32;

private:
    struct Idle
    {
        int fd;
        qint64 since;  ///< ms of a monotonic clock
    };
    mutable QMutex m_mutex;
    std::vector<std::pair<QByteArray, std::vector<Idle>>> m_peers;
};

struct HttpRequest
{
    QByteArray method = "GET";
    QUrl url;                                   ///< http://
    QList<QPair<QByteArray, QByteArray>> fields;  ///< sent as they are (Accept, Authorization…)
    QByteArray body;                            ///< sent with its Content-Length when the method carries one (PUT, POST)
    /// Over a connection from HttpConnections::shared(), given back there when the answer ended cleanly; else a
    /// connection of its own, closed after the answer ("Connection: close").
    bool keepAlive = false;
};

/// Runs the exchange to its end (blocking: call it on a worker thread). The error says what broke:
/// ErrorCode::Network (connection, a broken answer), ErrorCode::Timeout (nothing for `timeoutMs`),
/// ErrorCode::Cancelled, or the consumer's own. A kept connection the peer had closed is replaced by a new one
/// and the request sent again, before the consumer saw anything.
Error runHttp(const HttpRequest &request, int timeoutMs, HttpBodyConsumer &consumer, const HttpCancel &cancel);

/// Whether a request to `url` can go straight to the socket: plain HTTP with no proxy to go through.
bool canStreamDirectly(const QUrl &url);

/// Runs the GET to its end (blocking: call it on a worker thread). `url` is http://; `fields` are sent as they
/// are (Accept, Authorization…). The error says what broke: ErrorCode::Network (connection, a broken answer),
/// ErrorCode::Timeout (nothing for `timeoutMs`), ErrorCode::Cancelled, or the consumer's own.
Error runHttpGet(const QUrl &url, const QList<QPair<QByteArray, QByteArray>> &fields, int timeoutMs, HttpBodyConsumer &consumer,
                 const HttpCancel &cancel);

} // namespace spectrum
