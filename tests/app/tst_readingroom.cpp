// SPDX-License-Identifier: Apache-2.0
// Reading from an archive, as a radiologist does, offscreen against a real Orthanc (DICOMweb) started here:
// the browser finds the studies there and merges what the cache holds; opening one that is not cached shows the
// slice in view as soon as it is fetched — fetched first, then its neighbours, re-ordered when the view moves —
// and what is shown is exactly that slice of that patient; a slice not yet here is never shown as another.

#include "viewer/filterpanel.h"
#include "guisupport.h"
#include "viewport/displayimage.h"
#include "viewport/imageviewport.h"
#include "shell/mainwindow.h"
#include "stores/storesdialog.h"
#include "stores/transferspanel.h"
#include "spectrum/core/jobtracker.h"
#include "browser/studybrowser.h"
#include "viewer/studyviewer.h"
#include "shell/workstation.h"

#include "spectrum/imaging/codecs/decodecounts.h"
#include "spectrum/imaging/demostudies.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/reading/studyfetchjob.h"
#include "spectrum/stores/reading/studystreamer.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/transfer/dimse.h"
#include "spectrum/transfer/s3client.h"

#include "s3server.h"
#include "archives.h"
#include "readingroomsuite.h"
#include "testsupport.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>

#include <cmath>
#include <cstring>
#include <limits>
#include <QLineEdit>
#include <QPushButton>
#include <QScopeGuard>
#include <QLabel>
#include <QSignalSpy>
#include <QStatusBar>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "volumes/mprview.h"
#include "volumes/mprvolume.h"
#include "spectrum/imaging/volumes/planegeometry.h"

using namespace spectrum;
using namespace spectrum::test;

class tst_ReadingRoom : public ReadingRoomSuite
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { ReadingRoomSuite::initTestCase(); }
    void cleanupTestCase() { ReadingRoomSuite::cleanupTestCase(); }
    void browserFindsStudiesInTheArchive();
    void openingAStudyFromTheArchiveShowsTheSliceInViewFirst();
    void aDamagedCachedImageIsFetchedAgain();
    void sendingAProcessedImageBackToTheArchive();
    void fetchOrderFollowsTheView();
    void aSliceNotYetHereIsNeverShownAsAnother();
    void theSliceInViewFillsInWhileItArrives();
    void theStudyComesInBulkBesideTheView();
    void eachArrivingImageIsDecodedAndFilteredOnce();
    void mprOfAStudyStillArrivingFillsInAsItComes_data();
    void mprOfAStudyStillArrivingFillsInAsItComes();
    void aProtocolOpensMprOnTheFirstLookAndKeepsIt();
    void aStudyKeptInS3OpensLikeAnyOther();
    void prefetchingStudiesForLater();
};

void tst_ReadingRoom::browserFindsStudiesInTheArchive()
{
    StudyBrowser *b = m_window->browser();
    QCOMPARE(b->table()->model()->rowCount(), 0);  // an empty cache
    QSignalSpy finished(b, &StudyBrowser::searchFinished);
    b->patientNameField()->setText(QStringLiteral("DEMO*"));
    b->search();
    QVERIFY(finished.wait(20000));
    QCOMPARE(b->table()->model()->rowCount(), 5);
    const int ct = rowOf(m_ctUid);
    QVERIFY(ct >= 0);
    const FoundStudy found = *b->studyAtRow(ct);  // a copy: every search rebuilds the rows
    const FoundStudy *f = &found;
    QCOMPARE(f->stores, QStringList{QStringLiteral("pacs")});
    QCOMPARE(f->instances, 24);
    QCOMPARE(f->cachedInstances, 0);
    QCOMPARE(f->modalities, QStringList{QStringLiteral("CT")});
    QCOMPARE(b->table()->model()->index(ct, FoundStudyModel::Cached).data().toString(), QStringLiteral("—"));

    // Narrower: by modality, by patient ID, by a date range that holds the demo's day, by one that does not.
    b->modalityField()->setCurrentIndex(b->modalityField()->findData(QStringLiteral("CT")));
    b->search();
    QVERIFY(finished.wait(20000));
    QCOMPARE(b->table()->model()->rowCount(), 2);  // the CT and its prior
    b->modalityField()->setCurrentIndex(0);
    b->patientNameField()->clear();
    b->patientIdField()->setText(f->identity.patientId);
    b->search();
    QVERIFY(finished.wait(20000));
    QVERIFY(b->table()->model()->rowCount() >= 1);
    for (int r = 0; r < b->table()->model()->rowCount(); ++r)
        QCOMPARE(b->studyAtRow(r)->identity.patientId, f->identity.patientId);
    b->patientIdField()->clear();
    b->datesField()->setCurrentIndex(1);  // today: the demo studies are from 2024
    b->search();
    QVERIFY(finished.wait(20000));
    QCOMPARE(b->table()->model()->rowCount(), 0);
    b->datesField()->setCurrentIndex(0);
    b->search();
    QVERIFY(finished.wait(20000));
    QCOMPARE(b->table()->model()->rowCount(), 5);
}

void tst_ReadingRoom::openingAStudyFromTheArchiveShowsTheSliceInViewFirst()
{
    StudyBrowser *b = m_window->browser();
    const int ct = rowOf(m_ctUid);
    QVERIFY(ct >= 0);
    QSignalSpy opened(m_window.get(), &MainWindow::studyOpened);
    m_window->openFound(*b->studyAtRow(ct));
    QVERIFY(opened.wait(20000));
    auto *viewer = opened.first().first().value<StudyViewer *>();
    QVERIFY(viewer && viewer->streamer());
    StudyStreamer *streamer = viewer->streamer();
    QSignalSpy shown(viewer, &StudyViewer::imageShown);
    QString firstShown;  // the instance of the first image on screen, whichever numbering the viewer had then
    const QMetaObject::Connection noteFirst = connect(viewer, &StudyViewer::imageShown, this, [&] {
        if (firstShown.isEmpty())
            firstShown = viewer->viewport()->image().info.identity.sopInstanceUid;
    });
    const auto forgetFirst = qScopeGuard([&] { disconnect(noteFirst); });  // it captures this function's locals
    if (!streamer->isListed()) {
        // Opened on the first look, while the study is listed: only the slice a stack opens at, coming first.
        QCOMPARE(viewer->study().series.size(), 1);
        QCOMPARE(viewer->sliceCount(), 1);
        QCOMPARE(viewer->study().series[0].instances[0].instanceNumber, 13);
    }
    QTRY_VERIFY_WITH_TIMEOUT(streamer->isListed(), 20000);
    QCOMPARE(viewer->sliceCount(), 24);  // the whole list now, the same image in view at its place in it
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() && viewer->sliceIndex() == 12 && shown.last().first().toInt() == 12, 20000);
    // A stack opens in its middle, and that slice came first (by the first look, or first of the listing's fetches).
    QCOMPARE(firstShown, viewer->study().series[0].instances[12].sopInstanceUid);
    if (!streamer->firstLook().series.isEmpty())
        QCOMPARE(streamer->firstLook().series[0].instances[0].key, viewer->study().series[0].instances[12].key);

    // Exactly the slice it says: the pixels of that instance, rendered with the window in use.
    auto check = [&](int index) {
        const QString sop = viewer->study().series[0].instances[index].sopInstanceUid;
        QVERIFY(m_bySop.contains(sop));
        Result<DecodedImage> original = decodeDicom(ByteView(m_bySop.value(sop).bytes));
        QVERIFY(original.isOk());
        QCOMPARE(viewer->viewport()->image().info.identity.sopInstanceUid, sop);
        QCOMPARE(viewer->viewport()->image().info.identity.patientId, viewer->study().identity.patientId);
        QCOMPARE(viewer->viewport()->renderedImage(), toQImage(renderFrame(original.value(), 0, viewer->viewport()->window())));
    };
    check(12);
    viewer->showSlice(3);
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() && shown.last().first().toInt() == 3, 20000);
    check(3);

    // The series' thumbnail came with its first image.
    QTRY_VERIFY(!viewer->thumbnail(0).isNull());

    // The rest of the study follows; the cache (and the browser) then hold all of it.
    QTRY_VERIFY_WITH_TIMEOUT(streamer->isComplete(), 30000);
    QCOMPARE(streamer->cachedCount(), 24);
    QTRY_VERIFY_WITH_TIMEOUT(m_ws->findStudy(m_ctUid) && m_ws->findStudy(m_ctUid)->instanceCount == 24, 20000);
    QTRY_COMPARE(b->table()->model()->index(rowOf(m_ctUid), FoundStudyModel::Cached).data().toString(), QStringLiteral("all"));

    // The transfer panel followed it: its row, now complete. Once it was all here, its comparable prior (the
    // head CT a year earlier, in the same archive) came in behind it, unasked: a second row, complete too.
    TransfersPanel *transfers = m_window->transfersPanel();
    QTRY_VERIFY2(transfers->details(0).startsWith(QStringLiteral("24 of 24 images")), qPrintable(transfers->details(0)));
    QTRY_VERIFY2(transfers->details(0).endsWith(QStringLiteral("complete")), qPrintable(transfers->details(0)));
    const QString prior = DemoArchive::studyUid(DemoStudy::HeadCtPrior);
    QTRY_VERIFY_WITH_TIMEOUT(m_ws->findStudy(prior) && m_ws->findStudy(prior)->instanceCount == 12, 30000);
    QCOMPARE(transfers->count(), 2);
    QVERIFY2(transfers->title(1).contains(QStringLiteral("2023-01-03")) && transfers->title(1).contains(QStringLiteral("prior, prefetched")),
             qPrintable(transfers->title(1)));
    QTRY_VERIFY(transfers->details(1).endsWith(QStringLiteral("complete")));
    QTRY_VERIFY(m_ws->jobs()->summary().isEmpty());
    QVERIFY(!m_ws->findStudy(DemoArchive::studyUid(DemoStudy::HeadMr)));  // not comparable: not fetched
}

// One byte of a cached image changed on the disk: found before the image is shown (the read checks the
// checksum), dropped from the cache, fetched again from the archive, and then shown right.
void tst_ReadingRoom::aDamagedCachedImageIsFetchedAgain()
{
    StudyViewer *viewer = m_window->currentViewer();
    QVERIFY(viewer && viewer->streamer());
    StudyStreamer *streamer = viewer->streamer();
    QTRY_VERIFY_WITH_TIMEOUT(streamer->isComplete(), 30000);
    const InstanceRef target = viewer->study().series[0].instances[20];
    const Result<ByteView> cached = runSync(m_ws->cache()->read(target.key));
    QVERIFY(cached.isOk());
    const QByteArray bytes = cached.value().toByteArray();
    QVERIFY(damageOnDisk(m_ws->cache()->root(), bytes, bytes.size() / 2, QByteArray(1, char(bytes.at(bytes.size() / 2) ^ 0x5a))));
    m_ws->images()->clear();  // not in memory either: it has to come from the disk
    const int requests = streamer->requestsMade();
    QStringList refetched;  // the instances kept again, as the streamer tells them
    connect(streamer, &StudyStreamer::instanceUpdated, this, [&](const InstanceUpdate &u) {
        if (u.step == InstanceUpdate::Kept)
            refetched << u.key;
    });
    viewer->showSlice(20);
    QTRY_VERIFY_WITH_TIMEOUT(!refetched.isEmpty(), 20000);
    QCOMPARE(refetched.first(), target.key);
    QCOMPARE(streamer->requestsMade(), requests + 1);
    // Whole (not the preview shown while it arrived), and the instance it says.
    QTRY_VERIFY(viewer->viewport()->layers()->completeness() >= 1.0 && viewer->viewport()->image().info.identity.sopInstanceUid == target.sopInstanceUid);
    Result<DecodedImage> original = decodeDicom(ByteView(m_bySop.value(target.sopInstanceUid).bytes));
    QVERIFY(original.isOk());
    QCOMPARE(viewer->viewport()->renderedImage(), toQImage(renderFrame(original.value(), 0, viewer->viewport()->window())));
    Result<ByteView> again = runSync(m_ws->cache()->read(target.key));
    QVERIFY(again.isOk());
    QVERIFY(again.value().toByteArray() == m_bySop.value(target.sopInstanceUid).bytes);
}

void tst_ReadingRoom::sendingAProcessedImageBackToTheArchive()
{
    StudyViewer *viewer = m_window->currentViewer();
    QVERIFY(viewer);
    QCOMPARE(viewer->study().identity.studyInstanceUid, m_ctUid);
    viewer->showSlice(7);
    QTRY_COMPARE(viewer->viewport()->image().info.identity.sopInstanceUid, viewer->study().series[0].instances[7].sopInstanceUid);
    m_window->filterPanel()->setSpecs({QStringLiteral("invert")});
    const int seriesBefore = int(viewer->study().series.size());
    QSignalSpy sent(m_window.get(), &MainWindow::sendFinished);
    m_window->sendToArchive(QStringLiteral("pacs"), false);
    QVERIFY(sent.wait(30000));
    QCOMPARE(sent.first().at(0).toInt(), 1);  // stored
    QCOMPARE(sent.first().at(1).toInt(), 0);  // refused
    // The derived series joins the open study at once, with a number of its own and a description that says
    // what was done; it shows from the cache.
    QTRY_COMPARE(int(viewer->study().series.size()), seriesBefore + 1);
    const SeriesSummary sentSeries = viewer->study().series.last();
    int highest = 0;
    for (int i = 0; i < seriesBefore; ++i)
        highest = std::max(highest, viewer->study().series[i].seriesNumber);
    QCOMPARE(sentSeries.seriesNumber, highest + 1);
    QVERIFY2(sentSeries.description.contains(QStringLiteral("invert")), qPrintable(sentSeries.description));
    viewer->showSeries(seriesBefore);
    QTRY_VERIFY(viewer->viewport()->hasImage() && viewer->viewport()->image().info.identity.seriesInstanceUid == sentSeries.seriesInstanceUid);
    viewer->showSeries(0);
    TransfersPanel *transfers = m_window->transfersPanel();
    QCOMPARE(transfers->details(transfers->count() - 1), QStringLiteral("1 image(s) stored"));  // and in the transfers panel
    m_window->filterPanel()->setSpecs({});

    // A send cancelled from the panel while its images are being made: nothing reaches the archive.
    {
        JobTracker tracker;
        TransfersPanel panel(&tracker);
        QStringList keys;
        for (const InstanceRef &i : viewer->study().series[0].instances)
            keys << i.key;
        auto *job = m_ws->registry()->exportDerivedSeries(QStringLiteral("pacs"), keys, m_window->filterPanel()->registry().makeChain({QStringLiteral("invert")}).value());
        job->setTitle(QStringLiteral("whole series"));
        describeSend(job);
        tracker.add(job, JobTracker::Direction::Outgoing);
        QVERIFY(panel.details(0).startsWith(QStringLiteral("preparing")));
        connect(job, &Job::progress, &panel, [&panel] { panel.cancel(0); });
        QSignalSpy done(job, &Job::finished);
        job->start(ExecutionPolicy::Async);
        QVERIFY(done.wait(30000));
        QCOMPARE(panel.details(0), QStringLiteral("cancelled"));
        QVERIFY(!panel.cancel(0));  // over; its button dismisses the row now
    }

    // The archive now has a second series in the study: the derived image, whose pixels are the filtered ones.
    Result<StudySummary> listed = runSync(m_ws->registry()->listStudy(QStringLiteral("pacs"), m_ctUid));
    QVERIFY(listed.isOk());
    QCOMPARE(listed.value().series.size(), 2);
    const SeriesSummary *derived = nullptr;
    for (const SeriesSummary &s : listed.value().series) {
        if (s.seriesInstanceUid != viewer->study().series[0].seriesInstanceUid)
            derived = &s;
    }
    QVERIFY(derived);
    QCOMPARE(derived->instances.size(), 1);
    QTemporaryDir out;
    Result<FetchSummary> fetched = runSync(m_ws->registry()->fetchStudy(QStringLiteral("pacs"), m_ctUid, FetchOptions::into(out.path())));
    QVERIFY(fetched.isOk());
    Result<DecodedImage> back = decodeDicomFile(QDir(out.path()).filePath(derived->instances[0].sopInstanceUid + QStringLiteral(".dcm")));
    QVERIFY(back.isOk());
    const QString sourceSop = viewer->study().series[0].instances[7].sopInstanceUid;
    Result<DecodedImage> original = decodeDicom(ByteView(m_bySop.value(sourceSop).bytes));
    Result<FilterChain> invert = m_window->filterPanel()->registry().makeChain({QStringLiteral("invert")});
    Result<PixelBuffer> expected = applyFilters(invert.value(), original.value().pixels, original.value().info, nullptr);
    QCOMPARE(back.value().pixels.frameBytes(), expected.value().frameBytes());
    QVERIFY(std::memcmp(back.value().pixels.frameData(0), expected.value().frameData(0), size_t(expected.value().frameBytes())) == 0);
    QCOMPARE(back.value().info.identity.patientId, original.value().info.identity.patientId);
    QCOMPARE(back.value().info.identity.studyInstanceUid, m_ctUid);
    // Image Type keeps what the original said of itself after DERIVED\SECONDARY (AXIAL), as dcmdump reads it.
    const ProcessResult dump = run(QStringLiteral(DCMDUMP_EXECUTABLE), {QStringLiteral("+P"), QStringLiteral("0008,0008"),
                                                                      QDir(out.path()).filePath(derived->instances[0].sopInstanceUid + QStringLiteral(".dcm"))});
    QVERIFY2(dump.out.contains("[DERIVED\\SECONDARY\\AXIAL]"), dump.out.constData());
}

void tst_ReadingRoom::fetchOrderFollowsTheView()
{
    // One fetch at a time, so the order is exact: from slice 5 outward, then, once the view jumps, from 20.
    StudyStreamer ct(m_ws->registry(), nullptr, QStringLiteral("pacs"), m_ctUid);  // nothing counts as cached: all 24 fetched
    ct.setParallel(1);
    ct.setBulk(false);  // instance by instance only: the order is the whole point here
    QStringList order;
    QSignalSpy listed(&ct, &StudyStreamer::listed);
    connect(&ct, &StudyStreamer::listed, &ct, [&] { ct.setFocus(0, 5); });
    connect(&ct, &StudyStreamer::instanceUpdated, &ct, [&](const InstanceUpdate &u) {
        if (u.step != InstanceUpdate::Kept)
            return;
        order << u.key;
        if (order.size() == 2)
            ct.setFocus(0, 20);
    });
    ct.start();
    QVERIFY(listed.wait(20000));
    QTRY_VERIFY_WITH_TIMEOUT(ct.isComplete(), 30000);
    QCOMPARE(order.size(), ct.total());  // 24, and the derived image sent back by the test before
    QStringList keys;
    for (const InstanceRef &i : ct.study().series[0].instances)
        keys << i.key;
    auto indexOf = [&](int n) { return int(keys.indexOf(order[n])); };
    // Slice 5 first, then its nearest neighbour…
    QCOMPARE(indexOf(0), 5);
    QCOMPARE(indexOf(1), 6);
    // …until the view jumped to 20 (as the second arrived): 20, 21, 19, 22, 18 …
    QCOMPARE(indexOf(2), 20);
    QCOMPARE(indexOf(3), 21);
    QCOMPARE(indexOf(4), 19);
    QCOMPARE(indexOf(5), 22);
    QCOMPARE(indexOf(6), 18);
}

void tst_ReadingRoom::aSliceNotYetHereIsNeverShownAsAnother()
{
    // The MR (2 slices) from the archive, one fetch at a time, stopped as soon as the slice in view is in.
    auto *streamer = new StudyStreamer(m_ws->registry(), m_ws->cache(), QStringLiteral("pacs"), DemoArchive::studyUid(DemoStudy::HeadMr));
    streamer->setParallel(1);
    streamer->setBulk(false);  // one instance at a time, nothing else
    std::unique_ptr<StudyViewer> viewer;
    connect(streamer, &StudyStreamer::listed, this, [&] { viewer = std::make_unique<StudyViewer>(m_ws->localStore(), m_ws->images(), streamer->study(), streamer); });
    connect(streamer, &StudyStreamer::instanceUpdated, streamer, [streamer](const InstanceUpdate &u) {
        if (u.step == InstanceUpdate::Kept)
            streamer->stop();
    });
    QSignalSpy listed(streamer, &StudyStreamer::listed);
    streamer->start();
    QVERIFY(listed.wait(20000));
    QVERIFY(viewer);
    QSignalSpy shown(viewer.get(), &StudyViewer::imageShown);
    QVERIFY(shown.wait(20000));
    const int here = viewer->sliceIndex();
    QCOMPARE(here, 1);  // the middle of two
    QCOMPARE(streamer->cachedCount(), 1);
    viewer->showSlice(0);
    QCOMPARE(viewer->sliceIndex(), 0);
    QVERIFY(!viewer->viewport()->hasImage());  // a message, not the other slice under this number
    const QString key0 = viewer->study().series[0].instances[0].key;
    QVERIFY(!streamer->isCached(key0) && !streamer->isFetching(key0));  // nor will it be: fetching stopped
    viewer->showSlice(1);
    QTRY_VERIFY(viewer->viewport()->hasImage());
    QCOMPARE(viewer->viewport()->image().info.identity.sopInstanceUid, viewer->study().series[0].instances[1].sopInstanceUid);
}

void tst_ReadingRoom::theSliceInViewFillsInWhileItArrives()
{
    // The archive behind a slow link (8 Mbit/s: a 512 KB slice takes half a second), into a fresh cache.
    LinkEmulator link(m_orthanc.httpPort(), 10, 256, 8);
    QVERIFY(link.waitUntilListening());
    QTemporaryDir dir;
    std::unique_ptr<Workstation> started = workstationWithArchive(dir, QStringLiteral("slow"), QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(link.port()));
    QVERIFY(started);
    Workstation &ws = *started;

    auto *streamer = new StudyStreamer(ws.registry(), ws.cache(), QStringLiteral("slow"), m_ctUid);
    streamer->setParallel(1);
    // The view lane alone: listed at once, the slice in view comes by a request of its own. (In bulk, the study is
    // laid out as it streams and its listing waits to see the stream's pace: the viewer made here at the listing
    // would come after the slice.)
    streamer->setBulk(false);
    std::unique_ptr<StudyViewer> viewer;
    QList<QPair<int, double>> previews;
    QList<bool> previewsRight;
    connect(streamer, &StudyStreamer::listed, this, [&] {
        viewer = std::make_unique<StudyViewer>(ws.localStore(), ws.images(), streamer->study(), streamer);
        connect(viewer.get(), &StudyViewer::previewShown, this, [&](int index, double fraction) {
            previews << qMakePair(index, fraction);
            // The rows that are in are the instance's own rows; the overlay says it is still arriving.
            const DecodedImage &shown = viewer->viewport()->image();
            const QString sop = viewer->study().series[0].instances[index].sopInstanceUid;
            Result<DecodedImage> original = decodeDicom(ByteView(m_bySop.value(sop).bytes));
            const qsizetype rowBytes = qsizetype(shown.pixels.width()) * PixelBuffer::bytesPerPixel(shown.pixels.format());
            const qsizetype rows = qsizetype(fraction * shown.pixels.height());
            previewsRight << (original.isOk() && shown.info.identity.sopInstanceUid == sop && viewer->viewport()->layers()->completeness() < 1
                              && std::memcmp(shown.pixels.frameData(0), original.value().pixels.frameData(0), size_t(rows * rowBytes)) == 0);
        });
    });
    QSignalSpy listed(streamer, &StudyStreamer::listed);
    streamer->start();
    QVERIFY(listed.wait(20000));
    QSignalSpy shown(viewer.get(), &StudyViewer::imageShown);
    QVERIFY(shown.wait(30000));
    QCOMPARE(shown.first().first().toInt(), 12);
    QVERIFY2(previews.size() >= 2, qPrintable(QStringLiteral("%1 preview(s)").arg(previews.size())));
    for (int i = 0; i < previews.size(); ++i) {
        QCOMPARE(previews[i].first, 12);
        QVERIFY(previewsRight[i]);
        if (i > 0)
            QVERIFY(previews[i].second >= previews[i - 1].second);  // rows only ever fill in
    }
    qInfo() << previews.size() << "previews, first at" << previews.first().second;
    QVERIFY(previews.first().second < 1.0);  // shown before the last byte was in
    QCOMPARE(viewer->viewport()->layers()->completeness(), 1.0);

    // Paused and resumed from the transfer panel while the rest of the study is still on the slow link.
    JobTracker tracker;
    TransfersPanel panel(&tracker);
    auto *fetch = new StudyFetchJob(streamer, QStringLiteral("CT from slow"));
    tracker.add(fetch);
    fetch->start();
    auto *pause = panel.findChildren<QPushButton *>().first();
    QCOMPARE(pause->text(), QStringLiteral("Pause"));
    pause->click();
    QVERIFY(streamer->isStopped());
    QTRY_VERIFY(panel.details(0).endsWith(QStringLiteral("paused")));
    if (const QString shots = qEnvironmentVariable("SPECTRUM_TEST_SHOTS"); !shots.isEmpty()) {
        panel.resize(420, 160);
        panel.show();
        panel.grab().save(shots + QStringLiteral("/transfers-paused.png"));  // to look at, as a reader would
    }
    const int cachedWhilePaused = streamer->cachedCount();
    QCOMPARE(streamer->fetching(), 0);
    pause->click();  // "Resume"
    QVERIFY(!streamer->isStopped());
    QTRY_VERIFY_WITH_TIMEOUT(streamer->cachedCount() > cachedWhilePaused, 20000);
    QVERIFY2(tracker.summary().startsWith(QStringLiteral("1 transfer(s)")), qPrintable(tracker.summary()));
    QCOMPARE(pause->text(), QStringLiteral("Pause"));
    // Held back by another hand (the prefetcher does so with a prior while the reader waits for a study): the row
    // says paused and the status bar leaves it out; let go, it moves again.
    streamer->stop();
    QVERIFY(panel.details(0).endsWith(QStringLiteral("paused")));
    QCOMPARE(pause->text(), QStringLiteral("Resume"));
    QCOMPARE(tracker.summary(), QString());
    streamer->resume();
    QVERIFY(!panel.details(0).endsWith(QStringLiteral("paused")));
    QVERIFY(tracker.summary().startsWith(QStringLiteral("1 transfer(s)")));
    if (const QString shots = qEnvironmentVariable("SPECTRUM_TEST_SHOTS"); !shots.isEmpty()) {
        QSignalSpy ticked(&tracker, &JobTracker::updated);
        QVERIFY(ticked.wait(3000));  // a rate and the time left
        panel.grab().save(shots + QStringLiteral("/transfers-moving.png"));
    }
    // Cancel: nothing more comes, what is here stays, and it cannot be resumed from the row.
    QVERIFY(panel.cancel(0));
    QVERIFY(streamer->isStopped());
    QCOMPARE(streamer->fetching(), 0);
    QVERIFY(panel.details(0).endsWith(QStringLiteral("cancelled")));
    QVERIFY(!pause->isEnabled());
    QVERIFY(!panel.cancel(0));
    QVERIFY(tracker.summary().isEmpty());
    viewer.reset();
}

void tst_ReadingRoom::prefetchingStudiesForLater()
{
    // The CR was never opened: prefetched from the browser, it lands in the cache without a viewer.
    const QString cr = DemoArchive::studyUid(DemoStudy::ChestCr);
    QVERIFY(!m_ws->findStudy(cr));
    StudyBrowser *b = m_window->browser();
    QSignalSpy finished(b, &StudyBrowser::searchFinished);
    b->patientNameField()->setText(QStringLiteral("DEMO*"));
    b->search();
    QVERIFY(finished.wait(20000));
    const int row = rowOf(cr);
    QVERIFY(row >= 0);
    QCOMPARE(b->table()->model()->index(row, FoundStudyModel::Cached).data().toString(), QStringLiteral("—"));
    const int rowsBefore = m_window->transfersPanel()->count();
    QSignalSpy prefetch(b, &StudyBrowser::prefetchRequested);
    b->table()->selectRow(row);
    b->prefetchSelected();
    QCOMPARE(prefetch.count(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(m_ws->findStudy(cr) && m_ws->findStudy(cr)->instanceCount == 2, 20000);
    QTRY_COMPARE(m_window->transfersPanel()->count(), rowsBefore + 1);  // its row comes once the stream has listed the study
    QTRY_COMPARE(b->table()->model()->index(rowOf(cr), FoundStudyModel::Cached).data().toString(), QStringLiteral("all"));
    QCOMPARE(m_window->currentViewer() ? m_window->currentViewer()->study().identity.studyInstanceUid : QString(), m_ctUid);  // nothing opened
}

void tst_ReadingRoom::theStudyComesInBulkBesideTheView()
{
    // Into a fresh cache: the slice in view and two either side of it with requests of their own, and beside
    // them the whole study as `spectrum-cli fetch` brings it (one WADO-RS answer) — far fewer requests than
    // images, every image arrives all the same, and none is kept twice.
    QTemporaryDir dir;
    Result<std::unique_ptr<FileStore>> opened = FileStore::open(dir.path(), 0);
    QVERIFY(opened.isOk());
    std::shared_ptr<FileStore> cache(opened.takeValue());
    StoreRegistry registry(m_ws->storeConfig(), cache);
    StudyStreamer ct(&registry, cache.get(), QStringLiteral("pacs"), m_ctUid);
    QSignalSpy finished(&ct, &StudyStreamer::finished);
    QSignalSpy failed(&ct, &StudyStreamer::failed);
    QSignalSpy fetched(&registry, &StoreRegistry::instanceFetched);
    // The bulk lane seen at work as instances land (on loopback it may come and go between two polls).
    bool sawBulk = false;
    connect(&registry, &StoreRegistry::instanceFetched, &ct, [&] { sawBulk = sawBulk || ct.isBulkRunning(); });
    ct.start();
    QVERIFY(finished.wait(30000));
    QVERIFY(sawBulk);
    QSet<QString> once;
    for (const QList<QVariant> &f : fetched)
        QVERIFY2(!once.contains(f.first().toString()), "an instance was kept twice");
    for (const QList<QVariant> &f : fetched)
        once.insert(f.first().toString());
    QCOMPARE(once.size(), ct.total());
    QCOMPARE(ct.cachedCount(), ct.total());
    QCOMPARE(ct.failedCount(), 0);
    // Whichever came first, the whole study or its listing, the other is no failure (a listing cancelled because
    // the bulk answer listed the study was once taken for one, and a prior opened beside was closed again).
    QCOMPARE(failed.count(), 0);
    QVERIFY(ct.isListed());
    QVERIFY2(ct.requestsMade() <= 10, qPrintable(QStringLiteral("%1 requests for %2 images").arg(ct.requestsMade()).arg(ct.total())));
    QCOMPARE(cache->usage().blobs, qint64(ct.total()));
}

// The promise of one path from the wire to the screen: an image that arrives is decoded once — by the decoder that
// shows it while it arrives, from the fetched bytes while they are still in memory, or from the cache when it is
// first scrolled to — and filtered once; never read back and decoded again to show what just arrived. The
// workstation opens the CT from the archive behind a 40 Mbit/s link, filters on, and is scrolled through every
// slice; every instance was then decoded exactly once and filtered exactly once.
void tst_ReadingRoom::eachArrivingImageIsDecodedAndFilteredOnce()
{
    LinkEmulator link(m_orthanc.httpPort(), 4, 512, 40);
    QVERIFY(link.waitUntilListening());
    QTemporaryDir dir;
    std::unique_ptr<Workstation> started = workstationWithArchive(dir, QStringLiteral("archive"), QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(link.port()));
    QVERIFY(started);
    Workstation &ws = *started;
    MainWindow window(&ws);
    window.resize(1000, 700);
    window.show();
    Result<FilterChain> chain = window.filterPanel()->registry().makeChain({QStringLiteral("invert")});
    QVERIFY(chain.isOk());

    // The status bar's line, as the reader sees it whenever the tracker tells of a change.
    auto statusLine = [&window] {
        QStringList texts;
        for (QLabel *l : window.statusBar()->findChildren<QLabel *>())
            texts << l->text();
        return texts.join(QStringLiteral(" | "));
    };
    QStringList statusSeen;
    const QMetaObject::Connection seeing = connect(ws.jobs(), &JobTracker::updated, this, [&] { statusSeen << statusLine(); });
    const auto stopSeeing = qScopeGuard([seeing] { QObject::disconnect(seeing); });  // before the window goes
    resetDecodeCounts();
    // The filters are chosen while the study still arrives — at the worst moment: the last bytes of the slice in
    // view are in and its decoder is finishing (it once went, and the image was decoded again from the cache).
    bool atLastByte = false;
    connect(&window, &MainWindow::studyOpened, this, [&](StudyViewer *v) {
        connect(v->streamer(), &StudyStreamer::instanceUpdated, v, [&, v](const InstanceUpdate &u) {
            const StudySummary &first = v->streamer()->firstLook();
            const QString &key = u.key;
            if (atLastByte || u.step != InstanceUpdate::Arriving || !u.arrival.isComplete() || first.series.isEmpty() || first.series[0].instances.isEmpty()
                || first.series[0].instances[0].key != key)
                return;
            atLastByte = true;
            v->settings()->setFilters(chain.value(), QStringLiteral("invert"));
        });
    });
    StudyViewer *viewer = openFrom(window, QStringLiteral("archive"), m_ctUid);
    QVERIFY(viewer);
    // The viewer opens on the first look, before its image is fetched (StudyStreamer::firstLookReady): its last
    // bytes come after.
    QTRY_VERIFY_WITH_TIMEOUT(atLastByte, 20000);
    if (const QString shots = qEnvironmentVariable("SPECTRUM_TEST_SHOTS"); !shots.isEmpty()) {
        QTRY_VERIFY_WITH_TIMEOUT(window.transfersPanel()->count() == 1, 20000);  // listed: its row, and the status line
        window.grab().save(shots + QStringLiteral("/window-arriving.png"));
    }
    QTRY_VERIFY_WITH_TIMEOUT(viewer->streamer()->isListed(), 20000);
    // Through every slice, each shown whole (filtered), while the rest arrives.
    for (int i = 0; i < viewer->sliceCount(); ++i) {
        viewer->showSlice(i);
        const QString sop = viewer->study().series[0].instances[i].sopInstanceUid;
        QTRY_VERIFY_WITH_TIMEOUT(viewer->viewport()->layers()->completeness() >= 1.0 && viewer->viewport()->image().info.identity.sopInstanceUid == sop
                                     && viewer->viewport()->isFiltered(),
                                 20000);
    }
    QTRY_VERIFY_WITH_TIMEOUT(viewer->streamer()->isComplete(), 30000);
    QCOMPARE(viewer->streamer()->cachedCount(), viewer->streamer()->total());  // with the derived series sent back before
    // The status bar said the study was arriving, and says nothing of it once it is all here.
    QVERIFY2(std::any_of(statusSeen.begin(), statusSeen.end(), [](const QString &t) { return t.contains(QStringLiteral("1 transfer(s) · ")); }),
             qPrintable(statusSeen.join(QLatin1Char('\n'))));
    QTRY_VERIFY2(!statusLine().contains(QStringLiteral("transfer(s)")), qPrintable(statusLine()));
    const DecodeCounts counts = decodeCounts();
    for (const InstanceRef &ref : viewer->study().series[0].instances) {
        QVERIFY2(counts.decoded.value(ref.sopInstanceUid) == 1,
                 qPrintable(QStringLiteral("instance %1 decoded %2 times").arg(ref.instanceNumber).arg(counts.decoded.value(ref.sopInstanceUid))));
        QVERIFY2(counts.filtered.value(ref.sopInstanceUid) == 1,
                 qPrintable(QStringLiteral("instance %1 filtered %2 times").arg(ref.instanceNumber).arg(counts.filtered.value(ref.sopInstanceUid))));
    }
}

void tst_ReadingRoom::mprOfAStudyStillArrivingFillsInAsItComes_data()
{
    QTest::addColumn<int>("rttMs");
    QTest::addColumn<bool>("dimse");
    QTest::newRow("loopback") << 0 << false;
    QTest::newRow("100 ms round trips") << 100 << false;
    // Over DIMSE the instances come as files (C-GET), not bytes: MPR reads them from the cache.
    QTest::newRow("DIMSE") << 0 << true;
}

void tst_ReadingRoom::mprOfAStudyStillArrivingFillsInAsItComes()
{
    // The study opened from the archive into an empty cache, MPR asked for at once, on its first look: laid out
    // from the streamer's slices as they come, and for good once the archive has listed the study — whichever
    // comes first (on loopback the slices, usually; over 100 ms round trips the listing, which takes as many round
    // trips as the first look). Once in, every coronal pixel is the HU of the slice it lies in, as uploaded.
    QFETCH(int, rttMs);
    QFETCH(bool, dimse);
    std::optional<LinkEmulator> link;
    if (rttMs > 0) {
        link.emplace(m_orthanc.httpPort(), rttMs, 512, 100);
        QVERIFY(link->waitUntilListening());
    }
    if (dimse) {
        // Orthanc answers C-FIND only to AE titles it knows: ours, made known as a PACS's administrator would.
        int status = 0;
        m_orthanc.rest("PUT", QStringLiteral("/modalities/spectrum"),
                       QStringLiteral(R"({"AET":"%1","Host":"127.0.0.1","Port":104})").arg(StoreConfigFile().workstation.aeTitle).toUtf8(), &status);
        QCOMPARE(status, 200);
    }
    const auto unknownAgain = qScopeGuard([&] {  // the suite's other tests meet Orthanc as they found it
        int status = 0;
        if (dimse)
            m_orthanc.rest("DELETE", QStringLiteral("/modalities/spectrum"), QByteArray(), &status);
    });
    QTemporaryDir dir;
    std::unique_ptr<Workstation> started = workstationWithArchive(
        dir, dimse ? dimseStore(QStringLiteral("archive"), m_orthanc.dicomPort(), m_orthanc.aeTitle())
                   : dicomWebStore(QStringLiteral("archive"), link ? QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(link->port()) : m_orthanc.dicomWebUrl()));
    QVERIFY(started);
    MainWindow window(started.get());
    window.hangingProtocols()->setProtocols(ProtocolSet());
    window.resize(1400, 700);
    window.show();
    StudyViewer *viewer = openFrom(window, QStringLiteral("archive"), m_ctUid);
    QVERIFY(viewer);
    int inBeforeListing = 0;  // instances the stream put in the cache before the listing (bytes or files alike)
    connect(viewer->streamer(), &StudyStreamer::instanceUpdated, this, [&](const InstanceUpdate &u) {
        inBeforeListing += u.step == InstanceUpdate::Stored && !viewer->streamer()->isListed() ? 1 : 0;
    });
    const bool onFirstLook = !viewer->streamer()->isListed();  // the listing waits 150 ms for the stream: it is
    QVERIFY(viewer->setMprShown(true));
    MprVolume *volume = viewer->mprView()->mprVolume();
    QCOMPARE(volume->isArriving(), onFirstLook);
    bool cameBeforeListing = false;
    auto note = [&] { cameBeforeListing = cameBeforeListing || (!viewer->streamer()->isListed() && (volume->volume() || volume->waitingFor().contains(QLatin1String("come so far")))); };
    connect(volume, &MprVolume::waiting, this, note);
    connect(volume, &MprVolume::ready, this, note);
    note();
    QTRY_VERIFY_WITH_TIMEOUT(viewer->streamer()->isListed(), 20000);
    qInfo("%s (%d instance(s) in before the listing)", cameBeforeListing ? "slices reached the volume before the listing" : "the listing came before any slice",
          inBeforeListing);
    if (rttMs == 0)  // on loopback the stream is well ahead of the listing (150 ms at least): it must reach MPR
        QVERIFY2(onFirstLook && cameBeforeListing && inBeforeListing > 0, "no slice reached the volume before the listing");
    // The listing keeps MPR (the reader asked for it) and lays it out for good.
    QVERIFY(viewer->isMprShown());
    MprView *mpr = viewer->mprView();
    QTRY_VERIFY_WITH_TIMEOUT(mpr->mprVolume()->isComplete() && mpr->cutsPending() == 0 && mpr->viewport(1)->hasImage(), 30000);
    QVERIFY(!mpr->mprVolume()->isArriving());
    const std::shared_ptr<Volume> v = mpr->mprVolume()->volume();
    QCOMPARE(v->slotCount(), 24);
    QCOMPARE(v->filledSlots(), 24);
    ImageViewport *coronal = mpr->viewport(1);
    QTRY_COMPARE(coronal->layers()->completeness(), 1.0);
    const ImageInfo &info = coronal->image().info;
    QCOMPARE(info.rows, 24);
    int compared = 0;
    for (int y = 0; y < info.rows; ++y) {
        const std::optional<PatientPoint> p = patientPointAt(info, QPointF(260.5, y + 0.5));
        QVERIFY(p);
        for (const DemoInstance &i : std::as_const(m_bySop)) {
            const InstanceRef ref = InstanceRef::of(i.identity.sopInstanceUid, i.identity, 0);
            if (i.identity.seriesInstanceUid != mpr->mprVolume()->series().seriesInstanceUid || !ref.hasPlace || std::abs(ref.position[2] - (*p)[2]) > 0.01)
                continue;
            Result<DecodedImage> apart = decodeDicom(ByteView(i.bytes));
            QVERIFY(apart.isOk());
            const std::optional<QPointF> px = imagePointOf(apart.value().info, *p);
            QVERIFY(px);
            QCOMPARE(modalityValueAt(coronal->image(), 0, QPoint(260, y)), modalityValueAt(apart.value(), 0, QPoint(int(px->x()), int(px->y()))));
            ++compared;
        }
    }
    QCOMPARE(compared, 24);
}

void tst_ReadingRoom::aProtocolOpensMprOnTheFirstLookAndKeepsIt()
{
    // A protocol reading CT in MPR: the study from the archive opens in MPR on its first look (the volume laid out
    // as the study arrives); the listing applies the whole protocol and keeps that MPR, complete once all is in.
    QTemporaryDir dir;
    std::unique_ptr<Workstation> started = workstationWithArchive(dir, QStringLiteral("archive"), m_orthanc.dicomWebUrl());
    QVERIFY(started);
    MainWindow window(started.get());
    const QByteArray json = R"({"format": "spectrum-hanging-protocols/1", "protocols": [{"name": "CT MPR", "match": {"modality": ["CT"]},
                                  "layout": [1, 1], "mpr": true, "panes": [{"study": "current", "series": {"modality": "CT"}}]}]})";
    Result<ProtocolSet> set = ProtocolSet::fromJson(json);
    QVERIFY2(set.isOk(), qPrintable(set.isOk() ? QString() : set.error().toString()));
    window.hangingProtocols()->setProtocols(set.value());
    window.resize(1400, 700);
    window.show();
    StudyViewer *viewer = openFrom(window, QStringLiteral("archive"), m_ctUid);
    QVERIFY(viewer);
    if (viewer->streamer()->isListed())
        QSKIP("the study was listed before its first look opened it (not this test's case)");
    QVERIFY(viewer->isMprShown());
    QVERIFY(!viewer->isMprByReader());
    MprVolume *volume = viewer->mprView()->mprVolume();
    QVERIFY(volume->isArriving());
    QTRY_VERIFY_WITH_TIMEOUT(viewer->streamer()->isListed(), 20000);
    QVERIFY(viewer->isMprShown());
    QCOMPARE(viewer->mprView()->mprVolume(), volume);  // kept by the protocol applied on the listing
    QTRY_VERIFY_WITH_TIMEOUT(volume->isComplete() && viewer->mprView()->cutsPending() == 0, 30000);
    QCOMPARE(volume->volume()->filledSlots(), 24);
}

void tst_ReadingRoom::aStudyKeptInS3OpensLikeAnyOther()
{
    // The CT sent to an S3 store (versitygw on loopback) through the registry, then found in the browser and opened
    // with a double-click as from any archive (an S3 store was never opened from: it was not ranked among the
    // places to fetch from): every slice on screen is the uploaded instance's pixels.
    S3Server s3;
    QVERIFY2(s3.start(), "the S3 test server did not start (scripts/install-deps.sh builds it)");
    {
        S3Client client(s3.endpoint(QStringLiteral("reading-room")));
        QVERIFY(runSync(client.createBucket()).isOk());
    }
    qputenv("SPECTRUM_TEST_S3_SECRET", S3Server::secretKey().toUtf8());
    StoreConfig objects(QStringLiteral("objects"), S3Settings());
    objects.as<S3Settings>().url = QStringLiteral("http://127.0.0.1:%1").arg(s3.port());
    objects.as<S3Settings>().bucket = QStringLiteral("reading-room");
    objects.as<S3Settings>().prefix = QStringLiteral("studies/");
    objects.as<S3Settings>().accessKey = S3Server::accessKey();
    objects.as<S3Settings>().secretKey.source = Secret::Source::Env;
    objects.as<S3Settings>().secretKey.value = QStringLiteral("SPECTRUM_TEST_S3_SECRET");
    QTemporaryDir dir;
    std::unique_ptr<Workstation> started = workstationWithArchive(dir, objects);
    QVERIFY(started);
    QStringList files;
    for (const DemoInstance &i : std::as_const(m_bySop)) {
        if (i.identity.studyInstanceUid != m_ctUid)
            continue;
        files << dir.filePath(i.identity.sopInstanceUid + QStringLiteral(".dcm"));
        QVERIFY(writeFile(files.last(), i.bytes));
    }
    QCOMPARE(files.size(), 24);
    const Result<ExportSummary> sent = runSync(started->registry()->exportFiles(QStringLiteral("objects"), files));
    QVERIFY2(sent.isOk() && sent.value().stored.size() == 24, qPrintable(sent.isOk() ? QString::number(sent.value().failed.size()) : sent.error().toString()));

    MainWindow window(started.get());
    window.hangingProtocols()->setProtocols(ProtocolSet());
    window.resize(1000, 700);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    // Found in the browser by the patient's name and double-clicked, as a reader opens it.
    QString family;
    for (const DemoInstance &i : std::as_const(m_bySop))
        family = i.identity.studyInstanceUid == m_ctUid ? i.identity.patientName.section(QLatin1Char('^'), 0, 0) : family;
    StudyViewer *viewer = openFromBrowser(&window, family.toLower());
    QVERIFY(viewer && viewer->streamer());
    QTRY_VERIFY_WITH_TIMEOUT(viewer->streamer()->isListed(), 20000);
    QCOMPARE(viewer->sliceCount(), 24);
    for (int index : {0, 12, 23}) {
        viewer->showSlice(index);
        const QString sop = viewer->study().series[0].instances[index].sopInstanceUid;
        QTRY_VERIFY_WITH_TIMEOUT(viewer->viewport()->image().info.identity.sopInstanceUid == sop && viewer->viewport()->layers()->completeness() == 1.0, 20000);
        Result<DecodedImage> original = decodeDicom(ByteView(m_bySop.value(sop).bytes));
        QVERIFY(original.isOk());
        QCOMPARE(viewer->viewport()->renderedImage(), toQImage(renderFrame(original.value(), 0, viewer->viewport()->window())));
    }
}

QTEST_MAIN(tst_ReadingRoom)
#include "tst_readingroom.moc"
