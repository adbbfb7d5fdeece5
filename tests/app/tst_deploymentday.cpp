// SPDX-License-Identifier: Apache-2.0
// Deployment day through its doors: what a hospital's IT admin sets up and a radiologist then meets — a PACS that
// offers only C-MOVE (Orthanc that refuses C-GET to this workstation, DCMTK's dcmqrscp with C-GET off), reached from
// the study browser (Enter on a study found) and from the command line (`spectrum-cli fetch`), with the PACS
// sending the study to the workstation's own Storage SCP.
#include "guisupport.h"
#include "readingroomsuite.h"
#include "browser/priorspanel.h"
#include "viewer/seriespane.h"
#include "browser/studybrowser.h"

#include "s3server.h"

#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "viewport/displayimage.h"
#include "spectrum/imaging/windowlevel.h"
#include "spectrum/transfer/s3client.h"
#include "spectrum/transfer/dimse.h"

#include <QDirIterator>
#include <QScopeGuard>
#include <sys/stat.h>
#include <QSysInfo>
#include <QTcpSocket>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTableView>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QSettings>

using namespace spectrum;
using namespace spectrum::test;

namespace {

ProcessResult cli(const QStringList &args, const QString &configPath, const QString &cacheDir)
{
    return runCli(args, {{QStringLiteral("SPECTRUM_CONFIG"), configPath}, {QStringLiteral("SPECTRUM_CACHE_DIR"), cacheDir}});
}

/// The workstation on `cache`, following the configuration at `config`, started — as a reader leaves it open;
/// null if it did not start.
std::unique_ptr<Workstation> openWorkstation(const QString &cache, const QString &config)
{
    Workstation::Options wo;
    wo.cacheDirectory = cache;
    wo.seedDemoWhenEmpty = false;
    wo.stores = StoreConfigFile::load(config).value();
    wo.storesFile = config;
    auto ws = std::make_unique<Workstation>(wo);
    QSignalSpy started(ws.get(), &Workstation::started);
    ws->start();
    return started.wait(20000) ? std::move(ws) : nullptr;
}

} // namespace

class tst_DeploymentDay : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase() { QSettings().clear(); }
    void aPacsThatOnlyMovesSendsTheStudyToTheWorkstation();
    void dcmqrscpWithoutCGetMovesToTheCommandLine();
    void aStudyOnlyInAFolderArchiveOpensFromTheBrowser();
    void aStudyOnlyInS3IsPrefetchedByTheCommandLine();
    void theCommandLineWorksWhileTheWorkstationRuns();
    void theStorageScpTakesOnlyWhomTheAdminNamed();
    void secretsAndImagesAreTheirOwnersAlone();
    void aHundredWorkstationsFromOneSystemConfiguration();
    void theCacheIsKeptFromTheCommandLine();
    void whatTheTrialHitIsSaidClearly();

private:
    QTemporaryDir m_dir;
    /// The CT written as files into a folder of the test's (their paths).
    QStringList ctFiles(const QString &folder) const;

    QList<DemoInstance> m_ct;  ///< the demo head CT, 12 slices
    QString m_ctUid;
};

void tst_DeploymentDay::initTestCase()
{
    qRegisterMetaType<spectrum::StudyViewer *>();
    QCoreApplication::setOrganizationName(QStringLiteral("SpectrumTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_deploymentday-%1").arg(QCoreApplication::applicationPid()));
    DemoOptions demo;
    demo.studies = {DemoStudy::HeadCt};
    demo.ctSlices = 12;
    QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) {
                 m_ct << i;
                 return Error();
             }).isError());
    m_ctUid = DemoArchive::studyUid(DemoStudy::HeadCt);
}

void tst_DeploymentDay::aPacsThatOnlyMovesSendsTheStudyToTheWorkstation()
{
    // Orthanc knows this workstation (SPECTRUM at its Storage SCP's port) and lets it find and move, never get.
    const quint16 scpPort = freePort();
    OrthancProcess orthanc;
    OrthancProcess::Options o;
    o.extra.insert(QStringLiteral("DicomModalities"),
                   QJsonObject{{QStringLiteral("spectrum"), QJsonObject{{QStringLiteral("AET"), QStringLiteral("SPECTRUM")},
                                                                         {QStringLiteral("Host"), QStringLiteral("127.0.0.1")},
                                                                         {QStringLiteral("Port"), scpPort},
                                                                         {QStringLiteral("AllowGet"), false},
                                                                         {QStringLiteral("AllowMove"), true},
                                                                         {QStringLiteral("AllowFind"), true}}}});
    o.extra.insert(QStringLiteral("DicomAlwaysAllowGet"), false);
    o.extra.insert(QStringLiteral("DicomAlwaysAllowMove"), false);
    QVERIFY2(orthanc.start(o), "Orthanc did not start");
    for (const DemoInstance &i : std::as_const(m_ct))
        QVERIFY(!orthanc.upload(i.bytes).isEmpty());

    // What the PACS offers: no C-GET to us.
    {
        DimseEndpoint ep;
        ep.host = QStringLiteral("127.0.0.1");
        ep.port = orthanc.dicomPort();
        ep.calledAeTitle = orthanc.aeTitle();
        ep.callingAeTitle = QStringLiteral("SPECTRUM");
        DimseClient client(ep);
        QTemporaryDir got;
        const Result<RetrieveCount> get = runSync(client.get(m_ctUid, {}, {}, got.path(), [](const ReceivedInstance &) { return Error(); }));
        QVERIFY2(!get.isOk() || get.value().completed == 0, "Orthanc still answers C-GET: the test would prove nothing");
    }

    // The workstation: the PACS configured to retrieve by C-MOVE, its Storage SCP listening where the PACS sends.
    StoreConfigFile config;
    StoreConfig pacs = dimseStore(QStringLiteral("pacs"), orthanc.dicomPort(), orthanc.aeTitle());
    pacs.as<DimseSettings>().retrieve = QStringLiteral("move");
    QVERIFY(!config.add(pacs).isError());
    config.workstation.aeTitle = QStringLiteral("SPECTRUM");
    config.workstation.storagePort = scpPort;
    QTemporaryDir dir;
    Workstation::Options wo;
    wo.cacheDirectory = dir.filePath(QStringLiteral("cache"));
    wo.seedDemoWhenEmpty = false;
    wo.stores = config;
    wo.storageAeTitle = QStringLiteral("SPECTRUM");
    wo.storagePort = scpPort;
    wo.prefetchPriors = false;
    Workstation ws(wo);
    QSignalSpy pushed(&ws, &Workstation::instanceReceived);
    QSignalSpy started(&ws, &Workstation::started);
    ws.start();
    QVERIFY(started.wait(20000));
    QTRY_VERIFY(ws.isListening());
    QCOMPARE(ws.listenAddress().address, QStringLiteral("127.0.0.1"));  // where the PACS reaches it, not every address
    MainWindow window(&ws);
    window.hangingProtocols()->setProtocols(ProtocolSet());
    window.resize(1200, 800);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));

    // Ctrl+F, the patient's name, Enter; ↓, Enter.
    QTest::keySequence(&window, QKeySequence::Find);
    auto *browser = window.findChild<StudyBrowser *>();
    QVERIFY(browser);
    QTRY_VERIFY(browser->patientNameField()->hasFocus());
    const QString family = m_ct.first().identity.patientName.section(QLatin1Char('^'), 0, 0);
    QTest::keyClicks(browser->patientNameField(), family.toLower());
    QTest::keyClick(browser->patientNameField(), Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(browser->table()->model()->rowCount() == 1, 20000);
    QTest::keyClick(browser->patientNameField(), Qt::Key_Down);
    QSignalSpy opened(&window, &MainWindow::studyOpened);
    QTest::keyClick(browser->table(), Qt::Key_Return);
    QVERIFY(opened.count() == 1 || opened.wait(30000));
    auto *viewer = opened.first().first().value<StudyViewer *>();
    QVERIFY(viewer && viewer->streamer());
    QTRY_VERIFY_WITH_TIMEOUT(viewer->streamer()->isComplete(), 60000);
    QCOMPARE(viewer->streamer()->cachedCount(), m_ct.size());
    QTRY_VERIFY(viewer->viewport()->hasImage());

    // What is on screen is the archive's slice, value for value.
    const DecodedImage &shown = viewer->viewport()->image();
    SeriesPane *pane = viewer->pane(0);
    const QString sop = viewer->study().series[pane->seriesIndex()].instances[pane->sliceIndex()].sopInstanceUid;
    const DemoInstance *source = nullptr;
    for (const DemoInstance &i : std::as_const(m_ct))
        source = i.identity.sopInstanceUid == sop ? &i : source;
    QVERIFY(source);
    Result<DecodedImage> original = decodeDicom(ByteView(source->bytes));
    QVERIFY(original.isOk());
    for (const QPoint at : {QPoint(10, 10), QPoint(shown.info.columns / 2, shown.info.rows / 2)})
        QCOMPARE(modalityValueAt(shown, 0, at), modalityValueAt(original.value(), 0, at));
    // The moved images went to the fetch, not to the pushes' count.
    QCOMPARE(pushed.count(), 0);

    // A workstation the PACS does not know (another AE title): the command line's fetch says what to add, and where.
    const quint16 otherPort = freePort();
    const QString strangerConfig = dir.filePath(QStringLiteral("stranger.json"));
    QVERIFY(writeFile(strangerConfig, QStringLiteral(R"({"version": 1, "workstation": {"aeTitle": "NOTKNOWN", "storagePort": %1},
        "stores": [{"name": "pacs", "kind": "dimse", "host": "127.0.0.1", "port": %2, "aeTitle": "%3", "retrieve": "move"}]})")
                                          .arg(otherPort).arg(orthanc.dicomPort()).arg(orthanc.aeTitle()).toUtf8()));
    const ProcessResult r = cli({QStringLiteral("fetch"), QStringLiteral("--store"), QStringLiteral("pacs"), m_ctUid}, strangerConfig, dir.filePath(QStringLiteral("stranger-cache")));
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("NOTKNOWN (this workstation, port " + QByteArray::number(otherPort) + ")") && r.err.contains("DICOM destinations"), r.err.constData());
}

void tst_DeploymentDay::dcmqrscpWithoutCGetMovesToTheCommandLine()
{
    // DCMTK's archive with C-GET off, knowing this workstation as SPECTRUMCLI at a port of its own.
    const quint16 qrPort = freePort(), scpPort = freePort();
    const QString db = m_dir.filePath(QStringLiteral("qrdb"));
    QDir().mkpath(db);
    const QString qrConfig = m_dir.filePath(QStringLiteral("dcmqrscp.cfg"));
    QVERIFY(writeFile(qrConfig, QStringLiteral("NetworkTCPPort = %1\nMaxPDUSize = 16384\nMaxAssociations = 16\n"
                                               "HostTable BEGIN\nspectrum = (SPECTRUMCLI, localhost, %2)\nHostTable END\n"
                                               "VendorTable BEGIN\nVendorTable END\n"
                                               "AETable BEGIN\nQRSCP %3 RW (1000, 1024mb) ANY\nAETable END\n")
                                    .arg(qrPort)
                                    .arg(scpPort)
                                    .arg(db)
                                    .toUtf8()));
    QProcess qr;
    qr.setProcessChannelMode(QProcess::MergedChannels);
    dieWithParent(qr);
    qr.start(QStringLiteral(DCMQRSCP_EXECUTABLE), {QStringLiteral("--disable-get"), QStringLiteral("-c"), qrConfig});
    QVERIFY(qr.waitForStarted());
    auto stop = qScopeGuard([&] { stopProcess(qr, 5000); });
    DimseEndpoint ep;
    ep.host = QStringLiteral("127.0.0.1");
    ep.port = qrPort;
    ep.calledAeTitle = QStringLiteral("QRSCP");
    ep.callingAeTitle = QStringLiteral("SPECTRUMCLI");
    DimseClient client(ep);
    QVERIFY(QTest::qWaitFor([&] { return !runSync(client.echo()).error().isError(); }, 10000));
    QStringList files;
    for (const DemoInstance &i : std::as_const(m_ct)) {
        files << m_dir.filePath(i.identity.sopInstanceUid + QStringLiteral(".dcm"));
        QVERIFY(writeFile(files.last(), i.bytes));
    }
    const Result<StoreCount> stored = runSync(client.store(files));
    QVERIFY(stored.isOk());
    QCOMPARE(stored.value().stored.size(), m_ct.size());
    {
        QTemporaryDir got;
        const Result<RetrieveCount> get = runSync(client.get(m_ctUid, {}, {}, got.path(), [](const ReceivedInstance &) { return Error(); }));
        QVERIFY2(!get.isOk() || get.value().completed == 0, "dcmqrscp still answers C-GET: the test would prove nothing");
    }

    // `spectrum-cli stores add` as the admin types it, then `fetch`: the study lands in the cache.
    const QString config = m_dir.filePath(QStringLiteral("stores.json")), cache = m_dir.filePath(QStringLiteral("cli-cache"));
    StoreConfigFile workstation = StoreConfigFile::parse("{}", config).value();
    workstation.workstation.aeTitle = QStringLiteral("SPECTRUMCLI");
    workstation.workstation.storagePort = scpPort;
    QVERIFY(!workstation.save().isError());
    ProcessResult r = cli({QStringLiteral("stores"), QStringLiteral("add"), QStringLiteral("qr"), QStringLiteral("--kind"), QStringLiteral("dimse"),
                           QStringLiteral("--host"), QStringLiteral("127.0.0.1"), QStringLiteral("--port"), QString::number(qrPort), QStringLiteral("--aet"),
                           QStringLiteral("QRSCP"), QStringLiteral("--retrieve"), QStringLiteral("move")},
                          config, cache);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = cli({QStringLiteral("fetch"), QStringLiteral("--store"), QStringLiteral("qr"), m_ctUid}, config, cache);
    QVERIFY2(r.exitCode == 0, (r.out + r.err).constData());
    QVERIFY2(r.err.contains(QByteArray::number(m_ct.size()) + " instance(s)"), r.err.constData());
    r = cli({QStringLiteral("studies")}, config, cache);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.out.contains(m_ctUid.toLatin1()) && r.out.contains(QByteArray::number(m_ct.size()) + " images"), r.out.constData());

    // A PACS that does not know where to send: the admin is told what to add, and where.
    workstation = StoreConfigFile::load(config).value();
    workstation.workstation.aeTitle = QStringLiteral("STRANGER");
    QVERIFY(!workstation.save().isError());
    r = cli({QStringLiteral("fetch"), QStringLiteral("--store"), QStringLiteral("qr"), m_ctUid}, config, m_dir.filePath(QStringLiteral("cli-cache-2")));
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("add STRANGER (this workstation, port " + QByteArray::number(scpPort) + ") to the PACS's DICOM destinations"), r.err.constData());
}

QStringList tst_DeploymentDay::ctFiles(const QString &folder) const
{
    QStringList files;
    QDir().mkpath(folder);
    for (const DemoInstance &i : m_ct) {
        files << QDir(folder).filePath(i.identity.sopInstanceUid + QStringLiteral(".dcm"));
        if (!writeFile(files.last(), i.bytes))
            return {};
    }
    return files;
}

void tst_DeploymentDay::aStudyOnlyInAFolderArchiveOpensFromTheBrowser()
{
    // A folder archive (a cache folder of studies brought from elsewhere, made by `spectrum-cli import`) configured
    // as a local store with a path: its study is found in the browser and opens with a double-click — into this
    // workstation's cache, every slice the folder's.
    const QString folder = m_dir.filePath(QStringLiteral("folder-archive"));
    const QStringList files = ctFiles(m_dir.filePath(QStringLiteral("ct-files")));
    QCOMPARE(files.size(), m_ct.size());
    ProcessResult r = cli(QStringList{QStringLiteral("import")} + files, m_dir.filePath(QStringLiteral("none.json")), folder);
    QVERIFY2(r.exitCode == 0, r.err.constData());

    StoreConfig archive(QStringLiteral("folder"), LocalSettings());
    archive.as<LocalSettings>().path = folder;
    QTemporaryDir dir;
    // Beside it an archive that does not answer: its words are shown under the patient's other studies.
    const quint16 nobody = freePort();
    StoreConfigFile config;
    QVERIFY(!config.add(archive).isError());
    QVERIFY(!config.add(dicomWebStore(QStringLiteral("down"), QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(nobody))).isError());
    Workstation::Options o;
    o.cacheDirectory = dir.filePath(QStringLiteral("cache"));
    o.seedDemoWhenEmpty = false;
    o.stores = config;
    auto ws = std::make_unique<Workstation>(o);
    QSignalSpy started(ws.get(), &Workstation::started);
    ws->start();
    QVERIFY(started.wait(20000));
    MainWindow window(ws.get());
    window.hangingProtocols()->setProtocols(ProtocolSet());
    window.resize(1000, 700);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    StudyViewer *viewer = openFromBrowser(&window, m_ct.first().identity.patientName.section(QLatin1Char('^'), 0, 0).toLower());
    QVERIFY(viewer && viewer->streamer());
    QTRY_VERIFY_WITH_TIMEOUT(viewer->streamer()->isComplete(), 30000);
    QCOMPARE(viewer->streamer()->cachedCount(), m_ct.size());
    QCOMPARE(viewer->sliceCount(), m_ct.size());
    for (int index : {0, int(m_ct.size()) - 1}) {
        viewer->showSlice(index);
        const QString sop = viewer->study().series[0].instances[index].sopInstanceUid;
        QTRY_VERIFY_WITH_TIMEOUT(viewer->viewport()->image().info.identity.sopInstanceUid == sop && viewer->viewport()->layers()->completeness() == 1.0, 20000);
        const auto source = std::find_if(m_ct.begin(), m_ct.end(), [&](const DemoInstance &i) { return i.identity.sopInstanceUid == sop; });
        QVERIFY(source != m_ct.end());
        Result<DecodedImage> original = decodeDicom(ByteView(source->bytes));
        QVERIFY(original.isOk());
        QCOMPARE(viewer->viewport()->renderedImage(), toQImage(renderFrame(original.value(), 0, viewer->viewport()->window())));
    }
    // The archive that did not answer is named with its own words — asked, not "not asked", and no "no store answered".
    PriorsPanel *panel = viewer->priorsPanel();
    QTRY_VERIFY_WITH_TIMEOUT(!panel->statusText().contains(QStringLiteral("Searching")), 20000);
    const QString said = panel->statusText();
    QVERIFY2(said.contains(QStringLiteral("⚠ No answer from down: network error: QIDO-RS search: Connection refused (127.0.0.1:%1)").arg(nobody))
                 && !said.contains(QStringLiteral("no store answered")),
             qPrintable(said));
    QVERIFY(panel->findChild<QLabel *>(QStringLiteral("priorsStatus"))->isVisible());

    // A distance drawn (D, a drag) and saved (Ctrl+S): the report goes into the folder the study came from, not
    // only into this workstation's cache.
    ImageViewport *vp = viewer->viewport();
    vp->setFocus();
    QTest::keySequence(&window, QKeySequence(Qt::Key_D));
    drag(vp, vp->view().imageToWidget().map(QPointF(100, 200)).toPoint(), vp->view().imageToWidget().map(QPointF(300, 220)).toPoint());
    QTRY_COMPARE(vp->findingsLayer()->measurements().size(), 1);
    QSignalSpy saved(&window, &MainWindow::findingsSaved);
    QTest::keySequence(&window, QKeySequence::Save);
    QVERIFY(saved.wait(30000));
    QVERIFY2(!saved.first().at(1).value<Error>().isError(), qPrintable(saved.first().at(1).value<Error>().toString()));
    Result<StudySummary> inFolder = runSync(ws->registry()->listStudy(QStringLiteral("folder"), m_ct.first().identity.studyInstanceUid));
    QVERIFY2(inFolder.isOk(), qPrintable(inFolder.error().toString()));
    QVERIFY(std::any_of(inFolder.value().series.begin(), inFolder.value().series.end(),
                        [](const SeriesSummary &s) { return s.modality == QLatin1String("SR"); }));
}

void tst_DeploymentDay::aStudyOnlyInS3IsPrefetchedByTheCommandLine()
{
    // The night's prefetch (`spectrum-cli prefetch`, as cron runs it) of a study kept only in an S3 bucket: fetched,
    // not "no store named ''".
    S3Server s3;
    QVERIFY2(s3.start(), "the S3 test server did not start (scripts/install-deps.sh builds it)");
    {
        S3Client client(s3.endpoint(QStringLiteral("night")));
        QVERIFY(runSync(client.createBucket()).isOk());
    }
    const QString secret = m_dir.filePath(QStringLiteral("s3-secret"));
    QVERIFY(writeFile(secret, S3Server::secretKey().toUtf8()));
    QFile::setPermissions(secret, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    const QString config = m_dir.filePath(QStringLiteral("s3-stores.json")), cache = m_dir.filePath(QStringLiteral("s3-cache"));
    ProcessResult r = cli({QStringLiteral("stores"), QStringLiteral("add"), QStringLiteral("objects"), QStringLiteral("--kind"), QStringLiteral("s3"), QStringLiteral("--url"),
                           QStringLiteral("http://127.0.0.1:%1").arg(s3.port()), QStringLiteral("--bucket"), QStringLiteral("night"), QStringLiteral("--access-key"),
                           S3Server::accessKey(), QStringLiteral("--secret-key-file"), secret},
                          config, cache);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = cli(QStringList{QStringLiteral("export"), QStringLiteral("--store"), QStringLiteral("objects")} + ctFiles(m_dir.filePath(QStringLiteral("s3-files"))), config, cache);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = cli({QStringLiteral("prefetch"), QStringLiteral("--patient-id"), m_ct.first().identity.patientId, QStringLiteral("--priors"), QStringLiteral("0")}, config, cache);
    QVERIFY2(r.exitCode == 0, (r.out + r.err).constData());
    QVERIFY2(r.out.contains(QStringLiteral("1 study found: 1 fetched (%1 instance(s))").arg(m_ct.size()).toUtf8()), (r.out + r.err).constData());
    r = cli({QStringLiteral("studies")}, config, cache);
    QVERIFY2(r.out.contains(m_ctUid.toLatin1()) && r.out.contains(QByteArray::number(m_ct.size()) + " images"), r.out.constData());
}

void tst_DeploymentDay::theCommandLineWorksWhileTheWorkstationRuns()
{
    // The workstation left open overnight holds its cache; cron's `spectrum-cli prefetch --quiet`, and `fetch` and
    // `studies` typed by the admin, are handed to it (they were refused: "busy: in use by Spectrum").
    OrthancProcess orthanc;
    QVERIFY(orthanc.start());
    for (const DemoInstance &i : std::as_const(m_ct))
        QVERIFY(!orthanc.upload(i.bytes).isEmpty());
    const QString config = m_dir.filePath(QStringLiteral("open-stores.json")), cache = m_dir.filePath(QStringLiteral("open-cache"));
    StoreConfigFile stores = StoreConfigFile::parse("{}", config).value();
    QVERIFY(!stores.add(dicomWebStore(QStringLiteral("pacs"), orthanc.dicomWebUrl())).isError());
    QVERIFY(!stores.save().isError());
    const std::unique_ptr<Workstation> open = openWorkstation(cache, config);
    QVERIFY(open);
    Workstation &ws = *open;

    ProcessResult r = cli({QStringLiteral("studies")}, config, cache);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.out.isEmpty() && r.err.contains("as the running workstation sees its cache"), (r.out + r.err).constData());
    r = cli({QStringLiteral("fetch"), QStringLiteral("--store"), QStringLiteral("pacs"), m_ctUid}, config, cache);
    QVERIFY2(r.exitCode == 0, (r.out + r.err).constData());
    QVERIFY2(r.err.contains("fetched by the running workstation") && r.err.contains(QByteArray::number(m_ct.size()) + " instance(s)"), r.err.constData());
    QTRY_VERIFY_WITH_TIMEOUT(std::any_of(ws.studies().begin(), ws.studies().end(), [&](const StudySummary &s) {
                                 return s.identity.studyInstanceUid == m_ctUid && s.instanceCount == m_ct.size();
                             }), 10000);
    r = cli({QStringLiteral("studies")}, config, cache);
    QVERIFY2(r.exitCode == 0 && r.out.contains(m_ctUid.toLatin1()) && r.out.contains(QByteArray::number(m_ct.size()) + " images"), (r.out + r.err).constData());

    // Cron's line: nothing printed when all went well; the study was here already.
    r = cli({QStringLiteral("prefetch"), QStringLiteral("--patient-id"), m_ct.first().identity.patientId, QStringLiteral("--quiet")}, config, cache);
    QVERIFY2(r.exitCode == 0 && r.out.isEmpty(), (r.out + r.err).constData());
    r = cli({QStringLiteral("prefetch"), QStringLiteral("--patient-id"), m_ct.first().identity.patientId}, config, cache);
    QVERIFY2(r.exitCode == 0, (r.out + r.err).constData());
    QVERIFY2(r.out.contains("prefetched by the running workstation") && r.out.contains("1 study listed, 1 here already"), r.out.constData());

    // Another configuration than the workstation's: refused, with why.
    const QString other = m_dir.filePath(QStringLiteral("other-stores.json"));
    QVERIFY(QFile::copy(config, other));
    r = cli({QStringLiteral("fetch"), QStringLiteral("--store"), QStringLiteral("pacs"), QStringLiteral("--config"), other, m_ctUid}, other, cache);
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("the running workstation follows another store configuration"), r.err.constData());
}

void tst_DeploymentDay::theStorageScpTakesOnlyWhomTheAdminNamed()
{
    // `spectrum-cli listen` (the Storage SCP, headless) under a configuration naming one modality as a caller and
    // one PACS as a DIMSE store: both may send; a stranger, and a caller that calls another AE title, are refused
    // and reported with who and where.
    const quint16 port = freePort();
    const QString config = m_dir.filePath(QStringLiteral("listen-stores.json"));
    QVERIFY(writeFile(config, QStringLiteral(R"({"version": 1, "workstation": {"aeTitle": "READROOM", "storagePort": %1,
                                                "callers": [{"aeTitle": "MODALITY", "host": "127.0.0.1"}, {"aeTitle": "CT1", "host": "ct1.nowhere.invalid"}]},
                                                "stores": [{"name": "pacs", "kind": "dimse", "host": "127.0.0.1", "port": 104, "aeTitle": "PACS"}]})")
                                  .arg(port)
                                  .toUtf8()));
    QProcess listen;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_CONFIG"), config);
    env.insert(QStringLiteral("SPECTRUM_CACHE_DIR"), m_dir.filePath(QStringLiteral("listen-cache")));
    listen.setProcessEnvironment(env);
    dieWithParent(listen);
    listen.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("listen")});
    QVERIFY(listen.waitForStarted());
    QByteArray said;
    // On the address the PACS and the modality reach this machine from (loopback here), not on every address.
    QVERIFY(QTest::qWaitFor([&] { said += listen.readAllStandardError(); return said.contains("listening on"); }, 20000));
    // A caller whose name finds no address (a typo) does not widen it.
    QVERIFY2(said.contains("listening on 127.0.0.1 port " + QByteArray::number(port) + " (where pacs is reached from; no address found for ct1.nowhere.invalid (CT1))"),
             said.constData());
    const QString file = m_dir.filePath(QStringLiteral("listen.dcm"));
    QVERIFY(writeFile(file, m_ct.first().bytes));
    auto push = [&](const QString &calling, const QString &called) {
        return run(QStringLiteral(STORESCU_EXECUTABLE), {QStringLiteral("-to"), QStringLiteral("10"), QStringLiteral("-aet"), calling, QStringLiteral("-aec"), called,
                                                         QStringLiteral("127.0.0.1"), QString::number(port), file}, 60000);
    };
    QVERIFY(push(QStringLiteral("MODALITY"), QStringLiteral("READROOM")).ok());
    QVERIFY(push(QStringLiteral("PACS"), QStringLiteral("READROOM")).ok());
    {  // An instance the cache does not keep (no Study Instance UID) is not answered Success: the modality keeps it.
        const QString broken = m_dir.filePath(QStringLiteral("listen-nostudy.dcm"));
        QVERIFY(writeFile(broken, m_ct.at(1).bytes));
        QVERIFY(run(QStringLiteral(DCMODIFY_EXECUTABLE), {QStringLiteral("-nb"), QStringLiteral("-ea"), QStringLiteral("(0020,000D)"), broken}).ok());
        const ProcessResult sent = run(QStringLiteral(STORESCU_EXECUTABLE), {QStringLiteral("-to"), QStringLiteral("10"), QStringLiteral("-aet"), QStringLiteral("MODALITY"),
                                                                             QStringLiteral("-aec"), QStringLiteral("READROOM"), QStringLiteral("127.0.0.1"), QString::number(port), broken}, 60000);
        QVERIFY2(!sent.ok(), (sent.out + sent.err).constData());  // storescu exits 192 on a failed C-STORE
        const QDir incoming(m_dir.filePath(QStringLiteral("listen-cache/incoming")));
        QVERIFY(incoming.exists());
        QCOMPARE(incoming.entryList(QDir::Files).size(), 0);  // nothing left lying on the way in
        QCOMPARE(QFileInfo(incoming.path()).permissions() & (QFileDevice::ReadOther | QFileDevice::ExeOther | QFileDevice::ReadGroup), QFileDevice::Permissions());
    }
    // The command line meanwhile: the listener holds the cache and answers for it.
    const ProcessResult listed = runCli({QStringLiteral("studies")}, {{QStringLiteral("SPECTRUM_CONFIG"), config},
                                                                   {QStringLiteral("SPECTRUM_CACHE_DIR"), m_dir.filePath(QStringLiteral("listen-cache"))}});
    QVERIFY2(listed.exitCode == 0 && listed.out.contains(m_ctUid.toLatin1()), (listed.out + listed.err).constData());
    QVERIFY(!push(QStringLiteral("STRANGER"), QStringLiteral("READROOM")).ok());
    QVERIFY(!push(QStringLiteral("MODALITY"), QStringLiteral("SPECTRUM")).ok());
    {  // another address of this machine (127.0.0.2: loopback too) finds no listener
        const ProcessResult elsewhere = run(QStringLiteral(STORESCU_EXECUTABLE), {QStringLiteral("-to"), QStringLiteral("10"), QStringLiteral("-aet"), QStringLiteral("MODALITY"),
                                                                                  QStringLiteral("-aec"), QStringLiteral("READROOM"), QStringLiteral("127.0.0.2"), QString::number(port), file}, 60000);
        QVERIFY(!elsewhere.ok());
        QVERIFY2(elsewhere.err.contains("Connection refused"), elsewhere.err.constData());
    }
    QVERIFY(QTest::qWaitFor([&] { said += listen.readAllStandardError(); return said.contains("not ours"); }, 10000));
    QVERIFY2(said.contains("refused an association from STRANGER at 127.0.0.1: STRANGER at 127.0.0.1 is not among the allowed callers"), said.constData());
    QVERIFY2(said.contains("refused an association from MODALITY at 127.0.0.1: it called AE title 'SPECTRUM', not ours (READROOM)"), said.constData());
    QCOMPARE(said.count("refused an association from STRANGER"), 1);  // once: the log's line, not a second copy
    stopProcess(listen, 5000);
    said += listen.readAllStandardError();
    QVERIFY2(said.contains("stopped after 2 instance(s)") && said.contains("lacks its study's, series' or own UID: not kept"), said.constData());
}

void tst_DeploymentDay::secretsAndImagesAreTheirOwnersAlone()
{
    // A token file every user may read is refused, as ssh refuses such a key: by spectrum-blobd, and by
    // `spectrum-cli stores add --password-file`, each saying how to fix it.
    const mode_t was = ::umask(022);  // whoever starts them, with the commonest umask
    auto restore = qScopeGuard([was] { ::umask(was); });
    const QString token = m_dir.filePath(QStringLiteral("open-token"));
    QVERIFY(writeFile(token, "reading-room-token"));
    QVERIFY(QFile::setPermissions(token, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadGroup | QFileDevice::ReadOther));
    const QString root = m_dir.filePath(QStringLiteral("private-blobs"));
    ProcessResult r = run(QStringLiteral(SPECTRUM_BLOBD_EXECUTABLE), {QStringLiteral("--root"), root, QStringLiteral("--token-file"), token, QStringLiteral("--port"), QStringLiteral("0")}, 20000);
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("may be read by others (mode 0644)") && r.err.contains("chmod 600 " + token.toUtf8()), r.err.constData());
    const QString config = m_dir.filePath(QStringLiteral("secret-stores.json"));
    r = runCli({QStringLiteral("stores"), QStringLiteral("add"), QStringLiteral("pacs-web"), QStringLiteral("--kind"), QStringLiteral("dicomweb"),
                QStringLiteral("--url"), QStringLiteral("http://127.0.0.1:8042/dicom-web"), QStringLiteral("--user"), QStringLiteral("reader"),
                QStringLiteral("--password-file"), token, QStringLiteral("--config"), config}, {});
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("chmod 600"), r.err.constData());
    QVERIFY(!readFile(config).contains("pacs-web"));

    // Its owner's alone: the server starts, and the blob root it makes is 0700, what it writes 0600.
    QVERIFY(QFile::setPermissions(token, QFileDevice::ReadOwner | QFileDevice::WriteOwner));
    BlobdProcess blobd(root);
    QVERIFY(blobd.start());
    QCOMPARE(QFileInfo(root).permissions() & (QFileDevice::ReadGroup | QFileDevice::ExeGroup | QFileDevice::ReadOther | QFileDevice::ExeOther), QFileDevice::Permissions());
    const QString tokenFile = m_dir.filePath(QStringLiteral("blob-token"));
    QVERIFY(writePrivateFile(tokenFile, blobd.token().toUtf8()));
    const QByteArray blob = QByteArray(24 << 20, 'x') + QByteArray::number(qint64(QDateTime::currentMSecsSinceEpoch()));
    const QString source = m_dir.filePath(QStringLiteral("blob.bin"));
    QVERIFY(writeFile(source, blob));
    const QString url = QStringLiteral("blob://127.0.0.1:%1/big").arg(blobd.port());
    r = runCli({QStringLiteral("put"), url, source, QStringLiteral("--token-file"), tokenFile}, {});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QDirIterator files(root, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    int seen = 0;
    while (files.hasNext()) {
        const QString f = files.next();
        ++seen;
        QVERIFY2(!(QFileInfo(f).permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther)), qPrintable(f));
    }
    QVERIFY(seen > 0);
    QDirIterator folders(root, QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden, QDirIterator::Subdirectories);
    seen = 0;
    while (folders.hasNext()) {  // objects/, staging/, packs/: as private as the root, whatever the umask
        const QString f = folders.next();
        ++seen;
        QVERIFY2(!(QFileInfo(f).permissions() & (QFileDevice::ReadGroup | QFileDevice::ExeGroup | QFileDevice::ReadOther | QFileDevice::ExeOther)), qPrintable(f));
    }
    QVERIFY(seen >= 3);

    // A cache found open to every user (made by hand, 0777, its objects/ 0755) is closed: 0700 whole — what it gave
    // its group came with "everyone". One an administrator gave a group (2750) keeps it, and its folders follow.
    auto modeOf = [](const QString &path) {
        struct stat st{};
        return ::stat(QFile::encodeName(path).constData(), &st) == 0 ? int(st.st_mode & 07777) : -1;
    };
    const QString open = m_dir.filePath(QStringLiteral("open-cache"));
    QVERIFY(QDir().mkpath(open + QStringLiteral("/objects")));
    QVERIFY(::chmod(QFile::encodeName(open).constData(), 0777) == 0 && ::chmod(QFile::encodeName(open + QStringLiteral("/objects")).constData(), 0755) == 0);
    r = runCli({QStringLiteral("cache")}, {{QStringLiteral("SPECTRUM_CACHE_DIR"), open}, {QStringLiteral("SPECTRUM_CONFIG"), config}});
    QVERIFY2(r.exitCode == 0 && r.err.contains("was open to every user: now 700"), (r.out + r.err).constData());
    for (const QString &folder : {open, open + QStringLiteral("/objects"), open + QStringLiteral("/staging"), open + QStringLiteral("/packs")})
        QVERIFY2(modeOf(folder) == 0700, qPrintable(QStringLiteral("%1: %2").arg(folder).arg(modeOf(folder), 0, 8)));
    const QString shared = m_dir.filePath(QStringLiteral("group-cache"));
    QVERIFY(QDir().mkpath(shared));
    QVERIFY(::chmod(QFile::encodeName(shared).constData(), 02750) == 0);
    r = runCli({QStringLiteral("cache")}, {{QStringLiteral("SPECTRUM_CACHE_DIR"), shared}, {QStringLiteral("SPECTRUM_CONFIG"), config}});
    QVERIFY2(r.exitCode == 0 && !r.err.contains("open to every user"), (r.out + r.err).constData());
    QCOMPARE(modeOf(shared), 02750);
    QCOMPARE(modeOf(shared + QStringLiteral("/objects")), 02750);

    // `spectrum-cli get` killed midway over a slow link: nothing of the blob's full length under the name asked
    // for; the same command again finishes it.
    LinkEmulator link(blobd.port(), 2, 256, 40);  // 5 MB/s
    QVERIFY(link.waitUntilListening());
    const QString out = m_dir.filePath(QStringLiteral("got.bin"));
    const QStringList get{QStringLiteral("get"), QStringLiteral("blob://127.0.0.1:%1/big").arg(link.port()), out, QStringLiteral("--token-file"), tokenFile};
    QProcess getting;
    getting.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), get);
    QVERIFY(getting.waitForStarted());
    QVERIFY(QTest::qWaitFor([&] { return QFileInfo(out + QStringLiteral(".part")).size() == blob.size() || getting.state() != QProcess::Running; }, 30000));
    QVERIFY(getting.state() == QProcess::Running);  // still on its way when killed
    getting.kill();
    getting.waitForFinished();
    QVERIFY(!QFile::exists(out));
    r = runCli(get, {});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(readFile(out) == blob);
    QVERIFY(!QFile::exists(out + QStringLiteral(".part")));
}

void tst_DeploymentDay::aHundredWorkstationsFromOneSystemConfiguration()
{
    // The hospital's /etc/spectrum/stores.json (here $SPECTRUM_SYSTEM_CONFIG) names the archives of every
    // workstation; each user's secret is provisioned as a file of their own ("~/…", readable by them alone). A
    // user's file holds only what differs; the system's stores cannot be removed by a user, and a sealed secret
    // in it (which no user could open) is refused with what to do instead.
    QTemporaryDir home;
    const QString system = m_dir.filePath(QStringLiteral("system-stores.json")), user = home.filePath(QStringLiteral("stores.json"));
    BlobdProcess room(m_dir.filePath(QStringLiteral("room-blobs")));
    QVERIFY(room.start());
    const QString hospital = QString::fromUtf8(R"({"version": 1, "workstation": {"storagePort": 11190},
        "stores": [{"name": "pacs", "kind": "dimse", "host": "127.0.0.1", "port": 104, "aeTitle": "PACS"},
                   {"name": "room", "kind": "blobd", "url": "blob://127.0.0.1:%1", "token": {"file": "~/.spectrum-room-token"}}]})");
    QVERIFY(writeFile(system, hospital.arg(room.port()).toUtf8()));
    const QString token = home.filePath(QStringLiteral(".spectrum-room-token"));  // not yet written
    const QList<QPair<QString, QString>> env{{QStringLiteral("SPECTRUM_SYSTEM_CONFIG"), system}, {QStringLiteral("SPECTRUM_CONFIG"), user},
                                             {QStringLiteral("HOME"), home.path()}, {QStringLiteral("SPECTRUM_CACHE_DIR"), home.filePath(QStringLiteral("cache"))}};
    ProcessResult r = runCli({QStringLiteral("stores"), QStringLiteral("list")}, env);
    QVERIFY2(r.exitCode == 0 && r.out.contains("pacs\tdimse") && r.out.contains("room\tblobd") && r.out.contains("(system: " + system.toUtf8() + ")"), (r.out + r.err).constData());
    // A provisioned secret file missing, or open to others: said as what it is — not "authentication failed".
    r = runCli({QStringLiteral("stores"), QStringLiteral("test"), QStringLiteral("room")}, env);
    QVERIFY2(r.exitCode != 0 && r.out.contains("cannot read the store's secret file " + home.filePath(QStringLiteral(".spectrum-room-token")).toUtf8())
                 && !r.out.contains("authentication"), (r.out + r.err).constData());
    QVERIFY(writeFile(token, room.token().toUtf8()));
    QVERIFY(QFile::setPermissions(token, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadOther));
    r = runCli({QStringLiteral("stores"), QStringLiteral("test"), QStringLiteral("room")}, env);
    QVERIFY2(r.exitCode != 0 && r.out.contains("may be read by others (mode 0604)") && r.out.contains("chmod 600") && !r.out.contains("authentication"),
             (r.out + r.err).constData());
    QVERIFY(QFile::setPermissions(token, QFileDevice::ReadOwner | QFileDevice::WriteOwner));
    r = runCli({QStringLiteral("stores"), QStringLiteral("test"), QStringLiteral("room")}, env);  // the user's own token, from their home
    QVERIFY2(r.exitCode == 0 && r.out.contains("room\tok"), (r.out + r.err).constData());
    r = runCli({QStringLiteral("stores"), QStringLiteral("remove"), QStringLiteral("room")}, env);
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("configured for every user in " + system.toUtf8()), r.err.constData());

    // This workstation as the PACS see it: a per-host AE title until the user (or the admin) names one.
    r = runCli({QStringLiteral("stores"), QStringLiteral("workstation")}, env);
    QVERIFY2(r.exitCode == 0 && r.out.contains("AE title " + WorkstationConfig::defaultAeTitle().toUtf8() + ", port 11190"), (r.out + r.err).constData());
    QVERIFY(WorkstationConfig::defaultAeTitle() != QLatin1String("SPECTRUM") || QSysInfo::machineHostName().isEmpty());
    r = runCli({QStringLiteral("stores"), QStringLiteral("workstation"), QStringLiteral("--aet"), QStringLiteral("READROOM7"), QStringLiteral("--port"), QStringLiteral("11191")}, env);
    QVERIFY2(r.exitCode == 0 && r.out.contains("AE title READROOM7, port 11191"), (r.out + r.err).constData());
    // A changed password, as the admin rotates it: only that changes; the user's file holds the differences only.
    const QString pw = home.filePath(QStringLiteral("pw"));
    QVERIFY(writePrivateFile(pw, "rotated-secret"));
    r = runCli({QStringLiteral("stores"), QStringLiteral("add"), QStringLiteral("web"), QStringLiteral("--kind"), QStringLiteral("dicomweb"), QStringLiteral("--url"),
                QStringLiteral("http://127.0.0.1:8042/dicom-web")}, env);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli({QStringLiteral("stores"), QStringLiteral("edit"), QStringLiteral("web"), QStringLiteral("--user"), QStringLiteral("reader"), QStringLiteral("--password-file"), pw}, env);
    QVERIFY2(r.exitCode == 0 && r.out.contains("changed web: dicomweb http://127.0.0.1:8042/dicom-web (basic, reader)"), (r.out + r.err).constData());
    r = runCli({QStringLiteral("stores"), QStringLiteral("edit"), QStringLiteral("pacs"), QStringLiteral("--timeout"), QStringLiteral("90")}, env);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject saved = QJsonDocument::fromJson(readFile(user)).object();
    QStringList names;
    for (const QJsonValue &v : saved.value(QStringLiteral("stores")).toArray())
        names << v.toObject().value(QStringLiteral("name")).toString();
    QCOMPARE(names, (QStringList{QStringLiteral("pacs"), QStringLiteral("web")}));  // room: the system's, unchanged
    QCOMPARE(saved.value(QStringLiteral("workstation")).toObject().value(QStringLiteral("aeTitle")).toString(), QStringLiteral("READROOM7"));
    QVERIFY(!readFile(user).contains("rotated-secret"));
    r = runCli({QStringLiteral("stores"), QStringLiteral("list")}, env);
    QVERIFY2(r.out.contains("pacs\tdimse") && !r.out.contains("pacs\tdimse 127.0.0.1:104 PACS (system"), r.out.constData());
    QVERIFY2(r.out.contains("(this user's version of " + system.toUtf8() + "'s; `stores remove pacs` goes back to it)"), r.out.constData());
    // Removing the user's version of a system store gives them the system's again, which follows its changes.
    r = runCli({QStringLiteral("stores"), QStringLiteral("remove"), QStringLiteral("pacs")}, env);
    QVERIFY2(r.exitCode == 0 && r.out.contains("pacs: back to the system configuration's"), (r.out + r.err).constData());
    QVERIFY(!readFile(user).contains("\"pacs\""));
    r = runCli({QStringLiteral("stores"), QStringLiteral("list")}, env);
    QVERIFY2(r.out.contains("(system: " + system.toUtf8() + ")") && r.out.count("(system") == 2, r.out.constData());

    // The workstation itself, configured by the system file alone: it listens for its PACS at once.
    {
        QTemporaryDir bare;
        const QString port = QString::number(freePort());
        QVERIFY(writeFile(system, hospital.arg(room.port()).replace(QStringLiteral("11190"), port).toUtf8()));
        QProcess gui;
        QProcessEnvironment genv = QProcessEnvironment::systemEnvironment();
        genv.insert(QStringLiteral("SPECTRUM_SYSTEM_CONFIG"), system);
        genv.insert(QStringLiteral("SPECTRUM_CONFIG"), bare.filePath(QStringLiteral("stores.json")));  // no file of the user's
        genv.insert(QStringLiteral("SPECTRUM_CACHE_DIR"), bare.filePath(QStringLiteral("cache")));
        genv.insert(QStringLiteral("HOME"), bare.path());
        genv.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        gui.setProcessEnvironment(genv);
        dieWithParent(gui);
        gui.start(QStringLiteral(SPECTRUM_GUI_EXECUTABLE), {QStringLiteral("--no-demo")});
        QVERIFY(gui.waitForStarted());
        const QStringList echo{QStringLiteral("-aet"), QStringLiteral("PACS"), QStringLiteral("-aec"), WorkstationConfig::defaultAeTitle(), QStringLiteral("127.0.0.1"), port};
        QVERIFY2(QTest::qWaitFor([&] { return run(QStringLiteral(ECHOSCU_EXECUTABLE), echo, 10000).ok(); }, 30000), gui.readAllStandardError().constData());
        stopProcess(gui, 5000);
    }

    // A sealed secret in the system file: no user could open it.
    const QByteArray sealed = R"({"version": 1, "stores": [{"name": "room", "kind": "blobd", "url": "blob://127.0.0.1:1", "token": {"sealed": "aes256gcm:AAAA"}}]})";
    QVERIFY(writeFile(system, sealed));
    r = runCli({QStringLiteral("stores"), QStringLiteral("list")}, env);
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("has a sealed secret, which no user can open") && r.err.contains("{\"file\""), r.err.constData());
}

void tst_DeploymentDay::theCacheIsKeptFromTheCommandLine()
{
    // `spectrum-cli cache`: its size; one study removed; what is older than a retention period; everything only
    // with --yes. While the workstation runs, it removes (the command line says so), and its list follows.
    QTemporaryDir dir;
    const QString cache = dir.filePath(QStringLiteral("cache")), config = dir.filePath(QStringLiteral("stores.json"));
    ProcessResult r = cli({QStringLiteral("demo"), QStringLiteral("--out"), dir.filePath(QStringLiteral("demo")), QStringLiteral("--ct-slices"), QStringLiteral("12")}, config, cache);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = cli({QStringLiteral("import"), dir.filePath(QStringLiteral("demo"))}, config, cache);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = cli({QStringLiteral("cache")}, config, cache);
    QVERIFY2(r.exitCode == 0 && r.out.contains("5 study(ies)"), (r.out + r.err).constData());
    r = cli({QStringLiteral("cache"), QStringLiteral("clear")}, config, cache);
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("say --yes"), r.err.constData());
    r = cli({QStringLiteral("cache"), QStringLiteral("remove"), m_ctUid}, config, cache);
    QVERIFY2(r.exitCode == 0 && r.out.contains("removed 12 blob(s) of 1 study(ies)"), (r.out + r.err).constData());
    r = cli({QStringLiteral("studies")}, config, cache);
    QVERIFY2(r.exitCode == 0 && !r.out.contains(m_ctUid.toLatin1()) && r.out.count('\n') == 4, r.out.constData());
    r = cli({QStringLiteral("cache"), QStringLiteral("prune"), QStringLiteral("--older-than"), QStringLiteral("30")}, config, cache);
    QVERIFY2(r.exitCode == 0 && r.out.contains("removed 0 blob(s)"), (r.out + r.err).constData());  // all came today

    // The workstation open on it: the command line hands the removal over.
    const std::unique_ptr<Workstation> open = openWorkstation(cache, config);
    QVERIFY(open);
    Workstation &ws = *open;
    QTRY_COMPARE(ws.studies().size(), 4);
    // Under a day old would take today's reading too: asked first.
    r = cli({QStringLiteral("cache"), QStringLiteral("prune"), QStringLiteral("--older-than"), QStringLiteral("0")}, config, cache);
    QVERIFY2(r.exitCode == 2 && r.err.contains("removes what came today too: say --yes"), (r.out + r.err).constData());
    QCOMPARE(ws.studies().size(), 4);
    r = cli({QStringLiteral("cache"), QStringLiteral("prune"), QStringLiteral("--older-than"), QStringLiteral("0"), QStringLiteral("--yes")}, config, cache);
    QVERIFY2(r.exitCode == 0 && r.out.contains("(by the running workstation)") && !r.out.contains("removed 0 blob(s)"), (r.out + r.err).constData());
    QTRY_COMPARE(ws.studies().size(), 0);
}

void tst_DeploymentDay::whatTheTrialHitIsSaidClearly()
{
    // What an IT admin's first day hit, each through the command line as they met it.
    QTemporaryDir dir;
    const QString config = dir.filePath(QStringLiteral("stores.json")), cache = dir.filePath(QStringLiteral("cache"));
    OrthancProcess orthanc;
    OrthancProcess::Options o;
    o.users = {{QStringLiteral("reader"), QStringLiteral("right-password")}};
    QVERIFY2(orthanc.start(o), "Orthanc did not start");
    QVERIFY(!orthanc.upload(m_ct.first().bytes).isEmpty());
    auto add = [&](const QStringList &args) {
        const ProcessResult r = cli(QStringList{QStringLiteral("stores"), QStringLiteral("add")} + args, config, cache);
        return r.exitCode == 0;
    };
    auto tested = [&](const QString &store) { return cli({QStringLiteral("stores"), QStringLiteral("test"), store}, config, cache).out; };
    const QString password = dir.filePath(QStringLiteral("pw")), wrong = dir.filePath(QStringLiteral("wrong"));
    QVERIFY(writePrivateFile(password, "right-password") && writePrivateFile(wrong, "wrong-password"));
    const QString server = QStringLiteral("http://127.0.0.1:%1").arg(orthanc.httpPort());

    // The URL without its DICOMweb root: Orthanc's own API answers /studies — never a blank study.
    QVERIFY(add({QStringLiteral("noroot"), QStringLiteral("--kind"), QStringLiteral("dicomweb"), QStringLiteral("--url"), server,
                 QStringLiteral("--user"), QStringLiteral("reader"), QStringLiteral("--password-file"), password}));
    QByteArray said = tested(QStringLiteral("noroot"));
    QVERIFY2(said.contains("FAILED") && said.contains("is " + server.toUtf8() + " the server's DICOMweb root?"), said.constData());
    ProcessResult r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("noroot")}, config, cache);
    QVERIFY2(r.exitCode != 0 && r.out.isEmpty() && r.err.count("DICOMweb root") == 1 && r.err.contains("find: no store answered (noroot)"),
             (r.out + r.err).constData());  // said once, by the store, then what it means for the search
    // 401 without credentials, and with the wrong ones: told apart, each with what to do.
    QVERIFY(add({QStringLiteral("nocreds"), QStringLiteral("--kind"), QStringLiteral("dicomweb"), QStringLiteral("--url"), orthanc.dicomWebUrl()}));
    said = tested(QStringLiteral("nocreds"));
    QVERIFY2(said.contains("the server wants credentials (HTTP 401) and the store has none"), said.constData());
    QVERIFY(add({QStringLiteral("wrongcreds"), QStringLiteral("--kind"), QStringLiteral("dicomweb"), QStringLiteral("--url"), orthanc.dicomWebUrl(),
                 QStringLiteral("--user"), QStringLiteral("reader"), QStringLiteral("--password-file"), wrong}));
    said = tested(QStringLiteral("wrongcreds"));
    QVERIFY2(said.contains("the server refused user 'reader' and the password given (HTTP 401)"), said.constData());
    r = cli({QStringLiteral("stores"), QStringLiteral("edit"), QStringLiteral("wrongcreds"), QStringLiteral("--password-file"), password}, config, cache);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    said = tested(QStringLiteral("wrongcreds"));
    QVERIFY2(said.contains("wrongcreds\tok"), said.constData());

    // A server whose certificate the system does not trust: the message names --ca-file.
    QVERIFY(makeTestCa(dir.path()) && makeTestCertificate(dir.path(), QStringLiteral("web"), QStringLiteral("IP:127.0.0.1")));
    const quint16 tlsPort = freePort();
    QProcess https;
    dieWithParent(https);
    https.start(QStringLiteral("openssl"), {QStringLiteral("s_server"), QStringLiteral("-quiet"), QStringLiteral("-www"), QStringLiteral("-accept"), QString::number(tlsPort),
                                           QStringLiteral("-cert"), dir.filePath(QStringLiteral("web.pem")), QStringLiteral("-key"), dir.filePath(QStringLiteral("web.key"))});
    QVERIFY(https.waitForStarted());
    QVERIFY(QTest::qWaitFor([&] { QTcpSocket s; s.connectToHost(QHostAddress::LocalHost, tlsPort); return s.waitForConnected(200); }, 10000));
    QVERIFY(add({QStringLiteral("selfsigned"), QStringLiteral("--kind"), QStringLiteral("dicomweb"), QStringLiteral("--url"),
                 QStringLiteral("https://127.0.0.1:%1/dicom-web").arg(tlsPort)}));
    said = tested(QStringLiteral("selfsigned"));
    QVERIFY2(said.contains("the server's certificate is not trusted") && said.contains("--ca-file"), said.constData());
    // Trusted, but a web server's page where a DICOMweb root should be: said for what it is, from the answer's
    // type (openssl's page never ends: the old reader waited the whole timeout, then said "the answer broke off").
    QVERIFY(add({QStringLiteral("webpage"), QStringLiteral("--kind"), QStringLiteral("dicomweb"), QStringLiteral("--url"),
                 QStringLiteral("https://127.0.0.1:%1/dicom-web").arg(tlsPort), QStringLiteral("--ca-file"), dir.filePath(QStringLiteral("ca.pem")),
                 QStringLiteral("--timeout"), QStringLiteral("20")}));
    said = tested(QStringLiteral("webpage"));
    QVERIFY2(said.contains("the server answered text/html, not DICOM JSON — is https://127.0.0.1:" + QByteArray::number(tlsPort) + "/dicom-web the server's DICOMweb root?"),
             said.constData());
    stopProcess(https, 2000);
    // Nobody listening: the message names where it knocked.
    const quint16 nobody = freePort();
    QVERIFY(add({QStringLiteral("down"), QStringLiteral("--kind"), QStringLiteral("dicomweb"), QStringLiteral("--url"), QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(nobody)}));
    said = tested(QStringLiteral("down"));
    QVERIFY2(said.contains("Connection refused (127.0.0.1:" + QByteArray::number(nobody) + ")"), said.constData());
    // A search of every store while some fail: the list printed, and the exit status says it is not the whole.
    r = cli({QStringLiteral("find")}, config, cache);
    QVERIFY2(r.exitCode == 1 && r.out.contains(m_ctUid.toLatin1()) && r.err.contains("store(s) did not answer") && r.err.contains("down")
                 && r.err.contains("the list may lack their studies"), (r.out + r.err).constData());

    // A blob root the server cannot make; `stat` of a blob a server does not hold speaks of that server.
    r = run(QStringLiteral(SPECTRUM_BLOBD_EXECUTABLE), {QStringLiteral("--root"), config + QStringLiteral("/blobs"), QStringLiteral("--allow-no-auth"),
                                                        QStringLiteral("--listen"), QStringLiteral("127.0.0.1"), QStringLiteral("--port"), QStringLiteral("0")}, 20000);
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("cannot serve the blob root " + config.toUtf8() + "/blobs"), r.err.constData());
    BlobdProcess blobd(dir.filePath(QStringLiteral("blobs")));
    QVERIFY(blobd.start());
    const QString token = dir.filePath(QStringLiteral("token"));
    QVERIFY(writePrivateFile(token, blobd.token().toUtf8()));
    r = runCli({QStringLiteral("stat"), QStringLiteral("blob://127.0.0.1:%1/missing").arg(blobd.port()), QStringLiteral("--token-file"), token}, {});
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("no blob 'missing' on this server") && !r.err.contains("disk cache"), r.err.constData());
    // A key no put could make is said to be one, as put says it — not "not found".
    r = runCli({QStringLiteral("stat"), QStringLiteral("blob://127.0.0.1:%1/test/ct1").arg(blobd.port()), QStringLiteral("--token-file"), token}, {});
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("invalid key") && !r.err.contains("not found"), r.err.constData());
}

QTEST_MAIN(tst_DeploymentDay)
#include "tst_deploymentday.moc"
