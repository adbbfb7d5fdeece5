// SPDX-License-Identifier: Apache-2.0
#include "shell/mainwindow.h"

#include "viewer/filterpanel.h"
#include "findings/findingspanel.h"
#include "viewer/tagviewer.h"
#include "stores/storesdialog.h"
#include "stores/transferspanel.h"
#include "browser/studybrowser.h"
#include "viewer/studyviewer.h"

#include "spectrum/core/heaptrim.h"
#include "spectrum/core/audit/audit.h"
#include "spectrum/stores/audit/auditsubjects.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/reading/savedsearchrunner.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/reading/priorprefetch.h"
#include "spectrum/stores/reading/studystreamer.h"

#include <QAction>
#include <QActionGroup>

#include <tuple>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QFormLayout>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QPixmapCache>
#include <QTimer>
#include <QApplication>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QFileDialog>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QTextBrowser>
#include <QDateTime>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace spectrum {

MainWindow::MainWindow(Workstation *workstation, QWidget *parent)
    : QMainWindow(parent), m_workstation(workstation), m_browser(new StudyBrowser(workstation)), m_filters(new FilterPanel), m_tags(new TagViewer),
      m_transfers(new TransfersPanel(workstation->jobs())), m_transferLabel(new QLabel), m_tabs(new QTabWidget),
      m_cacheLabel(new QLabel)
{
    m_hangingProtocols = new HangingProtocols(this, workstation);
    setWindowTitle(tr("Spectrum"));
    setAcceptDrops(true);  // DICOM files and folders dropped on the window are imported
    resize(1400, 900);

    connect(m_browser, &StudyBrowser::openRequested, this, &MainWindow::openFound);
    connect(m_browser, &StudyBrowser::prefetchRequested, this, &MainWindow::prefetch);
    // A saved search that prefetches, run from the browser: what it listed goes to the prefetcher.
    connect(m_browser, &StudyBrowser::savedSearchListed, this, [this](const SavedSearch &search, const QList<StudyHit> &hits) {
        if (SavedSearchRunner *runner = m_workstation->savedSearches())
            statusBar()->showMessage(runner->prefetchFor(search, hits).text(), 10000);
    });
    m_tabs->addTab(m_browser, tr("Studies"));
    m_tabs->setTabsClosable(true);
    m_tabs->setDocumentMode(true);
    // Many studies open: their tabs narrow (names shortened, whole in the tooltip) rather than scroll the study list
    // out of sight.
    m_tabs->setUsesScrollButtons(false);
    m_tabs->setElideMode(Qt::ElideRight);
    m_tabs->tabBar()->setTabButton(0, QTabBar::RightSide, nullptr);  // the study list cannot be closed
    m_tabs->tabBar()->setTabButton(0, QTabBar::LeftSide, nullptr);
    connect(m_tabs, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTab);
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        StudyViewer *v = currentViewer();
        if (m_cineAction)
            m_cineAction->setChecked(v && v->cine()->isPlaying());
        if (m_mprAction)
            m_mprAction->setChecked(v && v->isMprShown());
        showFiltersOf(v);
        showTagsOfImageInView();
        m_findingsPanel->setViewer(v);
    });
    setCentralWidget(m_tabs);
    statusBar()->addPermanentWidget(m_cacheLabel);
    m_signInLabel = new QLabel(this);
    m_signInLabel->setObjectName(QStringLiteral("signInLabel"));
    statusBar()->addPermanentWidget(m_signInLabel);
    showSignIn();
    connect(m_workstation, &Workstation::started, this, &MainWindow::showSignIn);  // its stores, and their sign-ins, come then
    connect(m_workstation, &Workstation::started, this, &MainWindow::applySignInPolicy);
    applySignInPolicy();  // the workstation may have started before the window was made

    // The filter panel shows and edits the chain of the study in view (applied to its rows as they arrive too).
    auto *filterDock = new QDockWidget(tr("Filters"), this);
    filterDock->setObjectName(QStringLiteral("filterDock"));
    filterDock->setWidget(m_filters);
    addDockWidget(Qt::RightDockWidgetArea, filterDock);
    filterDock->hide();
    connect(m_filters, &FilterPanel::chainChanged, this, [this](const FilterChain &chain, const QString &description) {
        StudyViewer *viewer = currentViewer();
        if (!viewer)
            return;
        viewer->settings()->setFilterState({m_filters->specs(), m_filters->isApplied(), m_filters->presetName()});
        viewer->settings()->setFilters(chain, description);
    });
    m_filterDock = filterDock;

    // The elements of the image in view, following it while shown.
    auto *tagDock = new QDockWidget(tr("DICOM tags"), this);
    tagDock->setObjectName(QStringLiteral("tagDock"));
    tagDock->setWidget(m_tags);
    addDockWidget(Qt::RightDockWidgetArea, tagDock);
    tagDock->hide();
    m_tagDock = tagDock;
    connect(tagDock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible)
            showTagsOfImageInView();
    });

    // The study's findings: drawn here, read from its reports, and what could not be drawn.
    m_findingsPanel = new FindingsPanel;
    m_findingsDock = new QDockWidget(tr("Findings"), this);
    m_findingsDock->setObjectName(QStringLiteral("findingsDock"));
    m_findingsDock->setWidget(m_findingsPanel);
    addDockWidget(Qt::RightDockWidgetArea, m_findingsDock);
    m_findingsDock->hide();
    connect(m_findingsPanel, &FindingsPanel::applyRequested, this, [this](const QString &uid) {
        if (StudyViewer *v = currentViewer(); v && !v->applyPresentationState(uid))
            statusBar()->showMessage(tr("None of the images that presentation state applies to is in this study's list."), 5000);
    });
    connect(m_findingsPanel, &FindingsPanel::goToRequested, this, [this](const QString &sop, int frame) {
        if (StudyViewer *v = currentViewer(); v && !v->showInstance(sop, frame))
            statusBar()->showMessage(tr("That image is not in this study's list."), 5000);
    });

    auto *transferDock = new QDockWidget(tr("Transfers"), this);
    transferDock->setObjectName(QStringLiteral("transferDock"));
    transferDock->setWidget(m_transfers);
    addDockWidget(Qt::RightDockWidgetArea, transferDock);
    transferDock->hide();
    m_transferDock = transferDock;
    statusBar()->addPermanentWidget(m_transferLabel);
    connect(m_workstation->jobs(), &JobTracker::updated, m_transferLabel,
            [label = m_transferLabel, jobs = m_workstation->jobs()] { label->setText(jobs->summary()); });

    buildMenus();

    connect(m_workstation, &Workstation::studiesChanged, this, &MainWindow::onStudiesChanged);
    connect(m_workstation, &Workstation::sharingChanged, this, &MainWindow::updateCacheLabel);
    updateCacheLabel();  // a workstation started before this window
    // While studies stream in, the cache's count follows them (twice a second at most), not only their listings.
    auto *cacheLabelDue = new QTimer(this);
    cacheLabelDue->setSingleShot(true);
    cacheLabelDue->setInterval(500);
    connect(cacheLabelDue, &QTimer::timeout, this, &MainWindow::updateCacheLabel);
    connect(m_workstation->jobs(), &JobTracker::updated, cacheLabelDue, [cacheLabelDue] {
        if (!cacheLabelDue->isActive())
            cacheLabelDue->start();
    });
    connect(m_workstation, &Workstation::started, this, &MainWindow::configurePrefetcher);
    if (m_workstation->isStarted())
        configurePrefetcher();
    connect(m_workstation, &Workstation::statusMessage, this, [this](const QString &m) { statusBar()->showMessage(m, 8000); });
    connect(m_workstation, &Workstation::errorOccurred, this, [this](const Error &e) {
        statusBar()->showMessage(tr("Error: %1").arg(e.toString()));
    });
    onStudiesChanged();
}

void MainWindow::showTagsOfImageInView()
{
    if (!m_tagDock || !m_tagDock->isVisible())
        return;
    StudyViewer *viewer = currentViewer();
    QString key;
    if (viewer && viewer->seriesIndex() >= 0 && viewer->sliceIndex() >= 0)
        key = viewer->activeStudy().series[viewer->seriesIndex()].instances.value(viewer->sliceIndex()).key;
    m_tags->showInstance(m_workstation->localStore(), key);
}

void MainWindow::onStudiesChanged()
{
    openImportedWhenListed();
    // Series and images that reached the cache since a study was opened (a derived series just sent, a PACS's or a
    // modality's push, an import still landing) join it.
    for (int i = 1; i < m_tabs->count(); ++i)
        if (auto *viewer = qobject_cast<StudyViewer *>(m_tabs->widget(i)))
            followCache(viewer);
    updateCacheLabel();
}

void MainWindow::followCache(StudyViewer *viewer)
{
    const StudySummary *local = m_workstation->findStudy(viewer->study().identity.studyInstanceUid);
    if (!local || local->identity.patientId != viewer->study().identity.patientId || local->identityConflict)
        return;
    // Read once per change of the list's counts: what the viewer leaves out (rejected images) never asks again.
    const qint64 counted = qint64(local->instanceCount) * 1000 + local->series.size();
    if (viewer->property("spectrumFollowedCount").toLongLong() == counted || !hasMoreThan(*local, viewer->study()))
        return;
    viewer->setProperty("spectrumFollowedCount", counted);
    addArrivedSeries(viewer, *local);
}

void MainWindow::updateCacheLabel()
{
    BlobStore *store = m_workstation->localStore();
    if (!store)
        return;
    const StoreUsage u = store->usage();
    QString text = tr("Local cache: %1 images, %2 MB").arg(u.blobs).arg(u.bytes / 1e6, 0, 'f', 0);
    // Whether the others of the reading room read from it (the configuration's workstation share).
    if (m_workstation->isSharingCache())
        text += tr(" · shared with the reading room on port %1%2").arg(m_workstation->sharePort()).arg(m_workstation->isShareTls() ? tr(" (TLS)") : QString());
    m_cacheLabel->setText(text);
    m_cacheLabel->setToolTip(m_workstation->isSharingCache()
                                 ? tr("The other workstations of the reading room read this cache (read-only, with the room's token) before asking the archives. "
                                      "spectrum-cli stores share changes it; the workstation follows its configuration file.")
                                 : tr("Not shared with the reading room (spectrum-cli stores share --port P --token-file F shares it read-only)."));
}

void MainWindow::showFilterPanel()
{
    m_filterDock->show();
}

QTableView *MainWindow::studyTable() const
{
    return m_browser->table();
}

StudyViewer *MainWindow::viewerOf(const QString &studyUid, const QString &patientId) const
{
    for (int i = 1; i < m_tabs->count(); ++i) {
        auto *viewer = qobject_cast<StudyViewer *>(m_tabs->widget(i));
        if (viewer && viewer->study().identity.studyInstanceUid == studyUid && viewer->study().identity.patientId == patientId)
            return viewer;
    }
    return nullptr;
}

void MainWindow::openFound(const FoundStudy &found)
{
    if (StudyViewer *open = viewerOf(found.identity.studyInstanceUid, found.identity.patientId)) {
        m_tabs->setCurrentWidget(open);
        return;
    }
    if (found.isCached() || found.stores.isEmpty()) {
        for (const StudySummary &s : m_workstation->studies()) {
            if (s.identity.studyInstanceUid == found.identity.studyInstanceUid && s.identity.patientId == found.identity.patientId) {
                openFromCache(s);
                return;
            }
        }
    }
    // From the nearest place that holds it: a folder here, the cluster, then the hospital's archives.
    const QStringList nearest = m_workstation->registry() ? m_workstation->registry()->nearestFirst(found.stores) : QStringList();
    if (nearest.isEmpty()) {
        statusBar()->showMessage(found.stores.isEmpty() ? tr("Cannot open the study: no configured store holds it")
                                                        : tr("Cannot open the study: %1 cannot be fetched from").arg(found.stores.join(QStringLiteral(", "))));
        return;
    }
    openRemoteStudy(nearest.first(), found.identity.studyInstanceUid, nearest.mid(1), found.instances);
}

void MainWindow::prefetch(const QList<FoundStudy> &studies)
{
    StoreRegistry *registry = m_workstation->registry();
    if (!registry)
        return;
    for (const FoundStudy &f : studies) {
        const QStringList nearest = registry->nearestFirst(f.stores);
        if (nearest.isEmpty())
            continue;
        auto *streamer = new StudyStreamer(registry, m_workstation->cache(), nearest.first(), f.identity.studyInstanceUid, this);
        streamer->setFallbacks(nearest.mid(1));
        streamer->setExpectedInstances(f.instances);
        const QString title = tr("%1 — %2 from %3 (prefetch)").arg(DicomIdentity::displayName(f.identity.patientName), f.description, nearest.first());
        // Its transfer row from its first layout (a quick stream is laid out as it comes, and listed only at its end).
        auto tracked = std::make_shared<bool>(false);
        for (auto signal : {&StudyStreamer::laidOut, &StudyStreamer::listed})
            connect(streamer, signal, this, [this, streamer, title, tracked] {
                if (!std::exchange(*tracked, true))
                    trackStudy(streamer, title);
            });
        connect(streamer, &StudyStreamer::failed, this, [this, streamer, title](const Error &e) {
            statusBar()->showMessage(tr("Cannot prefetch %1: %2").arg(title, e.toString()));
            streamer->deleteLater();
        });
        streamer->start();
    }
    m_transferDock->show();
    statusBar()->showMessage(tr("Prefetching %n study(ies) for later", nullptr, int(studies.size())), 4000);
}

void MainWindow::openRemoteStudy(const QString &store, const QString &studyUid, const QStringList &fallbacks, int expectedInstances)
{
    if (!m_workstation->registry())
        return statusBar()->showMessage(tr("The local cache is not open yet."));
    // Asked again while it is being listed (a second click): one streamer, one viewer.
    const QString opening = QStringLiteral("remote\n") + studyUid;
    if (m_opening.contains(opening))
        return;
    m_opening.insert(opening);
    auto *streamer = new StudyStreamer(m_workstation->registry(), m_workstation->cache(), store, studyUid, this);
    connect(streamer, &StudyStreamer::listed, this, [this, opening] { m_opening.remove(opening); });
    connect(streamer, &StudyStreamer::failed, this, [this, opening] { m_opening.remove(opening); });
    streamer->setFallbacks(fallbacks);
    streamer->setExpectedInstances(expectedInstances);
    connect(streamer, &StudyStreamer::listedShort, this, [this](const QString &from, int listed, int expected) {
        statusBar()->showMessage(tr("%1 lists %2 of the %3 instances the search reported: this study may be incomplete").arg(from).arg(listed).arg(expected));
    });
    connect(streamer, &StudyStreamer::sourceChanged, this, [this](const QString &from, const QString &to, const Error &why) {
        statusBar()->showMessage(why.code() == ErrorCode::NotFound ? tr("%1: the study comes from %2").arg(why.message(), to)
                                                                   : tr("%1 stopped answering (%2): the rest of the study comes from %3").arg(from, why.message(), to),
                                 8000);
    });
    statusBar()->showMessage(tr("Asking %1 for the study…").arg(store));
    // The first look (the slice a stack opens at, found with two small queries) opens the viewer while the
    // whole study is listed; the listing then completes it. Without a first look, the listing opens it.
    auto viewer = std::make_shared<QPointer<StudyViewer>>();
    connect(streamer, &StudyStreamer::failed, this, [this, streamer, store, viewer](const Error &e) {
        statusBar()->showMessage(tr("Cannot open the study from %1: %2").arg(store, e.toString()));
        if (*viewer)
            return (*viewer)->errorOccurred(e);  // it shows the first look's image; the streamer stays its own
        streamer->deleteLater();
    });
    connect(streamer, &StudyStreamer::firstLookReady, this, [this, streamer, viewer, opening] {
        m_opening.remove(opening);  // a viewer from now on: asked again, its tab is shown (or, closed, it opens anew)
        const StudySummary &glimpse = streamer->firstLook();
        if (viewerOf(glimpse.identity.studyInstanceUid, glimpse.identity.patientId))
            return;  // open already: the listing will say so
        *viewer = new StudyViewer(m_workstation->localStore(), m_workstation->images(), glimpse, streamer);
        addViewer(*viewer, glimpse);
        // A protocol that reads this kind of study in MPR: opened now, on the series the first look shows, so its
        // planes fill in as the study streams (the listing then applies the whole protocol, keeping it).
        if (m_hangingProtocols->protocols().planFor(glimpse, nullptr).mpr)
            (*viewer)->setMprShown(true, false);
        statusBar()->showMessage(tr("Listing the rest of the study…"));
    });
    // While the study streams in before it is listed, it is laid out as it comes: the reader scrolls what is here.
    auto tracked = std::make_shared<bool>(false);  // its transfer row, from the first layout or the listing
    auto track = [this, streamer, store, tracked](const StudySummary &study) {
        if (!std::exchange(*tracked, true))
            trackStudy(streamer, tr("%1 — %2 from %3").arg(DicomIdentity::displayName(study.identity.patientName), study.identity.studyDescription, store));
    };
    connect(streamer, &StudyStreamer::laidOut, this, [this, streamer, store, viewer, track] {
        if (!*viewer || streamer->isListed())
            return;
        const StudySummary &study = streamer->provisional();
        if (!(*viewer)->setStudy(study))
            return;  // refused, and said why
        statusBar()->showMessage(study.arriving > 0 ? tr("From %1: %2 images here, %3 more arriving").arg(store).arg(study.instanceCount).arg(study.arriving)
                                                    : tr("From %1: %2 images here, more arriving").arg(store).arg(study.instanceCount),
                                 4000);
        track(study);
    });
    connect(streamer, &StudyStreamer::listed, this, [this, streamer, store, viewer, track] {
        const StudySummary study = streamer->study();
        if (*viewer) {
            if (!(*viewer)->setStudy(study))
                return;  // refused, and said why
            // The whole study now: its protocol can place its series — unless the reader laid it out or moved in it
            // meanwhile (another series or slice, a prior opened beside, another layout, MPR): never undone under
            // them. (Read as it streams in, a large study may be read for many seconds before it is listed.)
            m_hangingProtocols->apply(*viewer, -1, true);
        } else if (StudyViewer *open = viewerOf(study.identity.studyInstanceUid, study.identity.patientId)) {
            streamer->deleteLater();  // opened meanwhile
            m_tabs->setCurrentWidget(open);
            return;
        } else {
            addViewer(new StudyViewer(m_workstation->localStore(), m_workstation->images(), study, streamer), study);
        }
        connect(streamer, &StudyStreamer::progress, this, [this, store](int cached, int total) {
            statusBar()->showMessage(tr("From %1: %2 of %3 images here").arg(store).arg(cached).arg(total), 4000);
        });
        track(study);
    });
    streamer->start();
}

StudyViewer *MainWindow::addViewer(StudyViewer *viewer, const StudySummary &study)
{
    audit(auditevents::instancesAccessed(QLatin1Char('R'), {auditStudyOf(study)}));  // the reader opened it
    connect(viewer, &StudyViewer::errorOccurred, this, [this](const Error &e) {
        statusBar()->showMessage(tr("Error: %1").arg(e.toString()), 20000);  // not for good: a stale error misleads
    });
    connect(viewer, &StudyViewer::paneMenuRequested, this, &MainWindow::showPaneMenu);
    connect(viewer, &StudyViewer::findingsRequested, this, [this] { m_findingsDock->show(); });
    viewer->settings()->setTool(m_tool);
    viewer->cine()->setRate(m_cineRate, false);  // the reader's usual rate; a multi-frame image's own comes first
    viewer->settings()->setSmoothMagnification(m_smoothAction->isChecked());
    // A new study opens unfiltered, unless the reader saved a preset for its modality (named on the image) or
    // asked for a chain on the command line.
    if (!m_startChain.isEmpty())
        viewer->settings()->setFilterState({m_startChain, true, QString()});
    else if (const std::optional<FilterPreset> preset = m_filters->presetFor(study.modalities))
        viewer->settings()->setFilterState({preset->specs, true, preset->name});
    connect(viewer, &StudyViewer::imageShown, this, [this, viewer] {
        if (viewer == currentViewer())
            showTagsOfImageInView();
    });
    connect(viewer->cine(), &CinePlayer::changed, this, [this, viewer](bool playing, int fps) {
        if (viewer == currentViewer()) {
            m_cineAction->setChecked(playing);
            statusBar()->showMessage(playing ? tr("Cine at %1 images per second").arg(fps) : tr("Cine stopped"), 3000);
        }
    });
    const QString title = QStringLiteral("%1 — %2 %3")
                              .arg(DicomIdentity::displayName(study.identity.patientName),
                                   study.modalities.join(QLatin1Char('/')), DicomIdentity::displayDate(study.identity.studyDate));
    m_tabs->setCurrentIndex(m_tabs->addTab(viewer, title));
    m_tabs->setTabToolTip(m_tabs->indexOf(viewer), title);  // whole, when the tab is narrowed
    viewer->setFocus();
    findPriorsFor(viewer);
    // Laid out by its hanging protocol before anything is painted; a study still being listed once it is.
    if (!viewer->streamer() || viewer->streamer()->isListed())
        m_hangingProtocols->apply(viewer);
    if (PriorPrefetcher *prefetcher = m_workstation->prefetcher())
        prefetcher->add(study);  // its comparable priors, fetched behind it
    Q_EMIT studyOpened(viewer);
    return viewer;
}

void MainWindow::showFiltersOf(StudyViewer *viewer)
{
    m_filters->setCurrentModalities(viewer ? viewer->study().modalities : QStringList());
    m_filters->setEnabled(viewer != nullptr);
    const PaneSettings::FilterState state = viewer ? viewer->settings()->filterState() : PaneSettings::FilterState();
    m_filters->setState(state.specs, state.applied, state.preset);  // applies to the viewer through chainChanged
}

void MainWindow::setStartFilters(const QStringList &specs)
{
    m_startChain = specs;
    m_filters->setSpecs(specs);  // checked here: problem() says what is wrong
    if (!m_filters->problem().isEmpty())
        m_startChain.clear();
}

StudyViewer *MainWindow::currentViewer() const
{
    return qobject_cast<StudyViewer *>(m_tabs->currentWidget());
}

void MainWindow::closeTab(int index)
{
    if (index <= 0)  // the study list stays
        return;
    QWidget *w = m_tabs->widget(index);
    // Its decoded images go from memory with it — those of studies another tab still shows stay —, and the memory
    // they and the viewer held goes back to the system once it is gone: closing studies brings the workstation back
    // to where it was, however many large studies a day opens.
    if (auto *closing = qobject_cast<StudyViewer *>(w)) {
        auto keysOf = [](const StudyViewer *v) {
            QSet<QString> keys;
            QList<const StudySummary *> studies{&v->study()};
            for (int c = 0; c < v->comparison()->count(); ++c)
                studies << &v->comparison()->study(c);
            for (const StudySummary *s : std::as_const(studies))
                for (const SeriesSummary &series : s->series)
                    for (const InstanceRef &i : series.instances)
                        keys.insert(i.key);
            return keys;
        };
        QSet<QString> gone = keysOf(closing);
        for (int i = 1; i < m_tabs->count(); ++i)
            if (auto *other = qobject_cast<StudyViewer *>(m_tabs->widget(i)); other && other != closing)
                gone.subtract(keysOf(other));
        // Now, not once the viewer is gone: the same study may be opened again before that. What its decodes under
        // way still bring is not kept (retire: soak.sh found a radiograph put back after each study or so).
        closing->retire(gone);
        m_workstation->images()->forget(gone);
        // Qt's pixmap cache keeps every thumbnail icon it painted (QIcon caches each in it, up to 10 MiB): a day of
        // studies filled it with closed ones (soak.sh). Emptied; what the style keeps there is made again as painted.
        QPixmapCache::clear();
        // The memory back once the viewer is gone (nothing of this window is touched then: it may be going too).
        connect(closing, &QObject::destroyed, m_workstation->images(), [] { returnFreedMemory(); });
    }
    m_tabs->removeTab(index);
    w->deleteLater();
}

} // namespace spectrum
