// SPDX-License-Identifier: Apache-2.0
// The workstation as a radiologist uses it, offscreen: the demo archive appears in the study list, the CT
// opens, the wheel scrolls, a right-drag changes window/level — checked on the rendered pixels.

#include "viewport/displayimage.h"
#include "viewport/imageviewport.h"
#include "viewer/filterpanel.h"
#include "shell/mainwindow.h"
#include "browser/studybrowser.h"
#include "stores/storesdialog.h"
#include "viewer/studyviewer.h"
#include "viewer/panelinks.h"
#include "viewer/tagviewer.h"
#include "stores/transferspanel.h"
#include "shell/workstation.h"

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/tools/measurements.h"
#include "spectrum/stores/reading/imageloader.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "guisupport.h"
#include "demosuite.h"
#include "spectrum/transfer/blobclient.h"
#include "testsupport.h"

#include <QAction>
#include <QApplication>
#include <QListWidget>
#include <QMenu>
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
#include <QStatusBar>
#include <QTemporaryDir>
#include <QDockWidget>
#include <QComboBox>
#include <QTest>
#include <QTreeWidget>

#include <cstring>

using namespace spectrum;
using namespace spectrum::test;

class tst_Workstation : public DemoWorkstationSuite
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { DemoWorkstationSuite::initTestCase(); }
    /// Before each test: the main window active (the menus' keys fire only there), after tests that showed
    /// windows of their own.
    void init() { DemoWorkstationSuite::init(); }
    void demoStudiesFillTheList();
    void openScrollAndWindowTheCt();
    void keysFromTheMenusActOnTheOpenStudy();
    void singleKeysNeverFireWhileTyping();
    void theTagViewerFollowsTheImageAndSearches();
    void seriesThumbnailsShowTheirMiddleImage();
    void layoutsSynchronisedScrollingAndDroppingASeries();
    void synchronisedScrollingFollowsTheFrameOfReference();
    void decodedImagesStayWithinTheMemoryBudget();
    void closingAStudyGivesItsMemoryBack();
    void settingsAreRememberedAcrossRestarts();
    void reopeningUsesTheCacheWithoutReseeding();
    void theCacheIsSharedAsConfigured();
    void aCacheInUseIsAClearStartError();
};

void tst_Workstation::demoStudiesFillTheList()
{
    QTRY_COMPARE_WITH_TIMEOUT(m_window->studyTable()->model()->rowCount(), 5, 10000);  // three studies and two priors
    QStringList patients;
    for (int r = 0; r < 5; ++r)
        patients << m_window->studyTable()->model()->index(r, 0).data().toString();
    QVERIFY(patients.contains(QStringLiteral("DEMO, HEAD PHANTOM")));
    QVERIFY(patients.contains(QStringLiteral("DEMO, CHEST PHANTOM")));
    const StudySummary *ct = m_ws->findStudy(QStringLiteral("demo-ct"));
    QVERIFY(ct);
    QCOMPARE(ct->instanceCount, 200);
    // Listed from the cache's counts, not its instances: each series says how many it holds, and what the
    // protocols match on; the instances are read when the study opens.
    int listed = 0;
    for (const SeriesSummary &s : ct->series) {
        QVERIFY(s.instances.isEmpty());
        listed += s.listedInstances;
    }
    QCOMPARE(listed, 200);
    const std::optional<StudySummary> read = readStudy(m_ws.get(), *ct);
    QVERIFY(read);
    QCOMPARE(read->series.size(), ct->series.size());
    for (int i = 0; i < read->series.size(); ++i) {
        QCOMPARE(read->series[i].seriesInstanceUid, ct->series[i].seriesInstanceUid);
        QCOMPARE(int(read->series[i].instances.size()), ct->series[i].listedInstances);
        QCOMPARE(read->series[i].plane, ct->series[i].plane);
        QCOMPARE(read->series[i].bodyPart, ct->series[i].bodyPart);
        QCOMPARE(read->series[i].sliceThickness, ct->series[i].sliceThickness);
    }
    QVERIFY(m_ws->loadedStudy(ct->identity.studyInstanceUid, ct->identity.patientId));
}

void tst_Workstation::openScrollAndWindowTheCt()
{
    StudyViewer *viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
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
    const double zoom = vp->view().zoom();
    sendWheel(vp, 120, Qt::ControlModifier);
    QVERIFY(vp->view().zoom() > zoom);
    QCOMPARE(viewer->sliceIndex(), first);

    // The screen shows it: the widget's pixels change with the slice.
    const QImage screenBefore = vp->grab().toImage();
    viewer->showSlice(60);
    QTRY_COMPARE(shown.last().at(0).toInt(), 60);
    QVERIFY(vp->grab().toImage() != screenBefore);
}

void tst_Workstation::keysFromTheMenusActOnTheOpenStudy()
{
    StudyViewer *viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
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
    QCOMPARE(vp->view().rotation(), 90);
    press(QKeySequence(Qt::Key_H));
    QVERIFY(vp->view().isFlippedHorizontally());
    press(QKeySequence(Qt::Key_I));
    QVERIFY(vp->isInverted());
    press(QKeySequence(QStringLiteral("Shift+F")));
    QCOMPARE(vp->view().displayScale(), 1.0);
    press(QKeySequence(Qt::Key_D));
    QCOMPARE(vp->tool(), ViewportTool::measuring(AnnotationKind::Distance));
    press(QKeySequence(Qt::Key_R));
    QCOMPARE(vp->view().rotation(), 0);
    QVERIFY(!vp->isInverted() && !vp->view().isFlippedHorizontally());
    press(QKeySequence(Qt::Key_P));
    QCOMPARE(vp->tool(), ViewportTool::pan());
    // Every measurement tool a hand places is in the Tools menu under its own entry, and its key picks it.
    QMenu *toolsMenu = m_window->findChild<QMenu *>(QStringLiteral("toolsMenu"));
    QVERIFY(toolsMenu);
    int placed = 0;
    for (const MeasurementTool *tool : measurementTools()) {
        if (tool->placement() == Placement::None)
            continue;
        ++placed;
        const QList<QAction *> entries = toolsMenu->actions();
        QVERIFY2(std::any_of(entries.begin(), entries.end(), [&](QAction *a) { return a->text() == tool->menuText(); }), qPrintable(tool->name()));
        press(QKeySequence(tool->shortcut()));
        QVERIFY2(vp->tool() == ViewportTool::measuring(tool->kind()), qPrintable(tool->name()));
    }
    QVERIFY(placed >= 11);  // the eleven a hand places today, and any added
    press(QKeySequence(Qt::Key_P));

    // Cine runs through the stack on its own, and stops on the same key.
    QSignalSpy shown(viewer, &StudyViewer::imageShown);
    const int from = viewer->sliceIndex();
    press(QKeySequence(Qt::Key_C));
    QVERIFY(viewer->cine()->isPlaying());
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 5, 10000);
    press(QKeySequence(Qt::Key_C));
    QVERIFY(!viewer->cine()->isPlaying());
    QVERIFY(viewer->sliceIndex() != from);
    for (int i = 1; i < shown.count(); ++i)  // one slice at a time, in order, wrapping at the end
        QCOMPARE(shown.at(i).at(0).toInt(), (shown.at(i - 1).at(0).toInt() + 1) % viewer->sliceCount());
}

/// Typing "D" into the patient name field types a D: no tool changes, nothing flips; Help lists every binding.
void tst_Workstation::singleKeysNeverFireWhileTyping()
{
    StudyViewer *viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
    QVERIFY(viewer);
    const ViewportTool before = viewer->viewport()->tool();
    const bool flipped = viewer->viewport()->view().isFlippedHorizontally();
    QLineEdit *name = m_window->browser()->patientNameField();
    m_window->browser()->window()->activateWindow();
    QTabWidget *tabs = m_window->findChild<QTabWidget *>();
    tabs->setCurrentIndex(0);
    name->setFocus();
    name->clear();
    QTest::keyClicks(name, QStringLiteral("DHEB"));
    QCOMPARE(name->text(), QStringLiteral("DHEB"));
    QCOMPARE(viewer->viewport()->tool(), before);
    QCOMPARE(viewer->viewport()->view().isFlippedHorizontally(), flipped);
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

/// View > DICOM tags lists the elements of the image in view, follows it, and finds by tag, keyword or value.
void tst_Workstation::theTagViewerFollowsTheImageAndSearches()
{
    StudyViewer *viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
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

void tst_Workstation::seriesThumbnailsShowTheirMiddleImage()
{
    StudyViewer *viewer = openAndWait(m_window.get(), QStringLiteral("demo-mr"));
    QVERIFY(viewer);
    QTRY_VERIFY(!viewer->thumbnail(0).isNull());
    const QList<InstanceRef> &in = viewer->study().series[0].instances;
    Result<DecodedImage> middle = runSync(loadImage(m_ws->localStore(), in[in.size() / 2].key));
    QVERIFY(middle.isOk());
    // Drawn as on the patient (square pixels), area-averaged to fit 96 × 96.
    const ImageInfo &info = middle.value().info;
    const QImage expected = resampledTo(toQImage(renderFrame(middle.value(), 0, defaultWindow(middle.value()))),
                                        squarePixelSize(info.columns, info.rows, info.pixelAspect()).scaled(96, 96, Qt::KeepAspectRatio));
    QCOMPARE(viewer->thumbnail(0), expected);
    auto *list = viewer->findChild<QListWidget *>(QStringLiteral("seriesList"));
    QVERIFY(list && !list->item(0)->icon().isNull());
}

void tst_Workstation::layoutsSynchronisedScrollingAndDroppingASeries()
{
    StudyViewer *viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
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
    QVERIFY(viewer->links()->isSynchronized());
    QCOMPARE(viewer->activePane(), viewer->pane(0));
    viewer->showSlice(40);
    QTRY_COMPARE(viewer->pane(1)->sliceIndex(), 40);
    QTRY_COMPARE(viewer->pane(1)->viewport()->image().info.identity.sopInstanceUid, viewer->study().series[0].instances[40].sopInstanceUid);
    press("S");
    QVERIFY(!viewer->links()->isSynchronized());
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

    StudyViewer *viewer = openAndWait(m_window.get(), study);
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
    if (!viewer->links()->isSynchronized())
        press("S");
    QVERIFY(viewer->links()->isSynchronized());

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
    QVERIFY(!viewer->links()->isSynchronized());
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

    StudyViewer *viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
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

void tst_Workstation::closingAStudyGivesItsMemoryBack()
{
    // The CT read (slices decoded as it is scrolled), then the MR opened in a tab of its own; back on the CT, File ▸
    // Close study (its shortcut): the CT's decoded slices leave memory with it, the MR's stay, and the MR is still
    // painted from them.
    ImageMemoryCache *images = m_ws->images();
    images->clear();
    StudyViewer *ct = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
    QVERIFY(ct);
    for (int i = 0; i < 30; i += 3) {
        ct->showSlice(i);
        QTRY_COMPARE(ct->viewport()->image().info.identity.sopInstanceUid, ct->study().series[0].instances[i].sopInstanceUid);
    }
    QSet<QString> ctKeys;
    for (const SeriesSummary &s : ct->study().series)
        for (const InstanceRef &i : s.instances)
            ctKeys.insert(i.key);
    StudyViewer *mr = openAndWait(m_window.get(), QStringLiteral("demo-mr"));
    QVERIFY(mr && mr != ct);
    const int to = (mr->sliceIndex() + 1) % mr->sliceCount();  // a slice not in memory (it was emptied above)
    mr->showSlice(to);
    const QString mrKey = mr->study().series[mr->seriesIndex()].instances[to].key;
    QTRY_COMPARE(mr->viewport()->image().info.identity.sopInstanceUid, mr->study().series[mr->seriesIndex()].instances[to].sopInstanceUid);
    QVERIFY(images->contains(mrKey));
    const int ctHeld = int(std::count_if(ctKeys.cbegin(), ctKeys.cend(), [&](const QString &k) { return images->contains(k); }));
    QVERIFY2(ctHeld >= 10, qPrintable(QString::number(ctHeld)));  // the slices scrolled through, at least
    const qint64 before = images->usage();

    QCOMPARE(openAndWait(m_window.get(), QStringLiteral("demo-ct")), ct);  // back to the CT's tab
    QPointer<StudyViewer> closing(ct);
    QTest::keySequence(m_window.get(), QKeySequence::Close);
    QTRY_VERIFY(!closing);  // the viewer is gone
    QVERIFY(std::none_of(ctKeys.cbegin(), ctKeys.cend(), [&](const QString &k) { return images->contains(k); }));
    QVERIFY(images->contains(mrKey));  // another tab's images stay
    QVERIFY2(images->usage() <= before - qint64(ctHeld) * 512 * 512 * 2, qPrintable(QStringLiteral("%1 of %2").arg(images->usage()).arg(before)));
    QTRY_COMPARE(m_window->currentViewer(), mr);
    QVERIFY(meanGrey(mr->viewport()->grab().toImage()) > 5);  // still painted
    QVERIFY(images->contains(mrKey));
    QTest::keySequence(m_window.get(), QKeySequence::Close);
}

void tst_Workstation::settingsAreRememberedAcrossRestarts()
{
    QTemporaryDir dir;
    QSettings settings(dir.filePath(QStringLiteral("spectrum.conf")), QSettings::IniFormat);
    const FilterPreset bone{QStringLiteral("Bone detail"), {QStringLiteral("despeckle"), QStringLiteral("sharpen:p=0.3")}, QStringLiteral("CR")};
    {
        MainWindow first(m_ws.get());
        QVERIFY(openAndWait(&first, QStringLiteral("demo-ct")));
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
    StudyViewer *ct = openAndWait(&second, QStringLiteral("demo-ct"));
    QVERIFY(ct && !ct->settings()->isFiltering());
    QVERIFY(second.filterPanel()->specs().isEmpty());
    StudyViewer *viewer = openAndWait(&second, QStringLiteral("demo-cr"));
    QVERIFY(viewer);
    QVERIFY(viewer->settings()->isFiltering());
    QCOMPARE(second.filterPanel()->specs(), bone.specs);
    QCOMPARE(viewer->viewport()->tool(), ViewportTool::measuring(AnnotationKind::Ellipse));
    QCOMPARE(settings.value(QStringLiteral("reading/tool")).toString(), QStringLiteral("Ellipse"));  // by name

    // A settings file from before tools were kept by name (their number in the old menu: 6, the Cobb angle).
    settings.setValue(QStringLiteral("reading/tool"), 6);
    settings.sync();
    MainWindow third(m_ws.get());
    third.restoreSettings(settings);
    StudyViewer *again = openAndWait(&third, QStringLiteral("demo-ct"));
    QVERIFY(again);
    QCOMPARE(again->viewport()->tool(), ViewportTool::measuring(AnnotationKind::CobbAngle));
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
    QCOMPARE(again.studies().size(), 5);
}

/// The workstation shares its cache with the reading room as its configuration says, from the start and as the
/// configuration changes (CacheShare; tested in depth in tst_storeregistry).
void tst_Workstation::theCacheIsSharedAsConfigured()
{
    QTemporaryDir dir;
    Workstation::Options options;
    options.cacheDirectory = dir.filePath(QStringLiteral("cache"));
    options.stores = StoreConfigFile::parse("{}", dir.filePath(QStringLiteral("stores.json"))).value();
    options.stores.workstation.sharePort = freePort();
    options.stores.workstation.shareToken = options.stores.seal(QStringLiteral("room")).value();
    options.stores.workstation.shareAddress = QStringLiteral("127.0.0.1");  // no TLS: plain, allowed on loopback
    options.stores.workstation.sharePlain = true;
    Workstation ws(options);
    QSignalSpy seeded(&ws, &Workstation::seedingFinished);
    ws.start();
    QVERIFY(seeded.wait(30000));
    QVERIFY(ws.isSharingCache());
    BlobEndpoint ep;
    ep.port = ws.sharePort();
    ep.token = QStringLiteral("room");
    BlobClient client(ep);
    Result<QList<RemoteBlobInfo>> listed = runSync(client.list(QString()));
    QVERIFY2(listed.isOk(), qPrintable(listed.error().toString()));
    QCOMPARE(listed.value().size(), int(ws.cache()->usage().blobs));  // the demo studies, as the cache holds them
    QCOMPARE(runSync(client.push(QStringLiteral("x"), ByteView(QByteArray("x")))).error().code(), ErrorCode::NotAllowed);
    // The reader sees it: the status bar's line on the cache says so, and stops saying so when it stops.
    MainWindow window(&ws);
    QLabel *cacheLine = nullptr;
    for (QLabel *l : window.statusBar()->findChildren<QLabel *>())
        if (l->text().startsWith(QStringLiteral("Local cache")))
            cacheLine = l;
    QVERIFY(cacheLine);
    QVERIFY2(cacheLine->text().contains(QStringLiteral("shared with the reading room on port %1").arg(ws.sharePort())), qPrintable(cacheLine->text()));

    StoreConfigFile off = ws.storeConfig();
    off.workstation.sharePort = 0;
    ws.setStoreConfig(off);
    QVERIFY(!ws.isSharingCache());
    QVERIFY2(!cacheLine->text().contains(QStringLiteral("shared")), qPrintable(cacheLine->text()));
    QCOMPARE(runSync(client.list(QString())).error().code(), ErrorCode::Network);
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

QTEST_MAIN(tst_Workstation)
#include "tst_workstation.moc"
