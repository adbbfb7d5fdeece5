// SPDX-License-Identifier: Apache-2.0
// The reading room through its doors: what a radiologist does on a first day, by mouse and keys only, on the real
// main window — search as people type, open with Enter, drag a series to a pane (a press chooses nothing), ↓ after a
// thumbnail click, the crosshair on the lateral scout, W/L linked only between slices of one kind, undo and redo of
// findings, a double-click to maximise, the pane's right-click menu, the stack bar, the reader's own window on a
// number key, the manual, and overlay texts that never overprint one another at 1 × 3 or in a 1024-pixel window.
#include "guisupport.h"
#include "demosuite.h"
#include "browser/importreport.h"
#include "viewer/seriespane.h"

#include "spectrum/imaging/volumes/planegeometry.h"

#include <QInputDialog>
#include <QMenu>
#include <QScrollBar>
#include <QSettings>
#include <QStatusBar>
#include <QTextBrowser>

using namespace spectrum;
using namespace spectrum::test;

class tst_ReadingRoomDoor : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanupTestCase();
    void searchFindsWhatPeopleTypeAndEnterOpens();
    void aPressOnAThumbnailChoosesNothingUntilDropped();
    void afterAThumbnailClickDownStepsTheSlices();
    void theCrosshairOnTheScoutMovesTheAxials();
    void linkedWindowLeavesTheScoutAlone();
    void findingsAreUndoneAndRedone();
    void savingFindingsKeepsTheThumbnails();
    void anUndoAfterSavingPutsBackTheSavedFinding();
    void aDoubleClickMaximisesAPane();
    void aRightClickOpensThePaneMenu();
    void theStackBarGoesThroughTheStack();
    void theReadersOwnWindowIsOnANumberKey();
    void overlayTextsNeverOverprint();
    void theManualIsOnF1();
    void anImportSaysWhatItLeftOutAndWhy();
    void aStudyWhoseImagesDisagreeOnSexOpensFlagged();
    void theStudyListStaysInSightWithManyStudiesOpen();

private:
    void press(const QKeySequence &key) { QTest::keySequence(m_window.get(), key); }
    int seriesWith(int instances) const
    {
        for (int i = 0; i < m_viewer->study().series.size(); ++i)
            if (m_viewer->study().series[i].instances.size() == instances)
                return i;
        return -1;
    }
    /// The series `series` dragged from the list and dropped on pane `pane`, as the list hands it over.
    void dropSeries(int series, int pane);
    /// A left click on pane `pane`'s image at image point `at`.
    void clickImage(int pane, QPointF at)
    {
        ImageViewport *vp = m_viewer->pane(pane)->viewport();
        click(vp, vp->view().imageToWidget().map(at).toPoint());
    }

    QTemporaryDir m_dir;
    std::unique_ptr<Workstation> m_ws;
    std::unique_ptr<MainWindow> m_window;
    StudyViewer *m_viewer = nullptr;
    int m_thin = -1, m_thick = -1, m_scout = -1;
};

void tst_ReadingRoomDoor::initTestCase()
{
    qRegisterMetaType<spectrum::StudyViewer *>();
    QCoreApplication::setOrganizationName(QStringLiteral("SpectrumTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_readingroomdoor-%1").arg(QCoreApplication::applicationPid()));
    Workstation::Options options;
    options.cacheDirectory = m_dir.filePath(QStringLiteral("cache"));
    options.demo.studies = {DemoStudy::HeadCt};
    options.demo.ctSlices = 40;
    options.demo.ctSlabSlices = 4;     // a thick series of the same volume
    options.demo.ctLocalizer = true;   // and the lateral scout
    m_ws = std::make_unique<Workstation>(options);
    QSignalSpy seeded(m_ws.get(), &Workstation::seedingFinished);
    m_ws->start();
    QVERIFY(seeded.wait(120000));
    m_window = std::make_unique<MainWindow>(m_ws.get());
    m_window->hangingProtocols()->setProtocols(ProtocolSet());
    m_window->resize(1400, 800);
    m_window->show();
}

void tst_ReadingRoomDoor::init()
{
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
}

void tst_ReadingRoomDoor::cleanupTestCase()
{
    m_window.reset();
    m_ws.reset();
    QSettings().clear();
}

void tst_ReadingRoomDoor::dropSeries(int series, int pane)
{
    auto *list = m_viewer->findChild<QListWidget *>(QStringLiteral("seriesList"));
    // A press on the thumbnail first (a drag begins with one): nothing changes yet.
    const int before = m_viewer->activePane()->seriesIndex();
    const QPoint on = list->visualItemRect(list->item(series)).center();
    sendMouse(list->viewport(), QEvent::MouseButtonPress, on, Qt::LeftButton, Qt::LeftButton);
    QCOMPARE(m_viewer->activePane()->seriesIndex(), before);
    std::unique_ptr<QMimeData> data(list->model()->mimeData({list->model()->index(series, 0)}));
    QVERIFY(data);
    SeriesPane *target = m_viewer->pane(pane);
    const QPointF at(target->width() / 2.0, target->height() / 2.0);
    QDragEnterEvent enter(at.toPoint(), Qt::CopyAction, data.get(), Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(at, Qt::CopyAction, data.get(), Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &drop);
    sendMouse(list->viewport(), QEvent::MouseButtonRelease, on, Qt::LeftButton, Qt::NoButton);  // the drag's end
    QTRY_VERIFY(m_viewer->pane(pane)->seriesIndex() == series && m_viewer->pane(pane)->viewport()->hasImage());
}

void tst_ReadingRoomDoor::searchFindsWhatPeopleTypeAndEnterOpens()
{
    // Ctrl+F, "phantom" (a word of DEMO^HEAD PHANTOM, lower case, no wildcard), Enter, ↓, Enter.
    press(QKeySequence::Find);
    auto *browser = m_window->findChild<StudyBrowser *>();
    QVERIFY(browser);
    QTRY_VERIFY(browser->patientNameField()->hasFocus());
    QTest::keyClicks(browser->patientNameField(), QStringLiteral("phantom"));
    QTest::keyClick(browser->patientNameField(), Qt::Key_Return);
    QTRY_COMPARE(browser->table()->model()->rowCount(), 1);
    // What nobody's name starts with finds nothing (not every name holding the letters).
    browser->patientNameField()->clear();
    QTest::keyClicks(browser->patientNameField(), QStringLiteral("hantom"));
    QTest::keyClick(browser->patientNameField(), Qt::Key_Return);
    QTRY_COMPARE(browser->table()->model()->rowCount(), 0);
    browser->patientNameField()->clear();
    QTest::keyClicks(browser->patientNameField(), QStringLiteral("Demo"));
    QTest::keyClick(browser->patientNameField(), Qt::Key_Return);
    QTRY_COMPARE(browser->table()->model()->rowCount(), 1);
    QTest::keyClick(browser->patientNameField(), Qt::Key_Down);
    QVERIFY(browser->table()->hasFocus());
    QSignalSpy opened(m_window.get(), &MainWindow::studyOpened);
    QTest::keyClick(browser->table(), Qt::Key_Return);
    QVERIFY(opened.count() == 1 || opened.wait(20000));
    m_viewer = opened.first().first().value<StudyViewer *>();
    QVERIFY(m_viewer);
    QTRY_VERIFY(m_viewer->viewport()->hasImage());
    m_thin = seriesWith(40), m_thick = seriesWith(10), m_scout = seriesWith(1);
    QVERIFY(m_thin >= 0 && m_thick >= 0 && m_scout >= 0);
}

void tst_ReadingRoomDoor::aPressOnAThumbnailChoosesNothingUntilDropped()
{
    QVERIFY(m_viewer);
    press(QKeySequence(QStringLiteral("Ctrl+Alt+2")));
    QTRY_COMPARE(m_viewer->paneCount(), 2);
    // Pane 0 active, showing the thin series; the scout dragged to pane 1.
    click(m_viewer->pane(0)->viewport(), QPoint(20, 200));
    QCOMPARE(m_viewer->activePane(), m_viewer->pane(0));
    const int shown = m_viewer->pane(0)->seriesIndex();
    dropSeries(m_scout, 1);
    QCOMPARE(m_viewer->pane(0)->seriesIndex(), shown);  // the active pane kept its series through the drag
    QCOMPARE(m_viewer->pane(1)->seriesIndex(), m_scout);
}

void tst_ReadingRoomDoor::afterAThumbnailClickDownStepsTheSlices()
{
    auto *list = m_viewer->findChild<QListWidget *>(QStringLiteral("seriesList"));
    click(m_viewer->pane(0)->viewport(), QPoint(20, 200));
    click(list->viewport(), list->visualItemRect(list->item(m_thin)).center());
    QTRY_VERIFY(m_viewer->pane(0)->seriesIndex() == m_thin && m_viewer->pane(0)->viewport()->hasImage());
    const int slice = m_viewer->pane(0)->sliceIndex();
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Down);
    QCOMPARE(m_viewer->pane(0)->seriesIndex(), m_thin);  // not the next series
    QTRY_COMPARE(m_viewer->pane(0)->sliceIndex(), slice + 1);
}

void tst_ReadingRoomDoor::theCrosshairOnTheScoutMovesTheAxials()
{
    // X, then a click on the lateral scout at two heights: the axial pane goes to the slice through each.
    press(QKeySequence(Qt::Key_X));
    ImageViewport *scout = m_viewer->pane(1)->viewport();
    QTRY_VERIFY(scout->hasImage());
    for (const double row : {60.5, 180.5}) {
        const QPointF at(128.5, row);
        const PatientPoint p = *patientPointAt(scout->image().info, at);
        clickImage(1, at);
        QTRY_VERIFY(m_viewer->pane(0)->viewport()->hasImage());
        // The axial slice shown lies within half a slice (0.625 mm apart ×… the demo's spacing) of the point.
        QTRY_VERIFY2(std::abs(m_viewer->pane(0)->viewport()->image().info.imagePosition[2] - p[2]) <= m_viewer->pane(0)->viewport()->image().info.sliceThickness / 2 + 1e-3,
                     qPrintable(QStringLiteral("axial at z %1, clicked z %2").arg(m_viewer->pane(0)->viewport()->image().info.imagePosition[2]).arg(p[2])));
    }
    press(QKeySequence(Qt::Key_P));  // back to panning
}

void tst_ReadingRoomDoor::linkedWindowLeavesTheScoutAlone()
{
    // 1 × 3: thin, scout, thick. Shift+W links the window; 1 (brain) on the thin pane reaches the thick one only.
    press(QKeySequence(QStringLiteral("Ctrl+Alt+3")));
    QTRY_COMPARE(m_viewer->paneCount(), 3);
    dropSeries(m_thick, 2);
    click(m_viewer->pane(0)->viewport(), QPoint(20, 200));
    const VoiWindow scoutBefore = m_viewer->pane(1)->viewport()->window();
    if (!m_viewer->links()->isWindowLinked())
        press(QKeySequence(QStringLiteral("Shift+W")));
    QVERIFY(m_viewer->links()->isWindowLinked());
    press(QKeySequence(Qt::Key_1));
    const VoiWindow brain{ctWindowPresets()[0].center, ctWindowPresets()[0].width};
    QCOMPARE(m_viewer->pane(0)->viewport()->window(), brain);
    QCOMPARE(m_viewer->pane(2)->viewport()->window(), brain);
    QCOMPARE(m_viewer->pane(1)->viewport()->window(), scoutBefore);
    // Nor from the scout to the slices.
    click(m_viewer->pane(1)->viewport(), QPoint(20, 200));
    press(QKeySequence(Qt::Key_3));
    QCOMPARE(m_viewer->pane(0)->viewport()->window(), brain);
    press(QKeySequence(QStringLiteral("Shift+W")));
}

void tst_ReadingRoomDoor::findingsAreUndoneAndRedone()
{
    click(m_viewer->pane(0)->viewport(), QPoint(20, 200));
    ImageViewport *vp = m_viewer->pane(0)->viewport();
    press(QKeySequence(Qt::Key_D));  // distance
    const QPoint from = vp->view().imageToWidget().map(QPointF(200, 200)).toPoint(), to = vp->view().imageToWidget().map(QPointF(300, 260)).toPoint();
    drag(vp, from, to);
    QTRY_COMPARE(vp->findingsLayer()->measurements().size(), 1);
    const Annotation drawn = vp->findingsLayer()->measurements().first();
    // Moved by its end point, then undone: back where it was drawn; undone again: gone; redone twice: moved.
    press(QKeySequence(Qt::Key_P));
    drag(vp, to, to + QPoint(30, 0));
    QTRY_VERIFY(!(vp->findingsLayer()->measurements().first() == drawn));
    const Annotation moved = vp->findingsLayer()->measurements().first();
    press(QKeySequence::Undo);

    QTRY_VERIFY(vp->findingsLayer()->measurements().size() == 1 && vp->findingsLayer()->measurements().first() == drawn);
    press(QKeySequence::Undo);
    QTRY_COMPARE(vp->findingsLayer()->measurements().size(), 0);
    press(QKeySequence(QStringLiteral("Ctrl+Shift+Z")));
    QTRY_COMPARE(vp->findingsLayer()->measurements().size(), 1);
    press(QKeySequence(QStringLiteral("Ctrl+Shift+Z")));
    QTRY_VERIFY(vp->findingsLayer()->measurements().first() == moved);
    // Deleted (Del on the selected finding) and undone.
    click(vp, vp->view().imageToWidget().map(moved.points.first()).toPoint());
    press(QKeySequence::Delete);
    QTRY_COMPARE(vp->findingsLayer()->measurements().size(), 0);
    press(QKeySequence::Undo);
    QTRY_COMPARE(vp->findingsLayer()->measurements().size(), 1);
    QVERIFY(m_viewer->findings()->unsavedCount() >= 1);
}

void tst_ReadingRoomDoor::savingFindingsKeepsTheThumbnails()
{
    auto *list = m_viewer->findChild<QListWidget *>(QStringLiteral("seriesList"));
    auto allShown = [&] {
        for (int i = 0; i < list->count(); ++i)
            if (!isDocumentSeries(m_viewer->study().series.value(i)) && list->item(i)->icon().isNull())
                return false;
        return true;
    };
    QTRY_VERIFY(allShown());
    const int before = list->count();
    QSignalSpy saved(m_window.get(), &MainWindow::findingsSaved);
    press(QKeySequence::Save);  // Ctrl+S: a study in the cache keeps its findings there
    QVERIFY(saved.wait(30000));
    QVERIFY2(!saved.first().at(1).value<Error>().isError(), qPrintable(saved.first().at(1).value<Error>().toString()));
    QTRY_VERIFY(list->count() > before);  // the report joined the list
    QTRY_VERIFY(allShown());              // and every series has its picture again (the scout's was lost for good)
}

void tst_ReadingRoomDoor::anUndoAfterSavingPutsBackTheSavedFinding()
{
    // The finding saved above (Ctrl+S), deleted with Del and put back with Ctrl+Z: the very finding the report
    // holds (its tracking UID), not one to save again. Moved then, it is to be saved again, as the same finding.
    ImageViewport *vp = m_viewer->pane(0)->viewport();
    QTRY_COMPARE(m_viewer->findings()->unsavedCount(), 0);
    QTRY_COMPARE(vp->findingsLayer()->measurements().size(), 1);
    const Annotation saved = vp->findingsLayer()->measurements().first();
    QVERIFY(!saved.trackingUid.isEmpty());
    press(QKeySequence(Qt::Key_P));
    click(vp, vp->view().imageToWidget().map(saved.points.first()).toPoint());
    press(QKeySequence::Delete);
    QTRY_COMPARE(vp->findingsLayer()->measurements().size(), 0);
    QCOMPARE(m_viewer->findings()->count(), 0);
    press(QKeySequence::Undo);
    QTRY_COMPARE(vp->findingsLayer()->measurements().size(), 1);
    QCOMPARE(vp->findingsLayer()->measurements().first(), saved);
    QCOMPARE(m_viewer->findings()->unsavedCount(), 0);
    const QPoint end = vp->view().imageToWidget().map(saved.points.last()).toPoint();
    drag(vp, end, end + QPoint(0, 25));
    QTRY_COMPARE(m_viewer->findings()->unsavedCount(), 1);
    QCOMPARE(vp->findingsLayer()->measurements().first().trackingUid, saved.trackingUid);
    press(QKeySequence::Undo);  // back as saved: nothing to save
    QTRY_COMPARE(m_viewer->findings()->unsavedCount(), 0);
    QCOMPARE(vp->findingsLayer()->measurements().first(), saved);
}

void tst_ReadingRoomDoor::aDoubleClickMaximisesAPane()
{
    SeriesPane *pane = m_viewer->pane(2);
    const QPoint at(pane->viewport()->width() / 2, pane->viewport()->height() / 2);
    QTest::mouseDClick(pane->viewport(), Qt::LeftButton, {}, at);
    QTRY_VERIFY(!m_viewer->pane(0)->isVisible() && !m_viewer->pane(1)->isVisible() && pane->isVisible());
    QCOMPARE(m_viewer->activePane(), pane);
    QTRY_VERIFY(pane->width() > m_viewer->width() / 2);  // over the whole grid
    QTest::mouseDClick(pane->viewport(), Qt::LeftButton, {}, at);
    QTRY_VERIFY(m_viewer->pane(0)->isVisible() && m_viewer->pane(1)->isVisible());
    QCOMPARE(m_viewer->paneCount(), 3);
}

void tst_ReadingRoomDoor::aRightClickOpensThePaneMenu()
{
    ImageViewport *vp = m_viewer->pane(0)->viewport();
    const VoiWindow before = vp->window();
    const QPoint at(vp->width() / 2, vp->height() / 2);
    sendMouse(vp, QEvent::MouseButtonPress, at, Qt::RightButton, Qt::RightButton);
    sendMouse(vp, QEvent::MouseButtonRelease, at, Qt::RightButton, Qt::NoButton);
    QTRY_VERIFY(qobject_cast<QMenu *>(QApplication::activePopupWidget()));
    auto *menu = qobject_cast<QMenu *>(QApplication::activePopupWidget());
    QCOMPARE(menu->objectName(), QStringLiteral("paneMenu"));
    QStringList titles;
    for (QAction *a : menu->actions())
        titles << a->text();
    for (const QString &want : {QStringLiteral("&Tools"), QStringLiteral("&Window/Level"), QStringLiteral("&Layout"), QStringLiteral("&Reset view"),
                                QStringLiteral("&Export images…"), QStringLiteral("&Send to archive…")})
        QVERIFY2(titles.contains(want), qPrintable(titles.join(QStringLiteral(" | "))));
    QVERIFY(vp->window() == before);  // a click sets no window
    menu->close();
    // A right-drag still sets the window, and opens no menu.
    drag(vp, at, at + QPoint(40, 20));  // left: pans
    sendMouse(vp, QEvent::MouseButtonPress, at, Qt::RightButton, Qt::RightButton);
    sendMouse(vp, QEvent::MouseMove, at + QPoint(40, 20), Qt::NoButton, Qt::RightButton);
    sendMouse(vp, QEvent::MouseButtonRelease, at + QPoint(40, 20), Qt::RightButton, Qt::NoButton);
    QVERIFY(!(vp->window() == before));
    QVERIFY(!QApplication::activePopupWidget());
}

void tst_ReadingRoomDoor::theStackBarGoesThroughTheStack()
{
    SeriesPane *pane = m_viewer->pane(0);
    auto *bar = pane->findChild<QScrollBar *>(QStringLiteral("stackBar"));
    QVERIFY(bar && bar->isVisible());
    QCOMPARE(bar->maximum(), pane->sliceCount() - 1);
    QCOMPARE(bar->value(), pane->sliceIndex());
    // A click on the bar's track below the handle: a page on.
    const int slice = pane->sliceIndex();
    QTest::mouseClick(bar, Qt::LeftButton, {}, QPoint(bar->width() / 2, bar->height() - 20));
    QTRY_VERIFY(pane->sliceIndex() > slice);
    QTRY_COMPARE(bar->value(), pane->sliceIndex());
    // The wheel moves the bar with the slice.
    sendWheel(pane->viewport(), -120);
    QTRY_COMPARE(bar->value(), pane->sliceIndex());
}

void tst_ReadingRoomDoor::theReadersOwnWindowIsOnANumberKey()
{
    ImageViewport *vp = m_viewer->pane(0)->viewport();
    QTest::mouseClick(vp, Qt::LeftButton, {}, QPoint(20, 200));  // as the window system delivers it: focus too
    QTRY_VERIFY(vp->hasFocus());
    vp->setWindow(VoiWindow{40, 40});  // a right-drag's end: a stroke window
    // Window/Level ▸ Save this window as ▸ Key 6…, named in the dialog.
    auto *menu = m_window->findChild<QMenu *>(QStringLiteral("saveWindowMenu"));
    QVERIFY(menu);
    bool named = false;
    std::function<void()> answer = [&] {
        for (QWidget *w : QApplication::topLevelWidgets())
            if (auto *d = qobject_cast<QInputDialog *>(w); d && d->isVisible()) {
                QTest::keyClicks(d->findChild<QLineEdit *>(), QStringLiteral("stroke"));
                d->accept();
                named = true;
                return;
            }
        QTimer::singleShot(10, this, answer);  // not shown yet
    };
    QTimer::singleShot(0, this, answer);
    menu->actions().first()->trigger();
    QVERIFY(named);
    m_window->activateWindow();  // back from the dialog, as the window manager does
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    press(QKeySequence(Qt::Key_1));
    QVERIFY2(vp->window().width == ctWindowPresets()[0].width, qPrintable(QStringLiteral("W %1 L %2, focus %3").arg(vp->window().width).arg(vp->window().center).arg(QLatin1String(QApplication::focusWidget() ? QApplication::focusWidget()->metaObject()->className() : "none"))));
    press(QKeySequence(Qt::Key_6));
    QCOMPARE(vp->window(), (VoiWindow{40, 40}));
    // Kept between sessions, with its name in the menu.
    QVERIFY(MainWindow::readerWindow(6));
    QCOMPARE(MainWindow::readerWindow(6)->name, QStringLiteral("stroke"));
    // Not applied to an image whose values are in another unit: the scout is CT too, so try a key with nothing.
    press(QKeySequence(Qt::Key_7));
    QCOMPARE(vp->window(), (VoiWindow{40, 40}));
}

void tst_ReadingRoomDoor::overlayTextsNeverOverprint()
{
    // A filtered view (its banner), linked scrolling (its mode text), at 1 × 3 in a 1024-pixel window and at 2 × 2.
    press(QKeySequence(Qt::Key_S));
    Result<FilterChain> sharpen = m_window->filterPanel()->registry().makeChain({QStringLiteral("sharpen")});
    QVERIFY(sharpen.isOk());
    m_viewer->settings()->setFilters(sharpen.value(), QStringLiteral("sharpen"));
    auto check = [this](const QString &how) {
        for (int i = 0; i < m_viewer->paneCount(); ++i) {
            ImageViewport *vp = m_viewer->pane(i)->viewport();
            if (!vp->hasImage() || !vp->isVisible())
                continue;
            vp->grab();  // paints: the placement is made
            const OverlayPlacement &placed = vp->overlayPlacement();
            QVERIFY2(!placed.texts.isEmpty(), qPrintable(how));
            for (int a = 0; a < placed.texts.size(); ++a) {
                QVERIFY2(vp->rect().contains(placed.texts[a].rect), qPrintable(how + QStringLiteral(": '%1' leaves the pane").arg(placed.texts[a].text)));
                for (int b = a + 1; b < placed.texts.size(); ++b)
                    QVERIFY2(!placed.texts[a].rect.intersects(placed.texts[b].rect),
                             qPrintable(how + QStringLiteral(" pane %1: '%2' over '%3'").arg(i).arg(placed.texts[a].text, placed.texts[b].text)));
                if (placed.scaleBar)
                    QVERIFY2(!placed.texts[a].rect.intersects(*placed.scaleBar), qPrintable(how + QStringLiteral(": '%1' over the scale bar").arg(placed.texts[a].text)));
            }
            // Numbers (the slice's place, the window, a value) are never cut short while the pane has room for them.
            for (const PlacedText &t : placed.texts)
                if (t.rect.center().y() > vp->height() / 2)
                    QVERIFY2(!t.text.contains(QStringLiteral("…")), qPrintable(how + QStringLiteral(": '%1' shortened").arg(t.text)));
            // Who the patient is, always whole.
            QVERIFY2(placed.texts.first().text.startsWith(DicomIdentity::displayName(m_viewer->study().identity.patientName)), qPrintable(how));
        }
    };
    m_window->resize(1024, 700);
    press(QKeySequence(QStringLiteral("Ctrl+Alt+3")));
    QTRY_VERIFY(m_viewer->pane(2)->viewport()->hasImage());
    check(QStringLiteral("1 × 3, 1024 px"));
    press(QKeySequence(QStringLiteral("Ctrl+Alt+4")));
    QTRY_VERIFY(m_viewer->pane(3)->viewport()->hasImage());
    check(QStringLiteral("2 × 2, 1024 px"));
    m_viewer->settings()->setFilters(FilterChain(), QString());
    m_window->resize(1400, 800);
    press(QKeySequence(Qt::Key_S));
}

void tst_ReadingRoomDoor::theManualIsOnF1()
{
    press(QKeySequence::HelpContents);
    QDialog *manual = nullptr;
    QTRY_VERIFY((manual = m_window->findChild<QDialog *>(QStringLiteral("manualDialog"))) && manual->isVisible());
    auto *text = manual->findChild<QTextBrowser *>();
    QVERIFY(text && text->toPlainText().contains(QStringLiteral("Find a study")));
    manual->close();
}

void tst_ReadingRoomDoor::anImportSaysWhatItLeftOutAndWhy()
{
    // A folder of odd files dropped on the window: a note, a DICOM file cut short, one good image.
    QTemporaryDir odd;
    QVERIFY(writeFile(odd.filePath(QStringLiteral("readme.txt")), "not an image\n"));
    DemoOptions one;
    one.studies = {DemoStudy::HeadMr};
    one.mrSlices = 2;
    QList<QByteArray> mr;
    QVERIFY(!DemoArchive::generate(one, [&](DemoInstance &&i) { mr << i.bytes; return Error(); }).isError());
    QVERIFY(writeFile(odd.filePath(QStringLiteral("good.dcm")), mr[0]));
    QVERIFY(writeFile(odd.filePath(QStringLiteral("cut.dcm")), mr[1].left(mr[1].size() / 2)));
    // Two more files of the good image: an exact copy, and a newer version of it (the same SOP Instance UID, the
    // description edited).
    QVERIFY(QFile::copy(odd.filePath(QStringLiteral("good.dcm")), odd.filePath(QStringLiteral("good-copy.dcm"))));
    QVERIFY(QFile::copy(odd.filePath(QStringLiteral("good.dcm")), odd.filePath(QStringLiteral("good-v2.dcm"))));
    const ProcessResult edited = run(QStringLiteral(DCMODIFY_EXECUTABLE), {QStringLiteral("-nb"), QStringLiteral("-m"), QStringLiteral("(0008,1030)=Edited"),
                                                                            odd.filePath(QStringLiteral("good-v2.dcm"))});
    QVERIFY2(edited.ok(), edited.err.constData());
    const QDateTime earlier = QDateTime::currentDateTime().addSecs(-3600);
    for (const char *older : {"good.dcm", "good-copy.dcm"}) {
        QFile f(odd.filePath(QString::fromLatin1(older)));
        QVERIFY(f.open(QIODevice::ReadWrite) && f.setFileTime(earlier, QFileDevice::FileModificationTime));
    }
    QSignalSpy done(m_window.get(), &MainWindow::importFinished);
    QVERIFY(dropFiles(m_window.get(), {QUrl::fromLocalFile(odd.path())}));
    QVERIFY(done.wait(30000));
    ImportReport *report = nullptr;
    QTRY_VERIFY((report = m_window->findChild<ImportReport *>(QStringLiteral("importReport"))) && report->isVisible());
    QStringList said;
    for (const auto &[file, why] : report->rows()) {
        said << QFileInfo(file).fileName() + QStringLiteral(": ") + why;
        for (const QChar c : why)
            QVERIFY2(c.unicode() >= 0x20, qPrintable(why));  // words, never raw bytes
    }
    const QString all = said.join(QLatin1Char('\n'));
    QVERIFY2(all.contains(QStringLiteral("readme.txt: not a DICOM file")), qPrintable(all));
    QVERIFY2(all.contains(QStringLiteral("cut.dcm")), qPrintable(all));
    QVERIFY2(all.contains(QStringLiteral("good.dcm: another version of the image in good-v2.dcm")), qPrintable(all));
    QVERIFY2(all.contains(QStringLiteral("good-copy.dcm: ")), qPrintable(all));
    QVERIFY2(!all.contains(QStringLiteral("good-v2.dcm:")), qPrintable(all));  // the newest, kept
    QCOMPARE(said.size(), 4);
    const ImportSummary summary = done.first().first().value<ImportSummary>();
    QCOMPARE(summary.imported, 1);
    report->close();
}

void tst_ReadingRoomDoor::aStudyWhoseImagesDisagreeOnSexOpensFlagged()
{
    // Three MR images of one patient, one of them recording another sex (a typing slip at the modality): dropped on
    // the window, the study comes in whole, the report says so; opened from the list it shows, and says on the image.
    QTemporaryDir folder;
    DemoOptions one;
    one.studies = {DemoStudy::HeadMr};
    one.mrSlices = 3;
    QStringList files;
    QVERIFY(!DemoArchive::generate(one, [&](DemoInstance &&i) {
        files << folder.filePath(QStringLiteral("mr%1.dcm").arg(files.size()));
        return writeFile(files.last(), i.bytes) ? Error() : Error(ErrorCode::Io, files.last());
    }).isError());
    QCOMPARE(files.size(), 3);
    // Another patient's study (its own UIDs), so as to be found alone.
    QStringList patient = {QStringLiteral("-nb"), QStringLiteral("-gin"), QStringLiteral("-m"), QStringLiteral("(0010,0010)=SEXDIFFERS^ANNA"),
                           QStringLiteral("-m"), QStringLiteral("(0010,0020)=SEX-DIFFERS"), QStringLiteral("-m"), QStringLiteral("(0010,0040)=F"),
                           QStringLiteral("-m"), QStringLiteral("(0020,000D)=2.25.4711471147114711"), QStringLiteral("-m"), QStringLiteral("(0020,000E)=2.25.4711471147114712")};
    ProcessResult edited = run(QStringLiteral(DCMODIFY_EXECUTABLE), patient + files);
    QVERIFY2(edited.ok(), edited.err.constData());
    edited = run(QStringLiteral(DCMODIFY_EXECUTABLE), {QStringLiteral("-nb"), QStringLiteral("-m"), QStringLiteral("(0010,0040)=M"), files[1]});
    QVERIFY2(edited.ok(), edited.err.constData());

    QSignalSpy done(m_window.get(), &MainWindow::importFinished);
    QSignalSpy opened(m_window.get(), &MainWindow::studyOpened);  // one study dropped: it opens by itself
    QVERIFY(dropFiles(m_window.get(), {QUrl::fromLocalFile(folder.path())}));
    QVERIFY(done.wait(30000));
    QCOMPARE(done.first().first().value<ImportSummary>().imported, 3);
    ImportReport *report = nullptr;
    QTRY_VERIFY((report = m_window->findChild<ImportReport *>(QStringLiteral("importReport"))) && report->isVisible());
    QCOMPARE(report->flagged().size(), 1);
    QVERIFY2(report->flagged().first().contains(QStringLiteral("SEXDIFFERS, ANNA (ID SEX-DIFFERS)"))
                 && report->flagged().first().contains(QStringLiteral("sex differently (of those imported, F in 2, M in 1)")),
             qPrintable(report->flagged().first()));
    QVERIFY(report->rows().isEmpty());  // nothing left out
    report->close();
    report->deleteLater();
    m_window->activateWindow();  // the report closed: the window the reader goes back to
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));

    // (The study the test before dropped may open meanwhile too: this one is told by its patient.)
    StudyViewer *viewer = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(std::any_of(opened.begin(), opened.end(), [&viewer](const QList<QVariant> &o) {
        viewer = o.first().value<StudyViewer *>();
        return viewer && viewer->study().identity.patientId == QLatin1String("SEX-DIFFERS");
    }), 20000);
    QTRY_COMPARE(viewer->study().instanceCount, 3);  // opened as the first came in, the others joined as they did
    QTRY_COMPARE(viewer->study().sexDisagreement, QStringLiteral("F in 2 images, M in 1"));
    ImageViewport *vp = viewer->viewport();
    QTRY_VERIFY(vp->hasImage());
    QVERIFY2(vp->layers()->overlay().topLeft.contains(QStringLiteral("⚠ sex differs: F in 2 images, M in 1")), qPrintable(vp->layers()->overlay().topLeft));
    // Each image says the sex it records: the first F, the second M (a click on the pane, Home, ↓).
    click(vp, QPoint(vp->width() / 2, vp->height() / 2));
    QTRY_VERIFY(QApplication::focusWidget());
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Home);
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.sopInstanceUid == viewer->study().series[0].instances[0].sopInstanceUid);
    QVERIFY2(vp->layers()->overlay().topLeft.section(QLatin1Char('\n'), 2, 2).endsWith(QStringLiteral("F")), qPrintable(vp->layers()->overlay().topLeft));
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Down);
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.sopInstanceUid == viewer->study().series[0].instances[1].sopInstanceUid);
    QVERIFY2(vp->layers()->overlay().topLeft.section(QLatin1Char('\n'), 2, 2).endsWith(QStringLiteral("M")), qPrintable(vp->layers()->overlay().topLeft));
    QVERIFY(vp->layers()->overlay().topLeft.contains(QStringLiteral("⚠ sex differs")));
    // Painted, whole, inside the pane.
    vp->grab();
    const OverlayPlacement &placed = vp->overlayPlacement();
    const auto warning = std::find_if(placed.texts.begin(), placed.texts.end(), [](const PlacedText &t) { return t.text.contains(QStringLiteral("sex differs")); });
    QVERIFY(warning != placed.texts.end());
    QVERIFY2(warning->text.split(QLatin1Char('\n')).contains(QStringLiteral("⚠ sex differs: F in 2 images, M in 1")), qPrintable(warning->text));
    QVERIFY(vp->rect().contains(warning->rect));

    // Found in the list by name, Enter: the same study, in its tab (not refused, not opened twice).
    auto *tabs = m_window->findChild<QTabWidget *>();
    tabs->setCurrentIndex(0);
    auto *browser = m_window->findChild<StudyBrowser *>();
    browser->patientNameField()->clear();
    QTest::keyClicks(browser->patientNameField(), QStringLiteral("sexdiffers"));
    QTest::keyClick(browser->patientNameField(), Qt::Key_Return);
    QTRY_VERIFY(browser->table()->model()->rowCount() == 1
                && browser->table()->model()->index(0, 0).data().toString().startsWith(QStringLiteral("SEXDIFFERS, ANNA")));
    QTest::keyClick(browser->patientNameField(), Qt::Key_Down);
    QVERIFY(browser->table()->hasFocus());
    QTest::keyClick(browser->table(), Qt::Key_Return);
    QTRY_COMPARE(tabs->currentWidget(), viewer);
    QCOMPARE(std::count_if(opened.begin(), opened.end(), [viewer](const QList<QVariant> &o) { return o.first().value<StudyViewer *>() == viewer; }), 1);
    browser->patientNameField()->clear();
    QTest::keyClick(browser->patientNameField(), Qt::Key_Return);

    // A fourth image of the series dropped while the study is open: it joins the series on screen, in its place.
    QTemporaryDir later;
    const QString fourth = later.filePath(QStringLiteral("mr3.dcm"));
    QVERIFY(QFile::copy(files[2], fourth));
    edited = run(QStringLiteral(DCMODIFY_EXECUTABLE), {QStringLiteral("-nb"), QStringLiteral("-gin"), QStringLiteral("-m"), QStringLiteral("(0020,0013)=4"), fourth});
    QVERIFY2(edited.ok(), edited.err.constData());
    done.clear();
    QVERIFY(dropFiles(m_window.get(), {QUrl::fromLocalFile(fourth)}));
    QVERIFY(done.wait(30000));
    QTRY_COMPARE(viewer->study().series[0].instances.size(), 4);
    QCOMPARE(viewer->study().series[0].instances[3].instanceNumber, 4);
    QTRY_VERIFY2(vp->layers()->overlay().bottomLeft.startsWith(QStringLiteral("Im 2/4")), qPrintable(vp->layers()->overlay().bottomLeft));  // the image shown kept
    QCOMPARE(viewer->study().sexDisagreement, QStringLiteral("F in 3 images, M in 1"));
}

void tst_ReadingRoomDoor::theStudyListStaysInSightWithManyStudiesOpen()
{
    // Three more studies brought in (a folder dropped on the window), then every study opened from the list (Enter),
    // in a window as narrow as it goes.
    QTemporaryDir more;
    DemoOptions others;
    others.studies = {DemoStudy::ChestCr, DemoStudy::HeadCtPrior, DemoStudy::ChestCrPrior};
    others.ctSlices = 8;
    QVERIFY(!DemoArchive::generate(others, [&](DemoInstance &&i) {
        const QString path = more.filePath(i.relativePath);
        QDir().mkpath(QFileInfo(path).path());
        return writeFile(path, i.bytes) ? Error() : Error(ErrorCode::Io, path);
    }).isError());
    QSignalSpy done(m_window.get(), &MainWindow::importFinished);
    QVERIFY(dropFiles(m_window.get(), {QUrl::fromLocalFile(more.path())}));
    QVERIFY(done.count() == 1 || done.wait(60000));
    m_window->resize(480, 600);
    auto *tabs = m_window->findChild<QTabWidget *>();
    auto *browser = m_window->findChild<StudyBrowser *>();
    browser->patientNameField()->clear();
    QTest::keyClick(browser->patientNameField(), Qt::Key_Return);
    QTRY_VERIFY(browser->table()->model()->rowCount() >= 5);
    for (int row = 0; row < browser->table()->model()->rowCount(); ++row) {
        tabs->setCurrentIndex(0);
        browser->table()->selectRow(row);
        browser->table()->setFocus();
        QTest::keyClick(browser->table(), Qt::Key_Return);
    }
    QTRY_VERIFY(tabs->count() >= 6);
    // Every tab's title is on screen: the study list's first.
    QTabBar *bar = tabs->tabBar();
    for (int i = 0; i < tabs->count(); ++i)
        QVERIFY2(bar->rect().contains(bar->tabRect(i)), qPrintable(QStringLiteral("tab %1 out of sight").arg(i)));
    QCOMPARE(tabs->tabText(0), QStringLiteral("Studies"));
    m_window->resize(1400, 800);
}

QTEST_MAIN(tst_ReadingRoomDoor)
#include "tst_readingroomdoor.moc"
