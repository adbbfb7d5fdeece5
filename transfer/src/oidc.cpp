// SPDX-License-Identifier: Apache-2.0
#include "spectrum/transfer/oidc.h"

#include "spectrum/core/logging.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QPointer>
#include <QRandomGenerator>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QUrlQuery>

namespace spectrum {

namespace {

constexpr qint64 kClockSkewSeconds = 120;

QString base64Url(const QByteArray &bytes)
{
    return QString::fromLatin1(bytes.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

/// `n` bytes from the system's cryptographic generator, base64url.
QString randomToken(int n)
{
    QByteArray bytes(n, Qt::Uninitialized);
    QRandomGenerator *g = QRandomGenerator::system();
    for (char &c : bytes)
        c = char(g->generate() & 0xff);
    return base64Url(bytes);
}

/// http only to this machine (a test's provider); everything else https.
bool allowedScheme(const QUrl &url)
{
    if (url.scheme() == QLatin1String("https"))
        return true;
    const QString host = url.host();
    return url.scheme() == QLatin1String("http") && (host == QLatin1String("127.0.0.1") || host == QLatin1String("localhost") || host == QLatin1String("::1"));
}

QString normalizedIssuer(QString issuer)
{
    while (issuer.endsWith(QLatin1Char('/')))
        issuer.chop(1);
    return issuer;
}

/// A request's answer: status (0 when none came) and body, or the network's error.
using Answer = QPair<int, QByteArray>;

ResultJob<Answer> *exchange(QNetworkAccessManager *network, QNetworkRequest request, const QByteArray &verb, const QByteArray &form)
{
    return new CallbackJob<Answer>([network, request, verb, form](CallbackJob<Answer> *job) {
        QNetworkRequest r = request;
        if (verb == "POST")
            r.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/x-www-form-urlencoded"));
        r.setRawHeader("Accept", "application/json");
        QNetworkReply *reply = verb == "POST" ? network->post(r, form) : network->get(r);
        QObject::connect(reply, &QNetworkReply::finished, job, [job, reply] {
            reply->deleteLater();
            const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            if (status == 0)  // not reached (a certificate refused too): nothing said about the sign-in itself
                return job->complete(Error(ErrorCode::Network, QStringLiteral("%1: %2").arg(reply->url().toString(QUrl::RemoveQuery), reply->errorString())));
            job->complete(Answer{status, reply->readAll()});
        });
    });
}

/// `first`, then `next(its result, the job)`, which completes the job — at once or after jobs of its own.
template <typename A, typename B>
ResultJob<B> *after(ResultJob<A> *first, std::function<void(const Result<A> &, CallbackJob<B> *)> next)
{
    auto *job = new CallbackJob<B>([first, next](CallbackJob<B> *self) {
        QObject::connect(first, &Job::finished, self, [first, self, next] { next(first->result(), self); });
        first->start(ExecutionPolicy::Async);
    });
    first->setParent(job);
    return job;
}

QNetworkRequest requestFor(const QUrl &url, const QString &caFile)
{
    QNetworkRequest r(url);
    r.setTransferTimeout(30000);
    r.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::NoLessSafeRedirectPolicy);
    if (!caFile.isEmpty() && url.scheme() == QLatin1String("https")) {
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.addCaCertificates(QSslCertificate::fromPath(caFile, QSsl::Pem));
        r.setSslConfiguration(tls);
    }
    return r;
}

QByteArray form(const QList<QPair<QString, QString>> &fields)
{
    QUrlQuery q;
    for (const auto &[k, v] : fields)
        q.addQueryItem(k, QString::fromLatin1(QUrl::toPercentEncoding(v)));
    return q.query(QUrl::FullyEncoded).toLatin1();
}

/// An OAuth error answer's words: "invalid_grant: the refresh token was revoked".
QString oauthError(int status, const QByteArray &body)
{
    const QJsonObject o = QJsonDocument::fromJson(body).object();
    const QString error = o.value(QStringLiteral("error")).toString();
    const QString description = o.value(QStringLiteral("error_description")).toString();
    if (error.isEmpty())
        return QStringLiteral("HTTP %1").arg(status);
    return description.isEmpty() ? error : QStringLiteral("%1: %2").arg(error, description.left(300));
}

/// The browser's request to the loopback port: its path and query, or nothing while the request line is incomplete.
std::optional<QUrl> requestTarget(const QByteArray &head)
{
    const qsizetype end = head.indexOf("\r\n");
    if (end < 0)
        return std::nullopt;
    const QList<QByteArray> parts = head.left(end).split(' ');
    if (parts.size() != 3 || parts[0] != "GET")
        return QUrl();
    return QUrl(QString::fromLatin1(parts[1]));
}

void answerBrowser(QTcpSocket *socket, int status, const QString &title, const QString &text)
{
    const QByteArray body = QStringLiteral("<!doctype html><html><head><meta charset=\"utf-8\"><title>%1</title></head>"
                                           "<body style=\"font-family:sans-serif;margin:3em\"><h1>%1</h1><p>%2</p></body></html>")
                                .arg(title.toHtmlEscaped(), text.toHtmlEscaped())
                                .toUtf8();
    socket->write("HTTP/1.1 " + QByteArray::number(status) + (status == 200 ? " OK" : " Bad Request")
                  + "\r\nContent-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\nConnection: close\r\nContent-Length: "
                  + QByteArray::number(body.size()) + "\r\n\r\n" + body);
    socket->disconnectFromHost();
}

} // namespace

QString OidcProvider::key() const
{
    return normalizedIssuer(issuer.toString()) + QLatin1Char('|') + clientId + (audience.isEmpty() ? QString() : QLatin1Char('|') + audience);
}

QString OidcTokens::displayName() const
{
    for (const char *claim : {"name", "preferred_username", "email", "sub"}) {
        const QString v = claims.value(QLatin1String(claim)).toString().trimmed();
        if (!v.isEmpty())
            return v;
    }
    return QString();
}

QString OidcTokens::personName() const
{
    const QString family = claims.value(QStringLiteral("family_name")).toString().trimmed();
    const QString given = claims.value(QStringLiteral("given_name")).toString().trimmed();
    if (!family.isEmpty())
        return given.isEmpty() ? family : family + QLatin1Char('^') + given;
    return claims.value(QStringLiteral("name")).toString().trimmed();
}

OidcClient::OidcClient(OidcProvider provider, QObject *parent) : QObject(parent), m_provider(std::move(provider))
{
}

OidcClient::~OidcClient() = default;

QNetworkAccessManager *OidcClient::network()
{
    if (!m_network)
        m_network = std::make_unique<QNetworkAccessManager>();
    return m_network.get();
}

QString OidcClient::codeChallenge(const QString &verifier)
{
    return base64Url(QCryptographicHash::hash(verifier.toLatin1(), QCryptographicHash::Sha256));
}

ResultJob<OidcEndpoints> *OidcClient::discover()
{
    if (m_endpoints)
        return makeJob<OidcEndpoints>([e = *m_endpoints](const CancelToken &) -> Result<OidcEndpoints> { return e; }, RunOn::Caller);
    if (!m_provider.issuer.isValid() || !allowedScheme(m_provider.issuer))
        return failedJob<OidcEndpoints>(Error(ErrorCode::InvalidArgument, QStringLiteral("the identity provider '%1' must be an https:// address")
                                                                             .arg(m_provider.issuer.toString())));
    QUrl url(normalizedIssuer(m_provider.issuer.toString()) + QStringLiteral("/.well-known/openid-configuration"));
    QPointer<OidcClient> self(this);
    return after<Answer, OidcEndpoints>(exchange(network(), requestFor(url, m_provider.caFile), "GET", {}),
                                        [self, url](const Result<Answer> &a, CallbackJob<OidcEndpoints> *job) {
        if (!self)
            return job->complete(Error(ErrorCode::Cancelled, QStringLiteral("cancelled")));
        job->complete(self->endpointsFrom(a, url));
    });
}

Result<OidcEndpoints> OidcClient::endpointsFrom(const Result<QPair<int, QByteArray>> &a, const QUrl &url)
{
    if (!a.isOk())
        return a.error().withContext(QStringLiteral("the identity provider"));
    if (a.value().first != 200)
        return Error(ErrorCode::Network, QStringLiteral("the identity provider answered HTTP %1 for %2").arg(a.value().first).arg(url.toString()));
    const QJsonObject o = QJsonDocument::fromJson(a.value().second).object();
    OidcEndpoints e;
    e.authorization = QUrl(o.value(QStringLiteral("authorization_endpoint")).toString());
    e.token = QUrl(o.value(QStringLiteral("token_endpoint")).toString());
    e.revocation = QUrl(o.value(QStringLiteral("revocation_endpoint")).toString());
    e.endSession = QUrl(o.value(QStringLiteral("end_session_endpoint")).toString());
    const QString issuer = o.value(QStringLiteral("issuer")).toString();
    if (normalizedIssuer(issuer) != normalizedIssuer(m_provider.issuer.toString()))
        return Error(ErrorCode::Authentication, QStringLiteral("the identity provider at %1 says it is '%2': not the one configured")
                                                    .arg(m_provider.issuer.toString(), issuer.left(200)));
    if (!e.authorization.isValid() || !e.token.isValid() || !allowedScheme(e.authorization) || !allowedScheme(e.token))
        return Error(ErrorCode::Protocol, QStringLiteral("the identity provider's discovery document has no usable authorization and token endpoints"));
    const QJsonArray methods = o.value(QStringLiteral("code_challenge_methods_supported")).toArray();
    if (!methods.isEmpty() && !methods.contains(QStringLiteral("S256")))
        return Error(ErrorCode::Unsupported, QStringLiteral("the identity provider does not offer PKCE with S256: Spectrum signs in only with it"));
    m_endpoints = e;
    m_issuerSaid = issuer;
    return e;
}

Result<QJsonObject> OidcClient::checkIdToken(const QString &idToken, const QString &issuer, const QString &clientId, const QString &nonce)
{
    const QStringList parts = idToken.split(QLatin1Char('.'));
    if (parts.size() != 3)
        return Error(ErrorCode::Authentication, QStringLiteral("the identity provider sent no ID token (or not a JWT)"));
    const QByteArray payload = QByteArray::fromBase64(parts[1].toLatin1(), QByteArray::Base64UrlEncoding);
    const QJsonObject claims = QJsonDocument::fromJson(payload).object();
    if (claims.isEmpty())
        return Error(ErrorCode::Authentication, QStringLiteral("the ID token's claims cannot be read"));
    if (normalizedIssuer(claims.value(QStringLiteral("iss")).toString()) != normalizedIssuer(issuer))
        return Error(ErrorCode::Authentication, QStringLiteral("the ID token was issued by '%1', not by the identity provider signed in to")
                                                    .arg(claims.value(QStringLiteral("iss")).toString().left(200)));
    const QJsonValue aud = claims.value(QStringLiteral("aud"));
    const bool forUs = aud.isString() ? aud.toString() == clientId : aud.toArray().contains(clientId);
    if (!forUs)
        return Error(ErrorCode::Authentication, QStringLiteral("the ID token is not meant for this program (its audience is not %1)").arg(clientId));
    // OIDC Core 3.1.3.7 (4, 5): a token for several audiences must say who asked for it, and that must be us.
    const QJsonValue azp = claims.value(QStringLiteral("azp"));
    if (aud.isArray() && aud.toArray().size() > 1 && azp.isUndefined())
        return Error(ErrorCode::Authentication, QStringLiteral("the ID token names several audiences and not the one it was issued to (no azp): refused"));
    if (!azp.isUndefined() && azp.toString() != clientId)
        return Error(ErrorCode::Authentication, QStringLiteral("the ID token was issued to another program (azp '%1', not %2)").arg(azp.toString().left(200), clientId));
    const qint64 now = QDateTime::currentSecsSinceEpoch();
    if (qint64(claims.value(QStringLiteral("exp")).toDouble()) + kClockSkewSeconds < now)
        return Error(ErrorCode::Authentication, QStringLiteral("the ID token has expired (is this machine's clock right?)"));
    if (!nonce.isEmpty() && claims.value(QStringLiteral("nonce")).toString() != nonce)
        return Error(ErrorCode::Authentication, QStringLiteral("the ID token does not carry the nonce of this sign-in: refused (a replayed token?)"));
    if (claims.value(QStringLiteral("sub")).toString().isEmpty())
        return Error(ErrorCode::Authentication, QStringLiteral("the ID token names no subject"));
    return claims;
}

Result<OidcTokens> OidcClient::tokensFrom(int status, const QByteArray &body, const QString &nonce, const QString &previousRefresh) const
{
    // 400 and 401 are the provider's answer about the grant (invalid_grant: the sign-in is over); anything else
    // (503, a proxy's error page) says nothing about it and is tried again.
    if (status == 400 || status == 401)
        return Error(ErrorCode::Authentication, QStringLiteral("the identity provider refused: %1").arg(oauthError(status, body)));
    if (status != 200)
        return Error(ErrorCode::Network, QStringLiteral("the identity provider answered %1").arg(oauthError(status, body)));
    const QJsonObject o = QJsonDocument::fromJson(body).object();
    OidcTokens t;
    t.accessToken = o.value(QStringLiteral("access_token")).toString();
    t.refreshToken = o.value(QStringLiteral("refresh_token")).toString(previousRefresh);
    t.idToken = o.value(QStringLiteral("id_token")).toString();
    if (t.accessToken.isEmpty() || o.value(QStringLiteral("token_type")).toString().compare(QLatin1String("bearer"), Qt::CaseInsensitive) != 0)
        return Error(ErrorCode::Protocol, QStringLiteral("the identity provider's answer holds no bearer access token"));
    if (o.contains(QStringLiteral("expires_in")))
        t.accessExpires = QDateTime::currentDateTimeUtc().addSecs(qint64(o.value(QStringLiteral("expires_in")).toDouble()));
    if (!t.idToken.isEmpty() || !nonce.isEmpty()) {
        Result<QJsonObject> claims = checkIdToken(t.idToken, m_issuerSaid.isEmpty() ? m_provider.issuer.toString() : m_issuerSaid, m_provider.clientId, nonce);
        if (!claims.isOk())
            return claims.error();
        t.claims = claims.value();
    }
    return t;
}

/// The sign-in, step by step: discovery, the loopback port, the browser, its redirect, the code's exchange.
class OidcSignInJob : public ResultJob<OidcTokens>
{
public:
    OidcSignInJob(OidcClient *client, std::function<void(const QUrl &)> openBrowser, int timeoutMs)
        : m_client(client), m_openBrowser(std::move(openBrowser)), m_timeoutMs(timeoutMs) {}

protected:
    bool finishesOnlyLater() const override { return true; }
    void doStart() override
    {
        if (!m_client)
            return finishWith(Error(ErrorCode::Cancelled, QStringLiteral("cancelled")));
        ResultJob<OidcEndpoints> *d = m_client->discover();
        d->setParent(this);
        connect(d, &Job::finished, this, [this, d] { discovered(d->result()); });
        d->start(ExecutionPolicy::Async);
    }
    void doCancel() override { stop(); }

private:
    void discovered(const Result<OidcEndpoints> &e)
    {
        if (isFinished())
            return;  // cancelled meanwhile: no browser opens
        if (!e.isOk())
            return finishWith(e.error());
        m_endpoints = e.value();
        // The browser comes back to this machine, on the loopback address alone: no other machine can answer it.
        if (!m_server.listen(QHostAddress::LocalHost, 0))
            return finishWith(Error(ErrorCode::Io, QStringLiteral("cannot listen on 127.0.0.1 for the browser: %1").arg(m_server.errorString())));
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *s = m_server.nextPendingConnection()) {
                // A browser needs one or two connections; whatever else connects to the port is not waited for.
                if (m_heads.size() >= 8) {
                    s->abort();
                    s->deleteLater();
                    continue;
                }
                s->setParent(this);
                m_heads.insert(s, QByteArray());
                connect(s, &QTcpSocket::readyRead, this, [this, s] { browserSaid(s); });
                connect(s, &QTcpSocket::disconnected, s, &QObject::deleteLater);
                connect(s, &QObject::destroyed, this, [this, s] { m_heads.remove(s); });
            }
        });
        m_redirect = QStringLiteral("http://127.0.0.1:%1/callback").arg(m_server.serverPort());
        m_verifier = randomToken(48);  // 64 characters, within RFC 7636's 43-128
        m_state = randomToken(24);
        m_nonce = randomToken(24);
        const OidcProvider &p = m_client->provider();
        QUrl url = m_endpoints.authorization;
        QUrlQuery q(url);
        q.addQueryItem(QStringLiteral("response_type"), QStringLiteral("code"));
        q.addQueryItem(QStringLiteral("client_id"), QString::fromLatin1(QUrl::toPercentEncoding(p.clientId)));
        q.addQueryItem(QStringLiteral("redirect_uri"), QString::fromLatin1(QUrl::toPercentEncoding(m_redirect)));
        q.addQueryItem(QStringLiteral("scope"), QString::fromLatin1(QUrl::toPercentEncoding(p.scopes.join(QLatin1Char(' ')))));
        q.addQueryItem(QStringLiteral("state"), m_state);
        q.addQueryItem(QStringLiteral("nonce"), m_nonce);
        q.addQueryItem(QStringLiteral("code_challenge"), OidcClient::codeChallenge(m_verifier));
        q.addQueryItem(QStringLiteral("code_challenge_method"), QStringLiteral("S256"));
        if (!p.audience.isEmpty())
            q.addQueryItem(QStringLiteral("audience"), QString::fromLatin1(QUrl::toPercentEncoding(p.audience)));
        url.setQuery(q);
        m_deadline.setSingleShot(true);
        connect(&m_deadline, &QTimer::timeout, this, [this] {
            stop();
            finishWith(Error(ErrorCode::Timeout, QStringLiteral("the sign-in was not finished in the browser within %1 minutes").arg(m_timeoutMs / 60000)));
        });
        m_deadline.start(m_timeoutMs);
        m_openBrowser(url);
    }

    void browserSaid(QTcpSocket *s)
    {
        m_heads[s] += s->readAll();
        if (m_heads[s].size() > 16384)
            return answerBrowser(s, 400, QStringLiteral("Not a sign-in"), QStringLiteral("This request is too long."));
        const std::optional<QUrl> target = requestTarget(m_heads[s]);
        if (!target)
            return;  // the request line is still coming
        if (target->path() != QLatin1String("/callback"))
            return answerBrowser(s, 400, QStringLiteral("Not a sign-in"), QStringLiteral("Spectrum waits for the identity provider here."));
        const QUrlQuery q(*target);
        if (q.queryItemValue(QStringLiteral("state")) != m_state) {
            // Not the answer to our request (a forged or stale redirect): refused, and still waiting for ours.
            qCWarning(lcTransfer) << "sign-in: a redirect with a state that is not this sign-in's was refused";
            return answerBrowser(s, 400, QStringLiteral("Sign-in refused"), QStringLiteral("This answer does not belong to the sign-in Spectrum started."));
        }
        if (isFinished() || m_exchanging)
            return answerBrowser(s, 400, QStringLiteral("Already signed in"), QStringLiteral("This sign-in was already used."));
        const QString error = q.queryItemValue(QStringLiteral("error"), QUrl::FullyDecoded);
        if (!error.isEmpty()) {
            const QString why = q.queryItemValue(QStringLiteral("error_description"), QUrl::FullyDecoded);
            answerBrowser(s, 400, QStringLiteral("Not signed in"), why.isEmpty() ? error : why);
            stop();
            return finishWith(Error(ErrorCode::Authentication, QStringLiteral("the identity provider did not sign you in: %1%2")
                                                                   .arg(error, why.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(why.left(300)))));
        }
        const QString code = q.queryItemValue(QStringLiteral("code"), QUrl::FullyDecoded);
        if (code.isEmpty())
            return answerBrowser(s, 400, QStringLiteral("Not a sign-in"), QStringLiteral("The identity provider sent no code."));
        m_exchanging = true;
        stop();  // no timeout while the code is exchanged, no other connection taken
        answerBrowser(s, 200, QStringLiteral("Back to Spectrum"), QStringLiteral("Spectrum has the identity provider's answer and finishes signing you in. You can close this tab."));
        const OidcProvider &p = m_client->provider();
        ResultJob<Answer> *x = exchange(m_client->network(), requestFor(m_endpoints.token, p.caFile), "POST",
                                        form({{QStringLiteral("grant_type"), QStringLiteral("authorization_code")},
                                              {QStringLiteral("code"), code},
                                              {QStringLiteral("redirect_uri"), m_redirect},
                                              {QStringLiteral("client_id"), p.clientId},
                                              {QStringLiteral("code_verifier"), m_verifier}}));
        x->setParent(this);
        connect(x, &Job::finished, this, [this, x] {
            stop();
            if (!x->result().isOk())
                return finishWith(x->result().error());
            finishWith(m_client->tokensFrom(x->result().value().first, x->result().value().second, m_nonce, QString()));
        });
        x->start(ExecutionPolicy::Async);
    }

    void stop()
    {
        m_deadline.stop();
        m_server.close();
    }

    QPointer<OidcClient> m_client;
    std::function<void(const QUrl &)> m_openBrowser;
    int m_timeoutMs;
    OidcEndpoints m_endpoints;
    QTcpServer m_server;
    QTimer m_deadline;
    QHash<QTcpSocket *, QByteArray> m_heads;
    QString m_redirect, m_verifier, m_state, m_nonce;
    bool m_exchanging = false;
};

ResultJob<OidcTokens> *OidcClient::signIn(std::function<void(const QUrl &)> openBrowser, int timeoutMs)
{
    return new OidcSignInJob(this, std::move(openBrowser), timeoutMs);
}

ResultJob<OidcTokens> *OidcClient::refresh(const QString &refreshToken)
{
    if (refreshToken.isEmpty())
        return failedJob<OidcTokens>(Error(ErrorCode::Authentication, QStringLiteral("no refresh token: sign in again")));
    QPointer<OidcClient> self(this);
    return after<OidcEndpoints, OidcTokens>(discover(), [self, refreshToken](const Result<OidcEndpoints> &e, CallbackJob<OidcTokens> *job) {
        if (!e.isOk() || !self)
            return job->complete(e.isOk() ? Error(ErrorCode::Cancelled, QStringLiteral("cancelled")) : e.error());
        const OidcProvider &p = self->m_provider;
        ResultJob<Answer> *x = exchange(self->network(), requestFor(e.value().token, p.caFile), "POST",
                                        form({{QStringLiteral("grant_type"), QStringLiteral("refresh_token")},
                                              {QStringLiteral("refresh_token"), refreshToken},
                                              {QStringLiteral("client_id"), p.clientId}}));
        x->setParent(job);
        QObject::connect(x, &Job::finished, job, [self, x, job, refreshToken] {
            if (!x->result().isOk())
                return job->complete(x->result().error());
            if (!self)
                return job->complete(Error(ErrorCode::Cancelled, QStringLiteral("cancelled")));
            job->complete(self->tokensFrom(x->result().value().first, x->result().value().second, QString(), refreshToken));
        });
        x->start(ExecutionPolicy::Async);
    });
}

ResultJob<Done> *OidcClient::revoke(const QString &token, const QString &typeHint)
{
    QPointer<OidcClient> self(this);
    return after<OidcEndpoints, Done>(discover(), [self, token, typeHint](const Result<OidcEndpoints> &e, CallbackJob<Done> *job) {
        if (!e.isOk() || !self)
            return job->complete(e.isOk() ? Error(ErrorCode::Cancelled, QStringLiteral("cancelled")) : e.error());
        if (!e.value().revocation.isValid() || token.isEmpty())
            return job->complete(Done());
        const OidcProvider &p = self->m_provider;
        ResultJob<Answer> *x = exchange(self->network(), requestFor(e.value().revocation, p.caFile), "POST",
                                        form({{QStringLiteral("token"), token}, {QStringLiteral("token_type_hint"), typeHint}, {QStringLiteral("client_id"), p.clientId}}));
        x->setParent(job);
        QObject::connect(x, &Job::finished, job, [x, job] {
            if (!x->result().isOk())
                return job->complete(x->result().error());
            if (x->result().value().first != 200)
                return job->complete(Error(ErrorCode::Authentication, QStringLiteral("the identity provider did not revoke the sign-in: %1")
                                                                          .arg(oauthError(x->result().value().first, x->result().value().second))));
            job->complete(Done());
        });
        x->start(ExecutionPolicy::Async);
    });
}

} // namespace spectrum
