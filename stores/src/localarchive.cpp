#include "localarchive.h"

#include "blobdarchive.h"
#include "studylisting.h"

#include "spectrum/core/compoundjob.h"
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
    if (!m_cache)
        return track(failedJob<StudySummary>(Error(ErrorCode::NotFound, QStringLiteral("no workstation cache is open"))));
    return track(chainJob<StudySummary>(loadStudies(m_cache.get(), studyUid), [studyUid](const QList<StudySummary> &studies, const CancelToken &) -> Result<StudySummary> {
        if (studies.isEmpty())
            return Error(ErrorCode::NotFound, QStringLiteral("study %1 is not in the cache").arg(studyUid));
        return studies.first();
    }));
}

ResultJob<FetchSummary> *LocalArchive::fetch(const FetchRequest &, const FetchOptions &, Kept)
{
    return track(failedJob<FetchSummary>(Error(ErrorCode::InvalidArgument, QStringLiteral("store '%1' is this workstation's own: nothing to fetch").arg(name()))));
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
