// SPDX-License-Identifier: Apache-2.0
#pragma once
// The tests' S3 server: versitygw (built once by scripts/install-deps.sh, not a Debian package) on a free loopback
// port with a POSIX folder behind it. It checks signatures and clocks, and does ranges, multipart uploads and
// conditional requests. Stopped with the object.

#include "testsupport.h"

#if __has_include("spectrum/transfer/s3client.h")
#include "spectrum/transfer/s3client.h"
#endif

#include <QProcess>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

namespace spectrum::test {

/// versitygw on a free loopback port with a POSIX folder behind it; stopped with the object.
class S3Server
{
public:
    static QString accessKey() { return QStringLiteral("AKIASPECTRUMTEST"); }
    static QString secretKey() { return QStringLiteral("spectrum/secret+key=test"); }
    S3Server() : m_port(freePort())
    {
        m_process.setProcessChannelMode(QProcess::MergedChannels);
        dieWithParent(m_process);
    }
    ~S3Server() { stopProcess(m_process); }
    bool start()
    {
        if (QStringLiteral(VERSITYGW_EXECUTABLE).isEmpty() || QStringLiteral(VERSITYGW_EXECUTABLE).endsWith(QLatin1String("NOTFOUND"))) {
            qWarning("versitygw is missing: scripts/install-deps.sh builds it (it needs Go)");
            return false;
        }
        m_process.start(QStringLiteral(VERSITYGW_EXECUTABLE),
                        {QStringLiteral("--port"), QStringLiteral("127.0.0.1:%1").arg(m_port), QStringLiteral("--access"), accessKey(), QStringLiteral("--secret"), secretKey(),
                         // Connections kept between requests, as AWS, Ceph RGW and Garage keep them (versitygw closes each by default).
                         QStringLiteral("--keep-alive"), QStringLiteral("--quiet"), QStringLiteral("posix"), m_dir.path()});
        if (!m_process.waitForStarted())
            return false;
        for (int i = 0; i < 200; ++i) {
            QTcpSocket probe;
            probe.connectToHost(QStringLiteral("127.0.0.1"), m_port);
            if (probe.waitForConnected(100))
                return true;
            if (m_process.state() != QProcess::Running)
                break;
            QTest::qWait(50);
        }
        qWarning("versitygw did not listen: %s", m_process.readAll().constData());
        return false;
    }
    quint16 port() const { return m_port; }
#if __has_include("spectrum/transfer/s3client.h")
    /// The endpoint of `bucket` on this server, with the tests' credentials.
    spectrum::S3Endpoint endpoint(const QString &bucket) const
    {
        spectrum::S3Endpoint e;
        e.endpoint = QUrl(QStringLiteral("http://127.0.0.1:%1").arg(m_port));
        e.bucket = bucket;
        e.credentials.accessKey = accessKey();
        e.credentials.secretKey = secretKey();
        return e;
    }
#endif

private:
    QTemporaryDir m_dir;
    QProcess m_process;
    quint16 m_port;
};

} // namespace spectrum::test
