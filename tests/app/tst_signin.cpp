// SPDX-License-Identifier: Apache-2.0
// Signing in as hospitals do, through the programs' doors: a PACS (Orthanc) behind nginx that lets a request through
// only with an access token the hospital's identity provider (Ory Hydra, started here) says is active and meant
// for it. `spectrum-cli login` opens the browser (the tests' browser signs in at Hydra's login and consent), comes
// back to 127.0.0.1 alone with state and PKCE checked, keeps the sign-in sealed, and the commands then reach the
// PACS as the signed-in reader — who is on the audit trail and signs the findings the window saves. A forged
// redirect, a refused consent, an expired, a revoked and a wrong-audience token are each refused with words a
// reader can act on; logout revokes the sign-in at the provider. In a desktop session the tokens go into its
// keyring (GNOME Keyring on a session bus of the test's own, looked into with secret-tool), not onto the disk. On a
// shared reading-room workstation (the hospital's "signIn" policy) nothing is kept beyond the program, and the window
// signs its reader out and covers the studies after the minutes without use the hospital set.

#include "auditrepository.h"
#include "identityprovider.h"
#include "testsupport.h"

#include "guisupport.h"
#include "shell/idlelock.h"

#include "spectrum/imaging/demostudies.h"
#include "spectrum/stores/audit/auditconfig.h"
#include "spectrum/transfer/audit/audittrail.h"

#include <QApplication>
#include <QLabel>
#include <QPushButton>
#include <QTabWidget>
#include <QMenu>
#include <QMenuBar>

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTcpSocket>
#include <QTest>

#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/signin/signin.h"

using namespace spectrum;
using namespace spectrum::test;

namespace {

const QString kPacsAudience = QStringLiteral("https://pacs.hospital.test");

/// The lines of the tests' browser's log, as JSON.
QList<QJsonObject> browserSaw(const QString &log)
{
    QList<QJsonObject> out;
    for (const QByteArray &line : readFile(log).split('\n')) {
        if (!line.isEmpty())
            out << QJsonDocument::fromJson(line).object();
    }
    return out;
}

/// The workstation's program in this process: its workstation on a store configuration, started, and its window shown.
struct WindowUnderTest
{
    std::unique_ptr<Workstation> workstation;
    std::unique_ptr<MainWindow> window;  ///< gone before the workstation

    bool open(const QString &config, const QString &cache)
    {
        Result<StoreConfigFile> stores = StoreConfigFile::load(config);
        if (!stores.isOk())
            return false;
        Workstation::Options wo;
        wo.cacheDirectory = cache;
        wo.seedDemoWhenEmpty = false;
        wo.stores = stores.value();
        wo.storesFile = config;
        workstation = std::make_unique<Workstation>(wo);
        QSignalSpy started(workstation.get(), &Workstation::started);
        workstation->start();
        if (!started.wait(20000))
            return false;
        window = std::make_unique<MainWindow>(workstation.get());
        window->resize(1200, 800);
        window->show();
        return QTest::qWaitForWindowExposed(window.get());
    }

    /// The File menu's entry of this text, as the reader finds it.
    QAction *fileMenuAction(const QString &text) const
    {
        for (QAction *a : window->menuBar()->actions()) {
            if (a->text() == QLatin1String("&File")) {
                for (QAction *item : a->menu()->actions())
                    if (item->text() == text)
                        return item;
            }
        }
        return nullptr;
    }
};

} // namespace

class tst_SignIn : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void signedInThroughTheBrowserTheReaderReachesThePacs();
    void aForgedRedirectAndARefusedConsentAreRefused();
    void anExpiredTokenIsRenewedOrRefusedClearly();
    void aRevokedOrWrongAudienceTokenIsRefusedClearly();
    void theWindowSignsFindingsAsTheSignedInReader();
    void theWindowSignsInAndOutFromItsFileMenu();
    void logoutRevokesTheSignIn();
    void theDesktopsKeyringKeepsTheSignIn();
    void aSharedReadingRoomKeepsNoSignInAndLocksWhenIdle();
    void cleanupTestCase()
    {
        stopProcess(m_keyring);
        stopProcess(m_bus);
        stopProcess(m_gate);
    }

private:
    QList<QPair<QString, QString>> env(const QString &browserLog = QString()) const;
    ProcessResult cli(const QStringList &args, const QString &browserLog = QString()) const { return runCli(args, env(browserLog), 120000); }
    QJsonObject keptSessions() const;
    /// A sign-in's tokens are sealed in sign-in.json for `provider` (not only a sign-out's note).
    bool keptSealed(const QString &provider) const { return keptSessions().value(provider).toObject().contains(QStringLiteral("sealed")); }
    /// What a kept sign-in holds, unsealed with the configuration's key (the test is this user): access, refresh.
    QJsonObject keptTokens(const QString &clientId) const;

    QTemporaryDir m_dir;
    IdentityProviderProcess m_idp;
    AuditRepositoryProcess m_repository;
    OrthancProcess m_orthanc;
    NginxProcess m_nginx;
    QProcess m_gate;
    QProcess m_bus, m_keyring;  ///< a session bus of the test's own, with GNOME Keyring on it
    QString m_busAddress;
    quint16 m_nginxPort = 0;
    QString m_studyUid, m_patientId, m_config, m_systemConfig;
};

QList<QPair<QString, QString>> tst_SignIn::env(const QString &browserLog) const
{
    QList<QPair<QString, QString>> e = {{QStringLiteral("SPECTRUM_CONFIG"), m_config},
                                        {QStringLiteral("SPECTRUM_SYSTEM_CONFIG"), m_systemConfig},
                                        {QStringLiteral("SPECTRUM_CACHE_DIR"), m_dir.filePath(QStringLiteral("cache"))},
                                        {QStringLiteral("SPECTRUM_LOG_DIR"), m_dir.filePath(QStringLiteral("log"))},
                                        {QStringLiteral("XDG_STATE_HOME"), m_dir.filePath(QStringLiteral("state"))},
                                        {QStringLiteral("XDG_CONFIG_HOME"), m_dir.filePath(QStringLiteral("config"))},
                                        {QStringLiteral("XDG_DATA_HOME"), m_dir.filePath(QStringLiteral("data"))},
                                        {QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen")},
                                        // No desktop session's keyring: the sign-ins are sealed in sign-in.json
                                        // (the last test brings a keyring of its own).
                                        {QStringLiteral("DBUS_SESSION_BUS_ADDRESS"), QString()},
                                        {QStringLiteral("XDG_RUNTIME_DIR"), m_dir.filePath(QStringLiteral("runtime"))}};
    e += browserEnvironment(m_idp, browserLog.isEmpty() ? m_dir.filePath(QStringLiteral("browser.log")) : browserLog);
    return e;
}

QJsonObject tst_SignIn::keptSessions() const
{
    return QJsonDocument::fromJson(readFile(m_dir.filePath(QStringLiteral("sign-in.json")))).object().value(QStringLiteral("sessions")).toObject();
}

QJsonObject tst_SignIn::keptTokens(const QString &clientId) const
{
    const QJsonValue sealed = keptSessions().value(m_idp.issuer().chopped(1) + QLatin1Char('|') + clientId + QLatin1Char('|') + kPacsAudience);
    Result<Secret> secret = Secret::fromJson(sealed, QStringLiteral("sign-in.json"));
    if (!secret.isOk())
        return {};
    Result<QString> plain = StoreConfigFile::load(m_config).value().reveal(secret.value());
    return plain.isOk() ? QJsonDocument::fromJson(plain.value().toUtf8()).object() : QJsonObject();
}

void tst_SignIn::initTestCase()
{
    QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("runtime"))));
    QFile::setPermissions(m_dir.filePath(QStringLiteral("runtime")), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    QVERIFY2(m_idp.start(), "the identity provider (Ory Hydra, built by scripts/install-deps.sh) did not start");
    QVERIFY(m_idp.addClient(QStringLiteral("spectrum"), {kPacsAudience, QStringLiteral("https://billing.hospital.test")}));
    QVERIFY(m_idp.addClient(QStringLiteral("spectrum-brief"), {kPacsAudience}, 3));  // tokens of three seconds
    QVERIFY(m_repository.start());
    QVERIFY2(m_orthanc.start(), "Orthanc did not start");
    DemoOptions demo;
    demo.studies = {DemoStudy::HeadCt};
    demo.ctSlices = 4;
    QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) {
                 m_patientId = i.identity.patientId;
                 return m_orthanc.upload(i.bytes).isEmpty() ? Error(ErrorCode::Io, QStringLiteral("not uploaded")) : Error();
             }).isError());
    m_studyUid = DemoArchive::studyUid(DemoStudy::HeadCt);

    // The gate: nginx asks the validator (which asks the provider) about each request's token.
    const quint16 gatePort = freePort();
    m_gate.setProcessChannelMode(QProcess::MergedChannels);
    dieWithParent(m_gate);
    m_gate.start(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(TOKEN_VALIDATOR_SCRIPT), QString::number(gatePort), m_idp.introspectionUrl(), kPacsAudience});
    QVERIFY(m_gate.waitForStarted());
    QVERIFY(QTest::qWaitFor([&] {  // listening before nginx sends it anything
        QTcpSocket probe;
        probe.connectToHost(QHostAddress::LocalHost, gatePort);
        return probe.waitForConnected(100);
    }, 20000));
    m_nginxPort = freePort();
    const QString servers = QStringLiteral(
        "server { listen 127.0.0.1:%1;\n"
        "  location /dicom-web/ { auth_request /_gate; auth_request_set $why $upstream_http_x_why; error_page 401 = @refused;\n"
        "    proxy_set_header Authorization \"\"; proxy_pass http://127.0.0.1:%2/dicom-web/; proxy_buffering off; }\n"
        "  location = /_gate { internal; proxy_pass http://127.0.0.1:%3/validate; proxy_pass_request_body off;\n"
        "    proxy_set_header Content-Length \"\"; proxy_set_header Authorization $http_authorization; }\n"
        "  location @refused { add_header WWW-Authenticate 'Bearer error=\"invalid_token\"' always; default_type application/json;\n"
        "    return 401 '{\"error\":\"invalid_token\",\"error_description\":\"$why\"}'; }\n"
        "}\n").arg(m_nginxPort).arg(m_orthanc.httpPort()).arg(gatePort);
    QVERIFY(m_nginx.start(servers, m_nginxPort));

    auto store = [&](const QString &name, const QString &clientId, const QString &audience) {
        return QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("kind"), QStringLiteral("dicomweb")},
                           {QStringLiteral("url"), QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(m_nginxPort)},
                           {QStringLiteral("auth"), QStringLiteral("oidc")}, {QStringLiteral("issuer"), m_idp.issuer()},
                           {QStringLiteral("clientId"), clientId}, {QStringLiteral("audience"), audience}};
    };
    m_config = m_dir.filePath(QStringLiteral("stores.json"));
    QVERIFY(writePrivateFile(m_config, QJsonDocument(QJsonObject{{QStringLiteral("version"), 1},
                                                                 {QStringLiteral("stores"), QJsonArray{store(QStringLiteral("pacs"), QStringLiteral("spectrum"), kPacsAudience),
                                                                                                       store(QStringLiteral("billing"), QStringLiteral("spectrum"), QStringLiteral("https://billing.hospital.test")),
                                                                                                       store(QStringLiteral("brief"), QStringLiteral("spectrum-brief"), kPacsAudience)}}})
                                           .toJson()));
    m_systemConfig = m_dir.filePath(QStringLiteral("system.json"));
    QVERIFY(writeFile(m_systemConfig, QJsonDocument(QJsonObject{{QStringLiteral("version"), 1},
                                                                {QStringLiteral("audit"), QJsonObject{{QStringLiteral("repository"), m_repository.tlsUrl()},
                                                                                                      {QStringLiteral("caFile"), m_repository.caFile()}}}})
                                          .toJson()));
}

void tst_SignIn::signedInThroughTheBrowserTheReaderReachesThePacs()
{
    // Not signed in: the PACS is not reached, and the reader is told what to do.
    ProcessResult r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs")});
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("sign in again") && r.err.contains("spectrum-cli login --store pacs"), r.err.constData());

    const QString log = m_dir.filePath(QStringLiteral("login.log"));
    r = cli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("pacs")}, log);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.out.contains("signed in as Dr. Anna Smith (asmith)"), r.out.constData());

    // What the browser was sent to: PKCE with S256, a state and a nonce of their own, the PACS as audience, and the
    // way back to this machine's loopback address — where the port listened on 127.0.0.1 alone.
    const QList<QJsonObject> saw = browserSaw(log);
    QVERIFY(!saw.isEmpty());
    const QJsonObject params = saw.first().value(QStringLiteral("params")).toObject();
    QCOMPARE(params.value(QStringLiteral("code_challenge_method")).toString(), QStringLiteral("S256"));
    QCOMPARE(params.value(QStringLiteral("code_challenge")).toString().size(), 43);  // base64url of SHA-256
    QVERIFY(params.value(QStringLiteral("state")).toString().size() >= 22);
    QVERIFY(params.value(QStringLiteral("nonce")).toString().size() >= 22);
    QVERIFY(params.value(QStringLiteral("state")).toString() != params.value(QStringLiteral("nonce")).toString());
    QCOMPARE(params.value(QStringLiteral("audience")).toString(), kPacsAudience);
    QVERIFY(params.value(QStringLiteral("redirect_uri")).toString().startsWith(QLatin1String("http://127.0.0.1:")));
    QVERIFY(params.value(QStringLiteral("scope")).toString().contains(QLatin1String("openid")));
    QCOMPARE(saw.first().value(QStringLiteral("listener")).toString(), QStringLiteral("127.0.0.1"));
    QCOMPARE(saw.last().value(QStringLiteral("status")).toInt(), 200);

    // Kept sealed, the user's alone: no token readable in the file.
    QCOMPARE(QFileInfo(m_dir.filePath(QStringLiteral("sign-in.json"))).permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther), QFileDevice::Permissions());
    QCOMPARE(keptSessions().size(), 1);
    // Each sign-in is one sealed secret: nothing of it in clear.
    for (const QJsonValue &v : keptSessions())
        QVERIFY2(v.toObject().keys() == QStringList{QStringLiteral("sealed")}, QJsonDocument(v.toObject()).toJson().constData());
    QVERIFY(!readFile(m_dir.filePath(QStringLiteral("sign-in.json"))).contains("asmith"));

    // The next commands reach the PACS through the gate, as the signed-in reader.
    const int before = int(m_repository.messages().size());
    r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs"), QStringLiteral("--patient-id"), m_patientId});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.out.contains(m_studyUid.toLatin1()), r.out.constData());
    r = cli({QStringLiteral("fetch"), QStringLiteral("--store"), QStringLiteral("pacs"), m_studyUid});
    QVERIFY2(r.exitCode == 0, r.err.constData());

    // On the audit trail: the login, and the reader of each message is the signed-in user.
    QVERIFY(QTest::qWaitFor([&] { return !m_repository.messages().isEmpty(); }, 20000));
    const QList<QByteArray> all = m_repository.messages();
    bool login = false;
    for (const QByteArray &m : all) {
        if (m.contains("csd-code=\"110114\"") && m.contains("csd-code=\"110122\"") && m.contains("UserID=\"asmith\"") && m.contains("EventOutcomeIndicator=\"0\""))
            login = true;
        const QString invalid = validateAuditXml(auditXmlOf(m));
        QVERIFY2(invalid.isEmpty(), qPrintable(invalid));
    }
    QVERIFY(login);
    QVERIFY(QTest::qWaitFor([&] { return m_repository.messages().size() > before; }, 20000));
    bool queryBySignedIn = false;
    for (const QByteArray &m : m_repository.messages().mid(before)) {
        if (m.contains("csd-code=\"110112\"") && m.contains("UserID=\"asmith\" AlternativeUserID=\"asmith\" UserName=\"Dr. Anna Smith\" UserIsRequestor=\"true\""))
            queryBySignedIn = true;
    }
    QVERIFY(queryBySignedIn);
}

void tst_SignIn::aForgedRedirectAndARefusedConsentAreRefused()
{
    // A redirect to the loopback port with a state not this sign-in's is refused, and the real one still signs in.
    const QString log = m_dir.filePath(QStringLiteral("forged.log"));
    QList<QPair<QString, QString>> e = env(log);
    e << qMakePair(QStringLiteral("OIDC_FORGE_STATE"), QStringLiteral("1"));
    ProcessResult r = runCli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("billing")}, e, 120000);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QJsonObject> saw = browserSaw(log);
    bool forgedRefused = false;
    for (const QJsonObject &o : saw) {
        if (o.value(QStringLiteral("step")).toString() == QLatin1String("forged"))
            forgedRefused = o.value(QStringLiteral("status")).toInt() == 400 && o.value(QStringLiteral("body")).toString().contains(QLatin1String("does not belong"));
    }
    QVERIFY(forgedRefused);

    // A reader who refuses at the provider is not signed in, and is told so.
    QList<QPair<QString, QString>> deny = env(m_dir.filePath(QStringLiteral("deny.log")));
    deny << qMakePair(QStringLiteral("OIDC_DENY"), QStringLiteral("1"));
    r = runCli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("brief")}, deny, 120000);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("did not sign you in") && r.err.contains("access_denied"), r.err.constData());
}

void tst_SignIn::anExpiredTokenIsRenewedOrRefusedClearly()
{
    // Tokens of three seconds: renewed with the refresh token when a command starts after they expired.
    ProcessResult r = cli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("brief")}, m_dir.filePath(QStringLiteral("brief.log")));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject first = keptTokens(QStringLiteral("spectrum-brief"));
    QVERIFY(!first.value(QStringLiteral("access")).toString().isEmpty());
    // Expired at the provider (its own clock: introspection says so — nothing else to wait on).
    QVERIFY(QTest::qWaitFor([&] { return !m_idp.introspect(first.value(QStringLiteral("access")).toString()).value(QStringLiteral("active")).toBool(); }, 20000));
    r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("brief"), QStringLiteral("--patient-id"), m_patientId});
    QVERIFY2(r.exitCode == 0, (r.err + readFile(m_dir.filePath(QStringLiteral("log/spectrum-cli.log"))).right(1500)).constData());
    QVERIFY(r.out.contains(m_studyUid.toLatin1()));
    // Renewed: another access token kept, and the refresh token the provider rotated.
    const QJsonObject renewed = keptTokens(QStringLiteral("spectrum-brief"));
    QVERIFY(renewed.value(QStringLiteral("access")).toString() != first.value(QStringLiteral("access")).toString());
    QVERIFY(m_idp.introspect(renewed.value(QStringLiteral("access")).toString()).value(QStringLiteral("active")).toBool()
            || QDateTime::currentDateTimeUtc() > QDateTime::fromString(renewed.value(QStringLiteral("expires")).toString(), Qt::ISODate));
    // Once the provider ends the sign-in (its refresh token revoked), an expired token is refused, and said so.
    const QJsonObject kept = keptSessions();
    QVERIFY(kept.contains(m_idp.issuer().chopped(1) + QStringLiteral("|spectrum-brief|") + kPacsAudience));
    r = cli({QStringLiteral("logout"), QStringLiteral("--store"), QStringLiteral("brief")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("brief")});
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("sign in again"), r.err.constData());
}

void tst_SignIn::aRevokedOrWrongAudienceTokenIsRefusedClearly()
{
    // A token for another server (billing's audience) is not the PACS's: the gate refuses it, the reader reads why.
    ProcessResult r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("billing")});
    // billing's store points at the PACS's gate too: its token is not meant for it.
    QVERIFY2(r.exitCode != 0, (r.out + r.err).constData());
    QVERIFY2(r.err.contains("not meant for this server") && r.err.contains("sign in again"), r.err.constData());
    QVERIFY2(!r.err.contains("ory_at_") && !r.err.contains("ory_rt_"), r.err.constData());  // no token in the words

    // A token the provider revoked (an administrator ended the reader's sessions with this program) is refused at
    // once by the gate, though it has not expired here.
    QVERIFY(!run(QStringLiteral("curl"), {QStringLiteral("-sf"), QStringLiteral("-X"), QStringLiteral("DELETE"),
                                          m_idp.adminUrl() + QStringLiteral("/admin/oauth2/auth/sessions/consent?subject=asmith&client=spectrum")}).exitCode);
    r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs")});
    QVERIFY2(r.exitCode != 0, (r.out + r.err).constData());
    QVERIFY2(r.err.contains("expired or revoked") && r.err.contains("sign in again"), r.err.constData());
    // Signed in again, the reader goes on.
    r = cli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("pacs")}, m_dir.filePath(QStringLiteral("again.log")));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs"), QStringLiteral("--patient-id"), m_patientId});
    QVERIFY2(r.exitCode == 0, r.err.constData());
}

void tst_SignIn::theWindowSignsFindingsAsTheSignedInReader()
{
    // Signed in to the PACS (first test), the window saves a measurement: the report names the signed-in reader.
    QProcess gui;
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    for (const auto &[name, value] : env())
        e.insert(name, value);
    gui.setProcessEnvironment(e);
    gui.start(QStringLiteral(SPECTRUM_GUI_EXECUTABLE), {QStringLiteral("--screenshot"), m_dir.filePath(QStringLiteral("shot.png")), QStringLiteral("--open"), m_studyUid,
                                                         QStringLiteral("--measure"), QStringLiteral("--save-findings"), QStringLiteral("local"), QStringLiteral("--no-demo")});
    const bool finished = gui.waitForFinished(120000);
    if (!finished) {
        gui.kill();
        gui.waitForFinished();
    }
    QVERIFY2(finished && gui.exitCode() == 0, (gui.readAllStandardError().right(3000) + readFile(m_dir.filePath(QStringLiteral("log/spectrum.log"))).right(3000)).constData());
    const ProcessResult r = cli({QStringLiteral("findings"), m_studyUid, QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.out.contains("Smith^Anna"), r.out.left(2000).constData());
}

void tst_SignIn::theWindowSignsInAndOutFromItsFileMenu()
{
    // The reader at the window: File ▸ Sign in… opens the browser; the status bar then names them; Sign out ends it.
    for (const auto &[name, value] : env(m_dir.filePath(QStringLiteral("window.log"))))
        qputenv(name.toUtf8().constData(), value.toUtf8());
    // This process as the workstation's program, on the hospital's audit trail.
    const int auditBefore = int(m_repository.messages().size());
    Result<std::unique_ptr<AuditTrail>> trail = startAuditTrail(auditConfigToFollow(m_config).value(), QStringLiteral("spectrum"), 1);
    QVERIFY(trail.isOk() && trail.value());
    WindowUnderTest program;
    QVERIFY(program.open(m_config, m_dir.filePath(QStringLiteral("window-cache"))));
    MainWindow &window = *program.window;
    auto *label = window.findChild<QLabel *>(QStringLiteral("signInLabel"));
    QVERIFY(label);
    // Signed in already (the command line's sign-in, kept): named at once. Signed out from the menu first.
    QAction *signIn = program.fileMenuAction(QStringLiteral("Sign &in…")), *signOut = program.fileMenuAction(QStringLiteral("Sign ou&t"));
    QVERIFY(signIn && signOut);
    QTRY_VERIFY_WITH_TIMEOUT(label->isVisible() && label->text() == QLatin1String("Signed in as Dr. Anna Smith"), 20000);
    signOut->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(!label->isVisible(), 20000);
    QTRY_VERIFY_WITH_TIMEOUT(!keptSealed(m_idp.issuer().chopped(1) + QStringLiteral("|spectrum|") + kPacsAudience), 20000);
    signIn->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(label->isVisible() && label->text() == QLatin1String("Signed in as Dr. Anna Smith"), 60000);
    // Every store's provider in turn, one browser page at a time (billing's and brief's sign-ins were ended).
    auto everyoneSignedIn = [] {
        const QList<SignIn *> all = SignIn::all();
        return all.size() == 3 && std::all_of(all.begin(), all.end(), [](SignIn *s) { return s->isSignedIn(); });
    };
    QTRY_VERIFY_WITH_TIMEOUT(everyoneSignedIn(), 60000);
    // What is painted says it: the label's own pixels are not the status bar's empty background.
    const QImage shot = label->grab().toImage();
    QVERIFY(shot.width() > 50);
    QVERIFY(meanGrey(shot) > 0);
    QTRY_VERIFY_WITH_TIMEOUT(keptSealed(m_idp.issuer().chopped(1) + QStringLiteral("|spectrum|") + kPacsAudience), 20000);
    // On the hospital's audit trail, as the window's program: the sign-out and the sign-in, by the reader.
    auto windowSaid = [&](const char *type) {
        for (const QByteArray &m : m_repository.messages().mid(auditBefore))
            if (m.contains(" spectrum ") && m.contains("csd-code=\"110114\"") && m.contains(type) && m.contains("UserID=\"asmith\""))
                return true;
        return false;
    };
    QVERIFY(QTest::qWaitFor([&] { return windowSaid("csd-code=\"110123\"") && windowSaid("csd-code=\"110122\""); }, 20000));
    trail.value()->flush(3000);
}

void tst_SignIn::logoutRevokesTheSignIn()
{
    const QByteArray sealed = readFile(m_dir.filePath(QStringLiteral("sign-in.json")));
    const QJsonObject before = keptTokens(QStringLiteral("spectrum"));
    const QString refresh = before.value(QStringLiteral("refresh")).toString();
    QVERIFY(!refresh.isEmpty());
    QVERIFY(m_idp.introspect(refresh).value(QStringLiteral("active")).toBool());
    ProcessResult r = cli({QStringLiteral("logout"), QStringLiteral("--store"), QStringLiteral("pacs")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(r.out.contains("signed out of"));
    QVERIFY(!keptSealed(m_idp.issuer().chopped(1) + QStringLiteral("|spectrum|") + kPacsAudience));
    r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs")});
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("sign in again"), r.err.constData());
    QVERIFY(QTest::qWaitFor([&] {
        for (const QByteArray &m : m_repository.messages())
            if (m.contains("csd-code=\"110123\"") && m.contains("UserID=\"asmith\""))
                return true;
        return false;
    }, 20000));
    QVERIFY(sealed != readFile(m_dir.filePath(QStringLiteral("sign-in.json"))));
    // Revoked at the provider, not only forgotten here: the refresh token and the access token made from it.
    QVERIFY(!m_idp.introspect(refresh).value(QStringLiteral("active")).toBool());
    QVERIFY(!m_idp.introspect(before.value(QStringLiteral("access")).toString()).value(QStringLiteral("active")).toBool());
}

void tst_SignIn::theDesktopsKeyringKeepsTheSignIn()
{
    // A desktop session's keyring: a session bus of the test's own, GNOME Keyring on it, unlocked as at login.
    const QString home = m_dir.filePath(QStringLiteral("keyring-home"));
    QVERIFY(QDir().mkpath(home + QStringLiteral("/run")));
    QFile::setPermissions(home + QStringLiteral("/run"), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    // The bus and the keyring see the test's home alone and no display: whatever the bus would start on its own
    // (it should start nothing) touches no one's real keyring and shows no prompt.
    QProcessEnvironment ke = QProcessEnvironment::systemEnvironment();
    ke.insert(QStringLiteral("HOME"), home);
    ke.insert(QStringLiteral("XDG_DATA_HOME"), home + QStringLiteral("/data"));
    ke.insert(QStringLiteral("XDG_CONFIG_HOME"), home + QStringLiteral("/config"));
    ke.insert(QStringLiteral("XDG_RUNTIME_DIR"), home + QStringLiteral("/run"));
    ke.remove(QStringLiteral("DISPLAY"));
    ke.remove(QStringLiteral("WAYLAND_DISPLAY"));
    m_bus.setProcessEnvironment(ke);
    dieWithParent(m_bus);
    m_bus.start(QStringLiteral("dbus-daemon"), {QStringLiteral("--session"), QStringLiteral("--nofork"), QStringLiteral("--print-address=1")});
    QVERIFY2(m_bus.waitForStarted(), "dbus-daemon (scripts/install-deps.sh installs it) did not start");
    QVERIFY(QTest::qWaitFor([&] { return m_bus.canReadLine(); }, 20000));
    m_busAddress = QString::fromUtf8(m_bus.readLine().trimmed());
    ke.insert(QStringLiteral("DBUS_SESSION_BUS_ADDRESS"), m_busAddress);
    m_keyring.setProcessEnvironment(ke);
    dieWithParent(m_keyring);
    m_keyring.start(QStringLiteral("gnome-keyring-daemon"), {QStringLiteral("--foreground"), QStringLiteral("--unlock"), QStringLiteral("--components=secrets")});
    QVERIFY2(m_keyring.waitForStarted(), "gnome-keyring-daemon (scripts/install-deps.sh installs it) did not start");
    m_keyring.write("login-password");
    m_keyring.closeWriteChannel();
    auto secretTool = [&](const QStringList &args, const QByteArray &input = QByteArray()) {
        QProcess p;
        p.setProcessEnvironment(ke);
        p.start(QStringLiteral("secret-tool"), args);
        p.write(input);
        p.closeWriteChannel();
        p.waitForFinished(30000);
        return ProcessResult{p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
    };
    const QString folder = QFileInfo(m_config).absolutePath();
    const QString provider = m_idp.issuer().chopped(1) + QStringLiteral("|spectrum|") + kPacsAudience;
    const QStringList item = {QStringLiteral("folder"), folder, QStringLiteral("provider"), provider};
    // Nothing asks the keyring anything before it is on the bus: the bus would start another, locked one.
    QVERIFY(QTest::qWaitFor([&] {
        QProcess p;
        p.setProcessEnvironment(ke);
        p.start(QStringLiteral("dbus-send"), {QStringLiteral("--session"), QStringLiteral("--print-reply"), QStringLiteral("--dest=org.freedesktop.DBus"),
                                              QStringLiteral("/org/freedesktop/DBus"), QStringLiteral("org.freedesktop.DBus.NameHasOwner"),
                                              QStringLiteral("string:org.freedesktop.secrets")});
        p.waitForFinished(10000);
        return p.readAllStandardOutput().contains("boolean true");
    }, 20000));
    // Ready once it keeps a secret (the login keyring is made from the password a moment after the daemon starts).
    const QStringList probe = {QStringLiteral("probe"), QStringLiteral("1")};
    ProcessResult stored;
    QVERIFY2(QTest::qWaitFor([&] { return (stored = secretTool(QStringList{QStringLiteral("store"), QStringLiteral("--label=probe")} + probe, "x")).ok(); }, 20000),
             (stored.err + m_keyring.readAllStandardError()).constData());
    QVERIFY(secretTool(QStringList{QStringLiteral("clear")} + probe).ok());

    // Signed in where there is no keyring first: sealed in the file.
    ProcessResult r = cli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("pacs")}, m_dir.filePath(QStringLiteral("nokeyring.log")));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(keptSealed(provider));

    QList<QPair<QString, QString>> withKeyring = env(m_dir.filePath(QStringLiteral("keyring.log")));
    for (auto &[name, value] : withKeyring) {
        if (name == QLatin1String("DBUS_SESSION_BUS_ADDRESS"))
            value = m_busAddress;
    }
    withKeyring << qMakePair(QStringLiteral("SPECTRUM_KEYRING"), QStringLiteral("on"));  // ctest turns it off for every other test
    r = runCli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("pacs")}, withKeyring, 120000);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.out.contains("signed in as Dr. Anna Smith"), r.out.constData());

    // In the keyring, as secret-tool (libsecret's own program) finds it: the tokens, labelled for the reader.
    const ProcessResult found = secretTool(QStringList{QStringLiteral("search"), QStringLiteral("--all"), QStringLiteral("--unlock")} + item);
    QVERIFY2(found.exitCode == 0, (found.err + readFile(m_dir.filePath(QStringLiteral("log/spectrum-cli.log"))).right(2000)).constData());
    QVERIFY2(found.out.contains("label = Spectrum sign-in to http://127.0.0.1:"), (found.out + found.err + readFile(m_dir.filePath(QStringLiteral("log/spectrum-cli.log"))).right(2000)).constData());
    QVERIFY2(found.out.contains("schema = org.spectrum.SignIn"), found.out.constData());
    const ProcessResult secret = secretTool(QStringList{QStringLiteral("lookup")} + item);
    QVERIFY2(secret.out.contains("\"refresh\":\"ory_rt_"), "the keyring does not hold the refresh token");
    // …and the copy on the disk taken away: no second refresh token there.
    QVERIFY(!keptSealed(provider));

    // The next command finds it there and reaches the PACS.
    r = runCli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs"), QStringLiteral("--patient-id"), m_patientId}, withKeyring, 120000);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.out.contains(m_studyUid.toLatin1()), r.out.constData());
    // A program in a session without the keyring (over SSH) has no sign-in: it was never on the disk.
    r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs")});
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("sign in again"), r.err.constData());

    // Signed in again over SSH: sealed in the file, newer than the keyring's. With the keyring's own sign-in revoked
    // at the provider, a command in the desktop session still reaches the PACS: it took the newer one.
    r = cli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("pacs")}, m_dir.filePath(QStringLiteral("ssh.log")));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(keptSealed(provider));
    const QJsonObject inKeyring = QJsonDocument::fromJson(secret.out).object();
    QVERIFY(!run(QStringLiteral("curl"), {QStringLiteral("-sf"), QStringLiteral("-X"), QStringLiteral("POST"), m_idp.issuer() + QStringLiteral("oauth2/revoke"),
                                          QStringLiteral("-d"), QStringLiteral("client_id=spectrum"),
                                          QStringLiteral("--data-urlencode"), QStringLiteral("token=") + inKeyring.value(QStringLiteral("refresh")).toString()}).exitCode);
    QVERIFY(!m_idp.introspect(inKeyring.value(QStringLiteral("access")).toString()).value(QStringLiteral("active")).toBool());
    r = runCli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs"), QStringLiteral("--patient-id"), m_patientId}, withKeyring, 120000);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.out.contains(m_studyUid.toLatin1()), r.out.constData());
    const QJsonObject inFile = keptTokens(QStringLiteral("spectrum"));
    QVERIFY(m_idp.introspect(inFile.value(QStringLiteral("refresh")).toString()).value(QStringLiteral("active")).toBool());

    // Signing out takes it out of the keyring and the file, and the provider revokes it.
    r = runCli({QStringLiteral("logout"), QStringLiteral("--store"), QStringLiteral("pacs")}, withKeyring, 120000);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.out.contains("signed out of"), r.out.constData());
    QVERIFY(secretTool(QStringList{QStringLiteral("lookup")} + item).out.isEmpty());
    QVERIFY(secretTool(QStringList{QStringLiteral("store"), QStringLiteral("--label=probe")} + probe, "x").ok());  // the keyring still answers
    QVERIFY(!keptSealed(provider));
    QVERIFY(!m_idp.introspect(inFile.value(QStringLiteral("refresh")).toString()).value(QStringLiteral("active")).toBool());

    // Signed in at the desktop, then again over SSH, then out over SSH (the keyring out of reach): the desktop's
    // older sign-in does not come back — the next desktop command finds the sign-out's note, takes the keyring's copy
    // out and has the provider revoke it.
    r = runCli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("pacs")}, withKeyring, 120000);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject desktop = QJsonDocument::fromJson(secretTool(QStringList{QStringLiteral("lookup")} + item).out).object();
    QVERIFY(m_idp.introspect(desktop.value(QStringLiteral("refresh")).toString()).value(QStringLiteral("active")).toBool());
    r = cli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("pacs")}, m_dir.filePath(QStringLiteral("ssh2.log")));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = cli({QStringLiteral("logout"), QStringLiteral("--store"), QStringLiteral("pacs")});
    QVERIFY2(r.exitCode == 0 && r.out.contains("signed out of"), (r.out + r.err).constData());
    QVERIFY(keptSessions().value(provider).toObject().contains(QStringLiteral("ended")));
    r = runCli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs"), QStringLiteral("--patient-id"), m_patientId}, withKeyring, 120000);
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("sign in again"), r.err.constData());
    QVERIFY(secretTool(QStringList{QStringLiteral("lookup")} + item).out.isEmpty());
    QVERIFY(QTest::qWaitFor([&] { return !m_idp.introspect(desktop.value(QStringLiteral("refresh")).toString()).value(QStringLiteral("active")).toBool(); }, 20000));
}

void tst_SignIn::aSharedReadingRoomKeepsNoSignInAndLocksWhenIdle()
{
    // A reading room's workstation: its own folder, the same PACS; signed in from the command line before the
    // hospital set its policy, so a sign-in is kept there.
    const QString room = m_dir.filePath(QStringLiteral("room"));
    QVERIFY(QDir().mkpath(room));
    const QString config = room + QStringLiteral("/stores.json"), system = room + QStringLiteral("/system.json");
    QJsonObject user = QJsonDocument::fromJson(readFile(m_config)).object();
    // The user's own wish (keep it, never lock) is the user's; the hospital's policy, once set, wins.
    user.insert(QStringLiteral("signIn"), QJsonObject{{QStringLiteral("keep"), QStringLiteral("desktop")}, {QStringLiteral("idleMinutes"), 0}});
    QVERIFY(writePrivateFile(config, QJsonDocument(user).toJson()));
    QJsonObject hospital = QJsonDocument::fromJson(readFile(m_systemConfig)).object();
    QVERIFY(writeFile(system, QJsonDocument(hospital).toJson()));
    QList<QPair<QString, QString>> roomEnv = env(m_dir.filePath(QStringLiteral("room-browser.log")));
    for (auto &[name, value] : roomEnv) {
        if (name == QLatin1String("SPECTRUM_CONFIG"))
            value = config;
        else if (name == QLatin1String("SPECTRUM_SYSTEM_CONFIG"))
            value = system;
    }
    ProcessResult r = runCli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("pacs")}, roomEnv, 120000);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QString provider = m_idp.issuer().chopped(1) + QStringLiteral("|spectrum|") + kPacsAudience;
    auto keptInRoom = [&] {
        return QJsonDocument::fromJson(readFile(room + QStringLiteral("/sign-in.json"))).object().value(QStringLiteral("sessions")).toObject().value(provider);
    };
    QVERIFY(keptInRoom().isObject());
    Result<Secret> sealed = Secret::fromJson(keptInRoom(), QStringLiteral("sign-in.json"));
    QVERIFY(sealed.isOk());
    Result<QString> unsealed = StoreConfigFile::load(config).value().reveal(sealed.value());
    QVERIFY(unsealed.isOk());
    const QString leftover = QJsonDocument::fromJson(unsealed.value().toUtf8()).object().value(QStringLiteral("refresh")).toString();
    QVERIFY(m_idp.introspect(leftover).value(QStringLiteral("active")).toBool());

    // The hospital's policy: sign-ins kept by the program alone, signed out after 3 s without use (0.05 min).
    hospital.insert(QStringLiteral("signIn"), QJsonObject{{QStringLiteral("keep"), QStringLiteral("program")}, {QStringLiteral("idleMinutes"), 0.05}});
    QVERIFY(writeFile(system, QJsonDocument(hospital).toJson()));
    // The command line cannot sign in for later: refused before any browser opens, saying why.
    const int browserSteps = int(browserSaw(m_dir.filePath(QStringLiteral("room-browser.log"))).size());
    r = runCli({QStringLiteral("login"), QStringLiteral("--store"), QStringLiteral("pacs")}, roomEnv, 120000);
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("keeps no sign-in beyond the program") && r.err.contains("File > Sign in"), r.err.constData());
    QCOMPARE(int(browserSaw(m_dir.filePath(QStringLiteral("room-browser.log"))).size()), browserSteps);
    // …and what was kept before is not used: the command has no sign-in, and says where to sign in.
    r = runCli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs"), QStringLiteral("--patient-id"), m_patientId}, roomEnv, 120000);
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("in the workstation (File > Sign in…; the hospital's sign-in policy keeps none for commands)"), r.err.constData());

    // The window, as this workstation's program: a new program (no sign-in of the earlier tests' in its memory).
    SignIn::deleteAll();
    for (const auto &[name, value] : roomEnv)
        qputenv(name.toUtf8().constData(), value.toUtf8());
    const int auditBefore = int(m_repository.messages().size());
    Result<std::unique_ptr<AuditTrail>> trail = startAuditTrail(auditConfigToFollow(config).value(), QStringLiteral("spectrum"), 1);
    QVERIFY(trail.isOk() && trail.value());
    Result<StoreConfigFile> loaded = StoreConfigFile::load(config);
    QVERIFY(loaded.isOk());
    QVERIFY(!loaded.value().signIn.keepBetweenPrograms && loaded.value().signIn.fromSystem);
    WindowUnderTest program;
    QVERIFY(program.open(config, room + QStringLiteral("/cache")));
    MainWindow &window = *program.window;
    IdleLock *lock = window.idleLock();
    QVERIFY(lock);
    QCOMPARE(lock->idleTime(), 3000);
    // The reader at work: the mouse moving over the window now and then, until they walk away.
    QTimer atWork;
    connect(&atWork, &QTimer::timeout, &window, [&] { sendMouse(window.centralWidget(), QEvent::MouseMove, QPoint(200, 200), Qt::NoButton, Qt::NoButton); });
    atWork.start(250);
    auto *label = window.findChild<QLabel *>(QStringLiteral("signInLabel"));
    QVERIFY(label && !label->isVisible());
    // The leftover of the command line's sign-in: taken out, and revoked at the provider.
    QTRY_VERIFY_WITH_TIMEOUT(keptInRoom().isUndefined(), 20000);
    QTRY_VERIFY_WITH_TIMEOUT(!m_idp.introspect(leftover).value(QStringLiteral("active")).toBool(), 20000);
    QAction *signInAction = program.fileMenuAction(QStringLiteral("Sign &in…"));
    QVERIFY(signInAction);
    signInAction->trigger();
    auto signedInAs = [](const QString &subject) {
        const QList<SignIn *> all = SignIn::all();
        return all.size() == 3 && std::all_of(all.begin(), all.end(), [&](SignIn *s) { return s->isSignedIn() && s->subject() == subject; });
    };
    auto nobodyHoldsTokens = [] {
        const QList<SignIn *> all = SignIn::all();
        return std::none_of(all.cbegin(), all.cend(), [](const SignIn *s) { return s->holdsTokens(); });
    };
    QTRY_VERIFY_WITH_TIMEOUT(signedInAs(QStringLiteral("asmith")), 60000);
    SignIn *pacsSignIn = nullptr;
    for (SignIn *s : SignIn::all())
        if (s->provider().clientId == QLatin1String("spectrum") && s->provider().audience == kPacsAudience)
            pacsSignIn = s;
    QVERIFY(pacsSignIn);
    // Held by this program alone: nothing written for the next one.
    QVERIFY(keptInRoom().isUndefined());
    // A study from the PACS, open when the reader walks away.
    qRegisterMetaType<StudyViewer *>();
    QSignalSpy opened(&window, &MainWindow::studyOpened);
    window.openRemoteStudy(QStringLiteral("pacs"), m_studyUid);
    QVERIFY(opened.count() > 0 || opened.wait(30000));
    auto *tabs = window.findChild<QTabWidget *>();
    QVERIFY(tabs);
    QCOMPARE(tabs->count(), 2);
    QVERIFY(!lock->isLocked());

    // Walked away: three seconds later signed out (revoked at the provider, on the audit trail), the window covered.
    const QString accessBefore = pacsSignIn->accessToken();
    atWork.stop();
    QTRY_VERIFY_WITH_TIMEOUT(lock->isLocked(), 30000);
    QTRY_VERIFY_WITH_TIMEOUT(nobodyHoldsTokens(), 20000);
    QTRY_VERIFY_WITH_TIMEOUT(!m_idp.introspect(accessBefore).value(QStringLiteral("active")).toBool(), 20000);
    QVERIFY(QTest::qWaitFor([&] {
        for (const QByteArray &m : m_repository.messages().mid(auditBefore))
            if (m.contains(" spectrum ") && m.contains("csd-code=\"110123\"") && m.contains("UserID=\"asmith\""))
                return true;
        return false;
    }, 20000));
    QWidget *cover = lock->cover();
    auto *title = cover->findChild<QLabel *>(QStringLiteral("idleLockTitle"));
    auto *detail = cover->findChild<QLabel *>(QStringLiteral("idleLockDetail"));
    QVERIFY(title && detail);
    QCOMPARE(title->text(), QStringLiteral("Signed out after 3 seconds without use"));
    QTRY_VERIFY_WITH_TIMEOUT(detail->text() == QLatin1String("1 study open here is hidden. Dr. Anna Smith signs in again to go on with it as it was."), 10000);
    // What is painted: the cover, a window above the others and modal to the program, over all of the window.
    auto covered = [&] {
        if (!cover->isVisible() || QApplication::activeModalWidget() != cover || !cover->geometry().contains(window.frameGeometry()))
            return false;
        const QImage shot = cover->grab().toImage();
        int dark = 0, total = 0;
        for (int y = 0; y < shot.height(); y += 8) {
            for (int x = 0; x < shot.width(); x += 8, ++total) {
                const QColor c = shot.pixelColor(x, y);
                dark += qAbs(c.red() - 24) < 4 && qAbs(c.green() - 26) < 4 && qAbs(c.blue() - 30) < 4;
            }
        }
        return dark > total * 9 / 10;
    };
    QVERIFY(covered());
    // The window's keys act on nothing beneath: Ctrl+W would close the study.
    QTest::keySequence(&window, QKeySequence::Close);
    QTest::qWait(200);
    QCOMPARE(tabs->count(), 2);

    // Another reader at the cover signs in: the first reader's study stays hidden, until closed by choice.
    auto *primary = lock->primaryButton();
    auto *secondary = lock->secondaryButton();
    QCOMPARE(primary->text(), QStringLiteral("Sign in…"));
    qputenv("OIDC_SUBJECT", "bjones");
    qputenv("OIDC_NAME", "Dr. Bob Jones");
    QTest::mouseClick(primary, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(signedInAs(QStringLiteral("bjones")), 60000);
    QTRY_VERIFY_WITH_TIMEOUT(secondary->isVisible(), 20000);
    QVERIFY(lock->isLocked() && covered());
    QCOMPARE(detail->text(), QStringLiteral("Signed in as Dr. Bob Jones. The study Dr. Anna Smith had open stays hidden from another reader: close it to go on."));
    // Not going on: signed out, and the first reader comes back to their study as it was.
    QCOMPARE(primary->text(), QStringLiteral("Sign out"));
    QTest::mouseClick(primary, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(nobodyHoldsTokens(), 20000);
    QTRY_COMPARE(primary->text(), QStringLiteral("Sign in…"));
    qputenv("OIDC_SUBJECT", "asmith");
    qputenv("OIDC_NAME", "Dr. Anna Smith");
    QTest::mouseClick(primary, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!lock->isLocked(), 60000);
    atWork.start(250);
    QVERIFY(!cover->isVisible());
    QCOMPARE(tabs->count(), 2);
    QTRY_VERIFY_WITH_TIMEOUT(signedInAs(QStringLiteral("asmith")), 60000);

    // Locked again; this time the other reader closes the first one's study and goes on.
    atWork.stop();
    QTRY_VERIFY_WITH_TIMEOUT(lock->isLocked(), 30000);
    QTRY_COMPARE_WITH_TIMEOUT(primary->text(), QStringLiteral("Sign in…"), 20000);
    QVERIFY(primary->isEnabled());
    qputenv("OIDC_SUBJECT", "bjones");
    qputenv("OIDC_NAME", "Dr. Bob Jones");
    QTest::mouseClick(primary, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(secondary->isVisible(), 60000);
    QCOMPARE(secondary->text(), QStringLiteral("Close it"));
    atWork.start(250);
    QTest::mouseClick(secondary, Qt::LeftButton);
    QTRY_VERIFY(!lock->isLocked());
    QCOMPARE(tabs->count(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(signedInAs(QStringLiteral("bjones")), 60000);
    // The new reader works: the study opened again, and the key that did nothing under the cover closes it now.
    opened.clear();
    window.openRemoteStudy(QStringLiteral("pacs"), m_studyUid);
    QVERIFY(opened.count() > 0 || opened.wait(30000));
    QCOMPARE(tabs->count(), 2);
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QTest::keySequence(&window, QKeySequence::Close);
    QTRY_COMPARE(tabs->count(), 1);
    QVERIFY(keptInRoom().isUndefined());
    qputenv("OIDC_SUBJECT", "asmith");
    qputenv("OIDC_NAME", "Dr. Anna Smith");
    trail.value()->flush(3000);
}

QTEST_MAIN(tst_SignIn)
#include "tst_signin.moc"
