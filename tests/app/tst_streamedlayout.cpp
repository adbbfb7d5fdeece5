// SPDX-License-Identifier: Apache-2.0
// A large study read while it streams in, before the archive has listed it (issue 42): the study is laid out from
// what has come (StudyStreamer::laidOut) and the reader scrolls that — not one slice for the seconds a 10,000-slice
// listing takes. Reached as a reader does: found in the browser, opened with a double-click (on the first look's
// slice, the middle), Home pressed; what is painted is checked (the overlay says the count is "so far", the slice
// shown is the one asked for), and the places stay put as the study grows and is finally listed.
// The study is 1,500 tiny CT slices in Orthanc behind a link of a few Mbit/s: it streams for a second or two, one
// instance every millisecond or so — quick enough that the archive is not asked to list it beside the stream.

#include "readingroomsuite.h"
#include "guisupport.h"
#include "tinystudy.h"

#include <QListWidget>
#include <QStatusBar>

using namespace spectrum;
using namespace spectrum::test;

namespace {
constexpr int kSlices = 1500;
}

class tst_StreamedLayout : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void aStudyStreamingInIsReadAsItFills();

private:
    QTemporaryDir m_dir;
    OrthancProcess m_orthanc;
    QString m_studyUid;
};

void tst_StreamedLayout::initTestCase()
{
    QVERIFY(m_orthanc.start());
    const QString files = m_dir.filePath(QStringLiteral("files"));
    QVERIFY(QDir().mkpath(files));
    QCOMPARE(writeTinyStudy(files, kSlices, &m_studyUid).size(), kSlices);
    QElapsedTimer clock;
    clock.start();
    for (const QString &file : QDir(files).entryList(QDir::Files, QDir::Name))
        QVERIFY2(!m_orthanc.upload(readFile(QDir(files).filePath(file))).isEmpty(), qPrintable(file));
    qInfo("%d instances into Orthanc in %lld ms", kSlices, clock.elapsed());
}

void tst_StreamedLayout::aStudyStreamingInIsReadAsItFills()
{
    LinkEmulator link(m_orthanc.httpPort(), 2, 256, 6);
    QVERIFY(link.waitUntilListening());
    QTemporaryDir dir;
    std::unique_ptr<Workstation> ws = workstationWithArchive(dir, QStringLiteral("archive"), QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(link.port()));
    QVERIFY(ws);
    MainWindow window(ws.get());
    window.resize(1000, 700);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    StudyViewer *viewer = openFromBrowser(&window, QStringLiteral("LARGE*"));
    QVERIFY(viewer);
    StudyStreamer *streamer = viewer->streamer();
    QVERIFY(streamer);
    ImageViewport *vp = viewer->viewport();

    // Each layout made as the study arrives, as the reader then sees it.
    struct Seen
    {
        int slices = 0, arriving = 0;
        bool ordered = true, partial = false;
        QString overlay, status, transfer, seriesRow;
    };
    QList<Seen> seen;
    QString homeKey;             // the slice Home went to, on the first layout of more than one slice
    bool homeShownEarly = false;  // and it was painted before the study was listed
    connect(streamer, &StudyStreamer::laidOut, viewer, [&] {
        const StudySummary &study = viewer->study();
        Seen s;
        s.slices = viewer->sliceCount();
        s.arriving = study.arriving;
        s.partial = study.partial;
        for (const SeriesSummary &series : study.series)
            for (int i = 1; i < series.instances.size(); ++i)
                s.ordered = s.ordered && series.instances[i - 1].instanceNumber < series.instances[i].instanceNumber;
        vp->grab();  // the overlay as painted
        for (const PlacedText &t : vp->overlayPlacement().texts)
            if (t.text.startsWith(QStringLiteral("Im ")))
                s.overlay = t.text;
        s.status = window.statusBar()->currentMessage();
        if (auto *list = viewer->findChild<QListWidget *>(); list && list->count() > 0)
            s.seriesRow = list->item(0)->text();
        if (window.transfersPanel()->count() == 1)
            s.transfer = window.transfersPanel()->details(0);
        seen << s;
        if (homeKey.isEmpty() && s.slices > 1) {
            QTest::keyClick(vp, Qt::Key_Home);  // the reader goes to the first slice (the stack opened in its middle)
            homeKey = study.series[viewer->seriesIndex()].instances[viewer->sliceIndex()].key;
        }
    });
    connect(viewer, &StudyViewer::imageShown, viewer, [&] {
        if (!homeKey.isEmpty() && vp->image().info.identity.sopInstanceUid == homeKey && !streamer->isListed() && !homeShownEarly) {
            homeShownEarly = true;
            if (const QString shots = qEnvironmentVariable("SPECTRUM_TEST_SHOTS"); !shots.isEmpty())
                window.grab().save(shots + QStringLiteral("/window-laid-out-as-it-streams.png"));  // to look at
        }
    });

    QSignalSpy finished(streamer, &StudyStreamer::finished);
    QVERIFY(finished.wait(60000));
    QVERIFY2(!seen.isEmpty(), "the study was never laid out while it arrived");
    QVERIFY2(!homeKey.isEmpty(), "no layout of more than one slice came before the study was all here");
    QVERIFY(homeKey != streamer->firstLook().series.first().instances.first().key);  // one the stream brought
    QVERIFY2(homeShownEarly, "the slice Home went to was not painted before the study was listed");
    int before = 0;
    for (const Seen &s : std::as_const(seen)) {
        QVERIFY2(s.slices >= before, "a layout lost slices");  // it only grows
        before = s.slices;
        QCOMPARE(s.slices + s.arriving, kSlices);  // the counts add up to what the archive said the study holds
        QVERIFY(s.ordered);
        // Painted: the count is said to be so far, and how much more comes.
        QVERIFY(s.partial);
        QVERIFY2(s.seriesRow.endsWith(QStringLiteral("%1 image(s) so far").arg(s.slices)), qPrintable(s.seriesRow));  // the series list says so too
        const QString soFar = s.arriving > 0 ? QStringLiteral("/%1 so far (%2 more of the study arriving)").arg(s.slices).arg(s.arriving)
                                             : QStringLiteral("/%1 so far").arg(s.slices);
        QVERIFY2(s.overlay.contains(soFar), qPrintable(s.overlay));
        QVERIFY2(s.status.contains(s.arriving > 0 ? QStringLiteral("%1 more arriving").arg(s.arriving) : QStringLiteral("more arriving")), qPrintable(s.status));
        // Its transfer row from the first layout on, counting towards the whole study.
        QVERIFY2(s.transfer.contains(QStringLiteral(" of %1 images").arg(kSlices)), qPrintable(s.transfer));
    }

    // All here and listed from the stream itself: the whole stack, the count no longer "so far", and the pane still
    // on the slice the reader went to (its place is the instance, not a number that moved as the study grew).
    QCOMPARE(viewer->sliceCount(), kSlices);
    QCOMPARE(viewer->study().arriving, 0);
    QVERIFY(!viewer->study().partial);
    QTRY_VERIFY(viewer->findChild<QListWidget *>()->item(0)->text().endsWith(QStringLiteral("%1 image(s)").arg(kSlices)));
    QCOMPARE(streamer->cachedCount(), kSlices);
    QCOMPARE(viewer->study().series[viewer->seriesIndex()].instances[viewer->sliceIndex()].key, homeKey);
    QTRY_COMPARE(vp->image().info.identity.sopInstanceUid, homeKey);
    vp->grab();
    QString overlay;
    for (const PlacedText &t : vp->overlayPlacement().texts)
        if (t.text.startsWith(QStringLiteral("Im ")))
            overlay = t.text;
    QVERIFY2(overlay.startsWith(QStringLiteral("Im %1/%2").arg(viewer->sliceIndex() + 1).arg(kSlices)) && !overlay.contains(QStringLiteral("so far")),
             qPrintable(overlay));
    // The stack scrolls on from there, through what came after.
    QTest::keyClick(vp, Qt::Key_End);
    QTRY_COMPARE(viewer->sliceIndex(), kSlices - 1);
    QTRY_COMPARE(vp->image().info.identity.sopInstanceUid, viewer->study().series[viewer->seriesIndex()].instances[kSlices - 1].key);
}

QTEST_MAIN(tst_StreamedLayout)
#include "tst_streamedlayout.moc"
