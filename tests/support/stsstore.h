// SPDX-License-Identifier: Apache-2.0
#pragma once
// The tests' S3 store with a security token service: SeaweedFS (built once by scripts/install-deps.sh, Apache-2.0)
// as one process ("weed mini": master, volume server, filer and S3 gateway) on free loopback ports with a folder
// behind it. Its S3 gateway answers AssumeRoleWithWebIdentity: it checks the ID token against the identity provider's
// published keys (issuer, audience, expiry, signature), then the role's trust policy, and signs the credentials it
// gives; each S3 request is then checked against the role's policy. An administrator's static key makes the bucket
// and looks into it from outside. Stopped with the object.

#include "testsupport.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

namespace spectrum::test {

class StsStoreProcess
{
public:
    static QString adminKey() { return QStringLiteral("AKIAHOSPITALADMIN"); }
    static QString adminSecret() { return QStringLiteral("hospital-admin-secret-0123456789"); }

    StsStoreProcess() : m_s3Port(freePort())
    {
        m_process.setProcessChannelMode(QProcess::MergedChannels);
        dieWithParent(m_process);
    }
    ~StsStoreProcess() { stopProcess(m_process); }

    /// Starts it trusting `issuer` (its ID tokens for `clientId`), with `iam`'s roles and policies ({"roles": …,
    /// "policies": …}), its token service signing the session tokens it gives with `signingKey` (base64), and
    /// waits until its S3 port answers.
    bool start(const QString &issuer, const QString &clientId, const QJsonObject &iam,
               const QString &signingKey = QStringLiteral("c3BlY3RydW0tdGVzdHMtc3RzLXNpZ25pbmcta2V5LTMy"))
    {
        if (QStringLiteral(SEAWEEDFS_EXECUTABLE).isEmpty() || QStringLiteral(SEAWEEDFS_EXECUTABLE).endsWith(QLatin1String("NOTFOUND"))) {
            qWarning("SeaweedFS is missing: scripts/install-deps.sh builds it (it needs Go)");
            return false;
        }
        const QJsonObject provider{{QStringLiteral("name"), QStringLiteral("hospital")},
                                   {QStringLiteral("type"), QStringLiteral("oidc")},
                                   {QStringLiteral("enabled"), true},
                                   {QStringLiteral("config"), QJsonObject{{QStringLiteral("issuer"), issuer},
                                                                          {QStringLiteral("clientId"), clientId},
                                                                          {QStringLiteral("jwksUri"), issuer + QStringLiteral(".well-known/jwks.json")}}}};
        QJsonObject config = iam;
        config.insert(QStringLiteral("sts"), QJsonObject{{QStringLiteral("tokenDuration"), QStringLiteral("1h")},
                                                        {QStringLiteral("maxSessionLength"), QStringLiteral("12h")},
                                                        {QStringLiteral("issuer"), QStringLiteral("seaweedfs-sts")},
                                                        {QStringLiteral("signingKey"), signingKey}});
        config.insert(QStringLiteral("providers"), QJsonArray{provider});
        config.insert(QStringLiteral("policy"), QJsonObject{{QStringLiteral("defaultEffect"), QStringLiteral("Deny")}});
        const QString iamFile = m_dir.filePath(QStringLiteral("iam.json")), s3File = m_dir.filePath(QStringLiteral("s3.json"));
        writeFile(iamFile, QJsonDocument(config).toJson());
        const QJsonObject admin{{QStringLiteral("name"), QStringLiteral("admin")},
                                {QStringLiteral("credentials"), QJsonArray{QJsonObject{{QStringLiteral("accessKey"), adminKey()}, {QStringLiteral("secretKey"), adminSecret()}}}},
                                {QStringLiteral("actions"), QJsonArray{QStringLiteral("Admin"), QStringLiteral("Read"), QStringLiteral("Write"), QStringLiteral("List")}}};
        writeFile(s3File, QJsonDocument(QJsonObject{{QStringLiteral("identities"), QJsonArray{admin}}}).toJson());
        QDir().mkpath(m_dir.filePath(QStringLiteral("data")));
        auto port = [](const char *flag, quint16 p) { return QStringLiteral("-%1=%2").arg(QLatin1String(flag)).arg(p); };
        QStringList args{QStringLiteral("mini"), QStringLiteral("-dir=") + m_dir.filePath(QStringLiteral("data")),
                         QStringLiteral("-ip=127.0.0.1"), QStringLiteral("-ip.bind=127.0.0.1"),
                         port("master.port", freePort()), port("master.port.grpc", freePort()),
                         port("volume.port", freePort()), port("volume.port.grpc", freePort()),
                         port("filer.port", freePort()), port("filer.port.grpc", freePort()),
                         port("s3.port", m_s3Port), port("s3.port.grpc", freePort()),
                         QStringLiteral("-s3.port.iceberg=0"), QStringLiteral("-s3.port.lance=0"),
                         port("admin.port", freePort()), port("admin.port.grpc", freePort()), QStringLiteral("-admin.port.legacy=0"),
                         QStringLiteral("-webdav=false"), QStringLiteral("-admin.ui=false"), QStringLiteral("-master.telemetry=false"),
                         QStringLiteral("-s3.config=") + s3File, QStringLiteral("-s3.iam.config=") + iamFile};
        m_process.start(QStringLiteral(SEAWEEDFS_EXECUTABLE), args);
        if (!m_process.waitForStarted())
            return false;
        // Up when its S3 gateway answers (the gateway starts after the filer it stands on).
        for (int i = 0; i < 600 && m_process.state() == QProcess::Running; ++i) {
            const ProcessResult r = run(QStringLiteral("curl"), {QStringLiteral("-s"), QStringLiteral("-o"), QStringLiteral("/dev/null"),
                                                                  QStringLiteral("-w"), QStringLiteral("%{http_code}"), url() + QStringLiteral("/")}, 5000);
            if (r.out.toInt() > 0)
                return true;
            m_process.waitForFinished(100);
        }
        qWarning("SeaweedFS did not start: %s", m_process.readAll().right(3000).constData());
        return false;
    }

    /// Stopped (its data kept), for a start again.
    void stop() { stopProcess(m_process); }
    QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_s3Port); }
    /// What it printed so far (its log).
    QByteArray output() { return m_process.readAll(); }

private:
    QTemporaryDir m_dir;
    QProcess m_process;
    quint16 m_s3Port;
};

} // namespace spectrum::test
