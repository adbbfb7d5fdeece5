// SPDX-License-Identifier: Apache-2.0
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

#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QNetworkAccessManager;

namespace spectrum {

/// Credentials that expire and are got again (an STS session, stssession.h), asked for when each request is
/// signed — on the client's thread.
class S3Session
{
public:
    virtual ~S3Session() = default;
    /// The access key, secret and session token to sign with now; none when none are valid long enough to send a
    /// request with (then renew() first).
    virtual std::optional<s3::Credentials> current() const = 0;
    /// Gets new credentials — unless those the store refused (`refusedKey`, empty: none yet) have been replaced
    /// already — then `then(error)` on `context`'s thread (not when `context` is gone).
    virtual void renew(const QString &refusedKey, QObject *context, std::function<void(const Error &)> then) = 0;
};

struct S3Endpoint
{
    QUrl endpoint;              ///< scheme, host and port of the store, e.g. https://s3.eu-central-1.amazonaws.com
    QString bucket;
    bool virtualHosted = false; ///< bucket.host/key (AWS's default) instead of host/bucket/key (path style)
    s3::Credentials credentials;  ///< the region always; the keys unless a session gives them
    /// Temporary credentials got from an STS with the reader's sign-in (stssession.h): its keys and token sign the
    /// requests, renewed when they expire or the store refuses them.
    std::shared_ptr<S3Session> session;
    QString caFile;             ///< HTTPS: PEM certificates to trust besides the system's (a hospital's own CA)
    int timeoutMs = 60000;      ///< a request that moves no byte this long fails
    int attempts = 4;           ///< tries of a request the store asked us to slow down for (503, 500)
    int backoffMs = 200;        ///< the first wait before trying again; doubled each time
    /// Plain HTTP with no proxy: GET, HEAD and PUT straight to the socket over connections kept between requests
    /// (off: all through QNetworkAccessManager, for comparison)
    bool directSockets = true;
};

struct S3Object
{
    QString key;
    qint64 size = -1;
    QByteArray etag;            ///< as the store quotes it, e.g. "\"9b2cf535f27731c974343645a3985328\""
    QDateTime lastModified;
    /// x-amz-checksum-sha256 as the store keeps it: base64 of the SHA-256, or for a multipart upload of the SHA-256
    /// of the parts' SHA-256s, then "-" and the number of parts. Empty when the store did not say.
    QByteArray checksumSha256;
    /// x-amz-checksum-crc32c, base64 of the four bytes, when the object was put with a CRC32C instead (as the
    /// instances of a study are: S3PutOptions::checksum). Empty when the store did not say.
    QByteArray checksumCrc32c;
    int partsCount = 0;         ///< headPart(): how many parts the object has (0: not said)
    bool verified = false;      ///< download(): the bytes matched the store's checksum
    QString unchecked;          ///< download(), not verified: why the bytes could not be checked
    /// upload() resumed: bytes of parts the store held already, not sent again; download() resumed: bytes an
    /// earlier download left, not fetched again (checked all the same)
    qint64 keptBytes = 0;
};

/// A part of a multipart upload as the store keeps it (ListParts).
struct S3Part
{
    int number = 0;             ///< from 1
    qint64 size = 0;
    QByteArray etag;
    QByteArray checksumSha256;  ///< base64, when the upload was begun with SHA-256 checksums
};

/// One page of a ListParts answer.
struct S3PartListing
{
    QList<S3Part> parts;
    bool truncated = false;
    int nextMarker = 0;         ///< ask again from after this part number for the rest
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
/// The UploadId of an InitiateMultipartUploadResult.
Result<QString> parseUploadId(const QByteArray &xml);
/// A CompleteMultipartUploadResult (its ETag and checksum). The store may answer 200 with an error body: an error.
Result<S3Object> parseCompleted(const QByteArray &xml);
/// A ListMultipartUploadsResult: (key, upload ID) of each upload begun and neither completed nor aborted.
Result<QList<QPair<QString, QString>>> parseUploads(const QByteArray &xml);
/// A ListPartsResult: part numbers from 1 to 10,000, sizes not negative; a truncated page says where to go on.
Result<S3PartListing> parseParts(const QByteArray &xml);
/// The composite checksum of a multipart upload from its parts' SHA-256s (raw, in part order): base64 of their
/// SHA-256, "-", their number — what the store must report for the object.
QByteArray compositeChecksum(const QList<QByteArray> &partDigests);
/// Whether the checksum a store reports (`kept`: base64, padded or not, with "-N" for a composite) is `ours`: the
/// digests compared, not their spelling. Empty or not base64: false.
bool sameChecksum(const QByteArray &kept, const QByteArray &ours);
/// Our error for an S3 answer with HTTP `status`: what the store said, in words a site's admin can act on.
Error errorFor(int status, const QByteArray &body, const QString &what, const QString &bucket);
} // namespace s3

struct S3GetOptions
{
    qint64 offset = 0;
    qint64 length = -1;         ///< -1: to the end
    QByteArray ifMatch;         ///< only if the object's ETag is still this one (else ErrorCode::Changed)
};

/// The checksum a PUT sends for the store to check the body against and keep with the object, given back on
/// every GET and checked there. SHA-256 (the default: an object's identity, what the parts of a multipart upload
/// carry) costs ~0.8 CPU-s per GiB here; CRC32C ~0.05, and catches any accidental damage as well — what an object
/// read often and whole wants (a study's instances: the saving is on every GET). A PUT over plain HTTP still hashes
/// its payload's SHA-256 for the signature, whichever it sends. Neither holds against a store that lies: it sends
/// the sum too.
enum class S3Checksum { Sha256, Crc32c };

struct S3PutOptions
{
    bool ifNoneMatch = false;   ///< only if no object has this key yet (else ErrorCode::Changed)
    QByteArray ifMatch;         ///< only over the object with this ETag (else ErrorCode::Changed)
    QByteArray contentType = "application/octet-stream";
    S3Checksum checksum = S3Checksum::Sha256;
};

/// Where an upload's bytes come from: read(offset, length) is called on the client's thread, one part at a time.
struct S3Source
{
    qint64 size = 0;
    std::function<Result<QByteArray>(qint64 offset, qint64 length)> read;
    static S3Source of(const QByteArray &bytes);
};

struct S3UploadOptions
{
    qint64 partSize = 16 << 20;  ///< S3 asks at least 5 MiB for every part but the last, at most 10,000 parts
    int parallel = 4;            ///< parts in flight at once
    QByteArray contentType = "application/octet-stream";
    /// Carry on an upload of this key begun before and neither completed nor aborted (a process killed midway):
    /// the parts the store holds with this source's SHA-256 and size are kept, the others sent. Without one (or
    /// when the store cannot list them) the upload starts afresh.
    bool resume = false;
};

/// Where a download's bytes go: called on the client's thread with each range as it completes (in any order). An
/// error stops the download.
using S3Sink = std::function<Error(qint64 offset, const QByteArray &bytes)>;

struct S3DownloadOptions
{
    int streams = 4;             ///< ranges in flight at once (each its own connection)
    qint64 chunk = 8 << 20;      ///< bytes per ranged GET (at most; checked, a range ends where a part does)
    bool verify = true;          ///< check the bytes against the store's checksum (see download())
    /// Resuming: the byte ranges [begin, end) an earlier download of the object left where the sink writes, and
    /// the ETag of the version they came from. When the object is still that version, ranges inside them are not
    /// fetched again: their bytes are read back through readKept (on the client's thread) and checked with the
    /// rest. Another version: everything is fetched.
    QList<QPair<qint64, qint64>> kept;
    QByteArray keptEtag;
    std::function<QByteArray(qint64 offset, qint64 length)> readKept;
};

class S3Client : public QObject
{
    Q_OBJECT
public:
    explicit S3Client(S3Endpoint endpoint, QObject *parent = nullptr);
    ~S3Client() override;

    const S3Endpoint &endpoint() const { return m_endpoint; }

    ResultJob<S3Object> *head(const QString &key);
    /// HEAD of part `part` (from 1) of a multipart object: its size, and the object's number of parts.
    ResultJob<S3Object> *headPart(const QString &key, int part);
    ResultJob<QByteArray> *get(const QString &key, const S3GetOptions &options = {});
    /// The stored object's size and ETag come back (its key as given).
    ResultJob<S3Object> *put(const QString &key, const QByteArray &body, const S3PutOptions &options = {});
    /// ListObjectsV2: keys under `prefix`, one page (at most `maxKeys`, the store may give fewer).
    ResultJob<S3Listing> *list(const QString &prefix, const QString &delimiter = {}, const QString &continuationToken = {}, int maxKeys = 1000);
    ResultJob<Done> *remove(const QString &key);

    /// Multipart upload: the parts sent `parallel` at a time, each with its SHA-256 for the store to check, then
    /// completed with every part's checksum, and the object's composite checksum checked against ours. A part
    /// that fails fails the upload, which is then aborted at the store (no orphaned parts left to pay for).
    /// Objects smaller than one part go up in one PUT. progress(bytes sent, size).
    ResultJob<S3Object> *upload(const QString &key, S3Source source, const S3UploadOptions &options = {});
    /// The object in ranges over `streams` connections at once, every range bound to the ETag the first answer
    /// gave (a changed object is never spliced: ErrorCode::Changed). progress(bytes received, size).
    /// Checked against the SHA-256 the store keeps, when it keeps one: for a multipart object no range crosses a
    /// part, each part is hashed on the pool once its ranges are in, and their composite compared when the last is;
    /// a whole object's is its SHA-256 (up to 256 MiB, gathered whole). A mismatch fails the download (ErrorCode::Corrupt) after
    /// the sink had the bytes: write them where nothing uses them before the download succeeds (QSaveFile, a cache
    /// reservation committed after).
    ResultJob<S3Object> *download(const QString &key, S3Sink sink, const S3DownloadOptions &options = {});
    /// Multipart uploads under `prefix` begun and neither completed nor aborted: (key, upload ID).
    ResultJob<QList<QPair<QString, QString>>> *pendingUploads(const QString &prefix = {});
    /// The parts of upload `uploadId` of `key` the store holds, one page from after part `marker`.
    ResultJob<S3PartListing> *uploadedParts(const QString &key, const QString &uploadId, int marker = 0);
    /// Aborts an upload begun elsewhere (a workstation killed mid-upload): its parts are deleted at the store.
    ResultJob<Done> *abortUpload(const QString &key, const QString &uploadId);
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
    /// Signed with `credentials` (a request's, chosen once for it), else signingCredentials().
    Prepared prepare(const QByteArray &method, const QString &key, const QList<QPair<QString, QString>> &query,
                     const QList<QPair<QByteArray, QByteArray>> &headers, const QByteArray &body, const QDateTime &when = {},
                     const std::optional<s3::Credentials> &credentials = std::nullopt) const;
    /// The credentials prepare() signs with now (a session's may be none yet).
    std::optional<s3::Credentials> signingCredentials() const;
    /// The connection pool for the next request: Qt opens at most 6 connections per host and manager, so a
    /// client spreads its requests over several.
    QNetworkAccessManager *manager();
    bool directSockets() const { return m_endpoint.directSockets; }

private:
    S3Endpoint m_endpoint;
    std::vector<std::unique_ptr<QNetworkAccessManager>> m_managers;
    size_t m_next = 0;
    qint64 m_clockOffsetMs = 0;
};

} // namespace spectrum
