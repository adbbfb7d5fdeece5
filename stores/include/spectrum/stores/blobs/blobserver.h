// SPDX-License-Identifier: Apache-2.0
#pragma once
// BlobServer: serves a BlobStore over the blob protocol (transfer/PROTOCOL.md) — the heart of spectrum-blobd.
// One event loop serves every connection; memory per connection is bounded (a send queue of at most a few
// frames, a receive buffer of one frame); idle connections are closed; sessions end with their control
// connection and release what they pinned.

#include "spectrum/stores/blobs/blobstore.h"

#include <QHostAddress>
#include <QSslConfiguration>
#include <QObject>

namespace spectrum {

struct BlobServerOptions
{
    QString token;                        ///< required from every client unless allowNoAuth
    bool allowNoAuth = false;             ///< only honoured when listening on a loopback address
    int maxConnections = 256;             ///< beyond this, new connections are closed at once
    int maxStreamsPerSession = 16;        ///< data connections one session may attach
    qint64 maxChunk = 64 << 20;           ///< the largest READ accepted
    int idleTimeoutMs = 120000;           ///< a connection silent this long is closed
    int socketBufferBytes = 0;            ///< SO_SNDBUF / SO_RCVBUF for accepted sockets; 0: system default
    bool tls = false;                     ///< every connection encrypted with tlsConfiguration (certificate, key)
    /// Serves reads only (stat, list, open, read): reserve, commit and remove are refused (NotAllowed). A
    /// workstation's cache shared with its reading room, an archive folder served as it is.
    bool readOnly = false;
    QSslConfiguration tlsConfiguration;
};

class BlobServer : public QObject
{
    Q_OBJECT
public:
    BlobServer(BlobStore *store, BlobServerOptions options, QObject *parent = nullptr);
    ~BlobServer() override;

    /// Starts listening; port 0 picks a free one (see port()).
    Error listen(const QHostAddress &address, quint16 port);
    quint16 port() const;
    int connectionCount() const;
    void close();

Q_SIGNALS:
    /// A connection was refused or dropped for breaking the rules (for logs and tests).
    void connectionDropped(const QString &peer, const spectrum::Error &reason);

private:
    class Private;
    std::unique_ptr<Private> d;
};

} // namespace spectrum
