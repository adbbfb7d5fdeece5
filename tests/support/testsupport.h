#pragma once
// Helpers shared by the test suites: running external tools, free ports, temporary folders.

#include <QByteArray>
#include <QString>
#include <QStringList>

class QProcess;

namespace spectrum::test {

struct ProcessResult
{
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
    bool ok() const { return exitCode == 0; }
};

/// Runs a program to completion (at most `timeoutMs`) and returns its exit code and output.
ProcessResult run(const QString &program, const QStringList &arguments, int timeoutMs = 120000);

/// A TCP port on 127.0.0.1 that was free a moment ago.
quint16 freePort();

QByteArray readFile(const QString &path);
bool writeFile(const QString &path, const QByteArray &bytes);

/// spectrum-blobd as a child process on a free port, serving `root`, with token `token`. Stopped on destruction.
class BlobdProcess
{
public:
    explicit BlobdProcess(QString root, quint16 port = 0, QString token = QStringLiteral("test-token-1234"));
    ~BlobdProcess();
    /// Starts it and waits until it listens.
    bool start(const QStringList &extraArguments = {});
    void kill();  ///< SIGKILL: no goodbye
    void stop();  ///< SIGTERM, then SIGKILL after 5 s
    quint16 port() const { return m_port; }
    QString token() const { return m_token; }

private:
    QString m_root;
    quint16 m_port;
    QString m_token;
    QProcess *m_process;
};

} // namespace spectrum::test
