// SPDX-License-Identifier: Apache-2.0
#pragma once
// An audit record repository for the tests: Debian's rsyslog as a child process, taking syslog over TLS
// (RFC 5425, its gtls driver, the tests' CA) and UDP on loopback, writing every message it receives, as received,
// one per line. And the checks of what it got: the RFC 5424 header, the DICOM audit message schema (PS3.15
// A.5.1, tests/data/audit) through xmllint.

#include <QByteArray>
#include <QList>
#include <QString>

class QProcess;

namespace spectrum::test {

class AuditRepositoryProcess
{
public:
    struct Options
    {
        /// x509/certvalid: clients must present a certificate from the CA (ATNA's mutual authentication);
        /// false: any client (anon), the server still proves itself.
        bool requireClientCertificate = false;
        /// The server's certificate: from the tests' CA (true) or from another (a repository Spectrum must refuse).
        bool trustedCertificate = true;
    };
    /// Makes the CA, the server's certificate and a client certificate in a folder of its own.
    AuditRepositoryProcess();
    ~AuditRepositoryProcess();
    /// Starts rsyslogd (same ports each time: a restarted repository is found where it was) and waits until it
    /// takes TLS connections.
    bool start(const Options &options);
    bool start() { return start(Options()); }
    void stop();
    /// SIGKILL: a repository that dies.
    void kill();

    quint16 tlsPort() const { return m_tlsPort; }
    quint16 udpPort() const { return m_udpPort; }
    QString tlsUrl() const;
    QString udpUrl() const;
    QString caFile() const;            ///< the CA of the server's (and the client's) certificate
    QString clientCertificate() const;
    QString clientKey() const;

    /// The syslog messages received over TLS so far, in order.
    QList<QByteArray> messages() const;
    /// Those received over UDP.
    QList<QByteArray> udpMessages() const;
    /// Waits (up to `timeoutMs`) until at least `count` messages are in.
    bool waitForMessages(int count, int timeoutMs = 20000) const;

private:
    static QList<QByteArray> linesOf(const QString &file);
    QString m_dir;
    QProcess *m_process;
    quint16 m_tlsPort, m_udpPort;
};

/// The audit XML of a received syslog message (after its header and byte order mark); empty when it has none.
QByteArray auditXmlOf(const QByteArray &syslogMessage);
/// Checks an RFC 5424 header as audit repositories expect it (PRI 85, version 1, MSGID IHE+RFC-3881, the BOM);
/// an empty string when right, else what is wrong.
QString checkAuditSyslogHeader(const QByteArray &syslogMessage, const QString &appName);
/// xmllint --relaxng with the DICOM audit message schema: an empty string when valid, else xmllint's words.
QString validateAuditXml(const QByteArray &xml);
/// The EventID code of an audit message ("110112"), read by a parser that is not ours (Qt's DOM-less reader).
QString auditEventId(const QByteArray &xml);

} // namespace spectrum::test
