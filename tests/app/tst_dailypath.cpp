// SPDX-License-Identifier: Apache-2.0
// A radiologist's day at the workstation, through its doors only: the archive is Orthanc over DICOMweb, the
// workstation's cache is empty, and every step is what a person does — Ctrl+F and a name typed, a double-click on
// the study in the list, the wheel, a window preset key, a distance drawn with the mouse, the prior beside with
// Shift+P, MPR with M, Ctrl+S to save the findings and Ctrl+Shift+S to send the series back. What is asserted is what
// is painted (grabbed pixels, the measurement's text against a hand calculation) and what the archive received.
#include "readingroomsuite.h"
#include "guisupport.h"
#include "volumes/mprview.h"
#include "viewport/overlaylayout.h"
#include "viewer/seriespane.h"

#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QLayout>
#include <QRadioButton>
#include <QScopeGuard>
#include <QTimer>

#include <functional>
#include <memory>

using namespace spectrum;
using namespace spectrum::test;

class tst_DailyPath : public ReadingRoomSuite
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { ReadingRoomSuite::initTestCase(); }
    void cleanupTestCase() { ReadingRoomSuite::cleanupTestCase(); }
    void aDayAtTheWorkstation();

private:
    void press(const QKeySequence &keys)
    {
        m_window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
        QTest::keySequence(m_window.get(), keys);
    }
    /// The series in the archive's listing of the demo CT study.
    QList<SeriesSummary> archived()
    {
        Result<StudySummary> listed = runSync(m_ws->registry()->listStudy(QStringLiteral("pacs"), m_ctUid));
        return listed.isOk() ? listed.value().series : QList<SeriesSummary>();
    }
};

void tst_DailyPath::aDayAtTheWorkstation()
{
    m_window->resize(1400, 900);
    const int seriesInArchive = int(archived().size());
    QVERIFY(seriesInArchive > 0);

    // Ctrl+F, "demo" typed, Enter: the archive answers; the head CT double-clicked in the list.
    press(QKeySequence::Find);
    StudyBrowser *browser = m_window->browser();
    QTRY_VERIFY(browser->patientNameField()->hasFocus());
    QSignalSpy searched(browser, &StudyBrowser::searchFinished);
    QTest::keyClicks(browser->patientNameField(), QStringLiteral("demo"));
    QTest::keyClick(browser->patientNameField(), Qt::Key_Return);
    QVERIFY(searched.wait(20000));
    int row = -1;
    QTRY_VERIFY((row = rowOf(m_ctUid)) >= 0);
    QSignalSpy opened(m_window.get(), &MainWindow::studyOpened);
    QTableView *table = browser->table();
    const QRect cell = table->visualRect(table->model()->index(row, 0));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, Qt::NoModifier, cell.center());
    QTest::mouseDClick(table->viewport(), Qt::LeftButton, Qt::NoModifier, cell.center());
    QVERIFY(opened.count() == 1 || opened.wait(20000));
    StudyViewer *viewer = opened.first().first().value<StudyViewer *>();
    QVERIFY(viewer);
    QCOMPARE(viewer->study().identity.studyInstanceUid, m_ctUid);
    QTRY_VERIFY_WITH_TIMEOUT(viewer->streamer() && viewer->streamer()->isListed(), 20000);  // the study listed whole
    // The first pane's viewport, asked anew each time: a hanging protocol may lay the panes out again as the study
    // is listed, and MPR replaces them.
    auto vp = [viewer] { return viewer->pane(0)->viewport(); };
    QTRY_VERIFY_WITH_TIMEOUT(vp()->hasImage() && vp()->layers()->completeness() >= 1.0, 20000);

    // The wheel: three images on, each said in the corner.
    const QPoint middle(vp()->width() / 2, vp()->height() / 2);
    click(vp(), middle);
    const int first = viewer->pane(0)->sliceIndex();
    for (int i = 0; i < 3; ++i)
        sendWheel(vp(), -120);
    QTRY_COMPARE(viewer->pane(0)->sliceIndex(), first + 3);
    QTRY_VERIFY_WITH_TIMEOUT(vp()->layers()->completeness() >= 1.0
                                 && vp()->image().info.identity.sopInstanceUid == viewer->study().series[viewer->pane(0)->seriesIndex()].instances[first + 3].sopInstanceUid,
                             20000);
    QVERIFY2(vp()->layers()->overlay().bottomLeft.startsWith(QStringLiteral("Im %1/").arg(first + 4)), qPrintable(vp()->layers()->overlay().bottomLeft));

    // Key 2, the lung window: the window said and the picture changed (soft tissue goes dark).
    const double before = meanGrey(vp()->grab().toImage());
    press(QKeySequence(Qt::Key_2));
    QTRY_VERIFY(vp()->window().center == -600 && vp()->window().width == 1500);
    QVERIFY2(std::abs(meanGrey(vp()->grab().toImage()) - before) > 5, "the lung window painted nothing different");
    const QList<PlacedText> &texts = vp()->overlayPlacement().texts;  // as painted by the grab
    QVERIFY(std::any_of(texts.begin(), texts.end(), [](const PlacedText &t) { return t.text.contains(QStringLiteral("W 1500  L -600")); }));

    // D, and a distance drawn across the head: its text the hand calculation in mm.
    press(QKeySequence(Qt::Key_D));
    const QPoint from = vp()->view().imageToWidget().map(QPointF(120, 300)).toPoint(), to = vp()->view().imageToWidget().map(QPointF(390, 330)).toPoint();
    drag(vp(), from, to);
    QTRY_COMPARE(vp()->findingsLayer()->measurements().size(), 1);
    const Annotation distance = vp()->findingsLayer()->measurements().first();
    const ImageInfo info = vp()->image().info;
    const double mm = std::hypot((distance.points[1].x() - distance.points[0].x()) * info.columnSpacing,
                                 (distance.points[1].y() - distance.points[0].y()) * info.rowSpacing);
    QVERIFY(mm > 100);
    QVERIFY2(vp()->findingsLayer()->measurementText(distance).contains(QStringLiteral("%1 mm").arg(mm, 0, 'f', 1)), qPrintable(vp()->findingsLayer()->measurementText(distance)));

    // Shift+P: the most recent comparable prior beside, fetched from the archive, told apart as PRIOR.
    press(QKeySequence(QStringLiteral("Shift+P")));
    QTRY_COMPARE_WITH_TIMEOUT(viewer->paneCount(), 2, 20000);
    auto prior = [viewer] { return viewer->pane(1) ? viewer->pane(1)->viewport() : nullptr; };  // laid out again as the prior comes
    const QString priorUid = DemoArchive::studyUid(DemoStudy::HeadCtPrior);
    QTRY_VERIFY_WITH_TIMEOUT(prior() && prior()->hasImage() && prior()->image().info.identity.studyInstanceUid == priorUid, 30000);
    QVERIFY2(prior()->layers()->overlay().comparison.startsWith(QStringLiteral("PRIOR")), qPrintable(prior()->layers()->overlay().comparison));

    // M: the study's series in three planes; M again: back to the panes.
    click(vp(), middle);
    press(QKeySequence(Qt::Key_M));
    QTRY_VERIFY(viewer->isMprShown());
    QTRY_VERIFY_WITH_TIMEOUT(viewer->mprView()->cutsPending() == 0 && viewer->mprView()->viewport(1)->hasImage(), 20000);
    press(QKeySequence(Qt::Key_M));
    QTRY_VERIFY(!viewer->isMprShown());

    // Ctrl+S: the findings saved into the study in the archive (a report of ours, and the view).
    QSignalSpy saved(m_window.get(), &MainWindow::findingsSaved);
    press(QKeySequence::Save);
    QVERIFY(saved.wait(30000));
    QVERIFY2(!saved.first().at(1).value<Error>().isError(), qPrintable(saved.first().at(1).value<Error>().toString()));
    auto hasReport = [this] {
        const QList<SeriesSummary> series = archived();
        return std::any_of(series.begin(), series.end(), [](const SeriesSummary &s) { return s.modality == QLatin1String("SR"); });
    };
    QTRY_VERIFY_WITH_TIMEOUT(hasReport(), 20000);
    QCOMPARE(viewer->findings()->unsavedCount(), 0);

    // Ctrl+Shift+S, the whole series, Send: a new series of as many images in the archive.
    const int thinSeries = viewer->pane(0)->seriesIndex();
    const int images = int(viewer->study().series[thinSeries].instances.size());
    QSet<QString> known;
    for (const SeriesSummary &s : archived())
        known.insert(s.seriesInstanceUid);
    bool filled = false;
    QSignalSpy sent(m_window.get(), &MainWindow::sendFinished);
    click(vp(), middle);
    QVERIFY(withModalDialog([&] { press(QKeySequence(QStringLiteral("Ctrl+Shift+S"))); }, [&](QDialog *dialog) {
        const QList<QRadioButton *> what = dialog->findChildren<QRadioButton *>();
        if (what.size() != 2)
            return dialog->reject();
        QTest::mouseClick(what[1], Qt::LeftButton, Qt::NoModifier, QPoint(8, what[1]->height() / 2));  // the whole series
        filled = what[1]->isChecked();
        QTest::mouseClick(dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok), Qt::LeftButton);
    }));
    QVERIFY(filled);
    QVERIFY(sent.count() == 1 || sent.wait(60000));
    QVERIFY2(!sent.first().at(2).value<Error>().isError(), qPrintable(sent.first().at(2).value<Error>().toString()));
    QCOMPARE(sent.first().at(0).toInt(), images);
    QTRY_VERIFY_WITH_TIMEOUT(int(archived().size()) == known.size() + 1, 20000);
    const QList<SeriesSummary> now = archived();
    const auto derived = std::find_if(now.begin(), now.end(), [&](const SeriesSummary &s) { return !known.contains(s.seriesInstanceUid); });
    QVERIFY(derived != now.end());
    QCOMPARE(derived->modality, QStringLiteral("CT"));
    QCOMPARE(std::max(int(derived->instances.size()), derived->listedInstances), images);
    QCOMPARE(opened.count(), 1);  // the double-click opened the study once
}

QTEST_MAIN(tst_DailyPath)
#include "tst_dailypath.moc"
