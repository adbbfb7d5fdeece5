// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the blob-protocol suites share: the token, a relay that can damage, cut or stall what the server sends, helpers to pull and push.

#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/blobs/diskfill.h"
#include "spectrum/transfer/blobclient.h"
#include "spectrum/transfer/blobprotocol.h"
#include "spectrum/transfer/buffersink.h"
#include "testsupport.h"
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QDir>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <sys/types.h>
#include <QTimer>
#include <QScopeGuard>

namespace spectrum::test {

using namespace spectrum;

inline const QString kToken = QStringLiteral("test-token-1234");

using Blobd = BlobdProcess;

/// A TCP relay between client and server. Hooks act on the server → client bytes of each connection.
class Relay : public QObject
{
public:
    explicit Relay(quint16 upstream) : m_upstream(upstream)
    {
        m_server.listen(QHostAddress::LocalHost, 0);
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *down = m_server.nextPendingConnection()) {
                const int index = m_connections++;
                auto *up = new QTcpSocket(down);
                auto *pos = new qint64(0);
                connect(down, &QObject::destroyed, [pos] { delete pos; });
                up->connectToHost(QHostAddress::LocalHost, m_upstream);
                connect(down, &QTcpSocket::readyRead, up, [down, up] {
                    if (up->state() == QAbstractSocket::ConnectedState)
                        up->write(down->readAll());
                });
                connect(up, &QTcpSocket::connected, down, [down, up] { up->write(down->readAll()); });
                connect(up, &QTcpSocket::readyRead, down, [this, down, up, index, pos] {
                    QByteArray bytes = up->readAll();
                    if (onServerBytes && !onServerBytes(index, *pos, bytes)) {
                        down->abort();  // the hook cut the connection
                        return;
                    }
                    *pos += bytes.size();
                    if (!bytes.isEmpty())
                        down->write(bytes);
                });
                connect(up, &QTcpSocket::disconnected, down, &QTcpSocket::disconnectFromHost);
                connect(down, &QTcpSocket::disconnected, down, [down] { down->deleteLater(); });
            }
        });
    }
    quint16 port() const { return m_server.serverPort(); }
    int connections() const { return m_connections; }

    /// (connection index, stream position of bytes[0], bytes) → false cuts the connection. May edit or drop bytes.
    std::function<bool(int, qint64, QByteArray &)> onServerBytes;

private:
    quint16 m_upstream;
    QTcpServer m_server;
    int m_connections = 0;
};

struct Pulled
{
    Result<PullResult> result;
    QByteArray bytes;
    bool sinkRequested = false;
};

inline Pulled pull(BlobClient &client, const QString &key, ByteRange range = ByteRange::all())
{
    Pulled out;
    auto sink = std::make_shared<std::unique_ptr<BufferSink>>();
    out.result = runSync(client.pull(key, [&out, sink](const RemoteBlobInfo &, qint64 b, qint64 e) -> Result<ByteSink *> {
        out.sinkRequested = true;
        *sink = std::make_unique<BufferSink>(e - b);
        return sink->get();
    }, range));
    if (*sink)
        out.bytes = (*sink)->toByteArray();
    return out;
}

} // namespace spectrum::test
