// SPDX-License-Identifier: Apache-2.0
#include "blobclient/channels.h"

#include <QSslConfiguration>

namespace spectrum::blobwire {

void tuneSocket(QTcpSocket *s, const TransferOptions &opt)
{
    s->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    if (opt.socketBufferBytes > 0) {
        s->setSocketOption(QAbstractSocket::ReceiveBufferSizeSocketOption, opt.socketBufferBytes);
        s->setSocketOption(QAbstractSocket::SendBufferSizeSocketOption, opt.socketBufferBytes);
    }
}

Error socketError(QTcpSocket *s, const QString &what)
{
    const bool tls = s->error() == QAbstractSocket::SslHandshakeFailedError || s->error() == QAbstractSocket::SslInvalidUserDataError;
    return Error(tls ? ErrorCode::Authentication : ErrorCode::Network,
                 QStringLiteral("%1: %2").arg(what, tls ? QStringLiteral("TLS: ") + s->errorString() : s->errorString()));
}

/// Configures a socket for the endpoint: trusted CAs for TLS. Plain endpoints use it as a TCP socket.
void prepareSocket(QSslSocket *s, const BlobEndpoint &ep)
{
    if (!ep.tls)
        return;
    QSslConfiguration conf = QSslConfiguration::defaultConfiguration();
    if (!ep.caFile.isEmpty())
        conf.addCaCertificates(ep.caFile);
    conf.setPeerVerifyMode(QSslSocket::VerifyPeer);
    s->setSslConfiguration(conf);
}

/// Connects, encrypted for TLS endpoints; `ready` fires once bytes may be sent (after the handshake).
void startConnection(QSslSocket *s, const BlobEndpoint &ep, QObject *context, std::function<void()> ready)
{
    if (ep.tls) {
        QObject::connect(s, &QSslSocket::encrypted, context, ready);
        s->connectToHostEncrypted(ep.host, ep.port);
    } else {
        QObject::connect(s, &QSslSocket::connected, context, ready);
        s->connectToHost(ep.host, ep.port);
    }
}

} // namespace spectrum::blobwire
