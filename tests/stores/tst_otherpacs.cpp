// SPDX-License-Identifier: Apache-2.0
// DIMSE stacks no one here wrote, started here on loopback: pynetdicom's Query/Retrieve SCP (which answers a
// study-level C-FIND once per instance it holds) and its Storage SCP set to take implicit VR little endian alone;
// PixelMed's storage and Q/R server (Debian's pixelmed-apps, Java), fetched from by C-GET and by C-MOVE. The workstation finds, lists and fetches from the first as from any PACS, and sends to the second
// what is stored compressed, decompressed on the way — or says plainly why it cannot. A strict archive of our own on
// pynetdicom (strict_find_scp.py) refuses the optional keys of where instances lie: asked again without them.

#include "../imaging/jpeg2000files.h"

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/filters/filterregistry.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "archives.h"
#include "testsupport.h"

#include <QDir>
#include <QProcess>
#include <QScopeGuard>
#include <QSet>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;
using namespace spectrum::test;

namespace {

/// One of pynetdicom's applications (`python -m pynetdicom APP ARGS`), or a script of ours on pynetdicom, from the
/// tests' venv, until destroyed.
class PynetdicomApp
{
public:
    PynetdicomApp() { m_process.setProcessChannelMode(QProcess::MergedChannels); dieWithParent(m_process); }
    ~PynetdicomApp() { stopProcess(m_process); }
    bool start(const QString &app, const QStringList &args, quint16 port)
    {
        return startPython(QStringList{QStringLiteral("-m"), QStringLiteral("pynetdicom"), app} + args, port);
    }
    bool startPython(const QStringList &arguments, quint16 port)
    {
        const QString app = arguments.value(arguments.first() == QLatin1String("-m") ? 2 : 0);
        m_process.start(QStringLiteral(TEST_VENV_DIR "/bin/python"), arguments);
        if (!m_process.waitForStarted())
            return false;
        for (int i = 0; i < 200 && m_process.state() == QProcess::Running; ++i) {
            QTcpSocket probe;
            probe.connectToHost(QStringLiteral("127.0.0.1"), port);
            if (probe.waitForConnected(100))
                return true;
            QTest::qWait(50);
        }
        qWarning("pynetdicom %s did not listen: %s", qPrintable(app), m_process.readAll().constData());
        return false;
    }

    /// What it printed so far.
    QByteArray output()
    {
        m_output += m_process.readAll();
        return m_output;
    }

private:
    QProcess m_process;
    QByteArray m_output;
};

/// The decoded pixels of a DICOM file, for comparing what arrived with what was sent.
QByteArray pixelsOf(const QString &path)
{
    Result<DecodedImage> image = decodeDicom(ByteView(readFile(path)));
    return image.isOk() ? QByteArray(reinterpret_cast<const char *>(image.value().pixels.frameData(0)), image.value().pixels.frameBytes()) : QByteArray();
}

} // namespace

class tst_OtherPacs : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void aQrScpThatRepeatsItsAnswersIsReadAsAnyPacs();
    void compressedInstancesAreDecompressedForAnArchiveThatTakesOnlyUncompressed();
    void pixelmedsServerIsReadAndWrittenAsAnyPacs();
    void aStrictArchiveIsAskedForItsInstancesWithoutTheirPlaces();
    void aPacsThatQueuesItsMovesIsWaitedFor();
    void anArchiveThatMatchesNamesCaseByCaseFindsWhatIsTyped();
    void aFilteredImageOfDeepColourSaysItsDepth();

private:
    QTemporaryDir m_dir;
    PynetdicomApp m_qr, m_store;
    quint16 m_qrPort = 0, m_storePort = 0;
    QList<DemoInstance> m_instances;
    QStringList m_files;  ///< the demo instances as files, uncompressed
    std::unique_ptr<StoreRegistry> m_registry;
    std::shared_ptr<FileStore> m_cache;
};

void tst_OtherPacs::initTestCase()
{
    const ProcessResult venv = run(QStringLiteral(PYVENV_SCRIPT), {QStringLiteral(TEST_VENV_DIR), QStringLiteral(TEST_PEERS_REQUIREMENTS)}, 600000);
    QVERIFY2(venv.ok(), venv.err.constData());
    m_qrPort = freePort();
    m_storePort = freePort();
    QVERIFY(writeFile(m_dir.filePath(QStringLiteral("qrscp.ini")),
                      QStringLiteral("[DEFAULT]\n  ae_title: QRSCP\n  port: %1\n  max_pdu: 16382\n  acse_timeout: 30\n  dimse_timeout: 30\n"
                                     "  network_timeout: 30\n  bind_address: 127.0.0.1\n  instance_location: %2\n  database_location: %3\n"
                                     "  log_identifier: False\n")
                          .arg(m_qrPort)
                          .arg(m_dir.filePath(QStringLiteral("qr-instances")), m_dir.filePath(QStringLiteral("qr.sqlite")))
                          .toUtf8()));
    QVERIFY(m_qr.start(QStringLiteral("qrscp"), {QStringLiteral("-c"), m_dir.filePath(QStringLiteral("qrscp.ini"))}, m_qrPort));
    QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("received"))));
    // The Storage SCP set to take implicit VR little endian alone (-xi), as many older archives do.
    QVERIFY(m_store.start(QStringLiteral("storescp"), {QString::number(m_storePort), QStringLiteral("-xi"), QStringLiteral("-aet"), QStringLiteral("STORESCP"), QStringLiteral("-od"),
                                                       m_dir.filePath(QStringLiteral("received"))},
                          m_storePort));

    DemoOptions demo;
    demo.ctSlices = 6;
    demo.mrSlices = 3;
    demo.studies = {DemoStudy::HeadCt, DemoStudy::HeadMr};
    QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) {
                 const QString path = m_dir.filePath(QStringLiteral("demo/%1.dcm").arg(i.identity.sopInstanceUid));
                 if (!QDir().mkpath(m_dir.filePath(QStringLiteral("demo"))) || !writeFile(path, i.bytes))
                     return Error(ErrorCode::Io, QStringLiteral("cannot write %1").arg(path));
                 m_files << path;
                 m_instances << std::move(i);
                 return Error();
             }).isError());

    StoreConfigFile config = StoreConfigFile::parse("{}", m_dir.filePath(QStringLiteral("stores.json"))).value();
    config.workstation.aeTitle = QStringLiteral("SPECTRUMOP");
    QCOMPARE(config.add(dimseStore(QStringLiteral("qr"), m_qrPort, QStringLiteral("QRSCP"))), Error());
    QCOMPARE(config.add(dimseStore(QStringLiteral("store"), m_storePort, QStringLiteral("STORESCP"))), Error());
    auto opened = FileStore::open(m_dir.filePath(QStringLiteral("cache")), 0);
    QVERIFY(opened.isOk());
    m_cache = std::shared_ptr<FileStore>(opened.takeValue());
    m_registry = std::make_unique<StoreRegistry>(config, m_cache);
}

void tst_OtherPacs::aQrScpThatRepeatsItsAnswersIsReadAsAnyPacs()
{
    const Result<ExportSummary> sent = runSync(m_registry->exportFiles(QStringLiteral("qr"), m_files));
    QVERIFY2(sent.isOk(), qPrintable(sent.error().toString()));
    QCOMPARE(sent.value().stored.size(), m_files.size());

    // Its study-level answer comes once per instance: read as one study each, the patient as it holds it.
    const QString ctUid = DemoArchive::studyUid(DemoStudy::HeadCt);
    DicomQuery all;
    const Result<QList<StudyHit>> found = runSync(m_registry->findStudies(all, {QStringLiteral("qr")}));
    QVERIFY2(found.isOk(), qPrintable(found.error().toString()));
    QCOMPARE(found.value().size(), 2);
    for (const StudyHit &h : found.value()) {
        QVERIFY(h.conflicts.isEmpty());
        QCOMPARE(h.study.identity.patientId, QStringLiteral("DEMO-HEAD-001"));
    }
    // Its series-level answer too: each series once, with all its instances under it.
    QSet<QString> series;
    int ctInstances = 0;
    for (const DemoInstance &i : m_instances) {
        if (i.identity.studyInstanceUid == ctUid) {
            series.insert(i.identity.seriesInstanceUid);
            ++ctInstances;
        }
    }
    const Result<StudySummary> listed = runSync(m_registry->listStudy(QStringLiteral("qr"), ctUid));
    QVERIFY2(listed.isOk(), qPrintable(listed.error().toString()));
    QCOMPARE(listed.value().series.size(), series.size());
    QCOMPARE(listed.value().instanceCount, ctInstances);
    int inSeries = 0;
    for (const SeriesSummary &s : listed.value().series)
        inSeries += int(s.instances.size());
    QCOMPARE(inSeries, ctInstances);

    // Fetched (C-GET) into the cache: every instance, the pixels as sent.
    const Result<FetchSummary> fetched = runSync(m_registry->fetchStudy(QStringLiteral("qr"), ctUid));
    QVERIFY2(fetched.isOk(), qPrintable(fetched.error().toString()));
    QCOMPARE(fetched.value().instances, ctInstances);
    for (int k = 0; k < m_instances.size(); ++k) {
        const DemoInstance &i = m_instances[k];
        if (i.identity.studyInstanceUid != ctUid)
            continue;
        Result<ByteView> cached = runSync(m_cache->read(i.identity.sopInstanceUid));
        QVERIFY(cached.isOk());
        Result<DecodedImage> image = decodeDicom(cached.value());
        QVERIFY(image.isOk());
        QCOMPARE(QByteArray(reinterpret_cast<const char *>(image.value().pixels.frameData(0)), image.value().pixels.frameBytes()), pixelsOf(m_files[k]));
    }
}

void tst_OtherPacs::compressedInstancesAreDecompressedForAnArchiveThatTakesOnlyUncompressed()
{
    // Four CT slices, each stored compressed another way; the archive takes only uncompressed syntaxes.
    QStringList ct;
    for (int k = 0; k < m_instances.size() && ct.size() < 4; ++k)
        if (m_instances[k].identity.modality == QLatin1String("CT") && m_instances[k].identity.imageOrientation.size() > 0)
            ct << m_files[k];
    QVERIFY(ct.size() == 4);
    QStringList compressed;
    const QStringList tools{QStringLiteral(DCMCJPEG_EXECUTABLE), QStringLiteral(DCMCJPLS_EXECUTABLE), QStringLiteral(DCMCRLE_EXECUTABLE)};
    for (int k = 0; k < 3; ++k) {
        const QString out = m_dir.filePath(QStringLiteral("compressed%1.dcm").arg(k));
        QStringList args;
        if (k == 0)
            args << QStringLiteral("+e1");  // JPEG lossless, process 14, first-order prediction
        const ProcessResult r = run(tools[k], args << ct[k] << out);
        QVERIFY2(r.ok(), r.err.constData());
        compressed << out;
    }
    QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("j2k"))));
    const QString j2k = makeJpeg2000(ct[3], m_dir.filePath(QStringLiteral("j2k")), 0, 0);
    QVERIFY(!j2k.isEmpty());
    compressed << j2k;

    const Result<ExportSummary> sent = runSync(m_registry->exportFiles(QStringLiteral("store"), compressed));
    QVERIFY2(sent.isOk(), qPrintable(sent.error().toString()));
    QCOMPARE(sent.value().stored.size(), 3);
    // JPEG 2000 is not something DCMTK decompresses: not sent, and said why.
    QCOMPARE(sent.value().failed.size(), 1);
    QVERIFY2(sent.value().failed.first().second.contains(QStringLiteral("JPEG 2000")), qPrintable(sent.value().failed.first().second));
    // What arrived is the same image, uncompressed.
    const QDir received(m_dir.filePath(QStringLiteral("received")));
    for (int k = 0; k < 3; ++k) {
        const Result<DicomIdentity> id = readDicomIdentity(ByteView(readFile(ct[k])));
        QVERIFY(id.isOk());
        const QString there = received.filePath(QStringLiteral("CT.") + id.value().sopInstanceUid);
        QVERIFY2(QFile::exists(there), qPrintable(there));
        const ProcessResult syntax = run(QStringLiteral(DCMDUMP_EXECUTABLE), {QStringLiteral("-M"), QStringLiteral("+P"), QStringLiteral("0002,0010"), there});
        QVERIFY2(syntax.out.contains("=LittleEndianImplicit"), syntax.out.constData());
        QCOMPARE(pixelsOf(there), pixelsOf(ct[k]));
    }
}

void tst_OtherPacs::pixelmedsServerIsReadAndWrittenAsAnyPacs()
{
    const QString jars = QStringLiteral("/usr/share/java");
    QStringList classPath;
    for (const char *jar : {"pixelmed", "hsqldb", "commons-codec", "commons-net", "jmdns", "slf4j-api", "slf4j-simple", "javax.json", "jaxb-api", "vecmath"})
        classPath << QStringLiteral("%1/%2.jar").arg(jars, QLatin1String(jar));
    QVERIFY2(QFile::exists(classPath.first()), "PixelMed is not installed (scripts/install-deps.sh installs pixelmed-apps)");
    const quint16 port = freePort(), web = freePort(), ours = freePort();
    QVERIFY(writeFile(m_dir.filePath(QStringLiteral("pixelmed.properties")),
                      QStringLiteral("Dicom.ListeningPort=%1\nDicom.CalledAETitle=PIXELMED\nDicom.CallingAETitle=PIXELMED\nDicom.PrimaryDeviceType=ARCHIVE\n"
                                     "Application.SavedImagesFolderName=%2\nApplication.DatabaseFileName=%3\nApplication.DatabaseServerName=spectrumtest\n"
                                     "WebServer.ListeningPort=%4\nWebServer.RootURL=/\n"
                                     // where C-MOVE sends: this test's Storage SCP
                                     "Dicom.RemoteAEs=SPECTRUMOP\nDicom.RemoteAEs.SPECTRUMOP.CalledAETitle=SPECTRUMOP\n"
                                     "Dicom.RemoteAEs.SPECTRUMOP.HostNameOrIPAddress=127.0.0.1\nDicom.RemoteAEs.SPECTRUMOP.Port=%5\n")
                          .arg(port)
                          .arg(m_dir.filePath(QStringLiteral("pixelmed-images")), m_dir.filePath(QStringLiteral("pixelmed-db")))
                          .arg(web)
                          .arg(ours)
                          .toUtf8()));
    QProcess server;
    server.setProcessChannelMode(QProcess::MergedChannels);
    server.setStandardOutputFile(m_dir.filePath(QStringLiteral("pixelmed.log")));
    dieWithParent(server);
    server.start(QStringLiteral("java"), {QStringLiteral("-cp"), classPath.join(QLatin1Char(':')), QStringLiteral("com.pixelmed.server.DicomAndWebStorageServer"),
                                          m_dir.filePath(QStringLiteral("pixelmed.properties"))});
    QVERIFY(server.waitForStarted());
    auto stop = qScopeGuard([&] { stopProcess(server); });
    QVERIFY2(QTest::qWaitFor([&] {
                 QTcpSocket probe;
                 probe.connectToHost(QStringLiteral("127.0.0.1"), port);
                 return probe.waitForConnected(100) || server.state() != QProcess::Running;
             }, 60000) && server.state() == QProcess::Running,
             readFile(m_dir.filePath(QStringLiteral("pixelmed.log"))).right(2000).constData());

    StoreConfigFile config = StoreConfigFile::parse("{}", m_dir.filePath(QStringLiteral("pixelmed-stores.json"))).value();
    config.workstation.aeTitle = QStringLiteral("SPECTRUMOP");
    config.workstation.storagePort = ours;
    StoreConfig get = dimseStore(QStringLiteral("pixelmed"), port, QStringLiteral("PIXELMED"));
    StoreConfig move = get;
    move.name = QStringLiteral("pixelmed-move");
    move.as<DimseSettings>().retrieve = QStringLiteral("move");
    QCOMPARE(config.add(get), Error());
    QCOMPARE(config.add(move), Error());
    for (const QString &kind : {QStringLiteral("get"), QStringLiteral("move")}) {
        auto opened = FileStore::open(m_dir.filePath(QStringLiteral("pixelmed-cache-") + kind), 0);
        QVERIFY(opened.isOk());
        std::shared_ptr<FileStore> cache(opened.takeValue());
        StoreRegistry registry(config, cache);
        if (kind == QLatin1String("get")) {
            QVERIFY(runSync(registry.test(QStringLiteral("pixelmed"))).isOk());
            const Result<ExportSummary> sent = runSync(registry.exportFiles(QStringLiteral("pixelmed"), m_files));
            QVERIFY2(sent.isOk(), qPrintable(sent.error().toString()));
            QCOMPARE(sent.value().stored.size(), m_files.size());
            const Result<QList<StudyHit>> found = runSync(registry.findStudies(DicomQuery(), {QStringLiteral("pixelmed")}));
            QVERIFY2(found.isOk(), qPrintable(found.error().toString()));
            QCOMPARE(found.value().size(), 2);
        }
        const QString store = kind == QLatin1String("get") ? QStringLiteral("pixelmed") : QStringLiteral("pixelmed-move");
        const QString mrUid = DemoArchive::studyUid(DemoStudy::HeadMr);
        if (kind == QLatin1String("move")) {
            // PixelMed cannot be told to refuse C-GET: that this is a C-MOVE shows in its need of our Storage SCP's
            // port, which another program holds at first.
            QTcpServer squatter;
            QVERIFY(squatter.listen(QHostAddress::Any, ours));
            const Result<FetchSummary> refused = runSync(registry.fetchStudy(store, mrUid));
            QVERIFY(!refused.isOk());
            QVERIFY2(refused.error().message().contains(QStringLiteral("C-MOVE needs this workstation's Storage SCP (SPECTRUMOP at port %1").arg(ours)),
                     qPrintable(refused.error().toString()));
        }
        const Result<FetchSummary> fetched = runSync(registry.fetchStudy(store, mrUid));
        QVERIFY2(fetched.isOk(), qPrintable(QStringLiteral("%1: %2").arg(kind, fetched.error().toString())));
        int mr = 0;
        for (int k = 0; k < m_instances.size(); ++k) {
            if (m_instances[k].identity.studyInstanceUid != mrUid)
                continue;
            ++mr;
            Result<ByteView> cached = runSync(cache->read(m_instances[k].identity.sopInstanceUid));
            QVERIFY2(cached.isOk(), qPrintable(kind));
            Result<DecodedImage> image = decodeDicom(cached.value());
            QVERIFY(image.isOk());
            QCOMPARE(QByteArray(reinterpret_cast<const char *>(image.value().pixels.frameData(0)), image.value().pixels.frameBytes()), pixelsOf(m_files[k]));
        }
        QCOMPARE(fetched.value().instances, mr);
    }
}

void tst_OtherPacs::aStrictArchiveIsAskedForItsInstancesWithoutTheirPlaces()
{
    // An archive that refuses an instance-level C-FIND naming keys it does not support (0xA900), as PS3.4 lets
    // it: asked again without where each instance lies, the series is listed all the same (its slices then placed
    // by their own headers as they come).
    const quint16 port = freePort();
    PynetdicomApp strict;
    QVERIFY(strict.startPython({QStringLiteral(STRICT_FIND_SCP_SCRIPT), QString::number(port)}, port));
    DimseEndpoint ep;
    ep.host = QStringLiteral("127.0.0.1");
    ep.port = port;
    ep.calledAeTitle = QStringLiteral("STRICT");
    DimseClient client(ep);
    DicomQuery q;
    q.level = QueryLevel::Instance;
    q.studyInstanceUid = QStringLiteral("1.2.826.0.1.3680043.10.511.1");
    q.seriesInstanceUid = QStringLiteral("1.2.826.0.1.3680043.10.511.2");
    const Result<QList<DicomRecord>> found = runSync(client.find(q));
    QVERIFY2(found.isOk(), qPrintable(found.error().toString()));
    QCOMPARE(found.value().size(), 3);
    for (const DicomRecord &r : found.value()) {
        QVERIFY(r.identity.sopInstanceUid.startsWith(QLatin1String("1.2.826.0.1.3680043.10.511.3.")));
        QVERIFY(r.identity.imagePosition.isEmpty());
    }
    QTRY_VERIFY(strict.output().contains("answered 3"));
    QCOMPARE(strict.output().count("refused"), 1);  // asked with the places once, then without
}


void tst_OtherPacs::aPacsThatQueuesItsMovesIsWaitedFor()
{
    // A PACS that answers a C-MOVE at once ("Success, 6 completed") and sends the study afterwards from its queue:
    // `spectrum-cli fetch` waits for the six it was told of — not done with none, as when the answer was the end.
    const quint16 pacsPort = freePort(), scpPort = freePort();
    const QString held = m_dir.filePath(QStringLiteral("queued-pacs"));
    QVERIFY(QDir().mkpath(held));
    QString ctStudy;
    int ctCount = 0;
    for (const DemoInstance &i : std::as_const(m_instances)) {
        if (i.identity.modality != QLatin1String("CT"))
            continue;
        ctStudy = i.identity.studyInstanceUid;
        ++ctCount;
        QVERIFY(writeFile(held + QLatin1Char('/') + i.identity.sopInstanceUid + QStringLiteral(".dcm"), i.bytes));
    }
    QCOMPARE(ctCount, 6);
    PynetdicomApp pacs;
    QVERIFY(pacs.startPython({QStringLiteral(QUEUED_MOVE_SCP_SCRIPT), QString::number(pacsPort), held, QStringLiteral("READROOM=127.0.0.1:%1").arg(scpPort)}, pacsPort));
    const QString config = m_dir.filePath(QStringLiteral("queued-stores.json")), cache = m_dir.filePath(QStringLiteral("queued-cache"));
    QVERIFY(writeFile(config, QStringLiteral(R"({"version": 1, "workstation": {"aeTitle": "READROOM", "storagePort": %1},
        "stores": [{"name": "queued", "kind": "dimse", "host": "127.0.0.1", "port": %2, "aeTitle": "QUEUED", "retrieve": "move"}]})")
                                  .arg(scpPort).arg(pacsPort).toUtf8()));
    const QList<QPair<QString, QString>> env{{QStringLiteral("SPECTRUM_CONFIG"), config}, {QStringLiteral("SPECTRUM_CACHE_DIR"), cache}};
    ProcessResult r = runCli({QStringLiteral("fetch"), QStringLiteral("--store"), QStringLiteral("queued"), ctStudy}, env);
    QVERIFY2(r.exitCode == 0 && r.err.contains("6 instance(s)"), (r.out + r.err).constData());
    QVERIFY2(pacs.output().contains("queued 6 for READROOM"), pacs.output().constData());
    QTRY_VERIFY2(pacs.output().contains("sent 6 to READROOM"), pacs.output().constData());
    r = runCli({QStringLiteral("studies")}, env);
    QVERIFY2(r.exitCode == 0 && r.out.contains(ctStudy.toLatin1()) && r.out.contains("6 images"), (r.out + r.err).constData());
}

void tst_OtherPacs::anArchiveThatMatchesNamesCaseByCaseFindsWhatIsTyped()
{
    // Orthanc set to match names case by case (CaseSensitivePN, as DICOM allows), holding the demo head, whose
    // name is in capitals. "demo" typed — lower case, no wildcard — finds it: the archive is asked in capitals.
    // Over DIMSE (its C-FIND follows the setting; its QIDO-RS does not), our AE title made known to it.
    OrthancProcess orthanc;
    OrthancProcess::Options o;
    o.extra.insert(QStringLiteral("CaseSensitivePN"), true);
    o.modalities << std::make_tuple(QStringLiteral("SPECTRUMCS"), QStringLiteral("127.0.0.1"), quint16(104));
    QVERIFY(orthanc.start(o));
    for (const DemoInstance &i : m_instances)
        QVERIFY(!orthanc.upload(i.bytes).isEmpty());
    StoreConfigFile config = StoreConfigFile::parse("{}", m_dir.filePath(QStringLiteral("stores-cs.json"))).value();
    config.workstation.aeTitle = QStringLiteral("SPECTRUMCS");
    QCOMPARE(config.add(dimseStore(QStringLiteral("cs"), orthanc.dicomPort(), orthanc.aeTitle())), Error());
    StoreRegistry registry(config, m_cache);
    DicomQuery asIs;  // the archive does match case by case: as typed, nothing
    asIs.patientName = QStringLiteral("*demo*");
    const Result<QList<StudyHit>> none = runSync(registry.findStudies(asIs, {QStringLiteral("cs")}));
    QVERIFY2(none.isOk(), qPrintable(none.error().toString()));
    QCOMPARE(none.value().size(), 0);
    DicomQuery typed;
    typed.patientName = DicomQuery::nameQueryFor(QStringLiteral("demo"));
    const Result<QList<StudyHit>> found = runSync(registry.findStudies(typed, {QStringLiteral("cs")}));
    QVERIFY2(found.isOk(), qPrintable(found.error().toString()));
    QCOMPARE(found.value().size(), 2);
}

void tst_OtherPacs::aFilteredImageOfDeepColourSaysItsDepth()
{
    // A 16-bit colour image (12 bits stored) sent back through a filter to the Storage SCP: filters work on colour
    // at 8 bits, so the derived image holds 8 — and its Derivation Description says so, where the archive keeps it.
    QTemporaryDir depth;
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(DEPTH_FILES_SCRIPT), depth.path()});
    QVERIFY2(made.ok(), made.err.constData());
    const QByteArray original = readFile(depth.filePath(QStringLiteral("rgb16.dcm")));
    const Result<DicomIdentity> id = readDicomIdentity(ByteView(original));
    QVERIFY(id.isOk());
    QVERIFY(runSync(m_cache->put(id.value().sopInstanceUid, ByteView(original), CommitOptions())).isOk());
    Result<FilterChain> chain = FilterRegistry().makeChain({QStringLiteral("invert")});
    QVERIFY(chain.isOk());
    const Result<ExportSummary> sent = runSync(m_registry->exportDerivedSeries(QStringLiteral("store"), {id.value().sopInstanceUid}, chain.value()));
    QVERIFY2(sent.isOk(), qPrintable(sent.isOk() ? QString() : sent.error().toString()));
    QCOMPARE(sent.value().stored.size(), 1);
    QString received;
    QTRY_VERIFY([&] {
        for (const QFileInfo &f : QDir(m_dir.filePath(QStringLiteral("received"))).entryInfoList(QDir::Files))
            if (readFile(f.filePath()).contains(sent.value().stored.first().toLatin1()))
                received = f.filePath();
        return !received.isEmpty();
    }());
    const ProcessResult dump = run(QStringLiteral(DCMDUMP_EXECUTABLE), {QStringLiteral("+P"), QStringLiteral("0008,2111"), QStringLiteral("+P"), QStringLiteral("0028,0101"), received});
    QVERIFY2(dump.ok(), dump.err.constData());
    QVERIFY2(dump.out.contains("colour filtered at 8 bits a sample (the original: 12)"), dump.out.constData());
    QVERIFY2(dump.out.contains("US 8"), dump.out.constData());
}

QTEST_GUILESS_MAIN(tst_OtherPacs)
#include "tst_otherpacs.moc"
