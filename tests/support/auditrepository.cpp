// SPDX-License-Identifier: Apache-2.0
#include "auditrepository.h"

#include "testsupport.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

namespace spectrum::test {

AuditRepositoryProcess::AuditRepositoryProcess() : m_process(new QProcess), m_tlsPort(freePort()), m_udpPort(freePort())
{
    QTemporaryDir dir;
    dir.setAutoRemove(false);
    m_dir = dir.path();
    QDir().mkpath(m_dir + QStringLiteral("/work"));
    QDir().mkpath(m_dir + QStringLiteral("/other"));
    makeTestCa(m_dir);
    makeTestCertificate(m_dir, QStringLiteral("repository"), QStringLiteral("IP:127.0.0.1,DNS:localhost"));
    makeTestCertificate(m_dir, QStringLiteral("workstation"), QStringLiteral("DNS:workstation.test"));
    // A repository whose certificate no one here trusts: from a CA of its own.
    makeTestCa(m_dir + QStringLiteral("/other"));
    makeTestCertificate(m_dir + QStringLiteral("/other"), QStringLiteral("repository"), QStringLiteral("IP:127.0.0.1,DNS:localhost"));
}

AuditRepositoryProcess::~AuditRepositoryProcess()
{
    stop();
    delete m_process;
    QDir(m_dir).removeRecursively();
}

QString AuditRepositoryProcess::tlsUrl() const
{
    return QStringLiteral("tls://127.0.0.1:%1").arg(m_tlsPort);
}

QString AuditRepositoryProcess::udpUrl() const
{
    return QStringLiteral("udp://127.0.0.1:%1").arg(m_udpPort);
}

QString AuditRepositoryProcess::caFile() const
{
    return m_dir + QStringLiteral("/ca.pem");
}

QString AuditRepositoryProcess::clientCertificate() const
{
    return m_dir + QStringLiteral("/workstation.pem");
}

QString AuditRepositoryProcess::clientKey() const
{
    return m_dir + QStringLiteral("/workstation.key");
}

bool AuditRepositoryProcess::start(const Options &options)
{
    const QString certs = options.trustedCertificate ? m_dir : m_dir + QStringLiteral("/other");
    const QString conf = QStringLiteral(
        "global(workDirectory=\"%1/work\" maxMessageSize=\"65536\"\n"
        "       defaultNetstreamDriver=\"gtls\" defaultNetstreamDriverCAFile=\"%2/ca.pem\"\n"
        "       defaultNetstreamDriverCertFile=\"%2/repository.pem\" defaultNetstreamDriverKeyFile=\"%2/repository.key\")\n"
        "module(load=\"imtcp\" streamDriver.name=\"gtls\" streamDriver.mode=\"1\" streamDriver.authMode=\"%3\")\n"
        "input(type=\"imtcp\" port=\"%4\" address=\"127.0.0.1\")\n"
        "template(name=\"raw\" type=\"string\" string=\"%rawmsg%\\n\")\n"
        "ruleset(name=\"udp\") { action(type=\"omfile\" file=\"%1/received-udp.log\" template=\"raw\") }\n"
        "module(load=\"imudp\")\n"
        "input(type=\"imudp\" port=\"%5\" address=\"127.0.0.1\" ruleset=\"udp\")\n"
        "action(type=\"omfile\" file=\"%1/received.log\" template=\"raw\")\n")
        .arg(m_dir, certs, options.requireClientCertificate ? QStringLiteral("x509/certvalid") : QStringLiteral("anon"))
        .arg(m_tlsPort)
        .arg(m_udpPort);
    writeFile(m_dir + QStringLiteral("/rsyslog.conf"), conf.toUtf8());
    QFile::remove(m_dir + QStringLiteral("/rsyslog.pid"));
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    dieWithParent(*m_process);
    m_process->start(QStringLiteral(RSYSLOGD_EXECUTABLE), {QStringLiteral("-n"), QStringLiteral("-f"), m_dir + QStringLiteral("/rsyslog.conf"),
                                                            QStringLiteral("-i"), m_dir + QStringLiteral("/rsyslog.pid")});
    if (!m_process->waitForStarted())
        return false;
    for (int i = 0; i < 200 && m_process->state() == QProcess::Running; ++i) {
        QTcpSocket probe;
        probe.connectToHost(QHostAddress::LocalHost, m_tlsPort);
        if (probe.waitForConnected(100))
            return true;
        m_process->waitForFinished(100);
    }
    qWarning("rsyslogd did not start: %s", m_process->readAll().constData());
    return false;
}

void AuditRepositoryProcess::stop()
{
    stopProcess(*m_process, 5000);
}

void AuditRepositoryProcess::kill()
{
    m_process->kill();
    m_process->waitForFinished();
}

QList<QByteArray> AuditRepositoryProcess::messages() const
{
    return linesOf(m_dir + QStringLiteral("/received.log"));
}

QList<QByteArray> AuditRepositoryProcess::udpMessages() const
{
    return linesOf(m_dir + QStringLiteral("/received-udp.log"));
}

QList<QByteArray> AuditRepositoryProcess::linesOf(const QString &file)
{
    QList<QByteArray> out;
    for (const QByteArray &line : readFile(file).split('\n')) {
        if (!line.isEmpty())
            out.append(line);
    }
    return out;
}

bool AuditRepositoryProcess::waitForMessages(int count, int timeoutMs) const
{
    QElapsedTimer clock;
    clock.start();
    while (messages().size() < count) {
        if (clock.elapsed() > timeoutMs)
            return false;
        QTest::qWait(50);
    }
    return true;
}

QByteArray auditXmlOf(const QByteArray &syslogMessage)
{
    const qsizetype bom = syslogMessage.indexOf("\xEF\xBB\xBF");
    return bom < 0 ? QByteArray() : syslogMessage.mid(bom + 3);
}

QString checkAuditSyslogHeader(const QByteArray &syslogMessage, const QString &appName)
{
    // <85>1 TIMESTAMP HOST APP PROCID IHE+RFC-3881 - BOM
    static const QRegularExpression header(QStringLiteral(
        "^<85>1 \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d{1,6})?Z [\\x21-\\x7e]+ ([\\x21-\\x7e]+) \\d+ IHE\\+RFC-3881 - \\x{FEFF}<AuditMessage>"));
    const QRegularExpressionMatch m = header.match(QString::fromUtf8(syslogMessage));
    if (!m.hasMatch())
        return QStringLiteral("not an RFC 5424 audit message: %1").arg(QString::fromUtf8(syslogMessage.left(120)));
    if (m.captured(2) != appName)
        return QStringLiteral("APP-NAME is %1, not %2").arg(m.captured(2), appName);
    return QString();
}

QString validateAuditXml(const QByteArray &xml)
{
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("message.xml"));
    writeFile(file, xml);
    QProcess lint;
    lint.setProcessChannelMode(QProcess::MergedChannels);
    lint.start(QStringLiteral(XMLLINT_EXECUTABLE), {QStringLiteral("--noout"), QStringLiteral("--relaxng"),
                                                     QStringLiteral(TEST_DATA_DIR "/audit/dicom-audit-message.rng"), file});
    if (!lint.waitForFinished(30000))
        return QStringLiteral("xmllint did not finish");
    const QString said = QString::fromUtf8(lint.readAll());
    if (lint.exitStatus() != QProcess::NormalExit || lint.exitCode() != 0)
        return said.isEmpty() ? QStringLiteral("xmllint failed") : said;
    return QString();
}

QString auditEventId(const QByteArray &xml)
{
    QXmlStreamReader r(xml);
    while (!r.atEnd()) {
        r.readNext();
        if (r.isStartElement() && r.name() == QLatin1String("EventID"))
            return r.attributes().value(QStringLiteral("csd-code")).toString();
    }
    return QString();
}

} // namespace spectrum::test
