// SPDX-License-Identifier: Apache-2.0
// An S3 download over several connections bound to one ETag: ranges fetched in parallel into the sink, each
// checked (CRC32C combined, or the whole SHA-256) when the store kept a checksum, resumed from ranges kept before.

#include "s3job.h"

#include "spectrum/core/compoundjob.h"
#include "spectrum/core/logging.h"

#include "spectrum/transfer/crc32c.h"
#include "spectrum/transfer/sha256.h"

#include <QCryptographicHash>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

namespace spectrum {

using namespace s3wire;

namespace {

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

ResultJob<S3Object> *S3Client::download(const QString &key, S3Sink sink, const S3DownloadOptions &options)
{
    if (!sink)
        return failedJob<S3Object>(Error(ErrorCode::InvalidArgument, QStringLiteral("a download needs somewhere to put its bytes")));
    return new DownloadJob(this, key, std::move(sink), options);
}

} // namespace spectrum
