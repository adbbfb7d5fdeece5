#include "mainwindow.h"

#include "filterpanel.h"
#include "findingspanel.h"
#include "tagviewer.h"
#include "storesdialog.h"
#include "transferspanel.h"
#include "studybrowser.h"
#include "studyviewer.h"

#include "spectrum/stores/filestore.h"
#include "spectrum/stores/savedsearchrunner.h"
#include "spectrum/stores/storeregistry.h"
#include "spectrum/stores/priorprefetch.h"
#include "spectrum/stores/studystreamer.h"

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
      m_transfers(new TransfersPanel), m_transferLabel(new QLabel), m_tabs(new QTabWidget),
      m_cacheLabel(new QLabel)
{
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
    m_tabs->tabBar()->setTabButton(0, QTabBar::RightSide, nullptr);  // the study list cannot be closed
    m_tabs->tabBar()->setTabButton(0, QTabBar::LeftSide, nullptr);
    connect(m_tabs, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTab);
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        StudyViewer *v = currentViewer();
        if (m_cineAction)
            m_cineAction->setChecked(v && v->isCinePlaying());
        if (m_mprAction)
            m_mprAction->setChecked(v && v->isMprShown());
        showFiltersOf(v);
        showTagsOfImageInView();
        m_findingsPanel->setViewer(v);
    });
    setCentralWidget(m_tabs);
    statusBar()->addPermanentWidget(m_cacheLabel);

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
        viewer->setFilterState({m_filters->specs(), m_filters->isApplied(), m_filters->presetName()});
        viewer->setFilters(chain, description);
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
    connect(m_transfers, &TransfersPanel::totalsChanged, m_transferLabel, &QLabel::setText);

    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *find = file->addAction(tr("&Find study"), this, [this] {
        m_tabs->setCurrentIndex(0);
        m_browser->patientNameField()->setFocus();
        m_browser->patientNameField()->selectAll();
    });
    find->setShortcut(QKeySequence::Find);
    QAction *importFilesAction = file->addAction(tr("&Import files…"), this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(this, tr("Import DICOM files"), QDir::homePath(),
                                                                tr("DICOM files (*.dcm *.DCM *.dicom DICOMDIR *);;All files (*)"));
        if (!files.isEmpty())
            importFiles(files);
    });
    importFilesAction->setShortcut(QKeySequence::Open);
    file->addAction(tr("Import &folder, CD or USB stick…"), this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Import a folder, or a CD or USB stick with a DICOMDIR"), QDir::homePath());
        if (!folder.isEmpty())
            importFiles({folder});
    });
    file->addSeparator();
    QAction *stores = file->addAction(tr("S&tores…"), this, [this] {
        StoresDialog dialog(m_workstation, this);
        dialog.exec();
    });
    stores->setMenuRole(QAction::PreferencesRole);
    file->addAction(tr("&Cache…"), this, &MainWindow::showCacheSettings);
    QAction *saveFindingsAction = file->addAction(tr("Save &findings"), this, &MainWindow::saveFindings);
    saveFindingsAction->setShortcut(QKeySequence::Save);
    file->addAction(tr("Save &view (presentation state)"), this, &MainWindow::saveView)->setShortcut(QKeySequence(QStringLiteral("Ctrl+Alt+S")));
    file->addAction(tr("&Export images (PNG, JPEG, MP4)…"), this, &MainWindow::exportImages)->setShortcut(QKeySequence(QStringLiteral("Ctrl+E")));
    file->addAction(tr("Export &de-identified copy…"), this, &MainWindow::exportDeidentified);
    QAction *send = file->addAction(tr("&Send to archive…"), this, &MainWindow::chooseAndSend);
    send->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+S")));
    QAction *closeStudy = file->addAction(tr("&Close study"), this, [this] { closeTab(m_tabs->currentIndex()); });
    closeStudy->setShortcut(QKeySequence::Close);
    file->addSeparator();
    file->addAction(tr("&Quit"), qApp, &QApplication::quit)->setShortcut(QKeySequence::Quit);
    // Everything frequent has a key, shown in the menus. Single keys act on the viewer; the search field keeps
    // its typing (line edits take printable keys before shortcuts see them).
    auto onViewport = [this](auto f) {
        return [this, f] {
            if (StudyViewer *v = currentViewer())
                f(v->toolViewport());
        };
    };
    auto add = [this](QMenu *menu, const QString &text, const QKeySequence &key, auto slot) {
        QAction *a = menu->addAction(text, this, slot);
        a->setShortcut(key);
        return a;
    };
    QMenu *view = menuBar()->addMenu(tr("&View"));
    add(view, tr("&Fit to window"), Qt::Key_F, onViewport([](ImageViewport *v) { v->fitToWindow(); }));
    add(view, tr("&Actual size (1:1)"), QKeySequence(QStringLiteral("Shift+F")), onViewport([](ImageViewport *v) { v->actualSize(); }));
    add(view, tr("Zoom &in"), QKeySequence::ZoomIn, onViewport([](ImageViewport *v) { v->setZoom(v->zoom() * 1.25); }));
    add(view, tr("Zoom &out"), QKeySequence::ZoomOut, onViewport([](ImageViewport *v) { v->setZoom(v->zoom() / 1.25); }));
    view->addSeparator();
    add(view, tr("Rotate &clockwise"), Qt::Key_BracketRight, onViewport([](ImageViewport *v) { v->rotate(1); }));
    add(view, tr("Rotate c&ounter-clockwise"), Qt::Key_BracketLeft, onViewport([](ImageViewport *v) { v->rotate(-1); }));
    add(view, tr("Flip &horizontally"), Qt::Key_H, onViewport([](ImageViewport *v) { v->flipHorizontally(); }));
    add(view, tr("Flip &vertically"), Qt::Key_V, onViewport([](ImageViewport *v) { v->flipVertically(); }));
    add(view, tr("&Invert"), Qt::Key_I, onViewport([](ImageViewport *v) { v->setInverted(!v->isInverted()); }));
    QAction *segmentations = add(view, tr("Se&gmentations"), Qt::Key_G, [this] {
        if (StudyViewer *v = currentViewer())
            v->setSegmentationsVisible(!v->segmentationsVisible());
    });
    segmentations->setToolTip(tr("Show or hide segmentations over the images they were drawn on"));
    // Shrunk images are always averaged (a thin line never vanishes); magnified ones smooth or pixel-exact.
    m_smoothAction = view->addAction(tr("S&mooth magnification"), this, [this](bool on) {
        for (int i = 1; i < m_tabs->count(); ++i) {
            if (auto *viewer = qobject_cast<StudyViewer *>(m_tabs->widget(i)))
                viewer->setSmoothMagnification(on);
        }
    });
    m_smoothAction->setCheckable(true);
    m_smoothAction->setChecked(true);
    add(view, tr("&Reset view"), Qt::Key_R, [this] {
        if (StudyViewer *v = currentViewer())
            v->resetView();
    });
    m_mprAction = add(view, tr("&MPR (axial, coronal, sagittal)"), Qt::Key_M, [this] {
        // On or off from what the viewer shows (a hanging protocol may have opened it).
        if (StudyViewer *v = currentViewer())
            v->setMprShown(!v->isMprShown());
        StudyViewer *v = currentViewer();
        m_mprAction->setChecked(v && v->isMprShown());
    });
    m_mprAction->setCheckable(true);
    m_mprAction->setToolTip(tr("The active pane's series reformatted in three planes, with a crosshair; again for the grid"));
    view->addSeparator();
    addCompareActions(view);
    addProtocolActions(view);
    m_cineAction = add(view, tr("&Cine"), Qt::Key_C, [this] {
        if (StudyViewer *v = currentViewer())
            v->setCinePlaying(!v->isCinePlaying());
    });
    m_cineAction->setCheckable(true);
    add(view, tr("Cine &faster"), Qt::Key_Plus, [this] {
        if (StudyViewer *v = currentViewer())
            v->setCineRate(v->cineRate() + 5);
        if (StudyViewer *v = currentViewer())
            m_cineRate = v->cineRate();
    });
    add(view, tr("Cine &slower"), Qt::Key_Minus, [this] {
        if (StudyViewer *v = currentViewer())
            v->setCineRate(v->cineRate() - 5);
        if (StudyViewer *v = currentViewer())
            m_cineRate = v->cineRate();
    });

    QMenu *window = menuBar()->addMenu(tr("&Window/Level"));
    const QList<WindowPreset> &presets = ctWindowPresets();
    for (int i = 0; i < presets.size(); ++i) {
        add(window, tr("%1  (W %2 L %3)").arg(presets[i].name).arg(presets[i].width).arg(presets[i].center),
            QKeySequence(Qt::Key_1 + i), onViewport([i](ImageViewport *v) { v->applyPreset(i); }));
    }
    add(window, tr("&Auto (from the image)"), Qt::Key_A, onViewport([](ImageViewport *v) { v->autoWindowLevel(); }));
    add(window, tr("&Default (from the file)"), Qt::Key_0, onViewport([](ImageViewport *v) { v->setWindow(defaultWindow(v->image())); }));

    QMenu *filtersMenu = menuBar()->addMenu(tr("F&ilters"));
    QAction *showFilters = m_filterDock->toggleViewAction();
    showFilters->setText(tr("&Show the filter panel"));
    showFilters->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+F")));
    filtersMenu->addAction(showFilters);
    add(filtersMenu, tr("&Apply filters on/off"), Qt::Key_T, [this] { m_filters->toggle(); });
    QAction *showTags = m_tagDock->toggleViewAction();
    showTags->setText(tr("DICOM &tags"));
    showTags->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+D")));
    view->addAction(showTags);
    QAction *showFindings = m_findingsDock->toggleViewAction();
    showFindings->setText(tr("&Findings"));
    showFindings->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+M")));
    view->addAction(showFindings);
    QAction *showTransfers = m_transferDock->toggleViewAction();
    showTransfers->setText(tr("&Transfers"));
    showTransfers->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+T")));
    view->addSeparator();
    view->addAction(showTransfers);

    QMenu *tools = menuBar()->addMenu(tr("&Tools"));
    auto *toolGroup = new QActionGroup(this);
    const QList<QPair<QString, QPair<ImageViewport::Tool, QKeySequence>>> toolList = {
        {tr("&Pan"), {ImageViewport::Tool::Pan, QKeySequence(Qt::Key_P)}},
        {tr("&Distance"), {ImageViewport::Tool::Distance, QKeySequence(Qt::Key_D)}},
        {tr("&Bidirectional (long and short axis)"), {ImageViewport::Tool::Bidirectional, QKeySequence(QStringLiteral("Shift+D"))}},
        {tr("&Angle"), {ImageViewport::Tool::Angle, QKeySequence(QStringLiteral("Shift+A"))}},
        {tr("C&obb angle"), {ImageViewport::Tool::CobbAngle, QKeySequence(QStringLiteral("Shift+C"))}},
        {tr("&Rectangle ROI"), {ImageViewport::Tool::Rectangle, QKeySequence(Qt::Key_B)}},
        {tr("&Ellipse ROI"), {ImageViewport::Tool::Ellipse, QKeySequence(Qt::Key_E)}},
        {tr("Po&lygon ROI"), {ImageViewport::Tool::Polygon, QKeySequence(Qt::Key_O)}},
        {tr("&Freehand ROI"), {ImageViewport::Tool::Freehand, QKeySequence(QStringLiteral("Shift+O"))}},
        {tr("Point &value"), {ImageViewport::Tool::Point, QKeySequence(Qt::Key_Q)}},
        {tr("Arro&w with text"), {ImageViewport::Tool::Arrow, QKeySequence(Qt::Key_W)}},
        {tr("&Text"), {ImageViewport::Tool::Text, QKeySequence(QStringLiteral("Shift+T"))}},
        {tr("&Crosshair"), {ImageViewport::Tool::Crosshair, QKeySequence(Qt::Key_X)}},
    };
    for (const auto &t : toolList) {
        const ImageViewport::Tool tool = t.second.first;
        QAction *a = add(tools, t.first, t.second.second, [this, tool] {
            m_tool = tool;
            if (StudyViewer *v = currentViewer())
                v->toolViewport()->setTool(tool);
        });
        a->setCheckable(true);
        a->setChecked(tool == ImageViewport::Tool::Pan);
        a->setData(int(tool));
        toolGroup->addAction(a);
        m_toolActions << a;
    }
    tools->addSeparator();
    add(tools, tr("&Key image (mark or unmark)"), Qt::Key_K, onViewport([this](ImageViewport *v) {
        if (!v->hasImage())
            return;
        FindingsModel *model = v->findings();
        model->setReaderName(observerName());
        const ImageRef ref = v->imageRef();
        if (ref.sopInstanceUid.isEmpty()) {  // a reformatted plane: no instance holds it
            statusBar()->showMessage(tr("Only acquired images can be key images: mark the slice in the grid (M)."), 6000);
            return;
        }
        if (!model->rejectionOf(ref).isEmpty()) {
            statusBar()->showMessage(tr("This image was rejected (%1): not a key image.").arg(model->rejectionOf(ref)), 6000);
            return;
        }
        if (!v->isKeyImage()) {
            v->setKeyImage(true);
            return statusBar()->showMessage(tr("Key image (saved with File > Save findings)."), 4000);
        }
        if (!model->canUnmarkKeyImage(ref)) {
            statusBar()->showMessage(tr("A key image of another reader's selection, or of one titled otherwise than \"Of Interest\": "
                                        "it stays one there."), 6000);
            return;
        }
        const bool markedHere = model->isMarkedKeyImage(ref);
        v->setKeyImage(false);
        statusBar()->showMessage(markedHere ? tr("No longer a key image (saved with File > Save findings).")
                                            : tr("No longer a key image: File > Save findings replaces the saved selection that lists it."), 6000);
    }));
    add(tools, tr("Delete the selected &finding"), QKeySequence::Delete, onViewport([](ImageViewport *v) { v->deleteSelectedMeasurement(); }));
    add(tools, tr("&Clear the findings on this image"), QKeySequence(QStringLiteral("Shift+Del")), onViewport([](ImageViewport *v) { v->clearMeasurements(); }));

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Mouse and keys"), this, [this] {
        QDialog dialog(this);
        dialog.setWindowTitle(tr("Mouse and keys"));
        auto *text = new QTextBrowser;
        text->setHtml(keyBindingsHtml());
        auto *layout = new QVBoxLayout(&dialog);
        layout->addWidget(text);
        auto *close = new QDialogButtonBox(QDialogButtonBox::Close);
        connect(close, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
        layout->addWidget(close);
        dialog.resize(640, 720);
        dialog.exec();
    });

    connect(m_workstation, &Workstation::studiesChanged, this, &MainWindow::onStudiesChanged);
    connect(m_workstation, &Workstation::sharingChanged, this, &MainWindow::updateCacheLabel);
    updateCacheLabel();  // a workstation started before this window
    connect(m_workstation, &Workstation::started, this, &MainWindow::configurePrefetcher);
    if (m_workstation->isStarted())
        configurePrefetcher();
    connect(m_workstation, &Workstation::statusMessage, this, [this](const QString &m) { statusBar()->showMessage(m, 8000); });
    connect(m_workstation, &Workstation::errorOccurred, this, [this](const Error &e) {
        statusBar()->showMessage(tr("Error: %1").arg(e.toString()));
    });
    onStudiesChanged();
}

QString MainWindow::keyBindingsHtml() const
{
    // Made from the menus themselves, so it lists every binding there is — and only those.
    QString html = tr("<h3>Mouse</h3><table>"
                      "<tr><td>Wheel</td><td>next / previous slice or frame</td></tr>"
                      "<tr><td>Ctrl+wheel</td><td>zoom</td></tr>"
                      "<tr><td>Right-drag</td><td>window (left/right) and level (up/down)</td></tr>"
                      "<tr><td>Middle-drag, or left-drag with the pan tool</td><td>pan</td></tr>"
                      "<tr><td>Left-drag with a measuring tool</td><td>draw it; drag an end point to move it</td></tr>"
                      "<tr><td>Click a pane</td><td>the pane keys act on</td></tr>"
                      "<tr><td>Drag a series onto a pane</td><td>show it there</td></tr>"
                      "<tr><td>Drop files or folders on the window</td><td>import them</td></tr></table>"
                      "<h3>Keys</h3><table>"
                      "<tr><td>↑ ↓ ← →, Page Up/Down, Home/End</td><td>step through slices and frames</td></tr>");
    for (QAction *menuAction : menuBar()->actions()) {
        QMenu *menu = menuAction->menu();
        if (!menu)
            continue;
        QList<QAction *> actions = menu->actions();
        for (int i = 0; i < actions.size(); ++i) {
            if (QMenu *sub = actions[i]->menu())
                actions << sub->actions();
        }
        for (QAction *a : actions) {
            if (a->shortcut().isEmpty())
                continue;
            html += QStringLiteral("<tr><td><b>%1</b></td><td>%2 (%3)</td></tr>")
                        .arg(a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped(), a->text().remove(QLatin1Char('&')).toHtmlEscaped(),
                             menu->title().remove(QLatin1Char('&')).toHtmlEscaped());
        }
    }
    return html + QStringLiteral("</table>");
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
    // Series that reached the cache since a study was opened (a derived series just sent, a PACS's push) join it.
    for (int i = 1; i < m_tabs->count(); ++i) {
        auto *viewer = qobject_cast<StudyViewer *>(m_tabs->widget(i));
        const StudySummary *local = viewer ? m_workstation->findStudy(viewer->study().identity.studyInstanceUid) : nullptr;
        if (!local || local->identity.patientId != viewer->study().identity.patientId || local->identityConflict)
            continue;
        const QList<SeriesSummary> &have = viewer->study().series;
        if (std::any_of(local->series.begin(), local->series.end(), [&have](const SeriesSummary &s) {
                return std::none_of(have.begin(), have.end(), [&s](const SeriesSummary &m) { return m.seriesInstanceUid == s.seriesInstanceUid; });
            }))
            addArrivedSeries(viewer, *local);
    }
    updateCacheLabel();
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
    // From the nearest place that holds it: the cluster before the central archives.
    const QStringList nearest = m_workstation->registry() ? m_workstation->registry()->nearestFirst(found.stores) : QStringList();
    if (!nearest.isEmpty())
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
        connect(streamer, &StudyStreamer::listed, this, [this, streamer, title] { m_transfers->addStudy(streamer, title); });
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
    auto *streamer = new StudyStreamer(m_workstation->registry(), m_workstation->cache(), store, studyUid, this);
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
    connect(streamer, &StudyStreamer::firstLookReady, this, [this, streamer, viewer] {
        const StudySummary &glimpse = streamer->firstLook();
        if (viewerOf(glimpse.identity.studyInstanceUid, glimpse.identity.patientId))
            return;  // open already: the listing will say so
        *viewer = new StudyViewer(m_workstation->localStore(), m_workstation->images(), glimpse, streamer);
        addViewer(*viewer, glimpse);
        // A protocol that reads this kind of study in MPR: opened now, on the series the first look shows, so its
        // planes fill in as the study streams (the listing then applies the whole protocol, keeping it).
        if (m_protocols.planFor(glimpse, nullptr).mpr)
            (*viewer)->setMprShown(true, false);
        statusBar()->showMessage(tr("Listing the rest of the study…"));
    });
    connect(streamer, &StudyStreamer::listed, this, [this, streamer, store, viewer] {
        const StudySummary study = streamer->study();
        if (*viewer) {
            if (!(*viewer)->setStudy(study))
                return;  // refused, and said why
            // The whole study now: its protocol can place its series — unless the reader laid it out meanwhile
            // (a prior opened beside, another layout, MPR), which is never undone under them.
            if ((*viewer)->comparisonCount() == 0 && (*viewer)->paneCount() == 1 && !(*viewer)->isMprByReader())
                applyProtocol(*viewer);
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
        m_transfers->addStudy(streamer, tr("%1 — %2 from %3").arg(DicomIdentity::displayName(study.identity.patientName),
                                                                   study.identity.studyDescription, store));
    });
    streamer->start();
}

StudyViewer *MainWindow::addViewer(StudyViewer *viewer, const StudySummary &study)
{
    connect(viewer, &StudyViewer::errorOccurred, this, [this](const Error &e) {
        statusBar()->showMessage(tr("Error: %1").arg(e.toString()));
    });
    connect(viewer, &StudyViewer::findingsRequested, this, [this] { m_findingsDock->show(); });
    viewer->viewport()->setTool(m_tool);
    viewer->setCineRate(m_cineRate, false);  // the reader's usual rate; a multi-frame image's own comes first
    viewer->setSmoothMagnification(m_smoothAction->isChecked());
    // A new study opens unfiltered, unless the reader saved a preset for its modality (named on the image) or
    // asked for a chain on the command line.
    if (!m_startChain.isEmpty())
        viewer->setFilterState({m_startChain, true, QString()});
    else if (const std::optional<FilterPreset> preset = m_filters->presetFor(study.modalities))
        viewer->setFilterState({preset->specs, true, preset->name});
    connect(viewer, &StudyViewer::imageShown, this, [this, viewer] {
        if (viewer == currentViewer())
            showTagsOfImageInView();
    });
    connect(viewer, &StudyViewer::cineChanged, this, [this, viewer](bool playing, int fps) {
        if (viewer == currentViewer()) {
            m_cineAction->setChecked(playing);
            statusBar()->showMessage(playing ? tr("Cine at %1 images per second").arg(fps) : tr("Cine stopped"), 3000);
        }
    });
    const QString title = QStringLiteral("%1 — %2 %3")
                              .arg(DicomIdentity::displayName(study.identity.patientName),
                                   study.modalities.join(QLatin1Char('/')), DicomIdentity::displayDate(study.identity.studyDate));
    m_tabs->setCurrentIndex(m_tabs->addTab(viewer, title));
    viewer->setFocus();
    findPriorsFor(viewer);
    // Laid out by its hanging protocol before anything is painted; a study still being listed once it is.
    if (!viewer->streamer() || viewer->streamer()->isListed())
        applyProtocol(viewer);
    if (PriorPrefetcher *prefetcher = m_workstation->prefetcher())
        prefetcher->add(study);  // its comparable priors, fetched behind it
    Q_EMIT studyOpened(viewer);
    return viewer;
}

void MainWindow::showFiltersOf(StudyViewer *viewer)
{
    m_filters->setCurrentModalities(viewer ? viewer->study().modalities : QStringList());
    m_filters->setEnabled(viewer != nullptr);
    const StudyViewer::FilterState state = viewer ? viewer->filterState() : StudyViewer::FilterState();
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
    m_tabs->removeTab(index);
    w->deleteLater();
}

} // namespace spectrum
