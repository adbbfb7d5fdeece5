#pragma once
// S3Client: objects of one bucket of an S3-compatible store (AWS S3, Ceph RGW, Garage, versitygw…) on the caller's
// event loop through core's job API — head, get (whole or a byte range, optionally only if its ETag is still the
// one read before), put (optionally only if absent, or only over a given ETag), list by prefix, remove.
//
// Every request is signed with AWS Signature V4 (s3signer.h) when it is sent (a retry is signed afresh). Over
// plain HTTP the payload's SHA-256 is signed with it; over HTTPS the payload is UNSIGNED-PAYLOAD, as S3 allows:
// TLS protects the bytes and hashing them twice costs a core.
//
// Errors say what the store said and what to do: refused credentials, a clock too far from the store's, a bucket
// that does not exist, an object that changed (ErrorCode::Changed). A store asking to slow down (503 SlowDown,
// 500 InternalError) is asked again after a backoff, a few times, before the job fails as Busy.
//
// The secret key never leaves the signer: not in URLs, errors or logs.

#include "spectrum/core/resultjob.h"
#include "spectrum/transfer/s3signer.h"

#include <QDateTime>
#include <QObject>
#include <QUrl>

#include <memory>

class QNetworkAccessManager;

namespace spectrum {

struct S3Endpoint
{
    QUrl endpoint;              ///< scheme, host and port of the store, e.g. https://s3.eu-central-1.amazonaws.com
    QString bucket;
    bool virtualHosted = false; ///< bucket.host/key (AWS's default) instead of host/bucket/key (path style)
    s3::Credentials credentials;
    QString caFile;             ///< HTTPS: PEM certificates to trust besides the system's (a hospital's own CA)
    int timeoutMs = 60000;      ///< a request that moves no byte this long fails
    int attempts = 4;           ///< tries of a request the store asked us to slow down for (503, 500)
    int backoffMs = 200;        ///< the first wait before trying again; doubled each time
};

struct S3Object
{
    QString key;
    qint64 size = -1;
    QByteArray etag;            ///< as the store quotes it, e.g. "\"9b2cf535f27731c974343645a3985328\""
    QDateTime lastModified;
};

struct S3Listing
{
    QList<S3Object> objects;
    QStringList prefixes;       ///< with a delimiter: the "folders" below the prefix
    bool truncated = false;
    QString nextToken;          ///< ask again with it for the rest
};

/// What an S3 error answer says (its XML body).
struct S3ErrorAnswer
{
    QString code;               ///< e.g. NoSuchKey, SignatureDoesNotMatch, SlowDown
    QString message;
};

namespace s3 {
/// A ListObjectsV2 answer. Errors: Protocol when it is not one.
Result<S3Listing> parseListing(const QByteArray &xml);
/// An error answer; empty code when the body is not one.
S3ErrorAnswer parseError(const QByteArray &xml);
/// Our error for an S3 answer with HTTP `status`: what the store said, in words a site's admin can act on.
Error errorFor(int status, const QByteArray &body, const QString &what, const QString &bucket);
} // namespace s3

struct S3GetOptions
{
    qint64 offset = 0;
    qint64 length = -1;         ///< -1: to the end
    QByteArray ifMatch;         ///< only if the object's ETag is still this one (else ErrorCode::Changed)
};

struct S3PutOptions
{
    bool ifNoneMatch = false;   ///< only if no object has this key yet (else ErrorCode::Changed)
    QByteArray ifMatch;         ///< only over the object with this ETag (else ErrorCode::Changed)
    QByteArray contentType = "application/octet-stream";
};

class S3Client : public QObject
{
    Q_OBJECT
public:
    explicit S3Client(S3Endpoint endpoint, QObject *parent = nullptr);
    ~S3Client() override;

    const S3Endpoint &endpoint() const { return m_endpoint; }

    ResultJob<S3Object> *head(const QString &key);
    ResultJob<QByteArray> *get(const QString &key, const S3GetOptions &options = {});
    /// The stored object's size and ETag come back (its key as given).
    ResultJob<S3Object> *put(const QString &key, const QByteArray &body, const S3PutOptions &options = {});
    /// ListObjectsV2: keys under `prefix`, one page (at most `maxKeys`, the store may give fewer).
    ResultJob<S3Listing> *list(const QString &prefix, const QString &delimiter = {}, const QString &continuationToken = {}, int maxKeys = 1000);
    ResultJob<Done> *remove(const QString &key);
    /// Makes the bucket (for tests and first set-up; a hospital's admin usually has it made).
    ResultJob<Done> *createBucket();

    /// For tests: this workstation's clock seen as off by `ms` (a clock-skew refusal can be tried on loopback).
    void setClockOffsetMs(qint64 ms) { m_clockOffsetMs = ms; }

    /// For the jobs: the URL of `key` (empty: the bucket) with `query` encoded as signed, and the request's headers
    /// signed at `when` (invalid: now, as this workstation's clock says).
    struct Prepared
    {
        QUrl url;
        QList<QPair<QByteArray, QByteArray>> headers;
    };
    Prepared prepare(const QByteArray &method, const QString &key, const QList<QPair<QString, QString>> &query,
                     const QList<QPair<QByteArray, QByteArray>> &headers, const QByteArray &body, const QDateTime &when = {}) const;
    QNetworkAccessManager *manager() const { return m_manager.get(); }

private:
    S3Endpoint m_endpoint;
    std::unique_ptr<QNetworkAccessManager> m_manager;
    qint64 m_clockOffsetMs = 0;
};

} // namespace spectrum
