// Priors that live in an archive: a study opened from Orthanc (DICOMweb) finds the patient's other studies
// there, says which are not here yet, and opens the prior beside it while it streams in.
#include "readingroomsuite.h"
#include "priorspanel.h"
#include "seriespane.h"

#include <QTreeWidget>

using namespace spectrum;
using namespace spectrum::test;

class tst_PriorsArchive : public ReadingRoomSuite
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { ReadingRoomSuite::initTestCase(); }
    void cleanupTestCase() { ReadingRoomSuite::cleanupTestCase(); }
    void aPriorInTheArchiveIsFoundAndOpensBesideWhileItArrives();
};

void tst_PriorsArchive::aPriorInTheArchiveIsFoundAndOpensBesideWhileItArrives()
{
    const QString priorUid = DemoArchive::studyUid(DemoStudy::HeadCtPrior);
    QSignalSpy opened(m_window.get(), &MainWindow::studyOpened);
    m_window->openRemoteStudy(QStringLiteral("pacs"), m_ctUid);
    QVERIFY(opened.wait(20000));
    auto *viewer = opened.first().first().value<StudyViewer *>();
    QVERIFY(viewer);
    PriorsPanel *panel = viewer->priorsPanel();
    // The archive answers for the patient: the MR and the prior CT, neither here yet.
    QTRY_VERIFY_WITH_TIMEOUT(panel->priors().studies.size() == 2 && !panel->statusText().contains(QStringLiteral("Searching")), 20000);
    const int index = panel->indexOf(priorUid);
    QVERIFY(index >= 0);
    const PriorStudy prior = panel->priors().studies[index];
    QCOMPARE(prior.stores, QStringList{QStringLiteral("pacs")});
    QCOMPARE(prior.cachedInstances, 0);
    QCOMPARE(prior.instances, 12);  // half the CT's 24 slices
    QVERIFY(prior.comparable);
    QCOMPARE(prior.identity.issuerOfPatientId, QStringLiteral("SPECTRUM DEMO"));
    QVERIFY(panel->tree()->topLevelItem(index)->text(0).contains(QStringLiteral("pacs")));
    QVERIFY(!m_ws->findStudy(priorUid));

    // Opened beside it: streamed in (its row says so meanwhile), shown as it arrives, then here.
    QSignalSpy comparison(viewer, &StudyViewer::comparisonOpened);
    QTRY_VERIFY_WITH_TIMEOUT(viewer->viewport()->hasImage(), 20000);
    m_window->activateWindow();
    viewer->setFocus();
    QVERIFY(m_window->openMostRecentComparable());
    QVERIFY(comparison.wait(20000));
    QCOMPARE(viewer->paneCount(), 2);
    SeriesPane *pane = viewer->pane(1);
    QCOMPARE(pane->study()->identity.studyInstanceUid, priorUid);
    QTRY_VERIFY_WITH_TIMEOUT(pane->viewport()->hasImage() && pane->viewport()->completeness() == 1.0, 20000);
    const ImageInfo &info = pane->viewport()->image().info;
    QCOMPARE(info.identity.studyInstanceUid, priorUid);
    // Exactly the instance the archive holds at that place.
    const QString sop = pane->study()->series[pane->seriesIndex()].instances[pane->sliceIndex()].sopInstanceUid;
    QCOMPARE(info.identity.sopInstanceUid, sop);
    QVERIFY(m_bySop.contains(sop));
    QVERIFY(pane->viewport()->overlay().topRight.startsWith(QStringLiteral("PRIOR  2023-01-03")));
    QTRY_VERIFY_WITH_TIMEOUT(m_ws->findStudy(priorUid) && m_ws->findStudy(priorUid)->instanceCount == 12, 30000);
    QTRY_VERIFY(panel->priors().studies[panel->indexOf(priorUid)].isCached());
}

QTEST_MAIN(tst_PriorsArchive)
#include "tst_priorsarchive.moc"
