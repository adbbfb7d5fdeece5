// SPDX-License-Identifier: Apache-2.0
// DicomWebClient: the connections (a QNetworkAccessManager per six), requests with their authentication and
// trusted CAs, errors of HTTP. Its jobs are in transfer/src/dicomweb/ (httpjob.h lists them).

#include "dicomweb/httpjob.h"

#include "spectrum/core/logging.h"
#include "spectrum/core/uid.h"
#include "spectrum/transfer/multipart.h"

#include "httpstream.h"
#include "partbuffer.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QPointer>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QUrlQuery>

#include <QMutex>
#include <QScopeGuard>

#include <atomic>
#include <cstring>
#include <deque>
#include <future>

namespace spectrum {

namespace {

constexpr int kConnectionsPerManager = 6;  // Qt 6.4's fixed HTTP/1.1 limit per host and manager

} // namespace

namespace webwire {

Error httpError(int status, const QByteArray &body, const QString &what)
{
    const QString detail = QString::fromUtf8(body.left(200)).simplified();
    const QString message = QStringLiteral("%1: the server answered HTTP %2%3").arg(what).arg(status).arg(detail.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(detail));
    switch (status) {
    case 401:
    case 403:
        return Error(ErrorCode::Authentication, message);
    case 404:
        return Error(ErrorCode::NotFound, message);
    case 400:
    case 406:
    case 415:
        return Error(ErrorCode::InvalidArgument, message);
    default:
        return Error(ErrorCode::Network, message);
    }
}

Error httpError(int status, const QByteArray &body, const QString &what, const HttpAuth &sent)
{
    if (status != 401)
        return httpError(status, body, what);
    switch (sent.kind) {
    case HttpAuth::Kind::None:
        return Error(ErrorCode::Authentication, QStringLiteral("%1: the server wants credentials (HTTP 401) and the store has none: give it a user "
                                                               "and password (--user, --password-file) or a token (--token-file)").arg(what));
    case HttpAuth::Kind::Basic:
        return Error(ErrorCode::Authentication, QStringLiteral("%1: the server refused user '%2' and the password given (HTTP 401): check both "
                                                               "(stores edit NAME --password-file FILE)").arg(what, sent.user));
    case HttpAuth::Kind::Bearer:
        if (!sent.signInHint.isEmpty()) {
            const QString detail = QString::fromUtf8(body.left(300)).simplified();
            return Error(ErrorCode::Authentication, QStringLiteral("%1: the server refused the sign-in's token (HTTP 401%2): %3")
                                                        .arg(what, detail.isEmpty() ? QString() : QStringLiteral(": ") + detail, sent.signInHint));
        }
        return Error(ErrorCode::Authentication, QStringLiteral("%1: the server refused the token given (HTTP 401): expired or wrong "
                                                               "(stores edit NAME --token-file FILE)").arg(what));
    }
    return httpError(status, body, what);
}

} // namespace webwire

DicomWebClient::DicomWebClient(DicomWebEndpoint endpoint, QObject *parent) : QObject(parent), m_endpoint(std::move(endpoint))
{
    m_endpoint.maxParallel = std::clamp(m_endpoint.maxParallel, 1, 64);
    const int managers = (m_endpoint.maxParallel + kConnectionsPerManager - 1) / kConnectionsPerManager;
    for (int i = 0; i < managers; ++i) {
        auto m = std::make_unique<QNetworkAccessManager>();
        m->setTransferTimeout(m_endpoint.timeoutMs);
        // A reader's sign-in token goes to this server alone: a redirect elsewhere is not followed with it.
        m->setRedirectPolicy(m_endpoint.auth.current ? QNetworkRequest::SameOriginRedirectPolicy : QNetworkRequest::NoLessSafeRedirectPolicy);
        m_managers.push_back(std::move(m));
    }
}

DicomWebClient::~DicomWebClient() = default;

QNetworkAccessManager *DicomWebClient::nextManager()
{
    QNetworkAccessManager *m = m_managers[m_next % m_managers.size()].get();
    ++m_next;
    return m;
}

QNetworkRequest DicomWebClient::request(const QString &path, const QList<QPair<QString, QString>> &query) const
{
    QUrl url = m_endpoint.base;
    QString basePath = url.path();
    while (basePath.endsWith(QLatin1Char('/')))
        basePath.chop(1);
    url.setPath(basePath + QLatin1Char('/') + path);
    if (!query.isEmpty()) {
        QUrlQuery q;
        for (const auto &[k, v] : query)
            q.addQueryItem(k, QString::fromLatin1(QUrl::toPercentEncoding(v, "*?,")));
        url.setQuery(q);
    }
    QNetworkRequest r(url);
    r.setTransferTimeout(m_endpoint.timeoutMs);
    switch (m_endpoint.auth.kind) {
    case HttpAuth::Kind::None:
        break;
    case HttpAuth::Kind::Basic:
        r.setRawHeader("Authorization", "Basic " + (m_endpoint.auth.user + QLatin1Char(':') + m_endpoint.auth.password).toUtf8().toBase64());
        break;
    case HttpAuth::Kind::Bearer: {
        const QString token = m_endpoint.auth.current ? m_endpoint.auth.current() : m_endpoint.auth.token;
        if (!token.isEmpty())
            r.setRawHeader("Authorization", "Bearer " + token.toUtf8());
        break;
    }
    }
    if (url.scheme() == QLatin1String("https") && !m_endpoint.caFile.isEmpty()) {
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.addCaCertificates(QSslCertificate::fromPath(m_endpoint.caFile, QSsl::Pem));
        r.setSslConfiguration(tls);
    }
    return r;
}

ResultJob<Done> *DicomWebClient::ping()
{
    DicomQuery q;
    q.limit = 1;
    return chainJob<Done>(search(q), [](const QList<DicomRecord> &, const CancelToken &) -> Result<Done> { return Done{}; });
}

} // namespace spectrum
