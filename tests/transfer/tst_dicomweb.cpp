// SPDX-License-Identifier: Apache-2.0
// DicomWebClient against a real DICOMweb server: Orthanc with its DICOMweb plugin, started here on loopback
// with HTTP Basic authentication, holding the demo studies. What we make of its answers is held against what
// dicomweb-client (PyPI, not ours) makes of them.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/transfer/dicomweb.h"
#include "archives.h"
#include "testsupport.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QSet>
#include <QTcpSocket>
#include <QTest>
#include <mutex>
#include <QThread>
#include <QDir>

using namespace spectrum;
using namespace spectrum::test;

class tst_DicomWeb : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void studySearchFilters_data();
    void studySearchFilters();
    void pagingWalksEveryStudyOnce();
    void seriesAndInstanceSearch();
    void invalidQueryIsRefusedBeforeSending();
    void retrieveStreamsEachInstanceAsItCompletes();
    void retrieveOfOneInstanceAndUnknownStudy();
    void partsCanBeTakenOnTheReadingThread();
    void metadataAndFrames();
    void stowReportsPerInstance();
    void wrongPasswordIsAnAuthenticationError();
    void deadServerIsANetworkError();
    void httpsWithBearerTokenThroughNginx();
    void brokenServersGiveClearErrors();
    void anIndependentClientReadsTheArchiveAsWeDo();

private:
    DicomWebEndpoint endpoint() const;
    const DemoInstance *instance(const QString &sopUid) const;

    OrthancProcess m_orthanc;
    QList<DemoInstance> m_instances;
};

namespace {
const QString kUser = QStringLiteral("radiologist");
const QString kPassword = QStringLiteral("s3cret-pass");

QSet<QString> studyUids(const QList<DicomRecord> &records)
{
    QSet<QString> out;
    for (const DicomRecord &r : records)
        out.insert(r.identity.studyInstanceUid);
    return out;
}
} // namespace

DicomWebEndpoint tst_DicomWeb::endpoint() const
{
    return dicomWebEndpoint(m_orthanc, kUser, kPassword);
}

const DemoInstance *tst_DicomWeb::instance(const QString &sopUid) const
{
    for (const DemoInstance &i : m_instances) {
        if (i.identity.sopInstanceUid == sopUid)
            return &i;
    }
    return nullptr;
}

void tst_DicomWeb::initTestCase()
{
    QVERIFY2(QFile::exists(QStringLiteral(ORTHANC_EXECUTABLE)), "Orthanc is not installed (make test installs it)");
    QVERIFY2(QFile::exists(QStringLiteral(ORTHANC_DICOMWEB_PLUGIN)), "orthanc-dicomweb is not installed (make test installs it)");
    OrthancProcess::Options options;
    options.users = {{kUser, kPassword}};
    QVERIFY(m_orthanc.start(options));
    DemoOptions demo;
    demo.ctSlices = 5;
    demo.mrSlices = 4;
    QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) { m_instances << std::move(i); return Error(); }).isError());
    for (const DemoInstance &i : m_instances)
        QVERIFY(!m_orthanc.upload(i.bytes).isEmpty());
}

void tst_DicomWeb::studySearchFilters_data()
{
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QStringList>("studies");  // which demo studies match
    const QString ct = DemoArchive::studyUid(DemoStudy::HeadCt), cr = DemoArchive::studyUid(DemoStudy::ChestCr),
                  mr = DemoArchive::studyUid(DemoStudy::HeadMr), ctPrior = DemoArchive::studyUid(DemoStudy::HeadCtPrior),
                  crPrior = DemoArchive::studyUid(DemoStudy::ChestCrPrior);
    QTest::newRow("everything") << QString() << QString() << QStringList{ct, cr, mr, ctPrior, crPrior};
    QTest::newRow("modality MR") << QStringLiteral("modality") << QStringLiteral("MR") << QStringList{mr};
    QTest::newRow("modality CT") << QStringLiteral("modality") << QStringLiteral("CT") << QStringList{ct, ctPrior};
}

void tst_DicomWeb::studySearchFilters()
{
    QFETCH(QString, field);
    QFETCH(QString, value);
    QFETCH(QStringList, studies);
    DicomWebClient client(endpoint());
    DicomQuery q;
    if (field == QLatin1String("modality"))
        q.modality = value;
    Result<QList<DicomRecord>> r = runSync(client.search(q));
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(studyUids(r.value()), QSet<QString>(studies.begin(), studies.end()));
    for (const DicomRecord &rec : r.value()) {
        QCOMPARE(rec.level, QueryLevel::Study);
        QVERIFY(!rec.identity.patientId.isEmpty());
        QCOMPARE(rec.identity.issuerOfPatientId, QStringLiteral("SPECTRUM DEMO"));  // asked for: priors match on it
        QVERIFY(!rec.retrieveUrl.isEmpty());
        QVERIFY(rec.relatedInstances > 0);
    }
}

void tst_DicomWeb::pagingWalksEveryStudyOnce()
{
    DicomWebClient client(endpoint());
    // Each demo study, found by its own patient's attributes; then all of them one page at a time.
    for (DemoStudy s : {DemoStudy::HeadCt, DemoStudy::ChestCr, DemoStudy::HeadMr}) {
        const DemoInstance *any = nullptr;
        for (const DemoInstance &i : m_instances) {
            if (i.identity.studyInstanceUid == DemoArchive::studyUid(s))
                any = &i;
        }
        QVERIFY(any);
        DicomQuery byId;
        byId.patientId = any->identity.patientId;
        QSet<QString> samePatient;  // the demo's head CT and head MR belong to one patient
        for (const DemoInstance &i : m_instances) {
            if (i.identity.patientId == any->identity.patientId)
                samePatient.insert(i.identity.studyInstanceUid);
        }
        QCOMPARE(studyUids(runSync(client.search(byId)).value()), samePatient);
        DicomQuery byName;  // wildcards around the given name (Orthanc 1.10 matches no '^' over DICOMweb)
        byName.patientName = QLatin1Char('*') + any->identity.patientName.section(QLatin1Char('^'), 1, 1).left(4) + QLatin1Char('*');
        QVERIFY(studyUids(runSync(client.search(byName)).value()).contains(any->identity.studyInstanceUid));
        DicomQuery byAccession;
        byAccession.accessionNumber = any->identity.accessionNumber;
        QCOMPARE(studyUids(runSync(client.search(byAccession)).value()), QSet<QString>{any->identity.studyInstanceUid});
        DicomQuery byDate;  // exactly that day
        byDate.dateFrom = byDate.dateTo = QDate::fromString(any->identity.studyDate, QStringLiteral("yyyyMMdd"));
        QVERIFY(studyUids(runSync(client.search(byDate)).value()).contains(any->identity.studyInstanceUid));
        DicomQuery before;  // a range that ends the day before
        before.dateTo = byDate.dateFrom.addDays(-1);
        QVERIFY(!studyUids(runSync(client.search(before)).value()).contains(any->identity.studyInstanceUid));
    }
    QSet<QString> seen;
    for (int offset = 0; offset < 3; ++offset) {
        DicomQuery page;
        page.limit = 1;
        page.offset = offset;
        Result<QList<DicomRecord>> r = runSync(client.search(page));
        QVERIFY(r.isOk());
        QCOMPARE(r.value().size(), 1);
        QVERIFY(!seen.contains(r.value().first().identity.studyInstanceUid));
        seen.insert(r.value().first().identity.studyInstanceUid);
    }
    QCOMPARE(seen.size(), 3);
}

void tst_DicomWeb::seriesAndInstanceSearch()
{
    DicomWebClient client(endpoint());
    const QString mr = DemoArchive::studyUid(DemoStudy::HeadMr);
    DicomQuery series;
    series.level = QueryLevel::Series;
    series.studyInstanceUid = mr;
    Result<QList<DicomRecord>> s = runSync(client.search(series));
    QVERIFY2(s.isOk(), qPrintable(s.error().toString()));
    QCOMPARE(s.value().size(), 1);
    QCOMPARE(s.value().first().identity.modality, QStringLiteral("MR"));
    QCOMPARE(s.value().first().relatedInstances, 4);

    DicomQuery instances;
    instances.level = QueryLevel::Instance;
    instances.studyInstanceUid = mr;
    instances.seriesInstanceUid = s.value().first().identity.seriesInstanceUid;
    Result<QList<DicomRecord>> i = runSync(client.search(instances));
    QVERIFY(i.isOk());
    QCOMPARE(i.value().size(), 4);
    QSet<int> numbers;
    for (const DicomRecord &r : i.value()) {
        const DemoInstance *original = instance(r.identity.sopInstanceUid);
        QVERIFY(original);
        QCOMPARE(r.identity.sopClassUid, original->identity.sopClassUid);
        numbers.insert(r.identity.instanceNumber);
    }
    QCOMPARE(numbers, (QSet<int>{1, 2, 3, 4}));
}

void tst_DicomWeb::invalidQueryIsRefusedBeforeSending()
{
    DicomWebClient client(endpoint());
    DicomQuery noStudy;
    noStudy.level = QueryLevel::Instance;
    QCOMPARE(runSync(client.search(noStudy)).error().code(), ErrorCode::InvalidArgument);
    DicomQuery reversed;
    reversed.dateFrom = QDate(2024, 2, 1);
    reversed.dateTo = QDate(2024, 1, 1);
    QCOMPARE(runSync(client.search(reversed)).error().code(), ErrorCode::InvalidArgument);
    DicomQuery patients;
    patients.level = QueryLevel::Patient;
    QCOMPARE(runSync(client.search(patients)).error().code(), ErrorCode::Unsupported);
    DicomQuery injected;
    injected.patientId = QStringLiteral("X\\Y");
    QCOMPARE(runSync(client.search(injected)).error().code(), ErrorCode::InvalidArgument);
    RetrieveCallbacks none;
    QCOMPARE(runSync(client.retrieve(QStringLiteral("1.2/../../x"), {}, {}, none)).error().code(), ErrorCode::InvalidArgument);
}

void tst_DicomWeb::retrieveStreamsEachInstanceAsItCompletes()
{
    DicomWebClient client(endpoint());
    const QString ct = DemoArchive::studyUid(DemoStudy::HeadCt);
    QHash<QString, QByteArray> received;
    QHash<int, Arrival> lastArrival;  // part index → the latest news of it
    int begun = 0, arrivals = 0, wrongArrivals = 0;
    RetrieveCallbacks cb;
    cb.begin = [&](const WadoPart &p) {
        QCOMPARE(p.index, begun);
        ++begun;
        QVERIFY(p.contentType.startsWith("application/dicom"));
    };
    cb.arriving = [&](const WadoPart &p, const Arrival &a) {
        ++arrivals;
        // One buffer per part, of its declared size from the start, only ever filling.
        const Arrival before = lastArrival.value(p.index);
        if (!a.isValid() || a.total != p.declaredLength || (before.buffer && (before.buffer != a.buffer || before.end > a.end)))
            ++wrongArrivals;
        lastArrival.insert(p.index, a);
    };
    cb.complete = [&](const WadoPart &p, const ByteView &whole) -> Error {
        if (p.declaredLength >= 0 && whole.size() != p.declaredLength)
            return Error(ErrorCode::Internal, QStringLiteral("part size differs from its Content-Length"));
        Result<DicomIdentity> id = readDicomIdentity(whole);
        if (!id.isOk())
            return id.error();
        received.insert(id.value().sopInstanceUid, whole.toByteArray());
        // What was seen arriving was the part's own bytes, in the same memory it is handed on in.
        const Arrival a = lastArrival.value(p.index);
        if (a.buffer && (a.data() != whole.data() || std::memcmp(a.data(), whole.data(), size_t(a.end)) != 0))
            ++wrongArrivals;
        return Error();
    };
    Result<RetrieveSummary> r = runSync(client.retrieve(ct, {}, {}, cb));
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(r.value().parts, 5);
    QCOMPARE(received.size(), 5);
    for (auto it = received.cbegin(); it != received.cend(); ++it) {
        const DemoInstance *original = instance(it.key());
        QVERIFY(original);
        QVERIFY2(it.value() == original->bytes, "WADO-RS gave other bytes than were stored");
    }
    QVERIFY(arrivals >= 1);
    QCOMPARE(wrongArrivals, 0);
    // The last part's last news says it is whole.
    QVERIFY(lastArrival.value(4).isComplete());
}

// completeOnReader: each part is handed over on the thread that read it (not the job's), whole and in order; the
// summary counts them; `complete` is not called; an error from the callback ends the retrieval with it.
void tst_DicomWeb::partsCanBeTakenOnTheReadingThread()
{
    DicomWebClient client(endpoint());
    const QString ct = DemoArchive::studyUid(DemoStudy::HeadCt);
    std::mutex lock;
    QSet<QString> received;
    QSet<QThread *> threads;
    int wrong = 0, onJobThread = 0;
    RetrieveCallbacks cb;
    cb.complete = [&](const WadoPart &, const ByteView &) {
        ++onJobThread;
        return Error();
    };
    cb.completeOnReader = [&](const WadoPart &, const ByteView &whole) -> Error {
        Result<DicomIdentity> id = readDicomIdentity(whole);
        std::lock_guard<std::mutex> guard(lock);
        threads.insert(QThread::currentThread());
        const DemoInstance *original = id.isOk() ? instance(id.value().sopInstanceUid) : nullptr;
        if (!original || original->bytes != whole.toByteArray())
            ++wrong;
        else
            received.insert(id.value().sopInstanceUid);
        return Error();
    };
    Result<RetrieveSummary> r = runSync(client.retrieve(ct, {}, {}, cb));
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(r.value().parts, 5);
    QCOMPARE(received.size(), 5);
    QCOMPARE(wrong, 0);
    QCOMPARE(onJobThread, 0);
    QCOMPARE(threads.size(), 1);
    QVERIFY(!threads.contains(QThread::currentThread()));

    // The taker refuses the second part: the retrieval ends with its error.
    int taken = 0;
    cb.completeOnReader = [&](const WadoPart &, const ByteView &) -> Error {
        return ++taken == 2 ? Error(ErrorCode::DiskFull, QStringLiteral("no room")) : Error();
    };
    r = runSync(client.retrieve(ct, {}, {}, cb));
    QCOMPARE(r.error().code(), ErrorCode::DiskFull);
    QCOMPARE(taken, 2);
}

void tst_DicomWeb::retrieveOfOneInstanceAndUnknownStudy()
{
    DicomWebClient client(endpoint());
    const DemoInstance &one = m_instances.last();
    QByteArray got;
    RetrieveCallbacks cb;
    cb.complete = [&](const WadoPart &, const ByteView &whole) { got = whole.toByteArray(); return Error(); };
    Result<RetrieveSummary> r = runSync(client.retrieve(one.identity.studyInstanceUid, one.identity.seriesInstanceUid, one.identity.sopInstanceUid, cb));
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(r.value().parts, 1);
    QVERIFY(got == one.bytes);

    Result<RetrieveSummary> missing = runSync(client.retrieve(QStringLiteral("1.2.3.4.5"), {}, {}, cb));
    QCOMPARE(missing.error().code(), ErrorCode::NotFound);

    // A consumer that cannot take a part (a full cache, say) stops the retrieval with its error.
    RetrieveCallbacks refusing;
    refusing.complete = [](const WadoPart &, const ByteView &) { return Error(ErrorCode::DiskFull, QStringLiteral("cache full")); };
    QCOMPARE(runSync(client.retrieve(DemoArchive::studyUid(DemoStudy::HeadCt), {}, {}, refusing)).error().code(), ErrorCode::DiskFull);
}

void tst_DicomWeb::metadataAndFrames()
{
    DicomWebClient client(endpoint());
    const DemoInstance *mr = nullptr;
    for (const DemoInstance &i : m_instances) {
        if (i.identity.modality == QLatin1String("MR"))
            mr = &i;
    }
    QVERIFY(mr);
    Result<QJsonArray> meta = runSync(client.metadata(mr->identity.studyInstanceUid, mr->identity.seriesInstanceUid, mr->identity.sopInstanceUid));
    QVERIFY2(meta.isOk(), qPrintable(meta.error().toString()));
    QCOMPARE(meta.value().size(), 1);
    const QJsonObject o = meta.value().first().toObject();
    QCOMPARE(dicomjson::string(o, "00080018"), mr->identity.sopInstanceUid);
    const int rows = dicomjson::string(o, "00280010").toInt(), columns = dicomjson::string(o, "00280011").toInt();
    QVERIFY(rows > 0 && columns > 0);

    Result<QList<QByteArray>> frames = runSync(client.frames(mr->identity.studyInstanceUid, mr->identity.seriesInstanceUid, mr->identity.sopInstanceUid, {1}));
    QVERIFY2(frames.isOk(), qPrintable(frames.error().toString()));
    QCOMPARE(frames.value().size(), 1);
    QCOMPARE(frames.value().first().size(), qsizetype(rows) * columns * 2);  // native 16-bit pixels
    // The same pixels as the file's Pixel Data: its last rows × columns × 2 bytes.
    QVERIFY(mr->bytes.endsWith(frames.value().first()));
}

void tst_DicomWeb::stowReportsPerInstance()
{
    DicomWebClient client(endpoint());
    // A fresh instance (demo data under another study) and one part that is not DICOM at all.
    DemoOptions other;
    other.studies = {DemoStudy::HeadMr};
    other.mrSlices = 1;
    QList<DemoInstance> fresh;
    QVERIFY(!DemoArchive::generate(other, [&](DemoInstance &&i) { fresh << std::move(i); return Error(); }).isError());
    Result<StowResult> ok = runSync(client.store({ByteView(fresh.first().bytes)}));
    QVERIFY2(ok.isOk(), qPrintable(ok.error().toString()));
    QVERIFY(ok.value().allStored());
    QCOMPARE(ok.value().stored, QStringList{fresh.first().identity.sopInstanceUid});

    Result<StowResult> mixed = runSync(client.store({ByteView(fresh.first().bytes), ByteView(QByteArray("not DICOM at all"))}));
    QVERIFY2(mixed.isOk(), qPrintable(mixed.error().toString()));
    QCOMPARE(mixed.value().sent, 2);
    QVERIFY(!mixed.value().allStored());
    QCOMPARE(mixed.value().stored, QStringList{fresh.first().identity.sopInstanceUid});
    QCOMPARE(mixed.value().failed.size() + mixed.value().unaccounted(), 1);
}

void tst_DicomWeb::wrongPasswordIsAnAuthenticationError()
{
    DicomWebEndpoint ep = endpoint();
    ep.auth.password = QStringLiteral("wrong-password-42");
    DicomWebClient client(ep);
    Result<Done> r = runSync(client.ping());
    QCOMPARE(r.error().code(), ErrorCode::Authentication);
    QVERIFY(!r.error().toString().contains(ep.auth.password));  // never in messages
    DicomWebEndpoint none = endpoint();
    none.auth = HttpAuth();
    DicomWebClient anonymous(none);
    QCOMPARE(runSync(anonymous.ping()).error().code(), ErrorCode::Authentication);
    DicomWebClient right(endpoint());
    QCOMPARE(runSync(right.ping()).error(), Error());
}

void tst_DicomWeb::deadServerIsANetworkError()
{
    DicomWebEndpoint ep = endpoint();
    ep.base = QUrl(QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(freePort()));
    DicomWebClient client(ep);
    QCOMPARE(runSync(client.ping()).error().code(), ErrorCode::Network);
}

namespace {

/// A certificate from the CA in `dir` for 127.0.0.1 that expired in 2020 (openssl ca can date it).
bool makeExpiredCert(const QString &dir, const QString &name)
{
    const QString key = dir + QLatin1Char('/') + name + QStringLiteral(".key"), csr = dir + QLatin1Char('/') + name + QStringLiteral(".csr");
    const QString ext = dir + QLatin1Char('/') + name + QStringLiteral(".ext"), cnf = dir + QLatin1Char('/') + name + QStringLiteral(".cnf");
    writeFile(ext, "subjectAltName=IP:127.0.0.1\n");
    writeFile(dir + QStringLiteral("/index.txt"), QByteArray());
    writeFile(dir + QStringLiteral("/serial.ca"), "1000\n");
    writeFile(cnf, QStringLiteral("[ca]\ndefault_ca = d\n[d]\ndatabase = %1/index.txt\nnew_certs_dir = %1\nserial = %1/serial.ca\n"
                                  "default_md = sha256\npolicy = p\n[p]\ncommonName = supplied\n").arg(dir).toUtf8());
    return openssl({QStringLiteral("req"), QStringLiteral("-newkey"), QStringLiteral("rsa:2048"), QStringLiteral("-nodes"), QStringLiteral("-keyout"), key,
                    QStringLiteral("-out"), csr, QStringLiteral("-subj"), QStringLiteral("/CN=") + name})
        && openssl({QStringLiteral("ca"), QStringLiteral("-batch"), QStringLiteral("-config"), cnf, QStringLiteral("-in"), csr, QStringLiteral("-cert"),
                    dir + QStringLiteral("/ca.pem"), QStringLiteral("-keyfile"), dir + QStringLiteral("/ca.key"), QStringLiteral("-startdate"),
                    QStringLiteral("20200101000000Z"), QStringLiteral("-enddate"), QStringLiteral("20200102000000Z"), QStringLiteral("-extfile"), ext,
                    QStringLiteral("-notext"), QStringLiteral("-out"), dir + QLatin1Char('/') + name + QStringLiteral(".pem")});
}

} // namespace

void tst_DicomWeb::httpsWithBearerTokenThroughNginx()
{
    // nginx terminates TLS with a certificate from a hospital CA of our own and lets through only
    // "Authorization: Bearer fresh-token", passing the request on to Orthanc with its Basic credentials.
    QTemporaryDir dir;
    const QString d = dir.path();
    QVERIFY(makeTestCa(d));
    QVERIFY(makeTestCertificate(d, QStringLiteral("good"), QStringLiteral("IP:127.0.0.1")));
    QVERIFY(makeTestCertificate(d, QStringLiteral("otherhost"), QStringLiteral("DNS:pacs.elsewhere.example")));
    QVERIFY(makeExpiredCert(d, QStringLiteral("expired")));
    const quint16 good = freePort(), wrongHost = freePort(), expired = freePort();
    const QByteArray basic = (kUser + QLatin1Char(':') + kPassword).toUtf8().toBase64();
    auto server = [&](quint16 port, const char *cert) {
        return QStringLiteral(
                   "server { listen 127.0.0.1:%1 ssl; ssl_certificate %2/%3.pem; ssl_certificate_key %2/%3.key;\n"
                   "  location /dicom-web/ { if ($http_authorization != \"Bearer fresh-token\") { return 401; }\n"
                   "    proxy_set_header Authorization \"Basic %4\"; proxy_buffering off; proxy_pass http://127.0.0.1:%5; } }\n")
            .arg(port).arg(d, QLatin1String(cert), QString::fromLatin1(basic)).arg(m_orthanc.httpPort());
    };
    NginxProcess nginx;
    QVERIFY2(nginx.start(server(good, "good") + server(wrongHost, "otherhost") + server(expired, "expired"), good),
             "nginx did not start (make test installs nginx-light)");

    auto endpoint = [&](quint16 port, const QString &token, const QString &ca) {
        DicomWebEndpoint ep;
        ep.base = QUrl(QStringLiteral("https://127.0.0.1:%1/dicom-web").arg(port));
        ep.auth.kind = HttpAuth::Kind::Bearer;
        ep.auth.token = token;
        ep.caFile = ca;
        ep.timeoutMs = 20000;
        return ep;
    };
    const QString ca = d + QStringLiteral("/ca.pem");
    {
        DicomWebClient client(endpoint(good, QStringLiteral("fresh-token"), ca));
        Result<QList<DicomRecord>> r = runSync(client.search(DicomQuery()));
        QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
        QCOMPARE(r.value().size(), 5);
    }
    {
        // A stale token is renewed once by the refresh hook, and the request goes through.
        DicomWebEndpoint ep = endpoint(good, QStringLiteral("stale-token"), ca);
        int refreshed = 0;
        ep.auth.refresh = [&refreshed]() -> Result<QString> { ++refreshed; return QStringLiteral("fresh-token"); };
        DicomWebClient client(ep);
        QCOMPARE(runSync(client.ping()).error(), Error());
        QCOMPARE(refreshed, 1);
    }
    {
        // Without a refresh hook a refused token is an authentication error, and the token is not in it.
        DicomWebClient client(endpoint(good, QStringLiteral("stale-token"), ca));
        const Error e = runSync(client.ping()).error();
        QCOMPARE(e.code(), ErrorCode::Authentication);
        QVERIFY(!e.toString().contains(QStringLiteral("stale-token")));
    }
    {
        // Certificates are verified by default: our CA is not the system's.
        DicomWebClient client(endpoint(good, QStringLiteral("fresh-token"), QString()));
        const Error e = runSync(client.ping()).error();
        QCOMPARE(e.code(), ErrorCode::Authentication);
        QVERIFY2(e.message().contains(QLatin1String("not trusted")) && e.message().contains(QLatin1String("--ca-file")), qPrintable(e.toString()));
    }
    {
        // A certificate for another host is refused even from the trusted CA.
        DicomWebClient client(endpoint(wrongHost, QStringLiteral("fresh-token"), ca));
        QCOMPARE(runSync(client.ping()).error().code(), ErrorCode::Authentication);
    }
    {
        // So is an expired one, and the error says why; the token never appears in it.
        DicomWebClient client(endpoint(expired, QStringLiteral("fresh-token"), ca));
        const Error e = runSync(client.ping()).error();
        QCOMPARE(e.code(), ErrorCode::Authentication);
        QVERIFY2(e.toString().contains(QStringLiteral("expired"), Qt::CaseInsensitive), qPrintable(e.toString()));
        QVERIFY(!e.toString().contains(QStringLiteral("fresh-token")));
    }
    {
        // And a whole study streams through TLS byte for byte.
        DicomWebClient client(endpoint(good, QStringLiteral("fresh-token"), ca));
        int parts = 0;
        RetrieveCallbacks cb;
        cb.complete = [&](const WadoPart &, const ByteView &whole) {
            Result<DicomIdentity> id = readDicomIdentity(whole);
            if (!id.isOk() || !instance(id.value().sopInstanceUid) || instance(id.value().sopInstanceUid)->bytes != whole.toByteArray())
                return Error(ErrorCode::Corrupt, QStringLiteral("not the stored bytes"));
            ++parts;
            return Error();
        };
        QCOMPARE(runSync(client.retrieve(DemoArchive::studyUid(DemoStudy::HeadMr), {}, {}, cb)).error(), Error());
        QCOMPARE(parts, 4);
    }
}

void tst_DicomWeb::brokenServersGiveClearErrors()
{
    // nginx serving crafted answers: what Orthanc would never send, but a broken proxy or PACS might.
    NginxProcess nginx;
    const QString d = nginx.directory();
    const QByteArray good = m_instances.first().bytes;
    QVERIFY(writeFile(d + QStringLiteral("/nobound"), "--x\r\n\r\nabc\r\n--x--\r\n"));
    QVERIFY(writeFile(d + QStringLiteral("/truncated"), "--b\r\nContent-Type: application/dicom\r\n\r\n" + good + "\r\n--b\r\nContent-Type: application/dicom\r\n\r\n"
                                                         + good.left(good.size() / 2)));
    QVERIFY(writeFile(d + QStringLiteral("/short"), "--b\r\nContent-Type: application/dicom\r\nContent-Length: " + QByteArray::number(good.size() + 10) + "\r\n\r\n"
                                                     + good + "\r\n--b--\r\n"));
    const quint16 port = freePort();
    const QString servers = QStringLiteral(
        "server { listen 127.0.0.1:%1;\n"
        "  location = /e500/studies { return 500; }\n"
        "  location = /e403/studies { return 403; }\n"
        "  location = /json/studies { default_type application/dicom+json; return 200 '{\"not\": \"an array\"}'; }\n"
        "  location = /nb/studies/1.2.3 { default_type 'multipart/related; type=\"application/dicom\"'; alias %2/nobound; }\n"
        "  location = /tr/studies/1.2.3 { default_type 'multipart/related; type=\"application/dicom\"; boundary=b'; alias %2/truncated; }\n"
        "  location = /sh/studies/1.2.3 { default_type 'multipart/related; type=\"application/dicom\"; boundary=b'; alias %2/short; }\n"
        "}\n").arg(port).arg(d);
    QVERIFY2(nginx.start(servers, port), "nginx did not start (make test installs nginx-light)");
    auto client = [&](const char *prefix) {
        DicomWebEndpoint ep;
        ep.base = QUrl(QStringLiteral("http://127.0.0.1:%1/%2").arg(port).arg(QLatin1String(prefix)));
        return std::make_unique<DicomWebClient>(ep);
    };
    const Error e500 = runSync(client("e500")->ping()).error();
    QCOMPARE(e500.code(), ErrorCode::Network);
    QVERIFY2(e500.toString().contains(QStringLiteral("HTTP 500")), qPrintable(e500.toString()));
    QCOMPARE(runSync(client("e403")->ping()).error().code(), ErrorCode::Authentication);
    QCOMPARE(runSync(client("json")->ping()).error().code(), ErrorCode::Protocol);

    QList<qint64> completed;
    RetrieveCallbacks cb;
    cb.complete = [&](const WadoPart &, const ByteView &whole) { completed << whole.size(); return Error(); };
    const Error noBoundary = runSync(client("nb")->retrieve(QStringLiteral("1.2.3"), {}, {}, cb)).error();
    QCOMPARE(noBoundary.code(), ErrorCode::Protocol);
    QVERIFY(noBoundary.toString().contains(QStringLiteral("boundary")));
    QVERIFY(completed.isEmpty());
    // Cut off in the second instance: the first is handed on, the second never as complete.
    const Error truncated = runSync(client("tr")->retrieve(QStringLiteral("1.2.3"), {}, {}, cb)).error();
    QCOMPARE(truncated.code(), ErrorCode::Protocol);
    QCOMPARE(completed, QList<qint64>{good.size()});
    // A part shorter than its Content-Length says is not passed on either.
    completed.clear();
    QCOMPARE(runSync(client("sh")->retrieve(QStringLiteral("1.2.3"), {}, {}, cb)).error().code(), ErrorCode::Protocol);
    QVERIFY(completed.isEmpty());
}


void tst_DicomWeb::anIndependentClientReadsTheArchiveAsWeDo()
{
    // Names in other alphabets, written by pydicom and sent by our STOW-RS, beside the demo studies; then every
    // study, series and instance as our QIDO-RS reads them and every data set as our WADO-RS retrieves it, held
    // against dicomweb-client's reading of the same archive (tests/support/dicomweb_crosscheck.py).
    const ProcessResult venv = run(QStringLiteral(PYVENV_SCRIPT), {QStringLiteral(TEST_VENV_DIR), QStringLiteral(TEST_PEERS_REQUIREMENTS)}, 600000);
    QVERIFY2(venv.ok(), venv.err.constData());
    QTemporaryDir dir;
    const QString names = dir.filePath(QStringLiteral("names")), ours = dir.filePath(QStringLiteral("ours"));
    QVERIFY(QDir().mkpath(ours));
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(CHARSET_FILES_SCRIPT), names});
    QVERIFY2(made.ok(), made.err.constData());
    QList<ByteView> files;
    for (const QFileInfo &f : QDir(names).entryInfoList({QStringLiteral("*.dcm")}, QDir::Files))
        files << ByteView(readFile(f.filePath()));
    QVERIFY(files.size() >= 5);
    DicomWebClient client(endpoint());
    const Result<StowResult> stored = runSync(client.store(files));
    QVERIFY2(stored.isOk() && stored.value().allStored(), qPrintable(stored.isOk() ? QString::number(stored.value().stored.size()) : stored.error().toString()));

    QJsonArray studies, series, instances;
    const Result<QList<DicomRecord>> found = runSync(client.search(DicomQuery()));
    QVERIFY2(found.isOk(), qPrintable(found.isOk() ? QString() : found.error().toString()));
    int part = 0;
    for (const DicomRecord &study : found.value()) {
        QJsonObject s = study.identity.toJson();
        s.insert(QStringLiteral("modalities"), QJsonArray::fromStringList(study.modalitiesInStudy));
        s.insert(QStringLiteral("relatedSeries"), study.relatedSeries);
        s.insert(QStringLiteral("relatedInstances"), study.relatedInstances);
        studies.append(s);
        for (const QueryLevel level : {QueryLevel::Series, QueryLevel::Instance}) {
            DicomQuery q;
            q.level = level;
            q.studyInstanceUid = study.identity.studyInstanceUid;
            const Result<QList<DicomRecord>> below = runSync(client.search(q));
            QVERIFY2(below.isOk(), qPrintable(below.isOk() ? QString() : below.error().toString()));
            for (const DicomRecord &r : below.value()) {
                QJsonObject o = r.identity.toJson();
                o.insert(QStringLiteral("studyInstanceUid"), study.identity.studyInstanceUid);
                o.insert(QStringLiteral("relatedInstances"), r.relatedInstances);
                (level == QueryLevel::Series ? series : instances).append(o);
            }
        }
        RetrieveCallbacks keep;
        keep.complete = [&](const WadoPart &, const ByteView &bytes) {
            return writeFile(QStringLiteral("%1/%2.dcm").arg(ours).arg(part++), bytes.toByteArray()) ? Error() : Error(ErrorCode::Io, QStringLiteral("cannot write"));
        };
        const Result<RetrieveSummary> retrieved = runSync(client.retrieve(study.identity.studyInstanceUid, QString(), QString(), keep));
        QVERIFY2(retrieved.isOk(), qPrintable(retrieved.isOk() ? QString() : retrieved.error().toString()));
    }
    QVERIFY(writeFile(ours + QStringLiteral("/answers.json"),
                      QJsonDocument(QJsonObject{{QStringLiteral("studies"), studies}, {QStringLiteral("series"), series}, {QStringLiteral("instances"), instances}}).toJson()));
    const ProcessResult checked = run(QStringLiteral(TEST_VENV_DIR "/bin/python"),
                                      {QStringLiteral(DICOMWEB_CROSSCHECK_SCRIPT), endpoint().base.toString(), kUser, kPassword, ours});
    QVERIFY2(checked.ok(), (checked.out + checked.err).constData());
    QVERIFY2(checked.out.startsWith("agreed: "), checked.out.constData());
    qInfo("%s", checked.out.trimmed().constData());
}

QTEST_GUILESS_MAIN(tst_DicomWeb)
#include "tst_dicomweb.moc"
