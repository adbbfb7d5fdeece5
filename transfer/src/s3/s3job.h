// SPDX-License-Identifier: Apache-2.0
#pragma once
// S3's insides, shared by the files that each do part of S3Client (s3client.h says what they promise):
//   s3signer.cpp     Signature V4
//   s3client.cpp     the client, its URLs and signed headers, the one-request jobs (head, get, put, list, remove)
//   s3upload.cpp     multipart upload (resumed, aborted for good), pending uploads and their parts
//   s3download.cpp   a download over several connections bound to one ETag
//   s3xml.cpp        what S3 answers in XML, and S3 errors as ours
// S3Job is one signed request as a job; the others look at its answer.

#include "spectrum/transfer/s3client.h"

#include "spectrum/core/threadpools.h"
#include "spectrum/transfer/crc32c.h"
#include "spectrum/transfer/sha256.h"

#include "httpstream.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QPointer>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QTimer>

#include <cstring>
#include <functional>
#include <memory>

namespace spectrum::s3wire {

using Headers = QList<QPair<QByteArray, QByteArray>>;
using Query = QList<QPair<QString, QString>>;

/// What the store answered: its status and header fields (names in lower case).
struct Answer
{
    int status = 0;
    Headers fields;
    /// Base64 of the body's SHA-256 or CRC32C — whichever the store keeps of the object — hashed as it came
    /// (direct path, when asked: setHashAsItComes), else empty.
    QByteArray bodySha256, bodyCrc32c;
    QByteArray header(const QByteArray &lowerCaseName) const
    {
        for (const auto &[name, value] : fields)
            if (name == lowerCaseName)
                return value;
        return {};
    }
};

/// A check of a successful answer's bytes that may run on any thread (a checksum): an error refuses them.
using Verify = std::function<Error(const QByteArray &body, const Answer &answer)>;

/// What the direct path (httpstream.h) brought back from its thread.
struct DirectOutcome
{
    Error transport;  ///< the exchange broke (status 0: before any answer)
    Answer answer;
    QByteArray body;
    bool tooMuch = false;  ///< a successful answer longer than the limit: cut off
    Error verified;        ///< what Verify said (run on the reading thread)
};

/// Takes an S3 answer off the socket: a successful one into memory sized from its Content-Length (at most the
/// limit: a server ignoring a range never fills the memory), an error's first 64 KiB for its message.
class AnswerReader : public HttpBodyConsumer
{
public:
    /// `head`: the answer to a HEAD, whose Content-Length is the object's, not of a body that follows.
    /// `hash`: a successful body whose SHA-256 or CRC32C the store keeps (x-amz-checksum-sha256 or -crc32c, not a
    /// composite) is hashed as it comes, while the next bytes are on their way, into Answer::bodySha256 or
    /// bodyCrc32c.
    AnswerReader(DirectOutcome &out, qint64 limit, qint64 errorLimit, bool head, bool hash)
        : m_out(out), m_limit(limit), m_errorLimit(errorLimit), m_headOnly(head), m_hashWanted(hash)
    {
    }

    Error head(const HttpHead &h) override
    {
        m_out.answer.status = h.status;
        m_out.answer.fields = h.fields;
        m_success = h.status >= 200 && h.status < 300;
        if (m_headOnly)
            return Error();
        auto kept = [&h](const char *name) { return !h.value(name).isEmpty() && !h.value(name).contains('-'); };
        if (m_success && m_hashWanted && kept("x-amz-checksum-crc32c"))
            m_crc = std::make_unique<Crc32c>();
        else if (m_success && m_hashWanted && kept("x-amz-checksum-sha256"))
            m_hash = std::make_unique<Sha256>();
        bool known = false;
        const qint64 length = h.value("content-length").toLongLong(&known);
        if (m_success && known && length > m_limit)
            return tooMuch();
        if (m_success && known && length > 0 && h.value("transfer-encoding").isEmpty()) {
            m_out.body = QByteArray(length, Qt::Uninitialized);
            m_sized = true;
        }
        return Error();
    }
    char *directBuffer(qint64 wanted, qint64 *capacity) override
    {
        if (!m_sized)
            return nullptr;
        *capacity = std::min(wanted, m_out.body.size() - m_at);
        return *capacity > 0 ? m_out.body.data() + m_at : nullptr;
    }
    Error tookDirect(qint64 n) override
    {
        hash(m_out.body.constData() + m_at, n);
        m_at += n;
        return Error();
    }
    Error feed(const char *data, qint64 n) override
    {
        if (m_sized) {
            if (m_at + n > m_out.body.size())
                return tooMuch();
            std::memcpy(m_out.body.data() + m_at, data, size_t(n));
            hash(data, n);
            m_at += n;
            return Error();
        }
        if (m_success)
            hash(data, n);
        if (m_out.body.size() + n > (m_success ? m_limit : m_errorLimit)) {
            if (m_success)
                return tooMuch();
            return Error();  // an error's first bytes are enough to say what it was
        }
        m_out.body.append(data, n);
        return Error();
    }
    Error end() override
    {
        if (m_sized && m_at != m_out.body.size())  // an answer framed shorter than its Content-Length (a 204 with one)
            return Error(ErrorCode::Network, QStringLiteral("the answer ended after %1 of the %2 bytes it announced").arg(m_at).arg(m_out.body.size()));
        if (m_hash)
            m_out.answer.bodySha256 = m_hash->result().toBase64();
        if (m_crc)
            m_out.answer.bodyCrc32c = m_crc->toBase64();
        return Error();
    }

private:
    void hash(const char *data, qint64 n)
    {
        if (m_hash)
            m_hash->add(data, n);
        else if (m_crc)
            m_crc->add(data, n);
    }

    Error tooMuch()
    {
        m_out.tooMuch = true;
        return Error(ErrorCode::Protocol, QStringLiteral("more than asked for"));
    }

    DirectOutcome &m_out;
    qint64 m_limit, m_errorLimit;
    bool m_headOnly, m_hashWanted;
    std::unique_ptr<Sha256> m_hash;
    std::unique_ptr<Crc32c> m_crc;
    bool m_success = false, m_sized = false;
    qint64 m_at = 0;
};

/// One S3 request as a job: signed at each send, retried after a growing wait on 500/503, cancellable.
/// Subclasses look at the successful answer.
///
/// Two ways to the store: over plain HTTP with no proxy, GET, HEAD and PUT go straight to the socket on a reader
/// thread (httpstream.h) over connections kept open between requests — a study is hundreds of GETs, and through
/// QNetworkAccessManager its small reads and thread hops cost 1.7× the time Orthanc's one multipart answer takes;
/// the rest (TLS, proxies, POST, DELETE) go through QNetworkAccessManager.
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
        m_renewalWait.setSingleShot(true);
        QObject::connect(&m_renewalWait, &QTimer::timeout, this, [this] {
            if (!this->isFinished())
                this->finishWith(Error(ErrorCode::Timeout, QStringLiteral("%1: the store's temporary credentials did not come within %2 s")
                                                               .arg(m_what).arg(m_renewalWait.interval() / 1000)));
        });
    }

    ~S3Job() override
    {
        if (m_cancel)
            m_cancel->cancel();  // a direct read of a job that goes stops (what it posts is dropped)
    }

protected:
    void doStart() override { send(); }
    void doCancel() override
    {
        m_wait.stop();
        if (m_cancel) {
            m_cancel->cancel();  // the reader ends at once; what it posts is dropped (the job has finished)
            m_cancel.reset();
        }
        if (m_reply) {
            QObject::disconnect(m_reply, nullptr, this, nullptr);
            m_reply->abort();
            m_reply->deleteLater();
            m_reply = nullptr;
        }
    }

    /// The store answered 2xx and the bytes passed the check set with setVerify: `answer` is its body.
    virtual void done(const QByteArray &body, const Answer &answer) = 0;
    /// The most bytes a successful answer may have (a range's length, a listing's bound): more, and the answer is
    /// cut off as not what was asked for — a server ignoring a range never fills the memory.
    void setAnswerLimit(qint64 bytes) { m_limit = bytes; }
    /// A check of a successful answer's bytes run off this thread before done() (on the reading thread, or the
    /// compute pool): the loop goes on taking the other answers meanwhile. It may not touch the job.
    void setVerify(Verify verify) { m_verify = std::move(verify); }
    /// The direct path hashes a body whose SHA-256 or CRC32C the store keeps as it comes (Answer::bodySha256,
    /// bodyCrc32c).
    void setHashAsItComes(bool on) { m_hashAsItComes = on; }

    QString m_what;

private:
    bool goesDirect(const QUrl &url) const
    {
        return (m_method == "GET" || m_method == "HEAD" || m_method == "PUT") && m_client->directSockets() && canStreamDirectly(url);
    }

    void send()
    {
        if (!m_client)
            return this->finishWith(Error(ErrorCode::Cancelled, QStringLiteral("%1: the store's client is gone").arg(m_what)));
        const std::optional<s3::Credentials> credentials = m_client->signingCredentials();
        if (!credentials)  // a session's, expired or not got yet: got first
            return renewSession({});
        m_signedWith = credentials->accessKey;
        const S3Client::Prepared p = m_client->prepare(m_method, m_key, m_query, m_headers, m_body, {}, *credentials);
        if (goesDirect(p.url))
            return sendDirect(p);
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
                    return this->finishWith(tooMuch());
                }
                m_reply->skip(m_reply->bytesAvailable());  // an error's first bytes are enough to say what it was
                return;
            }
            m_answer += m_reply->readAll();
        });
        QObject::connect(m_reply, &QNetworkReply::finished, this, [this] { finished(); });
    }

    /// On a reader thread of the network pool; what it brings back is posted here (dropped when the job has gone).
    void sendDirect(const S3Client::Prepared &p)
    {
        HttpRequest request;
        request.method = m_method;
        request.url = p.url;
        request.fields = p.headers;
        request.fields << qMakePair(QByteArray("Accept-Encoding"), QByteArray("identity"));
        if (m_method == "PUT")
            request.body = m_body;
        request.keepAlive = true;
        auto cancel = std::make_shared<HttpCancel>();
        m_cancel = cancel;
        const int timeoutMs = m_client->endpoint().timeoutMs;
        const qint64 limit = m_limit;
        runOnPool<DirectOutcome>(networkPool(), this, [request, cancel, timeoutMs, limit, hash = m_hashAsItComes, verify = m_verify] {
            DirectOutcome out;
            AnswerReader reader(out, limit, kErrorLimit, request.method == "HEAD", hash);
            out.transport = runHttp(request, timeoutMs, reader, *cancel);
            const bool success = out.answer.status >= 200 && out.answer.status < 300;
            if (success && !out.transport.isError() && verify)
                out.verified = verify(out.body, out.answer);
            return out;
        }, [this, cancel](DirectOutcome &&out) {
            if (cancel->isCancelled() || this->isFinished())
                return;
            m_cancel.reset();
            if (out.tooMuch)
                return this->finishWith(tooMuch());
            const bool timeout = out.answer.status == 0 && out.transport.code() == ErrorCode::Timeout;
            if (out.answer.status == 0)
                return answered(0, out.transport.message(), timeout, {}, {});
            if (out.transport.isError() && out.answer.status >= 200 && out.answer.status < 300)
                return this->finishWith(Error(ErrorCode::Network, QStringLiteral("%1: the answer broke off: %2").arg(m_what, out.transport.message())));
            if (out.verified.isError())
                return this->finishWith(out.verified.withContext(m_what));
            answered(out.answer.status, {}, false, std::move(out.body), std::move(out.answer), true);
        });
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
            return this->finishWith(tooMuch());
        if (success && reply->error() != QNetworkReply::NoError)
            return this->finishWith(Error(ErrorCode::Network, QStringLiteral("%1: the answer broke off: %2").arg(m_what, reply->errorString())));
        const bool timeout = status == 0 && (reply->error() == QNetworkReply::OperationCanceledError || reply->error() == QNetworkReply::TimeoutError);
        Answer answer;
        answer.status = status;
        for (const auto &[name, value] : reply->rawHeaderPairs())
            answer.fields << qMakePair(name.toLower(), value);
        answered(status, reply->errorString(), timeout, std::exchange(m_answer, QByteArray()), std::move(answer));
    }

    /// Either path's answer: asked again, refused, or looked at. `verified`: the bytes were checked already.
    void answered(int status, const QString &transportError, bool timeout, QByteArray body, Answer answer, bool verified = false)
    {
        if (!m_client)
            return this->finishWith(Error(ErrorCode::Cancelled, QStringLiteral("%1: the store's client is gone").arg(m_what)));
        const S3Endpoint &e = m_client->endpoint();
        // Asked again, signed afresh, after a growing wait: a store asking to slow down (500, 503, 429), and a
        // connection that broke before any answer (every request here may be sent twice: reads, whole puts and
        // parts, a completion, a delete).
        const bool again = status == 503 || status == 500 || status == 429 || (status == 0 && !timeout);
        if (again && ++m_attempt < e.attempts) {
            m_wait.start(e.backoffMs << (m_attempt - 1));
            return;
        }
        if (status == 0)
            return this->finishWith(Error(timeout ? ErrorCode::Timeout : ErrorCode::Network,
                                          QStringLiteral("%1: %2 (%3)").arg(m_what, timeout ? QStringLiteral("no answer within %1 ms").arg(e.timeoutMs) : transportError,
                                                                            QStringLiteral("%1:%2").arg(e.endpoint.host()).arg(e.endpoint.port(e.endpoint.scheme() == QLatin1String("https") ? 443 : 80)))));
        // Temporary credentials the store no longer takes (expired by its clock, or revoked): got again once.
        // (A HEAD's refusal has no body to say why: not taken for one — a request with a body says it soon enough,
        // and a HEAD the role's policy denies must not cost everyone their credentials.)
        if ((status == 400 || status == 403) && e.session && !m_renewedSession && sessionRefused(s3::parseError(body).code)) {
            m_renewedSession = true;
            return renewSession(m_signedWith);
        }
        if (status < 200 || status >= 300)
            return this->finishWith(s3::errorFor(status, body, m_what, e.bucket));
        if (verified || !m_verify)
            return done(body, answer);
        // Checked on the pool: the loop goes on taking the other answers meanwhile.
        auto checked = std::make_shared<std::pair<QByteArray, Answer>>(std::move(body), std::move(answer));
        runOnPool<Error>(computePool(), this, [checked, verify = m_verify] { return verify(checked->first, checked->second); },
                         [this, checked](Error &&refused) {
                             if (this->isFinished())
                                 return;
                             if (refused.isError())
                                 return this->finishWith(refused.withContext(m_what));
                             done(checked->first, checked->second);
                         });
    }

    static bool sessionRefused(const QString &code)
    {
        return code == QLatin1String("ExpiredToken") || code == QLatin1String("InvalidToken") || code == QLatin1String("TokenRefreshRequired")
               || code == QLatin1String("InvalidAccessKeyId");
    }

    /// The session's credentials got (again), then this request sent with them — or, when they do not come within
    /// the store's timeout (a token service that does not answer; the program ending), the request fails.
    void renewSession(const QString &refusedKey)
    {
        m_renewalWait.start(m_client->endpoint().timeoutMs);
        m_client->endpoint().session->renew(refusedKey, this, [this](const Error &e) {
            m_renewalWait.stop();
            if (this->isFinished())
                return;
            if (e.isError())
                return this->finishWith(e.withContext(m_what));
            if (!m_client || !m_client->signingCredentials())
                return this->finishWith(Error(ErrorCode::Authentication, QStringLiteral("%1: the store's temporary credentials could not be got").arg(m_what)));
            send();
        });
    }

    Error tooMuch() const
    {
        return Error(ErrorCode::Protocol, QStringLiteral("%1: the store sent more than the %2 bytes asked for").arg(m_what).arg(m_limit));
    }

    QPointer<S3Client> m_client;
    QByteArray m_method;
    QString m_key;
    Query m_query;
    Headers m_headers;
    QByteArray m_body;
    QPointer<QNetworkReply> m_reply;
    std::shared_ptr<HttpCancel> m_cancel;  ///< the direct path's request in flight
    QByteArray m_answer;
    QTimer m_wait;
    Verify m_verify;
    bool m_hashAsItComes = false;
    int m_attempt = 0;
    QTimer m_renewalWait;           ///< how long a request waits for the session's credentials
    QString m_signedWith;           ///< the access key the request was last signed with
    bool m_renewedSession = false;  ///< the session's credentials were got again after a refusal
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
    void done(const QByteArray &, const Answer &) override { finishWith(Done{}); }
};

/// "GET s3://bucket/key": what a request was, in errors.
inline QString describe(const char *verb, const QString &key, const S3Endpoint &e)
{
    return QStringLiteral("%1 s3://%2/%3").arg(QLatin1String(verb), e.bucket, key);
}

} // namespace spectrum::s3wire
