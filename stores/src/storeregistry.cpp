#include "spectrum/stores/storeregistry.h"

#include "spectrum/core/compoundjob.h"
#include "spectrum/core/logging.h"
#include "spectrum/core/uid.h"
#include "spectrum/imaging/derivedinstance.h"
#include "spectrum/imaging/dicomdecoder.h"
#include "spectrum/stores/filestore.h"

#include <QDir>
#include <QFile>
#include <QPointer>
#include <QSaveFile>
#include <QTemporaryDir>

namespace spectrum {

namespace {

/// Merges per-store answers: one hit per study, unless the stores disagree on the patient.
QList<StudyHit> merge(const QList<QPair<QString, QList<DicomRecord>>> &answers)
{
    QList<StudyHit> hits;
    for (const auto &[store, records] : answers) {
        for (const DicomRecord &r : records) {
            bool placed = false;
            QList<int> disagreeing;
            for (int i = 0; i < hits.size(); ++i) {
                StudyHit &h = hits[i];
                if (h.study.identity.studyInstanceUid != r.identity.studyInstanceUid)
                    continue;
                if (h.study.identity.patientId == r.identity.patientId) {
                    if (!h.stores.contains(store))
                        h.stores << store;
                    placed = true;
                } else {
                    disagreeing << i;
                }
            }
            if (!disagreeing.isEmpty()) {
                for (int i : disagreeing) {
                    StudyHit &h = hits[i];
                    h.conflicts << QStringLiteral("study %1: %2 says patient ID '%3', %4 says '%5'")
                                       .arg(r.identity.studyInstanceUid, h.stores.join(QLatin1Char('/')), h.study.identity.patientId, store, r.identity.patientId);
                }
            }
            if (!placed) {
                StudyHit h;
                h.study = r;
                h.stores << store;
                for (int i : disagreeing)
                    h.conflicts << hits[i].conflicts.last();
                hits << h;
            }
        }
    }
    return hits;
}

/// Every store asked at once; one hit per study of the answers merged; storeAnswered() as each answers.
class FindStudies : public CompoundJob<QList<StudyHit>>
{
public:
    FindStudies(StoreRegistry *registry, QList<Archive *> targets, DicomQuery query)
        : m_registry(registry), m_targets(std::move(targets)), m_query(std::move(query)) {}

protected:
    void doStart() override
    {
        if (m_targets.isEmpty())
            return finishWith(Error(ErrorCode::NotFound, QStringLiteral("no store is configured (spectrum-cli stores add …)")));
        m_pending = int(m_targets.size());
        for (Archive *a : std::as_const(m_targets))
            addSubjob(a->search(m_query), [this, name = a->name()](const Result<QList<DicomRecord>> &r) { answered(name, r); });
    }

private:
    void answered(const QString &name, const Result<QList<DicomRecord>> &r)
    {
        if (r.isOk())
            m_answers.append({name, r.value()});
        else
            m_failures << QStringLiteral("%1: %2").arg(name, r.error().toString());
        if (m_registry)
            Q_EMIT m_registry->storeAnswered(name, r.isOk() ? int(r.value().size()) : 0, r.isOk() ? Error() : r.error());
        setProgress(m_targets.size() - --m_pending, m_targets.size());
        if (m_pending > 0)
            return;
        if (m_answers.isEmpty())
            return finishWith(Error(ErrorCode::Network, QStringLiteral("no store answered: %1").arg(m_failures.join(QStringLiteral("; ")))));
        QList<StudyHit> hits = merge(m_answers);
        if (m_query.limit > 0 && hits.size() > m_query.limit)
            hits = hits.mid(0, m_query.limit);
        finishWith(hits);
    }

    QPointer<StoreRegistry> m_registry;
    QList<Archive *> m_targets;
    DicomQuery m_query;
    int m_pending = 0;
    QList<QPair<QString, QList<DicomRecord>>> m_answers;
    QStringList m_failures;
};

} // namespace

Error keepReceivedInstance(FileStore &cache, const QString &path, const QString &announcedSopInstanceUid)
{
    QFile f(path);
    const uchar *map = f.open(QIODevice::ReadOnly) && f.size() > 0 ? f.map(0, f.size()) : nullptr;
    const Result<DicomIdentity> id = map ? readDicomIdentity(ByteView(reinterpret_cast<const char *>(map), f.size(), nullptr))
                                         : Result<DicomIdentity>(Error(ErrorCode::Io, QStringLiteral("cannot read %1: %2").arg(path, f.errorString())));
    const bool agrees = id.isOk() && id.value().isValid() && id.value().sopInstanceUid == announcedSopInstanceUid;
    f.close();
    if (!agrees) {
        QFile::remove(path);
        return Error(ErrorCode::InvalidDicom, QStringLiteral("a pushed instance (%1) does not carry the SOP Instance UID it was sent as").arg(announcedSopInstanceUid));
    }
    CommitOptions options;
    options.knownIdentity = id.value();
    const Error e = runSync(cache.importFile(announcedSopInstanceUid, path, options)).error();
    if (e.isError())
        QFile::remove(path);
    return e;
}

// ---- registry ----

StoreRegistry::StoreRegistry(StoreConfigFile config, std::shared_ptr<FileStore> cache, QObject *parent)
    : QObject(parent), m_config(std::move(config)), m_cache(std::move(cache))
{
    qRegisterMetaType<spectrum::Error>();
    rebuild();
}

StoreRegistry::~StoreRegistry() = default;

void StoreRegistry::setConfig(const StoreConfigFile &config)
{
    m_config = config;
    rebuild();
}

void StoreRegistry::rebuild()
{
    // Jobs already started keep the archive they began with: a retired archive goes once they are done.
    for (Archive *a : std::as_const(m_archives))
        a->retire();
    m_archives.clear();
    for (const StoreConfig &s : m_config.stores()) {
        std::unique_ptr<Archive> a = makeArchive(s, m_config, m_cache);
        if (!a)
            continue;
        a->setParent(this);
        m_archives.insert(s.name, a.release());
    }
}

Archive *StoreRegistry::archive(const QString &name, Error *error) const
{
    Archive *a = m_archives.value(name);
    if (!a)
        *error = Error(ErrorCode::NotFound, QStringLiteral("no store named '%1' in %2").arg(name, m_config.path()));
    return a;
}

QStringList StoreRegistry::nearestFirst(const QStringList &stores) const
{
    QStringList cluster, central;
    for (const StoreConfig &s : m_config.stores()) {
        if (!stores.contains(s.name))
            continue;
        if (s.kind == StoreKind::Blobd)
            cluster << s.name;
        else if (s.kind == StoreKind::DicomWeb || s.kind == StoreKind::Dimse)
            central << s.name;
    }
    return cluster + central;
}

ResultJob<Done> *StoreRegistry::test(const QString &name)
{
    Error e;
    Archive *a = archive(name, &e);
    return a ? a->test() : failedJob<Done>(e);
}

ResultJob<QList<StudyHit>> *StoreRegistry::findStudies(const DicomQuery &query, const QStringList &names)
{
    QList<Archive *> targets;
    Error missing;
    for (const StoreConfig &s : m_config.stores()) {
        if (names.isEmpty())
            targets << m_archives.value(s.name);
    }
    for (const QString &n : names) {
        if (Archive *a = archive(n, &missing))
            targets << a;
    }
    targets.removeAll(nullptr);
    if (missing.isError() || query.validate().isError() || query.level != QueryLevel::Study) {
        const Error e = missing.isError() ? missing : query.validate().isError() ? query.validate()
                                                      : Error(ErrorCode::InvalidArgument, QStringLiteral("the registry searches for studies"));
        return failedJob<QList<StudyHit>>(e);
    }
    return new FindStudies(this, targets, query);
}

ResultJob<StudySummary> *StoreRegistry::firstLook(const QString &name, const QString &studyUid)
{
    Error e;
    Archive *a = archive(name, &e);
    if (a && !isValidUid(studyUid))
        e = Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not a DICOM UID").arg(studyUid.left(80)));
    return e.isError() ? failedJob<StudySummary>(e) : a->firstLook(studyUid);
}

ResultJob<StudySummary> *StoreRegistry::listStudy(const QString &name, const QString &studyUid)
{
    Error e;
    Archive *a = archive(name, &e);
    if (a && !isValidUid(studyUid))
        e = Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not a DICOM UID").arg(studyUid.left(80)));
    return e.isError() ? failedJob<StudySummary>(e) : a->list(studyUid);
}

ResultJob<FetchSummary> *StoreRegistry::fetchStudy(const QString &name, const QString &studyUid, const FetchOptions &options)
{
    return fetch(name, studyUid, QString(), QString(), options);
}

ResultJob<FetchSummary> *StoreRegistry::fetchSeries(const QString &name, const QString &studyUid, const QString &seriesUid)
{
    return fetch(name, studyUid, seriesUid, QString(), FetchOptions());
}

ResultJob<FetchSummary> *StoreRegistry::fetchInstance(const QString &name, const QString &studyUid, const QString &seriesUid, const QString &sopUid,
                                                     const FetchOptions &options)
{
    return fetch(name, studyUid, seriesUid, sopUid, options);
}

ResultJob<FetchSummary> *StoreRegistry::fetch(const QString &name, const QString &studyUid, const QString &seriesUid, const QString &sopUid, const FetchOptions &options)
{
    Error e;
    Archive *a = archive(name, &e);
    for (const QString &uid : {studyUid, seriesUid, sopUid}) {
        if (!e.isError() && (uid == studyUid || !uid.isEmpty()) && !isValidUid(uid))
            e = Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not a DICOM UID").arg(uid.left(80)));
    }
    if (!e.isError() && !sopUid.isEmpty() && seriesUid.isEmpty())
        e = Error(ErrorCode::InvalidArgument, QStringLiteral("an instance is fetched with its series"));
    if (!e.isError() && options.outDir.isEmpty() && !m_cache)
        e = Error(ErrorCode::NotFound, QStringLiteral("no workstation cache is open, and no --out folder given"));
    if (!e.isError() && !options.outDir.isEmpty() && !QDir().mkpath(options.outDir))
        e = Error(ErrorCode::Io, QStringLiteral("cannot create %1").arg(options.outDir));
    if (e.isError())
        return failedJob<FetchSummary>(e);
    QPointer<StoreRegistry> self(this);
    return a->fetch(FetchRequest{studyUid, seriesUid, sopUid}, options, [self](const DicomIdentity &id, const ByteView &bytes, qint64 size) {
        if (!self)
            return;
        if (!bytes.isEmpty())
            Q_EMIT self->instanceBytes(id.sopInstanceUid, bytes);
        Q_EMIT self->instanceFetched(id.sopInstanceUid, size);
    });
}

ResultJob<ExportSummary> *StoreRegistry::exportDerivedSeries(const QString &name, const QStringList &keys, const FilterChain &chain,
                                                             const Derivation &naming)
{
    Error e;
    archive(name, &e);
    if (!e.isError() && !m_cache)
        e = Error(ErrorCode::NotFound, QStringLiteral("no workstation cache is open"));
    if (!e.isError() && keys.isEmpty())
        e = Error(ErrorCode::InvalidArgument, QStringLiteral("nothing to send"));
    if (e.isError())
        return failedJob<ExportSummary>(e);
    std::shared_ptr<FileStore> cache = m_cache;
    QPointer<StoreRegistry> self(this);
    return new CallbackJob<ExportSummary>([self, name, keys, chain, cache, naming](CallbackJob<ExportSummary> *job) {
        // The derived instances are made on the pool, into a private folder, then sent like any files.
        auto folder = std::make_shared<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/spectrum-send-XXXXXX"));
        if (!folder->isValid())
            return job->complete(Error(ErrorCode::Io, QStringLiteral("cannot make a folder for the derived instances")));
        std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(job);  // progress from the pool, while the job lives
        const CancelToken sending = job->cancelToken();  // a cancelled send stops making its instances too
        auto *make = makeJob<QStringList>([keys, chain, cache, folder, toJob, job, sending, naming](const CancelToken &cancel) -> Result<QStringList> {
            Derivation derivation = naming;
            derivation.description = chain.isEmpty() ? QStringLiteral("unprocessed copy") : chain.description();
            derivation.seriesInstanceUid = makeUid();  // one derived series for all of them
            QStringList files;
            for (int i = 0; i < keys.size(); ++i) {
                if (cancel.isCancelled() || sending.isCancelled())
                    return Error(ErrorCode::Cancelled, QStringLiteral("cancelled"));
                Result<ByteView> bytes = runSync(cache->read(keys[i]));
                if (!bytes.isOk())
                    return bytes.error().withContext(keys[i]);
                Result<DecodedImage> image = decodeDicom(bytes.value());
                if (!image.isOk())
                    return image.error().withContext(keys[i]);
                Result<PixelBuffer> pixels = chain.isEmpty() ? Result<PixelBuffer>(image.value().pixels)
                                                             : applyFilters(chain, image.value().pixels, image.value().info, nullptr);
                if (!pixels.isOk())
                    return pixels.error().withContext(keys[i]);
                Result<DerivedInstance> derived = makeDerivedInstance(bytes.value(), pixels.value(), derivation);
                if (!derived.isOk())
                    return derived.error().withContext(keys[i]);
                const QString path = QDir(folder->path()).filePath(derived.value().identity.sopInstanceUid + QStringLiteral(".dcm"));
                QSaveFile f(path);
                if (!f.open(QIODevice::WriteOnly) || f.write(derived.value().bytes) != derived.value().bytes.size() || !f.commit())
                    return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
                files << path;
                toJob->post([job, i, n = keys.size()] { job->progressTo(i + 1, n); });
            }
            return files;
        });
        whenDone(make, job, [self, job, name, folder, cache](const Result<QStringList> &files) {
            if (job->isFinished())
                return;  // cancelled meanwhile: nothing is sent
            if (!files.isOk())
                return job->complete(files.error());
            if (!self)
                return job->complete(Error(ErrorCode::Cancelled, QStringLiteral("the workstation is closing")));
            whenDone(self->exportFiles(name, files.value()), job, [job, folder, cache](const Result<ExportSummary> &sent) {
                if (!sent.isOk() || sent.value().stored.isEmpty())
                    return job->complete(sent);
                // What the archive stored is kept here too: the derived series shows in the open study at once.
                const QStringList stored = sent.value().stored;
                auto *keep = makeJob<Done>([stored, folder, cache](const CancelToken &) -> Result<Done> {
                    for (const QString &sop : stored) {
                        QFile f(QDir(folder->path()).filePath(sop + QStringLiteral(".dcm")));
                        if (!f.open(QIODevice::ReadOnly))
                            continue;  // stored under another name: the archive has it, the cache will when fetched
                        if (Error e = runSync(cache->put(sop, ByteView(f.readAll()))).error(); e.isError())
                            return e.withContext(sop);
                    }
                    return Done();
                });
                whenDone(keep, job, [job, sent](const Result<Done> &) { job->complete(sent); });  // a full cache does not undo the send
            });
        });
    });
}

ResultJob<ExportSummary> *StoreRegistry::exportFiles(const QString &name, const QStringList &files)
{
    Error e;
    Archive *a = archive(name, &e);
    return a ? a->send(files) : failedJob<ExportSummary>(e);
}

} // namespace spectrum
