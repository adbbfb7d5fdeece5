// SPDX-License-Identifier: Apache-2.0
// Priors that live in an archive: a study opened from Orthanc (DICOMweb) finds the patient's other studies
// there, says which are not here yet, and opens the prior beside it while it streams in.
#include "readingroomsuite.h"
#include "browser/priorspanel.h"
#include "viewer/seriespane.h"

#include "browser/savesearchdialog.h"
#include "browser/studybrowser.h"

#include "spectrum/stores/reading/priorprefetch.h"
#include "spectrum/stores/reading/savedsearchrunner.h"

#include <QDateEdit>
#include <QListWidget>
#include <QProcess>
#include <QRegularExpression>
#include <QTabWidget>
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
    void aPriorInTheCacheIsHungBesideAStudyFromTheArchive();
    void cliPrefetchesAQueryAndItsPriorsAndGoesOnAfterAKill();
    void aStudyPushedHereHasItsPriorFetched();
    void aSavedSearchPrefetchesWhatItListsAndItsPriors();
    void aSearchSavedInTheBrowserIsKeptAndRunsFromTheMenuAndTheCli();
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
    QSignalSpy comparison(viewer->comparison(), &StudyComparison::opened);
    QTRY_VERIFY_WITH_TIMEOUT(viewer->viewport()->hasImage(), 20000);
    m_window->activateWindow();
    viewer->setFocus();
    QVERIFY(m_window->openMostRecentComparable());
    QVERIFY(comparison.wait(20000));
    QCOMPARE(viewer->paneCount(), 2);
    SeriesPane *pane = viewer->pane(1);
    QCOMPARE(pane->study()->identity.studyInstanceUid, priorUid);
    QTRY_VERIFY_WITH_TIMEOUT(pane->viewport()->hasImage() && pane->viewport()->layers()->completeness() == 1.0, 20000);
    const ImageInfo &info = pane->viewport()->image().info;
    QCOMPARE(info.identity.studyInstanceUid, priorUid);
    // Exactly the instance the archive holds at that place.
    const QString sop = pane->study()->series[pane->seriesIndex()].instances[pane->sliceIndex()].sopInstanceUid;
    QCOMPARE(info.identity.sopInstanceUid, sop);
    QVERIFY(m_bySop.contains(sop));
    QVERIFY(pane->viewport()->layers()->overlay().comparison.startsWith(QStringLiteral("PRIOR  2023-01-03")));
    QTRY_VERIFY_WITH_TIMEOUT(m_ws->findStudy(priorUid) && m_ws->findStudy(priorUid)->instanceCount == 12, 30000);
    QTRY_VERIFY(panel->priors().studies[panel->indexOf(priorUid)].isCached());
    // Opened on its first look, it was completed in place by the listing: the whole stack, the same image in view.
    QTRY_COMPARE(pane->sliceCount(), 12);
    QCOMPARE(viewer->pane(1), pane);
    QCOMPARE(pane->viewport()->image().info.identity.sopInstanceUid, pane->study()->series[pane->seriesIndex()].instances[pane->sliceIndex()].sopInstanceUid);
}

// The same study opened from the archive again, its prior now in the cache (fetched above, never read as a whole
// study): the hanging protocol reads the prior's instances from the cache first and hangs it beside the study.
void tst_PriorsArchive::aPriorInTheCacheIsHungBesideAStudyFromTheArchive()
{
    const QString priorUid = DemoArchive::studyUid(DemoStudy::HeadCtPrior);
    QTRY_VERIFY_WITH_TIMEOUT(m_ws->findStudy(priorUid) && m_ws->findStudy(priorUid)->instanceCount == 12, 30000);
    auto *tabs = m_window->findChild<QTabWidget *>();
    QVERIFY(tabs);
    while (tabs->count() > 1)
        Q_EMIT tabs->tabCloseRequested(tabs->count() - 1);
    QVERIFY(!m_ws->loadedStudy(priorUid, m_ws->findStudy(priorUid)->identity.patientId));  // the scenario holds
    QSignalSpy opened(m_window.get(), &MainWindow::studyOpened);
    m_window->openRemoteStudy(QStringLiteral("pacs"), m_ctUid);
    QVERIFY(opened.wait(20000));
    auto *viewer = opened.first().first().value<StudyViewer *>();
    QVERIFY(viewer);
    QTRY_VERIFY_WITH_TIMEOUT(viewer->paneCount() == 2 && viewer->pane(1)->study()->identity.studyInstanceUid == priorUid, 20000);
    QCOMPARE(viewer->plan().name, QStringLiteral("CT head with prior"));
    QTRY_VERIFY_WITH_TIMEOUT(viewer->pane(1)->viewport()->hasImage(), 20000);
    QCOMPARE(viewer->pane(1)->viewport()->image().info.identity.studyInstanceUid, priorUid);
    while (tabs->count() > 1)
        Q_EMIT tabs->tabCloseRequested(tabs->count() - 1);
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
    options.stores.workstation.callers = {{QStringLiteral("STORESCU"), QStringLiteral("127.0.0.1")}};  // the modality that pushes
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

namespace {

/// The demo head CT's day, by modality: the one study of that day in the archive (its prior is a year earlier).
SavedSearch headCtDay(const QString &name, SavedSearch::Prefetch prefetch)
{
    SavedSearch s;
    s.name = name;
    s.modality = QStringLiteral("CT");
    s.dates = DatePeriod::fromText(QStringLiteral("20240102-20240102")).value();
    s.prefetch = prefetch;
    return s;
}

std::unique_ptr<Workstation> workstationWith(const QTemporaryDir &dir, const QString &dicomWebUrl, const SavedSearches &searches)
{
    StoreConfigFile config;
    if (config.add(dicomWebStore(QStringLiteral("pacs"), dicomWebUrl)).isError())
        return nullptr;
    Workstation::Options options;
    options.cacheDirectory = dir.filePath(QStringLiteral("cache"));
    options.seedDemoWhenEmpty = false;
    options.stores = config;
    options.searches = searches;
    options.searchesFile = dir.filePath(QStringLiteral("saved-searches.json"));
    auto ws = std::make_unique<Workstation>(options);
    QSignalSpy started(ws.get(), &Workstation::started);
    ws->start();
    return started.wait(20000) ? std::move(ws) : nullptr;
}

} // namespace

// A saved search run by the workstation (as its timer does): the day's head CT is listed, and its prior is in
// the cache before anyone opens either; one that says "the studies and their priors" brings the CT too; one
// naming a store that is not configured says so and fetches nothing.
void tst_PriorsArchive::aSavedSearchPrefetchesWhatItListsAndItsPriors()
{
    QTemporaryDir dir;
    SavedSearches searches;
    QVERIFY(!searches.put(headCtDay(QStringLiteral("The day's CT, priors"), SavedSearch::Prefetch::Priors)).isError());
    QVERIFY(!searches.put(headCtDay(QStringLiteral("The day's CT, all"), SavedSearch::Prefetch::StudiesAndPriors)).isError());
    SavedSearch elsewhere = headCtDay(QStringLiteral("Elsewhere"), SavedSearch::Prefetch::Priors);
    elsewhere.stores = {QStringLiteral("other-site")};
    QVERIFY(!searches.put(elsewhere).isError());
    std::unique_ptr<Workstation> ws = workstationWith(dir, m_orthanc.dicomWebUrl(), searches);
    QVERIFY(ws && ws->savedSearches() && ws->prefetcher());
    SavedSearchRunner *runner = ws->savedSearches();
    QSignalSpy ran(runner, &SavedSearchRunner::ran);
    const QString prior = DemoArchive::studyUid(DemoStudy::HeadCtPrior);

    QVERIFY(runner->run(QStringLiteral("The day's CT, priors")));
    QVERIFY(!runner->run(QStringLiteral("The day's CT, priors")));  // running already
    QVERIFY(ran.wait(20000));
    SavedSearchRun run = ran.takeFirst().first().value<SavedSearchRun>();
    QVERIFY2(!run.error.isError(), qPrintable(run.text()));
    QCOMPARE(run.hits.size(), 1);
    QCOMPARE(run.hits.first().study.identity.studyInstanceUid, m_ctUid);
    QCOMPARE(run.handedOn, 1);
    QVERIFY2(run.text().contains(QStringLiteral("1 study listed; its priors are fetched behind the reader")), qPrintable(run.text()));
    QVERIFY(runner->lastRun(QStringLiteral("The day's CT, priors")).isValid());
    QTRY_VERIFY_WITH_TIMEOUT(ws->findStudy(prior) && ws->findStudy(prior)->instanceCount == 12, 30000);
    QTRY_VERIFY(ws->prefetcher()->isIdle());
    QCOMPARE(ws->prefetcher()->summary().priorsFetched, 1);
    QVERIFY(!ws->findStudy(m_ctUid));  // priors only: the study itself stays in the archive

    QVERIFY(runner->run(QStringLiteral("The day's CT, all")));
    QVERIFY(ran.wait(20000));
    run = ran.takeFirst().first().value<SavedSearchRun>();
    QCOMPARE(run.handedOn, 1);
    QTRY_VERIFY_WITH_TIMEOUT(ws->findStudy(m_ctUid) && ws->findStudy(m_ctUid)->instanceCount == 24, 30000);
    QTRY_VERIFY(ws->prefetcher()->isIdle());
    QCOMPARE(ws->prefetcher()->summary().studiesFetched, 1);
    QCOMPARE(ws->prefetcher()->summary().priorsFetched, 1);  // fetched by the first run: not again
    QCOMPARE(ws->prefetcher()->summary().instances, 24 + 12);

    QVERIFY(runner->run(QStringLiteral("Elsewhere")));
    QVERIFY(ran.wait(10000));
    run = ran.takeFirst().first().value<SavedSearchRun>();
    QVERIFY(run.error.isError());
    QVERIFY2(run.text().contains(QStringLiteral("store 'other-site' is not configured")), qPrintable(run.text()));

    // A workstation whose cache holds the CT's Study Instance UID under another patient: the search lists the
    // study, and nothing is fetched for it or its priors.
    QTemporaryDir other;
    std::unique_ptr<Workstation> mixed = workstationWith(other, m_orthanc.dicomWebUrl(), searches);
    QVERIFY(mixed);
    const QString path = other.filePath(QStringLiteral("stranger.dcm"));
    for (const DemoInstance &i : std::as_const(m_bySop)) {
        if (i.identity.studyInstanceUid == m_ctUid) {
            QVERIFY(writeFile(path, i.bytes));
            break;
        }
    }
    const ProcessResult renamed = spectrum::test::run(QStringLiteral(DCMODIFY_EXECUTABLE), {QStringLiteral("-nb"), QStringLiteral("-m"), QStringLiteral("(0010,0020)=SOMEONE-ELSE"), path});
    QVERIFY2(renamed.ok(), renamed.err.constData());
    QVERIFY(runSync(mixed->cache()->importFile(QStringLiteral("stranger"), path)).isOk());
    QTRY_VERIFY(mixed->findStudy(m_ctUid));
    QSignalSpy mixedRan(mixed->savedSearches(), &SavedSearchRunner::ran);
    QVERIFY(mixed->savedSearches()->run(QStringLiteral("The day's CT, all")));
    QVERIFY(mixedRan.wait(20000));
    run = mixedRan.takeFirst().first().value<SavedSearchRun>();
    QCOMPARE(run.hits.size(), 1);
    QCOMPARE(run.handedOn, 0);
    QCOMPARE(run.heldBack.size(), 1);
    QVERIFY2(run.text().contains(QStringLiteral("under another patient")), qPrintable(run.text()));
    QVERIFY(mixed->prefetcher()->isIdle());
    QCOMPARE(mixed->prefetcher()->summary().studies, 0);
    QVERIFY(!mixed->findStudy(prior));
}

// The reader saves the browser's search (the day's CTs, with their priors), runs it again from the Saved menu:
// its rows are listed and what they need is prefetched. The file is kept; a hand-broken file is never written
// over; `spectrum-cli prefetch --saved` runs the same search headless.
void tst_PriorsArchive::aSearchSavedInTheBrowserIsKeptAndRunsFromTheMenuAndTheCli()
{
    QTemporaryDir dir;
    std::unique_ptr<Workstation> ws = workstationWith(dir, m_orthanc.dicomWebUrl(), SavedSearches());
    QVERIFY(ws);
    MainWindow window(ws.get());
    window.resize(1100, 700);
    window.show();
    StudyBrowser *b = window.browser();
    b->modalityField()->setCurrentIndex(b->modalityField()->findData(QStringLiteral("CT")));
    b->datesField()->setCurrentIndex(5);  // From … to …
    b->findChild<QDateEdit *>()->setDate(QDate(2024, 1, 2));
    b->findChildren<QDateEdit *>().at(1)->setDate(QDate(2024, 1, 2));
    SavedSearch wanted = b->currentSearch();
    QCOMPARE(wanted.modality, QStringLiteral("CT"));
    QCOMPARE(wanted.dates.toText(), QStringLiteral("20240102-20240102"));
    // The dialog: a name taken is refused, an empty one too; the stores it asks are chosen there.
    {
        SaveSearchDialog dialog(wanted, {QStringLiteral("pacs")}, {QStringLiteral("Taken")});
        QVERIFY(dialog.problem().contains(QStringLiteral("needs a name")));
        dialog.nameField()->setText(QStringLiteral("Taken"));
        QVERIFY(dialog.problem().contains(QStringLiteral("named \"Taken\" already")));
        dialog.nameField()->setText(QStringLiteral("The day's CT"));
        dialog.prefetchField()->setCurrentIndex(dialog.prefetchField()->findData(int(SavedSearch::Prefetch::StudiesAndPriors)));
        QVERIFY(dialog.problem().isEmpty());
        QVERIFY(dialog.search().stores.isEmpty());  // every archive, those added later too
        dialog.storesField()->item(0)->setCheckState(Qt::Unchecked);
        QVERIFY(dialog.problem().contains(QStringLiteral("Choose the stores")));
        dialog.storesField()->item(0)->setCheckState(Qt::Checked);
        wanted = dialog.search();
    }
    QVERIFY(!b->saveSearch(wanted).isError());
    const QString file = dir.filePath(QStringLiteral("saved-searches.json"));
    Result<SavedSearches> kept = SavedSearches::load(file);
    QVERIFY(kept.isOk());
    QCOMPARE(kept.value().searches.size(), 1);
    QVERIFY(kept.value().searches.first() == wanted);
    // Written into by hand meanwhile (the hospital's configuration management): kept when the reader saves again.
    {
        SavedSearches byHand = kept.value();
        SavedSearch mr;
        mr.name = QStringLiteral("MR by hand");
        mr.modality = QStringLiteral("MR");
        QVERIFY(!byHand.put(mr).isError());
        QVERIFY(!byHand.save(file).isError());
        SavedSearch again = wanted;
        again.everyMinutes = 30;
        QVERIFY(!b->saveSearch(again).isError());
        const SavedSearches now = SavedSearches::load(file).value();
        QCOMPARE(now.searches.size(), 2);
        QVERIFY(now.find(QStringLiteral("MR by hand")));
        QCOMPARE(now.find(wanted.name)->everyMinutes, 30);
        QVERIFY(ws->savedSearches()->nextRun(wanted.name).isValid());  // it runs by itself now
        QVERIFY(!b->saveSearch(wanted).isError());
    }

    // The reader types: the form is theirs again, not the saved search.
    QVERIFY(b->activeSearch());
    QTest::keyClicks(b->patientNameField(), QStringLiteral("X"));
    QVERIFY(!b->activeSearch());
    b->patientNameField()->clear();

    // Run from the menu: listed, then the study and its prior prefetched (the transfers list shows them).
    QSignalSpy listed(b, &StudyBrowser::savedSearchListed);
    QVERIFY(b->runSaved(QStringLiteral("The day's CT")));
    QVERIFY(b->activeSearch());
    QVERIFY(listed.wait(20000));
    QCOMPARE(b->model()->rowCount(), 1);
    const QString prior = DemoArchive::studyUid(DemoStudy::HeadCtPrior);
    QTRY_VERIFY_WITH_TIMEOUT(ws->findStudy(m_ctUid) && ws->findStudy(m_ctUid)->instanceCount == 24, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(ws->findStudy(prior) && ws->findStudy(prior)->instanceCount == 12, 30000);
    QVERIFY(window.transfersPanel()->count() >= 2);
    QVERIFY(ws->savedSearches()->lastRun(QStringLiteral("The day's CT")).isValid());  // run from the browser counts
    QVERIFY(!b->runSaved(QStringLiteral("No such search")));

    // Deleted from the menu: gone from the file.
    QVERIFY(b->deleteSaved(QStringLiteral("The day's CT")));
    QVERIFY(!SavedSearches::load(file).value().find(QStringLiteral("The day's CT")));
    QVERIFY(SavedSearches::load(file).value().find(QStringLiteral("MR by hand")));
    QVERIFY(!b->deleteSaved(QStringLiteral("The day's CT")));
    QVERIFY(!b->activeSearch());

    // The CLI runs a saved search from the file into its own cache.
    QVERIFY(!b->saveSearch(wanted).isError());
    QTemporaryDir cli;
    StoreConfigFile config = StoreConfigFile::load(cli.filePath(QStringLiteral("stores.json"))).value();
    QVERIFY(!config.add(dicomWebStore(QStringLiteral("pacs"), m_orthanc.dicomWebUrl())).isError());
    QVERIFY(!config.save().isError());
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_CONFIG"), cli.filePath(QStringLiteral("stores.json")));
    env.insert(QStringLiteral("SPECTRUM_CACHE_DIR"), cli.filePath(QStringLiteral("cache")));
    auto runCli = [&](const QStringList &args) {
        QProcess p;
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), args);
        p.waitForFinished(120000);
        return std::make_pair(p.exitCode(), QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError()));
    };
    auto [code, said] = runCli({QStringLiteral("prefetch"), QStringLiteral("--searches"), file, QStringLiteral("--saved"), QStringLiteral("The day's CT")});
    QVERIFY2(code == 0, qPrintable(said));
    QVERIFY2(said.contains(QStringLiteral("1 study found: 1 fetched (24 instance(s)), 0 here already; priors: 1 fetched (12 instance(s)")), qPrintable(said));
    std::tie(code, said) = runCli({QStringLiteral("prefetch"), QStringLiteral("--searches"), file, QStringLiteral("--saved"), QStringLiteral("Nope")});
    QCOMPARE(code, 2);
    QVERIFY2(said.contains(QStringLiteral("no saved search is named \"Nope\"")) && said.contains(QStringLiteral("it has: MR by hand, The day's CT")), qPrintable(said));
    std::tie(code, said) = runCli({QStringLiteral("prefetch"), QStringLiteral("--searches"), file, QStringLiteral("--saved"), QStringLiteral("The day's CT"),
                                   QStringLiteral("--modality"), QStringLiteral("MR")});
    QCOMPARE(code, 2);
    QVERIFY2(said.contains(QStringLiteral("--modality cannot change them")), qPrintable(said));

    // A file broken by hand: the workstation starts without saved searches and never writes over it.
    QTemporaryDir broken;
    const QByteArray handWritten = "{\"format\": \"spectrum-saved-searches/1\", \"searches\": [{\"name\": \"mine\", \"modality\": \"CT\",}]}";
    QVERIFY(writeFile(broken.filePath(QStringLiteral("saved-searches.json")), handWritten));
    Workstation::Options options;
    options.cacheDirectory = broken.filePath(QStringLiteral("cache"));
    options.seedDemoWhenEmpty = false;
    options.searchesFile = broken.filePath(QStringLiteral("saved-searches.json"));
    const Result<SavedSearches> read = SavedSearches::load(options.searchesFile);
    QVERIFY(!read.isOk());
    options.searchesFileError = read.error();
    Workstation other(options);
    const Error refused = other.setSavedSearches(kept.value());
    QVERIFY(refused.isError());
    QVERIFY2(refused.message().contains(QStringLiteral("mend or move that file first")), qPrintable(refused.message()));
    QFile f(options.searchesFile);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), handWritten);
}

QTEST_MAIN(tst_PriorsArchive)
#include "tst_priorsarchive.moc"
