// The workstation as a radiologist uses it, offscreen: the demo archive appears in the study list, the CT
// opens, the wheel scrolls, a right-drag changes window/level — checked on the rendered pixels.

#include "displayimage.h"
#include "imageviewport.h"
#include "filterpanel.h"
#include "mainwindow.h"
#include "studybrowser.h"
#include "storesdialog.h"
#include "studyviewer.h"
#include "tagviewer.h"
#include "transferspanel.h"
#include "workstation.h"

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/measurements.h"
#include "spectrum/stores/imageloader.h"
#include "spectrum/stores/storeregistry.h"
#include "testsupport.h"

#include <QAction>
#include <QApplication>
#include <QListWidget>
#include <QTimer>
#include <QSpinBox>
#include <QPushButton>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSettings>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QDockWidget>
#include <QComboBox>
#include <QTest>
#include <QTreeWidget>

#include <cstring>

using namespace spectrum;
using namespace spectrum::test;

namespace {
double meanGrey(const QImage &img)
{
    double sum = 0;
    for (int y = 0; y < img.height(); ++y) {
        const uchar *line = img.constScanLine(y);
        for (int x = 0; x < img.width(); ++x)
            sum += line[x];
    }
    return sum / (double(img.width()) * img.height());
}

void sendWheel(QWidget *w, int delta, Qt::KeyboardModifiers mods = Qt::NoModifier)
{
    const QPointF pos(w->width() / 2.0, w->height() / 2.0);
    QWheelEvent e(pos, w->mapToGlobal(pos), QPoint(), QPoint(0, delta), Qt::NoButton, mods, Qt::NoScrollPhase, false);
    QApplication::sendEvent(w, &e);
}

void sendMouse(QWidget *w, QEvent::Type type, QPoint pos, Qt::MouseButton button, Qt::MouseButtons buttons)
{
    QMouseEvent e(type, QPointF(pos), w->mapToGlobal(QPointF(pos)), button, buttons, Qt::NoModifier);
    QApplication::sendEvent(w, &e);
}

/// A workstation without the demo, in `dir`, that received `files` from a "PACS" (DCMTK's storescu) into its
/// cache; null (with the reason logged) when something failed.
std::unique_ptr<Workstation> workstationWith(const QTemporaryDir &dir, const QStringList &files)
{
    Workstation::Options options;
    options.cacheDirectory = dir.filePath(QStringLiteral("cache"));
    options.seedDemoWhenEmpty = false;
    options.storageAeTitle = QStringLiteral("READROOM");
    options.storagePort = freePort();
    auto ws = std::make_unique<Workstation>(options);
    QSignalSpy started(ws.get(), &Workstation::started);
    ws->start();
    if (!started.wait(10000))
        return nullptr;
    for (int i = 0; i < 100 && !ws->isListening(); ++i)
        QTest::qWait(50);
    if (files.isEmpty())
        return ws;
    QSignalSpy received(ws.get(), &Workstation::instanceReceived);
    // -R: storescu proposes the files' own SOP classes (its default list lacks Segmentation, for one).
    const ProcessResult pushed = run(QStringLiteral(STORESCU_EXECUTABLE), QStringList{QStringLiteral("-R"), QStringLiteral("-aec"), QStringLiteral("READROOM"),
                                                                                      QStringLiteral("127.0.0.1"), QString::number(options.storagePort)} + files);
    if (!pushed.ok()) {
        qWarning("storescu: %s", pushed.err.constData());
        return nullptr;
    }
    for (int i = 0; i < 200 && received.count() < files.size(); ++i)
        received.wait(50);
    return received.count() == files.size() ? std::move(ws) : nullptr;
}
} // namespace

class tst_Workstation : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    /// Before each test: the main window active (the menus' keys fire only there), after tests that showed
    /// windows of their own.
    void init();
    void demoStudiesFillTheList();
    void openScrollAndWindowTheCt();
    void keysFromTheMenusActOnTheOpenStudy();
    void singleKeysNeverFireWhileTyping();
    void theTransfersPanelScrollsAndClearsWhatEnded();
    void theTagViewerFollowsTheImageAndSearches();
    void theStoresDialogKeepsWhatItHoldsAndFollowsTheFile();
    void filtersApplyLiveAndToggleOff();
    void valuesAndMeasurementsIgnoreTheFilters();
    void filtersStayWithTheirStudyUnlessAPresetSaysSo();
    void seriesThumbnailsShowTheirMiddleImage();
    void layoutsSynchronisedScrollingAndDroppingASeries();
    void synchronisedScrollingFollowsTheFrameOfReference();
    void decodedImagesStayWithinTheMemoryBudget();
    void settingsAreRememberedAcrossRestarts();
    void reopeningUsesTheCacheWithoutReseeding();
    void aCacheInUseIsAClearStartError();
    void studiesPushedByAPacsAppearInTheList();
    void namesInOtherAlphabetsEverywhereTheyAreShown();
    void multiFrameImagesStepAndPlayFrameByFrame();
    void importingACdWithItsDicomdir();
    void aSegmentationIsShownOverItsSource();
    void theCliImportsWhileTheWorkstationRuns();

private:
    QTemporaryDir m_dir;
    std::unique_ptr<Workstation> m_ws;
    std::unique_ptr<MainWindow> m_window;
};

void tst_Workstation::initTestCase()
{
    Workstation::Options options;
    options.cacheDirectory = m_dir.filePath(QStringLiteral("cache"));
    m_ws = std::make_unique<Workstation>(options);
    QSignalSpy seeded(m_ws.get(), &Workstation::seedingFinished);
    QSignalSpy started(m_ws.get(), &Workstation::started);
    m_ws->start();
    QVERIFY(!m_ws->isStarted());  // opening the cache does not block the caller
    QVERIFY(started.wait(10000));
    QVERIFY(m_ws->isSeeding());
    m_window = std::make_unique<MainWindow>(m_ws.get());
    m_window->show();
    // When seeding is announced finished, the study list already holds all of it (the screenshot tool and a
    // user opening a study at that moment must not get a CT with only the slices committed so far).
    int ctSlicesAtFinish = -1;
    const QMetaObject::Connection noteFinish = connect(m_ws.get(), &Workstation::seedingFinished, this, [&] {
        const StudySummary *ct = m_ws->findStudy(QStringLiteral("demo-ct"));
        ctSlicesAtFinish = ct ? ct->instanceCount : 0;
    });
    const auto forgetFinish = qScopeGuard([&] { disconnect(noteFinish); });  // it captures this function's locals
    QVERIFY(seeded.wait(120000));
    QCOMPARE(ctSlicesAtFinish, 200);
    QVERIFY(!m_ws->isSeeding());
}

void tst_Workstation::init()
{
    if (!m_window)
        return;
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
}

void tst_Workstation::demoStudiesFillTheList()
{
    QTRY_COMPARE_WITH_TIMEOUT(m_window->studyTable()->model()->rowCount(), 3, 10000);
    QStringList patients;
    for (int r = 0; r < 3; ++r)
        patients << m_window->studyTable()->model()->index(r, 0).data().toString();
    QVERIFY(patients.contains(QStringLiteral("DEMO, HEAD PHANTOM")));
    QVERIFY(patients.contains(QStringLiteral("DEMO, CHEST PHANTOM")));
    const StudySummary *ct = m_ws->findStudy(QStringLiteral("demo-ct"));
    QVERIFY(ct);
    QCOMPARE(ct->instanceCount, 200);
}

void tst_Workstation::openScrollAndWindowTheCt()
{
    StudyViewer *viewer = m_window->openStudy(QStringLiteral("demo-ct"));
    QVERIFY(viewer);
    QSignalSpy shown(viewer, &StudyViewer::imageShown);
    QVERIFY(shown.wait(30000));
    const int first = shown.last().at(0).toInt();
    QCOMPARE(first, 100);  // a stack opens in its middle
    ImageViewport *vp = viewer->viewport();
    const QImage before = vp->renderedImage();
    QCOMPARE(before.size(), QSize(512, 512));

    // What is shown is exactly this slice rendered with its default window.
    const InstanceRef &ref = viewer->study().series[0].instances[first];
    Result<DecodedImage> expected = runSync(loadImage(m_ws->localStore(), ref.key));
    QVERIFY(expected.isOk());
    QCOMPARE(before, toQImage(renderFrame(expected.value(), 0, VoiWindow{40, 80})));

    // The wheel (one notch towards the user) shows the next slice.
    sendWheel(vp, -120);
    QTRY_COMPARE(viewer->sliceIndex(), first + 1);
    QTRY_VERIFY(shown.last().at(0).toInt() == first + 1);
    const QImage next = vp->renderedImage();
    QVERIFY(next != before);
    Result<DecodedImage> expectedNext = runSync(loadImage(m_ws->localStore(), viewer->study().series[0].instances[first + 1].key));
    QCOMPARE(next, toQImage(renderFrame(expectedNext.value(), 0, VoiWindow{40, 80})));

    // Right-drag down raises the level: the same slice gets darker; the window stays while scrolling.
    const QPoint start(vp->width() / 2, vp->height() / 2);
    sendMouse(vp, QEvent::MouseButtonPress, start, Qt::RightButton, Qt::RightButton);
    sendMouse(vp, QEvent::MouseMove, start + QPoint(0, 40), Qt::NoButton, Qt::RightButton);
    sendMouse(vp, QEvent::MouseButtonRelease, start + QPoint(0, 40), Qt::RightButton, Qt::NoButton);
    QVERIFY(vp->window().center > 40);
    QCOMPARE(vp->window().width, 80.0);
    QVERIFY(meanGrey(vp->renderedImage()) < meanGrey(next));
    // Right-drag to the right widens the window: fewer pixels clipped to black or white.
    const VoiWindow leveled = vp->window();
    sendMouse(vp, QEvent::MouseButtonPress, start, Qt::RightButton, Qt::RightButton);
    sendMouse(vp, QEvent::MouseMove, start + QPoint(200, 0), Qt::NoButton, Qt::RightButton);
    sendMouse(vp, QEvent::MouseButtonRelease, start + QPoint(200, 0), Qt::RightButton, Qt::NoButton);
    QVERIFY(vp->window().width > leveled.width);
    QCOMPARE(vp->window().center, leveled.center);

    const VoiWindow userWindow = vp->window();
    sendWheel(vp, 120);
    QTRY_COMPARE(shown.last().at(0).toInt(), first);
    QCOMPARE(vp->window(), userWindow);
    QCOMPARE(vp->renderedImage(), toQImage(renderFrame(expected.value(), 0, userWindow)));

    // Ctrl+wheel zooms instead of scrolling.
    const double zoom = vp->zoom();
    sendWheel(vp, 120, Qt::ControlModifier);
    QVERIFY(vp->zoom() > zoom);
    QCOMPARE(viewer->sliceIndex(), first);

    // The screen shows it: the widget's pixels change with the slice.
    const QImage screenBefore = vp->grab().toImage();
    viewer->showSlice(60);
    QTRY_COMPARE(shown.last().at(0).toInt(), 60);
    QVERIFY(vp->grab().toImage() != screenBefore);
}

void tst_Workstation::keysFromTheMenusActOnTheOpenStudy()
{
    StudyViewer *viewer = m_window->openStudy(QStringLiteral("demo-ct"));
    QVERIFY(viewer);
    ImageViewport *vp = viewer->viewport();
    QTRY_VERIFY(vp->hasImage());
    m_window->activateWindow();
    vp->setFocus();
    QTRY_VERIFY(vp->hasFocus());
    auto press = [&](const QKeySequence &key) { QTest::keySequence(m_window.get(), key); };

    press(QKeySequence(Qt::Key_2));  // lung
    QCOMPARE(vp->window(), (VoiWindow{ctWindowPresets()[1].center, ctWindowPresets()[1].width}));
    press(QKeySequence(Qt::Key_3));  // bone
    QCOMPARE(vp->window(), (VoiWindow{ctWindowPresets()[2].center, ctWindowPresets()[2].width}));
    press(QKeySequence(Qt::Key_A));
    QCOMPARE(vp->window(), autoWindow(vp->image()));
    press(QKeySequence(Qt::Key_BracketRight));
    QCOMPARE(vp->rotation(), 90);
    press(QKeySequence(Qt::Key_H));
    QVERIFY(vp->isFlippedHorizontally());
    press(QKeySequence(Qt::Key_I));
    QVERIFY(vp->isInverted());
    press(QKeySequence(QStringLiteral("Shift+F")));
    QCOMPARE(vp->displayScale(), 1.0);
    press(QKeySequence(Qt::Key_D));
    QCOMPARE(vp->tool(), ImageViewport::Tool::Distance);
    press(QKeySequence(Qt::Key_R));
    QCOMPARE(vp->rotation(), 0);
    QVERIFY(!vp->isInverted() && !vp->isFlippedHorizontally());
    press(QKeySequence(Qt::Key_P));
    QCOMPARE(vp->tool(), ImageViewport::Tool::Pan);

    // Cine runs through the stack on its own, and stops on the same key.
    QSignalSpy shown(viewer, &StudyViewer::imageShown);
    const int from = viewer->sliceIndex();
    press(QKeySequence(Qt::Key_C));
    QVERIFY(viewer->isCinePlaying());
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 5, 10000);
    press(QKeySequence(Qt::Key_C));
    QVERIFY(!viewer->isCinePlaying());
    QVERIFY(viewer->sliceIndex() != from);
    for (int i = 1; i < shown.count(); ++i)  // one slice at a time, in order, wrapping at the end
        QCOMPARE(shown.at(i).at(0).toInt(), (shown.at(i - 1).at(0).toInt() + 1) % viewer->sliceCount());
}

/// Typing "D" into the patient name field types a D: no tool changes, nothing flips; Help lists every binding.
void tst_Workstation::singleKeysNeverFireWhileTyping()
{
    StudyViewer *viewer = m_window->openStudy(QStringLiteral("demo-ct"));
    QVERIFY(viewer);
    const ImageViewport::Tool before = viewer->viewport()->tool();
    const bool flipped = viewer->viewport()->isFlippedHorizontally();
    QLineEdit *name = m_window->browser()->patientNameField();
    m_window->browser()->window()->activateWindow();
    QTabWidget *tabs = m_window->findChild<QTabWidget *>();
    tabs->setCurrentIndex(0);
    name->setFocus();
    name->clear();
    QTest::keyClicks(name, QStringLiteral("DHEB"));
    QCOMPARE(name->text(), QStringLiteral("DHEB"));
    QCOMPARE(viewer->viewport()->tool(), before);
    QCOMPARE(viewer->viewport()->isFlippedHorizontally(), flipped);
    name->clear();
    // Every action with a key is in Help ▸ Mouse and keys.
    const QString help = m_window->keyBindingsHtml();
    for (QAction *a : m_window->findChildren<QAction *>()) {
        if (!a->shortcut().isEmpty() && !a->text().isEmpty())
            QVERIFY2(help.contains(a->text().remove(QLatin1Char('&')).toHtmlEscaped()), qPrintable(a->text()));
    }
    QVERIFY(help.contains(QStringLiteral("Segmentations")));
    QVERIFY(help.contains(QStringLiteral("Import files")));
}

/// Forty ended sends never grow the panel past a screen: it scrolls inside itself; Clear finished empties it.
void tst_Workstation::theTransfersPanelScrollsAndClearsWhatEnded()
{
    TransfersPanel panel;
    panel.resize(300, 400);
    const int emptyHeight = panel.minimumSizeHint().height();
    for (int i = 0; i < 40; ++i) {
        auto *job = failedJob<ExportSummary>(Error(ErrorCode::Network, QStringLiteral("the archive is away")));
        panel.addSend(job, QStringLiteral("Send %1").arg(i));
        job->start(ExecutionPolicy::Sync);
    }
    QCOMPARE(panel.count(), 40);
    QVERIFY2(panel.minimumSizeHint().height() < emptyHeight + 200, qPrintable(QString::number(panel.minimumSizeHint().height())));
    auto *clear = panel.findChild<QPushButton *>(QStringLiteral("clearFinished"));
    QVERIFY(clear);
    clear->click();
    QCOMPARE(panel.count(), 0);
}

/// View > DICOM tags lists the elements of the image in view, follows it, and finds by tag, keyword or value.
void tst_Workstation::theTagViewerFollowsTheImageAndSearches()
{
    StudyViewer *viewer = m_window->openStudy(QStringLiteral("demo-ct"));
    QVERIFY(viewer);
    viewer->showSlice(10);
    QTRY_VERIFY(viewer->viewport()->hasImage() && viewer->sliceIndex() == 10);
    TagViewer *tags = m_window->tagViewer();
    QSignalSpy shown(tags, &TagViewer::shown);
    m_window->tagDock()->show();
    QVERIFY(shown.wait(10000));
    QCOMPARE(tags->instanceKey(), viewer->study().series[0].instances[10].key);
    const QList<QTreeWidgetItem *> names = tags->tree()->findItems(QStringLiteral("PatientName"), Qt::MatchExactly | Qt::MatchRecursive, 1);
    QCOMPARE(names.size(), 1);
    QCOMPARE(names.first()->text(0), QStringLiteral("(0010,0010)"));
    QCOMPARE(names.first()->text(2), QStringLiteral("PN"));
    QCOMPARE(names.first()->text(3), QStringLiteral("DEMO^HEAD PHANTOM"));
    const QList<QTreeWidgetItem *> pixels = tags->tree()->findItems(QStringLiteral("PixelData"), Qt::MatchExactly | Qt::MatchRecursive, 1);
    QCOMPARE(pixels.size(), 1);
    QVERIFY(pixels.first()->text(3).contains(QStringLiteral("bytes of binary data")));
    // Searched by tag (with or without the comma), by keyword, by value.
    for (const QString &needle : {QStringLiteral("0010,0020"), QStringLiteral("00100020"), QStringLiteral("patientid"), QStringLiteral("DEMO-HEAD-001")}) {
        tags->filterField()->setText(needle);
        int visible = 0;
        for (int i = 0; i < tags->tree()->topLevelItemCount(); ++i)
            visible += !tags->tree()->topLevelItem(i)->isHidden();
        QVERIFY2(visible >= 1 && visible <= 2, qPrintable(needle + QStringLiteral(": %1").arg(visible)));
        QVERIFY(!tags->tree()->findItems(QStringLiteral("PatientID"), Qt::MatchExactly | Qt::MatchRecursive, 1).first()->isHidden());
    }
    tags->filterField()->clear();
    // It follows the image in view.
    shown.clear();
    viewer->showSlice(11);
    QVERIFY(shown.wait(10000));
    QCOMPARE(tags->instanceKey(), viewer->study().series[0].instances[11].key);
    m_window->tagDock()->hide();
}

/// The stores dialog: New never overwrites, a rename moves, only the chosen kind's fields show, edits are tracked;
/// the workstation's own AE title and port are set there and its Storage SCP starts as soon as a configuration
/// exists; a store added by `spectrum-cli stores add` meanwhile appears without a restart.
void tst_Workstation::theStoresDialogKeepsWhatItHoldsAndFollowsTheFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("config/stores.json"));
    Workstation::Options options;
    options.cacheDirectory = dir.filePath(QStringLiteral("cache"));
    options.seedDemoWhenEmpty = false;
    options.stores = StoreConfigFile::load(path).value();  // no file yet
    options.storesFile = path;
    options.listenWhenConfigured = true;
    Workstation ws(options);
    QSignalSpy started(&ws, &Workstation::started);
    ws.start();
    QVERIFY(started.wait(10000));
    QVERIFY(!ws.isListening());  // nothing configured yet

    StoresDialog dialog(&ws);
    dialog.workstationAeTitleField()->setText(QStringLiteral("READROOM2"));
    const quint16 port = freePort();
    dialog.workstationPortField()->setValue(port);
    dialog.saveWorkstation();
    QVERIFY2(QFile::exists(path), qPrintable(dialog.status()));
    QTRY_VERIFY(ws.isListening());  // the first configuration: the Storage SCP listens
    QCOMPARE(ws.storeConfig().workstation.aeTitle, QStringLiteral("READROOM2"));
    const ProcessResult echo = run(QStringLiteral(ECHOSCU_EXECUTABLE), {QStringLiteral("-aec"), QStringLiteral("READROOM2"), QStringLiteral("127.0.0.1"), QString::number(port)});
    QVERIFY2(echo.ok(), echo.err.constData());

    // Only the fields of the chosen kind.
    dialog.newStore();
    dialog.kindField()->setCurrentIndex(dialog.kindField()->findData(int(StoreKind::DicomWeb)));
    QVERIFY(dialog.isFieldShown(dialog.urlField()));
    QVERIFY(!dialog.isFieldShown(dialog.hostField()));
    dialog.kindField()->setCurrentIndex(dialog.kindField()->findData(int(StoreKind::Dimse)));
    QVERIFY(!dialog.isFieldShown(dialog.urlField()));
    QVERIFY(dialog.isFieldShown(dialog.hostField()));
    QVERIFY(dialog.isFieldShown(dialog.aeTitleField()));
    dialog.kindField()->setCurrentIndex(dialog.kindField()->findData(int(StoreKind::DicomWeb)));

    // A new store, then New with the same name: refused, the first one kept.
    QTest::keyClicks(dialog.nameField(), QStringLiteral("archive"));
    QVERIFY(dialog.hasUnsavedChanges());
    dialog.urlField()->setText(QStringLiteral("http://127.0.0.1:1/dicom-web"));
    dialog.timeoutField()->setValue(45);
    dialog.saveStore();
    QVERIFY2(dialog.status().contains(QStringLiteral("saved")), qPrintable(dialog.status()));
    QVERIFY(!dialog.hasUnsavedChanges());
    QCOMPARE(ws.storeConfig().find(QStringLiteral("archive"))->timeoutSeconds, 45);
    dialog.newStore();
    dialog.nameField()->setText(QStringLiteral("archive"));
    dialog.urlField()->setText(QStringLiteral("http://127.0.0.1:2/dicom-web"));
    dialog.saveStore();
    QVERIFY2(dialog.status().contains(QStringLiteral("exists already")), qPrintable(dialog.status()));
    QCOMPARE(ws.storeConfig().find(QStringLiteral("archive"))->url, QStringLiteral("http://127.0.0.1:1/dicom-web"));

    // Chosen in the list and renamed: one store, under its new name.
    dialog.newStore();
    auto *list = dialog.findChild<QListWidget *>();
    QVERIFY(list);
    list->setCurrentRow(0);
    QCOMPARE(dialog.editing(), QStringLiteral("archive"));
    dialog.nameField()->setText(QStringLiteral("archive-2"));
    dialog.saveStore();
    QVERIFY(ws.storeConfig().find(QStringLiteral("archive-2")));
    QVERIFY(!ws.storeConfig().find(QStringLiteral("archive")));
    QCOMPARE(ws.storeConfig().stores().size(), 1);

    // Added from the command line while all this runs: there at once, in the workstation and in the dialog.
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_CONFIG"), path);
    QProcess cli;
    cli.setProcessEnvironment(env);
    cli.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("stores"), QStringLiteral("add"), QStringLiteral("from-cli"), QStringLiteral("--kind"),
                                                      QStringLiteral("dicomweb"), QStringLiteral("--url"), QStringLiteral("http://127.0.0.1:3/dicom-web")});
    QVERIFY(cli.waitForFinished(30000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    QTRY_VERIFY(ws.storeConfig().find(QStringLiteral("from-cli")));
    QTRY_COMPARE(list->count(), 2);
    QVERIFY(ws.storeConfig().find(QStringLiteral("archive-2")));
}

void tst_Workstation::filtersApplyLiveAndToggleOff()
{
    StudyViewer *viewer = m_window->openStudy(QStringLiteral("demo-ct"));
    QVERIFY(viewer);
    ImageViewport *vp = viewer->viewport();
    QTRY_VERIFY(vp->hasImage());
    viewer->showSlice(50);
    QTRY_COMPARE(vp->image().info.identity.sopInstanceUid, viewer->study().series[0].instances[50].sopInstanceUid);
    Result<DecodedImage> original = runSync(loadImage(m_ws->localStore(), viewer->study().series[0].instances[50].key));
    QVERIFY(original.isOk());

    FilterPanel *panel = m_window->filterPanel();
    panel->setSpecs({QStringLiteral("gaussian:sigma=2"), QStringLiteral("invert")});
    QVERIFY(panel->problem().isEmpty());
    Result<FilterChain> chain = panel->registry().makeChain(panel->specs());
    QVERIFY(chain.isOk());
    Result<PixelBuffer> expected = applyFilters(chain.value(), original.value().pixels, original.value().info, nullptr);
    QVERIFY(expected.isOk());
    // What is on screen is the original through the chain, in the window in use.
    QTRY_VERIFY(viewer->isFiltering() && vp->shownImage().pixels.frameBytes() == expected.value().frameBytes()
                && std::memcmp(vp->shownImage().pixels.frameData(0), expected.value().frameData(0), size_t(expected.value().frameBytes())) == 0);
    QCOMPARE(vp->renderedImage(), toQImage(renderFrame(DecodedImage{original.value().info, expected.value()}, 0, vp->window())));

    // Off (T): the original again; on: the filtered image, at once (kept).
    QTest::keySequence(m_window.get(), QKeySequence(Qt::Key_T));
    QVERIFY(!panel->isApplied());
    QTRY_VERIFY(!viewer->isFiltering());
    QTRY_VERIFY(std::memcmp(vp->shownImage().pixels.frameData(0), original.value().pixels.frameData(0), size_t(expected.value().frameBytes())) == 0);
    QTest::keySequence(m_window.get(), QKeySequence(Qt::Key_T));
    QTRY_VERIFY(std::memcmp(vp->shownImage().pixels.frameData(0), expected.value().frameData(0), size_t(expected.value().frameBytes())) == 0);

    // A mistyped parameter is a clear problem, and the original is shown.
    panel->setSpecs({QStringLiteral("gaussian:sigma=-4")});
    QVERIFY(panel->problem().contains(QStringLiteral("sigma")));
    QTRY_VERIFY(!viewer->isFiltering());
    panel->setSpecs({});
}

void tst_Workstation::valuesAndMeasurementsIgnoreTheFilters()
{
    StudyViewer *viewer = m_window->openStudy(QStringLiteral("demo-ct"));
    QVERIFY(viewer);
    ImageViewport *vp = viewer->viewport();
    FilterPanel *panel = m_window->filterPanel();
    panel->setSpecs({});
    viewer->showSlice(60);
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.sopInstanceUid == viewer->study().series[0].instances[60].sopInstanceUid);
    QVERIFY(!vp->isFiltered());
    vp->clearMeasurements();
    const double w = vp->image().info.columns, h = vp->image().info.rows;
    vp->addMeasurement({Measurement::Kind::Ellipse, QPointF(w * 0.42, h * 0.4), QPointF(w * 0.58, h * 0.52)});
    vp->addMeasurement({Measurement::Kind::Distance, QPointF(w * 0.2, h * 0.75), QPointF(w * 0.8, h * 0.75)});
    const QPoint cursor = vp->imageToWidget().map(QPointF(w * 0.5 + 0.5, h * 0.45 + 0.5)).toPoint();
    sendMouse(vp, QEvent::MouseMove, cursor, Qt::NoButton, Qt::NoButton);
    const QString readout = vp->pixelReadout();
    QVERIFY2(readout.endsWith(QStringLiteral(" HU")), qPrintable(readout));
    QStringList texts;
    for (const Measurement &m : vp->measurements())
        texts << vp->measurementText(m);
    QVERIFY2(texts.first().startsWith(QStringLiteral("Mean ")), qPrintable(texts.first()));

    // Sharpen changes what is painted (it overshoots at edges and lifts the noise) and nothing that is read; so
    // does a zoom, which doubles the pixels painted over the same extent.
    for (const QString &spec : {QStringLiteral("sharpen"), QStringLiteral("zoom:factor=2")}) {
        panel->setSpecs({spec});
        QTRY_VERIFY(vp->isFiltered() && vp->shownImage().pixels.frameBytes() > 0
                    && (vp->shownImage().pixels.frameBytes() != vp->image().pixels.frameBytes()
                        || std::memcmp(vp->shownImage().pixels.frameData(0), vp->image().pixels.frameData(0), size_t(vp->image().pixels.frameBytes())) != 0));
        QCOMPARE(vp->image().info.identity.sopInstanceUid, viewer->study().series[0].instances[60].sopInstanceUid);
        sendMouse(vp, QEvent::MouseMove, cursor, Qt::NoButton, Qt::NoButton);
        QCOMPARE(vp->pixelReadout(), readout);
        QStringList now;
        for (const Measurement &m : vp->measurements())
            now << vp->measurementText(m);
        QCOMPARE(now, texts);
    }
    // The overlay says the view is filtered and where the numbers come from (a banner under the badge).
    const QImage filteredShot = vp->grab().toImage();
    panel->setSpecs({});
    QTRY_VERIFY(!vp->isFiltered());
    vp->setWindow(vp->window());
    const QImage plainShot = vp->grab().toImage();
    const QRect banner(vp->width() / 4, 20, vp->width() / 2, 50);
    QVERIFY(filteredShot.copy(banner) != plainShot.copy(banner));
    vp->clearMeasurements();
}

void tst_Workstation::filtersStayWithTheirStudyUnlessAPresetSaysSo()
{
    FilterPanel *panel = m_window->filterPanel();
    StudyViewer *ct = m_window->openStudy(QStringLiteral("demo-ct"));
    QVERIFY(ct);
    panel->setSpecs({QStringLiteral("sharpen")});
    QTRY_VERIFY(ct->isFiltering());

    // Another patient's study opens as acquired: the chain stays with the CT.
    StudyViewer *mr = m_window->openStudy(QStringLiteral("demo-mr"));
    QVERIFY(mr && mr != ct);
    QTRY_VERIFY(mr->viewport()->hasImage());
    QVERIFY(!mr->isFiltering());
    QVERIFY(!mr->viewport()->isFiltered());
    QVERIFY(panel->specs().isEmpty());
    QVERIFY(ct->isFiltering());
    QCOMPARE(m_window->openStudy(QStringLiteral("demo-ct")), ct);  // back to the CT: its chain in the panel
    QCOMPARE(panel->specs(), QStringList{QStringLiteral("sharpen")});
    QVERIFY(ct->isFiltering());

    // A preset saved for MR on purpose opens every MR study through it, named on the image.
    QVERIFY(panel->savePreset({QStringLiteral("MR smooth"), {QStringLiteral("gaussian:sigma=1")}, QStringLiteral("MR")}));
    QVERIFY(!panel->savePreset({QStringLiteral("MR smooth"), {QStringLiteral("sharpen")}, QString()}));  // never silently replaced
    QVERIFY(!panel->savePreset({QStringLiteral("Broken"), {QStringLiteral("gaussian:sigma=-1")}, QString()}));
    QCOMPARE(m_window->openStudy(QStringLiteral("demo-mr")), mr);
    QTest::keySequence(m_window.get(), QKeySequence::Close);
    QTRY_VERIFY(m_window->currentViewer() != mr);
    mr = m_window->openStudy(QStringLiteral("demo-mr"));
    QVERIFY(mr);
    QVERIFY(mr->isFiltering());
    QVERIFY2(mr->filterDescription().contains(QStringLiteral("MR smooth")), qPrintable(mr->filterDescription()));
    QTRY_VERIFY(mr->viewport()->isFiltered());
    QCOMPARE(panel->presetName(), QStringLiteral("MR smooth"));
    // The CR (another modality) is not touched by it.
    StudyViewer *cr = m_window->openStudy(QStringLiteral("demo-cr"));
    QVERIFY(cr && !cr->isFiltering());

    // Filters that move pixels are refused on screen: values and letters would land on the wrong side.
    m_window->openStudy(QStringLiteral("demo-ct"));
    panel->setSpecs({QStringLiteral("flip:axis=horizontal")});
    QVERIFY2(panel->problem().contains(QStringLiteral("moves the image's pixels")), qPrintable(panel->problem()));
    QTRY_VERIFY(!ct->isFiltering());
    panel->setSpecs({});

    panel->removePreset(QStringLiteral("MR smooth"));
    QVERIFY(panel->presets().isEmpty());
    m_window->openStudy(QStringLiteral("demo-ct"));
    panel->setSpecs({});
    QTRY_VERIFY(!ct->isFiltering());
}

void tst_Workstation::seriesThumbnailsShowTheirMiddleImage()
{
    StudyViewer *viewer = m_window->openStudy(QStringLiteral("demo-mr"));
    QVERIFY(viewer);
    QTRY_VERIFY(!viewer->thumbnail(0).isNull());
    const QList<InstanceRef> &in = viewer->study().series[0].instances;
    Result<DecodedImage> middle = runSync(loadImage(m_ws->localStore(), in[in.size() / 2].key));
    QVERIFY(middle.isOk());
    const QImage expected = toQImage(renderFrame(middle.value(), 0, defaultWindow(middle.value()))).scaled(96, 96, Qt::KeepAspectRatio, Qt::SmoothTransformation);
    QCOMPARE(viewer->thumbnail(0), expected);
    auto *list = viewer->findChild<QListWidget *>(QStringLiteral("seriesList"));
    QVERIFY(list && !list->item(0)->icon().isNull());
}

void tst_Workstation::layoutsSynchronisedScrollingAndDroppingASeries()
{
    StudyViewer *viewer = m_window->openStudy(QStringLiteral("demo-ct"));
    QVERIFY(viewer);
    QTRY_VERIFY(viewer->viewport()->hasImage());
    m_window->activateWindow();
    viewer->setFocus();
    auto press = [&](const char *key) { QTest::keySequence(m_window.get(), QKeySequence(QString::fromLatin1(key))); };

    press("Ctrl+Alt+2");
    QCOMPARE(viewer->paneCount(), 2);
    QTRY_VERIFY(viewer->pane(1)->viewport()->hasImage());  // the only series, in both
    QCOMPARE(viewer->pane(1)->seriesIndex(), 0);
    QTRY_VERIFY(viewer->pane(0)->isVisible() && viewer->pane(1)->isVisible());

    // Synchronised: the other pane follows the active one through the stack.
    press("S");
    QVERIFY(viewer->isSynchronized());
    QCOMPARE(viewer->activePane(), viewer->pane(0));
    viewer->showSlice(40);
    QTRY_COMPARE(viewer->pane(1)->sliceIndex(), 40);
    QTRY_COMPARE(viewer->pane(1)->viewport()->image().info.identity.sopInstanceUid, viewer->study().series[0].instances[40].sopInstanceUid);
    press("S");
    QVERIFY(!viewer->isSynchronized());
    viewer->showSlice(60);
    QTRY_COMPARE(viewer->pane(0)->sliceIndex(), 60);
    QCOMPARE(viewer->pane(1)->sliceIndex(), 40);  // stays

    // A click makes a pane the active one: keys and menus act on it.
    const QPoint centre(viewer->pane(1)->viewport()->width() / 2, viewer->pane(1)->viewport()->height() / 2);
    sendMouse(viewer->pane(1)->viewport(), QEvent::MouseButtonPress, centre, Qt::LeftButton, Qt::LeftButton);
    sendMouse(viewer->pane(1)->viewport(), QEvent::MouseButtonRelease, centre, Qt::LeftButton, Qt::NoButton);
    QCOMPARE(viewer->activePane(), viewer->pane(1));
    QCOMPARE(viewer->viewport(), viewer->pane(1)->viewport());
    press("I");
    QVERIFY(viewer->pane(1)->viewport()->isInverted());
    QVERIFY(!viewer->pane(0)->viewport()->isInverted());

    // A series dropped on a pane: that pane shows it and becomes active.
    QMimeData data;
    data.setData(seriesMimeType(), "0");
    const QPointF at(10, 10);
    QDragEnterEvent enter(at.toPoint(), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(viewer->pane(0), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(at, Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(viewer->pane(0), &drop);
    QCOMPARE(viewer->activePane(), viewer->pane(0));

    press("Ctrl+Alt+4");
    QCOMPARE(viewer->paneCount(), 4);
    QTRY_VERIFY(viewer->pane(3)->viewport()->hasImage());
    press("Ctrl+Alt+1");
    QCOMPARE(viewer->paneCount(), 1);
    QVERIFY(viewer->viewport()->hasImage());
}

// Three series of one study: thin slices; thick slices of the same volume numbered the other way round (its
// first image is the thin series' last); a series in another frame of reference. Synchronised, a pane follows
// to the slice through the same place in the patient, and the series elsewhere stays put.
void tst_Workstation::synchronisedScrollingFollowsTheFrameOfReference()
{
    QTemporaryDir dir;
    DemoOptions demo;
    demo.studies = {DemoStudy::HeadCt};
    demo.ctSlices = 40;
    QStringList thin;
    QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) {
                 QFile f(dir.filePath(QStringLiteral("thin%1.dcm").arg(thin.size(), 3, 10, QLatin1Char('0'))));
                 if (!f.open(QIODevice::WriteOnly) || f.write(i.bytes) != i.bytes.size())
                     return Error(ErrorCode::Io, f.fileName());
                 thin << f.fileName();
                 return Error();
             }).isError());
    const QString study = QStringLiteral("2.25.4711000000000000000000000000000001");
    auto modify = [](const QString &path, const QStringList &changes) {
        QStringList args{QStringLiteral("-nb")};
        for (const QString &c : changes)
            args << QStringLiteral("-m") << c;
        QProcess p;
        p.start(QStringLiteral("dcmodify"), args << path);
        return p.waitForFinished(30000) && p.exitCode() == 0;
    };
    QStringList files;
    for (int i = 0; i < thin.size(); ++i) {
        const QString uid = QStringLiteral("(0008,0018)=2.25.47110000000000000000000000000010%1").arg(i, 2, 10, QLatin1Char('0'));
        if (i % 4 == 0) {  // every fourth slice again, as a thick series numbered top down
            const QString thick = dir.filePath(QStringLiteral("thick%1.dcm").arg(i, 3, 10, QLatin1Char('0')));
            QVERIFY(QFile::copy(thin[i], thick));
            QVERIFY(modify(thick, {QStringLiteral("(0020,000D)=") + study, QStringLiteral("(0020,000E)=2.25.4711000000000000000000000000000003"),
                                   QStringLiteral("(0020,0011)=2"), QStringLiteral("(0008,103E)=Thick"), QStringLiteral("(0018,0050)=5"),
                                   QStringLiteral("(0020,0013)=%1").arg(100 - i),
                                   QStringLiteral("(0008,0018)=2.25.47110000000000000000000000000030%1").arg(i, 2, 10, QLatin1Char('0'))}));
            files << thick;
        }
        if (i < 5) {  // a few slices in another frame of reference
            const QString other = dir.filePath(QStringLiteral("other%1.dcm").arg(i));
            QVERIFY(QFile::copy(thin[i], other));
            QVERIFY(modify(other, {QStringLiteral("(0020,000D)=") + study, QStringLiteral("(0020,000E)=2.25.4711000000000000000000000000000004"),
                                   QStringLiteral("(0020,0011)=3"), QStringLiteral("(0020,0052)=2.25.4711000000000000000000000000000005"),
                                   QStringLiteral("(0008,0018)=2.25.47110000000000000000000000000040%1").arg(i, 2, 10, QLatin1Char('0'))}));
            files << other;
        }
        QVERIFY(modify(thin[i], {QStringLiteral("(0020,000D)=") + study, QStringLiteral("(0020,000E)=2.25.4711000000000000000000000000000002"), uid}));
        files << thin[i];
    }
    for (const QString &f : files) {
        Result<BlobInfo> put = runSync(m_ws->cache()->importFile(QFileInfo(f).completeBaseName() + QStringLiteral("-sync"), f));
        QVERIFY2(put.isOk(), qPrintable(put.error().toString()));
    }
    QTRY_VERIFY_WITH_TIMEOUT(m_ws->findStudy(study) && m_ws->findStudy(study)->instanceCount == 55, 10000);
    QCOMPARE(m_ws->findStudy(study)->series.size(), 3);

    StudyViewer *viewer = m_window->openStudy(study);
    QVERIFY(viewer);
    auto press = [&](const char *key) { QTest::keySequence(m_window.get(), QKeySequence(QString::fromLatin1(key))); };
    m_window->activateWindow();
    viewer->setFocus();
    press("Ctrl+Alt+4");
    QCOMPARE(viewer->paneCount(), 4);
    SeriesPane *thinPane = viewer->pane(0), *thickPane = viewer->pane(1), *otherPane = viewer->pane(2);
    QCOMPARE(thinPane->seriesIndex(), 0);
    QCOMPARE(thickPane->seriesIndex(), 1);
    QCOMPARE(otherPane->seriesIndex(), 2);
    QTRY_VERIFY(otherPane->viewport()->hasImage() && thickPane->viewport()->hasImage());
    const int otherSlice = otherPane->sliceIndex();
    viewer->setActivePane(thinPane);
    if (!viewer->isSynchronized())
        press("S");
    QVERIFY(viewer->isSynchronized());

    // Thick slice j is thin slice 36 − 4j.
    const auto &thickRefs = viewer->study().series[1].instances;
    viewer->showSlice(20);
    QTRY_COMPARE(thickPane->sliceIndex(), 4);
    QTRY_COMPARE(thickPane->viewport()->image().info.identity.sopInstanceUid, thickRefs[4].sopInstanceUid);
    viewer->showSlice(25);  // nearest thick slice: thin 24
    QTRY_COMPARE(thickPane->sliceIndex(), 3);
    viewer->showSlice(39);  // beyond the thick stack's last slice: its end
    QTRY_COMPARE(thickPane->sliceIndex(), 0);
    QCOMPARE(otherPane->sliceIndex(), otherSlice);  // another frame of reference: not followed

    // The other way: the thick pane leads.
    viewer->setActivePane(thickPane);
    viewer->showSlice(8);
    QTRY_COMPARE(thinPane->sliceIndex(), 4);
    QTRY_COMPARE(thinPane->viewport()->image().info.identity.sopInstanceUid, viewer->study().series[0].instances[4].sopInstanceUid);
    QCOMPARE(otherPane->sliceIndex(), otherSlice);
    press("S");
    QVERIFY(!viewer->isSynchronized());
    press("Ctrl+Alt+1");

    for (const QString &f : files)  // the cache as the other tests expect it
        QVERIFY(runSync(m_ws->cache()->remove(QFileInfo(f).completeBaseName() + QStringLiteral("-sync"))).isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!m_ws->findStudy(study), 10000);
}

// Every pane of every open study shares one memory budget for decoded images, set in the cache dialog; clearing
// the cache empties it, and images are decoded again as they are needed.
void tst_Workstation::decodedImagesStayWithinTheMemoryBudget()
{
    ImageMemoryCache *images = m_ws->images();
    const qint64 before = images->budget();
    const qint64 slice = 512 * 512 * 2;
    // Through the dialog, as an administrator would: 16 MB.
    QTimer::singleShot(0, this, [&] {
        QWidget *dialog = QApplication::activeModalWidget();
        QVERIFY(dialog && dialog->objectName() == QStringLiteral("cacheDialog"));
        QCOMPARE(dialog->findChild<QSpinBox *>(QStringLiteral("diskBudget"))->text(), QStringLiteral("no budget"));  // as it is
        dialog->findChild<QSpinBox *>(QStringLiteral("memoryBudget"))->setValue(16);
        dialog->findChild<QPushButton *>(QStringLiteral("applyBudgets"))->click();
        QVERIFY(dialog->findChild<QLabel *>(QStringLiteral("memoryUsage"))->text().contains(QStringLiteral("of a 16 MB budget")));
        dialog->close();
    });
    m_window->showCacheSettings();
    QCOMPARE(images->budget(), qint64(16'000'000));
    QCOMPARE(m_ws->cache()->usage().budget, qint64(0));  // the disk's budget left alone

    StudyViewer *viewer = m_window->openStudy(QStringLiteral("demo-ct"));
    QVERIFY(viewer);
    viewer->setGrid(1, 2);  // both panes on the CT: they share its decoded slices
    QTRY_VERIFY(viewer->pane(1)->viewport()->hasImage());
    for (int i = 0; i < 120; i += 3) {
        viewer->showSlice(i);
        QTRY_COMPARE(viewer->viewport()->image().info.identity.sopInstanceUid, viewer->study().series[0].instances[i].sopInstanceUid);
        QVERIFY2(images->usage() <= images->budget(), qPrintable(QString::number(images->usage())));
    }
    QVERIFY(images->count() <= int(16'000'000 / slice));
    QVERIFY(images->count() >= 16'000'000 / slice - 2);  // filled, not emptied early
    images->clear();
    QCOMPARE(images->usage(), qint64(0));
    viewer->showSlice(7);
    QTRY_COMPARE(viewer->viewport()->image().info.identity.sopInstanceUid, viewer->study().series[0].instances[7].sopInstanceUid);
    QVERIFY(images->usage() >= slice);
    viewer->setGrid(1, 1);

    // Remembered with the other settings.
    QTemporaryDir dir;
    QSettings settings(dir.filePath(QStringLiteral("spectrum.conf")), QSettings::IniFormat);
    m_window->saveSettings(settings);
    images->setBudget(before);
    m_window->restoreSettings(settings);
    QCOMPARE(images->budget(), qint64(16'000'000));
    images->setBudget(before);
}

void tst_Workstation::settingsAreRememberedAcrossRestarts()
{
    QTemporaryDir dir;
    QSettings settings(dir.filePath(QStringLiteral("spectrum.conf")), QSettings::IniFormat);
    const FilterPreset bone{QStringLiteral("Bone detail"), {QStringLiteral("despeckle"), QStringLiteral("sharpen:p=0.3")}, QStringLiteral("CR")};
    {
        MainWindow first(m_ws.get());
        QVERIFY(first.openStudy(QStringLiteral("demo-ct")));
        first.filterPanel()->setSpecs({QStringLiteral("gaussian:sigma=2")});  // a working chain: this study's alone
        QVERIFY(first.filterPanel()->savePreset(bone));
        const QList<QAction *> actions = first.findChildren<QAction *>();
        for (QAction *a : actions) {
            if (a->shortcut() == QKeySequence(Qt::Key_E))  // the ellipse ROI tool
                a->trigger();
        }
        first.resize(1111, 777);
        first.saveSettings(settings);
    }
    settings.sync();
    MainWindow second(m_ws.get());
    second.restoreSettings(settings);
    QCOMPARE(second.filterPanel()->presets(), QList<FilterPreset>{bone});
    QCOMPARE(second.size(), QSize(1111, 777));
    // The working chain was not kept: after a restart the CT opens as acquired; the CR through its preset.
    StudyViewer *ct = second.openStudy(QStringLiteral("demo-ct"));
    QVERIFY(ct && !ct->isFiltering());
    QVERIFY(second.filterPanel()->specs().isEmpty());
    StudyViewer *viewer = second.openStudy(QStringLiteral("demo-cr"));
    QVERIFY(viewer);
    QVERIFY(viewer->isFiltering());
    QCOMPARE(second.filterPanel()->specs(), bone.specs);
    QCOMPARE(viewer->viewport()->tool(), ImageViewport::Tool::Ellipse);
}

void tst_Workstation::reopeningUsesTheCacheWithoutReseeding()
{
    m_window.reset();
    m_ws.reset();
    Workstation::Options options;
    options.cacheDirectory = m_dir.filePath(QStringLiteral("cache"));
    Workstation again(options);
    QSignalSpy changed(&again, &Workstation::studiesChanged);
    QSignalSpy failed(&again, &Workstation::startFailed);
    again.start();
    QVERIFY(changed.wait(10000));
    QCOMPARE(failed.count(), 0);
    QVERIFY(!again.isSeeding());
    QCOMPARE(again.studies().size(), 3);
}

void tst_Workstation::aCacheInUseIsAClearStartError()
{
    QTemporaryDir dir;
    auto holder = FileStore::open(dir.path(), 0);  // another workstation has it open
    QVERIFY(holder.isOk());
    Workstation::Options options;
    options.cacheDirectory = dir.path();
    Workstation ws(options);
    QSignalSpy failed(&ws, &Workstation::startFailed);
    ws.start();
    QVERIFY(failed.wait(10000));
    const Error e = failed.first().first().value<Error>();
    QCOMPARE(e.code(), ErrorCode::Busy);
    QVERIFY(e.message().contains(QLatin1String("in use")));
}

void tst_Workstation::studiesPushedByAPacsAppearInTheList()
{
    // An empty workstation (no demo) with its Storage SCP; DCMTK's storescu plays the PACS pushing a study.
    QTemporaryDir dir;
    Workstation::Options options;
    options.cacheDirectory = dir.filePath(QStringLiteral("cache"));
    options.seedDemoWhenEmpty = false;
    options.storageAeTitle = QStringLiteral("READROOM");
    options.storagePort = freePort();
    Workstation ws(options);
    QSignalSpy started(&ws, &Workstation::started);
    ws.start();
    QVERIFY(started.wait(10000));
    QTRY_VERIFY(ws.isListening());
    QVERIFY(ws.studies().isEmpty());
    const ProcessResult made = run(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("demo"), QStringLiteral("--out"), dir.filePath(QStringLiteral("demo")),
                                                                         QStringLiteral("--only"), QStringLiteral("demo-mr")});
    QVERIFY2(made.ok(), made.err.constData());
    QStringList files;
    const QDir mr(dir.filePath(QStringLiteral("demo/demo-mr")));
    for (const QString &f : mr.entryList(QDir::Files, QDir::Name).mid(0, 3))
        files << mr.filePath(f);
    QCOMPARE(files.size(), 3);
    QSignalSpy received(&ws, &Workstation::instanceReceived);
    const ProcessResult pushed = run(QStringLiteral(STORESCU_EXECUTABLE), QStringList{QStringLiteral("-aec"), QStringLiteral("READROOM"), QStringLiteral("127.0.0.1"),
                                                                                      QString::number(options.storagePort)} + files);
    QVERIFY2(pushed.ok(), pushed.err.constData());
    QTRY_COMPARE(received.count(), 3);
    QTRY_COMPARE(ws.studies().size(), 1);  // the list updated itself
    QCOMPARE(ws.studies().first().identity.studyInstanceUid, DemoArchive::studyUid(DemoStudy::HeadMr));
    QVERIFY(ws.findStudy(QStringLiteral("demo-mr")));
}

/// Studies whose names pydicom wrote in Cyrillic (ISO_IR 144) and Japanese (ISO 2022 IR 87), pushed by a "PACS":
/// the study list, a search by the name as typed, the tab and the overlay show them in their own alphabet.
void tst_Workstation::namesInOtherAlphabetsEverywhereTheyAreShown()
{
    QTemporaryDir dir;
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(CHARSET_FILES_SCRIPT), dir.filePath(QStringLiteral("files"))});
    QVERIFY2(made.ok(), made.err.constData());
    std::unique_ptr<Workstation> pushed = workstationWith(dir, {dir.filePath(QStringLiteral("files/cyrillic.dcm")), dir.filePath(QStringLiteral("files/japanese.dcm"))});
    QVERIFY(pushed);
    Workstation &ws = *pushed;
    QTRY_COMPARE(ws.studies().size(), 2);

    MainWindow window(&ws);
    window.show();
    QAbstractItemModel *rows = window.studyTable()->model();
    QTRY_COMPARE(rows->rowCount(), 2);
    QStringList names;
    for (int r = 0; r < 2; ++r)
        names << rows->index(r, 0).data().toString();
    QVERIFY2(names.contains(QStringLiteral("Люкценберг, Иван")), qPrintable(names.join(QStringLiteral(" | "))));
    QVERIFY2(names.contains(QStringLiteral("Yamada, Tarou (山田 太郎)")), qPrintable(names.join(QStringLiteral(" | "))));

    // Searched as typed, in either alphabet.
    window.browser()->patientNameField()->setText(QStringLiteral("люк*"));
    window.browser()->refreshLocal();
    QTRY_COMPARE(rows->rowCount(), 1);
    QCOMPARE(rows->index(0, 0).data().toString(), QStringLiteral("Люкценберг, Иван"));
    window.browser()->patientNameField()->setText(QStringLiteral("山田*"));
    window.browser()->refreshLocal();
    QTRY_COMPARE(rows->rowCount(), 1);
    QCOMPARE(rows->index(0, 0).data().toString(), QStringLiteral("Yamada, Tarou (山田 太郎)"));

    const StudySummary cyrillic = *std::find_if(ws.studies().begin(), ws.studies().end(), [](const StudySummary &s) {
        return s.identity.patientId == QLatin1String("CS-CYRILLIC");
    });
    StudyViewer *viewer = window.openStudy(cyrillic.identity.studyInstanceUid);
    QVERIFY(viewer);
    QTRY_VERIFY(viewer->viewport()->hasImage());
    const QTabWidget *tabs = window.findChild<QTabWidget *>();
    QVERIFY(tabs->tabText(tabs->currentIndex()).startsWith(QStringLiteral("Люкценберг, Иван")));
    QVERIFY(viewer->viewport()->overlay().topLeft.startsWith(QStringLiteral("Люкценберг, Иван")));
    QVERIFY(viewer->viewport()->overlay().topRight.startsWith(QStringLiteral("КТ головы")));
}

/// A 10-frame MR, an Enhanced CT and an ultrasound loop that pydicom wrote: the wheel steps through frames, the
/// overlay says which, values and positions are each frame's, and cine plays at the rate they were acquired.
void tst_Workstation::multiFrameImagesStepAndPlayFrameByFrame()
{
    QTemporaryDir dir;
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(MULTIFRAME_FILES_SCRIPT), dir.filePath(QStringLiteral("files"))});
    QVERIFY2(made.ok(), made.err.constData());
    std::unique_ptr<Workstation> ws = workstationWith(dir, {dir.filePath(QStringLiteral("files/mr10.dcm")), dir.filePath(QStringLiteral("files/enhanced-ct.dcm")),
                                                          dir.filePath(QStringLiteral("files/us-loop.dcm"))});
    QVERIFY(ws);
    QTRY_COMPARE(ws->studies().size(), 1);
    MainWindow window(ws.get());
    window.resize(1200, 800);
    window.show();
    StudyViewer *viewer = window.openStudy(ws->studies().first().identity.studyInstanceUid);
    QVERIFY(viewer);
    QCOMPARE(viewer->study().series.size(), 3);
    ImageViewport *vp = viewer->viewport();

    // The MR: one instance, ten frames; the wheel goes frame by frame, and values are the frame's.
    viewer->showSeries(0);
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.modality == QLatin1String("MR"));
    QCOMPARE(vp->frameCount(), 10);
    QCOMPARE(vp->frame(), 0);
    QVERIFY2(vp->overlay().bottomLeft.startsWith(QStringLiteral("Im 1/1  Fr 1/10  (40 ms)")), qPrintable(vp->overlay().bottomLeft));
    const QPoint middle(vp->width() / 2, vp->height() / 2);
    sendMouse(vp, QEvent::MouseMove, middle, Qt::NoButton, Qt::NoButton);
    QVERIFY2(vp->pixelReadout().endsWith(QStringLiteral("= 100")), qPrintable(vp->pixelReadout()));
    vp->setWindow(VoiWindow{150, 100});  // frame 1 (100) black, frame 2 (200) white
    QCOMPARE(qGray(vp->renderedImage().pixel(5, 5)), 0);
    sendWheel(vp, -120);  // towards the next image
    QCOMPARE(vp->frame(), 1);
    QVERIFY(vp->pixelReadout().endsWith(QStringLiteral("= 200")));
    QVERIFY(vp->overlay().bottomLeft.startsWith(QStringLiteral("Im 1/1  Fr 2/10")));
    QCOMPARE(qGray(vp->renderedImage().pixel(5, 5)), 255);
    QTest::keyClick(viewer, Qt::Key_End);
    QCOMPARE(vp->frame(), 9);
    QTest::keyClick(viewer, Qt::Key_Down);  // past the last frame of the stack's last image: stays
    QCOMPARE(vp->frame(), 9);
    QTest::keyClick(viewer, Qt::Key_Home);
    QCOMPARE(vp->frame(), 0);
    // Measurements belong to their frame.
    vp->addMeasurement({Measurement::Kind::Distance, QPointF(2, 2), QPointF(12, 2)});
    QCOMPARE(vp->measurements().size(), 1);
    viewer->stepSlice(1);
    QVERIFY(vp->measurements().isEmpty());
    viewer->stepSlice(-1);
    QCOMPARE(vp->measurements().size(), 1);
    // Cine at the acquired rate (Frame Time 40 ms: 25 frames a second), said on the image; it moves the frames.
    bool acquired = false;
    QCOMPARE(viewer->cineFramesPerSecond(&acquired), 25.0);
    QVERIFY(acquired);
    viewer->setCinePlaying(true);
    QVERIFY2(vp->modeText().contains(QStringLiteral("Cine 25 fps (acquired)")), qPrintable(vp->modeText()));
    QTRY_VERIFY(vp->frame() >= 3);
    viewer->setCinePlaying(false);
    QVERIFY(vp->modeText().isEmpty());

    // The Enhanced CT: HU, spacing and each frame's position from its functional groups.
    viewer->showSeries(1);
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.modality == QLatin1String("CT"));
    QCOMPARE(vp->frameCount(), 5);
    viewer->stepSlice(2);
    QCOMPARE(vp->frame(), 2);
    sendMouse(vp, QEvent::MouseMove, middle, Qt::NoButton, Qt::NoButton);
    QVERIFY2(vp->pixelReadout().endsWith(QStringLiteral("= 20 HU")), qPrintable(vp->pixelReadout()));
    QVERIFY2(vp->overlay().bottomLeft.contains(QStringLiteral("Pos 20.0 mm  Thk 10.00 mm")), qPrintable(vp->overlay().bottomLeft));
    QCOMPARE(vp->window(), (VoiWindow{40, 400}));  // the frame VOI from the shared groups
    const Measurement ruler{Measurement::Kind::Distance, QPointF(0, 0), QPointF(20, 0)};
    QCOMPARE(vp->measurementText(ruler), QStringLiteral("10.0 mm"));  // 20 pixels of 0.5 mm

    // The ultrasound loop: a Frame Time Vector of 20 ms.
    viewer->showSeries(2);
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.modality == QLatin1String("US"));
    QCOMPARE(vp->frameCount(), 8);
    QCOMPARE(viewer->cineFramesPerSecond(&acquired), 50.0);
    QVERIFY(acquired);
}

/// A Segmentation pydicom wrote on two of three CT slices: its mask lies over exactly those slices, in its
/// segment's colour, named in the overlay; G hides it; the SEG series itself shows as an image.
void tst_Workstation::aSegmentationIsShownOverItsSource()
{
    QTemporaryDir dir;
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(SEGMENTATION_FILES_SCRIPT), dir.filePath(QStringLiteral("files"))});
    QVERIFY2(made.ok(), made.err.constData());
    QStringList files;
    for (const QString &f : {QStringLiteral("ct1.dcm"), QStringLiteral("ct2.dcm"), QStringLiteral("ct3.dcm"), QStringLiteral("seg.dcm")})
        files << dir.filePath(QStringLiteral("files/") + f);
    std::unique_ptr<Workstation> ws = workstationWith(dir, files);
    QVERIFY(ws);
    QTRY_COMPARE(ws->studies().size(), 1);
    QTRY_COMPARE(ws->studies().first().instanceCount, 4);
    MainWindow window(ws.get());
    window.resize(1000, 700);
    window.show();
    StudyViewer *viewer = window.openStudy(ws->studies().first().identity.studyInstanceUid);
    QVERIFY(viewer);
    int ct = -1;
    for (int s = 0; s < viewer->study().series.size(); ++s)
        if (viewer->study().series[s].modality == QLatin1String("CT"))
            ct = s;
    QVERIFY(ct >= 0);
    viewer->showSeries(ct);
    ImageViewport *vp = viewer->viewport();
    QTRY_COMPARE(viewer->segmentations()->loadedCount(), 1);
    viewer->showSlice(0);
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.sopInstanceUid == viewer->study().series[ct].instances[0].sopInstanceUid);
    QVERIFY(vp->masks().isEmpty());  // nothing drawn on the first slice
    viewer->showSlice(1);
    QTRY_VERIFY(vp->image().info.identity.sopInstanceUid == viewer->study().series[ct].instances[1].sopInstanceUid && vp->masks().size() == 1);
    QCOMPARE(vp->masks().first().label, QStringLiteral("Lesion"));
    QVERIFY(vp->masks().first().colour.red() > 200 && vp->masks().first().colour.green() < 100);
    const QImage shot = vp->grab().toImage();
    const QColor inside = shot.pixelColor(vp->imageToWidget().map(QPointF(6, 6)).toPoint());
    const QColor outside = shot.pixelColor(vp->imageToWidget().map(QPointF(12, 12)).toPoint());
    QVERIFY2(inside.red() > inside.green() + 40, qPrintable(inside.name()));     // red over the gray
    QVERIFY2(std::abs(outside.red() - outside.green()) < 5, qPrintable(outside.name()));  // gray
    QTest::keySequence(&window, QKeySequence(Qt::Key_G));
    QVERIFY(!vp->masksVisible());
    const QColor hidden = vp->grab().toImage().pixelColor(vp->imageToWidget().map(QPointF(6, 6)).toPoint());
    QVERIFY(std::abs(hidden.red() - hidden.green()) < 5);
    QTest::keySequence(&window, QKeySequence(Qt::Key_G));
    QVERIFY(vp->masksVisible());
}

namespace {
/// A CD as a hospital hands it over: DICOM/IM0001… (no suffixes), a DICOMDIR made by DCMTK's dcmmkdir, a readme.
QString makeCd(const QTemporaryDir &dir, int images)
{
    const ProcessResult demo = run(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("demo"), QStringLiteral("--out"), dir.filePath(QStringLiteral("demo")),
                                                                          QStringLiteral("--only"), QStringLiteral("demo-mr")});
    if (!demo.ok())
        return QString();
    const QString cd = dir.filePath(QStringLiteral("cd"));
    QDir().mkpath(cd + QStringLiteral("/DICOM"));
    const QDir mr(dir.filePath(QStringLiteral("demo/demo-mr")));
    const QStringList files = mr.entryList(QDir::Files, QDir::Name).mid(0, images);
    for (int i = 0; i < files.size(); ++i)
        QFile::copy(mr.filePath(files[i]), cd + QStringLiteral("/DICOM/IM%1").arg(i + 1, 4, 10, QLatin1Char('0')));
    writeFile(cd + QStringLiteral("/README.TXT"), "Viewer on this disc: run SETUP.EXE\n");
    const ProcessResult dicomdir = run(QStringLiteral(DCMMKDIR_EXECUTABLE), {QStringLiteral("--recurse"), QStringLiteral("+id"), cd,
                                                                             QStringLiteral("--output-file"), cd + QStringLiteral("/DICOMDIR"), QStringLiteral("DICOM")});
    return dicomdir.ok() ? cd : QString();
}
} // namespace

/// File ▸ Import of a CD's DICOMDIR: every image it holds comes into the cache, the DICOMDIR and the readme are
/// named as not DICOM, and the one study brought in opens.
void tst_Workstation::importingACdWithItsDicomdir()
{
    QTemporaryDir dir;
    const QString cd = makeCd(dir, 3);
    QVERIFY(!cd.isEmpty());
    std::unique_ptr<Workstation> ws = workstationWith(dir, {});
    QVERIFY(ws);
    MainWindow window(ws.get());
    window.show();
    QSignalSpy imported(&window, &MainWindow::importFinished);
    window.importFiles({cd + QStringLiteral("/DICOMDIR")});
    QVERIFY(imported.wait(20000));
    const ImportSummary summary = imported.first().first().value<ImportSummary>();
    QCOMPARE(summary.imported, 3);
    QCOMPARE(summary.studies.size(), 1);
    QCOMPARE(summary.notDicom.size(), 2);  // the DICOMDIR and the readme
    QVERIFY(summary.failed.isEmpty());
    QTRY_VERIFY(window.currentViewer());  // the study opened by itself
    QCOMPARE(window.currentViewer()->study().identity.studyInstanceUid, *summary.studies.begin());
    QCOMPARE(window.currentViewer()->study().instanceCount, 3);
    QTRY_VERIFY(window.currentViewer()->viewport()->hasImage());

    // Importing the same files again changes nothing and fails nothing; a file that cannot be read (here: gone
    // between choosing and importing) is named with the reason.
    const QString gone = dir.filePath(QStringLiteral("gone.dcm"));
    imported.clear();
    window.importFiles({cd, gone});
    QVERIFY(imported.wait(20000));
    const ImportSummary again = imported.first().first().value<ImportSummary>();
    QCOMPARE(again.imported, 3);
    QCOMPARE(again.failed.size(), 1);
    QCOMPARE(again.failed.first().first, QFileInfo(gone).absoluteFilePath());
    QVERIFY(!again.failed.first().second.isEmpty());
    QVERIFY(Workstation::importSummaryText(again).contains(QStringLiteral("1 failed (gone.dcm")));
    QCOMPARE(ws->studies().size(), 1);
}

/// `spectrum-cli import` while the workstation holds the cache: handed over, imported by the workstation, which
/// lists the study at once; the CLI prints the outcome and succeeds.
void tst_Workstation::theCliImportsWhileTheWorkstationRuns()
{
    QTemporaryDir dir;
    const QString cd = makeCd(dir, 2);
    QVERIFY(!cd.isEmpty());
    std::unique_ptr<Workstation> ws = workstationWith(dir, {});
    QVERIFY(ws);
    QVERIFY(ws->studies().isEmpty());
    QProcess cli;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_CACHE_DIR"), dir.filePath(QStringLiteral("cache")));
    cli.setProcessEnvironment(env);
    QSignalSpy done(&cli, &QProcess::finished);
    cli.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("import"), cd});
    QVERIFY(done.wait(30000));  // the workstation serves it meanwhile, on this event loop
    const QByteArray output = cli.readAllStandardOutput(), errors = cli.readAllStandardError();
    QVERIFY2(cli.exitCode() == 0, errors.constData());
    QVERIFY2(errors.contains("imported by the running workstation"), errors.constData());
    QVERIFY2(output.contains("2 imported (1 studies), 2 not DICOM, 0 failed"), output.constData());
    QTRY_COMPARE(ws->studies().size(), 1);
    QCOMPARE(ws->studies().first().instanceCount, 2);
}

QTEST_MAIN(tst_Workstation)
#include "tst_workstation.moc"
