// SPDX-License-Identifier: Apache-2.0
// StsSession: AssumeRoleWithWebIdentity (a form POST, its XML answer) and the credentials it gives, held and renewed.

#include "spectrum/transfer/stssession.h"

#include "spectrum/core/logging.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QTimer>
#include <QUrlQuery>
#include <QXmlStreamReader>

#include <algorithm>

namespace spectrum {

namespace {

// Credentials expiring sooner than a minute are not signed with; new ones are asked for five minutes before the
// old expire — or, for credentials given for only a few minutes (a service that ends them with the ID token, of an
// identity provider whose tokens live five minutes), the last tenth and fifth of their life.
constexpr qint64 kUsableSeconds = 60;
constexpr qint64 kAheadSeconds = 300;
constexpr qint64 kAnswerLimit = 64 << 10;
constexpr qint64 kFailureHeldMs = 10000;  ///< a failed renewal's answer, given again for this long

QString textOf(QXmlStreamReader &xml)
{
    return xml.readElementText(QXmlStreamReader::SkipChildElements);
}

} // namespace

namespace s3 {

Result<StsCredentials> parseAssumedRole(const QByteArray &bytes)
{
    QXmlStreamReader xml(bytes);
    if (!xml.readNextStartElement() || xml.name() != QLatin1String("AssumeRoleWithWebIdentityResponse"))
        return Error(ErrorCode::Protocol, QStringLiteral("the security token service's answer is not an AssumeRoleWithWebIdentityResponse"));
    StsCredentials c;
    QString expiration;
    while (xml.readNextStartElement()) {
        if (xml.name() != QLatin1String("AssumeRoleWithWebIdentityResult")) {
            xml.skipCurrentElement();
            continue;
        }
        while (xml.readNextStartElement()) {
            if (xml.name() == QLatin1String("Credentials")) {
                while (xml.readNextStartElement()) {
                    if (xml.name() == QLatin1String("AccessKeyId"))
                        c.credentials.accessKey = textOf(xml).trimmed().left(256);
                    else if (xml.name() == QLatin1String("SecretAccessKey"))
                        c.credentials.secretKey = textOf(xml).trimmed().left(1024);
                    else if (xml.name() == QLatin1String("SessionToken"))
                        c.credentials.sessionToken = textOf(xml).trimmed().left(16384);
                    else if (xml.name() == QLatin1String("Expiration"))
                        expiration = textOf(xml).trimmed().left(64);
                    else
                        xml.skipCurrentElement();
                }
            } else if (xml.name() == QLatin1String("AssumedRoleUser")) {
                while (xml.readNextStartElement()) {
                    if (xml.name() == QLatin1String("Arn"))
                        c.assumedRole = textOf(xml).trimmed().left(2048);
                    else
                        xml.skipCurrentElement();
                }
            } else if (xml.name() == QLatin1String("SubjectFromWebIdentityToken")) {
                c.subject = textOf(xml).trimmed().left(256);
            } else {
                xml.skipCurrentElement();
            }
        }
    }
    if (xml.hasError())
        return Error(ErrorCode::Protocol, QStringLiteral("the security token service's answer is not well-formed XML: %1").arg(xml.errorString()));
    if (c.credentials.accessKey.isEmpty() || c.credentials.secretKey.isEmpty() || c.credentials.sessionToken.isEmpty())
        return Error(ErrorCode::Protocol, QStringLiteral("the security token service's answer lacks the access key, the secret or the session token"));
    c.expires = QDateTime::fromString(expiration, Qt::ISODateWithMs);
    if (!c.expires.isValid())
        return Error(ErrorCode::Protocol, QStringLiteral("the security token service's answer gives no expiry the credentials can be held to"));
    c.expires = c.expires.toUTC();
    return c;
}

Error stsErrorFor(int status, const QByteArray &body, const QString &service, const QString &roleArn)
{
    const S3ErrorAnswer e = parseError(body);
    const QString said = e.code.isEmpty() ? QStringLiteral("HTTP %1").arg(status)
                                          : QStringLiteral("%1%2").arg(e.code, e.message.isEmpty() ? QString() : QStringLiteral(": ") + e.message.simplified());
    auto error = [&](ErrorCode code, const QString &meaning) {
        return Error(code, QStringLiteral("temporary credentials from %1: %2 (it said %3)").arg(service, meaning, said));
    };
    const QString &c = e.code;
    if (c == QLatin1String("ExpiredTokenException") || c == QLatin1String("ExpiredToken"))
        return error(ErrorCode::Authentication, QStringLiteral("the sign-in's ID token has expired: sign in again"));
    if (c == QLatin1String("InvalidIdentityToken") || c == QLatin1String("InvalidParameterValue"))
        return error(ErrorCode::Authentication, QStringLiteral("it did not accept the sign-in's ID token (another identity provider or client than it trusts, or "
                                                               "a token it cannot check): sign in again, or ask the hospital's admin"));
    if (c == QLatin1String("IDPRejectedClaim") || c == QLatin1String("AccessDenied") || status == 403)
        return error(ErrorCode::Authentication, roleArn.isEmpty() ? QStringLiteral("it refused this reader the store (the hospital's policy gives them no role on it)")
                                                                  : QStringLiteral("it refused this reader the role %1 (the hospital's policy does not give it to them)").arg(roleArn));
    if (c == QLatin1String("IDPCommunicationError") || status == 429 || status >= 500)
        return error(ErrorCode::Busy, QStringLiteral("it could not answer now (it may not reach the identity provider): try again shortly"));
    if (status >= 400 && status < 500)
        return error(ErrorCode::InvalidArgument, QStringLiteral("it refused the request (the store's STS settings: role, duration)"));
    return error(ErrorCode::Network, QStringLiteral("it answered an error"));
}

QString roleSessionName(const QString &name)
{
    static const QRegularExpression outside(QStringLiteral("[^A-Za-z0-9=,.@_-]"));
    QString n = QString(name).replace(outside, QStringLiteral("-")).left(64);
    while (n.size() < 2)
        n += QLatin1Char('-');
    return n;
}

} // namespace s3

/// What the S3 clients hold (on any thread): the session while it lives, under a mutex its destructor takes.
class StsSession::Handle : public S3Session
{
public:
    explicit Handle(StsSession *session) : m_session(session) {}

    std::optional<s3::Credentials> current() const override
    {
        QMutexLocker lock(&m_mutex);
        return m_session ? m_session->current() : std::nullopt;
    }

    void renew(const QString &refusedKey, QObject *context, std::function<void(const Error &)> then) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_session) {
            QTimer::singleShot(0, context, [then] { then(Error(ErrorCode::Cancelled, QStringLiteral("the store's session has ended"))); });
            return;
        }
        // Told on the caller's thread (a connection to `context`: dropped safely when it goes first).
        QObject::connect(m_session, &StsSession::renewalEnded, context, [then](int code, const QString &message) {
            then(code == int(ErrorCode::None) ? Error() : Error(ErrorCode(code), message));
        }, Qt::SingleShotConnection);
        QMetaObject::invokeMethod(m_session, [session = m_session, refusedKey] { session->renewHere(refusedKey); }, Qt::QueuedConnection);
    }

    void detach()
    {
        QMutexLocker lock(&m_mutex);
        m_session = nullptr;
    }

private:
    mutable QMutex m_mutex;
    StsSession *m_session;
};

StsSession::StsSession(StsSettings settings, IdentityTokenSource identityToken, SessionNameSource sessionName, QObject *parent)
    : QObject(parent), m_settings(std::move(settings)), m_identityToken(std::move(identityToken)), m_sessionName(std::move(sessionName)),
      m_manager(new QNetworkAccessManager(this)), m_handle(std::make_shared<Handle>(this))
{
    m_settings.sessionName = s3::roleSessionName(m_settings.sessionName);
    // The ID token goes to the service named and nowhere else: a redirect is its answer, not a place to post it again.
    m_manager->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
    // A renewal that never ends (the sign-in waiting on a keyring, another program's lock): given up, said.
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, [this] {
        if (!m_renewing)
            return;
        ++m_generation;
        finishRenewal(Error(ErrorCode::Timeout, QStringLiteral("temporary credentials from %1: no answer within %2 s (the sign-in or the service)")
                                                    .arg(m_settings.url.host()).arg(m_deadline.interval() / 1000)));
    });
}

StsSession::~StsSession()
{
    m_handle->detach();  // a request on a pool thread now signs with nothing rather than with this
    // Requests waiting for credentials (connected before the handle let go) are told, not left waiting.
    Q_EMIT renewalEnded(int(ErrorCode::Cancelled), QStringLiteral("the store's session has ended"));
}

std::shared_ptr<S3Session> StsSession::handle() const
{
    return m_handle;
}

std::optional<s3::Credentials> StsSession::current() const
{
    QMutexLocker lock(&m_mutex);
    if (!m_held)
        return std::nullopt;
    const qint64 left = QDateTime::currentDateTimeUtc().secsTo(m_held->expires);
    const qint64 life = m_heldSince.secsTo(m_held->expires);
    const qint64 usable = std::min(kUsableSeconds, life / 10), ahead = std::min(kAheadSeconds, life / 5);
    if (left < ahead && !m_aheadQueued && QDateTime::currentMSecsSinceEpoch() >= m_aheadNotBefore) {
        m_aheadQueued = true;
        StsSession *self = const_cast<StsSession *>(this);
        QMetaObject::invokeMethod(self, [self] { self->renewHere({}); }, Qt::QueuedConnection);
    }
    if (left < usable)
        return std::nullopt;
    return m_held->credentials;
}

QDateTime StsSession::expires() const
{
    QMutexLocker lock(&m_mutex);
    return m_held ? m_held->expires : QDateTime();
}

void StsSession::forget()
{
    {
        QMutexLocker lock(&m_mutex);
        if (!m_held && !m_renewing && m_failedAt == 0)
            return;
        m_held.reset();
    }
    ++m_generation;
    m_failedAt = 0;  // a new reader (or none) starts afresh
    qCInfo(lcTransfer).noquote() << "sts: credentials from" << m_settings.url.host() << "dropped";
    if (m_renewing)
        finishRenewal(Error(ErrorCode::Authentication, QStringLiteral("signed out while the store's temporary credentials were being got")));
}

void StsSession::renewHere(const QString &refusedKey)
{
    {
        QMutexLocker lock(&m_mutex);
        if (m_held && !refusedKey.isEmpty()) {
            if (m_held->credentials.accessKey != refusedKey && QDateTime::currentDateTimeUtc().secsTo(m_held->expires) >= m_heldSince.secsTo(m_held->expires) / 10) {
                lock.unlock();
                if (!m_renewing)
                    Q_EMIT renewalEnded(int(ErrorCode::None), QString());  // replaced already: go on with these
                return;
            }
            m_held.reset();  // refused by the store: never signed with again
        }
    }
    if (m_renewing)
        return;  // those waiting are told when the renewal under way ends
    // Failed a moment ago (the service down, the role refused, no sign-in): said again at once, not asked again
    // for every request meanwhile.
    if (m_failedAt > 0 && QDateTime::currentMSecsSinceEpoch() - m_failedAt < kFailureHeldMs) {
        Q_EMIT renewalEnded(int(m_failure.code()), m_failure.message());
        return;
    }
    m_renewing = true;
    m_deadline.start(m_settings.timeoutMs + 30000);
    const quint64 generation = m_generation;
    whenDone(m_identityToken(), this, [this, generation](const Result<QString> &idToken) {
        if (generation != m_generation)
            return;
        if (!idToken.isOk())
            return finishRenewal(idToken.error());
        if (m_sessionName) {  // the reader whose token it is
            if (const QString name = m_sessionName(); !name.isEmpty())
                m_settings.sessionName = s3::roleSessionName(name);
        }
        whenDone(assumeRole(m_manager, m_settings, idToken.value()), this, [this, generation](const Result<StsCredentials> &got) {
            if (generation != m_generation)
                return;
            if (!got.isOk())
                return finishRenewal(got.error());
            qCInfo(lcTransfer).noquote() << "sts: credentials from" << m_settings.url.host() << "for the role"
                                         << (m_settings.roleArn.isEmpty() ? QStringLiteral("the service chose") : m_settings.roleArn) << "as"
                                         << (got.value().assumedRole.isEmpty() ? m_settings.sessionName : got.value().assumedRole) << "until"
                                         << got.value().expires.toString(Qt::ISODate);
            {
                QMutexLocker lock(&m_mutex);
                m_held = got.value();
                m_heldSince = QDateTime::currentDateTimeUtc();
                m_aheadQueued = false;
            }
            finishRenewal(Error());
        });
    });
}

void StsSession::finishRenewal(const Error &error)
{
    m_renewing = false;
    m_deadline.stop();
    m_failedAt = error.isError() ? QDateTime::currentMSecsSinceEpoch() : 0;
    m_failure = error;
    if (error.isError()) {
        qCWarning(lcTransfer).noquote() << "sts:" << error.message();
        QMutexLocker lock(&m_mutex);
        // Asked again ahead of expiry at a request half a minute on, not at every one meanwhile.
        m_aheadQueued = false;
        m_aheadNotBefore = QDateTime::currentMSecsSinceEpoch() + 30000;
    }
    Q_EMIT renewalEnded(int(error.code()), error.message());
}

ResultJob<StsCredentials> *StsSession::assumeRole(QNetworkAccessManager *manager, const StsSettings &settings, const QString &token)
{
    QPointer<QNetworkAccessManager> m(manager);
    return new CallbackJob<StsCredentials>([m, settings, token](CallbackJob<StsCredentials> *job) {
        if (!m)
            return job->complete(Error(ErrorCode::Cancelled, QStringLiteral("cancelled")));
        const QString service = settings.url.host();
        QUrlQuery form;
        form.addQueryItem(QStringLiteral("Action"), QStringLiteral("AssumeRoleWithWebIdentity"));
        form.addQueryItem(QStringLiteral("Version"), QStringLiteral("2011-06-15"));
        if (!settings.roleArn.isEmpty())
            form.addQueryItem(QStringLiteral("RoleArn"), settings.roleArn);
        form.addQueryItem(QStringLiteral("RoleSessionName"), settings.sessionName);
        form.addQueryItem(QStringLiteral("DurationSeconds"), QString::number(settings.durationSeconds));
        form.addQueryItem(QStringLiteral("WebIdentityToken"), token);
        // Form-encoded strictly: a '+' or '=' of the token's must reach the service as itself.
        QByteArray body;
        for (const auto &[name, value] : form.queryItems(QUrl::FullyDecoded))
            body += (body.isEmpty() ? "" : "&") + QUrl::toPercentEncoding(name) + '=' + QUrl::toPercentEncoding(value);
        QUrl url = settings.url;
        if (url.path().isEmpty())
            url.setPath(QStringLiteral("/"));
        QNetworkRequest request(url);
        request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArray("application/x-www-form-urlencoded"));
        request.setRawHeader("Accept", "application/xml, text/xml");
        request.setTransferTimeout(settings.timeoutMs);
        if (url.scheme() == QLatin1String("https") && !settings.caFile.isEmpty()) {
            QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
            tls.addCaCertificates(QSslCertificate::fromPath(settings.caFile, QSsl::Pem));
            request.setSslConfiguration(tls);
        }
        QNetworkReply *reply = m->post(request, body);
        QObject::connect(job, &QObject::destroyed, reply, [reply] {  // a job stopped: its request with it
            reply->abort();
            reply->deleteLater();
        });
        QObject::connect(reply, &QNetworkReply::finished, job, [job, reply, settings, service] {
            reply->deleteLater();
            const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            const QByteArray answer = reply->read(kAnswerLimit);
            if (status == 0)
                return job->complete(Error(reply->error() == QNetworkReply::OperationCanceledError ? ErrorCode::Timeout : ErrorCode::Network,
                                           QStringLiteral("temporary credentials from %1: %2").arg(service, reply->errorString())));
            if (status != 200)
                return job->complete(s3::stsErrorFor(status, answer, service, settings.roleArn));
            job->complete(s3::parseAssumedRole(answer));
        });
    });
}

} // namespace spectrum
