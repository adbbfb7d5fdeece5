// SPDX-License-Identifier: Apache-2.0
#pragma once
// The hospital's identity provider for the sign-in tests: Ory Hydra (OpenID Connect: authorization code with PKCE,
// refresh, revocation, introspection), built by scripts/install-deps.sh, as a child process on free loopback
// ports, its database a PostgreSQL of its own (as hospitals run it: Hydra on SQLite in memory answers
// server_error to two requests at once — a window renewing while the CLI signs in — "unable to serialize access").
// Its login and consent are the tests' browser's (support/oidc_browser.py).
// And the gate in front of the PACS: nginx asking support/token_validator.py, which asks Hydra, for each request.

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <memory>

class QProcess;

namespace spectrum::test {

class PostgresProcess;

class IdentityProviderProcess
{
public:
    IdentityProviderProcess();
    ~IdentityProviderProcess();
    /// Starts its database, then it, and waits (up to 30 s) until its discovery document is served; what failed is
    /// logged.
    bool start();
    void stop();
    QString issuer() const;    ///< http://127.0.0.1:PORT/
    QString adminUrl() const;  ///< http://127.0.0.1:PORT
    QString introspectionUrl() const;
    /// A public client (no secret, PKCE) allowed these audiences, with its access tokens living `accessSeconds`
    /// (0: an hour).
    bool addClient(const QString &clientId, const QStringList &audiences, int accessSeconds = 0);
    /// What the provider says of a token (RFC 7662): {"active": …, "aud": …, "sub": …}.
    QJsonObject introspect(const QString &token) const;
    /// Revokes a token at its public endpoint, as a client would.
    bool revoke(const QString &token, const QString &clientId) const;

private:
    QString m_dir;
    std::unique_ptr<PostgresProcess> m_database;
    QProcess *m_process;
    quint16 m_public, m_admin;
};

/// The tests' browser: the environment a program opening the browser must be given (SPECTRUM_BROWSER and what
/// oidc_browser.py reads), its log in `logFile`.
QList<QPair<QString, QString>> browserEnvironment(const IdentityProviderProcess &idp, const QString &logFile);

} // namespace spectrum::test
