// SPDX-License-Identifier: Apache-2.0
#pragma once
// PostgreSQL (Debian's server programs) for a test: a fresh cluster in a temporary folder, on a free loopback port,
// trusting local connections, with one database made for the test. Run as the `postgres` user when the tests run
// as root (PostgreSQL refuses root). Stopped with the object.

#include "testsupport.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

namespace spectrum::test {

class PostgresProcess
{
public:
    PostgresProcess() : m_port(freePort())
    {
        m_process.setProcessChannelMode(QProcess::MergedChannels);
        dieWithParent(m_process);
    }
    ~PostgresProcess() { stopProcess(m_process); }

    static QString user() { return QStringLiteral("spectrum"); }
    quint16 port() const { return m_port; }

    /// initdb, the server, then `database`; false (with the reason logged) when any step fails.
    bool start(const QString &database)
    {
        const QString initdb = QStringLiteral(POSTGRES_INITDB_EXECUTABLE);
        if (initdb.isEmpty() || initdb.endsWith(QLatin1String("NOTFOUND"))) {
            qWarning("PostgreSQL's server programs are missing: scripts/install-deps.sh installs them");
            return false;
        }
        const QString bin = QFileInfo(initdb).absolutePath();
        const QString data = m_dir.filePath(QStringLiteral("data"));
        if (::geteuid() == 0 && run(QStringLiteral("chown"), {QStringLiteral("postgres:postgres"), m_dir.path()}).exitCode != 0) {
            qWarning("cannot give the cluster's folder to the postgres user");
            return false;
        }
        const ProcessResult made = run(asServerUser(initdb).first, asServerUser(initdb).second
                                                                       + QStringList{QStringLiteral("-D"), data, QStringLiteral("-U"), user(), QStringLiteral("--auth=trust"),
                                                                                     QStringLiteral("-E"), QStringLiteral("UTF8"), QStringLiteral("--no-sync")});
        if (made.exitCode != 0) {
            qWarning("initdb failed: %s", (made.out + made.err).right(2000).constData());
            return false;
        }
        const auto [program, prefix] = asServerUser(bin + QStringLiteral("/postgres"));
        m_process.start(program, prefix + QStringList{QStringLiteral("-D"), data, QStringLiteral("-p"), QString::number(m_port), QStringLiteral("-k"), m_dir.path(),
                                                      QStringLiteral("-c"), QStringLiteral("listen_addresses=127.0.0.1"), QStringLiteral("-c"), QStringLiteral("fsync=off")});
        if (!m_process.waitForStarted())
            return false;
        for (int i = 0; i < 200; ++i) {
            const ProcessResult db = run(bin + QStringLiteral("/createdb"), {QStringLiteral("-h"), QStringLiteral("127.0.0.1"), QStringLiteral("-p"), QString::number(m_port),
                                                                             QStringLiteral("-U"), user(), database});
            if (db.exitCode == 0)
                return true;
            if (m_process.state() != QProcess::Running)
                break;
            QTest::qWait(100);  // the server is still starting
        }
        qWarning("PostgreSQL did not start: %s", m_process.readAll().right(2000).constData());
        return false;
    }

private:
    /// The program, and what goes before its arguments: as the postgres user when we are root (setpriv execs it,
    /// so the server stays our child).
    static std::pair<QString, QStringList> asServerUser(const QString &program)
    {
        if (::geteuid() != 0)
            return {program, {}};
        return {QStringLiteral("setpriv"), {QStringLiteral("--reuid=postgres"), QStringLiteral("--regid=postgres"), QStringLiteral("--init-groups"), program}};
    }

    QTemporaryDir m_dir;
    QProcess m_process;
    quint16 m_port;
};

} // namespace spectrum::test
