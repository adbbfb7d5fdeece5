#pragma once
// S3's insides, shared by the files that each do part of S3Client (s3client.h says what they promise):
//   s3signer.cpp     Signature V4
//   s3client.cpp     the client, its URLs and signed headers, the one-request jobs (head, get, put, list, remove)
//   s3transfers.cpp  the jobs made of many requests: multipart upload, a download over several connections
//   s3xml.cpp        what S3 answers in XML, and S3 errors as ours
// S3Job is one signed request as a job; the others look at its answer.

#include "spectrum/transfer/s3client.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QPointer>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QTimer>

namespace spectrum::s3wire {

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
    /// The most bytes a successful answer may have (a range's length, a listing's bound): more, and the answer is
    /// cut off as not what was asked for — a server ignoring a range never fills the memory.
    void setAnswerLimit(qint64 bytes) { m_limit = bytes; }

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
        request.setRawHeader("Accept-Encoding", "identity");  // the bytes as stored: ranges of them, never re-encoded
        if (p.url.scheme() == QLatin1String("https") && !m_client->endpoint().caFile.isEmpty()) {
            QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
            tls.addCaCertificates(QSslCertificate::fromPath(m_client->endpoint().caFile, QSsl::Pem));
            request.setSslConfiguration(tls);
        }
        m_answer.clear();
        QNetworkAccessManager *manager = m_client->manager();
        m_reply = m_method == "HEAD" ? manager->head(request) : manager->sendCustomRequest(request, m_method, m_body);
        QObject::connect(m_reply, &QNetworkReply::readyRead, this, [this] {
            const int status = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            const qint64 limit = status >= 200 && status < 300 ? m_limit : kErrorLimit;
            if (m_answer.size() + m_reply->bytesAvailable() > limit) {
                if (status >= 200 && status < 300) {
                    doCancel();
                    return this->finishWith(Error(ErrorCode::Protocol, QStringLiteral("%1: the store sent more than the %2 bytes asked for").arg(m_what).arg(limit)));
                }
                m_reply->skip(m_reply->bytesAvailable());  // an error's first bytes are enough to say what it was
                return;
            }
            m_answer += m_reply->readAll();
        });
        QObject::connect(m_reply, &QNetworkReply::finished, this, [this] { finished(); });
    }

    void finished()
    {
        QNetworkReply *reply = m_reply;
        m_reply = nullptr;
        reply->deleteLater();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const bool success = status >= 200 && status < 300;
        if (m_answer.size() + reply->bytesAvailable() <= (success ? m_limit : kErrorLimit))
            m_answer += reply->readAll();
        else if (success)
            return this->finishWith(Error(ErrorCode::Protocol, QStringLiteral("%1: the store sent more than the %2 bytes asked for").arg(m_what).arg(m_limit)));
        if (!m_client)
            return this->finishWith(Error(ErrorCode::Cancelled, QStringLiteral("%1: the store's client is gone").arg(m_what)));
        const S3Endpoint &e = m_client->endpoint();
        // Asked again, signed afresh, after a growing wait: a store asking to slow down (500, 503, 429), and a
        // connection that broke before any answer (every request here may be sent twice: reads, whole puts and
        // parts, a completion, a delete).
        const bool timeout = status == 0 && (reply->error() == QNetworkReply::OperationCanceledError || reply->error() == QNetworkReply::TimeoutError);
        const bool again = status == 503 || status == 500 || status == 429 || (status == 0 && !timeout);
        if (again && ++m_attempt < e.attempts) {
            m_wait.start(e.backoffMs << (m_attempt - 1));
            return;
        }
        if (status == 0)
            return this->finishWith(Error(timeout ? ErrorCode::Timeout : ErrorCode::Network,
                                          QStringLiteral("%1: %2").arg(m_what, timeout ? QStringLiteral("no answer within %1 ms").arg(e.timeoutMs) : reply->errorString())));
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
    static constexpr qint64 kErrorLimit = 64 << 10;
    qint64 m_limit = 16 << 20;  ///< XML answers: far beyond a page of 1,000 keys
};

/// InvalidKey when `key` is not one S3 and the proxies before it read as written, else none.
Error checkKey(const QString &key);

/// A request whose answer has nothing to look at (DELETE, making a bucket, aborting an upload).
class EmptyAnswerJob : public S3Job<Done>
{
public:
    using S3Job::S3Job;

protected:
    void done(const QByteArray &, QNetworkReply *) override { finishWith(Done{}); }
};

/// "GET s3://bucket/key": what a request was, in errors.
inline QString describe(const char *verb, const QString &key, const S3Endpoint &e)
{
    return QStringLiteral("%1 s3://%2/%3").arg(QLatin1String(verb), e.bucket, key);
}

} // namespace spectrum::s3wire
