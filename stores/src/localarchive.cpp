#include "localarchive.h"

#include "blobdarchive.h"
#include "fetchjob.h"
#include "studylisting.h"

#include "spectrum/core/compoundjob.h"
#include "spectrum/core/threadpools.h"
#include "spectrum/stores/filestore.h"

namespace spectrum {

Result<std::shared_ptr<FileStore>> LocalArchive::open(const std::shared_ptr<FileStore> &cache, const QString &path)
{
    if (path.isEmpty()) {
        if (!cache)
            return Error(ErrorCode::NotFound, QStringLiteral("no workstation cache is open"));
        return cache;
    }
    Result<std::unique_ptr<FileStore>> opened = FileStore::open(path, 0);
    if (!opened.isOk())
        return opened.error();
    return std::shared_ptr<FileStore>(opened.takeValue());
}

ResultJob<Done> *LocalArchive::test()
{
    return track(makeJob<Done>([cache = m_cache, path = m_config.path](const CancelToken &) -> Result<Done> {
        Result<std::shared_ptr<FileStore>> store = open(cache, path);
        if (!store.isOk())
            return store.error();
        return Done{};
    }));
}

ResultJob<QList<DicomRecord>> *LocalArchive::search(const DicomQuery &query)
{
    return track(makeJob<QList<DicomRecord>>([cache = m_cache, path = m_config.path, query](const CancelToken &) -> Result<QList<DicomRecord>> {
        Result<std::shared_ptr<FileStore>> store = open(cache, path);
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
    return track(makeJob<StudySummary>([cache = m_cache, path = m_config.path, studyUid](const CancelToken &) -> Result<StudySummary> {
        Result<std::shared_ptr<FileStore>> store = open(cache, path);
        if (!store.isOk())
            return store.error();
        Result<QList<StudySummary>> studies = runSync(loadStudies(store.value().get(), studyUid));
        if (!studies.isOk())
            return studies.error();
        if (studies.value().isEmpty())
            return Error(ErrorCode::NotFound, QStringLiteral("study %1 is not in %2").arg(studyUid, path.isEmpty() ? QStringLiteral("the cache") : path));
        return studies.value().first();
    }));
}

namespace {

/// A study (series, instance) of a cache folder into the workstation's cache: each instance read from the folder
/// (mapped, not copied into memory) and kept like any fetched instance.
class FolderFetch : public FetchJob
{
public:
    FolderFetch(QString folder, std::shared_ptr<FileStore> source, FetchRequest what, FetchOptions options, std::shared_ptr<FileStore> cache, Archive::Kept kept)
        : FetchJob(std::move(what), std::move(options), std::move(cache), std::move(kept)), m_folder(std::move(folder)), m_source(std::move(source))
    {
    }

protected:
    void doStart() override
    {
        std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(this);
        runOnPool<Error>(blockingPool(), this,
                         [toJob, this, source = m_source, what = m_what]() -> Error {
                             Result<QList<StudySummary>> studies = runSync(loadStudies(source.get(), what.studyUid));
                             if (!studies.isOk())
                                 return studies.error();
                             int found = 0;
                             for (const StudySummary &study : studies.value()) {
                                 for (const SeriesSummary &series : study.series) {
                                     if (!what.seriesUid.isEmpty() && series.seriesInstanceUid != what.seriesUid)
                                         continue;
                                     for (const InstanceRef &i : series.instances) {
                                         if (!what.sopUid.isEmpty() && i.sopInstanceUid != what.sopUid)
                                             continue;
                                         ++found;
                                         Result<ByteView> bytes = runSync(source->read(i.sopInstanceUid));
                                         if (!bytes.isOk()) {
                                             toJob->post([this, e = bytes.error()] { transferProblem(e); });
                                             continue;
                                         }
                                         toJob->post([this, b = bytes.value()] { keep(b); });
                                     }
                                 }
                             }
                             if (found == 0)
                                 return Error(ErrorCode::NotFound, QStringLiteral("study %1 is not in %2").arg(what.studyUid, m_folder));
                             return Error();
                         },
                         // Posted after every keep above: they are pending by the time this runs.
                         [this](Error &&e) { transferEnded(e); });
    }

private:
    QString m_folder;
    std::shared_ptr<FileStore> m_source;
};

} // namespace

ResultJob<FetchSummary> *LocalArchive::fetch(const FetchRequest &what, const FetchOptions &options, Kept kept)
{
    if (m_config.path.isEmpty())
        return track(failedJob<FetchSummary>(Error(ErrorCode::InvalidArgument, QStringLiteral("store '%1' is this workstation's own: nothing to fetch").arg(name()))));
    // Opened here: a folder's index is read once per fetch (a study opened takes a few).
    Result<std::shared_ptr<FileStore>> source = open(m_cache, m_config.path);
    if (!source.isOk())
        return track(failedJob<FetchSummary>(source.error().withContext(QStringLiteral("store '%1'").arg(name()))));
    return track(new FolderFetch(m_config.path, source.takeValue(), what, options, m_cache, std::move(kept)));
}

ResultJob<ExportSummary> *LocalArchive::send(const QStringList &files)
{
    return track(makeJob<ExportSummary>([cache = m_cache, path = m_config.path, files](const CancelToken &) -> Result<ExportSummary> {
        Result<std::shared_ptr<FileStore>> store = open(cache, path);
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
