// SPDX-License-Identifier: Apache-2.0
// The store configuration and the registry over every kind of store, against a real Orthanc (DICOMweb and
// DIMSE) started here, and spectrum-cli's archive commands run as a user would.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/documents/derivedinstance.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/transfer/dicomweb.h"
#include "spectrum/stores/blobs/cacheshare.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/blobs/memorystore.h"
#include "spectrum/transfer/blobclient.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/archives/archivekind.h"
#include "spectrum/stores/reading/studystreamer.h"
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
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QScopeGuard>
#include <QTest>

#include <sys/stat.h>

using namespace spectrum;
using namespace spectrum::test;

class tst_StoreRegistry : public RegistrySuite
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { RegistrySuite::initTestCase(); }
    void configRoundTripAndPrivacy();
    void configErrorsNameTheStoreAndField_data();
    void configErrorsNameTheStoreAndField();
    void sealedSecretsNeedTheirKey();
    void theHospitalsSignInPolicyWins();
    void everyKindWritesOnlyItsFields();
    void testEachKind();
    void findMergesAcrossStores();
    void conflictingPatientsAreNeverMerged();
    void fetchOverDicomWebIntoTheCache();
    void fetchOverDimseIntoAFolder();
    void firstLookFindsTheSliceAStackOpensAt();
    void brokenAnswersLeaveNothingHalfCached();
    void aStudyStreamsAtOnceAndGivesWayToSeriesRequests();
    void theNearestStoreComesFirst();
    void aWorkstationsCacheSharedWithTheReadingRoom();
    void aPeerThatVanishesMidReadIsLeftForTheArchive();
    void aPeerHoldingPartOfTheStudyIsLeftForTheArchive();

private:
    /// A reading-room peer: a cache of its own holding `instances`, shared with the room under `token`.
    struct Peer
    {
        std::unique_ptr<FileStore> cache;
        std::unique_ptr<CacheShare> share;
    };
    Peer sharedPeer(const QString &name, const QList<const DemoInstance *> &instances, const QString &token);
    /// Another workstation's configuration with that peer as store "room-a" at `port` (its share's, or a link's).
    StoreConfigFile withPeer(const QString &name, quint16 port, const QString &token);
    /// The demo head CT's instances.
    QList<const DemoInstance *> headCt() const;
};

tst_StoreRegistry::Peer tst_StoreRegistry::sharedPeer(const QString &name, const QList<const DemoInstance *> &instances, const QString &token)
{
    Peer peer;
    auto opened = FileStore::open(m_dir.filePath(name + QStringLiteral("-cache")), 0);
    if (!opened.isOk())
        return peer;
    peer.cache = opened.takeValue();
    for (const DemoInstance *i : instances)
        if (!runSync(peer.cache->put(i->identity.sopInstanceUid, ByteView(i->bytes))).isOk())
            return Peer();
    StoreConfigFile a = config(name);
    a.workstation.sharePort = freePort();
    a.workstation.shareToken = a.seal(token).value();
    a.workstation.shareAddress = QStringLiteral("127.0.0.1");  // plain on loopback only, as allowed explicitly
    a.workstation.sharePlain = true;
    peer.share = std::make_unique<CacheShare>(peer.cache.get());
    if (peer.share->follow(a).isError())
        return Peer();
    return peer;
}

StoreConfigFile tst_StoreRegistry::withPeer(const QString &name, quint16 port, const QString &token)
{
    StoreConfigFile b = config(name);
    StoreConfig room(QStringLiteral("room-a"), BlobdSettings());
    room.as<BlobdSettings>().url = QStringLiteral("blob://127.0.0.1:%1").arg(port);
    room.as<BlobdSettings>().token = b.seal(token).value();
    if (Error e = b.add(room); e.isError())
        qWarning("%s", qPrintable(e.toString()));
    return b;
}

QList<const DemoInstance *> tst_StoreRegistry::headCt() const
{
    QList<const DemoInstance *> ct;
    for (const DemoInstance &i : m_instances) {
        if (i.identity.studyInstanceUid == DemoArchive::studyUid(DemoStudy::HeadCt))
            ct << &i;
    }
    return ct;
}

/// The archive kinds (archivekind.h): each at its place in the table, known by its name; a store of it holds its
/// own fields alone, writes them and reads them back, and a record with a field of another kind is refused naming it.
void tst_StoreRegistry::everyKindWritesOnlyItsFields()
{
    const QHash<StoreField, QString> key = {
        {StoreField::Url, QStringLiteral("url")},         {StoreField::Mirrors, QStringLiteral("mirrors")},
        {StoreField::Auth, QStringLiteral("auth")},       {StoreField::User, QStringLiteral("user")},
        {StoreField::Password, QStringLiteral("password")}, {StoreField::Token, QStringLiteral("token")},
        {StoreField::CaFile, QStringLiteral("caFile")},   {StoreField::Host, QStringLiteral("host")},
        {StoreField::Port, QStringLiteral("port")},       {StoreField::AeTitle, QStringLiteral("aeTitle")},
        {StoreField::OurAeTitle, QStringLiteral("ourAeTitle")}, {StoreField::Retrieve, QStringLiteral("retrieve")},
        {StoreField::Tls, QStringLiteral("tls")},         {StoreField::Bucket, QStringLiteral("bucket")},
        {StoreField::Prefix, QStringLiteral("prefix")},   {StoreField::Region, QStringLiteral("region")},
        {StoreField::Addressing, QStringLiteral("addressing")}, {StoreField::AccessKey, QStringLiteral("accessKey")},
        {StoreField::SecretKey, QStringLiteral("secretKey")}, {StoreField::Path, QStringLiteral("path")},
        {StoreField::MaxParallel, QStringLiteral("maxParallel")}, {StoreField::Timeout, QStringLiteral("timeoutSeconds")},
        {StoreField::Issuer, QStringLiteral("issuer")},   {StoreField::ClientId, QStringLiteral("clientId")},
        {StoreField::Audience, QStringLiteral("audience")}, {StoreField::StsUrl, QStringLiteral("stsUrl")},
        {StoreField::RoleArn, QStringLiteral("roleArn")}};
    const QString ca = m_dir.filePath(QStringLiteral("kinds-ca.pem"));
    QVERIFY(writeFile(ca, QByteArrayLiteral("-----BEGIN CERTIFICATE-----\n")));
    // A value each field takes in a store that passes its kind's checks.
    const QHash<StoreField, QVariant> sample = {
        {StoreField::Mirrors, QStringList{QStringLiteral("https://pacs-b.example/dicom-web")}},
        {StoreField::Auth, QStringLiteral("basic")},      {StoreField::User, QStringLiteral("reader")},
        {StoreField::Password, QVariant::fromValue(Secret{Secret::Source::Env, QStringLiteral("PASSWORD")})},
        {StoreField::Token, QVariant::fromValue(Secret{Secret::Source::Env, QStringLiteral("TOKEN")})},
        {StoreField::CaFile, ca},                         {StoreField::Host, QStringLiteral("pacs.example")},
        {StoreField::Port, 104},                          {StoreField::AeTitle, QStringLiteral("PACS")},
        {StoreField::OurAeTitle, QStringLiteral("READER1")}, {StoreField::Retrieve, QStringLiteral("move")},
        {StoreField::Tls, true},                          {StoreField::Bucket, QStringLiteral("dicom")},
        {StoreField::Prefix, QStringLiteral("spectrum/")}, {StoreField::Region, QStringLiteral("eu-west-1")},
        {StoreField::Addressing, true},                   {StoreField::AccessKey, QStringLiteral("AKIA")},
        {StoreField::SecretKey, QVariant::fromValue(Secret{Secret::Source::Env, QStringLiteral("SECRET")})},
        {StoreField::Path, QStringLiteral("/srv/dicom")}, {StoreField::MaxParallel, 3}, {StoreField::Timeout, 45},
        {StoreField::Issuer, QStringLiteral("https://sso.example/realms/radiology")}, {StoreField::ClientId, QStringLiteral("spectrum")},
        {StoreField::Audience, QStringLiteral("https://pacs.example")}, {StoreField::StsUrl, QStringLiteral("https://sts.example")},
        {StoreField::RoleArn, QStringLiteral("arn:aws:iam::123456789012:role/readers")}};
    const QHash<StoreKind, QString> url = {{StoreKind::DicomWeb, QStringLiteral("https://pacs.example/dicom-web")},
                                           {StoreKind::Blobd, QStringLiteral("blobs://cluster.example:7777")},
                                           {StoreKind::S3, QStringLiteral("https://s3.example")}};
    const QList<const ArchiveKind *> kinds = archiveKinds();
#define SPECTRUM_ONE_MORE(kind, name) +1
    QCOMPARE(kinds.size(), 0 SPECTRUM_STORE_KINDS(SPECTRUM_ONE_MORE));
#undef SPECTRUM_ONE_MORE
    for (int i = 0; i < kinds.size(); ++i) {
        const ArchiveKind &kind = *kinds[i];
        QCOMPARE(int(kind.kind()), i);
        QCOMPARE(storeKindFromName(kind.name()).value(), kind.kind());
        // Every field it has filled in (the limits every store has); the others are not there to fill.
        StoreConfig s(QStringLiteral("everything"), kind.defaults());
        QCOMPARE(s.kind(), kind.kind());
        for (auto it = key.begin(); it != key.end(); ++it) {
            QVariant value = it.key() == StoreField::Url ? QVariant(url.value(kind.kind())) : sample.value(it.key());
            if (it.key() == StoreField::Auth && kind.kind() == StoreKind::S3)
                value = QStringLiteral("keys");  // an S3 store's own way with a key (the other: "oidc")
            const bool has = kind.fields().contains(it.key()) || it.key() == StoreField::MaxParallel || it.key() == StoreField::Timeout;
            QCOMPARE(kind.setValue(s, it.key(), value), has);
            QCOMPARE(kind.value(s, it.key()).isValid(), has);
        }
        QCOMPARE(s.validate(), Error());
        const QJsonObject json = s.toJson();
        QStringList allowed{QStringLiteral("name"), QStringLiteral("kind"), QStringLiteral("maxParallel"), QStringLiteral("timeoutSeconds")};
        for (StoreField f : kind.fields())
            allowed << key.value(f);
        for (auto it = json.begin(); it != json.end(); ++it)
            QVERIFY2(allowed.contains(it.key()), qPrintable(kind.name() + QStringLiteral(" wrote ") + it.key()));
        QVERIFY2(json.size() > 4 || kind.kind() == StoreKind::Local, qPrintable(kind.name()));
        // Read back as it was written.
        Result<StoreConfig> back = StoreConfig::fromJson(json, kind.name());
        QVERIFY2(back.isOk(), qPrintable(back.error().toString()));
        QCOMPARE(back.value().kind(), kind.kind());
        for (StoreField f : kind.fields()) {
            const QVariant a = kind.value(back.value(), f), b = kind.value(s, f);
            if (b.canConvert<Secret>() && b.typeId() == QMetaType::fromType<Secret>().id())
                QCOMPARE(a.value<Secret>().value, b.value<Secret>().value);
            else
                QCOMPARE(a, b);
        }
        // A field of another kind in its record: refused, named.
        const QString foreign = kind.fields().contains(StoreField::Bucket) ? QStringLiteral("host") : QStringLiteral("bucket");
        QJsonObject mixed = json;
        mixed.insert(foreign, QStringLiteral("x"));
        Result<StoreConfig> refused = StoreConfig::fromJson(mixed, kind.name());
        QVERIFY(!refused.isOk());
        QVERIFY2(refused.error().message().contains(QStringLiteral("'%1' is not a field of a %2 store").arg(foreign, kind.name())), qPrintable(refused.error().message()));
    }
    QVERIFY(!storeKindFromName(QStringLiteral("ftp")).isOk());
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
    QCOMPARE(again.value().reveal(web->as<DicomWebSettings>().password).value(), kPassword);
    QCOMPARE(again.value().find(QStringLiteral("pacs"))->as<DimseSettings>().port, int(m_orthanc.dicomPort()));
    // A DICOMweb archive of several servers keeps its mirrors.
    StoreConfigFile mirrored = again.value();
    StoreConfig cluster = dicomWebStore(QStringLiteral("cluster"), QStringLiteral("http://pacs-a/dicom-web"));
    cluster.as<DicomWebSettings>().mirrors = {QStringLiteral("http://pacs-b/dicom-web"), QStringLiteral("https://pacs-c/dicom-web")};
    QCOMPARE(mirrored.add(cluster), Error());
    QCOMPARE(mirrored.save(), Error());
    QCOMPARE(StoreConfigFile::load(path).value().find(QStringLiteral("cluster"))->as<DicomWebSettings>().mirrors, cluster.as<DicomWebSettings>().mirrors);
    QVERIFY(cluster.summary().contains(QStringLiteral("http://pacs-b/dicom-web")));
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
    pacs.as<DimseSettings>().tls = true;
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
    QTest::newRow("mirror not http") << QByteArray(R"({"stores":[{"name":"w","kind":"dicomweb","url":"http://h/dw","mirrors":["ftp://h2/dw"]}]})") << QStringLiteral("ftp://h2/dw");
    QTest::newRow("mirror twice") << QByteArray(R"({"stores":[{"name":"w","kind":"dicomweb","url":"http://h/dw","mirrors":["http://h/dw"]}]})") << QStringLiteral("named twice");
    QTest::newRow("mirrors not a list") << QByteArray(R"({"stores":[{"name":"w","kind":"dicomweb","url":"http://h/dw","mirrors":"http://h2/dw"}]})") << QStringLiteral("mirrors");
    QTest::newRow("duplicate") << QByteArray(R"({"stores":[{"name":"w","kind":"local"},{"name":"w","kind":"local"}]})") << QStringLiteral("two stores");
    QTest::newRow("bad name") << QByteArray(R"({"stores":[{"name":"../x","kind":"local"}]})") << QStringLiteral("name");
    QTest::newRow("tls without key") << QByteArray(R"({"workstation":{"tls":{"certificate":"/etc/passwd"}}})") << QStringLiteral("tls");
    QTest::newRow("tls unreadable") << QByteArray(R"({"workstation":{"tls":{"certificate":"/nonexistent.pem","key":"/etc/passwd"}}})")
                                    << QStringLiteral("/nonexistent.pem");
    QTest::newRow("tls unknown field") << QByteArray(R"({"workstation":{"tls":{"certificate":"/etc/passwd","key":"/etc/passwd","pin":"1"}}})")
                                       << QStringLiteral("pin");
    QTest::newRow("sign-in keep") << QByteArray(R"({"signIn":{"keep":"forever"}})") << QStringLiteral("signIn keep");
    QTest::newRow("sign-in idle negative") << QByteArray(R"({"signIn":{"idleMinutes":-1}})") << QStringLiteral("idleMinutes");
    QTest::newRow("sign-in idle text") << QByteArray(R"({"signIn":{"idleMinutes":"15"}})") << QStringLiteral("idleMinutes");
    QTest::newRow("sign-in idle a week") << QByteArray(R"({"signIn":{"idleMinutes":10080}})") << QStringLiteral("1440");
    QTest::newRow("sign-in unknown") << QByteArray(R"({"signIn":{"lockAfter":5}})") << QStringLiteral("lockAfter");
    QTest::newRow("sign-in not an object") << QByteArray(R"({"signIn":"program"})") << QStringLiteral("signIn takes");
}

void tst_StoreRegistry::theHospitalsSignInPolicyWins()
{
    // The user's own policy, alone: used and saved.
    const QString user = m_dir.filePath(QStringLiteral("policy-user.json")), system = m_dir.filePath(QStringLiteral("policy-system.json"));
    QVERIFY(writeFile(user, R"({"version":1,"signIn":{"keep":"desktop","idleMinutes":30}})"));
    const QByteArray before = qgetenv("SPECTRUM_SYSTEM_CONFIG");
    const auto restore = qScopeGuard([&] { qputenv("SPECTRUM_SYSTEM_CONFIG", before); });
    qputenv("SPECTRUM_SYSTEM_CONFIG", m_dir.filePath(QStringLiteral("no-system.json")).toUtf8());
    Result<StoreConfigFile> own = StoreConfigFile::load(user);
    QVERIFY(own.isOk());
    QVERIFY(own.value().signIn.keepBetweenPrograms && !own.value().signIn.fromSystem);
    QCOMPARE(own.value().signIn.idleMinutes, 30.0);
    QVERIFY(!own.value().save().isError());
    QVERIFY(readFile(user).contains("\"idleMinutes\": 30"));

    // The hospital's over it: the hospital's, whatever the user's says; saving leaves it to the hospital's file.
    QVERIFY(writeFile(system, R"({"version":1,"signIn":{"keep":"program","idleMinutes":0.5}})"));
    qputenv("SPECTRUM_SYSTEM_CONFIG", system.toUtf8());
    Result<StoreConfigFile> both = StoreConfigFile::load(user);
    QVERIFY(both.isOk());
    QVERIFY(!both.value().signIn.keepBetweenPrograms && both.value().signIn.fromSystem);
    QCOMPARE(both.value().signIn.idleMinutes, 0.5);
    QCOMPARE(both.value().signIn.summary(), QStringLiteral("kept by the program that signed in alone; signed out after 30 seconds without use"));
    QVERIFY(!both.value().save().isError());
    QVERIFY2(!readFile(user).contains("signIn"), readFile(user).constData());
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
    const Result<QString> r = reloaded.reveal(reloaded.find(QStringLiteral("web"))->as<DicomWebSettings>().password);
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
    wrong.as<DicomWebSettings>().auth = QStringLiteral("basic");
    wrong.as<DicomWebSettings>().user = kUser;
    wrong.as<DicomWebSettings>().password = c.seal(QStringLiteral("nope")).value();
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
    QCOMPARE(hits.value().size(), 5);  // each study once, found in both stores
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
    StoreConfig local(QStringLiteral("usb"), LocalSettings());
    local.as<LocalSettings>().path = cacheDir;
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
        if (i.identity.studyInstanceUid != DemoArchive::studyUid(DemoStudy::HeadCt))
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

// Location independence: a study held in several places is opened from the nearest — the cluster (blobd
// stores) before the central archives, these in the configuration's order — and lands in the disk cache.
void tst_StoreRegistry::theNearestStoreComesFirst()
{
    BlobdProcess blobd(m_dir.filePath(QStringLiteral("cluster-root")));
    QVERIFY(blobd.start());
    StoreConfigFile c = config(QStringLiteral("nearest"));
    StoreConfig cluster(QStringLiteral("cluster"), BlobdSettings());
    cluster.as<BlobdSettings>().url = QStringLiteral("blob://127.0.0.1:%1").arg(blobd.port());
    cluster.as<BlobdSettings>().token = c.seal(blobd.token()).value();
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

// The seeds' cluster store: workstation A shares its cache read-only (CacheShare, as the workstation runs it from its
// configuration); workstation B, with A as a blobd store, finds A's studies by patient and fetches them into its own
// cache, checked. Nobody can store into A's cache or remove from it, a wrong token gets nothing, and the share
// follows A's configuration (moved to another port, then off).
void tst_StoreRegistry::aWorkstationsCacheSharedWithTheReadingRoom()
{
    QList<const DemoInstance *> mr;
    for (const DemoInstance &i : m_instances) {
        if (i.identity.modality == QLatin1String("MR"))
            mr << &i;
    }
    QVERIFY(mr.size() > 2);
    auto openedA = FileStore::open(m_dir.filePath(QStringLiteral("share-a-cache")), 0);
    QVERIFY(openedA.isOk());
    for (const DemoInstance *i : mr)
        QVERIFY(runSync(openedA.value()->put(i->identity.sopInstanceUid, ByteView(i->bytes))).isOk());

    StoreConfigFile a = config(QStringLiteral("share-a"));
    const QString token = QStringLiteral("reading-room-4711");
    a.workstation.sharePort = freePort();
    a.workstation.shareToken = a.seal(token).value();
    CacheShare share(openedA.value().get());
    // Without TLS the cache is not shared, unless plain is allowed on one named address: never on every address.
    Error refused = share.follow(a);
    QVERIFY2(refused.code() == ErrorCode::InvalidArgument && refused.message().contains(QLatin1String("TLS")), qPrintable(refused.toString()));
    QVERIFY(!share.isSharing());
    a.workstation.sharePlain = true;
    refused = share.follow(a);
    QVERIFY2(refused.message().contains(QLatin1String("one named address")), qPrintable(refused.toString()));
    QVERIFY(!share.isSharing());
    a.workstation.shareAddress = QStringLiteral("127.0.0.1");
    QCOMPARE(a.save(), Error());
    Result<StoreConfigFile> reread = StoreConfigFile::load(a.path());  // what `spectrum-cli stores share` writes, read back
    QVERIFY2(reread.isOk(), qPrintable(reread.error().toString()));
    QCOMPARE(reread.value().workstation.sharePort, a.workstation.sharePort);
    QCOMPARE(reread.value().workstation.shareAddress, QStringLiteral("127.0.0.1"));
    QVERIFY(reread.value().workstation.sharePlain);
    QVERIFY(!readFile(a.path()).contains(token.toUtf8()));  // sealed, never in clear
    QCOMPARE(share.follow(reread.value()), Error());
    QVERIFY(share.isSharing());
    QCOMPARE(share.port(), quint16(a.workstation.sharePort));
    {  // on that address only: another address of this machine (127.0.0.2 is loopback too) finds nothing there
        QTcpSocket elsewhere;
        elsewhere.connectToHost(QHostAddress(QStringLiteral("127.0.0.2")), share.port());
        QVERIFY(!elsewhere.waitForConnected(5000));
        QCOMPARE(elsewhere.error(), QAbstractSocket::ConnectionRefusedError);
    }

    StoreConfigFile b = config(QStringLiteral("share-b"));
    StoreConfig room(QStringLiteral("room-a"), BlobdSettings());
    room.as<BlobdSettings>().url = QStringLiteral("blob://127.0.0.1:%1").arg(share.port());
    room.as<BlobdSettings>().token = b.seal(token).value();
    QCOMPARE(b.add(room), Error());
    auto openedB = FileStore::open(m_dir.filePath(QStringLiteral("share-b-cache")), 0);
    QVERIFY(openedB.isOk());
    std::shared_ptr<FileStore> diskB(openedB.takeValue());
    StoreRegistry reg(b, diskB);
    DicomQuery byPatient;
    byPatient.patientName = mr.first()->identity.patientName;
    Result<QList<StudyHit>> found = runSync(reg.findStudies(byPatient, {QStringLiteral("room-a")}));
    QVERIFY2(found.isOk(), qPrintable(found.error().toString()));
    QCOMPARE(found.value().size(), 1);
    QCOMPARE(found.value().first().study.identity.studyInstanceUid, mr.first()->identity.studyInstanceUid);
    Result<FetchSummary> fetched = runSync(reg.fetchStudy(QStringLiteral("room-a"), mr.first()->identity.studyInstanceUid));
    QVERIFY2(fetched.isOk(), qPrintable(fetched.error().toString()));
    QCOMPARE(fetched.value().instances, int(mr.size()));
    for (const DemoInstance *i : mr) {
        Result<ByteView> cached = runSync(diskB->read(i->identity.sopInstanceUid));
        QVERIFY(cached.isOk());
        QVERIFY(cached.value().toByteArray() == i->bytes);
    }

    // Read-only: nothing stored, nothing removed; a wrong token gets nothing at all.
    BlobClient client(blobEndpointFor(room, b).value());
    Result<RemoteBlobInfo> pushed = runSync(client.push(QStringLiteral("intruder"), ByteView(QByteArray("not an image"))));
    QCOMPARE(pushed.error().code(), ErrorCode::NotAllowed);
    QCOMPARE(runSync(client.remove(mr.first()->identity.sopInstanceUid)).error().code(), ErrorCode::NotAllowed);
    QVERIFY(runSync(openedA.value()->stat(mr.first()->identity.sopInstanceUid)).isOk());
    QVERIFY(runSync(openedA.value()->stat(QStringLiteral("intruder"))).error().code() == ErrorCode::NotFound);
    BlobEndpoint wrong = blobEndpointFor(room, b).value();
    wrong.token = QStringLiteral("guess");
    QCOMPARE(runSync(BlobClient(wrong).stat(mr.first()->identity.sopInstanceUid)).error().code(), ErrorCode::Authentication);

    // It follows the configuration: another port (the old one closes), then off.
    const quint16 before = share.port();
    StoreConfigFile moved = reread.value();
    moved.workstation.sharePort = freePort();
    QCOMPARE(share.follow(moved), Error());
    QCOMPARE(share.port(), quint16(moved.workstation.sharePort));
    BlobEndpoint old = blobEndpointFor(room, b).value();
    old.port = before;
    QCOMPARE(runSync(BlobClient(old).stat(mr.first()->identity.sopInstanceUid)).error().code(), ErrorCode::Network);
    moved.workstation.sharePort = 0;
    QCOMPARE(share.follow(moved), Error());
    QVERIFY(!share.isSharing());
}

// The reading room's peer goes away while a study is read from it (switched off: its connections reset): the
// stream goes on from the next store holding the study — the archive — and the study is whole and the archive's
// bytes; what came from the peer before stays.
void tst_StoreRegistry::aPeerThatVanishesMidReadIsLeftForTheArchive()
{
    const QString ctUid = DemoArchive::studyUid(DemoStudy::HeadCt);
    const QList<const DemoInstance *> ct = headCt();
    QVERIFY(ct.size() >= 6);
    const QString token = QStringLiteral("reading-room-0815");
    const Peer peer = sharedPeer(QStringLiteral("vanish-a"), ct, token);
    QVERIFY(peer.share);
    // The peer over a slow link (1 MB/s): the study takes seconds, and the link can be cut midway.
    auto link = std::make_unique<LinkEmulator>(peer.share->port(), 4, 64, 8);
    QVERIFY(link->waitUntilListening());

    StoreConfigFile b = withPeer(QStringLiteral("vanish-b"), link->port(), token);
    auto openedB = FileStore::open(m_dir.filePath(QStringLiteral("vanish-b-cache")), 0);
    QVERIFY(openedB.isOk());
    std::shared_ptr<FileStore> diskB(openedB.takeValue());
    StoreRegistry reg(b, diskB);
    const QStringList nearest = reg.nearestFirst({QStringLiteral("web"), QStringLiteral("room-a")});
    QCOMPARE(nearest, (QStringList{QStringLiteral("room-a"), QStringLiteral("web")}));

    StudyStreamer streamer(&reg, diskB.get(), nearest.first(), ctUid);
    streamer.setFallbacks(nearest.mid(1));
    QSignalSpy changed(&streamer, &StudyStreamer::sourceChanged);
    QSignalSpy failed(&streamer, &StudyStreamer::failed);
    streamer.start();
    QVERIFY(QTest::qWaitFor([&] { return streamer.isListed() && streamer.cachedCount() >= 2; }, 30000));
    const int fromThePeer = streamer.cachedCount();
    QVERIFY2(fromThePeer < ct.size(), "the link was not slow enough to be cut midway");
    link.reset();  // the peer is gone: every connection to it reset, new ones refused
    QVERIFY(changed.wait(30000) || !changed.isEmpty());
    QCOMPARE(changed.first().at(0).toString(), QStringLiteral("room-a"));
    QCOMPARE(changed.first().at(1).toString(), QStringLiteral("web"));
    QCOMPARE(streamer.storeName(), QStringLiteral("web"));
    QTRY_VERIFY_WITH_TIMEOUT(streamer.isComplete(), 60000);
    QCOMPARE(streamer.cachedCount(), int(ct.size()));
    QCOMPARE(streamer.failedCount(), 0);
    QVERIFY(failed.isEmpty());
    for (const DemoInstance *i : ct) {
        Result<ByteView> cached = runSync(diskB->read(i->identity.sopInstanceUid));
        QVERIFY(cached.isOk());
        QVERIFY(cached.value().toByteArray() == i->bytes);
    }
}

void tst_StoreRegistry::aPeerHoldingPartOfTheStudyIsLeftForTheArchive()
{
    // A reading-room peer that cached half of a CT (what its reader scrolled through) lists half. The search says
    // how many the study has (the most any store reported); the streamer leaves the peer for the archive, which
    // lists it whole, and the study is complete — never taken as whole from the peer's half.
    const QString ctUid = DemoArchive::studyUid(DemoStudy::HeadCt);
    const QList<const DemoInstance *> ct = headCt();
    QVERIFY(ct.size() >= 6);
    const QString token = QStringLiteral("reading-room-4711");
    const Peer peer = sharedPeer(QStringLiteral("half-a"), ct.mid(0, ct.size() / 2), token);
    QVERIFY(peer.share);

    StoreConfigFile b = withPeer(QStringLiteral("half-b"), peer.share->port(), token);
    auto openedB = FileStore::open(m_dir.filePath(QStringLiteral("half-b-cache")), 0);
    QVERIFY(openedB.isOk());
    std::shared_ptr<FileStore> diskB(openedB.takeValue());
    StoreRegistry reg(b, diskB);
    DicomQuery q;
    q.studyInstanceUid = ctUid;
    const Result<QList<StudyHit>> found = runSync(reg.findStudies(q, {QStringLiteral("web"), QStringLiteral("room-a")}));
    QVERIFY(found.isOk() && found.value().size() == 1);
    const StudyHit hit = found.value().first();
    QCOMPARE(hit.study.relatedInstances, int(ct.size()));  // the most any store holds: the archive's count
    const QStringList nearest = reg.nearestFirst(hit.stores);
    QCOMPARE(nearest, (QStringList{QStringLiteral("room-a"), QStringLiteral("web")}));

    StudyStreamer streamer(&reg, diskB.get(), nearest.first(), ctUid);
    streamer.setFallbacks(nearest.mid(1));
    streamer.setExpectedInstances(hit.study.relatedInstances);
    QSignalSpy changed(&streamer, &StudyStreamer::sourceChanged);
    streamer.start();
    QTRY_VERIFY_WITH_TIMEOUT(streamer.isComplete(), 60000);
    QCOMPARE(changed.size(), 1);
    QCOMPARE(changed.first().at(0).toString(), QStringLiteral("room-a"));
    QCOMPARE(changed.first().at(1).toString(), QStringLiteral("web"));
    QVERIFY(changed.first().at(2).value<Error>().message().contains(QStringLiteral("holds %1 of the study's %2 instances").arg(ct.size() / 2).arg(ct.size())));
    QCOMPARE(streamer.total(), int(ct.size()));
    QCOMPARE(streamer.cachedCount(), int(ct.size()));
    for (const DemoInstance *i : ct) {
        Result<ByteView> cached = runSync(diskB->read(i->identity.sopInstanceUid));
        QVERIFY(cached.isOk());
        QVERIFY(cached.value().toByteArray() == i->bytes);
    }
}

QTEST_GUILESS_MAIN(tst_StoreRegistry)
#include "tst_storeregistry.moc"
