// SPDX-License-Identifier: Apache-2.0
#pragma once
// OpenID Connect for a desktop program (RFC 8252, "OAuth 2.0 for Native Apps"): the authorization code flow with
// PKCE (RFC 7636, S256) in the system browser, the browser sent back to a port of this machine bound to 127.0.0.1
// alone, `state` checked against forged redirects and `nonce` against replayed ID tokens; the tokens refreshed and
// revoked (RFC 7009). What the provider offers comes from its discovery document. Plain http is allowed only to an
// identity provider on this machine (a test's); anywhere else it must be https.
//
// The ID token is taken from the token endpoint over TLS, so its issuer is the server TLS authenticated (OIDC Core
// 3.1.3.7): its claims are checked (iss, aud, exp, nonce), its signature is not.

#include "spectrum/core/resultjob.h"

#include <QDateTime>
#include <QJsonObject>
#include <QObject>
#include <QStringList>
#include <QUrl>

#include <functional>
#include <memory>

class QNetworkAccessManager;

namespace spectrum {

struct OidcProvider
{
    QUrl issuer;               ///< https://sso.hospital.org/realms/radiology
    QString clientId;          ///< the workstation's public client (no secret: a desktop program cannot keep one)
    QString audience;          ///< the API its access tokens are for (the PACS); empty: none asked
    QStringList scopes = {QStringLiteral("openid"), QStringLiteral("profile"), QStringLiteral("email"), QStringLiteral("offline_access")};
    QString caFile;            ///< PEM CAs of the provider's certificate besides the system's
    /// "issuer|clientId|audience": one sign-in per provider, client and API, whichever stores use it.
    QString key() const;
};

struct OidcEndpoints
{
    QUrl authorization, token, revocation, endSession;
};

struct OidcTokens
{
    QString accessToken;
    QString refreshToken;      ///< empty: the provider gave none (no offline_access)
    QString idToken;
    QDateTime accessExpires;   ///< UTC; invalid: the provider did not say
    QJsonObject claims;        ///< the ID token's: sub, name, preferred_username, email, given_name, family_name…

    /// What the reader is called: name, else preferred_username, else email, else sub.
    QString displayName() const;
    /// The reader as DICOM PN (family^given) for the documents they sign, from the claims; empty when unknown.
    QString personName() const;
};

class OidcClient : public QObject
{
    Q_OBJECT
public:
    explicit OidcClient(OidcProvider provider, QObject *parent = nullptr);
    ~OidcClient() override;

    const OidcProvider &provider() const { return m_provider; }

    /// The provider's endpoints (its /.well-known/openid-configuration), fetched once.
    ResultJob<OidcEndpoints> *discover();
    /// Signs in: listens on 127.0.0.1 (a free port), hands the authorization URL to `openBrowser`, waits up to
    /// `timeoutMs` for the browser to come back, checks state, exchanges the code (with the PKCE verifier) and
    /// checks the ID token (issuer, audience, expiry, nonce).
    ResultJob<OidcTokens> *signIn(std::function<void(const QUrl &)> openBrowser, int timeoutMs = 300000);
    /// New tokens from a refresh token (the claims of a new ID token, or none).
    ResultJob<OidcTokens> *refresh(const QString &refreshToken);
    /// Asks the provider to forget `token` (a refresh token: with it, the sign-in; RFC 7009). Done when it has no
    /// revocation endpoint.
    ResultJob<Done> *revoke(const QString &token, const QString &typeHint);

    /// The ID token's claims, checked: issued by `issuer` for `clientId`, not expired, with `nonce` (empty: not
    /// checked, as after a refresh). An Authentication error naming what is wrong.
    static Result<QJsonObject> checkIdToken(const QString &idToken, const QString &issuer, const QString &clientId, const QString &nonce);
    /// base64url(SHA-256(verifier)), RFC 7636's S256.
    static QString codeChallenge(const QString &verifier);

private:
    friend class OidcSignInJob;
    QNetworkAccessManager *network();
    Result<OidcTokens> tokensFrom(int status, const QByteArray &body, const QString &nonce, const QString &previousRefresh) const;
    Result<OidcEndpoints> endpointsFrom(const Result<QPair<int, QByteArray>> &answer, const QUrl &url);

    OidcProvider m_provider;
    std::unique_ptr<QNetworkAccessManager> m_network;
    std::optional<OidcEndpoints> m_endpoints;
    QString m_issuerSaid;  ///< the issuer as the discovery document writes it
};

} // namespace spectrum
