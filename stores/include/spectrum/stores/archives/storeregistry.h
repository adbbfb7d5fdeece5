// SPDX-License-Identifier: Apache-2.0
#pragma once
// StoreRegistry: every configured store behind one face — test a connection, search them all at once and merge
// the answers, fetch a study from one of them into the workstation's cache (or a folder), send files to one.
//
// A study found in several stores is one hit with several locations — unless the stores disagree on whose it is
// (another Patient ID for the same Study Instance UID): then the hits stay apart and both carry the conflict,
// never merged silently. A fetch keeps only instances of the study it asked for, of the patient the study
// belongs to; anything else is counted and dropped.

#include "spectrum/core/dicomquery.h"
#include "spectrum/core/resultjob.h"
#include "spectrum/imaging/filters/bandprocessor.h"
#include "spectrum/imaging/documents/derivedinstance.h"
#include "spectrum/stores/archives/archive.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QHash>
#include <QObject>
#include <QPointer>

#include <functional>
#include <memory>

namespace spectrum {

class FileStore;
struct DicomWebEndpoint;
struct DimseEndpoint;
struct BlobEndpoint;
class StorageScp;

struct StudyHit
{
    DicomRecord study;
    QStringList stores;     ///< names of the stores that hold it
    QStringList conflicts;  ///< human-readable: which stores disagree, and how
};

/// An instance a PACS pushed to our Storage SCP, into the cache: it must carry the SOP Instance UID it was sent
/// as (the key); it is copied in inside the kernel and indexed; the received file is gone afterwards. Runs on any
/// thread (the Storage SCP calls it on its association's).
Error keepReceivedInstance(FileStore &cache, const QString &path, const QString &announcedSopInstanceUid);

/// Endpoints for a configured store, with its secrets revealed (in memory only).
Result<DicomWebEndpoint> dicomWebEndpointFor(const StoreConfig &store, const StoreConfigFile &config);
Result<DimseEndpoint> dimseEndpointFor(const StoreConfig &store, const StoreConfigFile &config);
Result<BlobEndpoint> blobEndpointFor(const StoreConfig &store, const StoreConfigFile &config);

class StoreRegistry : public QObject
{
    Q_OBJECT
public:
    /// `cache` is the workstation's disk cache: the "local" store and where fetches land. May be null for a
    /// registry that only searches remote stores.
    StoreRegistry(StoreConfigFile config, std::shared_ptr<FileStore> cache, QObject *parent = nullptr);
    ~StoreRegistry() override;

    const StoreConfigFile &config() const { return m_config; }
    /// Replaces the configuration; jobs already started keep the one they began with.
    void setConfig(const StoreConfigFile &config);

    /// This workstation's Storage SCP, where stores that retrieve by C-MOVE have the PACS send (their fetches
    /// claim what they asked for as it lands). Without one, such a fetch listens on the workstation's AE title and
    /// port for as long as it runs (the command line).
    void setMoveDestination(StorageScp *scp);
    /// `stores` (names) nearest first, as each archive says (Archive::reach(): a folder on this machine, the
    /// cluster, the hospital's archives), equally near ones in the configuration's order; names not configured
    /// and stores nothing is fetched from (the cache itself) are left out. Where a study held in several places
    /// is opened from.
    QStringList nearestFirst(const QStringList &stores) const;

    /// "Test connection": C-ECHO, one QIDO request, a blobd listing, or opening the local store.
    ResultJob<Done> *test(const QString &name);
    /// Searches `names` (all configured stores when empty) at once; storeAnswered() as each answers. Fails only
    /// when every store failed.
    ResultJob<QList<StudyHit>> *findStudies(const DicomQuery &query, const QStringList &names = {});
    /// Fetches a study into the cache, or into `outDir` as SOP_INSTANCE_UID.dcm files when it is not empty.
    /// progress(instances, total when known); instanceFetched() per instance. Only whole, checked instances are
    /// kept; the job fails when none could be, and lists the problems otherwise.
    ResultJob<FetchSummary> *fetchStudy(const QString &name, const QString &studyUid, const FetchOptions &options = FetchOptions());
    /// One series into the cache, as one streaming request where the store allows (WADO-RS of the series, C-GET of
    /// it, blobd pulls); instanceFetched() per instance as it is kept.
    ResultJob<FetchSummary> *fetchSeries(const QString &name, const QString &studyUid, const QString &seriesUid);
    /// One instance into the cache (WADO-RS of the instance, C-GET of it, or a blobd pull). `options.arriving`,
    /// when set, sees the instance while it streams in (DICOMweb; C-GET and blobd pulls do not call it: their
    /// instances are seen once cached).
    ResultJob<FetchSummary> *fetchInstance(const QString &name, const QString &studyUid, const QString &seriesUid, const QString &sopUid,
                                           const FetchOptions &options = FetchOptions());
    /// What a store holds of one study: its series and their instances in order (keys are SOP Instance UIDs, the
    /// keys fetched instances get in the cache), without fetching any. QIDO-RS series and instances, C-FIND series
    /// and images, a blobd listing, or the cache's own index.
    ResultJob<StudySummary> *listStudy(const QString &name, const QString &studyUid);
    /// A first look at a study on an archive, much quicker than listing all of it: its first series (by Series
    /// Number) with only the instance a stack opens at — Instance Number n / 2 + 1 of its n — so that it can be
    /// fetched and shown while listStudy runs. Two small queries (series, then that one instance). NotFound when
    /// the series has no such number (then wait for the listing); Unsupported for stores that list at once
    /// (blobd, local).
    ResultJob<StudySummary> *firstLook(const QString &name, const QString &studyUid);
    /// "Send to archive": the cached instances `keys` (one series, in order) through `chain`, as one new derived
    /// series (derivedinstance.h: same patient and study, new UIDs, DERIVED\\SECONDARY, the chain named in the
    /// Derivation Description, Source Image Sequence) sent to store `name`. progress(done, total) while the
    /// instances are made; the result says per instance what was stored and what failed. `naming` gives the new
    /// series its number and description (derivedinstance.h's defaults when left empty). What the archive stored
    /// is kept in the cache too, so the derived series is in the study here at once.
    ResultJob<ExportSummary> *exportDerivedSeries(const QString &name, const QStringList &keys, const FilterChain &chain,
                                                  const Derivation &naming = Derivation());
    /// New instances of ours — (SOP Instance UID, Part 10 bytes): findings as reports, key objects, presentation
    /// states — kept in the cache at once (they are in the open study from then on, whatever the archive says),
    /// then sent to store `name` (STOW-RS, C-STORE, blobd push); an empty `name` or the local store: the cache alone.
    ResultJob<ExportSummary> *storeNewInstances(const QString &name, const QList<QPair<QString, QByteArray>> &instances);
    /// Sends DICOM files to a store (STOW-RS, C-STORE, blobd push, or the local cache).
    ResultJob<ExportSummary> *exportFiles(const QString &name, const QStringList &files);

Q_SIGNALS:
    void storeAnswered(const QString &store, int studies, const spectrum::Error &error);
    /// An instance was kept in the cache (`identity`: as its header says; `bytes`: its size).
    void instanceFetched(const QString &sopInstanceUid, qint64 bytes, const spectrum::DicomIdentity &identity);
    /// Just before instanceFetched(), when the instance was whole in memory on its way into the cache: its bytes
    /// (the same memory that was written; holding the view keeps it), for whoever shows it — nothing needs to read
    /// it back. Not for instances that arrived as files (C-GET).
    void instanceBytes(const QString &sopInstanceUid, const spectrum::ByteView &bytes);

private:
    /// The archive of store `name`, or null with why.
    Archive *archive(const QString &name, Error *error) const;
    /// One archive per configured store (the old ones retire).
    void rebuild();
    ResultJob<FetchSummary> *fetch(const QString &name, const QString &studyUid, const QString &seriesUid, const QString &sopUid, const FetchOptions &options);

    StoreConfigFile m_config;
    std::shared_ptr<FileStore> m_cache;
    QHash<QString, Archive *> m_archives;  ///< by store name; children of the registry
    QPointer<StorageScp> m_moveDestination;
};

} // namespace spectrum
