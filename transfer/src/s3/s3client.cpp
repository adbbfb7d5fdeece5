// S3Client: requests signed when sent, one job per request (S3Job), retried after a backoff when the store asks
// us to slow down.

#include "spectrum/transfer/s3client.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QPointer>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QTimer>
#include <QUrlQuery>

namespace spectrum {

namespace {

using Headers = QList<QPair<QByteArray, QByteArray>>;
using Query = QList<QPair<QString, QString>>;

/// One S3 request as a job: signed at each send, retried after a growing wait on 500/503, cancellable.
/// Subclasses look at the successful answer.
template <typename T>
class S3Job : public ResultJob<T>
{
public:
    S3Job(S3Client *client, QByteArray method, QString key, Query query, Headers headers, QByteArray body, QString what)
        : m_what(std::move(what)), m_client(client), m_method(std::move(method)), m_key(std::move(key)), m_query(std::move(query)),
          m_headers(std::move(headers)), m_body(std::move(body))
    {
        this->setParent(client);  // a job whose client goes, goes with it
        m_wait.setSingleShot(true);
        QObject::connect(&m_wait, &QTimer::timeout, this, [this] { send(); });
    }

protected:
    void doStart() override { send(); }
    void doCancel() override
    {
        m_wait.stop();
        if (m_reply) {
            QObject::disconnect(m_reply, nullptr, this, nullptr);
            m_reply->abort();
            m_reply->deleteLater();
            m_reply = nullptr;
        }
    }

    /// The store answered 2xx: `answer` is its body, `reply` its headers.
    virtual void done(const QByteArray &answer, QNetworkReply *reply) = 0;

    QString m_what;

private:
    void send()
    {
        if (!m_client)
            return this->finishWith(Error(ErrorCode::Cancelled, QStringLiteral("%1: the store's client is gone").arg(m_what)));
        const S3Client::Prepared p = m_client->prepare(m_method, m_key, m_query, m_headers, m_body);
        QNetworkRequest request(p.url);
        for (const auto &[name, value] : p.headers)
            request.setRawHeader(name, value);
        request.setTransferTimeout(m_client->endpoint().timeoutMs);
        request.setAttribute(QNetworkRequest::HttpPipeliningAllowedAttribute, false);
        if (p.url.scheme() == QLatin1String("https") && !m_client->endpoint().caFile.isEmpty()) {
            QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
            tls.addCaCertificates(QSslCertificate::fromPath(m_client->endpoint().caFile, QSsl::Pem));
            request.setSslConfiguration(tls);
        }
        m_answer.clear();
        m_reply = m_method == "HEAD" ? m_client->manager()->head(request) : m_client->manager()->sendCustomRequest(request, m_method, m_body);
        QObject::connect(m_reply, &QNetworkReply::readyRead, this, [this] { m_answer += m_reply->readAll(); });
        QObject::connect(m_reply, &QNetworkReply::finished, this, [this] { finished(); });
    }

    void finished()
    {
        QNetworkReply *reply = m_reply;
        m_reply = nullptr;
        reply->deleteLater();
        m_answer += reply->readAll();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const S3Endpoint &e = m_client->endpoint();
        if (status == 0) {
            const bool timeout = reply->error() == QNetworkReply::OperationCanceledError || reply->error() == QNetworkReply::TimeoutError;
            return this->finishWith(Error(timeout ? ErrorCode::Timeout : ErrorCode::Network,
                                          QStringLiteral("%1: %2").arg(m_what, timeout ? QStringLiteral("no answer within %1 ms").arg(e.timeoutMs) : reply->errorString())));
        }
        const bool slowDown = status == 503 || status == 500;
        if (slowDown && ++m_attempt < e.attempts) {
            m_wait.start(e.backoffMs << (m_attempt - 1));
            return;
        }
        if (status < 200 || status >= 300)
            return this->finishWith(s3::errorFor(status, m_answer, m_what, e.bucket));
        if (reply->error() != QNetworkReply::NoError)
            return this->finishWith(Error(ErrorCode::Network, QStringLiteral("%1: the answer broke off: %2").arg(m_what, reply->errorString())));
        done(m_answer, reply);
    }

    QPointer<S3Client> m_client;
    QByteArray m_method;
    QString m_key;
    Query m_query;
    Headers m_headers;
    QByteArray m_body;
    QPointer<QNetworkReply> m_reply;
    QByteArray m_answer;
    QTimer m_wait;
    int m_attempt = 0;
};

QString describe(const char *verb, const QString &key, const S3Endpoint &e)
{
    return QStringLiteral("%1 s3://%2/%3").arg(QLatin1String(verb), e.bucket, key);
}

S3Object objectOf(const QString &key, QNetworkReply *reply, qint64 size)
{
    S3Object o;
    o.key = key;
    o.size = size;
    o.etag = reply->rawHeader("ETag");
    o.lastModified = QDateTime::fromString(QString::fromLatin1(reply->rawHeader("Last-Modified")), Qt::RFC2822Date);
    return o;
}

class HeadJob : public S3Job<S3Object>
{
public:
    HeadJob(S3Client *c, const QString &key) : S3Job(c, "HEAD", key, {}, {}, {}, describe("HEAD", key, c->endpoint())), m_key(key) {}

protected:
    void done(const QByteArray &, QNetworkReply *reply) override
    {
        bool ok = false;
        const qint64 size = reply->rawHeader("Content-Length").toLongLong(&ok);
        if (!ok)
            return finishWith(Error(ErrorCode::Protocol, QStringLiteral("%1: the store gave no size").arg(m_what)));
        finishWith(objectOf(m_key, reply, size));
    }

private:
    QString m_key;
};

Headers getHeaders(const S3GetOptions &o)
{
    Headers h;
    if (o.offset > 0 || o.length >= 0)
        h << qMakePair(QByteArray("range"), "bytes=" + QByteArray::number(o.offset) + '-' + (o.length >= 0 ? QByteArray::number(o.offset + o.length - 1) : QByteArray()));
    if (!o.ifMatch.isEmpty())
        h << qMakePair(QByteArray("if-match"), o.ifMatch);
    return h;
}

class GetJob : public S3Job<QByteArray>
{
public:
    GetJob(S3Client *c, const QString &key, const S3GetOptions &o)
        : S3Job(c, "GET", key, {}, getHeaders(o), {}, describe("GET", key, c->endpoint())), m_options(o)
    {
    }

protected:
    void done(const QByteArray &answer, QNetworkReply *reply) override
    {
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const bool ranged = m_options.offset > 0 || m_options.length >= 0;
        if (ranged && status != 206)
            return finishWith(Error(ErrorCode::Protocol, QStringLiteral("%1: the store sent the whole object for a range").arg(m_what)));
        if (m_options.length >= 0 && answer.size() != m_options.length) {
            // Short only at the object's end, which Content-Range then says.
            const QByteArray range = reply->rawHeader("Content-Range");
            const qint64 total = range.mid(range.lastIndexOf('/') + 1).toLongLong();
            if (m_options.offset + answer.size() != total)
                return finishWith(Error(ErrorCode::Protocol, QStringLiteral("%1: %2 bytes came for %3").arg(m_what).arg(answer.size()).arg(m_options.length)));
        }
        finishWith(answer);
    }

private:
    S3GetOptions m_options;
};

Headers putHeaders(const S3PutOptions &o, const QByteArray &body)
{
    Headers h{qMakePair(QByteArray("content-type"), o.contentType),
              // The store checks the bytes against it: a body damaged on the way is refused, not stored.
              qMakePair(QByteArray("x-amz-checksum-sha256"), QCryptographicHash::hash(body, QCryptographicHash::Sha256).toBase64())};
    if (o.ifNoneMatch)
        h << qMakePair(QByteArray("if-none-match"), QByteArray("*"));
    if (!o.ifMatch.isEmpty())
        h << qMakePair(QByteArray("if-match"), o.ifMatch);
    return h;
}

class PutJob : public S3Job<S3Object>
{
public:
    PutJob(S3Client *c, const QString &key, const QByteArray &body, const S3PutOptions &o)
        : S3Job(c, "PUT", key, {}, putHeaders(o, body), body, describe("PUT", key, c->endpoint())), m_key(key), m_size(body.size())
    {
    }

protected:
    void done(const QByteArray &, QNetworkReply *reply) override { finishWith(objectOf(m_key, reply, m_size)); }

private:
    QString m_key;
    qint64 m_size;
};

class ListJob : public S3Job<S3Listing>
{
public:
    ListJob(S3Client *c, const Query &query, const QString &prefix) : S3Job(c, "GET", {}, query, {}, {}, describe("LIST", prefix, c->endpoint())) {}

protected:
    void done(const QByteArray &answer, QNetworkReply *) override
    {
        Result<S3Listing> listing = s3::parseListing(answer);
        finishWith(listing.isOk() ? std::move(listing) : Result<S3Listing>(listing.error().withContext(m_what)));
    }
};

class EmptyAnswerJob : public S3Job<Done>
{
public:
    using S3Job::S3Job;

protected:
    void done(const QByteArray &, QNetworkReply *) override { finishWith(Done{}); }
};

} // namespace

S3Client::S3Client(S3Endpoint endpoint, QObject *parent) : QObject(parent), m_endpoint(std::move(endpoint)), m_manager(std::make_unique<QNetworkAccessManager>())
{
    m_manager->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);  // a signed request is not sent elsewhere
}

S3Client::~S3Client() = default;

S3Client::Prepared S3Client::prepare(const QByteArray &method, const QString &key, const Query &query, const Headers &headers, const QByteArray &body,
                                     const QDateTime &when) const
{
    Prepared p;
    const QUrl &e = m_endpoint.endpoint;
    const bool https = e.scheme() == QLatin1String("https");
    const int port = e.port(https ? 443 : 80);
    const QString host = m_endpoint.virtualHosted ? m_endpoint.bucket + QLatin1Char('.') + e.host() : e.host();
    s3::RequestToSign r;
    r.method = method;
    r.host = (port == (https ? 443 : 80) ? host : QStringLiteral("%1:%2").arg(host).arg(port)).toUtf8();
    const QByteArray encodedKey = s3::uriEncode(key, true);
    r.encodedPath = m_endpoint.virtualHosted ? '/' + encodedKey : '/' + s3::uriEncode(m_endpoint.bucket, false) + (key.isEmpty() ? QByteArray() : '/' + encodedKey);
    r.query = query;
    r.headers = headers;
    // Over TLS the channel protects the bytes; over plain HTTP their hash is signed.
    r.payloadHash = https ? QByteArray(s3::kUnsignedPayload) : s3::payloadHash(body);
    const s3::Signed s = s3::sign(r, m_endpoint.credentials, when.isValid() ? when : QDateTime::currentDateTimeUtc().addMSecs(m_clockOffsetMs));
    QByteArray url = e.scheme().toUtf8() + "://" + r.host + r.encodedPath;
    if (!s.encodedQuery.isEmpty())
        url += '?' + s.encodedQuery;
    p.url = QUrl::fromEncoded(url, QUrl::StrictMode);
    p.headers = headers;
    p.headers << qMakePair(QByteArray("Authorization"), s.authorization) << qMakePair(QByteArray("x-amz-date"), s.amzDate)
              << qMakePair(QByteArray("x-amz-content-sha256"), s.contentSha256);
    return p;
}

ResultJob<S3Object> *S3Client::head(const QString &key)
{
    return new HeadJob(this, key);
}

ResultJob<QByteArray> *S3Client::get(const QString &key, const S3GetOptions &options)
{
    if (options.offset < 0 || options.length < -1)
        return failedJob<QByteArray>(Error(ErrorCode::InvalidArgument, QStringLiteral("a byte range with a negative start or length")));
    if (options.length == 0)
        return failedJob<QByteArray>(Error(ErrorCode::InvalidArgument, QStringLiteral("an empty byte range")));
    return new GetJob(this, key, options);
}

ResultJob<S3Object> *S3Client::put(const QString &key, const QByteArray &body, const S3PutOptions &options)
{
    if (key.isEmpty())
        return failedJob<S3Object>(Error(ErrorCode::InvalidKey, QStringLiteral("an object needs a key")));
    return new PutJob(this, key, body, options);
}

ResultJob<S3Listing> *S3Client::list(const QString &prefix, const QString &delimiter, const QString &continuationToken, int maxKeys)
{
    Query q{qMakePair(QStringLiteral("list-type"), QStringLiteral("2")), qMakePair(QStringLiteral("max-keys"), QString::number(std::clamp(maxKeys, 1, 1000)))};
    if (!prefix.isEmpty())
        q << qMakePair(QStringLiteral("prefix"), prefix);
    if (!delimiter.isEmpty())
        q << qMakePair(QStringLiteral("delimiter"), delimiter);
    if (!continuationToken.isEmpty())
        q << qMakePair(QStringLiteral("continuation-token"), continuationToken);
    return new ListJob(this, q, prefix);
}

ResultJob<Done> *S3Client::remove(const QString &key)
{
    if (key.isEmpty())
        return failedJob<Done>(Error(ErrorCode::InvalidKey, QStringLiteral("an object needs a key")));
    return new EmptyAnswerJob(this, "DELETE", key, {}, {}, {}, describe("DELETE", key, m_endpoint));
}

ResultJob<Done> *S3Client::createBucket()
{
    return new EmptyAnswerJob(this, "PUT", QString(), {}, {}, {}, QStringLiteral("create bucket %1").arg(m_endpoint.bucket));
}

} // namespace spectrum
