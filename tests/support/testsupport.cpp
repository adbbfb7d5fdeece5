#include "testsupport.h"

#include <QFile>
#include <QProcess>
#include <QTcpServer>

namespace spectrum::test {

ProcessResult run(const QString &program, const QStringList &arguments, int timeoutMs)
{
    QProcess p;
    p.start(program, arguments);
    ProcessResult r;
    if (!p.waitForStarted(10000)) {
        r.err = "cannot start " + program.toLocal8Bit() + ": " + p.errorString().toLocal8Bit();
        return r;
    }
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out: " + program.toLocal8Bit();
        return r;
    }
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return r;
}

quint16 freePort()
{
    QTcpServer server;
    server.listen(QHostAddress::LocalHost, 0);
    return server.serverPort();
}

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeFile(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

BlobdProcess::BlobdProcess(QString root, quint16 port, QString token)
    : m_root(std::move(root)), m_port(port ? port : freePort()), m_token(std::move(token)), m_process(new QProcess)
{
}

BlobdProcess::~BlobdProcess()
{
    stop();
    delete m_process;
}

bool BlobdProcess::start(const QStringList &extra)
{
    const QString tokenFile = m_root + QStringLiteral(".token");
    writeFile(tokenFile, m_token.toUtf8());
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    m_process->start(QStringLiteral(SPECTRUM_BLOBD_EXECUTABLE),
                     QStringList{QStringLiteral("--root"), m_root, QStringLiteral("--port"), QString::number(m_port),
                                 QStringLiteral("--token-file"), tokenFile} + extra);
    if (!m_process->waitForStarted())
        return false;
    QByteArray out;
    for (int i = 0; i < 100 && !out.contains("listening") && m_process->state() == QProcess::Running; ++i) {
        m_process->waitForReadyRead(100);
        out += m_process->readAll();
    }
    return out.contains("listening");
}

void BlobdProcess::kill()
{
    m_process->kill();
    m_process->waitForFinished();
}

void BlobdProcess::stop()
{
    if (m_process->state() == QProcess::NotRunning)
        return;
    m_process->terminate();
    if (!m_process->waitForFinished(5000))
        kill();
}

} // namespace spectrum::test
