// SPDX-License-Identifier: Apache-2.0
#pragma once
// Workstation: what the GUI shows, without widgets — the local disk cache, the demo archive on first start,
// and the study list kept current as blobs arrive. Lives on the GUI thread; all work runs in jobs.

#include "viewer/imagememorycache.h"

#include "spectrum/core/jobtracker.h"
#include "spectrum/imaging/demostudies.h"
#include "spectrum/stores/blobs/cacheshare.h"
#include "spectrum/stores/exchange/dicomimport.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/exchange/workstationservice.h"
#include "spectrum/stores/reading/savedsearch.h"
#include "spectrum/stores/exchange/listenaddress.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/reading/studycatalog.h"
#include "spectrum/transfer/dimse.h"

#include <QObject>
#include <QFileSystemWatcher>
#include <QTimer>

#include <functional>
#include <memory>

namespace spectrum {

class PriorPrefetcher;
class SavedSearchRunner;
class StoreRegistry;

class Workstation : public QObject
{
    Q_OBJECT
public:
    struct Options
    {
        QString cacheDirectory;        ///< the FileStore root
        qint64 diskBudgetBytes = 0;
        /// Decoded images kept in memory by every open study together (ImageMemoryCache).
        qint64 memoryBudgetBytes = qint64(1024) * 1024 * 1024;
        bool seedDemoWhenEmpty = true; ///< a fresh workstation gets the demo studies
        DemoOptions demo;
        /// The Storage SCP that accepts studies a PACS pushes (C-STORE, or C-MOVE to us); port 0: none.
        QString storageAeTitle = QStringLiteral("SPECTRUM");
        quint16 storagePort = 0;
        /// The archives the hospital connected (spectrum-cli stores add …); searched and opened from the GUI.
        StoreConfigFile stores;
        /// Follow this store configuration file: a store added by `spectrum-cli stores add` while the workstation
        /// runs is there without a restart. Empty: the configuration changes only through setStoreConfig().
        QString storesFile;
        /// Listen for pushed studies (the Storage SCP, on the configuration's AE title and port) as soon as a store
        /// configuration exists, and follow changes to them.
        bool listenWhenConfigured = false;
        /// Fetch the comparable priors of studies opened or pushed here, in the background (prefetcher()).
        bool prefetchPriors = true;
        /// The saved searches (savedSearches()); those that run every N minutes do while the workstation runs.
        SavedSearches searches;
        /// Where setSavedSearches() writes them (empty: not kept).
        QString searchesFile;
        /// Why that file could not be read (it is then never overwritten: the reader's searches in it stay).
        Error searchesFileError;
    };

    explicit Workstation(Options options, QObject *parent = nullptr);
    ~Workstation() override;

    /// Opens the cache on the pool (replaying its index can take a while for a big cache), then loads the
    /// studies, seeding the demo archive first into an empty cache. Emits started() or errorOccurred().
    void start();
    bool isStarted() const { return m_store != nullptr; }

    BlobStore *localStore() const { return m_store.get(); }
    FileStore *cache() const { return m_store.get(); }
    /// Decoded images in memory, shared by every open study; there from construction.
    ImageMemoryCache *images() const { return m_images.get(); }
    /// Every long-running piece of work the reader should see (studies arriving, sends): the transfers panel and
    /// the status bar follow it.
    JobTracker *jobs() const { return m_jobs.get(); }
    /// Every configured store, the cache included; null until started().
    StoreRegistry *registry() const { return m_registry.get(); }
    /// Fetches the priors of studies opened (MainWindow adds them) and pushed here; null until started(), or
    /// when Options::prefetchPriors is off.
    PriorPrefetcher *prefetcher() const { return m_prefetcher.get(); }
    /// Runs the saved searches, when asked and on their timers, into the prefetcher; null until started().
    SavedSearchRunner *savedSearches() const { return m_searchRunner.get(); }
    /// New saved searches: kept in Options::searchesFile (an error, and nothing changed, when it cannot be
    /// written), and run on their timers from now on.
    Error setSavedSearches(const SavedSearches &searches);
    const SavedSearches &savedSearchList() const { return m_options.searches; }
    /// Saves `search` (replacing the one of its name) into the file as it is now — what was written in it by
    /// hand meanwhile stays — and runs the result on its timers.
    Error putSavedSearch(const SavedSearch &search);
    /// Forgets the saved search of that name, the same way; NotFound when there is none.
    Error removeSavedSearch(const QString &name);
    const StoreConfigFile &storeConfig() const { return m_options.stores; }
    /// A changed configuration (the stores dialog, or the followed file): searches and fetches from now on use it,
    /// and the Storage SCP follows the workstation's AE title and port in it.
    void setStoreConfig(const StoreConfigFile &config);
    /// The studies in the cache, newest first, as its index counts them (FileStore::studies()): identity,
    /// instance count and bytes, and the series with their fields and instance counts
    /// (SeriesSummary::listedInstances) — but no instances, so that a cache of a million instances lists in
    /// milliseconds. loadStudy() reads a study's instances (workstationstudies.cpp).
    const QList<StudySummary> &studies() const { return m_studies; }
    const Options &options() const { return m_options; }
    /// A study of studies() by UID or by demo alias ("demo-ct"); nullptr if unknown.
    const StudySummary *findStudy(const QString &uidOrAlias) const;
    /// `study` (one of studies()) with its instances, read from the cache, and kept for loadedStudy(). NotFound
    /// when the cache no longer holds it; Corrupt when the patient read is not plainly the list's
    /// (patientMismatch()).
    ResultJob<StudySummary> *loadStudy(const StudySummary &study);
    /// The last loadStudy() of (study UID, patient ID), while the list still counts that study the same
    /// (instances, bytes, and whether another patient claims its UID); nullptr otherwise. Valid until the list
    /// changes or another study is read: copy what is kept.
    const StudySummary *loadedStudy(const QString &studyUid, const QString &patientId) const;
    /// True until the demo is seeded and a study list that includes all of it is in.
    bool isSeeding() const { return m_seedJob != nullptr || m_seedingEndsAfterRefresh; }
    /// The Storage SCP listens (started with the cache when Options::storagePort is set).
    bool isListening() const;
    /// Where it listens ("127.0.0.1", or empty: every address) and why (listenaddress.h), once listening.
    const ListenAddress &listenAddress() const { return m_listenAddress; }
    /// The cache is shared read-only with the reading room (the configuration's workstation "share").
    bool isSharingCache() const;
    quint16 sharePort() const;
    /// The share speaks TLS (the workstation's certificate).
    bool isShareTls() const;
    /// Copies DICOM files, folders or a DICOMDIR's folder into the cache (DicomImport); progress and the outcome
    /// in the status messages and importFinished(). Null before started().
    DicomImport *importFiles(const QStringList &paths);
    /// "Imported 120 images of 1 study; 3 files were not DICOM and were left out".
    static QString importSummaryText(const ImportSummary &summary);

Q_SIGNALS:
    /// The cache is open; studies follow.
    void started();
    /// The cache could not be opened: the workstation cannot work (the error says why).
    void startFailed(const spectrum::Error &error);
    void studiesChanged();
    /// A line for the status bar.
    void statusMessage(const QString &message);
    /// Something went wrong that the user should know about.
    void errorOccurred(const spectrum::Error &error);
    /// The demo archive finished seeding (or failed: see errorOccurred).
    void seedingFinished();
    /// A PACS pushed an instance and it is in the cache (the study list follows through studiesChanged()).
    void instanceReceived(const QString &sopInstanceUid);
    /// The cache began or stopped being shared with the reading room, or moved to another port.
    void sharingChanged();
    /// The store configuration changed (in the dialog, or in its file under the workstation's feet).
    void storeConfigChanged();
    /// An import ended (from the GUI, or handed over by `spectrum-cli import`).
    void importFinished(const spectrum::ImportSummary &summary);

private:
    void refreshStudies();
    /// A PACS pushed `sopInstanceUid` into the cache: its study's priors are prefetched once the list has it.
    void notePushed(const QString &sopInstanceUid);
    /// The priors of the studies pushed here since the last list, to the prefetcher.
    void prefetchPriorsOfPushed();
    /// Drops the loaded studies the new list counts differently (or not at all).
    void forgetChangedLoads();
    /// `change` applied to the saved searches as the file holds them now, then kept (setSavedSearches).
    Error changeSavedSearches(const QString &verb, const std::function<Error(SavedSearches &)> &change);
    void seedDemo();
    void startListening();
    void listenOn(const ListenAddress &where);
    /// Listens, stops or restarts the Storage SCP as the options and configuration now say.
    void followListening();
    /// Shares the cache with the reading room, stops or moves, as the configuration now says (CacheShare).
    void followSharing();
    void reloadStoresFile();

    Options m_options;
    std::shared_ptr<FileStore> m_store;
    std::unique_ptr<ImageMemoryCache> m_images;
    std::unique_ptr<JobTracker> m_jobs = std::make_unique<JobTracker>();
    Job *m_openJob = nullptr;
    QList<StudySummary> m_studies;
    QTimer m_refreshTimer;  // coalesces bursts of commits into one refresh
    Job *m_seedJob = nullptr;
    Job *m_refreshJob = nullptr;
    bool m_refreshAgain = false;
    bool m_seedingEndsAfterRefresh = false;
    std::unique_ptr<StorageScp> m_scp;
    ListenAddress m_listenAddress;
    QString m_listenKey;      ///< what the Storage SCP was started from (AE, port, address, the hosts it was chosen for)
    quint64 m_listenTry = 0;  ///< the last start asked for: an older address chosen is dropped
    std::unique_ptr<CacheShare> m_share;
    std::unique_ptr<StoreRegistry> m_registry;
    std::unique_ptr<PriorPrefetcher> m_prefetcher;
    std::unique_ptr<SavedSearchRunner> m_searchRunner;
    /// Studies a PACS pushed instances of ("study UID\npatient ID"), whose priors are still to be asked for.
    QSet<QString> m_pushed;
    /// Studies whose pushes' priors were handed to the prefetcher already (once per study).
    QSet<QString> m_pushedDone;
    /// m_studies' index by "study UID\npatient ID".
    QHash<QString, int> m_listed;
    /// loadStudy()'s results by "study UID\npatient ID", the most recent last in m_loadOrder; a few kept.
    QHash<QString, StudySummary> m_loaded;
    QStringList m_loadOrder;
    std::unique_ptr<WorkstationService> m_service;  ///< what the command line hands over while this holds the cache
    QFileSystemWatcher *m_storesWatcher = nullptr;
    QByteArray m_storesFileBytes;  ///< the followed file as last read
    int m_received = 0;
};

} // namespace spectrum
