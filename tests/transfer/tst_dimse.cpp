// SPDX-License-Identifier: Apache-2.0
// DIMSE against real peers on loopback: Orthanc's DICOM server (C-ECHO, C-FIND, C-GET, C-MOVE, C-STORE) and
// DCMTK's own storescu pushing to our Storage SCP.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/transfer/dimse.h"
#include "archives.h"
#include "testsupport.h"

#include <QDir>
#include <QProcess>
#include <QSet>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QScopeGuard>

using namespace spectrum;
using namespace spectrum::test;

class tst_Dimse : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void echo();
    void echoToNobodyIsANetworkError();
    void silentPeerTimesOut();
    void badAeTitleIsRefusedBeforeConnecting();
    void findStudiesSeriesInstances();
    void findLimitAndOffset();
    void getStreamsInstancesToFiles();
    void getOfUnknownStudyFindsNothing();
    void moveToOurStorageScp();
    void storeAndFindAgain();
    void storageScpAcceptsPushesFromStorescu();
    void storageScpRefusesWhomItDoesNotKnow();
    void dcmqrscpStoreFindGetMove();
    void dcmqrscpRejectsAnUnknownAeTitle();
    void tlsAssociationsVerifyThePacs();
    void ourStorageScpOverTls();

private:
    DimseEndpoint endpoint() const;
    DimseEndpoint qrEndpoint(const QString &ourAe) const;
    bool startDcmqrscp();
    QProcess m_dcmqrscp;
    quint16 m_qrPort = 0;
    const DemoInstance *instance(const QString &sopUid) const;

    QTemporaryDir m_dir;
    OrthancProcess m_orthanc;
    QList<DemoInstance> m_instances;
    quint16 m_scpPort = 0;
    const QString m_scpAe = QStringLiteral("SPECTRUMTEST");
};

DimseEndpoint tst_Dimse::endpoint() const
{
    return dimseEndpoint(m_orthanc, m_scpAe);
}

const DemoInstance *tst_Dimse::instance(const QString &sopUid) const
{
    for (const DemoInstance &i : m_instances) {
        if (i.identity.sopInstanceUid == sopUid)
            return &i;
    }
    return nullptr;
}

void tst_Dimse::initTestCase()
{
    QVERIFY2(QFile::exists(QStringLiteral(ORTHANC_EXECUTABLE)), "Orthanc is not installed (make test installs it)");
    m_scpPort = freePort();
    OrthancProcess::Options options;
    options.aeTitle = QStringLiteral("TESTPACS");
    options.modalities = {{m_scpAe, QStringLiteral("127.0.0.1"), m_scpPort}};
    QVERIFY(m_orthanc.start(options));
    DemoOptions demo;
    demo.ctSlices = 5;
    demo.mrSlices = 4;
    QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) { m_instances << std::move(i); return Error(); }).isError());
    for (const DemoInstance &i : m_instances)
        QVERIFY(!m_orthanc.upload(i.bytes).isEmpty());
}

void tst_Dimse::cleanupTestCase()
{
    m_orthanc.stop();
    stopProcess(m_dcmqrscp, 5000);
}

DimseEndpoint tst_Dimse::qrEndpoint(const QString &ourAe) const
{
    DimseEndpoint ep;
    ep.host = QStringLiteral("127.0.0.1");
    ep.port = m_qrPort;
    ep.calledAeTitle = QStringLiteral("QRSCP");
    ep.callingAeTitle = ourAe;
    ep.timeoutSeconds = 20;
    return ep;
}

bool tst_Dimse::startDcmqrscp()
{
    if (m_dcmqrscp.state() == QProcess::Running)
        return true;
    // DCMTK's own archive: only our AE title (from this host) may use it; C-MOVE sends to our Storage SCP.
    m_qrPort = freePort();
    const QString db = m_dir.filePath(QStringLiteral("qrdb"));
    QDir().mkpath(db);
    const QString config = QStringLiteral("NetworkTCPPort = %1\nMaxPDUSize = 16384\nMaxAssociations = 16\n"
                                          "HostTable BEGIN\nspectrum = (%2, localhost, %3)\nHostTable END\n"
                                          "VendorTable BEGIN\nVendorTable END\n"
                                          "AETable BEGIN\nQRSCP %4 RW (1000, 1024mb) spectrum\nAETable END\n")
                               .arg(m_qrPort).arg(m_scpAe).arg(m_scpPort).arg(db);
    const QString path = m_dir.filePath(QStringLiteral("dcmqrscp.cfg"));
    writeFile(path, config.toUtf8());
    m_dcmqrscp.setProcessChannelMode(QProcess::MergedChannels);
    m_dcmqrscp.setStandardOutputFile(m_dir.filePath(QStringLiteral("dcmqrscp.log")));
    dieWithParent(m_dcmqrscp);
    m_dcmqrscp.start(QStringLiteral(DCMQRSCP_EXECUTABLE), {QStringLiteral("-c"), path});
    if (!m_dcmqrscp.waitForStarted())
        return false;
    DimseClient probe(qrEndpoint(m_scpAe));
    for (int i = 0; i < 100; ++i) {
        if (!runSync(probe.echo()).error().isError())
            return true;
        m_dcmqrscp.waitForFinished(100);
    }
    return false;
}

void tst_Dimse::echo()
{
    DimseClient client(endpoint());
    QCOMPARE(runSync(client.echo()).error(), Error());
    // Every association we open runs without Nagle's algorithm (DCMTK reads this on connect).
    QCOMPARE(qgetenv("TCP_NODELAY"), QByteArray("1"));
}

void tst_Dimse::echoToNobodyIsANetworkError()
{
    DimseEndpoint ep = endpoint();
    ep.port = freePort();
    DimseClient client(ep);
    const Error e = runSync(client.echo()).error();
    QCOMPARE(e.code(), ErrorCode::Network);
    QVERIFY(e.toString().contains(QString::number(ep.port)));
}

void tst_Dimse::silentPeerTimesOut()
{
    // A peer that accepts the TCP connection and never answers the association request.
    QTcpServer silent;
    QVERIFY(silent.listen(QHostAddress::LocalHost));
    QList<QTcpSocket *> held;
    connect(&silent, &QTcpServer::newConnection, this, [&] { held << silent.nextPendingConnection(); });
    DimseEndpoint ep = endpoint();
    ep.port = silent.serverPort();
    ep.timeoutSeconds = 1;
    DimseClient client(ep);
    auto *job = client.echo();
    QSignalSpy done(job, &Job::finished);
    job->setAutoDelete(false);
    job->start();
    QVERIFY(done.wait(15000));  // the event loop runs meanwhile: the association is on a pool thread
    QVERIFY(job->hasError());
    QVERIFY2(job->error().code() == ErrorCode::Timeout || job->error().code() == ErrorCode::Network, qPrintable(job->error().toString()));
    delete job;
    qDeleteAll(held);
}

void tst_Dimse::badAeTitleIsRefusedBeforeConnecting()
{
    DimseEndpoint ep = endpoint();
    ep.calledAeTitle = QStringLiteral("A_TITLE_FAR_TOO_LONG");
    DimseClient client(ep);
    QCOMPARE(runSync(client.echo()).error().code(), ErrorCode::InvalidArgument);
}

void tst_Dimse::findStudiesSeriesInstances()
{
    DimseClient client(endpoint());
    DicomQuery studies;
    Result<QList<DicomRecord>> all = runSync(client.find(studies));
    QVERIFY2(all.isOk(), qPrintable(all.error().toString()));
    QCOMPARE(all.value().size(), 5);
    for (const DicomRecord &r : all.value())
        QCOMPARE(r.identity.issuerOfPatientId, QStringLiteral("SPECTRUM DEMO"));  // asked for: priors match on it

    DicomQuery mr;
    mr.modality = QStringLiteral("MR");
    Result<QList<DicomRecord>> r = runSync(client.find(mr));
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(r.value().size(), 1);
    const DicomRecord &study = r.value().first();
    QCOMPARE(study.identity.studyInstanceUid, DemoArchive::studyUid(DemoStudy::HeadMr));
    QVERIFY(!study.identity.patientName.isEmpty());
    QCOMPARE(study.relatedInstances, 4);

    DicomQuery byName;  // PN wildcard matching, which DIMSE does with '^'
    byName.patientName = study.identity.patientName.left(6) + QLatin1Char('*');
    QVERIFY(!runSync(client.find(byName)).value().isEmpty());

    DicomQuery patients;  // patient root
    patients.level = QueryLevel::Patient;
    patients.patientId = study.identity.patientId;
    Result<QList<DicomRecord>> p = runSync(client.find(patients));
    QVERIFY2(p.isOk(), qPrintable(p.error().toString()));
    QCOMPARE(p.value().size(), 1);
    QCOMPARE(p.value().first().identity.patientName, study.identity.patientName);
    QCOMPARE(p.value().first().relatedStudies, 3);  // the demo's head CT, its prior and the head MR

    DicomQuery series;
    series.level = QueryLevel::Series;
    series.studyInstanceUid = study.identity.studyInstanceUid;
    Result<QList<DicomRecord>> s = runSync(client.find(series));
    QVERIFY(s.isOk());
    QCOMPARE(s.value().size(), 1);
    QCOMPARE(s.value().first().identity.modality, QStringLiteral("MR"));

    DicomQuery instances;  // without the series: found series by series
    instances.level = QueryLevel::Instance;
    instances.studyInstanceUid = study.identity.studyInstanceUid;
    Result<QList<DicomRecord>> i = runSync(client.find(instances));
    QVERIFY2(i.isOk(), qPrintable(i.error().toString()));
    QCOMPARE(i.value().size(), 4);
    for (const DicomRecord &rec : i.value()) {
        QVERIFY(instance(rec.identity.sopInstanceUid));
        // Where it lies, as its header says: a volume is laid out from the listing before the slices come.
        const DicomIdentity &own = instance(rec.identity.sopInstanceUid)->identity;
        QVERIFY(!own.imagePosition.isEmpty());
        QCOMPARE(rec.identity.imagePosition, own.imagePosition);
        QCOMPARE(rec.identity.imageOrientation, own.imageOrientation);
        QCOMPARE(rec.identity.frameOfReferenceUid, own.frameOfReferenceUid);
        QCOMPARE(rec.identity.sliceThickness, own.sliceThickness);
    }
}

void tst_Dimse::findLimitAndOffset()
{
    DimseClient client(endpoint());
    QSet<QString> seen;
    for (int offset = 0; offset < 3; ++offset) {
        DicomQuery q;
        q.limit = 1;
        q.offset = offset;
        Result<QList<DicomRecord>> r = runSync(client.find(q));
        QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
        QCOMPARE(r.value().size(), 1);
        seen.insert(r.value().first().identity.studyInstanceUid);
    }
    QCOMPARE(seen.size(), 3);
}

void tst_Dimse::getStreamsInstancesToFiles()
{
    DimseClient client(endpoint());
    const QString dir = m_dir.filePath(QStringLiteral("get"));
    QStringList files;
    QSet<QThread *> threads;
    auto *job = client.get(DemoArchive::studyUid(DemoStudy::HeadCt), {}, {}, dir, [&](const ReceivedInstance &i) {
        files << i.path;
        threads.insert(QThread::currentThread());
        return Error();
    });
    QSignalSpy progress(job, &Job::progress);
    Result<RetrieveCount> r = runSync(job);
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(r.value().completed, 5);
    QCOMPARE(r.value().failed, 0);
    QCOMPARE(files.size(), 5);
    QVERIFY(r.value().bytes > 5 * 512 * 512 * 2);
    for (const QString &f : files) {
        Result<DecodedImage> got = decodeDicomFile(f);
        QVERIFY2(got.isOk(), qPrintable(got.error().toString()));
        Result<DicomIdentity> id = readDicomIdentity(ByteView(readFile(f)));
        QVERIFY(id.isOk());
        const DemoInstance *original = instance(id.value().sopInstanceUid);
        QVERIFY(original);
        QCOMPARE(id.value(), original->identity);
        Result<DecodedImage> want = decodeDicom(ByteView(original->bytes));
        QVERIFY(std::memcmp(got.value().pixels.frameData(0), want.value().pixels.frameData(0), size_t(want.value().pixels.frameBytes())) == 0);
    }
}

void tst_Dimse::getOfUnknownStudyFindsNothing()
{
    DimseClient client(endpoint());
    Result<RetrieveCount> r = runSync(client.get(QStringLiteral("1.2.3.4.5.6"), {}, {}, m_dir.filePath(QStringLiteral("none")), {}));
    QVERIFY(!r.isOk() || r.value().completed == 0);
    QCOMPARE(runSync(client.get(QStringLiteral("1.2/../3"), {}, {}, m_dir.filePath(QStringLiteral("none")), {})).error().code(), ErrorCode::InvalidArgument);
}

void tst_Dimse::moveToOurStorageScp()
{
    StorageScp::Options options;
    options.aeTitle = m_scpAe;
    options.port = m_scpPort;
    options.directory = m_dir.filePath(QStringLiteral("scp-move"));
    options.callers = {{endpoint().calledAeTitle, QStringLiteral("127.0.0.1")}};  // the PACS that moves
    StorageScp scp(options);
    const Error started = scp.start();
    QVERIFY2(!started.isError(), qPrintable(started.toString()));
    QSignalSpy received(&scp, &StorageScp::instanceReceived);
    DimseClient client(endpoint());
    Result<RetrieveCount> r = runSync(client.move(DemoArchive::studyUid(DemoStudy::HeadMr), {}, {}, m_scpAe));
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(r.value().completed, 4);
    QTRY_COMPARE(received.count(), 4);
    for (const QList<QVariant> &args : received) {
        const ReceivedInstance i = args.first().value<ReceivedInstance>();
        QVERIFY(QFileInfo(i.path).absolutePath().startsWith(QDir(options.directory).absolutePath()));
        const DemoInstance *original = instance(i.sopInstanceUid);
        QVERIFY(original);
        QCOMPARE(readDicomIdentity(ByteView(readFile(i.path))).value(), original->identity);
    }
    // A destination the PACS does not know is a clear error (Orthanc answers 0xC000, others 0xA801).
    const Error unknown = runSync(client.move(DemoArchive::studyUid(DemoStudy::HeadMr), {}, {}, QStringLiteral("NOBODY"))).error();
    QVERIFY(unknown.isError());
    QVERIFY2(unknown.message().contains(QStringLiteral("'NOBODY'")), qPrintable(unknown.toString()));
    scp.stop();
    QVERIFY(!scp.isRunning());
}

void tst_Dimse::storeAndFindAgain()
{
    DemoOptions other;
    other.studies = {DemoStudy::ChestCr};
    QList<DemoInstance> cr;
    QVERIFY(!DemoArchive::generate(other, [&](DemoInstance &&i) { cr << std::move(i); return Error(); }).isError());
    const QString good = m_dir.filePath(QStringLiteral("cr.dcm")), bad = m_dir.filePath(QStringLiteral("bad.dcm"));
    QVERIFY(writeFile(good, cr.first().bytes));
    QVERIFY(writeFile(bad, "not DICOM"));
    DimseClient client(endpoint());
    Result<StoreCount> r = runSync(client.store({good, bad}));
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(r.value().stored, QStringList{cr.first().identity.sopInstanceUid});
    QCOMPARE(r.value().failed.size(), 1);
    QCOMPARE(r.value().failed.first().first, bad);
    DicomQuery q;
    q.level = QueryLevel::Instance;
    q.studyInstanceUid = cr.first().identity.studyInstanceUid;
    Result<QList<DicomRecord>> found = runSync(client.find(q));
    QVERIFY(found.isOk());
    QCOMPARE(found.value().size(), 2);  // the PA stored again, and the lateral the archive had
}

void tst_Dimse::storageScpAcceptsPushesFromStorescu()
{
    StorageScp::Options options;
    options.aeTitle = QStringLiteral("PUSHTARGET");
    options.port = freePort();
    options.directory = m_dir.filePath(QStringLiteral("scp-push"));
    options.callers = {{QStringLiteral("STORESCU"), QStringLiteral("localhost")}};  // storescu's own AE title; a host by name
    StorageScp scp(options);
    const Error started = scp.start();
    QVERIFY2(!started.isError(), qPrintable(started.toString()));
    QSignalSpy received(&scp, &StorageScp::instanceReceived);
    QStringList files;
    for (int i = 0; i < 3; ++i) {
        files << m_dir.filePath(QStringLiteral("push%1.dcm").arg(i));
        QVERIFY(writeFile(files.last(), m_instances.at(i).bytes));
    }
    // DCMTK's own storescu, with the compressed syntaxes proposed too; our SCP sets no Nagle delay either.
    const ProcessResult sent = run(QStringLiteral(STORESCU_EXECUTABLE), QStringList{QStringLiteral("-aec"), options.aeTitle, QStringLiteral("127.0.0.1"),
                                                                                    QString::number(options.port)} + files, 60000);
    QVERIFY2(sent.ok(), sent.err.constData());
    QTRY_COMPARE(received.count(), 3);
    QSet<QString> uids;
    for (const QList<QVariant> &args : received)
        uids.insert(args.first().value<ReceivedInstance>().sopInstanceUid);
    QCOMPARE(uids.size(), 3);
    // A port already in use is a clear error at start.
    StorageScp clash(options);
    QVERIFY(clash.start().isError());
}

void tst_Dimse::storageScpRefusesWhomItDoesNotKnow()
{
    // Allowed: MODALITY from this host, and ANYWHERE from any host. Refused, each reported with the caller: an AE
    // title not on the list, an allowed AE title from a host not its own, a caller that calls another AE title.
    StorageScp::Options options;
    options.aeTitle = QStringLiteral("GUARDED");
    options.port = freePort();
    options.directory = m_dir.filePath(QStringLiteral("scp-guarded"));
    options.callers = {{QStringLiteral("MODALITY"), QStringLiteral("127.0.0.1")}, {QStringLiteral("ELSEWHERE"), QStringLiteral("192.0.2.7")},
                       {QStringLiteral("ANYWHERE"), QStringLiteral("*")}};
    StorageScp scp(options);
    QVERIFY(!scp.start().isError());
    QSignalSpy received(&scp, &StorageScp::instanceReceived);
    QSignalSpy refused(&scp, &StorageScp::refused);
    const QString file = m_dir.filePath(QStringLiteral("guarded.dcm"));
    QVERIFY(writeFile(file, m_instances.first().bytes));
    auto push = [&](const QString &calling, const QString &called) {
        return run(QStringLiteral(STORESCU_EXECUTABLE), {QStringLiteral("-to"), QStringLiteral("10"), QStringLiteral("-aet"), calling, QStringLiteral("-aec"), called,
                                                         QStringLiteral("127.0.0.1"), QString::number(options.port), file}, 60000);
    };
    QVERIFY2(push(QStringLiteral("MODALITY"), options.aeTitle).ok(), "an allowed caller was refused");
    QVERIFY2(push(QStringLiteral("ANYWHERE"), options.aeTitle).ok(), "a caller allowed from any host was refused");
    QTRY_COMPARE(received.count(), 2);
    QCOMPARE(refused.count(), 0);
    QVERIFY(!push(QStringLiteral("STRANGER"), options.aeTitle).ok());
    QTRY_COMPARE(refused.count(), 1);
    QVERIFY2(refused.last().first().toString().contains(QStringLiteral("from STRANGER at 127.0.0.1: STRANGER at 127.0.0.1 is not among the allowed callers")),
             qPrintable(refused.last().first().toString()));
    QVERIFY(!push(QStringLiteral("ELSEWHERE"), options.aeTitle).ok());
    QTRY_COMPARE(refused.count(), 2);
    QVERIFY2(refused.last().first().toString().contains(QStringLiteral("ELSEWHERE at 127.0.0.1 is not among the allowed callers")),
             qPrintable(refused.last().first().toString()));
    QVERIFY(!push(QStringLiteral("MODALITY"), QStringLiteral("SOMEONEELSE")).ok());
    QTRY_COMPARE(refused.count(), 3);
    QVERIFY2(refused.last().first().toString().contains(QStringLiteral("it called AE title 'SOMEONEELSE', not ours (GUARDED)")),
             qPrintable(refused.last().first().toString()));
    QCOMPARE(received.count(), 2);  // nothing of the refused ones landed
}

void tst_Dimse::dcmqrscpStoreFindGetMove()
{
    QVERIFY2(startDcmqrscp(), "dcmqrscp did not start");
    DimseClient client(qrEndpoint(m_scpAe));
    QStringList files;
    for (const DemoInstance &i : m_instances) {
        if (i.identity.modality == QLatin1String("MR")) {
            files << m_dir.filePath(QStringLiteral("qr-%1.dcm").arg(i.identity.instanceNumber));
            QVERIFY(writeFile(files.last(), i.bytes));
        }
    }
    Result<StoreCount> stored = runSync(client.store(files));
    QVERIFY2(stored.isOk(), qPrintable(stored.error().toString()));
    QCOMPARE(stored.value().stored.size(), 4);
    DicomQuery q;
    Result<QList<DicomRecord>> studies = runSync(client.find(q));
    QVERIFY2(studies.isOk(), qPrintable(studies.error().toString()));
    QCOMPARE(studies.value().size(), 1);
    QCOMPARE(studies.value().first().identity.studyInstanceUid, DemoArchive::studyUid(DemoStudy::HeadMr));
    DicomQuery images;
    images.level = QueryLevel::Instance;
    images.studyInstanceUid = DemoArchive::studyUid(DemoStudy::HeadMr);
    QCOMPARE(runSync(client.find(images)).value().size(), 4);

    QStringList got;
    Result<RetrieveCount> get = runSync(client.get(DemoArchive::studyUid(DemoStudy::HeadMr), {}, {}, m_dir.filePath(QStringLiteral("qr-get")),
                                                   [&](const ReceivedInstance &i) { got << i.sopInstanceUid; return Error(); }));
    QVERIFY2(get.isOk(), qPrintable(get.error().toString()));
    QCOMPARE(got.size(), 4);

    StorageScp::Options options;
    options.aeTitle = m_scpAe;
    options.port = m_scpPort;
    options.directory = m_dir.filePath(QStringLiteral("qr-move"));
    options.callers = {{QStringLiteral("QRSCP"), QStringLiteral("*")}};
    StorageScp scp(options);
    const Error started = scp.start();
    QVERIFY2(!started.isError(), qPrintable(started.toString()));
    QSignalSpy received(&scp, &StorageScp::instanceReceived);
    Result<RetrieveCount> moved = runSync(client.move(DemoArchive::studyUid(DemoStudy::HeadMr), {}, {}, m_scpAe));
    QVERIFY2(moved.isOk(), qPrintable(moved.error().toString()));
    QCOMPARE(moved.value().completed, 4);
    QTRY_COMPARE(received.count(), 4);
}

void tst_Dimse::dcmqrscpRejectsAnUnknownAeTitle()
{
    QVERIFY2(startDcmqrscp(), "dcmqrscp did not start");
    DimseClient stranger(qrEndpoint(QStringLiteral("STRANGER")));
    const Error e = runSync(stranger.echo()).error();
    QCOMPARE(e.code(), ErrorCode::Authentication);
    QVERIFY2(e.message().contains(QStringLiteral("AE title")), qPrintable(e.toString()));
}

// DIMSE over TLS against DCMTK's own storescp +tls: with the hospital CA trusted, C-ECHO and C-STORE go through
// encrypted; a PACS whose certificate the workstation cannot verify (another CA, another host) is refused, and so
// is a plain association to a TLS port.
void tst_Dimse::tlsAssociationsVerifyThePacs()
{
    QTemporaryDir dir;
    const QString d = dir.path();
    QVERIFY(makeTestCa(d));
    QVERIFY(makeTestCertificate(d, QStringLiteral("pacs"), QStringLiteral("IP:127.0.0.1")));
    QVERIFY(makeTestCertificate(d, QStringLiteral("elsewhere"), QStringLiteral("DNS:pacs.elsewhere.example")));
    const QString received = d + QStringLiteral("/received");
    QVERIFY(QDir().mkpath(received));
    auto startScp = [&](QProcess &scp, quint16 port, const QString &cert) {
        scp.setProcessChannelMode(QProcess::MergedChannels);
        scp.start(QStringLiteral("storescp"), {QStringLiteral("+tls"), d + QLatin1Char('/') + cert + QStringLiteral(".key"), d + QLatin1Char('/') + cert + QStringLiteral(".pem"),
                                               QStringLiteral("-ic"), QStringLiteral("-aet"), QStringLiteral("TLSPACS"), QStringLiteral("-od"), received,
                                               QString::number(port)});
        return scp.waitForStarted();
    };
    const quint16 port = freePort(), otherPort = freePort();
    QProcess scp, other;
    QVERIFY(startScp(scp, port, QStringLiteral("pacs")));
    QVERIFY(startScp(other, otherPort, QStringLiteral("elsewhere")));
    auto stop = qScopeGuard([&] {
        for (QProcess *p : {&scp, &other}) {
            p->kill();
            p->waitForFinished();
        }
    });
    DimseEndpoint ep;
    ep.host = QStringLiteral("127.0.0.1");
    ep.port = port;
    ep.calledAeTitle = QStringLiteral("TLSPACS");
    ep.callingAeTitle = QStringLiteral("SPECTRUMTLS");
    ep.tls = true;
    ep.caFile = d + QStringLiteral("/ca.pem");
    ep.timeoutSeconds = 10;
    // storescp listens a moment after it starts: the first echo is retried until it answers.
    QTRY_VERIFY_WITH_TIMEOUT(!runSync(DimseClient(ep).echo()).error().isError(), 20000);
    const QString file = d + QStringLiteral("/ct.dcm");
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly) && f.write(m_instances.first().bytes) == m_instances.first().bytes.size());
    }
    Result<StoreCount> stored = runSync(DimseClient(ep).store({file}));
    QVERIFY2(stored.isOk(), qPrintable(stored.isOk() ? QString() : stored.error().toString()));
    QCOMPARE(stored.value().stored.size(), 1);
    QTRY_VERIFY(!QDir(received).entryList(QDir::Files).isEmpty());

    DimseEndpoint untrusted = ep;  // the system's CAs do not know the hospital's
    untrusted.caFile.clear();
    QVERIFY(runSync(DimseClient(untrusted).echo()).error().isError());
    DimseEndpoint wrongHost = ep;  // the hospital's CA, but a certificate for another host
    wrongHost.port = otherPort;
    QVERIFY(runSync(DimseClient(wrongHost).echo()).error().isError());
    DimseEndpoint plain = ep;  // no TLS to a TLS port
    plain.tls = false;
    QVERIFY(runSync(DimseClient(plain).echo()).error().isError());
    DimseEndpoint noCa = ep;
    noCa.caFile = d + QStringLiteral("/missing.pem");
    const Error e = runSync(DimseClient(noCa).echo()).error();
    QCOMPARE(e.code(), ErrorCode::InvalidArgument);
    QVERIFY(e.toString().contains(QStringLiteral("missing.pem")));
}

// The workstation's Storage SCP with DICOM TLS: pushes arrive over TLS only; with a client CA configured, only
// from callers holding a certificate from it. And the workstation's certificate goes to a PACS that asks for one.
void tst_Dimse::ourStorageScpOverTls()
{
    QTemporaryDir dir;
    const QString d = dir.path();
    auto at = [&](const QString &name) { return d + QLatin1Char('/') + name; };
    QVERIFY(makeTestCa(d));
    QVERIFY(makeTestCertificate(d, QStringLiteral("workstation"), QStringLiteral("IP:127.0.0.1")));
    QVERIFY(makeTestCertificate(d, QStringLiteral("modality"), QStringLiteral("DNS:ct1.hospital.example")));
    const QString rogue = at(QStringLiteral("rogue"));  // a certificate from a CA the hospital does not use
    QVERIFY(QDir().mkpath(rogue));
    QVERIFY(makeTestCa(rogue));
    QVERIFY(makeTestCertificate(rogue, QStringLiteral("modality"), QStringLiteral("DNS:ct1.hospital.example")));
    const QString file = at(QStringLiteral("ct.dcm"));
    QVERIFY(writeFile(file, m_instances.first().bytes));

    StorageScp::Options options;
    options.aeTitle = QStringLiteral("SPECTRUMTLS");
    options.port = freePort();
    options.directory = at(QStringLiteral("received"));
    options.certificateFile = at(QStringLiteral("workstation.pem"));
    options.keyFile = at(QStringLiteral("workstation.key"));
    options.anyCaller = true;  // who may call is the certificates' to say here
    // storescu over TLS (anonymous, or with a certificate), checking our certificate against the hospital's CA.
    auto push = [&](const QStringList &tls) {
        return run(QStringLiteral(STORESCU_EXECUTABLE), tls + QStringList{QStringLiteral("+cf"), at(QStringLiteral("ca.pem")), QStringLiteral("-to"), QStringLiteral("10"),
                                                                          QStringLiteral("-aec"), options.aeTitle, QStringLiteral("127.0.0.1"), QString::number(options.port), file}, 60000);
    };
    const QStringList anonymous{QStringLiteral("+tla")};
    const QStringList asModality{QStringLiteral("+tls"), at(QStringLiteral("modality.key")), at(QStringLiteral("modality.pem"))};
    const QStringList asRogue{QStringLiteral("+tls"), rogue + QStringLiteral("/modality.key"), rogue + QStringLiteral("/modality.pem")};
    {
        StorageScp scp(options);
        const Error started = scp.start();
        QVERIFY2(!started.isError(), qPrintable(started.toString()));
        QSignalSpy received(&scp, &StorageScp::instanceReceived);
        const ProcessResult sent = push(anonymous);
        QVERIFY2(sent.ok(), sent.err.constData());
        QTRY_COMPARE(received.count(), 1);
        QCOMPARE(received.first().first().value<ReceivedInstance>().sopInstanceUid, m_instances.first().identity.sopInstanceUid);
        // Without TLS: refused, nothing arrives.
        const ProcessResult plain = run(QStringLiteral(STORESCU_EXECUTABLE), {QStringLiteral("-to"), QStringLiteral("10"), QStringLiteral("-aec"), options.aeTitle,
                                                                              QStringLiteral("127.0.0.1"), QString::number(options.port), file}, 60000);
        QVERIFY(!plain.ok());
        // Our own client, over TLS to our own SCP.
        DimseEndpoint ep;
        ep.host = QStringLiteral("127.0.0.1");
        ep.port = options.port;
        ep.calledAeTitle = options.aeTitle;
        ep.tls = true;
        ep.caFile = at(QStringLiteral("ca.pem"));
        ep.timeoutSeconds = 10;
        const Error echoed = runSync(DimseClient(ep).echo()).error();
        QVERIFY2(!echoed.isError(), qPrintable(echoed.toString()));
        QCOMPARE(received.count(), 1);
    }
    {
        // Client certificates required: only callers with one from the hospital's CA get through.
        options.clientCaFile = at(QStringLiteral("ca.pem"));
        StorageScp scp(options);
        const Error started = scp.start();
        QVERIFY2(!started.isError(), qPrintable(started.toString()));
        QSignalSpy received(&scp, &StorageScp::instanceReceived);
        QVERIFY(!push(anonymous).ok());
        QVERIFY(!push(asRogue).ok());
        const ProcessResult sent = push(asModality);
        QVERIFY2(sent.ok(), sent.err.constData());
        QTRY_COMPARE(received.count(), 1);
    }
    // Misconfigured: clear errors at start, naming what is wrong.
    StorageScp::Options broken = options;
    broken.keyFile = rogue + QStringLiteral("/modality.key");
    const Error mismatch = StorageScp(broken).start();
    QCOMPARE(mismatch.code(), ErrorCode::InvalidArgument);
    QVERIFY2(mismatch.toString().contains(QStringLiteral("does not belong")), qPrintable(mismatch.toString()));
    broken = options;
    broken.certificateFile.clear();
    broken.keyFile.clear();
    QCOMPARE(StorageScp(broken).start().code(), ErrorCode::InvalidArgument);  // a client CA without TLS

    // A PACS that requires client certificates (storescp's default with +tls): the workstation's is presented.
    const quint16 port = freePort();
    QProcess pacs;
    pacs.setProcessChannelMode(QProcess::MergedChannels);
    QVERIFY(makeTestCertificate(d, QStringLiteral("pacs"), QStringLiteral("IP:127.0.0.1")));
    pacs.start(QStringLiteral("storescp"), {QStringLiteral("+tls"), at(QStringLiteral("pacs.key")), at(QStringLiteral("pacs.pem")), QStringLiteral("+cf"),
                                            at(QStringLiteral("ca.pem")), QStringLiteral("-aet"), QStringLiteral("MTLSPACS"), QStringLiteral("-od"), d, QString::number(port)});
    QVERIFY(pacs.waitForStarted());
    auto stop = qScopeGuard([&] {
        pacs.kill();
        pacs.waitForFinished();
    });
    DimseEndpoint ep;
    ep.host = QStringLiteral("127.0.0.1");
    ep.port = port;
    ep.calledAeTitle = QStringLiteral("MTLSPACS");
    ep.tls = true;
    ep.caFile = at(QStringLiteral("ca.pem"));
    ep.timeoutSeconds = 10;
    ep.certificateFile = at(QStringLiteral("workstation.pem"));
    ep.keyFile = at(QStringLiteral("workstation.key"));
    Error echoed;
    QTRY_VERIFY2_WITH_TIMEOUT(!(echoed = runSync(DimseClient(ep).echo()).error()).isError(), qPrintable(echoed.toString() + QString::fromLocal8Bit(pacs.readAll())), 20000);
    DimseEndpoint anonymousEp = ep;
    anonymousEp.certificateFile.clear();
    anonymousEp.keyFile.clear();
    QVERIFY(runSync(DimseClient(anonymousEp).echo()).error().isError());
}

QTEST_GUILESS_MAIN(tst_Dimse)
#include "tst_dimse.moc"
