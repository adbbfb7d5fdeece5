// SPDX-License-Identifier: Apache-2.0
#include "identityprovider.h"

#include "postgres.h"
#include "testsupport.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace spectrum::test {

namespace {

/// curl, for the tests' calls to the provider's admin API: its answer's body, or an empty one when it failed.
QByteArray curl(const QStringList &args)
{
    const ProcessResult r = run(QStringLiteral("curl"), QStringList{QStringLiteral("-sS"), QStringLiteral("--fail-with-body"), QStringLiteral("--max-time"),
                                                                    QStringLiteral("20")} + args, 30000);
    if (r.exitCode != 0)
        qWarning("curl %s: %s %s", qPrintable(args.join(QLatin1Char(' '))), r.err.constData(), r.out.left(300).constData());
    return r.exitCode == 0 ? (r.out.isEmpty() ? QByteArray("{}") : r.out) : QByteArray();
}

} // namespace

IdentityProviderProcess::IdentityProviderProcess() : m_database(std::make_unique<PostgresProcess>()), m_process(new QProcess), m_public(freePort()), m_admin(freePort())
{
    QTemporaryDir dir;
    dir.setAutoRemove(false);
    m_dir = dir.path();
}

IdentityProviderProcess::~IdentityProviderProcess()
{
    stop();
    delete m_process;
    m_database.reset();
    QDir(m_dir).removeRecursively();
}

QString IdentityProviderProcess::issuer() const
{
    return QStringLiteral("http://127.0.0.1:%1/").arg(m_public);
}

QString IdentityProviderProcess::adminUrl() const
{
    return QStringLiteral("http://127.0.0.1:%1").arg(m_admin);
}

QString IdentityProviderProcess::introspectionUrl() const
{
    return adminUrl() + QStringLiteral("/admin/oauth2/introspect");
}

bool IdentityProviderProcess::start()
{
    if (QStringLiteral(HYDRA_EXECUTABLE).isEmpty() || QStringLiteral(HYDRA_EXECUTABLE).endsWith(QLatin1String("NOTFOUND"))) {
        qWarning("no identity provider: Ory Hydra is built by scripts/install-deps.sh (it needs Go)");
        return false;
    }
    if (!m_database->start(QStringLiteral("hydra")))
        return false;
    // Up to 32 connections of its own: a flow holds one while it asks on another (its default, twice the cores,
    // leaves a few flows at once waiting on each other).
    const QString dsn = QStringLiteral("postgres://%1@127.0.0.1:%2/hydra?sslmode=disable&max_conns=32&max_idle_conns=8")
                            .arg(PostgresProcess::user())
                            .arg(m_database->port());
    bool migrated = false;
    // Its two ports were free a moment ago; another program may have taken one since (Hydra then ends at once):
    // tried again on others.
    for (int attempt = 0; attempt < 3; ++attempt) {
        if (attempt > 0) {
            m_public = freePort();
            do
                m_admin = freePort();
            while (m_admin == m_public);
        }
        const QString conf = QStringLiteral("serve:\n  public: {port: %1, host: 127.0.0.1}\n  admin: {port: %2, host: 127.0.0.1}\n"
                                            "dsn: '%3'\n"
                                            "urls:\n  self: {issuer: 'http://127.0.0.1:%1/'}\n  login: 'http://127.0.0.1:%1/no-login-page'\n"
                                            "  consent: 'http://127.0.0.1:%1/no-consent-page'\n"
                                            "secrets: {system: [spectrum-tests-system-secret-0123456789]}\n"
                                            "ttl: {access_token: 1h, refresh_token: 720h, id_token: 1h, auth_code: 10m}\n"
                                            "log: {level: warn}\n")
                                 .arg(m_public)
                                 .arg(m_admin)
                                 .arg(dsn);
        writeFile(m_dir + QStringLiteral("/hydra.yml"), conf.toUtf8());
        if (!migrated) {
            const ProcessResult r = run(QStringLiteral(HYDRA_EXECUTABLE), {QStringLiteral("migrate"), QStringLiteral("sql"), QStringLiteral("up"), QStringLiteral("--read-from-env"),
                                                                          QStringLiteral("--yes"), QStringLiteral("-c"), m_dir + QStringLiteral("/hydra.yml")},
                                        120000);
            if (r.exitCode != 0) {
                qWarning("Ory Hydra could not make its tables: %s", (r.out + r.err).right(2000).constData());
                return false;
            }
            migrated = true;
        }
        m_process->setProcessChannelMode(QProcess::MergedChannels);
        dieWithParent(*m_process);
        m_process->start(QStringLiteral(HYDRA_EXECUTABLE), {QStringLiteral("serve"), QStringLiteral("all"), QStringLiteral("--dev"), QStringLiteral("--sqa-opt-out"),
                                                             QStringLiteral("-c"), m_dir + QStringLiteral("/hydra.yml")});
        if (!m_process->waitForStarted())
            return false;
        for (int i = 0; i < 300 && m_process->state() == QProcess::Running; ++i) {
            const ProcessResult r = run(QStringLiteral("curl"), {QStringLiteral("-sf"), issuer() + QStringLiteral(".well-known/openid-configuration")}, 5000);
            if (r.exitCode == 0)
                return true;
            m_process->waitForFinished(100);
        }
        qWarning("Ory Hydra did not start: %s", m_process->readAll().right(2000).constData());
        if (m_process->state() == QProcess::Running)
            break;  // running but never answering: not a port taken
    }
    return false;
}

void IdentityProviderProcess::stop()
{
    stopProcess(*m_process, 5000);
    // What went wrong on its side (it logs warnings and errors only), for the reader of a failed test's output.
    const QByteArray log = m_process->readAll();
    if (log.contains("level=error"))
        qInfo("Ory Hydra logged errors: %s", log.right(4000).constData());
}

bool IdentityProviderProcess::addClient(const QString &clientId, const QStringList &audiences, int accessSeconds)
{
    const QJsonObject client{{QStringLiteral("client_id"), clientId},
                             {QStringLiteral("client_name"), QStringLiteral("Spectrum")},
                             {QStringLiteral("token_endpoint_auth_method"), QStringLiteral("none")},
                             {QStringLiteral("grant_types"), QJsonArray{QStringLiteral("authorization_code"), QStringLiteral("refresh_token")}},
                             {QStringLiteral("response_types"), QJsonArray{QStringLiteral("code")}},
                             {QStringLiteral("scope"), QStringLiteral("openid profile email offline_access")},
                             {QStringLiteral("redirect_uris"), QJsonArray{QStringLiteral("http://127.0.0.1/callback")}},
                             {QStringLiteral("audience"), QJsonArray::fromStringList(audiences)}};
    if (curl({QStringLiteral("-X"), QStringLiteral("POST"), QStringLiteral("-H"), QStringLiteral("Content-Type: application/json"), QStringLiteral("--data"),
              QString::fromUtf8(QJsonDocument(client).toJson(QJsonDocument::Compact)), adminUrl() + QStringLiteral("/admin/clients")})
            .isEmpty())
        return false;
    if (accessSeconds <= 0)
        return true;
    const QString life = QStringLiteral("%1s").arg(accessSeconds);
    const QJsonObject lifespans{{QStringLiteral("authorization_code_grant_access_token_lifespan"), life},
                                {QStringLiteral("refresh_token_grant_access_token_lifespan"), life}};
    return !curl({QStringLiteral("-X"), QStringLiteral("PUT"), QStringLiteral("-H"), QStringLiteral("Content-Type: application/json"), QStringLiteral("--data"),
                  QString::fromUtf8(QJsonDocument(lifespans).toJson(QJsonDocument::Compact)), adminUrl() + QStringLiteral("/admin/clients/%1/lifespans").arg(clientId)})
                .isEmpty();
}

QJsonObject IdentityProviderProcess::introspect(const QString &token) const
{
    return QJsonDocument::fromJson(curl({QStringLiteral("--data-urlencode"), QStringLiteral("token=") + token, introspectionUrl()})).object();
}

bool IdentityProviderProcess::revoke(const QString &token, const QString &clientId) const
{
    return !curl({QStringLiteral("--data-urlencode"), QStringLiteral("token=") + token, QStringLiteral("--data-urlencode"), QStringLiteral("client_id=") + clientId,
                  issuer() + QStringLiteral("oauth2/revoke")})
                .isEmpty();
}

QList<QPair<QString, QString>> browserEnvironment(const IdentityProviderProcess &idp, const QString &logFile)
{
    return {{QStringLiteral("SPECTRUM_BROWSER"), QStringLiteral(OIDC_BROWSER_SCRIPT)},
            {QStringLiteral("HYDRA_ADMIN_URL"), idp.adminUrl()},
            {QStringLiteral("OIDC_BROWSER_LOG"), logFile}};
}

} // namespace spectrum::test
