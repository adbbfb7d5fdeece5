// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/blobs/cacheshare.h"

#include "spectrum/stores/blobs/blobserver.h"
#include "spectrum/core/privatefile.h"
#include "spectrum/stores/archives/storeconfig.h"

#include <QCryptographicHash>
#include <QFile>
#include <QSslKey>

namespace spectrum {

Result<QSslConfiguration> serverTlsConfiguration(const QString &certificateFile, const QString &keyFile)
{
    const QList<QSslCertificate> chain = QSslCertificate::fromPath(certificateFile);
    if (chain.isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("no PEM certificate in %1").arg(certificateFile));
    Result<QByteArray> read = readPrivateFile(keyFile, QStringLiteral("the private key"), 1 << 20);
    if (!read.isOk())
        return read.error();
    const QByteArray pem = read.value();
    QSslKey key(pem, QSsl::Rsa, QSsl::Pem);
    if (key.isNull())
        key = QSslKey(pem, QSsl::Ec, QSsl::Pem);
    if (key.isNull())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("no RSA or EC private key in %1").arg(keyFile));
    QSslConfiguration conf = QSslConfiguration::defaultConfiguration();
    conf.setLocalCertificateChain(chain);
    conf.setPrivateKey(key);
    conf.setPeerVerifyMode(QSslSocket::VerifyNone);  // clients authenticate with the token
    return conf;
}

CacheShare::CacheShare(BlobStore *cache, QObject *parent) : QObject(parent), m_cache(cache) {}

CacheShare::~CacheShare() = default;

quint16 CacheShare::port() const
{
    return m_server ? m_server->port() : 0;
}

void CacheShare::stop()
{
    if (m_server)
        m_server->close();
    m_server.reset();
    m_serving.clear();
    m_tls = false;
}

Error CacheShare::follow(const StoreConfigFile &config)
{
    const WorkstationConfig &w = config.workstation;
    if (w.sharePort <= 0) {
        stop();
        return Error();
    }
    Result<QString> token = config.reveal(w.shareToken);
    if (!token.isOk() || token.value().isEmpty()) {
        stop();
        return Error(ErrorCode::Authentication, QStringLiteral("the cache is not shared: its token cannot be read (%1)")
                                                    .arg(token.isOk() ? QStringLiteral("empty") : token.error().toString()));
    }
    // Without TLS, anyone on the wire reads the token and the images: only on a named address the administrator
    // chose to share plain on (a reading room's own network), never on every address.
    const QHostAddress address = w.shareAddress.isEmpty() ? QHostAddress(QHostAddress::Any) : QHostAddress(w.shareAddress);
    if (w.tlsCertificate.isEmpty()) {
        const bool named = !w.shareAddress.isEmpty() && address != QHostAddress(QHostAddress::Any) && address != QHostAddress(QHostAddress::AnyIPv4)
                        && address != QHostAddress(QHostAddress::AnyIPv6);
        if (!w.sharePlain || !named) {
            stop();
            return Error(ErrorCode::InvalidArgument,
                         QStringLiteral("the cache is not shared: it is shared over TLS (the workstation's \"tls\" certificate and key), or "
                                        "without TLS only on one named address the configuration allows it on (\"share\": {\"address\": \"10.1.2.3\", "
                                        "\"plain\": true})"));
        }
    }
    // What the server runs on, the token only as a digest: an unchanged configuration keeps it (and its clients).
    const QString serving = QStringLiteral("%1|%2|%3|%4|%5").arg(w.sharePort).arg(QString::fromLatin1(QCryptographicHash::hash(token.value().toUtf8(), QCryptographicHash::Sha256).toHex()),
                                                                 w.tlsCertificate, w.tlsKey, address.toString());
    if (m_server && serving == m_serving)
        return Error();
    stop();
    BlobServerOptions options;
    options.token = token.value();
    options.readOnly = true;
    if (!w.tlsCertificate.isEmpty()) {
        Result<QSslConfiguration> tls = serverTlsConfiguration(w.tlsCertificate, w.tlsKey);
        if (!tls.isOk())
            return tls.error().withContext(QStringLiteral("the cache is not shared"));
        options.tls = true;
        options.tlsConfiguration = tls.value();
    }
    auto server = std::make_unique<BlobServer>(m_cache, options);
    if (Error e = server->listen(address, quint16(w.sharePort)); e.isError())
        return e.withContext(QStringLiteral("the cache is not shared on %1 port %2").arg(w.shareAddress.isEmpty() ? QStringLiteral("every address") : w.shareAddress).arg(w.sharePort));
    m_server = std::move(server);
    m_serving = serving;
    m_tls = options.tls;
    return Error();
}

} // namespace spectrum
