// SPDX-License-Identifier: Apache-2.0
#include "archives/local/localarchive.h"

#include "archives/blobd/blobdarchive.h"
#include "archives/fetchjob.h"
#include "archives/studylisting.h"

#include "spectrum/core/compoundjob.h"

#include <atomic>
#include <mutex>
#include "spectrum/core/threadpools.h"
#include "spectrum/stores/blobs/filestore.h"

namespace spectrum {

class LocalArchive::Folder
{
public:
    Folder(std::shared_ptr<FileStore> cache, QString path) : m_cache(std::move(cache)), m_path(std::move(path)) {}

    /// Opens the folder the first time (blocking: call it on the pool); the cache itself at once.
    Result<std::shared_ptr<FileStore>> store()
    {
        if (m_path.isEmpty()) {
            if (!m_cache)
                return Error(ErrorCode::NotFound, QStringLiteral("no workstation cache is open"));
            return m_cache;
        }
        std::lock_guard<std::mutex> lock(m_mutex);
        if (!m_store) {
            Result<std::unique_ptr<FileStore>> opened = FileStore::open(m_path, 0);
            if (!opened.isOk())
                return opened.error();
            m_store = std::shared_ptr<FileStore>(opened.takeValue());
        }
        return m_store;
    }
    const QString &path() const { return m_path; }

private:
    std::shared_ptr<FileStore> m_cache;
    const QString m_path;
    std::mutex m_mutex;
    std::shared_ptr<FileStore> m_store;
};

LocalArchive::LocalArchive(StoreConfig config, StoreConfigFile all, std::shared_ptr<FileStore> cache, QObject *parent)
    : Archive(std::move(config), std::move(all), std::move(cache), parent), m_folder(std::make_shared<Folder>(m_cache, m_config.as<LocalSettings>().path))
{
}

ResultJob<Done> *LocalArchive::test()
{
    return track(makeJob<Done>([folder = m_folder](const CancelToken &) -> Result<Done> {
        Result<std::shared_ptr<FileStore>> store = folder->store();
        if (!store.isOk())
            return store.error();
        return Done{};
    }));
}

ResultJob<QList<DicomRecord>> *LocalArchive::search(const DicomQuery &query)
{
    return track(makeJob<QList<DicomRecord>>([folder = m_folder, query](const CancelToken &) -> Result<QList<DicomRecord>> {
        Result<std::shared_ptr<FileStore>> store = folder->store();
        if (!store.isOk())
            return store.error();
        // From the index's study counts: a cache of a million instances answers without reading them.
        Result<QList<StudySummary>> studies = runSync(store.value()->studies(query));
        if (!studies.isOk())
            return studies.error();
        QList<DicomRecord> out;
        for (const StudySummary &s : studies.value()) {
            DicomRecord r;
            r.level = QueryLevel::Study;
            r.identity = s.identity;
            r.modalitiesInStudy = s.modalities;
            r.relatedSeries = int(s.series.size());
            r.relatedInstances = s.instanceCount;
            out << r;
        }
        return out;
    }));
}

ResultJob<StudySummary> *LocalArchive::list(const QString &studyUid)
{
    return track(makeJob<StudySummary>([folder = m_folder, studyUid](const CancelToken &) -> Result<StudySummary> {
        Result<std::shared_ptr<FileStore>> store = folder->store();
        if (!store.isOk())
            return store.error();
        Result<QList<StudySummary>> studies = runSync(loadStudies(store.value().get(), studyUid));
        if (!studies.isOk())
            return studies.error();
        if (studies.value().isEmpty())
            return Error(ErrorCode::NotFound, QStringLiteral("study %1 is not in %2").arg(studyUid, folder->path().isEmpty() ? QStringLiteral("the cache") : folder->path()));
        return studies.value().first();
    }));
}

namespace {

/// A study (series, instance) of a cache folder into the workstation's cache: each instance read from the folder
/// (mapped, not copied into memory) and kept like any fetched instance. The folder is opened on the pool.
class FolderFetch : public FetchJob
{
public:
    FolderFetch(std::shared_ptr<LocalArchive::Folder> folder, FetchRequest what, FetchOptions options, std::shared_ptr<FileStore> cache, Archive::Kept kept)
        : FetchJob(std::move(what), std::move(options), std::move(cache), std::move(kept)), m_folder(std::move(folder))
    {
    }

protected:
    void doStart() override
    {
        std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(this);
        // Only values and the posting address cross to the pool: the job may go while it reads.
        runOnPool<Error>(blockingPool(), this,
                         [toJob, self = this, folder = m_folder, what = m_what, cancelled = m_cancelled]() -> Error {
                             Result<std::shared_ptr<FileStore>> source = folder->store();
                             if (!source.isOk())
                                 return source.error();
                             Result<QList<StudySummary>> studies = runSync(loadStudies(source.value().get(), what.studyUid));
                             if (!studies.isOk())
                                 return studies.error();
                             int found = 0;
                             for (const StudySummary &study : studies.value()) {
                                 for (const SeriesSummary &series : study.series) {
                                     if (!what.seriesUid.isEmpty() && series.seriesInstanceUid != what.seriesUid)
                                         continue;
                                     for (const InstanceRef &i : series.instances) {
                                         if (*cancelled)
                                             return Error(ErrorCode::Cancelled, QStringLiteral("cancelled"));
                                         if (!what.sopUid.isEmpty() && i.sopInstanceUid != what.sopUid)
                                             continue;
                                         ++found;
                                         Result<ByteView> bytes = runSync(source.value()->read(i.sopInstanceUid));
                                         // `self` only inside what is posted: delivered only while the job lives.
                                         if (!bytes.isOk())
                                             toJob->post([self, e = bytes.error()] { self->transferProblem(e); });
                                         else
                                             toJob->post([self, b = bytes.value()] { self->keep(b); });
                                     }
                                 }
                             }
                             if (found == 0)
                                 return Error(ErrorCode::NotFound, QStringLiteral("study %1 is not in %2").arg(what.studyUid, folder->path()));
                             return Error();
                         },
                         // Posted after every keep above: they are pending by the time this runs.
                         [this](Error &&e) { transferEnded(e); });
    }

    void doCancel() override
    {
        *m_cancelled = true;
        FetchJob::doCancel();
    }

private:
    std::shared_ptr<LocalArchive::Folder> m_folder;
    std::shared_ptr<std::atomic<bool>> m_cancelled = std::make_shared<std::atomic<bool>>(false);
};

} // namespace

ResultJob<FetchSummary> *LocalArchive::fetch(const FetchRequest &what, const FetchOptions &options, Kept kept)
{
    if (m_config.as<LocalSettings>().path.isEmpty())
        return track(failedJob<FetchSummary>(Error(ErrorCode::InvalidArgument, QStringLiteral("store '%1' is this workstation's own: nothing to fetch").arg(name()))));
    return track(new FolderFetch(m_folder, what, options, m_cache, std::move(kept)));
}

ResultJob<ExportSummary> *LocalArchive::send(const QStringList &files)
{
    return track(makeJob<ExportSummary>([folder = m_folder, files](const CancelToken &) -> Result<ExportSummary> {
        Result<std::shared_ptr<FileStore>> store = folder->store();
        if (!store.isOk())
            return store.error();
        FileStore *target = store.value().get();
        return sendFiles(files, [target](const QString &sop, const ByteView &bytes) -> Error {
            Result<BlobWriterPtr> w = runSync(target->reserve(sop, bytes.size()));
            Error err = w.isOk() ? w.value()->writeAt(0, bytes.data(), bytes.size()) : w.error();
            if (!err.isError())
                err = runSync(target->commit(w.value())).error();
            return err;
        });
    }));
}

} // namespace spectrum
