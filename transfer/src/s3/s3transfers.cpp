// SPDX-License-Identifier: Apache-2.0
// The S3 jobs made of many requests: a multipart upload (parts in parallel, each checked by the store, the whole
// checked by us, aborted when it fails) and a download over several connections bound to one ETag.

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

class DownloadJob : public CompoundJob<S3Object>
{
public:
    DownloadJob(S3Client *client, QString key, S3Sink sink, S3DownloadOptions options)
        : m_client(client), m_key(std::move(key)), m_sink(std::move(sink)), m_options(options)
    {
        setParent(client);
        m_options.chunk = std::max<qint64>(m_options.chunk, 64 << 10);
    }

protected:
    void doStart() override
    {
        addSubjob(m_client->head(m_key), [this](const Result<S3Object> &head) {
            if (!head.isOk())
                return finishWith(head.error());
            m_object = head.value();
            if (m_object.size == 0)
                return finishWith(m_object);
            if (m_object.etag.isEmpty())
                return finishWith(Error(ErrorCode::Protocol, QStringLiteral("%1: the store gives the object no ETag, so its parts cannot be bound to one version")
                                                                 .arg(describe("GET", m_key, m_client->endpoint()))));
            if ((m_object.size + m_options.chunk - 1) / m_options.chunk > std::numeric_limits<int>::max())
                return finishWith(Error(ErrorCode::InvalidArgument, QStringLiteral("the object is too large for ranges of %1 bytes").arg(m_options.chunk)));
            planChecks();
        });
    }

private:
    /// How the bytes will be checked: a multipart object's checksum is a composite of its parts' SHA-256s (their
    /// size from the first part's HEAD: parts of one size, the last shorter, as every uploader makes them), so its
    /// ranges never straddle a part and each part is hashed once all its ranges are in; a whole object's is its
    /// SHA-256, over the object gathered whole (up to 256 MiB: a bigger object put in one piece is not checked, and
    /// the result says so); or its CRC32C, when it was put with one: each range's, combined (Crc32c::combine). The
    /// ranges keep the size asked for either way: over a long path it is their number in flight that makes the speed.
    void planChecks()
    {
        if (m_options.verify && !m_object.checksumCrc32c.isEmpty() && !m_object.checksumCrc32c.contains('-')) {
            m_crc = true;
            m_check = Check::Ranges;  // each range summed as it lands, the sums combined: any size, nothing gathered
            return start(m_object.size);
        }
        const QByteArray kept = m_object.checksumSha256;
        const int dash = int(kept.indexOf('-'));
        if (!m_options.verify || kept.isEmpty()) {
            m_object.unchecked = m_options.verify ? tr("the store keeps no checksum of this object") : tr("not asked to");
            return start(m_object.size);
        }
        if (dash < 0) {
            if (m_object.size <= (qint64(256) << 20))
                m_check = Check::Whole;
            else
                m_object.unchecked = tr("the store's SHA-256 of an object put in one piece is checked up to 256 MiB; this one is larger");
            return start(m_object.size);
        }
        const int parts = kept.mid(dash + 1).toInt();
        addSubjob(m_client->headPart(m_key, 1), [this, parts](const Result<S3Object> &first) {
            const qint64 partSize = first.isOk() ? first.value().size : 0;
            if (parts > 0 && partSize > 0 && (m_object.size + partSize - 1) / partSize == parts
                && (first.value().etag.isEmpty() || first.value().etag == m_object.etag)) {
                m_check = Check::Parts;
                m_partDigests.resize(size_t(parts));
                return start(partSize);
            }
            qCWarning(lcTransfer) << describe("GET", m_key, m_client->endpoint()) << ": parts of uneven size; the bytes are not checked";
            m_object.unchecked = tr("its parts are of uneven size, which its composite SHA-256 cannot be checked by");
            start(m_object.size);
        });
    }

    /// Ranges of at most the chunk size asked for, none across a boundary of `unit` (a part; or the whole object).
    void start(qint64 unit)
    {
        m_unit = unit;
        for (qint64 from = 0; from < m_object.size; from += unit) {
            const qint64 end = std::min(from + unit, m_object.size);
            for (qint64 at = from; at < end; at += m_options.chunk)
                m_ranges.push_back({at, std::min(m_options.chunk, end - at)});
        }
        if (m_ranges.size() > size_t(std::numeric_limits<int>::max()))
            return finishWith(Error(ErrorCode::InvalidArgument, QStringLiteral("the object is too large for ranges of %1 bytes").arg(m_options.chunk)));
        m_chunks = int(m_ranges.size());
        if (!m_options.kept.isEmpty() && m_options.readKept && m_options.keptEtag == m_object.etag)
            m_kept = m_options.kept;
        pump();
    }

    /// Whether [offset, offset + length) is wholly inside a range an earlier download left.
    bool isKept(qint64 offset, qint64 length) const
    {
        return std::any_of(m_kept.cbegin(), m_kept.cend(), [&](const QPair<qint64, qint64> &k) { return k.first <= offset && offset + length <= k.second; });
    }

    void pump()
    {
        while (m_inFlight < std::max(1, m_options.streams) && m_next < m_chunks) {
            const auto [offset, length] = m_ranges[size_t(m_next++)];
            if (isKept(offset, length)) {
                // Left by an earlier download of this version: read back, and checked with the rest.
                if (m_check != Check::None) {
                    const QByteArray bytes = m_options.readKept(offset, length);
                    if (bytes.size() != length)
                        return failDownload(Error(ErrorCode::Io, QStringLiteral("%1: the bytes kept from before cannot be read back")
                                                                     .arg(describe("GET", m_key, m_client->endpoint()))));
                    gather(offset, bytes);
                }
                m_received += length;
                m_object.keptBytes += length;
                setProgress(m_received, m_object.size);
                ++m_done;
                finishIfDone();
                if (isFinished())
                    return;
                continue;
            }
            S3GetOptions range;
            range.offset = offset;
            range.length = length;
            range.ifMatch = m_object.etag;  // every range from the version the head saw
            ++m_inFlight;
            addSubjob(m_client->get(m_key, range), [this, range](const Result<QByteArray> &r) {
                --m_inFlight;
                if (!r.isOk())
                    return failDownload(r.error());
                if (r.value().size() != range.length)
                    return failDownload(Error(ErrorCode::Protocol, QStringLiteral("%1: %2 bytes came for %3 at %4")
                                                                     .arg(describe("GET", m_key, m_client->endpoint()))
                                                                     .arg(r.value().size())
                                                                     .arg(range.length)
                                                                     .arg(range.offset)));
                if (Error e = m_sink(range.offset, r.value()); e.isError())
                    return failDownload(e);
                if (m_check != Check::None)
                    gather(range.offset, r.value());
                m_received += range.length;
                setProgress(m_received, m_object.size);
                ++m_done;
                finishIfDone();
                pump();
            });
        }
    }

    /// Keeps a range's bytes with the others of its unit (a part, or the whole object) until the unit is complete,
    /// then hashes it on the pool, so that the parts' SHA-256s take every core and the loop goes on.
    void gather(qint64 offset, const QByteArray &bytes)
    {
        if (m_check == Check::Ranges) {
            ++m_hashing;
            addSubjob(makeJob<quint32>([bytes](const CancelToken &) -> Result<quint32> { return Crc32c::of(bytes.constData(), bytes.size()); }),
                      [this, offset, length = qint64(bytes.size())](const Result<quint32> &crc) {
                          --m_hashing;
                          if (!crc.isOk())
                              return failDownload(crc.error());
                          m_rangeCrcs[offset] = {crc.value(), length};
                          finishIfDone();
                      });
            return;
        }
        const int unit = int(offset / m_unit);
        const qint64 unitStart = qint64(unit) * m_unit, unitLength = std::min(m_unit, m_object.size - unitStart);
        Gathering &g = m_gathering[unit];
        if (unitLength == bytes.size()) {
            g.bytes = bytes;  // the range is the unit: no copy
        } else {
            if (g.bytes.isEmpty())
                g.bytes = QByteArray(unitLength, Qt::Uninitialized);
            std::memcpy(g.bytes.data() + (offset - unitStart), bytes.constData(), size_t(bytes.size()));
        }
        g.received += bytes.size();
        if (g.received < unitLength)
            return;
        const QByteArray whole = std::move(g.bytes);
        m_gathering.erase(unit);
        ++m_hashing;
        addSubjob(makeJob<QByteArray>([whole, crc = m_crc](const CancelToken &) -> Result<QByteArray> {
                      if (crc) {
                          Crc32c sum;
                          sum.add(whole.constData(), whole.size());
                          return sum.toBase64();
                      }
                      const QByteArray digest = Sha256::hash(whole.constData(), whole.size());
                      Sha256::releaseThreadState();
                      return digest;
                  }),
                  [this, unit](const Result<QByteArray> &digest) {
                      --m_hashing;
                      if (!digest.isOk())
                          return failDownload(digest.error());
                      if (m_check == Check::Parts)
                          m_partDigests[size_t(unit)] = digest.value();
                      else
                          m_wholeDigest = digest.value();
                      finishIfDone();
                  });
    }

    void finishIfDone()
    {
        if (m_done < m_chunks || m_hashing > 0 || isFinished())
            return;
        if (m_check != Check::None) {
            QByteArray ours;
            if (m_check == Check::Parts) {
                ours = s3::compositeChecksum(QList<QByteArray>(m_partDigests.begin(), m_partDigests.end()));
            } else if (m_check == Check::Ranges) {
                quint32 crc = Crc32c::of(nullptr, 0);
                qint64 at = 0;
                for (const auto &[offset, sum] : m_rangeCrcs) {
                    if (offset != at)
                        return finishWith(Error(ErrorCode::Protocol, QStringLiteral("%1: the ranges checked do not cover the object")
                                                                         .arg(describe("GET", m_key, m_client->endpoint()))));
                    crc = Crc32c::combine(crc, sum.first, sum.second);
                    at += sum.second;
                }
                ours = at == m_object.size ? Crc32c::toBase64(crc) : QByteArray();
            } else {
                ours = m_crc ? m_wholeDigest : m_wholeDigest.toBase64();
            }
            const QByteArray kept = m_crc ? m_object.checksumCrc32c : m_object.checksumSha256;
            if (!s3::sameChecksum(kept, ours))
                return finishWith(Error(ErrorCode::Corrupt, QStringLiteral("%1: the bytes that came do not match the %2 the store keeps of the object "
                                                                           "(%3, they make %4): damaged on the way, or in the store")
                                                                .arg(describe("GET", m_key, m_client->endpoint()), m_crc ? QStringLiteral("CRC32C") : QStringLiteral("SHA-256"),
                                                                     QString::fromLatin1(kept), QString::fromLatin1(ours))));
            m_object.verified = true;
        }
        finishWith(m_object);
    }

    void failDownload(const Error &error)
    {
        finishWith(error);  // first: the ranges stopped below report to a job that has ended
        cancelSubjobs();
    }

    QPointer<S3Client> m_client;
    QString m_key;
    S3Sink m_sink;
    S3DownloadOptions m_options;
    S3Object m_object;
    int m_chunks = 0, m_next = 0, m_inFlight = 0, m_done = 0, m_hashing = 0;
    qint64 m_received = 0;
    enum class Check { None, Whole, Parts, Ranges } m_check = Check::None;
    bool m_crc = false;  ///< the whole object's CRC32C is checked, not a SHA-256
    qint64 m_unit = 0;                                  ///< ranges never cross a multiple of it
    std::vector<std::pair<qint64, qint64>> m_ranges;    ///< offset, length
    struct Gathering
    {
        QByteArray bytes;
        qint64 received = 0;
    };
    std::map<int, Gathering> m_gathering;               ///< units whose ranges are partly in
    std::vector<QByteArray> m_partDigests;
    QByteArray m_wholeDigest;
    std::map<qint64, std::pair<quint32, qint64>> m_rangeCrcs;  ///< Check::Ranges: offset → (CRC32C, length)
    QList<QPair<qint64, qint64>> m_kept;                ///< resuming: ranges left by an earlier download
};

} // namespace

ResultJob<S3Object> *S3Client::upload(const QString &key, S3Source source, const S3UploadOptions &options)
{
    if (key.isEmpty())
        return failedJob<S3Object>(Error(ErrorCode::InvalidKey, QStringLiteral("an object needs a key")));
    return new UploadJob(this, key, std::move(source), options);
}

ResultJob<S3Object> *S3Client::download(const QString &key, S3Sink sink, const S3DownloadOptions &options)
{
    if (!sink)
        return failedJob<S3Object>(Error(ErrorCode::InvalidArgument, QStringLiteral("a download needs somewhere to put its bytes")));
    return new DownloadJob(this, key, std::move(sink), options);
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
