// SPDX-License-Identifier: Apache-2.0
// Sending to the archives and the archives from the command line: files exported and found again, a derived
// instance sent back by STOW-RS and C-STORE and read back, spectrum-cli stores, find, fetch and listen.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/documents/derivedinstance.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/transfer/dicomweb.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/blobs/memorystore.h"
#include "spectrum/transfer/blobclient.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/transfer/dimse.h"
#include "archives.h"
#include "registrysuite.h"
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

class tst_ArchiveExport : public RegistrySuite
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { RegistrySuite::initTestCase(); }
    void exportThenFindIt();
    void derivedInstanceGoesBackToTheArchive();
    void cliStoresAndFind();
    void cliFetchAndListen();
};

void tst_ArchiveExport::exportThenFindIt()
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

void tst_ArchiveExport::derivedInstanceGoesBackToTheArchive()
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

void tst_ArchiveExport::cliStoresAndFind()
{
    const QString path = m_dir.filePath(QStringLiteral("cli/stores.json"));
    const QString pw = m_dir.filePath(QStringLiteral("pw.txt"));
    QVERIFY(writePrivateFile(pw, kPassword.toUtf8() + "\n"));
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
    QCOMPARE(lines.size(), 2);  // the head CT and its prior, newest first
    const QJsonObject study = QJsonDocument::fromJson(lines.first()).object();
    QCOMPARE(QJsonDocument::fromJson(lines.last()).object().value(QStringLiteral("studyInstanceUid")).toString(),
             DemoArchive::studyUid(DemoStudy::HeadCtPrior));
    QCOMPARE(study.value(QStringLiteral("studyInstanceUid")).toString(), DemoArchive::studyUid(DemoStudy::HeadCt));
    QCOMPARE(study.value(QStringLiteral("stores")).toArray().size(), 2);
    r = cli({QStringLiteral("find"), QStringLiteral("--date"), QStringLiteral("2024-01")}, path);
    QCOMPARE(r.exitCode, 2);
    r = cli({QStringLiteral("stores"), QStringLiteral("remove"), QStringLiteral("pacs")}, path);
    QVERIFY(r.ok());
    QVERIFY(!cli({QStringLiteral("stores"), QStringLiteral("list")}, path).out.contains("pacs"));
}

void tst_ArchiveExport::cliFetchAndListen()
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

QTEST_GUILESS_MAIN(tst_ArchiveExport)
#include "tst_archiveexport.moc"
