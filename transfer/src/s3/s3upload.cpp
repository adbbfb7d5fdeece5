// SPDX-License-Identifier: Apache-2.0
// An S3 upload: multipart (parts in parallel, each checked by the store, the whole checked by us, resumed from the
// parts an earlier attempt left, aborted — and kept aborted — when it fails), the uploads a bucket holds pending and
// their parts. The download over several connections is in s3download.cpp.

#include "s3job.h"

#include "spectrum/core/compoundjob.h"
#include "spectrum/core/logging.h"

#include "spectrum/transfer/crc32c.h"
#include "spectrum/transfer/sha256.h"

#include <QCryptographicHash>

#include <QTimer>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

namespace spectrum {

using namespace s3wire;

namespace {

constexpr qint64 kMinPart = 5 << 20;   // S3's smallest part (all but the last)
constexpr qint64 kMaxPart = qint64(5) << 30;  // and its largest (and a whole PUT's)
constexpr int kMaxParts = 10000;       // S3's most parts

/// The answer to a request that returns an XML body parsed by `parse`.
template <typename T>
class XmlAnswerJob : public S3Job<T>
{
public:
    using Parse = Result<T> (*)(const QByteArray &);
    XmlAnswerJob(S3Client *c, QByteArray method, QString key, Query query, Headers headers, QByteArray body, QString what, Parse parse)
        : S3Job<T>(c, std::move(method), std::move(key), std::move(query), std::move(headers), std::move(body), std::move(what)), m_parse(parse)
    {
    }

protected:
    void done(const QByteArray &answer, const Answer &) override
    {
        Result<T> r = m_parse(answer);
        this->finishWith(r.isOk() ? std::move(r) : Result<T>(r.error().withContext(this->m_what)));
    }

private:
    Parse m_parse;
};

/// One part of a multipart upload: its ETag, and the checksum the store computed of it.
class PartJob : public S3Job<S3Object>
{
public:
    using S3Job::S3Job;

protected:
    void done(const QByteArray &, const Answer &reply) override
    {
        S3Object o;
        o.etag = reply.header("etag");
        o.checksumSha256 = reply.header("x-amz-checksum-sha256");
        if (o.etag.isEmpty())
            return finishWith(Error(ErrorCode::Protocol, QStringLiteral("%1: the store gave the part no ETag").arg(m_what)));
        finishWith(o);
    }
};

/// Gives an upload up at the store, and makes sure it stays given up. A part the store was still taking when the
/// upload was aborted may land afterwards and bring the upload back (AWS says so of S3; versitygw's POSIX store
/// does it): the upload's parts are looked at again a little later, and while they are listed it is aborted again.
class AbandonUploadJob : public CompoundJob<Done>
{
public:
    AbandonUploadJob(S3Client *client, QString key, QString uploadId) : m_client(client), m_key(std::move(key)), m_uploadId(std::move(uploadId))
    {
        setParent(client);
    }

protected:
    void doStart() override { abort(); }

private:
    // Looked at again after these waits (ms): a part being written when the abort came is in by the last.
    static constexpr int kChecks[] = {250, 1000, 3000};

    void abort()
    {
        if (!m_client)
            return finishWith(Done{});
        addSubjob(m_client->abortUpload(m_key, m_uploadId), [this](const Result<Done> &r) {
            if (!r.isOk() && r.error().code() != ErrorCode::NotFound)
                qCWarning(lcTransfer) << "giving up an upload:" << r.error().toString();
            checkLater();
        });
    }

    void checkLater()
    {
        if (m_check >= int(std::size(kChecks))) {
            qCInfo(lcTransfer) << "upload" << m_uploadId << "of" << m_key << "given up after" << m_aborts << "abort(s)";
            return finishWith(Done{});
        }
        QTimer::singleShot(kChecks[m_check++], this, [this] {
            if (!m_client)
                return finishWith(Done{});
            addSubjob(m_client->uploadedParts(m_key, m_uploadId), [this](const Result<S3PartListing> &r) {
                if (r.isOk()) {  // back, or never gone: aborted again
                    ++m_aborts;
                    return abort();
                }
                checkLater();  // NoSuchUpload (or the store cannot say): looked at again later
            });
        });
    }

    QPointer<S3Client> m_client;
    QString m_key, m_uploadId;
    int m_check = 0, m_aborts = 1;
};

class UploadJob : public CompoundJob<S3Object>
{
public:
    UploadJob(S3Client *client, QString key, S3Source source, S3UploadOptions options)
        : m_client(client), m_key(std::move(key)), m_source(std::move(source)), m_options(std::move(options))
    {
        setParent(client);
        m_what = describe("upload", m_key, client->endpoint());
    }

protected:
    void doStart() override
    {
        if (!m_source.read || m_source.size < 0)
            return finishWith(Error(ErrorCode::InvalidArgument, QStringLiteral("%1: nothing to read from").arg(m_what)));
        if (Error e = checkKey(m_key); e.isError())
            return finishWith(e);
        // Parts of 5 MiB to 5 GiB, at most 10,000 of them (S3's limits).
        m_partSize = std::clamp(std::max(m_options.partSize, (m_source.size + kMaxParts - 1) / kMaxParts), kMinPart, kMaxPart);
        if ((m_source.size + m_partSize - 1) / m_partSize > kMaxParts)
            return finishWith(Error(ErrorCode::InvalidArgument, QStringLiteral("%1: larger than S3 holds in one object (48.8 TiB)").arg(m_what)));
        m_parts = int((m_source.size + m_partSize - 1) / m_partSize);
        if (m_parts <= 1)
            return putWhole();
        if (m_options.resume)
            return findBegun();
        begin();
    }

    void doCancel() override
    {
        CompoundJob::doCancel();
        abortAtStore();
    }

private:
    /// An upload of this key begun before: the most recent the store lists is carried on (its parts listed), the
    /// others left as they are (`spectrum-cli uploads` shows them). A store that cannot say: begun afresh.
    void findBegun()
    {
        addSubjob(m_client->pendingUploads(m_key), [this](const Result<QList<QPair<QString, QString>>> &r) {
            QString begun;
            if (r.isOk()) {
                for (const auto &[key, id] : r.value())
                    if (key == m_key)
                        begun = id;  // listed oldest first
            } else {
                qCInfo(lcTransfer) << m_what << ": uploads begun before cannot be listed, beginning afresh:" << r.error().toString();
            }
            if (begun.isEmpty())
                return begin();
            listKept(begun, 0);
        });
    }

    void listKept(const QString &uploadId, int marker)
    {
        addSubjob(m_client->uploadedParts(m_key, uploadId, marker), [this, uploadId, marker](const Result<S3PartListing> &r) {
            if (!r.isOk()) {
                qCInfo(lcTransfer) << m_what << ": the parts of the upload begun before cannot be listed, beginning afresh:" << r.error().toString();
                m_kept.clear();
                return begin();
            }
            for (const S3Part &p : r.value().parts)
                m_kept.insert(p.number, p);
            if (r.value().truncated && r.value().nextMarker > marker)
                return listKept(uploadId, r.value().nextMarker);
            m_uploadId = uploadId;
            m_digests = QList<QByteArray>(m_parts);
            m_etags = QList<QByteArray>(m_parts);
            pump();
        });
    }

    void begin()
    {
        const Headers headers{qMakePair(QByteArray("content-type"), m_options.contentType), qMakePair(QByteArray("x-amz-checksum-algorithm"), QByteArray("SHA256"))};
        addSubjob(new XmlAnswerJob<QString>(m_client, "POST", m_key, {qMakePair(QStringLiteral("uploads"), QString())}, headers, {},
                                            QStringLiteral("%1: starting it").arg(m_what), &s3::parseUploadId),
                  [this](const Result<QString> &id) {
                      if (!id.isOk())
                          return finishWith(id.error());
                      m_uploadId = id.value();
                      m_digests = QList<QByteArray>(m_parts);
                      m_etags = QList<QByteArray>(m_parts);
                      pump();
                  });
    }

    void putWhole()
    {
        Result<QByteArray> bytes = m_source.read(0, m_source.size);
        if (!bytes.isOk())
            return finishWith(bytes.error().withContext(m_what));
        S3PutOptions put;
        put.contentType = m_options.contentType;
        addSubjob(m_client->put(m_key, bytes.value(), put), [this](const Result<S3Object> &r) {
            if (r.isOk())
                setProgress(m_source.size, m_source.size);
            finishWith(r);
        });
    }

    void pump()
    {
        while (m_inFlight < std::max(1, m_options.parallel) && m_next < m_parts) {
            const int part = m_next++;
            const qint64 offset = qint64(part) * m_partSize, length = std::min(m_partSize, m_source.size - offset);
            Result<QByteArray> bytes = m_source.read(offset, length);
            if (!bytes.isOk() || bytes.value().size() != length)
                return fail(bytes.isOk() ? Error(ErrorCode::Io, QStringLiteral("%1: part %2 could not be read whole").arg(m_what).arg(part + 1))
                                         : bytes.error().withContext(m_what));
            m_digests[part] = Sha256::hash(bytes.value().constData(), bytes.value().size());
            const QByteArray checksum = m_digests[part].toBase64();
            if (const auto kept = m_kept.constFind(part + 1);
                kept != m_kept.cend() && kept->size == length && s3::sameChecksum(kept->checksumSha256, checksum)) {
                // The store holds this part as ours already (checked by its SHA-256): not sent again.
                m_etags[part] = kept->etag;
                m_sent += length;
                m_keptBytes += length;
                setProgress(m_sent, m_source.size);
                if (++m_done == m_parts)
                    complete();
                continue;
            }
            const Query query{qMakePair(QStringLiteral("partNumber"), QString::number(part + 1)), qMakePair(QStringLiteral("uploadId"), m_uploadId)};
            ++m_inFlight;
            addSubjob(new PartJob(m_client, "PUT", m_key, query, {qMakePair(QByteArray("x-amz-checksum-sha256"), checksum)}, bytes.value(),
                                  QStringLiteral("%1: part %2 of %3").arg(m_what).arg(part + 1).arg(m_parts)),
                      [this, part, checksum, length](const Result<S3Object> &r) {
                          --m_inFlight;
                          if (!r.isOk())
                              return fail(r.error());
                          if (!r.value().checksumSha256.isEmpty() && !s3::sameChecksum(r.value().checksumSha256, checksum))
                              return fail(Error(ErrorCode::Corrupt, QStringLiteral("%1: the store's checksum of part %2 is not ours").arg(m_what).arg(part + 1)));
                          m_etags[part] = r.value().etag;
                          m_sent += length;
                          setProgress(m_sent, m_source.size);
                          if (++m_done == m_parts)
                              complete();
                          else
                              pump();
                      });
        }
    }

    void complete()
    {
        ++m_completeAttempts;
        QByteArray xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
        for (int i = 0; i < m_parts; ++i)
            xml += "<Part><PartNumber>" + QByteArray::number(i + 1) + "</PartNumber><ETag>" + QString::fromLatin1(m_etags[i]).toHtmlEscaped().toLatin1() + "</ETag><ChecksumSHA256>"
                + m_digests[i].toBase64() + "</ChecksumSHA256></Part>";
        xml += "</CompleteMultipartUpload>";
        addSubjob(new XmlAnswerJob<S3Object>(m_client, "POST", m_key, {qMakePair(QStringLiteral("uploadId"), m_uploadId)},
                                             {qMakePair(QByteArray("content-type"), QByteArray("application/xml"))}, xml,
                                             QStringLiteral("%1: completing it").arg(m_what), &s3::parseCompleted),
                  [this](const Result<S3Object> &r) {
                      // A completion the store could not do just then (a 200 with an error body, a broken
                      // connection): asked again, the parts kept; only a refusal gives the parts up.
                      const bool transient = !r.isOk() && (r.error().code() == ErrorCode::Busy || r.error().code() == ErrorCode::Network);
                      if (transient && m_completeAttempts < 4) {
                          QTimer::singleShot(m_client->endpoint().backoffMs << m_completeAttempts, this, [this] { complete(); });
                          return;
                      }
                      if (!r.isOk())
                          return fail(r.error());
                      S3Object o = r.value();
                      o.key = m_key;
                      o.size = m_source.size;
                      // The store's checksum of the whole is made of the parts' it checked: ours, or the object
                      // is not what we sent.
                      const QByteArray ours = s3::compositeChecksum(m_digests);
                      if (!o.checksumSha256.isEmpty() && !s3::sameChecksum(o.checksumSha256, ours))
                          return finishWith(Error(ErrorCode::Corrupt, QStringLiteral("%1: the store's checksum of the object (%2) is not ours (%3)")
                                                                          .arg(m_what, QString::fromLatin1(o.checksumSha256), QString::fromLatin1(ours))));
                      m_uploadId.clear();  // nothing to abort any more
                      o.keptBytes = m_keptBytes;
                      finishWith(o);
                  });
    }

    void fail(const Error &error)
    {
        finishWith(error);  // first: the parts stopped below report to a job that has ended
        cancelSubjobs();    // parts still going stop before the upload is aborted (a part landing after would stay)
        abortAtStore();
    }

    /// Tells the store to drop the parts sent so far, again if a part in flight brings the upload back; not waited
    /// for (the job runs on, owned by the client).
    void abortAtStore()
    {
        if (m_uploadId.isEmpty() || !m_client)
            return;
        Job *abandon = new AbandonUploadJob(m_client, m_key, m_uploadId);
        m_uploadId.clear();
        abandon->start(ExecutionPolicy::Async);
    }

    QPointer<S3Client> m_client;
    QString m_key;
    S3Source m_source;
    S3UploadOptions m_options;
    QString m_what;
    qint64 m_partSize = 0;
    int m_parts = 0;
    QString m_uploadId;
    QList<QByteArray> m_digests;  ///< raw SHA-256 of each part
    QList<QByteArray> m_etags;
    QHash<int, S3Part> m_kept;  ///< resuming: the parts the store holds, by number
    int m_next = 0, m_inFlight = 0, m_done = 0, m_completeAttempts = 0;
    qint64 m_sent = 0, m_keptBytes = 0;
};

} // namespace

ResultJob<S3Object> *S3Client::upload(const QString &key, S3Source source, const S3UploadOptions &options)
{
    if (key.isEmpty())
        return failedJob<S3Object>(Error(ErrorCode::InvalidKey, QStringLiteral("an object needs a key")));
    return new UploadJob(this, key, std::move(source), options);
}

ResultJob<QList<QPair<QString, QString>>> *S3Client::pendingUploads(const QString &prefix)
{
    Query q{qMakePair(QStringLiteral("uploads"), QString())};
    if (!prefix.isEmpty())
        q << qMakePair(QStringLiteral("prefix"), prefix);
    return new XmlAnswerJob<QList<QPair<QString, QString>>>(this, "GET", {}, q, {}, {}, describe("LIST uploads", prefix, m_endpoint), &s3::parseUploads);
}

ResultJob<S3PartListing> *S3Client::uploadedParts(const QString &key, const QString &uploadId, int marker)
{
    Query q{qMakePair(QStringLiteral("uploadId"), uploadId)};
    if (marker > 0)
        q << qMakePair(QStringLiteral("part-number-marker"), QString::number(marker));
    return new XmlAnswerJob<S3PartListing>(this, "GET", key, q, {}, {}, describe("LIST parts", key, m_endpoint), &s3::parseParts);
}

ResultJob<Done> *S3Client::abortUpload(const QString &key, const QString &uploadId)
{
    return new EmptyAnswerJob(this, "DELETE", key, {qMakePair(QStringLiteral("uploadId"), uploadId)}, {}, {}, describe("abort upload", key, m_endpoint));
}

} // namespace spectrum
