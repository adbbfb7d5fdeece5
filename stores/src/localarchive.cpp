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
        Result<QList<BlobInfo>> all = runSync(store.value()->query(BlobQuery()));
        if (!all.isOk())
            return all.error();
        QList<DicomIdentity> ids;
        for (const BlobInfo &b : all.value())
            ids << b.dicom;
        return studiesFrom(ids, query);
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
