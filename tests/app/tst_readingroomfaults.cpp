// SPDX-License-Identifier: Apache-2.0
// The reading room when an archive fails it: an archive dying mid-study, a study closed while it arrives and
// opened again, a failed image that says so and comes back with the archive; and the stores dialog adding, testing
// and removing archives.

#include "viewer/filterpanel.h"
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
#include "spectrum/stores/reading/studystreamer.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/transfer/dimse.h"
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
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;
using namespace spectrum::test;

namespace {
/// An nginx server block on `port` that passes everything on to `upstream`, unbuffered.
QString proxyTo(quint16 port, quint16 upstream)
{
    return QStringLiteral("server { listen 127.0.0.1:%1; location / { proxy_buffering off; proxy_pass http://127.0.0.1:%2; } }\n")
        .arg(port).arg(upstream);
}
} // namespace

class tst_ReadingRoomFaults : public ReadingRoomSuite
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { ReadingRoomSuite::initTestCase(); }
    void cleanupTestCase() { ReadingRoomSuite::cleanupTestCase(); }
    void storesAreAddedTestedAndRemovedInTheDialog();
    void anArchiveDyingMidStudyLeavesNothingHalfShown();
    void closingAStudyWhileItArrivesAndOpeningItAgain();
    void aFailedImageSaysSoAndComesBackWithTheArchive();
};

void tst_ReadingRoomFaults::storesAreAddedTestedAndRemovedInTheDialog()
{
    const StoreConfigFile before = m_ws->storeConfig();
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("stores.json"));
    Result<StoreConfigFile> file = StoreConfigFile::load(path);  // none yet: an empty configuration there
    QVERIFY(file.isOk());
    m_ws->setStoreConfig(file.value());

    StoresDialog dialog(m_ws.get());
    QSignalSpy tested(&dialog, &StoresDialog::tested);
    dialog.nameField()->setText(QStringLiteral("archive"));
    dialog.kindField()->setCurrentIndex(dialog.kindField()->findData(int(StoreKind::DicomWeb)));
    dialog.urlField()->setText(m_orthanc.dicomWebUrl());
    dialog.authField()->setCurrentIndex(dialog.authField()->findData(QStringLiteral("basic")));
    dialog.userField()->setText(QStringLiteral("reader"));
    dialog.secretField()->setText(QStringLiteral("s3cret-Pa55"));
    dialog.testStore();
    QVERIFY(tested.wait(20000));
    QVERIFY2(tested.last().at(0).toBool(), qPrintable(tested.last().at(1).toString()));
    dialog.saveStore();
    QVERIFY2(dialog.status().contains(QStringLiteral("saved")), qPrintable(dialog.status()));

    // On disk: the store, not the password; readable by the owner only. The workstation uses it at once.
    const QByteArray saved = readFile(path);
    QVERIFY(saved.contains("archive"));
    QVERIFY(!saved.contains("s3cret-Pa55"));
    QCOMPARE(QFile(path).permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther), QFileDevice::Permissions());
    QVERIFY(m_ws->registry()->config().find(QStringLiteral("archive")));
    Result<StoreConfigFile> reloaded = StoreConfigFile::load(path);
    QVERIFY(reloaded.isOk());
    QCOMPARE(reloaded.value().reveal(reloaded.value().find(QStringLiteral("archive"))->as<DicomWebSettings>().password).value(), QStringLiteral("s3cret-Pa55"));

    // A store that does not answer: a clear failure, nothing saved.
    dialog.newStore();
    dialog.nameField()->setText(QStringLiteral("nowhere"));
    dialog.urlField()->setText(QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(freePort()));
    dialog.testStore();
    QVERIFY(tested.wait(30000));
    QVERIFY(!tested.last().at(0).toBool());
    QVERIFY(dialog.status().startsWith(QStringLiteral("⚠ nowhere:")));
    QVERIFY(!m_ws->registry()->config().find(QStringLiteral("nowhere")));

    // A DIMSE archive over DICOM TLS (a Storage SCP with the hospital's certificate): tested with the hospital's
    // CA it answers; without it (the system's CAs) the PACS cannot prove who it is. Saved with both.
    QVERIFY(makeTestCa(dir.path()));
    QVERIFY(makeTestCertificate(dir.path(), QStringLiteral("pacs"), QStringLiteral("IP:127.0.0.1")));
    StorageScp::Options tlsPacs;
    tlsPacs.aeTitle = QStringLiteral("TLSPACS");
    tlsPacs.port = freePort();
    tlsPacs.directory = dir.filePath(QStringLiteral("pacs-received"));
    tlsPacs.certificateFile = dir.filePath(QStringLiteral("pacs.pem"));
    tlsPacs.keyFile = dir.filePath(QStringLiteral("pacs.key"));
    tlsPacs.callers = {{m_ws->registry()->config().workstation.aeTitle, QStringLiteral("127.0.0.1")}};  // the workstation, as the PACS knows it
    StorageScp pacs(tlsPacs);
    QVERIFY(!pacs.start().isError());
    dialog.newStore();
    dialog.nameField()->setText(QStringLiteral("secure"));
    dialog.kindField()->setCurrentIndex(dialog.kindField()->findData(int(StoreKind::Dimse)));
    dialog.hostField()->setText(QStringLiteral("127.0.0.1"));
    dialog.portField()->setValue(tlsPacs.port);
    dialog.aeTitleField()->setText(tlsPacs.aeTitle);
    QVERIFY(!dialog.caFileField()->isEnabled());  // no TLS yet: no CA to give
    dialog.tlsField()->setChecked(true);
    QVERIFY(dialog.caFileField()->isEnabled());
    dialog.testStore();
    QVERIFY(tested.wait(30000));
    QVERIFY(!tested.last().at(0).toBool());
    dialog.caFileField()->setText(dir.filePath(QStringLiteral("ca.pem")));
    dialog.testStore();
    QVERIFY(tested.wait(30000));
    QVERIFY2(tested.last().at(0).toBool(), qPrintable(tested.last().at(1).toString()));
    dialog.saveStore();
    reloaded = StoreConfigFile::load(path);
    QVERIFY(reloaded.isOk() && reloaded.value().find(QStringLiteral("secure")));
    QVERIFY(reloaded.value().find(QStringLiteral("secure"))->as<DimseSettings>().tls);
    QCOMPARE(reloaded.value().find(QStringLiteral("secure"))->caFile(), dir.filePath(QStringLiteral("ca.pem")));
    dialog.removeStore();

    // Removed: gone from the file and from the workstation.
    dialog.nameField()->setText(QStringLiteral("archive"));
    dialog.removeStore();
    QVERIFY(!readFile(path).contains("archive"));
    QVERIFY(!m_ws->registry()->config().find(QStringLiteral("archive")));
    m_ws->setStoreConfig(before);
}

// The archive dies while the study streams in (its bulk fetch under way): what arrived whole is kept and shown,
// what was cut short is neither kept nor shown as whole; the pane says which image failed and why, the transfers
// panel says the study is not complete; when the archive is back, the rest arrives by itself.
void tst_ReadingRoomFaults::anArchiveDyingMidStudyLeavesNothingHalfShown()
{
    // The archive (nginx in front of Orthanc) behind a 16 Mbit/s link: the 12 MB study takes seconds, so it is
    // cut in the middle.
    LinkEmulator link(m_orthanc.httpPort(), 4, 512, 16);
    QVERIFY(link.waitUntilListening());
    NginxProcess nginx;
    const quint16 port = freePort();
    const QString servers = proxyTo(port, link.port());
    QVERIFY(nginx.start(servers, port));
    QTemporaryDir dir;
    std::unique_ptr<Workstation> started = workstationWithArchive(dir, QStringLiteral("dying"), QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(port));
    QVERIFY(started);
    Workstation &ws = *started;
    MainWindow window(&ws);
    window.resize(1000, 700);
    window.show();
    QSignalSpy opened(&window, &MainWindow::studyOpened);
    window.openRemoteStudy(QStringLiteral("dying"), m_ctUid);
    QVERIFY(opened.wait(20000));
    auto *viewer = opened.first().first().value<StudyViewer *>();
    StudyStreamer *streamer = viewer->streamer();
    QTRY_VERIFY_WITH_TIMEOUT(streamer->isListed() && streamer->cachedCount() >= 3, 20000);
    QVERIFY(streamer->isBulkRunning());
    QVERIFY(streamer->cachedCount() < streamer->total());
    nginx.stop();  // mid-stream

    // Some image fails, by a cause that may pass: tried again by itself; the study is not complete.
    QTRY_VERIFY_WITH_TIMEOUT(streamer->failedCount() > 0, 20000);
    QVERIFY(!streamer->isComplete());
    QTRY_VERIFY_WITH_TIMEOUT(!streamer->isBulkRunning(), 20000);  // the stream broke off
    QString failedKey;
    for (const InstanceRef &r : viewer->study().series[0].instances) {
        if (streamer->isFailed(r.key)) {
            failedKey = r.key;
            QVERIFY(StudyStreamer::isTransient(streamer->failure(r.key)));
        }
    }
    QVERIFY(!failedKey.isEmpty());
    TransfersPanel *transfers = window.transfersPanel();
    QTRY_VERIFY(transfers->count() == 1 && !transfers->details(0).endsWith(QStringLiteral("complete")));
    // Every instance kept is whole: byte for byte what the archive holds.
    for (const InstanceRef &r : viewer->study().series[0].instances) {
        if (!streamer->isCached(r.key))
            continue;
        const Result<ByteView> kept = runSync(ws.cache()->read(r.key));
        QVERIFY(kept.isOk());
        QVERIFY2(kept.value().toByteArray() == m_bySop.value(r.sopInstanceUid).bytes, qPrintable(r.key));
    }
    // The failed slice in view: no image, the reason, the Retry button.
    int failedIndex = -1;
    for (int i = 0; i < viewer->sliceCount(); ++i)
        failedIndex = viewer->study().series[0].instances[i].key == failedKey ? i : failedIndex;
    viewer->showSlice(failedIndex);
    ImageViewport *vp = viewer->viewport();
    QTRY_VERIFY(!vp->hasImage() && vp->message().contains(QStringLiteral("could not be fetched")));
    auto *retry = viewer->pane(0)->findChild<QPushButton *>(QStringLiteral("retryButton"));
    QVERIFY(retry && !retry->isHidden());

    // Back: the rest arrives by itself, the failed slice is shown whole.
    QVERIFY(nginx.start(servers, port));
    QTRY_COMPARE_WITH_TIMEOUT(streamer->cachedCount(), streamer->total(), 90000);
    QCOMPARE(streamer->failedCount(), 0);
    const QString sop = viewer->study().series[0].instances[failedIndex].sopInstanceUid;
    QTRY_VERIFY(vp->hasImage() && vp->layers()->completeness() >= 1.0 && vp->image().info.identity.sopInstanceUid == sop);
    QTRY_VERIFY(transfers->details(0).endsWith(QStringLiteral("complete")));
}

// A study closed while its slice in view is still arriving: nothing of it calls back into the closed viewer, and
// opened again, its slices show — nothing is left waiting on a decode the closed viewer never finished.
void tst_ReadingRoomFaults::closingAStudyWhileItArrivesAndOpeningItAgain()
{
    LinkEmulator link(m_orthanc.httpPort(), 10, 256, 8);  // 8 Mbit/s: a slice takes half a second
    QVERIFY(link.waitUntilListening());
    QTemporaryDir dir;
    std::unique_ptr<Workstation> started = workstationWithArchive(dir, QStringLiteral("slow"), QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(link.port()));
    QVERIFY(started);
    Workstation &ws = *started;
    MainWindow window(&ws);
    window.resize(1000, 700);
    window.show();
    QAction *close = nullptr;
    for (QAction *a : window.findChildren<QAction *>())
        close = a->text() == QStringLiteral("&Close study") ? a : close;
    QVERIFY(close);

    QSignalSpy opened(&window, &MainWindow::studyOpened);
    window.openRemoteStudy(QStringLiteral("slow"), m_ctUid);
    QVERIFY(opened.wait(20000));
    QPointer<StudyViewer> viewer = opened.first().first().value<StudyViewer *>();
    QSignalSpy preview(viewer.data(), &StudyViewer::previewShown);
    QVERIFY(preview.wait(20000));  // the slice in view is arriving
    QVERIFY(viewer->viewport()->layers()->completeness() < 1.0);
    close->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(viewer.isNull(), 10000);

    opened.clear();
    window.openRemoteStudy(QStringLiteral("slow"), m_ctUid);
    QVERIFY(opened.wait(20000));
    auto *again = opened.first().first().value<StudyViewer *>();
    QTRY_VERIFY_WITH_TIMEOUT(again->streamer()->isListed(), 20000);
    const QString sop = again->study().series[0].instances[again->sliceIndex()].sopInstanceUid;
    ImageViewport *vp = again->viewport();
    QTRY_VERIFY_WITH_TIMEOUT(vp->hasImage() && vp->layers()->completeness() >= 1.0 && vp->image().info.identity.sopInstanceUid == sop, 30000);
}

void tst_ReadingRoomFaults::aFailedImageSaysSoAndComesBackWithTheArchive()
{
    // nginx in front of Orthanc plays the archive: stopped, it is gone (connections refused); started again on the
    // same port, it is back.
    NginxProcess nginx;
    const quint16 port = freePort();
    const QString servers = proxyTo(port, m_orthanc.httpPort());
    QVERIFY(nginx.start(servers, port));
    QTemporaryDir dir;
    std::unique_ptr<Workstation> started = workstationWithArchive(dir, QStringLiteral("flaky"), QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(port));
    QVERIFY(started);
    Workstation &ws = *started;

    auto *streamer = new StudyStreamer(ws.registry(), ws.cache(), QStringLiteral("flaky"), m_ctUid);
    streamer->setParallel(1);
    streamer->setBulk(false);  // nothing fetched before the archive dies (the bulk lane would start beside the listing)
    std::unique_ptr<StudyViewer> viewer;
    connect(streamer, &StudyStreamer::listed, this, [&] {
        nginx.stop();  // the archive dies right after listing the study
        viewer = std::make_unique<StudyViewer>(ws.localStore(), ws.images(), streamer->study(), streamer);
        viewer->resize(800, 600);
        viewer->show();
    });
    QSignalSpy listed(streamer, &StudyStreamer::listed);
    streamer->start();
    QVERIFY(listed.wait(20000));
    viewer->showSlice(0);
    const InstanceRef first = viewer->study().series[0].instances[0];
    QVERIFY(!streamer->isCached(first.key));
    auto *retry = viewer->pane(0)->findChild<QPushButton *>(QStringLiteral("retryButton"));
    QVERIFY(retry);

    // The pane says the image failed, why, and when it is tried again; whose study it is stays on screen.
    QTRY_VERIFY_WITH_TIMEOUT(!retry->isHidden(), 20000);
    ImageViewport *vp = viewer->viewport();
    QVERIFY(!vp->hasImage());
    QVERIFY2(vp->message().contains(QStringLiteral("could not be fetched")) && vp->message().contains(QStringLiteral("Trying again")),
             qPrintable(vp->message()));
    QVERIFY(streamer->isFailed(first.key));
    QVERIFY(StudyStreamer::isTransient(streamer->failure(first.key)));
    QVERIFY(!streamer->isComplete());  // failures waiting to be retried are not an end
    QVERIFY(vp->layers()->overlay().topLeft.startsWith(DicomIdentity::displayName(viewer->study().identity.patientName)));
    QCOMPARE(vp->layers()->overlay().bottomLeft, QStringLiteral("Im 1/%1").arg(viewer->study().series[0].instances.size()));
    // As painted in a narrow pane: whose study it is, the name whole, nothing drawn over anything else.
    viewer->resize(640, 600);
    QTRY_VERIFY(vp->width() < 420);
    vp->grab();
    const OverlayPlacement &placed = vp->overlayPlacement();
    QVERIFY(!placed.texts.isEmpty());
    QVERIFY(placed.texts.first().text.startsWith(DicomIdentity::displayName(viewer->study().identity.patientName)));
    for (int a = 0; a < placed.texts.size(); ++a)
        for (int b = a + 1; b < placed.texts.size(); ++b)
            QVERIFY2(!placed.texts[a].rect.intersects(placed.texts[b].rect), qPrintable(QStringLiteral("'%1' over '%2'").arg(placed.texts[a].text, placed.texts[b].text)));

    // Back: the image arrives by itself, nobody pressed Retry; so does the rest of the study.
    QVERIFY(nginx.start(servers, port));
    QTRY_VERIFY_WITH_TIMEOUT(vp->hasImage() && vp->image().info.identity.sopInstanceUid == first.sopInstanceUid, 30000);
    QVERIFY(retry->isHidden());
    QTRY_COMPARE_WITH_TIMEOUT(streamer->cachedCount(), streamer->total(), 60000);
    QCOMPARE(streamer->failedCount(), 0);

    // The transfers panel's estimate never overflows, whatever the rate did.
    QCOMPARE(JobTracker::timeLeftText(-1), QString());
    QCOMPARE(JobTracker::timeLeftText(std::nan("")), QString());
    QCOMPARE(JobTracker::timeLeftText(40), QStringLiteral("about 40 s left"));
    QCOMPARE(JobTracker::timeLeftText(600), QStringLiteral("about 10 min left"));
    QCOMPARE(JobTracker::timeLeftText(3 * 3600), QStringLiteral("about 3 h left"));
    QCOMPARE(JobTracker::timeLeftText(1e300), QStringLiteral("more than two days left at this rate"));
    QCOMPARE(JobTracker::timeLeftText(std::numeric_limits<double>::infinity()), QStringLiteral("more than two days left at this rate"));
}

QTEST_MAIN(tst_ReadingRoomFaults)
#include "tst_readingroomfaults.moc"
