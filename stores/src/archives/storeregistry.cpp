// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/archives/storeregistry.h"

#include "archives/dimse/dimsearchive.h"
#include "audit/auditedarchive.h"

#include "spectrum/core/audit/audit.h"
#include "spectrum/core/compoundjob.h"
#include "spectrum/core/logging.h"
#include "spectrum/core/uid.h"
#include "spectrum/imaging/documents/derivedinstance.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/stores/audit/auditsubjects.h"
#include "spectrum/stores/blobs/filestore.h"

#include <QDir>
#include <QFile>
#include <QPointer>
#include <QSaveFile>
#include <QTemporaryDir>

namespace spectrum {

namespace {

/// Merges per-store answers: one hit per study, unless the stores disagree on the patient; its counts the most any
/// store reported, its modalities those of all.
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
                    // The study as the store holding most of it says: a peer that cached part of it counts less.
                    h.study.relatedInstances = std::max(h.study.relatedInstances, r.relatedInstances);
                    h.study.relatedSeries = std::max(h.study.relatedSeries, r.relatedSeries);
                    for (const QString &m : r.modalitiesInStudy)
                        if (!h.study.modalitiesInStudy.contains(m))
                            h.study.modalitiesInStudy << m;
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
        if (r.isOk()) {
            m_answers.append({name, r.value()});
        } else {
            m_failures << QStringLiteral("%1: %2").arg(name, r.error().toString());
            m_failureCodes << r.error().code();
        }
        if (m_registry)
            Q_EMIT m_registry->storeAnswered(name, r.isOk() ? int(r.value().size()) : 0, r.isOk() ? Error() : r.error());
        setProgress(m_targets.size() - --m_pending, m_targets.size());
        if (m_pending > 0)
            return;
        if (m_answers.isEmpty()) {
            // One store asked: its own error, as it said it (the caller knows which store it asked). Several: each
            // store's, under the code they share (a 401 stays an authentication failure), else a network error.
            if (m_targets.size() == 1)
                return finishWith(r.error());
            const bool same = std::all_of(m_failureCodes.begin(), m_failureCodes.end(), [&](ErrorCode c) { return c == m_failureCodes.first(); });
            return finishWith(Error(same ? m_failureCodes.first() : ErrorCode::Network,
                                    QStringLiteral("none of the %1 stores answered — %2").arg(m_targets.size()).arg(m_failures.join(QStringLiteral("; ")))));
        }
        QList<StudyHit> hits = merge(m_answers);
        if (m_query.limit > 0 && hits.size() > m_query.limit)
            hits = hits.mid(0, m_query.limit);
        finishWith(hits);
    }

    QPointer<StoreRegistry> m_registry;
    QList<Archive *> m_targets;
    DicomQuery m_query;
    QList<ErrorCode> m_failureCodes;
    int m_pending = 0;
    QList<QPair<QString, QList<DicomRecord>>> m_answers;
    QStringList m_failures;
};

/// "Send to archive": the cached instances through a filter chain as one new derived series, made on the pool
/// into a private folder, sent to the archive, and what it stored kept in the cache too.
class SendDerivedSeries : public CompoundJob<ExportSummary>
{
public:
    SendDerivedSeries(Archive *archive, std::shared_ptr<FileStore> cache, QStringList keys, FilterChain chain, Derivation naming)
        : m_archive(archive), m_cache(std::move(cache)), m_keys(std::move(keys)), m_chain(std::move(chain)), m_naming(std::move(naming)) {}

protected:
    void doStart() override
    {
        m_folder = std::make_shared<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/spectrum-send-XXXXXX"));
        if (!m_folder->isValid())
            return finishWith(Error(ErrorCode::Io, QStringLiteral("cannot make a folder for the derived instances")));
        std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(this);  // progress from the pool, while the job lives
        const CancelToken sending = cancelToken();  // a cancelled send stops making its instances too
        addSubjob(makeJob<QStringList>([this, toJob, sending, keys = m_keys, chain = m_chain, cache = m_cache, folder = m_folder,
                                        naming = m_naming](const CancelToken &cancel) -> Result<QStringList> {
                      return make(keys, chain, naming, cache.get(), folder->path(), [&] { return cancel.isCancelled() || sending.isCancelled(); },
                                  [this, toJob](int done, int total) { toJob->post([this, done, total] { setProgress(done, total); }); });
                  }),
                  [this](const Result<QStringList> &files) { made(files); });
    }

private:
    /// The derived instances, written into `folder`; on the pool.
    static Result<QStringList> make(const QStringList &keys, const FilterChain &chain, Derivation derivation, FileStore *cache,
                                    const QString &folder, const std::function<bool()> &cancelled, const std::function<void(int, int)> &progress)
    {
        derivation.description = chain.isEmpty() ? QStringLiteral("unprocessed copy") : chain.description();
        derivation.pixelsAreTheOriginals = chain.isEmpty();  // a copy keeps the original's samples at their depth
        derivation.seriesInstanceUid = makeUid();  // one derived series for all of them
        QStringList files;
        for (int i = 0; i < keys.size(); ++i) {
            if (cancelled())
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
            // Filters work on colour at 8 bits a sample (as it is shown): a deeper original's copy says so.
            Derivation own = derivation;
            if (!chain.isEmpty() && !image.value().pixels.isGray() && image.value().info.bitsStored > 8)
                own.description += QStringLiteral("; colour filtered at 8 bits a sample (the original: %1)").arg(image.value().info.bitsStored);
            Result<DerivedInstance> derived = makeDerivedInstance(bytes.value(), pixels.value(), own);
            if (!derived.isOk())
                return derived.error().withContext(keys[i]);
            const QString path = QDir(folder).filePath(derived.value().identity.sopInstanceUid + QStringLiteral(".dcm"));
            QSaveFile f(path);
            if (!f.open(QIODevice::WriteOnly) || f.write(derived.value().bytes) != derived.value().bytes.size() || !f.commit())
                return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
            files << path;
            progress(i + 1, int(keys.size()));
        }
        return files;
    }

    void made(const Result<QStringList> &files)
    {
        if (!files.isOk())
            return finishWith(files.error());
        if (!m_archive)
            return finishWith(Error(ErrorCode::Cancelled, QStringLiteral("the store's configuration changed while the series was made")));
        addSubjob(m_archive->send(files.value()), [this](const Result<ExportSummary> &r) { sent(r); });
    }

    void sent(const Result<ExportSummary> &r)
    {
        if (!r.isOk() || r.value().stored.isEmpty())
            return finishWith(r);
        m_sent = r.value();
        // What the archive stored is kept here too: the derived series shows in the open study at once.
        addSubjob(makeJob<Done>([stored = m_sent.stored, folder = m_folder, cache = m_cache](const CancelToken &) -> Result<Done> {
                      for (const QString &sop : stored) {
                          QFile f(QDir(folder->path()).filePath(sop + QStringLiteral(".dcm")));
                          if (!f.open(QIODevice::ReadOnly))
                              continue;  // stored under another name: the archive has it, the cache will when fetched
                          if (Error e = runSync(cache->put(sop, ByteView(f.readAll()))).error(); e.isError())
                              return e.withContext(sop);
                      }
                      return Done();
                  }),
                  [this](const Result<Done> &) { finishWith(m_sent); });  // a full cache does not undo the send
    }

    QPointer<Archive> m_archive;
    std::shared_ptr<FileStore> m_cache;
    QStringList m_keys;
    FilterChain m_chain;
    Derivation m_naming;
    std::shared_ptr<QTemporaryDir> m_folder;
    ExportSummary m_sent;
};

/// New instances of ours (reports, key objects, presentation states): kept in the cache first — nothing drawn is
/// lost when the archive refuses —, then sent to the archive (unless it is the cache itself).
class SendNewInstances : public CompoundJob<ExportSummary>
{
public:
    SendNewInstances(Archive *archive, bool local, std::shared_ptr<FileStore> cache, QList<QPair<QString, QByteArray>> instances)
        : m_archive(archive), m_local(local), m_cache(std::move(cache)), m_instances(std::move(instances)) {}

protected:
    void doStart() override
    {
        m_folder = std::make_shared<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/spectrum-send-XXXXXX"));
        if (!m_folder->isValid())
            return finishWith(Error(ErrorCode::Io, QStringLiteral("cannot make a folder for the new instances")));
        addSubjob(makeJob<QStringList>([instances = m_instances, cache = m_cache, folder = m_folder](const CancelToken &) -> Result<QStringList> {
                      QStringList files;
                      for (const auto &[sop, bytes] : instances) {
                          if (Error e = runSync(cache->put(sop, ByteView(bytes))).error(); e.isError())
                              return e.withContext(QStringLiteral("keeping %1 in the cache").arg(sop));
                          const QString path = QDir(folder->path()).filePath(sop + QStringLiteral(".dcm"));
                          QSaveFile f(path);
                          if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit())
                              return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
                          files << path;
                      }
                      // New instances of the reader's (findings, key images, a view): made here, on the trail.
                      if (isAuditing()) {
                          QList<DicomIdentity> made;
                          for (const auto &[sop, bytes] : instances) {
                              if (Result<DicomIdentity> id = readDicomIdentity(ByteView(bytes)); id.isOk() && id.value().isValid())
                                  made << id.value();
                          }
                          for (const auditevents::Study &study : auditStudiesOf(made))  // one patient a message
                              audit(auditevents::instancesAccessed(QLatin1Char('C'), {study}));
                      }
                      return files;
                  }),
                  [this](const Result<QStringList> &files) { kept(files); });
    }

private:
    void kept(const Result<QStringList> &files)
    {
        if (!files.isOk())
            return finishWith(files.error());
        if (m_local) {
            ExportSummary s;
            for (const auto &i : std::as_const(m_instances))
                s.stored << i.first;
            return finishWith(s);
        }
        if (!m_archive)
            return finishWith(Error(ErrorCode::Cancelled, QStringLiteral("the store's configuration changed while the instances were made")));
        addSubjob(m_archive->send(files.value()), [this](const Result<ExportSummary> &r) { finishWith(r); });
    }

    QPointer<Archive> m_archive;
    bool m_local;
    std::shared_ptr<FileStore> m_cache;
    QList<QPair<QString, QByteArray>> m_instances;
    std::shared_ptr<QTemporaryDir> m_folder;
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
        if (!id.isOk())
            return Error(id.error().code(), QStringLiteral("a pushed instance (%1) is not kept: %2").arg(announcedSopInstanceUid, id.error().message()));
        if (id.value().sopInstanceUid != announcedSopInstanceUid)
            return Error(ErrorCode::InvalidDicom, QStringLiteral("a pushed instance (%1) does not carry the SOP Instance UID it was sent as").arg(announcedSopInstanceUid));
        return Error(ErrorCode::InvalidDicom, QStringLiteral("a pushed instance (%1) lacks its study's, series' or own UID: not kept (it could be shown with no study)")
                                                  .arg(announcedSopInstanceUid));
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
        std::unique_ptr<Archive> made = makeArchive(s, m_config, m_cache);
        if (!made)
            continue;
        if (auto *dimse = qobject_cast<DimseArchive *>(made.get()))
            dimse->setMoveDestination(m_moveDestination);
        auto *a = new AuditedArchive(std::move(made));  // every search, fetch and send on the audit trail
        a->setParent(this);
        m_archives.insert(s.name, a);
    }
}

void StoreRegistry::setMoveDestination(StorageScp *scp)
{
    m_moveDestination = scp;
    for (Archive *a : std::as_const(m_archives)) {
        if (auto *dimse = qobject_cast<DimseArchive *>(static_cast<AuditedArchive *>(a)->inner()))
            dimse->setMoveDestination(scp);
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
    // Each archive says how near it is; of stores equally near, the configuration's order.
    QList<QPair<Archive::Reach, QString>> reachable;
    for (const StoreConfig &s : m_config.stores()) {
        const Archive *a = m_archives.value(s.name);
        if (stores.contains(s.name) && a && a->reach() != Archive::Reach::Unreachable)
            reachable << qMakePair(a->reach(), s.name);
    }
    std::stable_sort(reachable.begin(), reachable.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    QStringList out;
    for (const auto &r : std::as_const(reachable))
        out << r.second;
    return out;
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
        Q_EMIT self->instanceFetched(id.sopInstanceUid, size, id);
    });
}

ResultJob<ExportSummary> *StoreRegistry::exportDerivedSeries(const QString &name, const QStringList &keys, const FilterChain &chain,
                                                             const Derivation &naming)
{
    Error e;
    Archive *a = archive(name, &e);
    if (!e.isError() && !m_cache)
        e = Error(ErrorCode::NotFound, QStringLiteral("no workstation cache is open"));
    if (!e.isError() && keys.isEmpty())
        e = Error(ErrorCode::InvalidArgument, QStringLiteral("nothing to send"));
    if (e.isError())
        return failedJob<ExportSummary>(e);
    return new SendDerivedSeries(a, m_cache, keys, chain, naming);
}

ResultJob<ExportSummary> *StoreRegistry::storeNewInstances(const QString &name, const QList<QPair<QString, QByteArray>> &instances)
{
    if (!m_cache)
        return failedJob<ExportSummary>(Error(ErrorCode::NotFound, QStringLiteral("no workstation cache is open")));
    if (instances.isEmpty())
        return failedJob<ExportSummary>(Error(ErrorCode::InvalidArgument, QStringLiteral("nothing to store")));
    bool local = name.isEmpty();
    Archive *a = nullptr;
    if (!local) {
        Error e;
        a = archive(name, &e);
        if (!a)
            return failedJob<ExportSummary>(e);
        local = m_config.find(name) && m_config.find(name)->isTheCache();
    }
    return new SendNewInstances(a, local, m_cache, instances);
}

ResultJob<ExportSummary> *StoreRegistry::exportFiles(const QString &name, const QStringList &files)
{
    Error e;
    Archive *a = archive(name, &e);
    return a ? a->send(files) : failedJob<ExportSummary>(e);
}

} // namespace spectrum
