// SPDX-License-Identifier: Apache-2.0
#pragma once
// CacheShare: a workstation's disk cache shared read-only with the other workstations of its reading room — the
// seeds' cluster store. A blob server (BlobServer, readOnly) over the cache, on every address, with the token and
// TLS certificate the store configuration names (workstation "share" and "tls"); the others add it as a blobd store
// and find and fetch from it before the central archives (StoreRegistry::nearestFirst). It follows the
// configuration: serves, stops or moves as it changes.

#include "spectrum/core/result.h"

#include <QObject>
#include <QSslConfiguration>

#include <memory>

namespace spectrum {

class BlobServer;
class BlobStore;
class StoreConfigFile;

class CacheShare : public QObject
{
public:
    /// `cache` must outlive the share.
    explicit CacheShare(BlobStore *cache, QObject *parent = nullptr);
    ~CacheShare() override;

    /// Serves, stops or restarts as `config` says (its workstation's sharePort, shareToken, shareAddress,
    /// tlsCertificate and tlsKey). Over TLS only, unless the configuration allows plain (sharePlain) on one named
    /// address. An error says why the cache is not shared (no TLS, a port taken, a token or certificate unreadable).
    Error follow(const StoreConfigFile &config);
    void stop();

    bool isSharing() const { return m_server != nullptr; }
    quint16 port() const;
    bool tls() const { return m_tls; }

private:
    BlobStore *m_cache;
    std::unique_ptr<BlobServer> m_server;
    QString m_serving;  ///< what the running server was started from (port, token, certificate): unchanged, kept
    bool m_tls = false;
};

/// A server's TLS configuration from a PEM certificate chain and its RSA or EC private key; clients are not asked
/// for certificates (they present a token).
Result<QSslConfiguration> serverTlsConfiguration(const QString &certificateFile, const QString &keyFile);

} // namespace spectrum
