// SPDX-License-Identifier: Apache-2.0
#include "archives/fetchjob.h"

#include "spectrum/core/logging.h"
#include "spectrum/core/uid.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/stores/blobs/filestore.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QScopeGuard>

#include <cstdio>

namespace spectrum {

namespace {

/// The identity of a fetched instance, refused unless it is a well-formed instance of `studyUid`.
Result<DicomIdentity> identityInStudy(const ByteView &bytes, const QString &studyUid)
{
    Result<DicomIdentity> id = readDicomIdentity(bytes);
    if (!id.isOk())
        return id.error();
    if (!id.value().isValid())
        return Error(ErrorCode::InvalidDicom, QStringLiteral("an instance without SOP or Study Instance UID"));
    if (id.value().studyInstanceUid != studyUid)
        return Error(ErrorCode::Corrupt, QStringLiteral("instance %1 belongs to study %2, not %3").arg(id.value().sopInstanceUid, id.value().studyInstanceUid, studyUid));
    if (!isValidUid(id.value().sopInstanceUid))
        return Error(ErrorCode::InvalidDicom, QStringLiteral("'%1' is not a SOP Instance UID").arg(id.value().sopInstanceUid.left(80)));
    return id;
}

/// The same, and of `patientId` when it is known.
Result<DicomIdentity> identityInPatientsStudy(const ByteView &bytes, const QString &studyUid, const QString &patientId)
{
    Result<DicomIdentity> id = identityInStudy(bytes, studyUid);
    if (id.isOk() && !patientId.isEmpty() && id.value().patientId != patientId)
        return Error(ErrorCode::Corrupt, QStringLiteral("instance %1 has patient ID '%2', but the study's is '%3': not kept")
                                             .arg(id.value().sopInstanceUid, id.value().patientId, patientId));
    return id;
}

} // namespace

/// Stores one instance (a whole DICOM file in memory) in the cache or as OUT/SOP.dcm; checks it belongs to
/// `studyUid` (and to `patientId`, once known). Runs on any thread.
Result<KeptInstance> keepInstance(const ByteView &bytes, const FetchRequest &what, const FetchOptions &options, FileStore *cache)
{
    const QString &outDir = options.outDir;
    Result<DicomIdentity> id = identityInPatientsStudy(bytes, what.studyUid, options.patientId);
    if (!id.isOk())
        return id.error();
    if (options.held && options.held->contains(id.value().sopInstanceUid))
        return KeptInstance{id.value(), ByteView(), true};
    if (!outDir.isEmpty()) {
        QSaveFile f(QDir(outDir).filePath(id.value().sopInstanceUid + QStringLiteral(".dcm")));
        if (!f.open(QIODevice::WriteOnly) || f.write(bytes.data(), bytes.size()) != bytes.size() || !f.commit())
            return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(f.fileName(), f.errorString()));
        return KeptInstance{id.value(), ByteView(), false};
    }
    CommitOptions commit;
    commit.knownIdentity = id.value();  // parsed from these bytes just above
    commit.durable = false;             // the archive still has it: no need to wait for the disk
    commit.deferSha256 = true;          // hashed if ever asked for (served to a peer); checksummed now
    if (Error e = runSync(cache->put(id.value().sopInstanceUid, bytes, commit)).error(); e.isError())
        return e;
    return KeptInstance{id.value(), bytes, false};
}

namespace {
/// The same for an instance that arrived as a file: looked at through a read-only mapping, then renamed into the
/// folder or copied into the cache inside the kernel. The file is gone afterwards either way.
Result<KeptInstance> keepInstanceFile(const QString &path, const FetchRequest &what, const FetchOptions &options, FileStore *cache)
{
    const QString &outDir = options.outDir;
    auto file = std::make_shared<QFile>(path);
    auto cleanup = qScopeGuard([&] { file->close(); QFile::remove(path); });
    if (!file->open(QIODevice::ReadOnly))
        return Error(ErrorCode::Io, QStringLiteral("cannot read %1: %2").arg(path, file->errorString()));
    const qint64 size = file->size();
    const uchar *map = size > 0 ? file->map(0, size) : nullptr;
    if (!map)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("%1 is empty or cannot be mapped").arg(path));
    Result<DicomIdentity> id = identityInPatientsStudy(ByteView(reinterpret_cast<const char *>(map), size, file), what.studyUid, options.patientId);
    if (!id.isOk())
        return id.error();
    if (options.held && options.held->contains(id.value().sopInstanceUid))
        return KeptInstance{id.value(), ByteView(), true};
    if (!outDir.isEmpty()) {
        const QString target = QDir(outDir).filePath(id.value().sopInstanceUid + QStringLiteral(".dcm"));
        QFile::remove(target);
        if (::rename(QFile::encodeName(path).constData(), QFile::encodeName(target).constData()) != 0)
            return Error(ErrorCode::Io, QStringLiteral("cannot move %1 to %2").arg(path, target));
        return KeptInstance{id.value(), ByteView(), false};
    }
    CommitOptions commit;
    commit.knownIdentity = id.value();
    commit.durable = false;  // fetched from an archive that keeps it
    commit.deferSha256 = true;
    if (Error e = runSync(cache->importFile(id.value().sopInstanceUid, path, commit)).error(); e.isError())
        return e;
    return KeptInstance{id.value(), ByteView(), false};
}

} // namespace

FetchJob::FetchJob(FetchRequest what, FetchOptions options, std::shared_ptr<FileStore> cache, Archive::Kept kept)
    : m_what(std::move(what)), m_options(std::move(options)), m_cache(std::move(cache)), m_onKept(std::move(kept))
{
    m_clock.start();
}

void FetchJob::keep(const ByteView &bytes)
{
    ++m_pendingWrites;
    if (m_firstCompleteSeconds < 0)
        m_firstCompleteSeconds = m_clock.nsecsElapsed() / 1e9;  // whole, in memory: the viewer could show it
    runOnPool<Result<KeptInstance>>(keepingPool(), this,
                                    [bytes, what = m_what, options = m_options, cache = m_cache] {
                                        return keepInstance(bytes, what, options, cache.get());
                                    },
                                    [this, size = bytes.size()](Result<KeptInstance> &&k) { kept(std::move(k), size); });
}

std::function<Error(const ByteView &)> FetchJob::keeperOnReader()
{
    std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(this);
    QElapsedTimer clock = m_clock;
    return [toJob, clock, what = m_what, options = m_options, cache = m_cache, this](const ByteView &bytes) {
        const double completedAt = clock.nsecsElapsed() / 1e9;
        auto k = std::make_shared<Result<KeptInstance>>(keepInstance(bytes, what, options, cache.get()));
        // Posted: delivered only while the job lives (then `this` is alive).
        toJob->post([this, completedAt, k, size = bytes.size()] {
            ++m_pendingWrites;  // for kept() to count down
            if (m_firstCompleteSeconds < 0)
                m_firstCompleteSeconds = completedAt;
            kept(std::move(*k), size);
        });
        return Error();
    };
}

void FetchJob::keepFile(const QString &path)
{
    ++m_pendingWrites;
    if (m_firstCompleteSeconds < 0)
        m_firstCompleteSeconds = m_clock.nsecsElapsed() / 1e9;
    runOnPool<Result<KeptInstance>>(keepingPool(), this,
                                    [path, what = m_what, options = m_options, cache = m_cache] {
                                        return keepInstanceFile(path, what, options, cache.get());
                                    },
                                    [this, size = QFileInfo(path).size()](Result<KeptInstance> &&k) { kept(std::move(k), size); });
}

void FetchJob::kept(Result<KeptInstance> &&k, qint64 size)
{
    --m_pendingWrites;
    if (k.isOk() && k.value().already) {
        // Here before it came (another request brought it): dropped unread, counted once.
        const QString sop = k.value().id.sopInstanceUid;
        if (!m_counted.contains(sop)) {
            m_counted.insert(sop);
            ++m_summary.instances;
            m_summary.sopInstanceUids << sop;
            m_summary.identities << k.value().id;
            setProgress(m_summary.instances, m_expected);
        }
    } else if (k.isOk() && !m_patientId.isNull() && k.value().id.patientId != m_patientId) {
        ++m_summary.rejected;  // another patient inside this study: never mixed in
        qCWarning(lcStores) << "fetch: instance" << k.value().id.sopInstanceUid << "has patient ID" << k.value().id.patientId
                            << "but the study's is" << m_patientId << "- dropped";
        if (m_options.outDir.isEmpty() && m_cache)  // it was written before its patient could be compared: it goes
            m_cache->remove(k.value().id.sopInstanceUid)->start(ExecutionPolicy::Async);
        else if (!m_options.outDir.isEmpty())
            QFile::remove(QDir(m_options.outDir).filePath(k.value().id.sopInstanceUid + QStringLiteral(".dcm")));
    } else if (k.isOk() && m_counted.contains(k.value().id.sopInstanceUid)) {
        // Brought again (the stream that gave way to series requests had it): stored, not counted.
    } else if (k.isOk()) {
        const DicomIdentity &id = k.value().id;
        m_counted.insert(id.sopInstanceUid);
        if (m_patientId.isNull())
            m_patientId = id.patientId;
        ++m_summary.instances;
        m_summary.bytes += size;
        m_summary.sopInstanceUids << id.sopInstanceUid;
        m_summary.identities << id;
        if (m_summary.firstInstanceSeconds < 0)
            m_summary.firstInstanceSeconds = m_firstCompleteSeconds;
        setProgress(m_summary.instances, m_expected);
        if (m_onKept)
            m_onKept(id, k.value().bytes, size);
    } else {
        if (k.error().code() == ErrorCode::Corrupt)
            ++m_summary.rejected;
        if (!m_error.isError())
            m_error = k.error();
        m_summary.problems << k.error().toString();
        qCWarning(lcStores) << "fetch:" << k.error().toString();
    }
    finishIfDone();
}

void FetchJob::transferEnded(const Error &e)
{
    if (e.isError())
        transferProblem(e);
    m_transferDone = true;
    finishIfDone();
}

void FetchJob::transferProblem(const Error &e)
{
    if (!m_error.isError())
        m_error = e;
    m_summary.problems << e.toString();
}

void FetchJob::finishIfDone()
{
    if (!m_transferDone || m_pendingWrites > 0 || isFinished())
        return;
    m_summary.seconds = m_clock.nsecsElapsed() / 1e9;
    if (m_error.isError() && m_summary.instances == 0)
        return finishWith(m_error);
    if (m_summary.instances == 0)
        return finishWith(Error(ErrorCode::NotFound, QStringLiteral("study %1 has no instance there").arg(m_what.studyUid)));
    finishWith(m_summary);
}

} // namespace spectrum
