// SPDX-License-Identifier: Apache-2.0
// An S3 store behind the hospital's single sign-on: no key in the workstation's configuration. The reader signs in
// (`spectrum-cli login`, the tests' browser at Ory Hydra's login and consent), and the store's security token service
// (SeaweedFS, started here) takes the sign-in's ID token — checked against the provider's published keys, then the
// role's trust policy — for credentials of the reader's own that sign the requests, within what the role's policy
// allows. Through the programs' doors: export, find and fetch as that reader; a reader the role is not for, and no
// sign-in at all, refused with words they can act on. In a workstation's process: credentials past their time, and
// credentials the store no longer takes (its signing key rotated), got again behind the request; signing out drops
// them at once.

#include "identityprovider.h"
#include "stsstore.h"
#include "testsupport.h"

#include "spectrum/core/resultjob.h"
#include "spectrum/imaging/demostudies.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/signin/signin.h"
#include "spectrum/transfer/s3client.h"

#include <QDateTime>
#include <QDir>
#include <QProcess>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;
using namespace spectrum::test;

namespace {

const QString kRole = QStringLiteral("arn:aws:iam::role/RadiologyReaders");

QJsonObject rolesAndPolicies()
{
    // Readers of the radiology department (Dr. Smith here) may read and write the studies bucket, nothing else.
    const QJsonObject trust{{QStringLiteral("Version"), QStringLiteral("2012-10-17")},
                            {QStringLiteral("Statement"),
                             QJsonArray{QJsonObject{{QStringLiteral("Effect"), QStringLiteral("Allow")},
                                                    {QStringLiteral("Principal"), QJsonObject{{QStringLiteral("Federated"), QStringLiteral("hospital")}}},
                                                    {QStringLiteral("Action"), QJsonArray{QStringLiteral("sts:AssumeRoleWithWebIdentity")}},
                                                    {QStringLiteral("Condition"),
                                                     QJsonObject{{QStringLiteral("StringEquals"), QJsonObject{{QStringLiteral("oidc:sub"), QStringLiteral("asmith")}}}}}}}}};
    const QJsonObject policy{{QStringLiteral("Version"), QStringLiteral("2012-10-17")},
                             {QStringLiteral("Statement"),
                              QJsonArray{QJsonObject{{QStringLiteral("Effect"), QStringLiteral("Allow")},
                                                     {QStringLiteral("Action"), QJsonArray{QStringLiteral("s3:GetObject"), QStringLiteral("s3:PutObject"), QStringLiteral("s3:ListBucket")}},
                                                     {QStringLiteral("Resource"), QJsonArray{QStringLiteral("arn:aws:s3:::studies"), QStringLiteral("arn:aws:s3:::studies/*")}}},
                                         QJsonObject{{QStringLiteral("Effect"), QStringLiteral("Allow")},
                                                     {QStringLiteral("Action"), QJsonArray{QStringLiteral("sts:ValidateSession")}},
                                                     {QStringLiteral("Resource"), QJsonArray{QStringLiteral("*")}}}}}};
    return {{QStringLiteral("roles"), QJsonArray{QJsonObject{{QStringLiteral("roleName"), QStringLiteral("RadiologyReaders")},
                                                            {QStringLiteral("roleArn"), kRole},
                                                            {QStringLiteral("trustPolicy"), trust},
                                                            {QStringLiteral("attachedPolicies"), QJsonArray{QStringLiteral("StudiesReadWrite")}}}}},
            {QStringLiteral("policies"), QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("StudiesReadWrite")}, {QStringLiteral("document"), policy}}}}};
}

} // namespace

class tst_S3SignIn : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void aSignedInReaderSendsFindsAndFetches();
    void aReaderTheRoleIsNotForIsRefusedClearly();
    void credentialsAreGotAgainWhenTheyExpireOrAreRefused();
    void aSignOutDropsTheCredentials();

private:
    QList<QPair<QString, QString>> env(const QString &subject = QStringLiteral("asmith")) const;
    ProcessResult cli(const QStringList &args, const QString &subject = QStringLiteral("asmith")) const { return runCli(args, env(subject), 120000); }
    /// The studies bucket as the hospital's administrator reaches it (a static key), and the keys in it.
    S3Endpoint asAdministrator() const;
    QStringList keysInBucket() const;

    QTemporaryDir m_dir;
    IdentityProviderProcess m_idp;
    StsStoreProcess m_store;
    QString m_config, m_studyUid;
    QStringList m_files;
};

QList<QPair<QString, QString>> tst_S3SignIn::env(const QString &subject) const
{
    QList<QPair<QString, QString>> e = {{QStringLiteral("SPECTRUM_CONFIG"), m_config},
                                        {QStringLiteral("SPECTRUM_CACHE_DIR"), m_dir.filePath(QStringLiteral("cache"))},
                                        {QStringLiteral("SPECTRUM_LOG_DIR"), m_dir.filePath(QStringLiteral("log"))},
                                        {QStringLiteral("XDG_STATE_HOME"), m_dir.filePath(QStringLiteral("state"))},
                                        {QStringLiteral("XDG_CONFIG_HOME"), m_dir.filePath(QStringLiteral("config"))},
                                        {QStringLiteral("XDG_DATA_HOME"), m_dir.filePath(QStringLiteral("data"))},
                                        {QStringLiteral("DBUS_SESSION_BUS_ADDRESS"), QString()},
                                        {QStringLiteral("OIDC_SUBJECT"), subject}};
    if (subject != QLatin1String("asmith"))
        e += {{QStringLiteral("OIDC_NAME"), QStringLiteral("Dr. John Doe")}, {QStringLiteral("OIDC_GIVEN"), QStringLiteral("John")},
              {QStringLiteral("OIDC_FAMILY"), QStringLiteral("Doe")}, {QStringLiteral("OIDC_EMAIL"), QStringLiteral("jdoe@hospital.test")}};
    e += browserEnvironment(m_idp, m_dir.filePath(QStringLiteral("browser.log")));
    return e;
}

S3Endpoint tst_S3SignIn::asAdministrator() const
{
    S3Endpoint e;
    e.endpoint = QUrl(m_store.url());
    e.bucket = QStringLiteral("studies");
    e.credentials.accessKey = StsStoreProcess::adminKey();
    e.credentials.secretKey = StsStoreProcess::adminSecret();
    return e;
}

QStringList tst_S3SignIn::keysInBucket() const
{
    S3Client client(asAdministrator());
    QStringList keys;
    QString token;
    do {
        const Result<S3Listing> page = runSync(client.list({}, {}, token));
        if (!page.isOk())
            return {QStringLiteral("(not listed: %1)").arg(page.error().message())};
        for (const S3Object &o : page.value().objects)
            keys << o.key;
        token = page.value().truncated ? page.value().nextToken : QString();
    } while (!token.isEmpty());
    return keys;
}

void tst_S3SignIn::initTestCase()
{
    QVERIFY2(m_idp.start(), "the identity provider (Ory Hydra, built by scripts/install-deps.sh) did not start");
    QVERIFY(m_idp.addClient(QStringLiteral("spectrum"), {}));
    QVERIFY2(m_store.start(m_idp.issuer(), QStringLiteral("spectrum"), rolesAndPolicies()),
             "the S3 store with a token service (SeaweedFS, built by scripts/install-deps.sh) did not start");
    {
        S3Client client(asAdministrator());
        const Result<Done> made = runSync(client.createBucket());
        QVERIFY2(made.isOk(), qPrintable(made.error().message()));
    }
    DemoOptions demo;
    demo.studies = {DemoStudy::HeadCt};
    demo.ctSlices = 3;
    QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("files"))));
    int n = 0;
    QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) {
                 const QString file = m_dir.filePath(QStringLiteral("files/%1.dcm").arg(++n));
                 m_files << file;
                 return writeFile(file, i.bytes) ? Error() : Error(ErrorCode::Io, QStringLiteral("not written"));
             }).isError());
    m_studyUid = DemoArchive::studyUid(DemoStudy::HeadCt);

    // Added as an admin does: the store, the provider and the role; no key.
    m_config = m_dir.filePath(QStringLiteral("stores.json"));
    const ProcessResult r = cli({QStringLiteral("stores"), QStringLiteral("add"), QStringLiteral("objects"), QStringLiteral("--kind"), QStringLiteral("s3"),
                                 QStringLiteral("--url"), m_store.url(), QStringLiteral("--bucket"), QStringLiteral("studies"),
                                 QStringLiteral("--issuer"), m_idp.issuer(), QStringLiteral("--client-id"), QStringLiteral("spectrum"),
                                 QStringLiteral("--role-arn"), kRole});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QByteArray kept = readFile(m_config);
    QVERIFY2(kept.contains("\"auth\": \"oidc\"") && !kept.contains("accessKey") && !kept.contains("secretKey"), kept.constData());
    // A role with a key, or a key with a sign-in: one or the other, said.
    const ProcessResult mixed = cli({QStringLiteral("stores"), QStringLiteral("add"), QStringLiteral("mixed"), QStringLiteral("--kind"), QStringLiteral("s3"),
                                     QStringLiteral("--url"), m_store.url(), QStringLiteral("--bucket"), QStringLiteral("studies"),
                                     QStringLiteral("--access-key"), QStringLiteral("AKIA"), QStringLiteral("--role-arn"), kRole});
    QVERIFY(mixed.exitCode != 0);
    QVERIFY2(mixed.err.contains("go with --issuer"), mixed.err.constData());
}

void tst_S3SignIn::aSignedInReaderSendsFindsAndFetches()
{
    // Not signed in: nothing reaches the store, and the reader is told how to sign in.
    ProcessResult r = cli(QStringList{QStringLiteral("export"), QStringLiteral("--store"), QStringLiteral("objects")} + m_files);
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("not signed in") && r.err.contains("spectrum-cli login --store objects"), (r.out + r.err).constData());
    QVERIFY(keysInBucket().isEmpty());

    r = cli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("objects")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.out.contains("signed in as Dr. Anna Smith (asmith)"), r.out.constData());

    // As the reader: the instances and the study's index land in the bucket, as the administrator sees it.
    r = cli(QStringList{QStringLiteral("export"), QStringLiteral("--store"), QStringLiteral("objects")} + m_files);
    QVERIFY2(r.exitCode == 0, (r.out + r.err).constData());
    const QStringList keys = keysInBucket();
    QCOMPARE(keys.size(), m_files.size() + 1);
    QVERIFY2(keys.contains(m_studyUid + QStringLiteral("/study.json")), qPrintable(keys.join(QLatin1Char(' '))));

    r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("objects")});
    QVERIFY2(r.exitCode == 0 && r.out.contains(m_studyUid.toLatin1()), (r.out + r.err).constData());
    r = cli({QStringLiteral("fetch"), QStringLiteral("--store"), QStringLiteral("objects"), m_studyUid});
    QVERIFY2(r.exitCode == 0, (r.out + r.err).constData());
    r = cli({QStringLiteral("studies")});
    QVERIFY2(r.out.contains(m_studyUid.toLatin1()) && r.out.contains(QByteArray::number(m_files.size()) + " images"), (r.out + r.err).constData());
    // The program log says whose credentials they were; the ID token and the secret are in no log.
    const QByteArray log = readFile(QDir(m_dir.filePath(QStringLiteral("log"))).entryInfoList({QStringLiteral("spectrum-cli*.log")}, QDir::Files, QDir::Time).value(0).filePath());
    QVERIFY2(log.contains("sts: credentials from 127.0.0.1") && log.contains(kRole.toLatin1()), log.right(3000).constData());
    QVERIFY(!log.contains("eyJ"));
}

void tst_S3SignIn::aReaderTheRoleIsNotForIsRefusedClearly()
{
    ProcessResult r = cli({QStringLiteral("logout"), QStringLiteral("--store"), QStringLiteral("objects")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = cli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("objects")}, QStringLiteral("jdoe"));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("objects")}, QStringLiteral("jdoe"));
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("refused this reader the role " + kRole.toLatin1()) && r.err.contains("hospital's policy"), (r.out + r.err).constData());
    r = cli({QStringLiteral("logout"), QStringLiteral("--store"), QStringLiteral("objects")}, QStringLiteral("jdoe"));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = cli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("objects")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
}

void tst_S3SignIn::credentialsAreGotAgainWhenTheyExpireOrAreRefused()
{
    // A workstation's process, going on with the sign-in the command line kept: the credentials are held between
    // requests. Given for twenty seconds (a proxy says so of the store's real ones, as a hospital's service giving
    // short ones would), they are got again once past — the request after never fails for it.
    QProcess proxy;
    dieWithParent(proxy);
    proxy.start(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(S3_FAULT_PROXY_SCRIPT), QString::number(QUrl(m_store.url()).port()),
                                                     QStringLiteral("--sts-expires-in"), QStringLiteral("20")});
    QByteArray said;
    QTRY_VERIFY_WITH_TIMEOUT((said += proxy.readAllStandardOutput()).contains("listening "), 20000);
    const int proxyPort = said.mid(said.indexOf("listening ") + 10).split('\n').first().trimmed().toInt();
    QVERIFY(proxyPort > 0);
    StoreConfigFile config = StoreConfigFile::load(m_config).value();
    StoreConfig brief = *config.find(QStringLiteral("objects"));
    brief.name = QStringLiteral("brief");
    brief.as<S3Settings>().url = QStringLiteral("http://127.0.0.1:%1").arg(proxyPort);
    QCOMPARE(config.add(brief), Error());
    auto opened = FileStore::open(m_dir.filePath(QStringLiteral("process-cache")), 0);
    QVERIFY(opened.isOk());
    std::shared_ptr<FileStore> cache(opened.takeValue());
    StoreRegistry registry(config, cache);
    auto listed = [&](const QString &store) { return runSync(registry.listStudy(store, m_studyUid)); };
    Result<StudySummary> study = listed(QStringLiteral("brief"));
    QVERIFY2(study.isOk() && study.value().instanceCount == m_files.size(), qPrintable(study.isOk() ? QStringLiteral("listed") : study.error().message()));
    QTRY_VERIFY((said += proxy.readAllStandardOutput()).count("sts expires ") == 1);
    const QByteArray first = said.mid(said.indexOf("sts expires ") + 12, 20);
    const QDateTime expires = QDateTime::fromString(QString::fromLatin1(first), Qt::ISODate);
    QVERIFY2(expires.isValid(), first.constData());
    QTRY_VERIFY_WITH_TIMEOUT(QDateTime::currentDateTimeUtc() > expires, 40000);
    study = listed(QStringLiteral("brief"));
    QVERIFY2(study.isOk() && study.value().instanceCount == m_files.size(), qPrintable(study.isOk() ? QStringLiteral("listed") : study.error().message()));
    QTRY_VERIFY((said += proxy.readAllStandardOutput()).count("sts expires ") == 2);  // asked again, once
    stopProcess(proxy);

    // The store restarts with its token service's signing key rotated: the session it gave is no more. The next
    // request is refused, and goes through with credentials got again behind it.
    study = listed(QStringLiteral("objects"));
    QVERIFY2(study.isOk(), qPrintable(study.isOk() ? QString() : study.error().message()));
    m_store.stop();
    QVERIFY(m_store.start(m_idp.issuer(), QStringLiteral("spectrum"), rolesAndPolicies(), QStringLiteral("cm90YXRlZC1zdHMtc2lnbmluZy1rZXktZm9yLXRoZS10ZXN0cw==")));
    study = listed(QStringLiteral("objects"));
    QVERIFY2(study.isOk() && study.value().instanceCount == m_files.size(), qPrintable(study.isOk() ? QStringLiteral("listed") : study.error().message()));
}

void tst_S3SignIn::aSignOutDropsTheCredentials()
{
    const StoreConfigFile config = StoreConfigFile::load(m_config).value();
    auto opened = FileStore::open(m_dir.filePath(QStringLiteral("signout-cache")), 0);
    QVERIFY(opened.isOk());
    std::shared_ptr<FileStore> cache(opened.takeValue());
    StoreRegistry registry(config, cache);
    auto listed = [&]() { return runSync(registry.listStudy(QStringLiteral("objects"), m_studyUid)); };
    Result<StudySummary> study = listed();
    QVERIFY2(study.isOk(), qPrintable(study.isOk() ? QString() : study.error().message()));
    // Signed out: the credentials go with the sign-in, at once — the next request is not signed with them.
    SignIn *signIn = SignIn::forStore(*config.find(QStringLiteral("objects")), config);
    QVERIFY(signIn);
    QVERIFY(signIn->isSignedIn());
    QVERIFY(runSync(signIn->signOut()).isOk());
    study = listed();
    QVERIFY(!study.isOk());
    QVERIFY2(study.error().message().contains(QStringLiteral("not signed in")), qPrintable(study.error().message()));
}

QTEST_MAIN(tst_S3SignIn)
#include "tst_s3signin.moc"
