// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include <QEventLoop>
#include <QFile>
#include <QRandomGenerator>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QTest>
#include <QTcpServer>
#include <QTcpSocket>
#include <QDir>
#include <QDirIterator>
#include <QTemporaryDir>
#include <QThread>

#include <csignal>
#include <cstring>
#include <sys/prctl.h>

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

ProcessResult runCli(const QStringList &arguments, const QList<QPair<QString, QString>> &environment, int timeoutMs)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const auto &[name, value] : environment)
        env.insert(name, value);
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), arguments);
    ProcessResult r;
    if (!p.waitForStarted(10000)) {
        r.err = "cannot start spectrum-cli: " + p.errorString().toLocal8Bit();
        return r;
    }
    if (!QTest::qWaitFor([&] { return p.state() == QProcess::NotRunning; }, timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out: spectrum-cli " + arguments.join(QLatin1Char(' ')).toLocal8Bit();
        return r;
    }
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return r;
}

void dieWithParent(QProcess &process)
{
    process.setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGKILL); });
}

void stopProcess(QProcess &process, int graceMs)
{
    if (process.state() == QProcess::NotRunning)
        return;
    process.terminate();
    if (!process.waitForFinished(graceMs)) {
        process.kill();
        process.waitForFinished();
    }
}

quint16 freePort()
{
    QTcpServer server;
    server.listen(QHostAddress::LocalHost, 0);
    return server.serverPort();
}

QByteArray randomBytes(qint64 n, quint32 seed)
{
    QByteArray b(n, Qt::Uninitialized);
    QRandomGenerator rng(seed);
    for (qint64 i = 0; i + 4 <= n; i += 4) {
        const quint32 v = rng.generate();
        std::memcpy(b.data() + i, &v, 4);
    }
    for (qint64 i = n & ~qint64(3); i < n; ++i)
        b[i] = char(rng.generate());
    return b;
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

bool writePrivateFile(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner)
        && f.write(bytes) == bytes.size();
}

bool damageOnDisk(const QString &root, const QByteArray &blob, qint64 at, const QByteArray &replacement)
{
    QDirIterator it(root, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        QFile f(it.next());
        if (!f.open(QIODevice::ReadWrite))
            continue;
        const QByteArray bytes = f.readAll();
        // memmem (glibc's two-way search) is linear; QByteArray::indexOf slows to a crawl on image bytes, whose
        // long runs of equal values defeat its skip table.
        const void *found = ::memmem(bytes.constData(), size_t(bytes.size()), blob.constData(), size_t(blob.size()));
        if (!found)
            continue;
        const qint64 where = static_cast<const char *>(found) - bytes.constData();
        return f.seek(where + at) && f.write(replacement) == replacement.size();
    }
    return false;
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
    writePrivateFile(tokenFile, m_token.toUtf8());
    // Its output goes to a file, never a pipe nobody reads: a server logging a line per dropped connection
    // would block on a full pipe (and look hung) once 64 KiB of them waited.
    const QString log = m_root + QStringLiteral(".log");
    QFile::remove(log);
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    m_process->setStandardOutputFile(log, QIODevice::Append);
    dieWithParent(*m_process);
    m_process->start(QStringLiteral(SPECTRUM_BLOBD_EXECUTABLE),
                     QStringList{QStringLiteral("--root"), m_root, QStringLiteral("--port"), QString::number(m_port),
                                 QStringLiteral("--token-file"), tokenFile} + extra);
    if (!m_process->waitForStarted())
        return false;
    for (int i = 0; i < 100 && m_process->state() == QProcess::Running; ++i) {
        if (readFile(log).contains("listening"))
            return true;
        m_process->waitForFinished(100);  // returns at once if it exits; else a pause before looking again
    }
    return readFile(log).contains("listening");
}

bool openssl(const QStringList &arguments)
{
    const ProcessResult r = run(QStringLiteral("openssl"), arguments, 60000);
    if (!r.ok())
        qWarning("openssl %s: %s", qPrintable(arguments.join(QLatin1Char(' '))), r.err.constData());
    return r.ok();
}

bool makeTestCa(const QString &dir)
{
    return openssl({QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"), QStringLiteral("rsa:2048"), QStringLiteral("-nodes"),
                    QStringLiteral("-keyout"), dir + QStringLiteral("/ca.key"), QStringLiteral("-out"), dir + QStringLiteral("/ca.pem"),
                    QStringLiteral("-days"), QStringLiteral("2"), QStringLiteral("-subj"), QStringLiteral("/CN=Spectrum Test Hospital CA")});
}

bool makeTestCertificate(const QString &dir, const QString &name, const QString &subjectAltName)
{
    const QString key = dir + QLatin1Char('/') + name + QStringLiteral(".key"), csr = dir + QLatin1Char('/') + name + QStringLiteral(".csr");
    const QString ext = dir + QLatin1Char('/') + name + QStringLiteral(".ext");
    writeFile(ext, "subjectAltName=" + subjectAltName.toUtf8() + "\n");
    return openssl({QStringLiteral("req"), QStringLiteral("-newkey"), QStringLiteral("rsa:2048"), QStringLiteral("-nodes"), QStringLiteral("-keyout"), key,
                    QStringLiteral("-out"), csr, QStringLiteral("-subj"), QStringLiteral("/CN=") + name})
        && openssl({QStringLiteral("x509"), QStringLiteral("-req"), QStringLiteral("-in"), csr, QStringLiteral("-CA"), dir + QStringLiteral("/ca.pem"),
                    QStringLiteral("-CAkey"), dir + QStringLiteral("/ca.key"), QStringLiteral("-CAcreateserial"), QStringLiteral("-days"), QStringLiteral("2"),
                    QStringLiteral("-extfile"), ext, QStringLiteral("-out"), dir + QLatin1Char('/') + name + QStringLiteral(".pem")});
}

qint64 BlobdProcess::pid() const
{
    return m_process->processId();
}

void BlobdProcess::kill()
{
    m_process->kill();
    m_process->waitForFinished();
}

void BlobdProcess::stop()
{
    stopProcess(*m_process, 5000);
}

// ---- Orthanc ----

OrthancProcess::OrthancProcess() : m_process(new QProcess) {}

OrthancProcess::~OrthancProcess()
{
    stop();
    delete m_process;
    if (!m_dir.isEmpty())
        QDir(m_dir).removeRecursively();
}

bool OrthancProcess::start(const Options &options)
{
    QTemporaryDir dir;
    dir.setAutoRemove(false);
    m_dir = dir.path();
    m_httpPort = freePort();
    m_dicomPort = freePort();
    m_aeTitle = options.aeTitle;
    QJsonObject users;
    for (const auto &[name, password] : options.users)
        users.insert(name, password);
    if (!options.users.isEmpty())
        m_user = options.users.first();
    QJsonObject modalities;
    for (const auto &[ae, host, port] : options.modalities)
        modalities.insert(ae, QJsonArray{ae, host, port});
    QJsonArray plugins{QStringLiteral(ORTHANC_DICOMWEB_PLUGIN)};
    for (const QString &plugin : options.plugins)
        plugins.append(plugin);
    QJsonObject config{
        {QStringLiteral("Name"), QStringLiteral("spectrum-test")},
        {QStringLiteral("StorageDirectory"), m_dir + QStringLiteral("/storage")},
        {QStringLiteral("IndexDirectory"), m_dir + QStringLiteral("/index")},
        {QStringLiteral("HttpPort"), m_httpPort},
        {QStringLiteral("DicomPort"), m_dicomPort},
        {QStringLiteral("DicomAet"), m_aeTitle},
        {QStringLiteral("RemoteAccessAllowed"), false},
        {QStringLiteral("AuthenticationEnabled"), !options.users.isEmpty()},
        {QStringLiteral("RegisteredUsers"), users},
        {QStringLiteral("DicomModalities"), modalities},
        {QStringLiteral("DicomAlwaysAllowEcho"), true},
        {QStringLiteral("DicomAlwaysAllowStore"), true},
        {QStringLiteral("DicomCheckCalledAet"), false},
        {QStringLiteral("Plugins"), plugins},
        {QStringLiteral("DicomWeb"), QJsonObject{{QStringLiteral("Enable"), true}, {QStringLiteral("Root"), QStringLiteral("/dicom-web/")}}},
    };
    for (auto it = options.extra.begin(); it != options.extra.end(); ++it)
        config.insert(it.key(), it.value());
    const QString configPath = m_dir + QStringLiteral("/orthanc.json");
    writeFile(configPath, QJsonDocument(config).toJson());
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    m_process->setStandardOutputFile(m_dir + QStringLiteral("/orthanc.log"));
    dieWithParent(*m_process);
    m_process->start(QStringLiteral(ORTHANC_EXECUTABLE), {configPath});
    if (!m_process->waitForStarted())
        return false;
    for (int i = 0; i < 600 && m_process->state() == QProcess::Running; ++i) {
        int status = 0;
        rest("GET", QStringLiteral("/system"), {}, &status);
        if (status == 200)
            return true;
        m_process->waitForFinished(100);  // returns at once if it exits; else a pause between polls
    }
    qWarning("Orthanc did not start: %s", readFile(m_dir + QStringLiteral("/orthanc.log")).right(2000).constData());
    return false;
}

void OrthancProcess::stop()
{
    stopProcess(*m_process);
}

void OrthancProcess::kill()
{
    m_process->kill();
    m_process->waitForFinished(10000);
}

QString OrthancProcess::dicomWebUrl() const
{
    return QStringLiteral("http://127.0.0.1:%1/dicom-web").arg(m_httpPort);
}

QByteArray OrthancProcess::rest(const QByteArray &verb, const QString &path, const QByteArray &body, int *status)
{
    QNetworkAccessManager net;
    QNetworkRequest req(QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(m_httpPort).arg(path)));
    if (!m_user.first.isEmpty())
        req.setRawHeader("Authorization", "Basic " + (m_user.first + QLatin1Char(':') + m_user.second).toUtf8().toBase64());
    if (!body.isEmpty())
        req.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/dicom"));
    QNetworkReply *reply = net.sendCustomRequest(req, verb, body);
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    if (!reply->isFinished())
        loop.exec();
    if (status)
        *status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray answer = reply->readAll();
    delete reply;
    return answer;
}

QString OrthancProcess::upload(const QByteArray &dicom)
{
    int status = 0;
    const QJsonObject answer = QJsonDocument::fromJson(rest("POST", QStringLiteral("/instances"), dicom, &status)).object();
    return status == 200 ? answer.value(QStringLiteral("ID")).toString() : QString();
}

// ---- nginx ----

NginxProcess::NginxProcess() : m_process(new QProcess)
{
    QTemporaryDir dir;
    dir.setAutoRemove(false);
    m_dir = dir.path();
    QDir().mkpath(m_dir + QStringLiteral("/tmp"));
    QFile::setPermissions(m_dir + QStringLiteral("/tmp"), QFileDevice::Permissions(0x7777));  // workers may run as nobody
    QFile::setPermissions(m_dir, QFileDevice::Permissions(0x7755));
}

NginxProcess::~NginxProcess()
{
    stop();
    delete m_process;
    QDir(m_dir).removeRecursively();
}

bool NginxProcess::start(const QString &servers, quint16 port)
{
    const QString conf = QStringLiteral("daemon off; worker_processes 1; pid %1/nginx.pid; error_log %1/error.log;\n"
                                        "events { worker_connections 256; }\n"
                                        "http { access_log off; client_body_temp_path %1/tmp; proxy_temp_path %1/tmp; fastcgi_temp_path %1/tmp;\n"
                                        "  uwsgi_temp_path %1/tmp; scgi_temp_path %1/tmp;\n")
                             .arg(m_dir) + servers + QStringLiteral("}\n");
    writeFile(m_dir + QStringLiteral("/nginx.conf"), conf.toUtf8());
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    dieWithParent(*m_process);
    m_process->start(QStringLiteral("nginx"), {QStringLiteral("-c"), m_dir + QStringLiteral("/nginx.conf"), QStringLiteral("-p"), m_dir});
    if (!m_process->waitForStarted())
        return false;
    for (int i = 0; i < 200 && m_process->state() == QProcess::Running; ++i) {
        QTcpSocket probe;
        probe.connectToHost(QHostAddress::LocalHost, port);
        if (probe.waitForConnected(100))
            return true;
        m_process->waitForFinished(100);
    }
    qWarning("nginx did not start: %s %s", m_process->readAll().constData(), readFile(m_dir + QStringLiteral("/error.log")).right(1000).constData());
    return false;
}

void NginxProcess::stop()
{
    stopProcess(*m_process);
}


LinkEmulator::LinkEmulator(quint16 upstream, int rttMs, int windowKiB, int capacityMbit) : m_port(freePort()), m_process(new QProcess)
{
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    dieWithParent(*m_process);
    m_process->start(QStringLiteral("/usr/bin/python3"),
                     {QStringLiteral(LINKEMU_SCRIPT), QStringLiteral("--listen"), QString::number(m_port),
                      QStringLiteral("--upstream"), QString::number(upstream), QStringLiteral("--rtt-ms"), QString::number(rttMs),
                      QStringLiteral("--window-kib"), QString::number(windowKiB), QStringLiteral("--capacity-mbit"), QString::number(capacityMbit)});
}

LinkEmulator::~LinkEmulator()
{
    m_process->kill();
    m_process->waitForFinished();
    delete m_process;
}

bool LinkEmulator::waitUntilListening()
{
    if (!m_process->waitForStarted())
        return false;
    QByteArray said;
    while (!said.contains("linkemu") && m_process->state() == QProcess::Running) {
        m_process->waitForReadyRead(100);
        said += m_process->readAll();
    }
    return said.contains("linkemu");
}

} // namespace spectrum::test
