#include "spectrum/stores/storeregistry.h"

#include "spectrum/core/logging.h"
#include "spectrum/core/uid.h"
#include "spectrum/imaging/derivedinstance.h"
#include "spectrum/imaging/dicomdecoder.h"
#include "spectrum/stores/filestore.h"
#include "spectrum/transfer/blobclient.h"
#include "spectrum/transfer/buffersink.h"
#include "spectrum/transfer/dicomweb.h"
#include "spectrum/transfer/dimse.h"
#include "spectrum/transfer/filesink.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QPointer>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSet>
#include <QScopeGuard>
#include <QTemporaryDir>

#include <deque>

namespace spectrum {

// ---- endpoints ----

Result<DicomWebEndpoint> dicomWebEndpointFor(const StoreConfig &s, const StoreConfigFile &config)
{
    if (s.kind != StoreKind::DicomWeb)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("store '%1' is not a DICOMweb store").arg(s.name));
    DicomWebEndpoint ep;
    ep.base = QUrl(s.url);
    ep.caFile = s.caFile;
    ep.maxParallel = s.maxParallel;
    ep.timeoutMs = s.timeoutSeconds * 1000;
    if (s.auth == QLatin1String("basic")) {
        Result<QString> password = config.reveal(s.password);
        if (!password.isOk())
            return password.error().withContext(s.name);
        ep.auth.kind = HttpAuth::Kind::Basic;
        ep.auth.user = s.user;
        ep.auth.password = password.value();
    } else if (s.auth == QLatin1String("bearer")) {
        Result<QString> token = config.reveal(s.token);
        if (!token.isOk())
            return token.error().withContext(s.name);
        ep.auth.kind = HttpAuth::Kind::Bearer;
        ep.auth.token = token.value();
        // A token kept in a file or a variable may have been renewed by whoever issues it: read it again.
        if (s.token.source != Secret::Source::Sealed) {
            ep.auth.refresh = [secret = s.token, config]() { return config.reveal(secret); };
        }
    }
    return ep;
}

Result<DimseEndpoint> dimseEndpointFor(const StoreConfig &s, const StoreConfigFile &config)
{
    if (s.kind != StoreKind::Dimse)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("store '%1' is not a DIMSE store").arg(s.name));
    DimseEndpoint ep;
    ep.host = s.host;
    ep.port = quint16(s.port);
    ep.calledAeTitle = s.aeTitle;
    ep.callingAeTitle = s.ourAeTitle.isEmpty() ? config.workstation.aeTitle : s.ourAeTitle;
    ep.timeoutSeconds = s.timeoutSeconds;
    ep.tls = s.tls;
    ep.caFile = s.caFile;
    if (s.tls) {  // the workstation's certificate, for a PACS that asks who we are
        ep.certificateFile = config.workstation.tlsCertificate;
        ep.keyFile = config.workstation.tlsKey;
    }
    return ep;
}

Result<BlobEndpoint> blobEndpointFor(const StoreConfig &s, const StoreConfigFile &config)
{
    if (s.kind != StoreKind::Blobd)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("store '%1' is not a blob store").arg(s.name));
    auto parsed = BlobEndpoint::fromUrl(QUrl(s.url));
    if (!parsed.isOk())
        return parsed.error();
    BlobEndpoint ep = parsed.value().first;
    ep.caFile = s.caFile;
    Result<QString> token = config.reveal(s.token);
    if (!token.isOk())
        return token.error().withContext(s.name);
    ep.token = token.value();
    return ep;
}

namespace {

/// Instances (as identities) grouped into study records, filtered by the query.
QList<DicomRecord> studiesFrom(const QList<DicomIdentity> &instances, const DicomQuery &q)
{
    QHash<QString, int> index;
    QList<DicomRecord> out;
    QHash<QString, QSet<QString>> series;
    for (const DicomIdentity &id : instances) {
        if (!id.isValid())
            continue;
        auto it = index.find(id.studyInstanceUid);
        if (it == index.end()) {
            DicomRecord r;
            r.level = QueryLevel::Study;
            r.identity = id;
            r.identity.seriesInstanceUid.clear();
            r.identity.sopInstanceUid.clear();
            r.identity.sopClassUid.clear();
            r.identity.seriesDescription.clear();
            r.identity.seriesNumber = r.identity.instanceNumber = 0;
            r.relatedInstances = 0;
            it = index.insert(id.studyInstanceUid, int(out.size()));
            out << r;
        }
        DicomRecord &r = out[*it];
        ++r.relatedInstances;
        if (!id.modality.isEmpty() && !r.modalitiesInStudy.contains(id.modality))
            r.modalitiesInStudy << id.modality;
        series[id.studyInstanceUid].insert(id.seriesInstanceUid);
    }
    QList<DicomRecord> kept;
    for (DicomRecord &r : out) {
        r.relatedSeries = int(series.value(r.identity.studyInstanceUid).size());
        if (q.matchesStudy(r.identity, r.modalitiesInStudy))
            kept << r;
    }
    return kept;
}

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

/// An instance a fetch brought: who it is, and its bytes when they were in memory (for the viewer).
struct Kept
{
    DicomIdentity id;
    ByteView bytes;        ///< empty when it arrived as a file, or went to a folder
    bool already = false;  ///< held before it came (HeldKeys): dropped unread
};

/// Stores one instance (a whole DICOM file in memory) in the cache or as OUT/SOP.dcm; checks it belongs to
/// `studyUid` (and to `patientId`, once known). Runs on any thread.
Result<Kept> keepInstance(const ByteView &bytes, const QString &studyUid, const QString &outDir, FileStore *cache, const HeldKeys *held)
{
    Result<DicomIdentity> id = identityInStudy(bytes, studyUid);
    if (!id.isOk())
        return id.error();
    if (held && held->contains(id.value().sopInstanceUid))
        return Kept{id.value(), ByteView(), true};
    if (!outDir.isEmpty()) {
        QSaveFile f(QDir(outDir).filePath(id.value().sopInstanceUid + QStringLiteral(".dcm")));
        if (!f.open(QIODevice::WriteOnly) || f.write(bytes.data(), bytes.size()) != bytes.size() || !f.commit())
            return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(f.fileName(), f.errorString()));
        return Kept{id.value(), ByteView(), false};
    }
    CommitOptions options;
    options.knownIdentity = id.value();  // parsed from these bytes just above
    options.durable = false;             // the archive still has it: no need to wait for the disk
    options.deferSha256 = true;          // hashed if ever asked for (served to a peer); checksummed now
    if (Error e = runSync(cache->put(id.value().sopInstanceUid, bytes, options)).error(); e.isError())
        return e;
    return Kept{id.value(), bytes, false};
}

/// The same for an instance that arrived as a file: looked at through a read-only mapping, then renamed into the
/// folder or copied into the cache inside the kernel. The file is gone afterwards either way.
Result<Kept> keepInstanceFile(const QString &path, const QString &studyUid, const QString &outDir, FileStore *cache, const HeldKeys *held)
{
    auto file = std::make_shared<QFile>(path);
    auto cleanup = qScopeGuard([&] { file->close(); QFile::remove(path); });
    if (!file->open(QIODevice::ReadOnly))
        return Error(ErrorCode::Io, QStringLiteral("cannot read %1: %2").arg(path, file->errorString()));
    const qint64 size = file->size();
    const uchar *map = size > 0 ? file->map(0, size) : nullptr;
    if (!map)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("%1 is empty or cannot be mapped").arg(path));
    Result<DicomIdentity> id = identityInStudy(ByteView(reinterpret_cast<const char *>(map), size, file), studyUid);
    if (!id.isOk())
        return id.error();
    if (held && held->contains(id.value().sopInstanceUid))
        return Kept{id.value(), ByteView(), true};
    if (!outDir.isEmpty()) {
        const QString target = QDir(outDir).filePath(id.value().sopInstanceUid + QStringLiteral(".dcm"));
        QFile::remove(target);
        if (::rename(QFile::encodeName(path).constData(), QFile::encodeName(target).constData()) != 0)
            return Error(ErrorCode::Io, QStringLiteral("cannot move %1 to %2").arg(path, target));
        return Kept{id.value(), ByteView(), false};
    }
    CommitOptions options;
    options.knownIdentity = id.value();
    options.durable = false;  // fetched from an archive that keeps it
    options.deferSha256 = true;
    if (Error e = runSync(cache->importFile(id.value().sopInstanceUid, path, options)).error(); e.isError())
        return e;
    return Kept{id.value(), ByteView(), false};
}

/// Collects kept instances, remembers the study's patient, and finishes once the transfer and every pending
/// write are done.
struct FetchState
{
    QElapsedTimer clock;
    FetchSummary summary;
    QString patientId;   ///< the first instance's; later ones must agree
    Error error;
    int pendingWrites = 0;
    double firstCompleteSeconds = -1;
    bool transferDone = false;
    int expected = 0;
    QSet<QString> kept;  ///< SOP Instance UIDs counted: one that arrives twice (a stream that gave way) counts once
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

// ---- held keys ----

bool HeldKeys::contains(const QString &key) const
{
    QMutexLocker lock(&m_mutex);
    return m_keys.contains(key);
}

void HeldKeys::insert(const QString &key)
{
    QMutexLocker lock(&m_mutex);
    m_keys.insert(key);
}

void HeldKeys::remove(const QString &key)
{
    QMutexLocker lock(&m_mutex);
    m_keys.remove(key);
}

// ---- registry ----

StoreRegistry::StoreRegistry(StoreConfigFile config, std::shared_ptr<FileStore> cache, QObject *parent)
    : QObject(parent), m_config(std::move(config)), m_cache(std::move(cache))
{
    qRegisterMetaType<spectrum::Error>();
}

StoreRegistry::~StoreRegistry() = default;

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

const StoreConfig *StoreRegistry::store(const QString &name, Error *error) const
{
    const StoreConfig *s = m_config.find(name);
    if (!s)
        *error = Error(ErrorCode::NotFound, QStringLiteral("no store named '%1' in %2").arg(name, m_config.path()));
    return s;
}

/// A connection test: a client for `endpoint`, the job `start` makes with it, and the client gone when the job
/// has finished. A bad endpoint (a secret that cannot be revealed…) fails the job at once.
template <typename Client, typename Endpoint, typename Start>
ResultJob<Done> *probe(const Result<Endpoint> &endpoint, QObject *parent, Start start)
{
    if (!endpoint.isOk())
        return failedJob<Done>(endpoint.error());
    auto *client = new Client(endpoint.value(), parent);
    ResultJob<Done> *job = start(client);
    QObject::connect(job, &Job::finished, client, &QObject::deleteLater);
    return job;
}

ResultJob<Done> *StoreRegistry::test(const QString &name)
{
    Error e;
    const StoreConfig *s = store(name, &e);
    if (!s)
        return failedJob<Done>(e);
    switch (s->kind) {
    case StoreKind::Local: {
        std::shared_ptr<FileStore> cache = m_cache;
        const QString path = s->path;
        return makeJob<Done>([cache, path](const CancelToken &) -> Result<Done> {
            if (path.isEmpty())
                return cache ? Result<Done>(Done{}) : Result<Done>(Error(ErrorCode::NotFound, QStringLiteral("no workstation cache is open")));
            Result<std::unique_ptr<FileStore>> opened = FileStore::open(path, 0);
            if (!opened.isOk())
                return opened.error();
            return Done{};
        });
    }
    case StoreKind::DicomWeb:
        return probe<DicomWebClient>(dicomWebEndpointFor(*s, m_config), this, [](DicomWebClient *c) { return c->ping(); });
    case StoreKind::Dimse:
        return probe<DimseClient>(dimseEndpointFor(*s, m_config), this, [](DimseClient *c) { return c->echo(); });
    case StoreKind::Blobd:
        return probe<BlobClient>(blobEndpointFor(*s, m_config), this, [](BlobClient *c) {
            return chainJob<Done>(c->list(QString(), 1), [](const QList<RemoteBlobInfo> &, const CancelToken &) -> Result<Done> { return Done{}; });
        });
    }
    return nullptr;
}

ResultJob<QList<StudyHit>> *StoreRegistry::findStudies(const DicomQuery &query, const QStringList &names)
{
    QList<StoreConfig> targets;
    Error missing;
    if (names.isEmpty()) {
        targets = m_config.stores();
    } else {
        for (const QString &n : names) {
            if (const StoreConfig *s = store(n, &missing))
                targets << *s;
        }
    }
    if (missing.isError() || query.validate().isError() || query.level != QueryLevel::Study) {
        const Error e = missing.isError() ? missing : query.validate().isError() ? query.validate()
                                                      : Error(ErrorCode::InvalidArgument, QStringLiteral("the registry searches for studies"));
        return failedJob<QList<StudyHit>>(e);
    }
    QPointer<StoreRegistry> self(this);
    const StoreConfigFile config = m_config;
    std::shared_ptr<FileStore> cache = m_cache;
    return new CallbackJob<QList<StudyHit>>([self, targets, query, config, cache](CallbackJob<QList<StudyHit>> *job) {
        struct Gather
        {
            QList<QPair<QString, QList<DicomRecord>>> answers;
            QStringList failures;
            int pending = 0;
        };
        auto g = std::make_shared<Gather>();
        g->pending = int(targets.size());
        if (targets.isEmpty())
            return job->complete(Error(ErrorCode::NotFound, QStringLiteral("no store is configured (spectrum-cli stores add …)")));
        auto answered = [self, job, g, query, n = targets.size()](const QString &name, const Result<QList<DicomRecord>> &r) {
            if (r.isOk())
                g->answers.append({name, r.value()});
            else
                g->failures << QStringLiteral("%1: %2").arg(name, r.error().toString());
            if (self)
                Q_EMIT self->storeAnswered(name, r.isOk() ? int(r.value().size()) : 0, r.isOk() ? Error() : r.error());
            job->progressTo(n - --g->pending, n);
            if (g->pending > 0)
                return;
            if (g->answers.isEmpty())
                return job->complete(Error(ErrorCode::Network, QStringLiteral("no store answered: %1").arg(g->failures.join(QStringLiteral("; ")))));
            QList<StudyHit> hits = merge(g->answers);
            if (query.limit > 0 && hits.size() > query.limit)
                hits = hits.mid(0, query.limit);
            job->complete(hits);
        };
        for (const StoreConfig &s : targets) {
            const QString name = s.name;
            switch (s.kind) {
            case StoreKind::DicomWeb: {
                Result<DicomWebEndpoint> ep = dicomWebEndpointFor(s, config);
                if (!ep.isOk()) {
                    answered(name, ep.error());
                    break;
                }
                auto *client = new DicomWebClient(ep.value(), job);
                whenDone(client->search(query), job, [answered, name](const Result<QList<DicomRecord>> &r) { answered(name, r); });
                break;
            }
            case StoreKind::Dimse: {
                Result<DimseEndpoint> ep = dimseEndpointFor(s, config);
                if (!ep.isOk()) {
                    answered(name, ep.error());
                    break;
                }
                auto *client = new DimseClient(ep.value(), job);
                whenDone(client->find(query), job, [answered, name](const Result<QList<DicomRecord>> &r) { answered(name, r); });
                break;
            }
            case StoreKind::Local: {
                const QString path = s.path;
                auto *search = makeJob<QList<DicomRecord>>([cache, path, query](const CancelToken &) -> Result<QList<DicomRecord>> {
                    std::shared_ptr<FileStore> store = cache;
                    if (!path.isEmpty()) {
                        Result<std::unique_ptr<FileStore>> opened = FileStore::open(path, 0);
                        if (!opened.isOk())
                            return opened.error();
                        store = std::shared_ptr<FileStore>(opened.takeValue());
                    }
                    if (!store)
                        return Error(ErrorCode::NotFound, QStringLiteral("no workstation cache is open"));
                    Result<QList<BlobInfo>> all = runSync(store->query(BlobQuery()));
                    if (!all.isOk())
                        return all.error();
                    QList<DicomIdentity> ids;
                    for (const BlobInfo &b : all.value())
                        ids << b.dicom;
                    return studiesFrom(ids, query);
                });
                whenDone(search, job, [answered, name](const Result<QList<DicomRecord>> &r) { answered(name, r); });
                break;
            }
            case StoreKind::Blobd: {
                Result<BlobEndpoint> ep = blobEndpointFor(s, config);
                if (!ep.isOk()) {
                    answered(name, ep.error());
                    break;
                }
                auto *client = new BlobClient(ep.value(), job);
                RemoteQuery rq;
                rq.studyInstanceUid = query.studyInstanceUid;
                if (!query.patientId.contains(QLatin1Char('*')) && !query.patientId.contains(QLatin1Char('?')))
                    rq.patientId = query.patientId;
                whenDone(client->list(rq), job, [answered, name, query](const Result<QList<RemoteBlobInfo>> &r) {
                    if (!r.isOk())
                        return answered(name, r.error());
                    QList<DicomIdentity> ids;
                    for (const RemoteBlobInfo &b : r.value())
                        ids << b.dicom;
                    answered(name, studiesFrom(ids, query));
                });
                break;
            }
            }
        }
    });
}

namespace {
/// A study skeleton from the series and instances a store listed.
/// QIDO-RS or C-FIND against an archive, by a client owned by `owner`.
using Finder = std::function<ResultJob<QList<DicomRecord>> *(const DicomQuery &)>;
Result<Finder> finderFor(const StoreConfig &s, const StoreConfigFile &config, QObject *owner)
{
    if (s.kind == StoreKind::DicomWeb) {
        Result<DicomWebEndpoint> ep = dicomWebEndpointFor(s, config);
        if (!ep.isOk())
            return ep.error();
        auto *client = new DicomWebClient(ep.value(), owner);
        return Finder([client](const DicomQuery &q) { return client->search(q); });
    }
    Result<DimseEndpoint> ep = dimseEndpointFor(s, config);
    if (!ep.isOk())
        return ep.error();
    auto *client = new DimseClient(ep.value(), owner);
    return Finder([client](const DicomQuery &q) { return client->find(q); });
}

StudySummary studyFrom(const QString &studyUid, const QList<DicomRecord> &seriesRecords, const QList<DicomIdentity> &instances)
{
    StudySummary study;
    QHash<QString, int> seriesAt;
    for (const DicomRecord &r : seriesRecords) {
        SeriesSummary s;
        s.seriesInstanceUid = r.identity.seriesInstanceUid;
        s.modality = r.identity.modality;
        s.description = r.identity.seriesDescription;
        s.seriesNumber = r.identity.seriesNumber;
        seriesAt.insert(s.seriesInstanceUid, int(study.series.size()));
        study.series << s;
        if (study.identity.studyInstanceUid.isEmpty())
            study.identity = r.identity;
    }
    for (const DicomIdentity &id : instances) {
        if (id.studyInstanceUid != studyUid && !id.studyInstanceUid.isEmpty())
            continue;
        if (!isValidUid(id.sopInstanceUid) || !isValidUid(id.seriesInstanceUid))
            continue;
        if (!seriesAt.contains(id.seriesInstanceUid)) {  // an instance whose series was not listed on its own
            SeriesSummary s;
            s.seriesInstanceUid = id.seriesInstanceUid;
            s.modality = id.modality;
            s.description = id.seriesDescription;
            s.seriesNumber = id.seriesNumber;
            seriesAt.insert(s.seriesInstanceUid, int(study.series.size()));
            study.series << s;
        }
        SeriesSummary &s = study.series[seriesAt.value(id.seriesInstanceUid)];
        s.instances << InstanceRef{id.sopInstanceUid, id.sopInstanceUid, id.instanceNumber, 0};
        if (study.identity.patientId.isEmpty() && !id.patientId.isEmpty())
            study.identity = id;
        if (!study.modalities.contains(s.modality) && !s.modality.isEmpty())
            study.modalities << s.modality;
        ++study.instanceCount;
    }
    study.identity.studyInstanceUid = studyUid;
    study.identity.seriesInstanceUid.clear();
    study.identity.sopInstanceUid.clear();
    study.series.erase(std::remove_if(study.series.begin(), study.series.end(), [](const SeriesSummary &s) { return s.instances.isEmpty(); }),
                       study.series.end());
    std::stable_sort(study.series.begin(), study.series.end(), [](const SeriesSummary &a, const SeriesSummary &b) { return a.seriesNumber < b.seriesNumber; });
    for (SeriesSummary &s : study.series) {
        std::sort(s.instances.begin(), s.instances.end(), [](const InstanceRef &a, const InstanceRef &b) {
            return a.instanceNumber != b.instanceNumber ? a.instanceNumber < b.instanceNumber : a.sopInstanceUid < b.sopInstanceUid;
        });
        if (!study.modalities.contains(s.modality) && !s.modality.isEmpty())
            study.modalities << s.modality;
    }
    return study;
}
} // namespace

ResultJob<StudySummary> *StoreRegistry::firstLook(const QString &name, const QString &studyUid)
{
    Error e;
    const StoreConfig *found = store(name, &e);
    if (!e.isError() && !isValidUid(studyUid))
        e = Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not a DICOM UID").arg(studyUid.left(80)));
    if (!e.isError() && found->kind != StoreKind::DicomWeb && found->kind != StoreKind::Dimse)
        e = Error(ErrorCode::Unsupported, QStringLiteral("store '%1' is listed at once").arg(name));
    if (e.isError())
        return failedJob<StudySummary>(e);
    const StoreConfig s = *found;
    const StoreConfigFile config = m_config;
    return new CallbackJob<StudySummary>([s, config, studyUid](CallbackJob<StudySummary> *job) {
        Result<Finder> finder = finderFor(s, config, job);
        if (!finder.isOk())
            return job->complete(finder.error());
        const Finder find = finder.value();
        DicomQuery series;
        series.level = QueryLevel::Series;
        series.studyInstanceUid = studyUid;
        whenDone(find(series), job, [job, find, studyUid](const Result<QList<DicomRecord>> &sr) {
            if (!sr.isOk())
                return job->complete(sr.error());
            // The series a study opens on: the lowest Series Number (studyFrom's order), the first listed on a tie.
            const DicomRecord *first = nullptr;
            for (const DicomRecord &r : sr.value()) {
                if (r.relatedInstances != 0 && isValidUid(r.identity.seriesInstanceUid) && (!first || r.identity.seriesNumber < first->identity.seriesNumber))
                    first = &r;
            }
            if (!first)
                return job->complete(Error(ErrorCode::NotFound, QStringLiteral("study %1 has no series there").arg(studyUid)));
            DicomQuery middle;
            middle.level = QueryLevel::Instance;
            middle.studyInstanceUid = studyUid;
            middle.seriesInstanceUid = first->identity.seriesInstanceUid;
            middle.instanceNumber = std::max(0, first->relatedInstances) / 2 + 1;
            const DicomRecord seriesRecord = *first;
            whenDone(find(middle), job, [job, seriesRecord, studyUid, middle](const Result<QList<DicomRecord>> &ir) {
                if (!ir.isOk())
                    return job->complete(ir.error());
                QList<DicomIdentity> ids;
                for (const DicomRecord &r : ir.value()) {
                    if (r.identity.instanceNumber == middle.instanceNumber && r.identity.seriesInstanceUid == seriesRecord.identity.seriesInstanceUid)
                        ids << r.identity;  // a server that ignores the filter answers with more: only that one
                }
                if (ids.size() != 1)
                    return job->complete(Error(ErrorCode::NotFound, QStringLiteral("no single instance number %1 in the series").arg(middle.instanceNumber)));
                StudySummary study = studyFrom(studyUid, {seriesRecord}, ids);
                if (study.instanceCount != 1)
                    return job->complete(Error(ErrorCode::NotFound, QStringLiteral("the first look found nothing to show")));
                job->complete(study);
            });
        });
    });
}

ResultJob<StudySummary> *StoreRegistry::listStudy(const QString &name, const QString &studyUid)
{
    Error e;
    const StoreConfig *found = store(name, &e);
    if (!e.isError() && !isValidUid(studyUid))
        e = Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not a DICOM UID").arg(studyUid.left(80)));
    if (e.isError())
        return failedJob<StudySummary>(e);
    const StoreConfig s = *found;
    const StoreConfigFile config = m_config;
    std::shared_ptr<FileStore> cache = m_cache;
    return new CallbackJob<StudySummary>([s, config, cache, studyUid](CallbackJob<StudySummary> *job) {
        auto done = [job, studyUid](const QList<DicomRecord> &series, const QList<DicomIdentity> &instances) {
            StudySummary study = studyFrom(studyUid, series, instances);
            if (study.instanceCount == 0)
                return job->complete(Error(ErrorCode::NotFound, QStringLiteral("study %1 has no instance there").arg(studyUid)));
            job->complete(study);
        };
        DicomQuery series;
        series.level = QueryLevel::Series;
        series.studyInstanceUid = studyUid;
        DicomQuery instances = series;
        instances.level = QueryLevel::Instance;
        auto identities = [](const QList<DicomRecord> &records) {
            QList<DicomIdentity> ids;
            for (const DicomRecord &r : records)
                ids << r.identity;
            return ids;
        };
        switch (s.kind) {
        case StoreKind::DicomWeb:
        case StoreKind::Dimse: {
            // Series first (descriptions, numbers), then every instance of the study.
            Result<Finder> finder = finderFor(s, config, job);
            if (!finder.isOk())
                return job->complete(finder.error());
            const Finder find = finder.value();
            whenDone(find(series), job, [job, find, instances, done, identities](const Result<QList<DicomRecord>> &sr) {
                if (!sr.isOk())
                    return job->complete(sr.error());
                whenDone(find(instances), job, [job, sr, done, identities](const Result<QList<DicomRecord>> &ir) {
                    if (!ir.isOk())
                        return job->complete(ir.error());
                    done(sr.value(), identities(ir.value()));
                });
            });
            break;
        }
        case StoreKind::Blobd: {
            Result<BlobEndpoint> ep = blobEndpointFor(s, config);
            if (!ep.isOk())
                return job->complete(ep.error());
            auto *client = new BlobClient(ep.value(), job);
            RemoteQuery rq;
            rq.studyInstanceUid = studyUid;
            whenDone(client->list(rq), job, [done](const Result<QList<RemoteBlobInfo>> &r) {
                QList<DicomIdentity> ids;
                if (r.isOk()) {
                    for (const RemoteBlobInfo &b : r.value())
                        ids << b.dicom;  // cached under its SOP Instance UID once fetched, whatever its key there
                }
                done({}, ids);
            });
            break;
        }
        case StoreKind::Local: {
            if (!cache)
                return job->complete(Error(ErrorCode::NotFound, QStringLiteral("no workstation cache is open")));
            whenDone(loadStudies(cache.get(), studyUid), job, [job, studyUid](const Result<QList<StudySummary>> &r) {
                if (!r.isOk())
                    return job->complete(r.error());
                if (r.value().isEmpty())
                    return job->complete(Error(ErrorCode::NotFound, QStringLiteral("study %1 is not in the cache").arg(studyUid)));
                job->complete(r.value().first());
            });
            break;
        }
        }
    });
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
    const QString outDir = options.outDir;
    const std::shared_ptr<const HeldKeys> held = options.held;
    const std::function<void(const Arrival &)> arriving = options.arriving;
    Error e;
    const StoreConfig *found = store(name, &e);
    for (const QString &uid : {studyUid, seriesUid, sopUid}) {
        if (!e.isError() && (uid == studyUid || !uid.isEmpty()) && !isValidUid(uid))
            e = Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not a DICOM UID").arg(uid.left(80)));
    }
    if (!e.isError() && !sopUid.isEmpty() && seriesUid.isEmpty())
        e = Error(ErrorCode::InvalidArgument, QStringLiteral("an instance is fetched with its series"));
    if (!e.isError() && outDir.isEmpty() && !m_cache)
        e = Error(ErrorCode::NotFound, QStringLiteral("no workstation cache is open, and no --out folder given"));
    if (!e.isError() && !outDir.isEmpty() && !QDir().mkpath(outDir))
        e = Error(ErrorCode::Io, QStringLiteral("cannot create %1").arg(outDir));
    if (e.isError())
        return failedJob<FetchSummary>(e);
    const StoreConfig s = *found;
    const StoreConfigFile config = m_config;
    std::shared_ptr<FileStore> cache = m_cache;
    QPointer<StoreRegistry> self(this);
    return new CallbackJob<FetchSummary>([self, s, config, cache, studyUid, seriesUid, sopUid, outDir, held, arriving](CallbackJob<FetchSummary> *job) {
        auto st = std::make_shared<FetchState>();
        st->clock.start();
        auto finishIfDone = [job, st, studyUid] {
            if (!st->transferDone || st->pendingWrites > 0 || job->isFinished())
                return;
            st->summary.seconds = st->clock.nsecsElapsed() / 1e9;
            if (st->error.isError() && st->summary.instances == 0)
                return job->complete(st->error);
            if (st->summary.instances == 0)
                return job->complete(Error(ErrorCode::NotFound, QStringLiteral("study %1 has no instance there").arg(studyUid)));
            job->complete(st->summary);
        };
        // What becomes of an instance once checked and stored, on the job's thread.
        auto kept = [self, job, st, finishIfDone](Result<Kept> &&k, qint64 size) {
                --st->pendingWrites;
                const Result<DicomIdentity> id = k.isOk() ? Result<DicomIdentity>(k.value().id) : Result<DicomIdentity>(k.error());
                if (k.isOk() && k.value().already) {
                    // Here before it came (another request brought it): dropped unread, counted once.
                    if (!st->kept.contains(id.value().sopInstanceUid)) {
                        st->kept.insert(id.value().sopInstanceUid);
                        ++st->summary.instances;
                        st->summary.sopInstanceUids << id.value().sopInstanceUid;
                        job->progressTo(st->summary.instances, st->expected);
                    }
                } else if (id.isOk() && !st->patientId.isNull() && id.value().patientId != st->patientId) {
                    ++st->summary.rejected;  // another patient inside this study: never mixed in
                    qCWarning(lcStores) << "fetch: instance" << id.value().sopInstanceUid << "has patient ID" << id.value().patientId
                                        << "but the study's is" << st->patientId << "- dropped";
                } else if (id.isOk() && st->kept.contains(id.value().sopInstanceUid)) {
                    // Brought again (the stream that gave way to series requests had it): stored, not counted.
                } else if (id.isOk()) {
                    st->kept.insert(id.value().sopInstanceUid);
                    if (st->patientId.isNull())
                        st->patientId = id.value().patientId;
                    ++st->summary.instances;
                    st->summary.bytes += size;
                    st->summary.sopInstanceUids << id.value().sopInstanceUid;
                    if (st->summary.firstInstanceSeconds < 0)
                        st->summary.firstInstanceSeconds = st->firstCompleteSeconds;
                    job->progressTo(st->summary.instances, st->expected);
                    if (self && !k.value().bytes.isEmpty())
                        Q_EMIT self->instanceBytes(id.value().sopInstanceUid, k.value().bytes);
                    if (self)
                        Q_EMIT self->instanceFetched(id.value().sopInstanceUid, size);
                } else {
                    if (id.error().code() == ErrorCode::Corrupt)
                        ++st->summary.rejected;
                    if (!st->error.isError())
                        st->error = id.error();
                    st->summary.problems << id.error().toString();
                    qCWarning(lcStores) << "fetch:" << id.error().toString();
                }
                finishIfDone();
        };
        // Checks and stores one instance on the pool; reports back here (dropped if the job is gone by then).
        auto keepWith = [job, st, kept](std::function<Result<Kept>()> work, qint64 size) {
            ++st->pendingWrites;
            if (st->firstCompleteSeconds < 0)
                st->firstCompleteSeconds = st->clock.nsecsElapsed() / 1e9;  // whole, in memory: the viewer could show it
            runOnPool<Result<Kept>>(keepingPool(), job, std::move(work), [kept, size](Result<Kept> &&k) { kept(std::move(k), size); });
        };
        auto keep = [keepWith, studyUid, outDir, cache, held](const ByteView &bytes) {
            keepWith([bytes, studyUid, outDir, cache, held] { return keepInstance(bytes, studyUid, outDir, cache.get(), held.get()); }, bytes.size());
        };
        // The same on the thread that read the instance (RetrieveCallbacks::completeOnReader), reported back with one
        // posted call. The reader posts the end of its transfer after its last instance, so every instance is
        // counted before the end is seen. Only into the cache, where an instance is an append to a pack: creating
        // a file per instance (--out) on the reading thread held the reading up (0.41 s against 0.22 s).
        std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(job);
        auto keepHere = [toJob, kept, st, clock = st->clock, studyUid, outDir, cache, held](const ByteView &bytes) {
            const double completedAt = clock.nsecsElapsed() / 1e9;
            auto k = std::make_shared<Result<Kept>>(keepInstance(bytes, studyUid, outDir, cache.get(), held.get()));
            toJob->post([kept, st, completedAt, k, size = bytes.size()] {
                ++st->pendingWrites;  // for kept() to count down
                if (st->firstCompleteSeconds < 0)
                    st->firstCompleteSeconds = completedAt;
                kept(std::move(*k), size);
            });
            return Error();
        };
        auto keepFile = [keepWith, studyUid, outDir, cache, held](const QString &path) {
            keepWith([path, studyUid, outDir, cache, held] { return keepInstanceFile(path, studyUid, outDir, cache.get(), held.get()); }, QFileInfo(path).size());
        };
        auto transferEnded = [st, finishIfDone](const Error &e) {
            if (e.isError() && !st->error.isError())
                st->error = e;
            if (e.isError())
                st->summary.problems << e.toString();
            st->transferDone = true;
            finishIfDone();
        };

        auto transferProblem = [st](const Error &e) {
            if (!st->error.isError())
                st->error = e;
            st->summary.problems << e.toString();
        };
        switch (s.kind) {
        case StoreKind::DicomWeb: {
            Result<DicomWebEndpoint> ep = dicomWebEndpointFor(s, config);
            if (!ep.isOk())
                return job->complete(ep.error());
            auto *client = new DicomWebClient(ep.value(), job);
            // Orthanc's WADO-RS has no byte ranges, so parallelism is across objects; per series, not per instance:
            // measured on a 200-instance CT, one request for the series took 0.1 s where 200 instance requests, 6 at
            // a time, took 0.8 s (each costs Orthanc a lookup and a new answer).
            if (!sopUid.isEmpty()) {  // one instance: straight to it
                st->expected = 1;
                RetrieveCallbacks cb;
                if (arriving) {
                    cb.arriving = [arriving](const WadoPart &part, const Arrival &a) {
                        if (part.index == 0)
                            arriving(a);
                    };
                }
                if (outDir.isEmpty())  // straight into the cache on the reading thread, as for a study
                    cb.completeOnReader = [keepHere](const WadoPart &, const ByteView &whole) { return keepHere(whole); };
                cb.complete = [keep](const WadoPart &, const ByteView &whole) {
                    keep(whole);
                    return Error();
                };
                whenDone(client->retrieve(studyUid, seriesUid, sopUid, cb), job,
                         [transferEnded](const Result<RetrieveSummary> &r) { transferEnded(r.isOk() ? Error() : r.error()); });
                break;
            }
            // The whole study (or series) is asked for at once, as one stream, and its series are asked for beside
            // it (QIDO-RS): a single-series study — or any study, when maxParallel is 1 — then costs no round trip
            // before its first byte. When the answer lists several series and more than one request may run, the
            // stream gives way to one request per series, maxParallel at once (faster wherever one connection is
            // limited by its window and the round trip, or the server serves each request on one core). What
            // the stream had brought by then is kept; the series requests bring it again and it is counted once.
            // A stream the server refuses (one that serves series but not whole studies) gives way the same way.
            struct Plan
            {
                ResultJob<RetrieveSummary> *whole = nullptr;  ///< the stream, while it runs
                bool perSeries = false;       ///< the stream gave way
                bool seriesAnswered = false;
                QList<DicomRecord> series;    ///< what the QIDO-RS answer listed
                Error wholeFailed;            ///< the stream's error while the series were still being listed
            };
            auto plan = std::make_shared<Plan>();
            RetrieveCallbacks cb;
            cb.complete = [keep](const WadoPart &, const ByteView &whole) {
                keep(whole);  // to the cache while the rest streams in
                return Error();
            };
            if (outDir.isEmpty()) {  // into a pack of the cache; files in a folder are created on the pool
                cb.completeOnReader = [keepHere](const WadoPart &, const ByteView &whole) { return keepHere(whole); };
            }
            auto fetchPerSeries = [client, job, cb, transferEnded, transferProblem](const QList<DicomRecord> &list) {
                auto queue = std::make_shared<std::deque<DicomRecord>>(list.begin(), list.end());
                auto running = std::make_shared<int>(0);
                auto *next = ownedFunction<void()>(job);
                *next = [client, job, queue, running, next, cb, transferEnded, transferProblem] {
                    while (*running < client->endpoint().maxParallel && !queue->empty() && !job->isFinished()) {
                        const DicomRecord series = queue->front();
                        queue->pop_front();
                        ++*running;
                        whenDone(client->retrieve(series.identity.studyInstanceUid, series.identity.seriesInstanceUid, QString(), cb), job,
                                 [running, next, queue, transferEnded, transferProblem](const Result<RetrieveSummary> &done) {
                                     --*running;
                                     if (!done.isOk())
                                         qCWarning(lcStores) << "fetch:" << done.error().toString();
                                     if (queue->empty() && *running == 0)
                                         return transferEnded(done.isOk() ? Error() : done.error());
                                     if (!done.isOk())
                                         transferProblem(done.error());
                                     (*next)();
                                 });
                    }
                };
                (*next)();
            };
            auto giveWay = [plan, fetchPerSeries] {
                plan->perSeries = true;
                if (plan->whole)
                    plan->whole->cancel();
                plan->whole = nullptr;
                fetchPerSeries(plan->series);
            };
            plan->whole = client->retrieve(studyUid, seriesUid, QString(), cb);
            whenDone(plan->whole, job, [plan, giveWay, transferEnded](const Result<RetrieveSummary> &r) {
                if (plan->perSeries)
                    return;  // cancelled: the series requests carry on
                plan->whole = nullptr;
                if (r.isOk())
                    return transferEnded(Error());
                if (!plan->seriesAnswered) {
                    plan->wholeFailed = r.error();  // the series list decides
                    return;
                }
                if (plan->series.isEmpty())
                    return transferEnded(r.error());
                qCWarning(lcStores) << "fetch: asked series by series after" << r.error().toString();
                giveWay();
            });
            DicomQuery q;
            q.level = QueryLevel::Series;
            q.studyInstanceUid = studyUid;
            q.seriesInstanceUid = seriesUid;
            whenDone(client->search(q), job, [client, st, plan, giveWay, transferEnded](const Result<QList<DicomRecord>> &r) {
                plan->seriesAnswered = true;
                if (r.isOk())
                    plan->series = r.value();
                else  // the stream decides: it fails too if the server is unreachable or refuses us
                    qCWarning(lcStores) << "fetch: the series could not be listed:" << r.error().toString();
                for (const DicomRecord &series : plan->series)
                    st->expected += std::max(0, series.relatedInstances);
                if (plan->wholeFailed.isError()) {
                    if (plan->series.isEmpty())
                        return transferEnded(plan->wholeFailed);
                    qCWarning(lcStores) << "fetch: asked series by series after" << plan->wholeFailed.toString();
                    return giveWay();
                }
                if (plan->whole && plan->series.size() >= 2 && client->endpoint().maxParallel >= 2)
                    giveWay();  // otherwise the stream brings it all
            });
            break;
        }
        case StoreKind::Dimse: {
            Result<DimseEndpoint> ep = dimseEndpointFor(s, config);
            if (!ep.isOk())
                return job->complete(ep.error());
            auto *client = new DimseClient(ep.value(), job);
            // C-GET lands files in a private folder as they arrive (DCMTK writes them as they stream in).
            auto tmp = std::make_shared<QTemporaryDir>(outDir.isEmpty() ? QDir::tempPath() + QStringLiteral("/spectrum-get-XXXXXX")
                                                                        : QDir(outDir).filePath(QStringLiteral(".incoming-XXXXXX")));
            if (!tmp->isValid())
                return job->complete(Error(ErrorCode::Io, QStringLiteral("cannot make a folder for incoming instances")));
            // Posted from DCMTK's thread: delivered only while the job lives.
            std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(job);
            // Each file is checked and moved or copied (in the kernel) into place; never read whole into memory.
            auto *get = client->get(studyUid, seriesUid, sopUid, tmp->path(), [toJob, keepFile](const ReceivedInstance &i) -> Error {
                toJob->post([keepFile, path = i.path] { keepFile(path); });
                return Error();
            });
            QObject::connect(get, &Job::progress, job, [job, st](qint64 done, qint64 total) {
                st->expected = int(total);
                Q_UNUSED(done)
                Q_UNUSED(job)
            });
            // The keeps were posted to this thread before the job's end was: they are pending by the time it is seen.
            whenDone(get, job, [tmp, transferEnded](const Result<RetrieveCount> &r) { transferEnded(r.isOk() ? Error() : r.error()); });
            break;
        }
        case StoreKind::Blobd: {
            Result<BlobEndpoint> ep = blobEndpointFor(s, config);
            if (!ep.isOk())
                return job->complete(ep.error());
            auto *client = new BlobClient(ep.value(), job);
            RemoteQuery rq;
            rq.studyInstanceUid = studyUid;
            rq.seriesInstanceUid = seriesUid;
            rq.sopInstanceUid = sopUid;
            whenDone(client->list(rq), job, [client, job, st, keep, transferEnded](const Result<QList<RemoteBlobInfo>> &r) {
                if (!r.isOk())
                    return transferEnded(r.error());
                st->expected = int(r.value().size());
                if (r.value().isEmpty())
                    return transferEnded(Error(ErrorCode::NotFound, QStringLiteral("not there")));
                auto queue = std::make_shared<std::deque<RemoteBlobInfo>>(r.value().begin(), r.value().end());
                auto *next = ownedFunction<void()>(job);
                *next = [client, job, queue, next, keep, transferEnded] {
                    if (queue->empty() || job->isFinished())
                        return transferEnded(Error());
                    const RemoteBlobInfo b = queue->front();
                    queue->pop_front();
                    auto sink = std::make_shared<std::unique_ptr<BufferSink>>();
                    auto *pull = client->pull(b.key, [sink](const RemoteBlobInfo &, qint64 begin, qint64 end) -> Result<ByteSink *> {
                        *sink = std::make_unique<BufferSink>(end - begin);
                        if (!(*sink)->isValid())
                            return Error(ErrorCode::DiskFull, QStringLiteral("cannot hold %1 bytes").arg(end - begin));
                        return sink->get();
                    });
                    whenDone(pull, job, [sink, keep, next](const Result<PullResult> &pr) {
                        if (pr.isOk())
                            keep((*sink)->view());
                        else
                            qCWarning(lcStores) << "fetch:" << pr.error().toString();
                        (*next)();
                    });
                };
                (*next)();
            });
            break;
        }
        case StoreKind::Local:
            return job->complete(Error(ErrorCode::InvalidArgument, QStringLiteral("store '%1' is this workstation's own: nothing to fetch").arg(s.name)));
        }
    });
}

ResultJob<ExportSummary> *StoreRegistry::exportDerivedSeries(const QString &name, const QStringList &keys, const FilterChain &chain,
                                                             const Derivation &naming)
{
    Error e;
    store(name, &e);
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
    const StoreConfig *found = store(name, &e);
    if (e.isError())
        return failedJob<ExportSummary>(e);
    const StoreConfig s = *found;
    const StoreConfigFile config = m_config;
    std::shared_ptr<FileStore> cache = m_cache;
    return new CallbackJob<ExportSummary>([s, config, cache, files](CallbackJob<ExportSummary> *job) {
        switch (s.kind) {
        case StoreKind::Dimse: {
            Result<DimseEndpoint> ep = dimseEndpointFor(s, config);
            if (!ep.isOk())
                return job->complete(ep.error());
            auto *client = new DimseClient(ep.value(), job);
            whenDone(client->store(files), job, [job](const Result<StoreCount> &r) {
                if (!r.isOk())
                    return job->complete(r.error());
                ExportSummary out;
                out.stored = r.value().stored;
                out.failed = r.value().failed;
                job->complete(out);
            });
            return;
        }
        case StoreKind::DicomWeb: {
            Result<DicomWebEndpoint> ep = dicomWebEndpointFor(s, config);
            if (!ep.isOk())
                return job->complete(ep.error());
            ExportSummary pre;
            QList<ByteView> instances;
            for (const QString &f : files) {
                QFile file(f);
                if (!file.open(QIODevice::ReadOnly)) {
                    pre.failed.append({f, file.errorString()});
                    continue;
                }
                instances << ByteView(file.readAll());
            }
            if (instances.isEmpty())
                return job->complete(pre);
            auto *client = new DicomWebClient(ep.value(), job);
            whenDone(client->store(instances), job, [job, pre](const Result<StowResult> &r) {
                if (!r.isOk())
                    return job->complete(r.error());
                ExportSummary out = pre;
                out.stored = r.value().stored;
                for (const auto &[uid, reason] : r.value().failed)
                    out.failed.append({uid, QStringLiteral("refused, reason 0x%1").arg(reason, 4, 16, QLatin1Char('0'))});
                if (r.value().unaccounted() > 0)
                    out.failed.append({QStringLiteral("(%1 instance(s))").arg(r.value().unaccounted()), QStringLiteral("not accepted and not named by the server (not DICOM?)")});
                job->complete(out);
            });
            return;
        }
        case StoreKind::Blobd:
        case StoreKind::Local: {
            // Keyed by SOP Instance UID, as the workstation's cache keys instances.
            std::shared_ptr<FileStore> target = cache;
            if (s.kind == StoreKind::Local && !s.path.isEmpty()) {
                Result<std::unique_ptr<FileStore>> opened = FileStore::open(s.path, 0);
                if (!opened.isOk())
                    return job->complete(opened.error());
                target = std::shared_ptr<FileStore>(opened.takeValue());
            }
            std::unique_ptr<BlobClient> remote;
            if (s.kind == StoreKind::Blobd) {
                Result<BlobEndpoint> ep = blobEndpointFor(s, config);
                if (!ep.isOk())
                    return job->complete(ep.error());
                remote = std::make_unique<BlobClient>(ep.value());
            } else if (!target) {
                return job->complete(Error(ErrorCode::NotFound, QStringLiteral("no workstation cache is open")));
            }
            ExportSummary out;
            for (const QString &f : files) {
                QFile file(f);
                if (!file.open(QIODevice::ReadOnly)) {
                    out.failed.append({f, file.errorString()});
                    continue;
                }
                const ByteView bytes(file.readAll());
                Result<DicomIdentity> id = readDicomIdentity(bytes);
                if (!id.isOk() || !isValidUid(id.value().sopInstanceUid)) {
                    out.failed.append({f, id.isOk() ? QStringLiteral("no SOP Instance UID") : id.error().toString()});
                    continue;
                }
                Error err;
                if (remote) {
                    err = runSync(remote->push(id.value().sopInstanceUid, bytes)).error();
                } else {
                    Result<BlobWriterPtr> w = runSync(target->reserve(id.value().sopInstanceUid, bytes.size()));
                    err = w.isOk() ? w.value()->writeAt(0, bytes.data(), bytes.size()) : w.error();
                    if (!err.isError())
                        err = runSync(target->commit(w.value())).error();
                }
                if (err.isError())
                    out.failed.append({f, err.toString()});
                else
                    out.stored << id.value().sopInstanceUid;
            }
            return job->complete(out);
        }
        }
    });
}

} // namespace spectrum
