// SPDX-License-Identifier: Apache-2.0
// S3Client: one job per request (s3job.h); the URL and signed headers of each (prepare).

#include "s3job.h"

#include "spectrum/core/threadpools.h"
#include "spectrum/transfer/sha256.h"

#include <QCryptographicHash>
#include <QLocale>

#include <algorithm>
#include <limits>

namespace spectrum {

using namespace s3wire;

namespace {

S3Object objectOf(const QString &key, const Answer &reply, qint64 size)
{
    S3Object o;
    o.key = key;
    o.size = size;
    o.etag = reply.header("etag");
    // An HTTP date ("Wed, 25 Nov 2026 17:27:44 GMT"), which Qt's RFC 2822 reading does not take with "GMT".
    QDateTime modified = QLocale::c().toDateTime(QString::fromLatin1(reply.header("last-modified")), QStringLiteral("ddd, dd MMM yyyy HH:mm:ss 'GMT'"));
    modified.setTimeSpec(Qt::UTC);
    o.lastModified = modified;
    o.checksumSha256 = reply.header("x-amz-checksum-sha256");
    o.checksumCrc32c = reply.header("x-amz-checksum-crc32c");
    return o;
}

class HeadJob : public S3Job<S3Object>
{
public:
    // With the checksum the store keeps of the object, when it keeps one. With `part` (from 1): that part of a
    // multipart object (its size; the object's number of parts).
    HeadJob(S3Client *c, const QString &key, int part = 0)
        : S3Job(c, "HEAD", key, part > 0 ? Query{qMakePair(QStringLiteral("partNumber"), QString::number(part))} : Query{},
                {qMakePair(QByteArray("x-amz-checksum-mode"), QByteArray("ENABLED"))}, {}, describe("HEAD", key, c->endpoint())), m_key(key)
    {
    }

protected:
    void done(const QByteArray &, const Answer &reply) override
    {
        bool ok = false;
        const qint64 size = reply.header("content-length").toLongLong(&ok);
        if (!ok)
            return finishWith(Error(ErrorCode::Protocol, QStringLiteral("%1: the store gave no size").arg(m_what)));
        S3Object o = objectOf(m_key, reply, size);
        o.partsCount = reply.header("x-amz-mp-parts-count").toInt();
        finishWith(o);
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
    // A whole object comes with the checksum the store keeps of it, when it keeps one (checked in done()).
    if (o.offset == 0 && o.length < 0)
        h << qMakePair(QByteArray("x-amz-checksum-mode"), QByteArray("ENABLED"));
    return h;
}

class GetJob : public S3Job<QByteArray>
{
public:
    GetJob(S3Client *c, const QString &key, const S3GetOptions &o)
        : S3Job(c, "GET", key, {}, getHeaders(o), {}, describe("GET", key, c->endpoint())), m_options(o)
    {
        setAnswerLimit(o.length >= 0 ? o.length : qint64(std::numeric_limits<int>::max() - 64));  // whole: what one QByteArray holds
        if (o.offset == 0 && o.length < 0) {
            setVerify(&checkWhole);
            setHashAsItComes(true);
        }
    }

protected:
    void done(const QByteArray &answer, const Answer &reply) override
    {
        const bool ranged = m_options.offset > 0 || m_options.length >= 0;
        // A 200 for a range is the whole object: right only when the range was the whole object.
        if (ranged && reply.status != 206 && !(reply.status == 200 && m_options.offset == 0 && answer.size() == m_options.length))
            return finishWith(Error(ErrorCode::Protocol, QStringLiteral("%1: the store sent the whole object for a range").arg(m_what)));
        if (m_options.length >= 0 && answer.size() != m_options.length) {
            // Short only at the object's end, which Content-Range then says.
            const QByteArray range = reply.header("content-range");
            const qint64 total = range.mid(range.lastIndexOf('/') + 1).toLongLong();
            if (m_options.offset + answer.size() != total)
                return finishWith(Error(ErrorCode::Protocol, QStringLiteral("%1: %2 bytes came for %3").arg(m_what).arg(answer.size()).arg(m_options.length)));
        }
        finishWith(answer);
    }

private:
    /// A whole object whose SHA-256 or CRC32C the store keeps (put with one): the bytes are checked against it
    /// before anyone uses them, off the job's thread. (A multipart object's is a composite of its parts':
    /// download() checks those.)
    static Error checkWhole(const QByteArray &answer, const Answer &reply)
    {
        if (const QByteArray crc = reply.header("x-amz-checksum-crc32c"); !crc.isEmpty() && !crc.contains('-')) {
            Crc32c sum;
            if (reply.bodyCrc32c.isEmpty())
                sum.add(answer.constData(), answer.size());
            const QByteArray came = reply.bodyCrc32c.isEmpty() ? sum.toBase64() : reply.bodyCrc32c;
            if (!s3::sameChecksum(crc, came))
                return Error(ErrorCode::Corrupt, QStringLiteral("the bytes that came do not match the CRC32C the store keeps of the object "
                                                                "(%1, they make %2): damaged on the way, or in the store; nothing was used")
                                                     .arg(QString::fromLatin1(crc), QString::fromLatin1(came)));
            return Error();
        }
        const QByteArray kept = reply.header("x-amz-checksum-sha256");
        if (kept.isEmpty() || kept.contains('-'))
            return Error();
        const QByteArray came = reply.bodySha256.isEmpty() ? Sha256::hash(answer.constData(), answer.size()).toBase64() : reply.bodySha256;
        Sha256::releaseThreadState();
        if (!s3::sameChecksum(kept, came))
            return Error(ErrorCode::Corrupt, QStringLiteral("the bytes that came do not match the SHA-256 the store keeps of the object "
                                                            "(%1, they hash to %2): damaged on the way, or in the store; nothing was used")
                                                 .arg(QString::fromLatin1(kept), QString::fromLatin1(came)));
        return Error();
    }

    S3GetOptions m_options;
};

Headers putHeaders(const S3PutOptions &o, const QByteArray &body)
{
    // The store checks the bytes against it: a body damaged on the way is refused, not stored.
    Headers h{qMakePair(QByteArray("content-type"), o.contentType),
              o.checksum == S3Checksum::Crc32c ? qMakePair(QByteArray("x-amz-checksum-crc32c"), [&] {
                  Crc32c sum;
                  sum.add(body.constData(), body.size());
                  return sum.toBase64();
              }())
                                               : qMakePair(QByteArray("x-amz-checksum-sha256"), Sha256::hash(body.constData(), body.size()).toBase64())};
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
    void done(const QByteArray &, const Answer &reply) override { finishWith(objectOf(m_key, reply, m_size)); }

private:
    QString m_key;
    qint64 m_size;
};

class ListJob : public S3Job<S3Listing>
{
public:
    ListJob(S3Client *c, const Query &query, const QString &prefix) : S3Job(c, "GET", {}, query, {}, {}, describe("LIST", prefix, c->endpoint())) {}

protected:
    void done(const QByteArray &answer, const Answer &) override
    {
        Result<S3Listing> listing = s3::parseListing(answer);
        finishWith(listing.isOk() ? std::move(listing) : Result<S3Listing>(listing.error().withContext(m_what)));
    }
};

} // namespace

/// Keys S3 and the proxies before it read as written: no empty, "." or ".." segment (which some normalise away,
/// so the request would not be the one signed), no control characters, at most 1,024 bytes.
Error s3wire::checkKey(const QString &key)
{
    if (key.isEmpty())
        return Error(ErrorCode::InvalidKey, QStringLiteral("an object needs a key"));
    if (key.toUtf8().size() > 1024)
        return Error(ErrorCode::InvalidKey, QStringLiteral("the key '%1…' is longer than 1,024 bytes").arg(key.left(40)));
    for (const QString &segment : key.split(QLatin1Char('/')))
        if (segment == QLatin1String(".") || segment == QLatin1String(".."))
            return Error(ErrorCode::InvalidKey, QStringLiteral("the key '%1' has a '.' or '..' part").arg(key));
    if (key.contains(QLatin1String("//")) || key.startsWith(QLatin1Char('/')))
        return Error(ErrorCode::InvalidKey, QStringLiteral("the key '%1' has an empty part").arg(key));
    if (std::any_of(key.begin(), key.end(), [](QChar c) { return c.unicode() < 0x20 || c.unicode() == 0x7f; }))
        return Error(ErrorCode::InvalidKey, QStringLiteral("the key '%1' holds a control character").arg(key));
    return Error();
}

S3Client::S3Client(S3Endpoint endpoint, QObject *parent) : QObject(parent), m_endpoint(std::move(endpoint))
{
    for (int i = 0; i < 4; ++i) {  // 24 connections: more than any download here asks for
        auto m = std::make_unique<QNetworkAccessManager>();
        m->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);  // a signed request is not sent elsewhere
        m_managers.push_back(std::move(m));
    }
}

QNetworkAccessManager *S3Client::manager()
{
    QNetworkAccessManager *m = m_managers[m_next].get();
    m_next = (m_next + 1) % m_managers.size();
    return m;
}

S3Source S3Source::of(const QByteArray &bytes)
{
    S3Source s;
    s.size = bytes.size();
    s.read = [bytes](qint64 offset, qint64 length) -> Result<QByteArray> { return bytes.mid(offset, length); };
    return s;
}

S3Client::~S3Client()
{
    // Jobs still running end now, as cancelled (their callers waiting in runSync included), before the connection
    // pools that hold their replies go.
    for (Job *job : findChildren<Job *>(QString(), Qt::FindDirectChildrenOnly))
        if (!job->isFinished())
            job->cancel();
}

std::optional<s3::Credentials> S3Client::signingCredentials() const
{
    if (!m_endpoint.session)
        return m_endpoint.credentials;
    std::optional<s3::Credentials> c = m_endpoint.session->current();
    if (c)
        c->region = m_endpoint.credentials.region;
    return c;
}

S3Client::Prepared S3Client::prepare(const QByteArray &method, const QString &key, const Query &query, const Headers &headers, const QByteArray &body,
                                     const QDateTime &when, const std::optional<s3::Credentials> &given) const
{
    Prepared p;
    const QUrl &e = m_endpoint.endpoint;
    const bool https = e.scheme() == QLatin1String("https");
    const int port = e.port(https ? 443 : 80);
    QString host = m_endpoint.virtualHosted ? m_endpoint.bucket + QLatin1Char('.') + e.host() : e.host();
    if (host.contains(QLatin1Char(':')))
        host = QLatin1Char('[') + host + QLatin1Char(']');  // an IPv6 address
    s3::RequestToSign r;
    r.method = method;
    r.host = (port == (https ? 443 : 80) ? host : QStringLiteral("%1:%2").arg(host).arg(port)).toUtf8();
    const QByteArray encodedKey = s3::uriEncode(key, true);
    r.encodedPath = m_endpoint.virtualHosted ? '/' + encodedKey : '/' + s3::uriEncode(m_endpoint.bucket, false) + (key.isEmpty() ? QByteArray() : '/' + encodedKey);
    r.query = query;
    r.headers = headers;
    // A session's without any yet: unsigned keys the store refuses (S3Job asks the session first).
    const s3::Credentials credentials = given ? *given : signingCredentials().value_or(s3::Credentials{QString(), QString(), m_endpoint.credentials.region, QString()});
    if (!credentials.sessionToken.isEmpty())
        r.headers << qMakePair(QByteArray("x-amz-security-token"), credentials.sessionToken.toUtf8());
    // Over TLS the channel protects the bytes; over plain HTTP their hash is signed.
    r.payloadHash = https ? QByteArray(s3::kUnsignedPayload) : QByteArray();
    if (r.payloadHash.isEmpty() && method == "PUT") {
        // A PUT's body sent with its SHA-256 for the store to check (a part, a whole object) is not hashed a second
        // time for the signature: the same digest, in hex (the store checks both against the bytes).
        for (const auto &[name, value] : headers)
            if (name.compare("x-amz-checksum-sha256", Qt::CaseInsensitive) == 0 && QByteArray::fromBase64(value).size() == 32)
                r.payloadHash = QByteArray::fromBase64(value).toHex();
    }
    if (r.payloadHash.isEmpty())
        r.payloadHash = s3::payloadHash(body);
    const s3::Signed s = s3::sign(r, credentials, when.isValid() ? when : QDateTime::currentDateTimeUtc().addMSecs(m_clockOffsetMs));
    QByteArray url = e.scheme().toUtf8() + "://" + r.host + r.encodedPath;
    if (!s.encodedQuery.isEmpty())
        url += '?' + s.encodedQuery;
    p.url = QUrl::fromEncoded(url, QUrl::StrictMode);
    p.headers = r.headers;
    p.headers << qMakePair(QByteArray("Authorization"), s.authorization) << qMakePair(QByteArray("x-amz-date"), s.amzDate)
              << qMakePair(QByteArray("x-amz-content-sha256"), s.contentSha256);
    return p;
}

ResultJob<S3Object> *S3Client::headPart(const QString &key, int part)
{
    if (key.isEmpty() || part < 1)
        return failedJob<S3Object>(Error(ErrorCode::InvalidArgument, QStringLiteral("a part of an object needs its key and a number from 1")));
    return new HeadJob(this, key, part);
}

ResultJob<S3Object> *S3Client::head(const QString &key)
{
    if (Error e = checkKey(key); e.isError())
        return failedJob<S3Object>(e);
    return new HeadJob(this, key);
}

ResultJob<QByteArray> *S3Client::get(const QString &key, const S3GetOptions &options)
{
    if (options.offset < 0 || options.length < -1)
        return failedJob<QByteArray>(Error(ErrorCode::InvalidArgument, QStringLiteral("a byte range with a negative start or length")));
    if (options.length == 0)
        return failedJob<QByteArray>(Error(ErrorCode::InvalidArgument, QStringLiteral("an empty byte range")));
    if (Error e = checkKey(key); e.isError())
        return failedJob<QByteArray>(e);
    return new GetJob(this, key, options);
}

ResultJob<S3Object> *S3Client::put(const QString &key, const QByteArray &body, const S3PutOptions &options)
{
    if (Error e = checkKey(key); e.isError())
        return failedJob<S3Object>(e);
    if (body.size() > (qint64(5) << 30))
        return failedJob<S3Object>(Error(ErrorCode::InvalidArgument, QStringLiteral("one PUT holds at most 5 GiB: upload() sends it in parts")));
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
    if (Error e = checkKey(key); e.isError())
        return failedJob<Done>(e);
    return new EmptyAnswerJob(this, "DELETE", key, {}, {}, {}, describe("DELETE", key, m_endpoint));
}

ResultJob<Done> *S3Client::createBucket()
{
    return new EmptyAnswerJob(this, "PUT", QString(), {}, {}, {}, QStringLiteral("create bucket %1").arg(m_endpoint.bucket));
}

} // namespace spectrum
