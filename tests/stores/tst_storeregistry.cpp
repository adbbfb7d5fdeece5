// The store configuration and the registry over every kind of store, against a real Orthanc (DICOMweb and
// DIMSE) started here, and spectrum-cli's archive commands run as a user would.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/derivedinstance.h"
#include "spectrum/imaging/dicomdecoder.h"
#include "spectrum/transfer/dicomweb.h"
#include "spectrum/stores/filestore.h"
#include "spectrum/stores/memorystore.h"
#include "spectrum/transfer/blobclient.h"
#include "spectrum/stores/storeconfig.h"
#include "spectrum/stores/storeregistry.h"
#include "spectrum/transfer/dimse.h"
#include "archives.h"
#include "testsupport.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace spectrum;
using namespace spectrum::test;

class tst_StoreRegistry : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void configRoundTripAndPrivacy();
    void configErrorsNameTheStoreAndField_data();
    void configErrorsNameTheStoreAndField();
    void sealedSecretsNeedTheirKey();
    void testEachKind();
    void findMergesAcrossStores();
    void conflictingPatientsAreNeverMerged();
    void fetchOverDicomWebIntoTheCache();
    void fetchOverDimseIntoAFolder();
    void firstLookFindsTheSliceAStackOpensAt();
    void brokenAnswersLeaveNothingHalfCached();
    void aStudyStreamsAtOnceAndGivesWayToSeriesRequests();
    void exportThenFindIt();
    void derivedInstanceGoesBackToTheArchive();
    void theNearestStoreComesFirst();
    void cliStoresAndFind();
    void cliFetchAndListen();

private:
    StoreConfigFile config(const QString &name);
    ProcessResult cli(const QStringList &arguments, const QString &configPath);

    QTemporaryDir m_dir;
    OrthancProcess m_orthanc;
    QList<DemoInstance> m_instances;
    const QString m_ourAe = QStringLiteral("SPECTRUMREG");
    quint16 m_scpPort = 0;
};

namespace {
const QString kUser = QStringLiteral("reader");
const QString kPassword = QStringLiteral("pa55-w0rd-x");
} // namespace

StoreConfigFile tst_StoreRegistry::config(const QString &name)
{
    Result<StoreConfigFile> f = StoreConfigFile::load(m_dir.filePath(name + QStringLiteral("/stores.json")));
    if (!f.isOk())
        qFatal("%s", qPrintable(f.error().toString()));
    StoreConfigFile c = f.value();
    c.workstation.aeTitle = m_ourAe;
    StoreConfig web = dicomWebStore(QStringLiteral("web"), m_orthanc.dicomWebUrl());
    web.auth = QStringLiteral("basic");
    web.user = kUser;
    web.password = c.seal(kPassword).value();
    const StoreConfig pacs = dimseStore(QStringLiteral("pacs"), m_orthanc.dicomPort(), m_orthanc.aeTitle());
    for (const StoreConfig &s : {web, pacs}) {
        if (Error e = c.add(s); e.isError())
            qFatal("%s", qPrintable(e.toString()));
    }
    return c;
}

ProcessResult tst_StoreRegistry::cli(const QStringList &arguments, const QString &configPath)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_CONFIG"), configPath);
    env.insert(QStringLiteral("SPECTRUM_CACHE_DIR"), m_dir.filePath(QStringLiteral("cli-cache")));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), arguments);
    ProcessResult r;
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

void tst_StoreRegistry::initTestCase()
{
    QVERIFY2(QFile::exists(QStringLiteral(ORTHANC_EXECUTABLE)), "Orthanc is not installed (make test installs it)");
    m_scpPort = freePort();
    OrthancProcess::Options options;
    options.users = {{kUser, kPassword}};
    options.modalities = {{m_ourAe, QStringLiteral("127.0.0.1"), m_scpPort}};
    QVERIFY(m_orthanc.start(options));
    DemoOptions demo;
    demo.ctSlices = 6;
    demo.mrSlices = 3;
    QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) { m_instances << std::move(i); return Error(); }).isError());
    for (const DemoInstance &i : m_instances)
        QVERIFY(!m_orthanc.upload(i.bytes).isEmpty());
}

void tst_StoreRegistry::configRoundTripAndPrivacy()
{
    StoreConfigFile c = config(QStringLiteral("roundtrip"));
    QCOMPARE(c.save(), Error());
    const QString path = c.path();
    struct stat st{};
    QCOMPARE(::stat(QFile::encodeName(path).constData(), &st), 0);
    QCOMPARE(st.st_mode & 0777, mode_t(0600));  // owner only
    QCOMPARE(::stat(QFile::encodeName(QFileInfo(path).absolutePath() + QStringLiteral("/secret.key")).constData(), &st), 0);
    QCOMPARE(st.st_mode & 0777, mode_t(0600));
    QVERIFY(!readFile(path).contains(kPassword.toUtf8()));  // never in clear
    Result<StoreConfigFile> again = StoreConfigFile::load(path);
    QVERIFY2(again.isOk(), qPrintable(again.error().toString()));
    QCOMPARE(again.value().stores().size(), 2);
    QCOMPARE(again.value().workstation.aeTitle, m_ourAe);
    const StoreConfig *web = again.value().find(QStringLiteral("web"));
    QVERIFY(web);
    QCOMPARE(again.value().reveal(web->password).value(), kPassword);
    QCOMPARE(again.value().find(QStringLiteral("pacs"))->port, int(m_orthanc.dicomPort()));
    // The workstation's DICOM TLS identity: kept, and given to DIMSE stores that use TLS (and only to those).
    StoreConfigFile withTls = again.value();
    const QString cert = m_dir.filePath(QStringLiteral("ws.pem")), key = m_dir.filePath(QStringLiteral("ws.key"));
    QVERIFY(writeFile(cert, "certificate") && writeFile(key, "key"));
    withTls.workstation.tlsCertificate = cert;
    withTls.workstation.tlsKey = key;
    QCOMPARE(withTls.save(), Error());
    Result<StoreConfigFile> tlsAgain = StoreConfigFile::load(path);
    QVERIFY2(tlsAgain.isOk(), qPrintable(tlsAgain.error().toString()));
    QCOMPARE(tlsAgain.value().workstation.tlsCertificate, cert);
    QCOMPARE(tlsAgain.value().workstation.tlsKey, key);
    QVERIFY(tlsAgain.value().workstation.tlsClientCa.isEmpty());
    StoreConfig pacs = *tlsAgain.value().find(QStringLiteral("pacs"));
    QVERIFY(dimseEndpointFor(pacs, tlsAgain.value()).value().certificateFile.isEmpty());
    pacs.tls = true;
    QCOMPARE(dimseEndpointFor(pacs, tlsAgain.value()).value().certificateFile, cert);
    QCOMPARE(dimseEndpointFor(pacs, tlsAgain.value()).value().keyFile, key);
    QCOMPARE(c.save(), Error());
    // A missing file is an empty configuration.
    QVERIFY(StoreConfigFile::load(m_dir.filePath(QStringLiteral("none/stores.json"))).value().stores().isEmpty());
}

void tst_StoreRegistry::configErrorsNameTheStoreAndField_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("not json") << QByteArray("{ stores: [") << QStringLiteral("JSON");
    QTest::newRow("unknown kind") << QByteArray(R"({"stores":[{"name":"a","kind":"ftp"}]})") << QStringLiteral("ftp");
    QTest::newRow("clear password") << QByteArray(R"({"stores":[{"name":"w","kind":"dicomweb","url":"http://h/dw","auth":"basic","user":"u","password":"plain"}]})")
                                    << QStringLiteral("in clear");
    QTest::newRow("bad port") << QByteArray(R"({"stores":[{"name":"p","kind":"dimse","host":"h","port":70000,"aeTitle":"X"}]})") << QStringLiteral("port");
    QTest::newRow("long AE") << QByteArray(R"({"stores":[{"name":"p","kind":"dimse","host":"h","port":104,"aeTitle":"SEVENTEEN_CHARS_X"}]})")
                             << QStringLiteral("aeTitle");
    QTest::newRow("url credentials") << QByteArray(R"({"stores":[{"name":"w","kind":"dicomweb","url":"http://u:p@h/dw"}]})") << QStringLiteral("credentials");
    QTest::newRow("unknown field") << QByteArray(R"({"stores":[{"name":"w","kind":"local","colour":"red"}]})") << QStringLiteral("colour");
    QTest::newRow("duplicate") << QByteArray(R"({"stores":[{"name":"w","kind":"local"},{"name":"w","kind":"local"}]})") << QStringLiteral("two stores");
    QTest::newRow("bad name") << QByteArray(R"({"stores":[{"name":"../x","kind":"local"}]})") << QStringLiteral("name");
    QTest::newRow("tls without key") << QByteArray(R"({"workstation":{"tls":{"certificate":"/etc/passwd"}}})") << QStringLiteral("tls");
    QTest::newRow("tls unreadable") << QByteArray(R"({"workstation":{"tls":{"certificate":"/nonexistent.pem","key":"/etc/passwd"}}})")
                                    << QStringLiteral("/nonexistent.pem");
    QTest::newRow("tls unknown field") << QByteArray(R"({"workstation":{"tls":{"certificate":"/etc/passwd","key":"/etc/passwd","pin":"1"}}})")
                                       << QStringLiteral("pin");
}

void tst_StoreRegistry::configErrorsNameTheStoreAndField()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, mentions);
    const QString path = m_dir.filePath(QStringLiteral("bad-%1.json").arg(QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('-'))));
    QVERIFY(writeFile(path, json));
    Result<StoreConfigFile> c = StoreConfigFile::load(path);
    QVERIFY(!c.isOk());
    QVERIFY2(c.error().toString().contains(mentions), qPrintable(c.error().toString()));
}

void tst_StoreRegistry::sealedSecretsNeedTheirKey()
{
    StoreConfigFile c = config(QStringLiteral("sealed"));
    QCOMPARE(c.save(), Error());
    QVERIFY(QFile::remove(QFileInfo(c.path()).absolutePath() + QStringLiteral("/secret.key")));
    const Result<StoreConfigFile> loaded = StoreConfigFile::load(c.path());
    QVERIFY2(loaded.isOk(), qPrintable(loaded.error().toString()));
    const StoreConfigFile &reloaded = loaded.value();
    QVERIFY(reloaded.find(QStringLiteral("web")));
    const Result<QString> r = reloaded.reveal(reloaded.find(QStringLiteral("web"))->password);
    QVERIFY(!r.isOk());
    QVERIFY(r.error().toString().contains(QStringLiteral("secret.key")));
    Secret env;
    env.source = Secret::Source::Env;
    env.value = QStringLiteral("SPECTRUM_TEST_SECRET");
    qputenv("SPECTRUM_TEST_SECRET", "from-env");
    QCOMPARE(reloaded.reveal(env).value(), QStringLiteral("from-env"));
}

void tst_StoreRegistry::testEachKind()
{
    StoreConfigFile c = config(QStringLiteral("test"));
    StoreConfig wrong = dicomWebStore(QStringLiteral("wrong-password"), m_orthanc.dicomWebUrl());
    wrong.auth = QStringLiteral("basic");
    wrong.user = kUser;
    wrong.password = c.seal(QStringLiteral("nope")).value();
    QCOMPARE(c.add(wrong), Error());
    QCOMPARE(c.add(dimseStore(QStringLiteral("down"), freePort(), QStringLiteral("NOBODY"))), Error());
    StoreRegistry reg(c, nullptr);
    QCOMPARE(runSync(reg.test(QStringLiteral("web"))).error(), Error());
    QCOMPARE(runSync(reg.test(QStringLiteral("pacs"))).error(), Error());
    QCOMPARE(runSync(reg.test(QStringLiteral("wrong-password"))).error().code(), ErrorCode::Authentication);
    QCOMPARE(runSync(reg.test(QStringLiteral("down"))).error().code(), ErrorCode::Network);
    QCOMPARE(runSync(reg.test(QStringLiteral("missing"))).error().code(), ErrorCode::NotFound);
}

void tst_StoreRegistry::findMergesAcrossStores()
{
    StoreRegistry reg(config(QStringLiteral("find")), nullptr);
    QSignalSpy answered(&reg, &StoreRegistry::storeAnswered);
    Result<QList<StudyHit>> hits = runSync(reg.findStudies(DicomQuery()));
    QVERIFY2(hits.isOk(), qPrintable(hits.error().toString()));
    QCOMPARE(answered.count(), 2);
    QCOMPARE(hits.value().size(), 3);  // each study once, found in both stores
    for (const StudyHit &h : hits.value()) {
        QCOMPARE(QSet<QString>(h.stores.begin(), h.stores.end()), (QSet<QString>{QStringLiteral("web"), QStringLiteral("pacs")}));
        QVERIFY(h.conflicts.isEmpty());
    }
    DicomQuery mr;
    mr.modality = QStringLiteral("MR");
    hits = runSync(reg.findStudies(mr, {QStringLiteral("pacs")}));
    QVERIFY(hits.isOk());
    QCOMPARE(hits.value().size(), 1);
    QCOMPARE(hits.value().first().study.identity.studyInstanceUid, DemoArchive::studyUid(DemoStudy::HeadMr));
}

void tst_StoreRegistry::conflictingPatientsAreNeverMerged()
{
    // The local cache holds an instance of the MR study under another patient ID.
    const QString cacheDir = m_dir.filePath(QStringLiteral("conflict-cache"));
    const QString file = m_dir.filePath(QStringLiteral("other-patient.dcm"));
    QByteArray mr;
    for (const DemoInstance &i : m_instances) {
        if (i.identity.modality == QLatin1String("MR"))
            mr = i.bytes;
    }
    QVERIFY(writeFile(file, mr));
    const ProcessResult modified = run(QStringLiteral(DCMODIFY_EXECUTABLE), {QStringLiteral("-nb"), QStringLiteral("-m"), QStringLiteral("(0010,0020)=SOMEONE-ELSE"), file});
    QVERIFY2(modified.ok(), modified.err.constData());
    StoreConfigFile c = config(QStringLiteral("conflict"));
    StoreConfig local;
    local.name = QStringLiteral("usb");
    local.kind = StoreKind::Local;
    local.path = cacheDir;
    QCOMPARE(c.add(local), Error());
    {
        auto store = FileStore::open(cacheDir, 0);
        QVERIFY(store.isOk());
    }
    StoreRegistry reg(c, nullptr);
    Result<ExportSummary> imported = runSync(reg.exportFiles(QStringLiteral("usb"), {file}));
    QVERIFY2(imported.isOk() && imported.value().failed.isEmpty(), imported.isOk() ? "" : qPrintable(imported.error().toString()));
    DicomQuery q;
    q.modality = QStringLiteral("MR");
    Result<QList<StudyHit>> hits = runSync(reg.findStudies(q, {QStringLiteral("web"), QStringLiteral("usb")}));
    QVERIFY2(hits.isOk(), qPrintable(hits.error().toString()));
    QCOMPARE(hits.value().size(), 2);  // the same Study Instance UID, two patients: two rows, both flagged
    for (const StudyHit &h : hits.value()) {
        QCOMPARE(h.study.identity.studyInstanceUid, DemoArchive::studyUid(DemoStudy::HeadMr));
        QCOMPARE(h.conflicts.size(), 1);
        QVERIFY(h.conflicts.first().contains(QStringLiteral("SOMEONE-ELSE")));
    }
}

void tst_StoreRegistry::fetchOverDicomWebIntoTheCache()
{
    const QString cacheDir = m_dir.filePath(QStringLiteral("fetch-cache"));
    auto opened = FileStore::open(cacheDir, 0);
    QVERIFY(opened.isOk());
    std::shared_ptr<FileStore> cache(opened.takeValue());
    StoreRegistry reg(config(QStringLiteral("fetch")), cache);
    QSignalSpy fetched(&reg, &StoreRegistry::instanceFetched);
    Result<FetchSummary> r = runSync(reg.fetchStudy(QStringLiteral("web"), DemoArchive::studyUid(DemoStudy::HeadCt)));
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(r.value().instances, 6);
    QCOMPARE(r.value().rejected, 0);
    QVERIFY(r.value().firstInstanceSeconds >= 0 && r.value().firstInstanceSeconds <= r.value().seconds);
    QCOMPARE(fetched.count(), 6);
    for (const DemoInstance &i : m_instances) {
        if (i.identity.modality != QLatin1String("CT"))
            continue;
        Result<BlobSnapshot> s = runSync(cache->snapshot(i.identity.sopInstanceUid));
        QVERIFY(s.isOk());
        QVERIFY(s.value().bytes.toByteArray() == i.bytes);  // byte for byte, indexed with its identity
        QCOMPARE(s.value().info.dicom, i.identity);
    }
    // A study the store does not have: a clear error, nothing cached.
    Result<FetchSummary> missing = runSync(reg.fetchStudy(QStringLiteral("web"), QStringLiteral("1.2.3.999")));
    QCOMPARE(missing.error().code(), ErrorCode::NotFound);
}

// Two small queries find the instance a stack opens at (Instance Number n / 2 + 1 of the first series), over
// QIDO-RS and C-FIND alike, and it is the one the whole listing puts in the middle.
void tst_StoreRegistry::firstLookFindsTheSliceAStackOpensAt()
{
    StoreRegistry reg(config(QStringLiteral("first-look")), nullptr);
    const QString ct = DemoArchive::studyUid(DemoStudy::HeadCt);
    Result<StudySummary> listed = runSync(reg.listStudy(QStringLiteral("web"), ct));
    QVERIFY(listed.isOk());
    const InstanceRef middle = listed.value().series[0].instances[listed.value().series[0].instances.size() / 2];
    for (const QString &store : {QStringLiteral("web"), QStringLiteral("pacs")}) {
        Result<StudySummary> look = runSync(reg.firstLook(store, ct));
        QVERIFY2(look.isOk(), qPrintable(store + QStringLiteral(": ") + look.error().toString()));
        QCOMPARE(look.value().series.size(), 1);
        QCOMPARE(look.value().series[0].seriesInstanceUid, listed.value().series[0].seriesInstanceUid);
        QCOMPARE(look.value().series[0].instances.size(), 1);
        QCOMPARE(look.value().series[0].instances[0].sopInstanceUid, middle.sopInstanceUid);
        QCOMPARE(look.value().series[0].instances[0].instanceNumber, 6 / 2 + 1);
        QVERIFY2(look.value().identity.patientId == listed.value().identity.patientId, qPrintable(store));
    }
    QCOMPARE(runSync(reg.firstLook(QStringLiteral("web"), QStringLiteral("1.2.3.999"))).error().code(), ErrorCode::NotFound);
}

void tst_StoreRegistry::fetchOverDimseIntoAFolder()
{
    StoreRegistry reg(config(QStringLiteral("fetch-dimse")), nullptr);
    const QString out = m_dir.filePath(QStringLiteral("fetched"));
    Result<FetchSummary> r = runSync(reg.fetchStudy(QStringLiteral("pacs"), DemoArchive::studyUid(DemoStudy::HeadMr), FetchOptions::into(out)));
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(r.value().instances, 3);
    for (const QString &uid : r.value().sopInstanceUids) {
        Result<DecodedImage> img = decodeDicomFile(QDir(out).filePath(uid + QStringLiteral(".dcm")));
        QVERIFY2(img.isOk(), qPrintable(img.error().toString()));
    }
    QCOMPARE(QDir(out).entryList(QDir::Files).size(), 3);  // nothing else left behind
}

void tst_StoreRegistry::brokenAnswersLeaveNothingHalfCached()
{
    // A "PACS" (nginx with crafted answers) whose study holds a good instance, a part that is not DICOM, an
    // instance of another study, and a second series cut off in the middle of an instance.
    const DemoInstance *ct = nullptr, *mr = nullptr;
    for (const DemoInstance &i : m_instances) {
        if (i.identity.modality == QLatin1String("CT"))
            ct = &i;
        if (i.identity.modality == QLatin1String("MR"))
            mr = &i;
    }
    QVERIFY(ct && mr);
    const QString study = ct->identity.studyInstanceUid;
    NginxProcess nginx;
    const QString d = nginx.directory();
    auto part = [](const QByteArray &bytes) { return "--b\r\nContent-Type: application/dicom\r\n\r\n" + bytes + "\r\n"; };
    QVERIFY(writeFile(d + QStringLiteral("/series1"), part(ct->bytes) + part("not DICOM at all") + part(mr->bytes) + "--b--\r\n"));
    QVERIFY(writeFile(d + QStringLiteral("/series2"), part(m_instances.at(1).bytes).left(m_instances.at(1).bytes.size() / 2)));
    const QByteArray series = QStringLiteral(R"([{"0020000D":{"vr":"UI","Value":["%1"]},"0020000E":{"vr":"UI","Value":["1.2.3.1"]},"00201209":{"vr":"IS","Value":[3]}},
                                                {"0020000D":{"vr":"UI","Value":["%1"]},"0020000E":{"vr":"UI","Value":["1.2.3.2"]},"00201209":{"vr":"IS","Value":[1]}}])").arg(study).toUtf8();
    QVERIFY(writeFile(d + QStringLiteral("/series.json"), series));
    const quint16 port = freePort();
    const QString mp = QStringLiteral("'multipart/related; type=\"application/dicom\"; boundary=b'");
    QVERIFY(nginx.start(QStringLiteral("server { listen 127.0.0.1:%1;\n"
                                       "  location = /dw/studies/%3/series { default_type application/dicom+json; alias %2/series.json; }\n"
                                       "  location = /dw/studies/%3/series/1.2.3.1 { default_type %4; alias %2/series1; }\n"
                                       "  location = /dw/studies/%3/series/1.2.3.2 { default_type %4; alias %2/series2; }\n"
                                       "}\n").arg(port).arg(d, study, mp), port));
    StoreConfigFile c = StoreConfigFile::load(m_dir.filePath(QStringLiteral("broken/stores.json"))).value();
    QCOMPARE(c.add(dicomWebStore(QStringLiteral("flaky"), QStringLiteral("http://127.0.0.1:%1/dw").arg(port))), Error());
    auto opened = FileStore::open(m_dir.filePath(QStringLiteral("broken-cache")), 0);
    QVERIFY(opened.isOk());
    std::shared_ptr<FileStore> cache(opened.takeValue());
    StoreRegistry reg(c, cache);
    Result<FetchSummary> r = runSync(reg.fetchStudy(QStringLiteral("flaky"), study));
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(r.value().instances, 1);   // only the good one
    QCOMPARE(r.value().rejected, 1);    // the other study's instance
    QVERIFY2(r.value().problems.size() >= 3, qPrintable(r.value().problems.join(QLatin1Char('\n'))));  // not DICOM, other study, cut off
    const QList<BlobInfo> cached = runSync(cache->query(BlobQuery())).value();
    QCOMPARE(cached.size(), 1);
    QCOMPARE(cached.first().key, ct->identity.sopInstanceUid);
    QVERIFY(runSync(cache->snapshot(ct->identity.sopInstanceUid)).value().bytes.toByteArray() == ct->bytes);
}

// A study is asked for as one stream at once, with its series listed beside it: when the list has several series
// and parallel requests are allowed, the stream gives way to one request per series (the stream here is slowed
// down so that it is still running then); with one series, or maxParallel 1, the stream brings it all. Either way
// every instance is kept and counted once. (nginx serves crafted answers and logs the requests.)
void tst_StoreRegistry::aStudyStreamsAtOnceAndGivesWayToSeriesRequests()
{
    DemoOptions demo;
    demo.studies = {DemoStudy::HeadCt, DemoStudy::HeadMr};
    demo.ctSlices = 4;
    demo.ctSlabSlices = 2;  // a second series: two thick slices
    demo.mrSlices = 2;
    QList<DemoInstance> instances;
    QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) { instances << std::move(i); return Error(); }).isError());
    QMap<QString, QMap<QString, QList<QByteArray>>> studies;  // study → series → instances
    for (const DemoInstance &i : instances)
        studies[i.identity.studyInstanceUid][i.identity.seriesInstanceUid] << i.bytes;
    QString ct, mr;
    for (auto it = studies.cbegin(); it != studies.cend(); ++it)
        (it.value().size() == 2 ? ct : mr) = it.key();
    QVERIFY(!ct.isEmpty() && !mr.isEmpty() && studies[mr].size() == 1);

    NginxProcess nginx;
    const QString d = nginx.directory();
    auto part = [](const QByteArray &bytes) { return "--b\r\nContent-Type: application/dicom\r\n\r\n" + bytes + "\r\n"; };
    const QString mp = QStringLiteral("'multipart/related; type=\"application/dicom\"; boundary=b'");
    const quint16 slow = freePort(), fast = freePort();
    QString locations[2];  // slow, fast
    for (auto study = studies.cbegin(); study != studies.cend(); ++study) {
        QByteArray whole, list = "[";
        for (auto series = study.value().cbegin(); series != study.value().cend(); ++series) {
            QByteArray body;
            for (const QByteArray &bytes : series.value())
                body += part(bytes);
            whole += body;
            const QString file = QStringLiteral("/%1").arg(series.key());
            QVERIFY(writeFile(d + file, body + "--b--\r\n"));
            if (list.size() > 1)
                list += ',';
            list += QStringLiteral(R"({"0020000D":{"vr":"UI","Value":["%1"]},"0020000E":{"vr":"UI","Value":["%2"]},"00201209":{"vr":"IS","Value":[%3]}})")
                        .arg(study.key(), series.key()).arg(series.value().size()).toUtf8();
            for (QString &l : locations)
                l += QStringLiteral("  location = /dw/studies/%1/series/%2 { default_type %3; alias %4%5; }\n").arg(study.key(), series.key(), mp, d, file);
        }
        QVERIFY(writeFile(d + QStringLiteral("/") + study.key(), whole + "--b--\r\n"));
        QVERIFY(writeFile(d + QStringLiteral("/") + study.key() + QStringLiteral(".json"), list + "]"));
        for (int i = 0; i < 2; ++i) {
            locations[i] += QStringLiteral("  location = /dw/studies/%1 { default_type %2; alias %3/%1; %4}\n"
                                           "  location = /dw/studies/%1/series { default_type application/dicom+json; alias %3/%1.json; }\n")
                                .arg(study.key(), mp, d, i == 0 ? QStringLiteral("limit_rate 32k; ") : QString());
        }
    }
    QVERIFY(nginx.start(QStringLiteral("server { listen 127.0.0.1:%1; access_log %3/slow.log;\n%4}\n"
                                       "server { listen 127.0.0.1:%2; access_log %3/fast.log;\n%5}\n")
                            .arg(slow).arg(fast).arg(d, locations[0], locations[1]), slow));
    auto fetch = [&](quint16 port, int maxParallel, const QString &study) -> Result<FetchSummary> {
        StoreConfigFile c = StoreConfigFile::load(m_dir.filePath(QStringLiteral("giveway-%1-%2/stores.json").arg(port).arg(maxParallel))).value();
        StoreConfig web = dicomWebStore(QStringLiteral("web"), QStringLiteral("http://127.0.0.1:%1/dw").arg(port));
        web.maxParallel = maxParallel;
        if (Error e = c.add(web); e.isError())
            return e;
        auto opened = FileStore::open(m_dir.filePath(QStringLiteral("giveway-cache-%1-%2-%3").arg(port).arg(maxParallel).arg(study)), 0);
        if (!opened.isOk())
            return opened.error();
        std::shared_ptr<FileStore> cache(opened.takeValue());
        StoreRegistry reg(c, cache);
        Result<FetchSummary> r = runSync(reg.fetchStudy(QStringLiteral("web"), study));
        if (r.isOk() && cache->usage().blobs != r.value().instances)
            return Error(ErrorCode::Internal, QStringLiteral("%1 counted, %2 cached").arg(r.value().instances).arg(cache->usage().blobs));
        return r;
    };
    auto requests = [&](const QString &log, const QString &path) {
        return QString::fromUtf8(readFile(d + QLatin1Char('/') + log)).count(QStringLiteral("GET /dw/studies/") + path + QStringLiteral(" HTTP"));
    };

    // Two series, parallel requests allowed: the slowed stream gives way to both series.
    Result<FetchSummary> r = fetch(slow, 6, ct);
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(r.value().instances, 6);
    QCOMPARE(r.value().sopInstanceUids.size(), 6);
    for (const QString &series : studies[ct].keys())
        QTRY_COMPARE(requests(QStringLiteral("slow.log"), ct + QStringLiteral("/series/") + series), 1);
    // The stream was dropped: nginx logs it once it notices — or never, if the drop came before its request left
    // (a busy machine: the series list can be back first). Never asked for twice either way.
    QVERIFY(requests(QStringLiteral("slow.log"), ct) <= 1);

    // One request at a time: the stream brings both series; nothing is asked for twice.
    r = fetch(fast, 1, ct);
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(r.value().instances, 6);
    QTRY_COMPARE(requests(QStringLiteral("fast.log"), ct), 1);
    for (const QString &series : studies[ct].keys())
        QCOMPARE(requests(QStringLiteral("fast.log"), ct + QStringLiteral("/series/") + series), 0);

    // One series: the stream is all it takes.
    r = fetch(fast, 6, mr);
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(r.value().instances, 2);
    QTRY_COMPARE(requests(QStringLiteral("fast.log"), mr), 1);
    QCOMPARE(requests(QStringLiteral("fast.log"), mr + QStringLiteral("/series/") + studies[mr].firstKey()), 0);
}

void tst_StoreRegistry::exportThenFindIt()
{
    DemoOptions other;
    other.studies = {DemoStudy::ChestCr};
    QList<DemoInstance> cr;
    QVERIFY(!DemoArchive::generate(other, [&](DemoInstance &&i) { cr << std::move(i); return Error(); }).isError());
    // A copy under a new study, so that both exports are really new to the PACS.
    const QString file = m_dir.filePath(QStringLiteral("export.dcm"));
    QVERIFY(writeFile(file, cr.first().bytes));
    QVERIFY(run(QStringLiteral(DCMODIFY_EXECUTABLE), {QStringLiteral("-nb"), QStringLiteral("-m"), QStringLiteral("(0020,000d)=1.2.826.0.1.3680043.2.1125.77.1"),
                                                     QStringLiteral("-m"), QStringLiteral("(0008,0018)=1.2.826.0.1.3680043.2.1125.77.2"), file})
                .ok());
    StoreRegistry reg(config(QStringLiteral("export")), nullptr);
    Result<ExportSummary> viaWeb = runSync(reg.exportFiles(QStringLiteral("web"), {file}));
    QVERIFY2(viaWeb.isOk(), qPrintable(viaWeb.error().toString()));
    QCOMPARE(viaWeb.value().stored, QStringList{QStringLiteral("1.2.826.0.1.3680043.2.1125.77.2")});
    DicomQuery q;
    q.studyInstanceUid = QStringLiteral("1.2.826.0.1.3680043.2.1125.77.1");
    Result<QList<StudyHit>> hits = runSync(reg.findStudies(q));
    QVERIFY(hits.isOk());
    QCOMPARE(hits.value().size(), 1);
    QCOMPARE(hits.value().first().stores.size(), 2);  // found by QIDO and by C-FIND
    Result<ExportSummary> viaDimse = runSync(reg.exportFiles(QStringLiteral("pacs"), {file, m_dir.filePath(QStringLiteral("does-not-exist.dcm"))}));
    QVERIFY(viaDimse.isOk());
    QCOMPARE(viaDimse.value().stored.size(), 1);
    QCOMPARE(viaDimse.value().failed.size(), 1);
}

void tst_StoreRegistry::derivedInstanceGoesBackToTheArchive()
{
    const DemoInstance *ct = nullptr;
    for (const DemoInstance &i : m_instances) {
        if (i.identity.modality == QLatin1String("CT") && i.identity.instanceNumber == 3)
            ct = &i;
    }
    QVERIFY(ct);
    // "Processing": an inversion of the stored values within their range, at native depth.
    Result<DecodedImage> decoded = decodeDicom(ByteView(ct->bytes));
    QVERIFY(decoded.isOk());
    PixelBuffer processed = decoded.value().pixels;
    int lo = 0, hi = 0;
    processed.minMax(0, &lo, &hi);
    QCOMPARE(processed.format(), PixelFormat::Gray16);  // the demo CT: unsigned with a rescale to HU
    auto *v = reinterpret_cast<quint16 *>(processed.frameData(0));
    for (qsizetype i = 0; i < processed.frameBytes() / 2; ++i)
        v[i] = quint16(lo + hi - v[i]);
    Derivation d;
    d.description = QStringLiteral("invert (test)");
    Result<DerivedInstance> derived = makeDerivedInstance(ByteView(ct->bytes), processed, d);
    QVERIFY2(derived.isOk(), qPrintable(derived.error().toString()));
    const DicomIdentity &id = derived.value().identity;
    QCOMPARE(id.patientId, ct->identity.patientId);
    QCOMPARE(id.studyInstanceUid, ct->identity.studyInstanceUid);
    QVERIFY(id.seriesInstanceUid != ct->identity.seriesInstanceUid && id.seriesInstanceUid.startsWith(QStringLiteral("2.25.")));
    QVERIFY(id.sopInstanceUid != ct->identity.sopInstanceUid && id.sopInstanceUid.startsWith(QStringLiteral("2.25.")));
    QCOMPARE(id.sopClassUid, ct->identity.sopClassUid);  // a derived CT is still a CT
    const QString file = m_dir.filePath(QStringLiteral("derived.dcm"));
    QVERIFY(writeFile(file, derived.value().bytes));
    QVERIFY2(run(QStringLiteral(DCMDUMP_EXECUTABLE), {file}).ok(), "dcmdump does not accept the derived instance");

    StoreConfigFile c = config(QStringLiteral("derived"));
    StoreRegistry reg(c, nullptr);
    Result<ExportSummary> sent = runSync(reg.exportFiles(QStringLiteral("web"), {file}));
    QVERIFY2(sent.isOk() && sent.value().failed.isEmpty(), sent.isOk() ? "" : qPrintable(sent.error().toString()));
    // Found by QIDO and by C-FIND as a new series of the same study.
    DicomWebClient web(dicomWebEndpointFor(*c.find(QStringLiteral("web")), c).value());
    DimseClient pacs(dimseEndpointFor(*c.find(QStringLiteral("pacs")), c).value());
    DicomQuery series;
    series.level = QueryLevel::Series;
    series.studyInstanceUid = id.studyInstanceUid;
    for (const Result<QList<DicomRecord>> &r : {runSync(web.search(series)), runSync(pacs.find(series))}) {
        QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
        QSet<QString> uids;
        for (const DicomRecord &rec : r.value())
            uids.insert(rec.identity.seriesInstanceUid);
        QVERIFY(uids.contains(id.seriesInstanceUid) && uids.contains(ct->identity.seriesInstanceUid));
    }
    // Retrieved: the pixels are what was sent; the metadata says what it is and where it comes from.
    QByteArray back;
    RetrieveCallbacks cb;
    cb.complete = [&](const WadoPart &, const ByteView &whole) { back = whole.toByteArray(); return Error(); };
    QVERIFY(runSync(web.retrieve(id.studyInstanceUid, id.seriesInstanceUid, id.sopInstanceUid, cb)).isOk());
    Result<DecodedImage> again = decodeDicom(ByteView(back));
    QVERIFY2(again.isOk(), qPrintable(again.error().toString()));
    QCOMPARE(again.value().pixels.format(), PixelFormat::Gray16);
    QVERIFY(std::memcmp(again.value().pixels.frameData(0), processed.frameData(0), size_t(processed.frameBytes())) == 0);
    Result<QJsonArray> meta = runSync(web.metadata(id.studyInstanceUid, id.seriesInstanceUid, id.sopInstanceUid));
    QVERIFY(meta.isOk());
    const QJsonObject m = meta.value().first().toObject();
    // DERIVED\SECONDARY, then what the original said of itself (the demo CT: AXIAL).
    QCOMPARE(dicomjson::strings(m, "00080008"), (QStringList{QStringLiteral("DERIVED"), QStringLiteral("SECONDARY"), QStringLiteral("AXIAL")}));
    QCOMPARE(dicomjson::string(m, "00082111"), d.description);
    const QJsonObject source = m.value(QStringLiteral("00082112")).toObject().value(QStringLiteral("Value")).toArray().first().toObject();
    QCOMPARE(dicomjson::string(source, "00081155"), ct->identity.sopInstanceUid);
    // The reference resolves: the original is in the archive.
    DicomQuery original;
    original.level = QueryLevel::Instance;
    original.studyInstanceUid = ct->identity.studyInstanceUid;
    original.seriesInstanceUid = ct->identity.seriesInstanceUid;
    bool found = false;
    const Result<QList<DicomRecord>> originals = runSync(web.search(original));
    QVERIFY(originals.isOk());
    for (const DicomRecord &r : originals.value())
        found = found || r.identity.sopInstanceUid == dicomjson::string(source, "00081155");
    QVERIFY(found);
    // And by C-STORE too.
    Result<ExportSummary> viaDimse = runSync(reg.exportFiles(QStringLiteral("pacs"), {file}));
    QVERIFY(viaDimse.isOk());
    QCOMPARE(viaDimse.value().stored, QStringList{id.sopInstanceUid});
}

// Location independence: a study held in several places is opened from the nearest — the cluster (blobd
// stores) before the central archives, these in the configuration's order — and lands in the disk cache.
void tst_StoreRegistry::theNearestStoreComesFirst()
{
    BlobdProcess blobd(m_dir.filePath(QStringLiteral("cluster-root")));
    QVERIFY(blobd.start());
    StoreConfigFile c = config(QStringLiteral("nearest"));
    StoreConfig cluster;
    cluster.name = QStringLiteral("cluster");
    cluster.kind = StoreKind::Blobd;
    cluster.url = QStringLiteral("blob://127.0.0.1:%1").arg(blobd.port());
    cluster.token = c.seal(blobd.token()).value();
    QCOMPARE(c.add(cluster), Error());
    auto opened = FileStore::open(m_dir.filePath(QStringLiteral("nearest-cache")), 0);
    QVERIFY(opened.isOk());
    std::shared_ptr<FileStore> disk(opened.takeValue());
    StoreRegistry reg(c, disk);
    QCOMPARE(reg.nearestFirst({QStringLiteral("pacs"), QStringLiteral("cluster"), QStringLiteral("web")}),
             (QStringList{QStringLiteral("cluster"), QStringLiteral("web"), QStringLiteral("pacs")}));
    QCOMPARE(reg.nearestFirst({QStringLiteral("pacs"), QStringLiteral("nowhere")}), QStringList{QStringLiteral("pacs")});

    // The cluster serves a study as the archives do: into the disk cache, checked.
    const DemoInstance *mr = nullptr;
    for (const DemoInstance &i : m_instances) {
        if (i.identity.modality == QLatin1String("MR") && i.identity.instanceNumber == 2)
            mr = &i;
    }
    QVERIFY(mr);
    BlobClient pusher(blobEndpointFor(cluster, c).value());
    QVERIFY(runSync(pusher.push(mr->identity.sopInstanceUid, ByteView(mr->bytes))).isOk());
    Result<FetchSummary> fetched = runSync(reg.fetchStudy(QStringLiteral("cluster"), mr->identity.studyInstanceUid));
    QVERIFY2(fetched.isOk(), qPrintable(fetched.error().toString()));
    QCOMPARE(fetched.value().sopInstanceUids, QStringList{mr->identity.sopInstanceUid});
    Result<ByteView> cached = runSync(disk->read(mr->identity.sopInstanceUid));
    QVERIFY(cached.isOk());
    QVERIFY(cached.value().toByteArray() == mr->bytes);
}

void tst_StoreRegistry::cliStoresAndFind()
{
    const QString path = m_dir.filePath(QStringLiteral("cli/stores.json"));
    const QString pw = m_dir.filePath(QStringLiteral("pw.txt"));
    QVERIFY(writeFile(pw, kPassword.toUtf8() + "\n"));
    ProcessResult r = cli({QStringLiteral("stores"), QStringLiteral("add"), QStringLiteral("web"), QStringLiteral("--kind"), QStringLiteral("dicomweb"),
                           QStringLiteral("--url"), m_orthanc.dicomWebUrl(), QStringLiteral("--user"), kUser, QStringLiteral("--password-file"), pw}, path);
    QVERIFY2(r.ok(), r.err.constData());
    r = cli({QStringLiteral("stores"), QStringLiteral("add"), QStringLiteral("pacs"), QStringLiteral("--kind"), QStringLiteral("dimse"), QStringLiteral("--host"),
             QStringLiteral("127.0.0.1"), QStringLiteral("--port"), QString::number(m_orthanc.dicomPort()), QStringLiteral("--aet"), m_orthanc.aeTitle(),
             QStringLiteral("--our-aet"), m_ourAe}, path);
    QVERIFY2(r.ok(), r.err.constData());
    QVERIFY(!readFile(path).contains(kPassword.toUtf8()));
    r = cli({QStringLiteral("stores"), QStringLiteral("add"), QStringLiteral("pacs"), QStringLiteral("--kind"), QStringLiteral("local")}, path);
    QCOMPARE(r.exitCode, 2);  // the name is taken
    QVERIFY(r.err.contains("exists already"));
    r = cli({QStringLiteral("stores"), QStringLiteral("list")}, path);
    QVERIFY(r.ok());
    QVERIFY(r.out.contains("web\tdicomweb") && r.out.contains("pacs\tdimse"));
    QVERIFY(!r.out.contains(kPassword.toUtf8()));
    r = cli({QStringLiteral("stores"), QStringLiteral("test")}, path);
    QVERIFY2(r.ok(), r.out.constData());
    QCOMPARE(r.out.count("ok ("), 2);
    r = cli({QStringLiteral("find"), QStringLiteral("--modality"), QStringLiteral("CT"), QStringLiteral("--json")}, path);
    QVERIFY2(r.ok(), r.err.constData());
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 1);
    const QJsonObject study = QJsonDocument::fromJson(lines.first()).object();
    QCOMPARE(study.value(QStringLiteral("studyInstanceUid")).toString(), DemoArchive::studyUid(DemoStudy::HeadCt));
    QCOMPARE(study.value(QStringLiteral("stores")).toArray().size(), 2);
    r = cli({QStringLiteral("find"), QStringLiteral("--date"), QStringLiteral("2024-01")}, path);
    QCOMPARE(r.exitCode, 2);
    r = cli({QStringLiteral("stores"), QStringLiteral("remove"), QStringLiteral("pacs")}, path);
    QVERIFY(r.ok());
    QVERIFY(!cli({QStringLiteral("stores"), QStringLiteral("list")}, path).out.contains("pacs"));
}

void tst_StoreRegistry::cliFetchAndListen()
{
    const QString path = m_dir.filePath(QStringLiteral("cli2/stores.json"));
    StoreConfigFile c = config(QStringLiteral("cli2"));
    QCOMPARE(c.save(), Error());
    ProcessResult r = cli({QStringLiteral("fetch"), QStringLiteral("--store"), QStringLiteral("web"), DemoArchive::studyUid(DemoStudy::HeadMr)}, path);
    QVERIFY2(r.ok(), r.err.constData());
    QVERIFY2(r.err.contains("3 instance(s)") && r.err.contains("first instance complete after"), r.err.constData());
    r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("cache")}, path);  // no such store configured
    QVERIFY(!r.ok());

    // The headless Storage SCP receives a C-MOVE from the PACS into the cache.
    QProcess listen;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_CONFIG"), path);
    env.insert(QStringLiteral("SPECTRUM_CACHE_DIR"), m_dir.filePath(QStringLiteral("listen-cache")));
    listen.setProcessEnvironment(env);
    listen.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("listen"), QStringLiteral("--port"), QString::number(m_scpPort)});
    QVERIFY(listen.waitForStarted());
    QByteArray err;
    QTRY_VERIFY_WITH_TIMEOUT((err += listen.readAllStandardError(), err.contains("listening")), 20000);
    StoreRegistry reg(c, nullptr);
    auto ep = dimseEndpointFor(*c.find(QStringLiteral("pacs")), c);
    QVERIFY(ep.isOk());
    DimseClient client(ep.value());
    Result<RetrieveCount> moved = runSync(client.move(DemoArchive::studyUid(DemoStudy::HeadMr), {}, {}, m_ourAe));
    QVERIFY2(moved.isOk(), qPrintable(moved.error().toString()));
    QByteArray out;
    QTRY_VERIFY_WITH_TIMEOUT((out += listen.readAllStandardOutput(), out.count("received ") == 3), 20000);
    listen.terminate();
    QVERIFY(listen.waitForFinished(10000));
    QCOMPARE(listen.exitCode(), 0);
    auto cache = FileStore::open(m_dir.filePath(QStringLiteral("listen-cache")), 0);
    QVERIFY(cache.isOk());
    BlobQuery all;
    all.studyInstanceUid = DemoArchive::studyUid(DemoStudy::HeadMr);
    QCOMPARE(runSync(cache.value()->query(all)).value().size(), 3);
}

QTEST_GUILESS_MAIN(tst_StoreRegistry)
#include "tst_storeregistry.moc"
