// SPDX-License-Identifier: Apache-2.0
#include "shell/workstation.h"
#include "spectrum/stores/archives/archivekind.h"

#include <QFileInfo>
#include <QDir>
#include <QFileSystemWatcher>

#include "spectrum/core/logging.h"
#include "spectrum/core/resultjob.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/stores/exchange/demoseeder.h"
#include "spectrum/stores/reading/priorprefetch.h"
#include "spectrum/stores/reading/savedsearchrunner.h"
#include "spectrum/stores/archives/storeregistry.h"

#include <QFile>
#include <QThreadPool>

namespace spectrum {

Workstation::Workstation(Options options, QObject *parent)
    : QObject(parent), m_options(std::move(options)), m_images(std::make_unique<ImageMemoryCache>(m_options.memoryBudgetBytes))
{
    m_refreshTimer.setSingleShot(true);
    m_refreshTimer.setInterval(250);
    connect(&m_refreshTimer, &QTimer::timeout, this, &Workstation::refreshStudies);
}

Workstation::~Workstation()
{
    if (m_scp)
        m_scp->stop();  // no more pushes into the store
    m_share.reset();    // no more reads by the reading room
    // Jobs on the pool use the store: stop them and let them drain before it goes away.
    if (m_openJob)
        m_openJob->cancel();
    if (m_seedJob)
        m_seedJob->cancel();
    if (m_refreshJob)
        m_refreshJob->cancel();
    m_service.reset();        // what command-line clients asked for stops (their requests are children of their sockets)
    m_searchRunner.reset();   // no more runs into the prefetcher
    m_prefetcher.reset();     // the prior being fetched stops; what is cached stays
    qDeleteAll(findChildren<DicomImport *>(Qt::FindDirectChildrenOnly));  // imports from the GUI: no next file
    // The archives go before the pool drains: a request on it waiting for something only this thread gives (an S3
    // store's new credentials) is told they will not come, rather than waited for while this thread waits for it.
    m_registry.reset();
    blockingPool()->waitForDone();
}

void Workstation::start()
{
    preloadDicomDictionary();  // while the cache opens: the first image then decodes at once
    Q_EMIT statusMessage(tr("Opening the local cache %1…").arg(m_options.cacheDirectory));
    auto *job = FileStore::openJob(m_options.cacheDirectory, m_options.diskBudgetBytes);
    m_openJob = job;
    connect(job, &Job::finished, this, [this, job] {
        m_openJob = nullptr;
        if (job->hasError()) {
            Q_EMIT startFailed(job->error());
            return;
        }
        m_store = job->result().value();
        m_registry = std::make_unique<StoreRegistry>(m_options.stores, m_store);
        if (m_options.prefetchPriors) {
            m_prefetcher = std::make_unique<PriorPrefetcher>(m_registry.get(), m_store.get());
            m_prefetcher->setCachedStudies([this] { return m_studies; });
            m_prefetcher->setBudget(m_options.diskBudgetBytes);
        }
        m_searchRunner = std::make_unique<SavedSearchRunner>(m_registry.get(), m_prefetcher.get());
        m_searchRunner->setCachedStudies([this] { return m_studies; });
        m_searchRunner->setSearches(m_options.searches);
        connect(m_searchRunner.get(), &SavedSearchRunner::ran, this, [this](const SavedSearchRun &run) {
            Q_EMIT statusMessage(run.text());
            if (run.error.isError())
                Q_EMIT errorOccurred(Error(run.error.code(), run.text()));
        });
        connect(m_store.get(), &BlobStore::blobCommitted, this, [this] { m_refreshTimer.start(); });
        connect(m_store.get(), &BlobStore::blobRemoved, this, [this] { m_refreshTimer.start(); });
        Q_EMIT started();
        if (m_options.seedDemoWhenEmpty && m_store->usage().blobs == 0)
            seedDemo();
        refreshStudies();
        startListening();
        followListening();
        followSharing();
        if (!m_options.storesFile.isEmpty()) {
            if (QFile known(m_options.storesFile); known.open(QIODevice::ReadOnly))
                m_storesFileBytes = known.readAll();  // what the options hold already
            m_storesWatcher = new QFileSystemWatcher(this);
            const QString folder = QFileInfo(m_options.storesFile).absolutePath();
            QDir().mkpath(folder);
            m_storesWatcher->addPath(folder);  // the file may not exist yet, and is replaced, not rewritten
            if (QFile::exists(m_options.storesFile))
                m_storesWatcher->addPath(m_options.storesFile);
            connect(m_storesWatcher, &QFileSystemWatcher::fileChanged, this, &Workstation::reloadStoresFile);
            connect(m_storesWatcher, &QFileSystemWatcher::directoryChanged, this, &Workstation::reloadStoresFile);
        }
        // `spectrum-cli import`, `fetch`, `prefetch` and `studies` while this workstation holds the cache are
        // handed over here.
        m_service = std::make_unique<WorkstationService>(WorkstationService::Parts{m_store.get(), m_registry.get(), m_searchRunner.get(), m_prefetcher.get(), [this] { return m_studies; }});
        if (Error e = m_service->listen(m_options.cacheDirectory); e.isError())
            Q_EMIT statusMessage(tr("The command line cannot reach this workstation: %1").arg(e.toString()));
        connect(m_service.get(), &WorkstationService::imported, this, [this](const ImportSummary &summary) {
            Q_EMIT statusMessage(importSummaryText(summary));
            Q_EMIT importFinished(summary);
        });
    });
    job->start(ExecutionPolicy::Async);
}

DicomImport *Workstation::importFiles(const QStringList &paths)
{
    if (!m_store)
        return nullptr;
    auto *import = new DicomImport(m_store.get(), paths, this);
    connect(import, &DicomImport::progress, this, [this](int done, int total) {
        if (total > 0 && (done % 25 == 0 || done == total))
            Q_EMIT statusMessage(tr("Importing: %1 of %2 files").arg(done).arg(total));
    });
    connect(import, &DicomImport::finished, this, [this, import](const ImportSummary &summary) {
        Q_EMIT statusMessage(importSummaryText(summary));
        Q_EMIT importFinished(summary);
        import->deleteLater();
    });
    import->start();
    return import;
}

QString Workstation::importSummaryText(const ImportSummary &s)
{
    QString text = tr("Imported %n image(s)", nullptr, s.imported) + tr(" of %n study(ies)", nullptr, int(s.studies.size()));
    if (!s.notDicom.isEmpty())
        text += tr("; %n file(s) were not DICOM and were left out", nullptr, int(s.notDicom.size()));
    if (!s.duplicates.isEmpty())
        text += tr("; %n file(s) held an image another file holds too, and were left out", nullptr, int(s.duplicates.size()));
    if (!s.flagged.isEmpty())
        text += tr("; %n study(ies) flagged (see the import report)", nullptr, int(s.flagged.size()));
    if (!s.failed.isEmpty())
        text += tr("; %n file(s) could not be imported (see the import report)", nullptr, int(s.failed.size()));
    if (s.cancelled)
        text += tr("; cancelled");
    return text;
}

bool Workstation::isListening() const
{
    return m_scp && m_scp->isRunning();
}

namespace {

/// What the Storage SCP's address is chosen from: a change of any of it moves the listener.
QString listenKeyOf(const QString &ae, quint16 port, const StoreConfigFile &config)
{
    QStringList hosts;
    for (const StoreConfig &s : config.stores()) {
        if (const auto node = archiveKind(s.kind()).dicomNode(s))
            hosts << node->second;
    }
    for (const auto &c : config.workstation.callers)
        hosts << c.second;
    return QStringLiteral("%1|%2|%3|%4|%5").arg(ae).arg(port).arg(config.workstation.listenAddress)
        .arg(config.workstation.acceptAnyCaller).arg(hosts.join(QLatin1Char(',')));
}

} // namespace

void Workstation::startListening()
{
    if (m_options.storagePort == 0)
        return;
    // Where the PACS reach this machine, chosen on the pool (host names are looked up), then the listener.
    const quint64 attempt = ++m_listenTry;
    m_listenKey = listenKeyOf(m_options.storageAeTitle, m_options.storagePort, m_options.stores);
    auto *job = makeJob<ListenAddress>([config = m_options.stores](const CancelToken &) -> Result<ListenAddress> { return chooseListenAddress(config); });
    whenDone(job, this, [this, attempt](const Result<ListenAddress> &chosen) {
        if (attempt != m_listenTry || m_scp || !chosen.isOk())
            return;  // another start was asked for since
        listenOn(chosen.value());
    });
}

void Workstation::listenOn(const ListenAddress &where)
{
    StorageScp::Options o;
    o.aeTitle = m_options.storageAeTitle;
    o.port = m_options.storagePort;
    o.address = where.address;
    o.directory = m_options.cacheDirectory + QStringLiteral("-incoming");
    o.certificateFile = m_options.stores.workstation.tlsCertificate;  // DICOM TLS when configured
    o.keyFile = m_options.stores.workstation.tlsKey;
    o.clientCaFile = m_options.stores.workstation.tlsClientCa;
    o.callers = WorkstationConfig::allowedCallers(m_options.stores);  // the PACS configured, and who the admin named
    o.anyCaller = m_options.stores.workstation.acceptAnyCaller;
    m_scp = std::make_unique<StorageScp>(o);
    // Runs on the association's thread: into the cache under the SOP Instance UID the content carries.
    std::shared_ptr<FileStore> store = m_store;
    m_scp->setHandler([store](const ReceivedInstance &i) { return keepReceivedInstance(*store, i.path, i.sopInstanceUid); });
    connect(m_scp.get(), &StorageScp::instanceReceived, this, [this](const ReceivedInstance &i) {
        ++m_received;
        if (m_prefetcher)
            notePushed(i.sopInstanceUid);  // its study's priors, once the study list has it
        Q_EMIT instanceReceived(i.sopInstanceUid);
        Q_EMIT statusMessage(tr("%n instance(s) received from the PACS", nullptr, m_received));
    });
    connect(m_scp.get(), &StorageScp::failed, this, &Workstation::errorOccurred);
    connect(m_scp.get(), &StorageScp::refused, this, [this](const QString &what) { Q_EMIT statusMessage(tr("Storage SCP %1").arg(what)); });
    if (Error e = m_scp->start(); e.isError()) {
        Q_EMIT errorOccurred(e.withContext(tr("the Storage SCP does not listen; pushes from the PACS will not arrive")));
        m_scp.reset();
        return;
    }
    m_listenAddress = where;
    qCInfo(lcStores).noquote() << "Storage SCP" << o.aeTitle << "listening on" << where.shown() << "port" << o.port << "—" << where.why;
    if (m_registry)
        m_registry->setMoveDestination(m_scp.get());  // fetches by C-MOVE have the PACS send here
    Q_EMIT statusMessage(tr("Listening for studies as %1 on %2 port %3%4").arg(o.aeTitle, where.shown()).arg(o.port).arg(o.certificateFile.isEmpty() ? QString() : tr(" (TLS)")));
}

void Workstation::setStoreConfig(const StoreConfigFile &config)
{
    m_options.stores = config;
    if (m_registry)
        m_registry->setConfig(config);
    if (m_scp)  // who may send follows the configuration at once
        m_scp->setCallers(WorkstationConfig::allowedCallers(config), config.workstation.acceptAnyCaller);
    followListening();
    followSharing();
    Q_EMIT storeConfigChanged();
}

void Workstation::followListening()
{
    if (!m_options.listenWhenConfigured || !m_store)
        return;
    const WorkstationConfig &w = m_options.stores.workstation;
    const bool configured = !m_options.storesFile.isEmpty() && (QFile::exists(m_options.storesFile) || !m_options.stores.systemFile().isEmpty());
    const QString key = listenKeyOf(w.aeTitle, quint16(w.storagePort), m_options.stores);
    const bool same = (m_scp || m_listenTry > 0) && key == m_listenKey;
    if (!configured || same)
        return;
    if (m_scp && m_scp->options().aeTitle == w.aeTitle && m_scp->port() == quint16(w.storagePort)) {
        // Other PACS or callers (who may call follows at once: setStoreConfig): moved only if they are reached
        // from another address than the one it listens on.
        m_listenKey = key;
        const quint64 attempt = ++m_listenTry;
        auto *job = makeJob<ListenAddress>([config = m_options.stores](const CancelToken &) -> Result<ListenAddress> { return chooseListenAddress(config); });
        whenDone(job, this, [this, attempt](const Result<ListenAddress> &chosen) {
            if (attempt != m_listenTry || !m_scp || !chosen.isOk() || chosen.value().address == m_listenAddress.address)
                return;
            if (m_registry)
                m_registry->setMoveDestination(nullptr);
            m_scp->stop();
            m_scp.reset();
            listenOn(chosen.value());
        });
        return;
    }
    if (m_scp) {
        if (m_registry)
            m_registry->setMoveDestination(nullptr);
        m_scp->stop();
        m_scp.reset();
    }
    m_options.storageAeTitle = w.aeTitle;
    m_options.storagePort = quint16(w.storagePort);
    startListening();
}

bool Workstation::isShareTls() const
{
    return m_share && m_share->isSharing() && m_share->tls();
}

bool Workstation::isSharingCache() const
{
    return m_share && m_share->isSharing();
}

quint16 Workstation::sharePort() const
{
    return m_share ? m_share->port() : 0;
}

void Workstation::followSharing()
{
    if (!m_store)
        return;
    if (!m_share)
        m_share = std::make_unique<CacheShare>(m_store.get());
    const bool was = m_share->isSharing();
    const quint16 wasPort = m_share->port();
    if (Error e = m_share->follow(m_options.stores); e.isError())
        return Q_EMIT errorOccurred(e);
    if (m_share->isSharing() && (!was || wasPort != m_share->port()))
        Q_EMIT statusMessage(tr("This workstation's cache is shared read-only with the reading room on port %1%2")
                                 .arg(m_share->port()).arg(m_share->tls() ? tr(" (TLS)") : QString()));
    else if (was && !m_share->isSharing())
        Q_EMIT statusMessage(tr("This workstation's cache is no longer shared"));
    if (was != m_share->isSharing() || wasPort != m_share->port())
        Q_EMIT sharingChanged();
}

void Workstation::reloadStoresFile()
{
    // Editors and `stores add` replace the file (a rename): watch it again each time.
    if (!m_options.storesFile.isEmpty() && QFile::exists(m_options.storesFile) && !m_storesWatcher->files().contains(m_options.storesFile))
        m_storesWatcher->addPath(m_options.storesFile);
    QFile file(m_options.storesFile);
    if (!file.open(QIODevice::ReadOnly))
        return;
    const QByteArray bytes = file.readAll();
    if (bytes == m_storesFileBytes)
        return;  // written by this workstation (the dialog), or touched without a change
    m_storesFileBytes = bytes;
    Result<StoreConfigFile> loaded = StoreConfigFile::load(m_options.storesFile);
    if (!loaded.isOk()) {
        Q_EMIT errorOccurred(loaded.error().withContext(tr("the store configuration changed but cannot be read; the last one stays in use")));
        return;
    }
    setStoreConfig(loaded.value());
    Q_EMIT statusMessage(tr("The store configuration changed: %n store(s)", nullptr, int(m_options.stores.stores().size())));
}

void Workstation::seedDemo()
{
    Q_EMIT statusMessage(tr("Preparing the demo studies…"));
    auto *job = seedDemoStudies(m_store.get(), m_options.demo);
    m_seedJob = job;
    connect(job, &Job::finished, this, [this, job] {
        m_seedJob = nullptr;
        if (job->hasError() && job->error().code() != ErrorCode::Cancelled) {
            Q_EMIT errorOccurred(job->error());
        } else if (!job->hasError()) {
            Q_EMIT statusMessage(tr("Demo studies ready: %n image(s)", nullptr, job->result().value()));
        }
        // Seeding ends for the world once a study list made after the last commit is in: whoever opens a study
        // on seedingFinished() must not see a list from half-way through (a CT with a third of its slices).
        m_seedingEndsAfterRefresh = true;
        refreshStudies();
    });
    job->start(ExecutionPolicy::Async);
}

Error Workstation::setSavedSearches(const SavedSearches &searches)
{
    for (const SavedSearch &s : searches.searches) {
        if (Error e = s.validate(); e.isError())
            return e;
    }
    if (m_options.searchesFileError.isError())
        return Error(ErrorCode::InvalidArgument, tr("not saved: %1 — mend or move that file first, so that nothing in it is lost")
                                                     .arg(m_options.searchesFileError.message()));
    if (!m_options.searchesFile.isEmpty()) {
        if (Error e = searches.save(m_options.searchesFile); e.isError())
            return e;
    }
    m_options.searches = searches;
    if (m_searchRunner)
        m_searchRunner->setSearches(searches);
    return Error();
}

Error Workstation::changeSavedSearches(const QString &verb, const std::function<Error(SavedSearches &)> &change)
{
    // The file as it is now, so that what was written in it by hand meanwhile stays.
    SavedSearches all = m_options.searches;
    if (!m_options.searchesFile.isEmpty() && !m_options.searchesFileError.isError()) {
        Result<SavedSearches> now = SavedSearches::load(m_options.searchesFile);
        if (!now.isOk())
            return Error(now.error().code(), tr("not %1: %2 — mend or move that file first, so that nothing in it is lost").arg(verb, now.error().message()));
        all = now.value();
    }
    if (Error e = change(all); e.isError())
        return e;
    return setSavedSearches(all);
}

Error Workstation::putSavedSearch(const SavedSearch &search)
{
    return changeSavedSearches(tr("saved"), [&](SavedSearches &all) { return all.put(search); });
}

Error Workstation::removeSavedSearch(const QString &name)
{
    return changeSavedSearches(tr("deleted"), [&](SavedSearches &all) {
        return all.remove(name) ? Error() : Error(ErrorCode::NotFound, tr("no saved search is named \"%1\"").arg(name));
    });
}

} // namespace spectrum
