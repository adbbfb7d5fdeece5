// SPDX-License-Identifier: Apache-2.0
// An Orthanc cluster as the Orthanc book scales it, started here on loopback: two Orthancs over one PostgreSQL
// index (Debian's orthanc-postgresql), their files in the tests' S3 server (versitygw) through a storage area
// written for orthanc-python (tests/support/orthanc_s3_storage.py, Debian's boto3). An instance sent to one is
// served by the other. The workstation has the cluster as one DICOMweb store with a mirror: a study's series are
// fetched from both at once, byte for byte as sent; when one server is killed mid-fetch, its series come from the
// other and nothing is lost; searches and `stores test` say which server is gone.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/transfer/s3client.h"
#include "archives.h"
#include "postgres.h"
#include "s3server.h"
#include "testsupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;
using namespace spectrum::test;

class tst_OrthancCluster : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void anInstanceSentToOneIsServedByTheOtherFromS3();
    void aStudyIsFetchedFromBothServersAsSent();
    void aServerKilledMidFetchLeavesItsSeriesToTheOther();

private:
    /// A registry over a fresh cache, with the cluster as one store ("cluster": `url` with `mirror`).
    std::unique_ptr<StoreRegistry> registry(const QString &name, const QString &url, const QString &mirror);
    /// Every instance of the study, in the cache, byte for byte as sent.
    void checkCached(FileStore &cache);

    QTemporaryDir m_dir;
    PostgresProcess m_postgres;
    S3Server m_s3;
    OrthancProcess m_a, m_b;
    QList<DemoInstance> m_instances;
    QString m_study;
    QList<std::shared_ptr<FileStore>> m_caches;
};

void tst_OrthancCluster::initTestCase()
{
    QVERIFY(m_postgres.start(QStringLiteral("orthanc")));
    QVERIFY(m_s3.start());
    const S3Endpoint e = m_s3.endpoint(QStringLiteral("pacs"));
    S3Client s3(e);
    QVERIFY(runSync(s3.createBucket()).isOk());

    // Two Orthancs of one archive: the same index, the same storage; each its own ports.
    OrthancProcess::Options o;
    o.plugins = {QStringLiteral(ORTHANC_POSTGRESQL_INDEX_PLUGIN), QStringLiteral(ORTHANC_PYTHON_PLUGIN)};
    o.extra = QJsonObject{
        {QStringLiteral("PostgreSQL"), QJsonObject{{QStringLiteral("EnableIndex"), true}, {QStringLiteral("EnableStorage"), false},
                                                    {QStringLiteral("Host"), QStringLiteral("127.0.0.1")}, {QStringLiteral("Port"), m_postgres.port()},
                                                    {QStringLiteral("Database"), QStringLiteral("orthanc")}, {QStringLiteral("Username"), PostgresProcess::user()},
                                                    {QStringLiteral("Password"), QString()}, {QStringLiteral("EnableSsl"), false},
                                                    {QStringLiteral("Lock"), false}}},  // several Orthancs over one index
        {QStringLiteral("PythonScript"), QStringLiteral(ORTHANC_S3_STORAGE_SCRIPT)},
        {QStringLiteral("S3Storage"), QJsonObject{{QStringLiteral("Endpoint"), e.endpoint.toString()}, {QStringLiteral("Bucket"), e.bucket},
                                                   {QStringLiteral("AccessKey"), S3Server::accessKey()}, {QStringLiteral("SecretKey"), S3Server::secretKey()}}},
    };
    o.aeTitle = QStringLiteral("NODEA");
    QVERIFY(m_a.start(o));
    o.aeTitle = QStringLiteral("NODEB");
    QVERIFY(m_b.start(o));

    // A head CT of three series (thin slices, thick slabs, a localiser), sent to server A alone.
    DemoOptions demo;
    demo.studies = {DemoStudy::HeadCt};
    demo.ctSlices = 48;
    demo.ctSlabSlices = 4;
    demo.ctLocalizer = true;
    QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) {
                 m_instances << std::move(i);
                 return Error();
             }).isError());
    m_study = m_instances.first().identity.studyInstanceUid;
    for (const DemoInstance &i : m_instances)
        QVERIFY(!m_a.upload(i.bytes).isEmpty());
    QSet<QString> series;
    for (const DemoInstance &i : m_instances)
        series << i.identity.seriesInstanceUid;
    QCOMPARE(series.size(), 3);
}

std::unique_ptr<StoreRegistry> tst_OrthancCluster::registry(const QString &name, const QString &url, const QString &mirror)
{
    StoreConfigFile config = StoreConfigFile::parse("{}", m_dir.filePath(name + QStringLiteral(".json"))).value();
    StoreConfig s = dicomWebStore(QStringLiteral("cluster"), url);
    s.as<DicomWebSettings>().mirrors = {mirror};
    s.maxParallel = 1;  // one series per server at a time: a study of three series needs both
    s.timeoutSeconds = 10;
    if (Error e = config.add(s); e.isError())
        qWarning("%s", qPrintable(e.toString()));
    auto opened = FileStore::open(m_dir.filePath(name), 0);
    if (!opened.isOk())
        return nullptr;
    m_caches << std::shared_ptr<FileStore>(opened.takeValue());
    return std::make_unique<StoreRegistry>(config, m_caches.last());
}

void tst_OrthancCluster::checkCached(FileStore &cache)
{
    for (const DemoInstance &i : m_instances) {
        const Result<ByteView> cached = runSync(cache.read(i.identity.sopInstanceUid));
        QVERIFY2(cached.isOk(), qPrintable(i.identity.sopInstanceUid));
        QVERIFY2(cached.value().toByteArray() == i.bytes, qPrintable(QStringLiteral("%1 is not as sent").arg(i.identity.sopInstanceUid)));
    }
}

void tst_OrthancCluster::anInstanceSentToOneIsServedByTheOtherFromS3()
{
    // Server B lists and serves what went to A: the index is shared, and the files are objects in the bucket.
    const QJsonArray onB = QJsonDocument::fromJson(m_b.rest("GET", QStringLiteral("/instances"))).array();
    QCOMPARE(onB.size(), m_instances.size());
    S3Client s3(m_s3.endpoint(QStringLiteral("pacs")));
    int objects = 0;
    QString token;
    do {
        const Result<S3Listing> page = runSync(s3.list(QString(), QString(), token));
        QVERIFY(page.isOk());
        objects += page.value().objects.size();
        token = page.value().truncated ? page.value().nextToken : QString();
    } while (!token.isEmpty());
    QVERIFY2(objects >= m_instances.size(), qPrintable(QString::number(objects)));  // each instance's file (and Orthanc's JSON summaries)
    const QString first = onB.first().toString();
    int status = 0;
    const QByteArray file = m_b.rest("GET", QStringLiteral("/instances/%1/file").arg(first), {}, &status);
    QCOMPARE(status, 200);
    QVERIFY(std::any_of(m_instances.cbegin(), m_instances.cend(), [&](const DemoInstance &i) { return i.bytes == file; }));
}

void tst_OrthancCluster::aStudyIsFetchedFromBothServersAsSent()
{
    std::unique_ptr<StoreRegistry> reg = registry(QStringLiteral("both"), m_a.dicomWebUrl(), m_b.dicomWebUrl());
    QVERIFY(reg);
    QVERIFY(runSync(reg->test(QStringLiteral("cluster"))).isOk());
    const Result<FetchSummary> r = runSync(reg->fetchStudy(QStringLiteral("cluster"), m_study));
    QVERIFY2(r.isOk(), qPrintable(r.isOk() ? QString() : r.error().toString()));
    QCOMPARE(r.value().instances, m_instances.size());
    QVERIFY2(r.value().problems.isEmpty(), qPrintable(r.value().problems.join(QLatin1Char('\n'))));
    // Both servers sent series.
    QCOMPARE(QSet<QString>(r.value().servers.cbegin(), r.value().servers.cend()), (QSet<QString>{m_a.dicomWebUrl(), m_b.dicomWebUrl()}));
    QVERIFY(r.value().serversLost.isEmpty());
    checkCached(*m_caches.last());
}

void tst_OrthancCluster::aServerKilledMidFetchLeavesItsSeriesToTheOther()
{
    // Server B behind a slow link (1 Mbit/s): the least it may be given (the localiser, 128 KiB) takes it over a
    // second, while A's first three instances are kept within a few milliseconds — B is killed mid-answer, with
    // the link (which holds what B had sent already): its connections close in the middle of their answers.
    auto slow = std::make_unique<LinkEmulator>(m_b.httpPort(), 2, 256, 1);
    QVERIFY(slow->waitUntilListening());
    const QString bUrl = QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(slow->port());
    std::unique_ptr<StoreRegistry> reg = registry(QStringLiteral("killed"), m_a.dicomWebUrl(), bUrl);
    QVERIFY(reg);
    ResultJob<FetchSummary> *job = reg->fetchStudy(QStringLiteral("cluster"), m_study);
    bool killed = false;
    connect(job, &Job::progress, this, [&](qint64 done, qint64) {
        if (done >= 3 && !killed) {
            killed = true;
            m_b.kill();
            slow.reset();
        }
    });
    const Result<FetchSummary> r = runSync(job);
    QVERIFY(killed);
    QVERIFY2(r.isOk(), qPrintable(r.isOk() ? QString() : r.error().toString()));
    QCOMPARE(r.value().instances, m_instances.size());
    QVERIFY2(r.value().problems.isEmpty(), qPrintable(r.value().problems.join(QLatin1Char('\n'))));
    QVERIFY2(r.value().serversLost == QStringList{bUrl}, qPrintable(QStringLiteral("from %1; lost %2").arg(r.value().servers.join(QLatin1Char(',')), r.value().serversLost.join(QLatin1Char(',')))));
    QVERIFY(r.value().servers.contains(m_a.dicomWebUrl()));
    checkCached(*m_caches.last());

    // The store's test names the server that is gone; searches go on through the other.
    const Result<Done> tested = runSync(reg->test(QStringLiteral("cluster")));
    QVERIFY(!tested.isOk());
    QVERIFY2(tested.error().message().contains(QStringLiteral("1 of 2 servers")) && tested.error().message().contains(bUrl), qPrintable(tested.error().toString()));
    std::unique_ptr<StoreRegistry> other = registry(QStringLiteral("search"), bUrl, m_a.dicomWebUrl());  // the dead one first
    DicomQuery q;
    q.level = QueryLevel::Study;
    q.studyInstanceUid = m_study;
    const Result<QList<StudyHit>> found = runSync(other->findStudies(q));
    QVERIFY2(found.isOk() && found.value().size() == 1, qPrintable(found.isOk() ? QString::number(found.value().size()) : found.error().toString()));
}

QTEST_GUILESS_MAIN(tst_OrthancCluster)
#include "tst_orthanccluster.moc"
