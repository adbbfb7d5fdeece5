// Priors that live in an archive: a study opened from Orthanc (DICOMweb) finds the patient's other studies
// there, says which are not here yet, and opens the prior beside it while it streams in.
#include "readingroomsuite.h"
#include "priorspanel.h"
#include "seriespane.h"

#include "spectrum/stores/priorprefetch.h"

#include <QProcess>
#include <QRegularExpression>
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
    void cliPrefetchesAQueryAndItsPriorsAndGoesOnAfterAKill();
    void aStudyPushedHereHasItsPriorFetched();
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
    QVERIFY(pane->viewport()->overlay().comparison.startsWith(QStringLiteral("PRIOR  2023-01-03")));
    QTRY_VERIFY_WITH_TIMEOUT(m_ws->findStudy(priorUid) && m_ws->findStudy(priorUid)->instanceCount == 12, 30000);
    QTRY_VERIFY(panel->priors().studies[panel->indexOf(priorUid)].isCached());
    // Opened on its first look, it was completed in place by the listing: the whole stack, the same image in view.
    QTRY_COMPARE(pane->sliceCount(), 12);
    QCOMPARE(viewer->pane(1), pane);
    QCOMPARE(pane->viewport()->image().info.identity.sopInstanceUid, pane->study()->series[pane->seriesIndex()].instances[pane->sliceIndex()].sopInstanceUid);
}

// spectrum-cli prefetch, headless: the head CT of a day and its comparable prior, over a slow link; killed
// part way, and run again, it fetches only what is missing, and says so.
void tst_PriorsArchive::cliPrefetchesAQueryAndItsPriorsAndGoesOnAfterAKill()
{
    QTemporaryDir dir;
    LinkEmulator link(m_orthanc.httpPort(), 10, 64, 16);  // 2 MB/s: a 512 KiB slice every quarter second or so
    QVERIFY(link.waitUntilListening());
    auto configWith = [&](const QString &url) {
        StoreConfigFile c = StoreConfigFile::load(dir.filePath(QStringLiteral("stores.json"))).value();
        c.remove(QStringLiteral("pacs"));
        if (c.add(dicomWebStore(QStringLiteral("pacs"), url)).isError() || c.save().isError())
            return false;
        return true;
    };
    QVERIFY(configWith(QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(link.port())));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_CONFIG"), dir.filePath(QStringLiteral("stores.json")));
    env.insert(QStringLiteral("SPECTRUM_CACHE_DIR"), dir.filePath(QStringLiteral("cache")));
    const QStringList args{QStringLiteral("prefetch"), QStringLiteral("--date"), QStringLiteral("20240102"), QStringLiteral("--modality"), QStringLiteral("CT")};

    // Killed once a few slices of the study are in.
    QProcess first;
    first.setProcessEnvironment(env);
    first.setReadChannel(QProcess::StandardError);  // where the progress goes
    first.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), args);
    QVERIFY(first.waitForStarted());
    QByteArray said;
    while (!said.contains(": 5/24") && first.state() == QProcess::Running) {
        first.waitForReadyRead(20000);
        said += first.readAllStandardError();
    }
    QVERIFY2(said.contains(": 5/24"), said.constData());
    first.kill();
    QVERIFY(first.waitForFinished());
    int kept = 0;
    {
        Result<std::unique_ptr<FileStore>> cache = FileStore::open(dir.filePath(QStringLiteral("cache")), 0);
        QVERIFY2(cache.isOk(), qPrintable(cache.isOk() ? QString() : cache.error().toString()));
        kept = int(runSync(cache.value()->query(BlobQuery())).value().size());
    }
    QVERIFY2(kept >= 5 && kept < 36, qPrintable(QString::number(kept)));

    // Again, straight to the archive: what was kept is not fetched again; the study and its prior are complete.
    QVERIFY(configWith(m_orthanc.dicomWebUrl()));
    QProcess second;
    second.setProcessEnvironment(env);
    second.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), args);
    QVERIFY(second.waitForFinished(120000));
    const QByteArray out = second.readAllStandardOutput(), err = second.readAllStandardError();
    QVERIFY2(second.exitCode() == 0, (out + err).constData());
    const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("1 study found: 1 fetched \\((\\d+) instance\\(s\\)\\), 0 here already; priors: 1 fetched \\((\\d+) instance"))
                                          .match(QString::fromUtf8(out));
    QVERIFY2(m.hasMatch(), out.constData());
    QCOMPARE(m.captured(1).toInt() + m.captured(2).toInt(), 36 - kept);  // only what was missing
    {
        Result<std::unique_ptr<FileStore>> cache = FileStore::open(dir.filePath(QStringLiteral("cache")), 0);
        QVERIFY(cache.isOk());
        const Result<QList<StudySummary>> studies = runSync(loadStudies(cache.value().get()));
        QVERIFY(studies.isOk());
        QCOMPARE(studies.value().size(), 2);
        for (const StudySummary &s : studies.value()) {
            QCOMPARE(s.instanceCount, s.identity.studyInstanceUid == m_ctUid ? 24 : 12);
            QVERIFY(s.identity.studyInstanceUid == m_ctUid || s.identity.studyInstanceUid == DemoArchive::studyUid(DemoStudy::HeadCtPrior));
        }
    }
    // Nothing missing: a third run fetches nothing and says both are here.
    QProcess third;
    third.setProcessEnvironment(env);
    third.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), args);
    QVERIFY(third.waitForFinished(60000));
    QVERIFY2(third.readAllStandardOutput().contains("0 fetched (0 instance(s)), 1 here already; priors: 0 fetched (0 instance(s), 0.0 MB), 1 here already"),
             "a finished prefetch fetches nothing again");
}

// A PACS pushes today's head CT to the workstation (DCMTK's storescu to its Storage SCP): its prior, in the
// archive, is in the cache before anyone opens the study.
void tst_PriorsArchive::aStudyPushedHereHasItsPriorFetched()
{
    QTemporaryDir dir;
    StoreConfigFile config;
    QVERIFY(!config.add(dicomWebStore(QStringLiteral("pacs"), m_orthanc.dicomWebUrl())).isError());
    Workstation::Options options;
    options.cacheDirectory = dir.filePath(QStringLiteral("cache"));
    options.seedDemoWhenEmpty = false;
    options.stores = config;
    options.storageAeTitle = QStringLiteral("READROOM");
    options.storagePort = freePort();
    Workstation ws(options);
    QSignalSpy started(&ws, &Workstation::started);
    ws.start();
    QVERIFY(started.wait(10000));
    QTRY_VERIFY(ws.isListening());
    QVERIFY(ws.prefetcher());
    QStringList files;
    for (const DemoInstance &i : std::as_const(m_bySop)) {
        if (i.identity.studyInstanceUid == m_ctUid && files.size() < 3) {
            files << dir.filePath(i.identity.sopInstanceUid + QStringLiteral(".dcm"));
            QVERIFY(writeFile(files.last(), i.bytes));
        }
    }
    const ProcessResult pushed = run(QStringLiteral(STORESCU_EXECUTABLE), QStringList{QStringLiteral("-aec"), QStringLiteral("READROOM"), QStringLiteral("127.0.0.1"),
                                                                                      QString::number(options.storagePort)} + files);
    QVERIFY2(pushed.ok(), pushed.err.constData());
    const QString prior = DemoArchive::studyUid(DemoStudy::HeadCtPrior);
    QTRY_VERIFY_WITH_TIMEOUT(ws.findStudy(prior) && ws.findStudy(prior)->instanceCount == 12, 30000);
    QTRY_VERIFY(ws.prefetcher()->isIdle());
    QCOMPARE(ws.prefetcher()->summary().priorsFetched, 1);
    QCOMPARE(ws.prefetcher()->summary().instances, 12);
    QVERIFY(!ws.findStudy(DemoArchive::studyUid(DemoStudy::HeadMr)));  // not comparable: left in the archive
    QCOMPARE(ws.findStudy(m_ctUid)->instanceCount, 3);  // the push itself, nothing more of it
}

QTEST_MAIN(tst_PriorsArchive)
#include "tst_priorsarchive.moc"
