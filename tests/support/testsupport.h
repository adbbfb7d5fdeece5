// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers shared by the test suites: running external tools, free ports, temporary folders.

#include <QJsonObject>
#include <QByteArray>
#include <QString>
#include <QList>
#include <QPair>
#include <QStringList>

#include <tuple>

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
/// spectrum-cli with `arguments`, and these variables added to the environment (SPECTRUM_CONFIG, SPECTRUM_CACHE_DIR…).
/// The event loop runs while it does: a workstation in the test's own process answers what it hands over.
ProcessResult runCli(const QStringList &arguments, const QList<QPair<QString, QString>> &environment, int timeoutMs = 120000);

/// Servers a test starts die with the test process, even when it crashes or is killed (PR_SET_PDEATHSIG):
/// no Orthanc, nginx or blobd is left behind holding ports.
void dieWithParent(QProcess &process);

/// SIGTERM, then SIGKILL after `graceMs`; returns once the process is gone.
void stopProcess(QProcess &process, int graceMs = 10000);

/// A TCP port on 127.0.0.1 that was free a moment ago.
quint16 freePort();

QByteArray readFile(const QString &path);
/// `n` pseudo-random bytes, the same for the same seed.
QByteArray randomBytes(qint64 n, quint32 seed);
bool writeFile(const QString &path, const QByteArray &bytes);
/// The same, readable by its owner only (mode 0600): a token, a password, a key — Spectrum refuses others.
bool writePrivateFile(const QString &path, const QByteArray &bytes);
/// Overwrites bytes of a blob where a store keeps them under `root` (a file of its own or a pack, found by its
/// content, so the test does not depend on the layout): `replacement` at `at` in the blob. false if the bytes are
/// nowhere under `root`.
bool damageOnDisk(const QString &root, const QByteArray &blob, qint64 at, const QByteArray &replacement);

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
    qint64 pid() const;

private:
    QString m_root;
    quint16 m_port;
    QString m_token;
    QProcess *m_process;
};

/// Debian's openssl command line; true when it succeeded (its complaint is logged when not).
bool openssl(const QStringList &arguments);
/// A hospital CA of the tests' own in `dir` (ca.key, ca.pem), and certificates it signs (NAME.key, NAME.pem)
/// for a subjectAltName such as "IP:127.0.0.1" or "DNS:pacs.example".
bool makeTestCa(const QString &dir);
bool makeTestCertificate(const QString &dir, const QString &name, const QString &subjectAltName);

/// Orthanc (Debian's package) as a child process on free loopback ports, with its DICOMweb plugin at /dicom-web/,
/// storage in a temporary folder and, optionally, HTTP Basic users. Stopped on destruction.
class OrthancProcess
{
public:
    struct Options
    {
        QString aeTitle = QStringLiteral("ORTHANC");
        QList<QPair<QString, QString>> users;  ///< none: no authentication
        /// DIMSE peers Orthanc may send to (C-MOVE destinations): AE title, host, port.
        QList<std::tuple<QString, QString, quint16>> modalities;
        QStringList plugins;  ///< besides DICOMweb's
        QJsonObject extra;    ///< more of the configuration (a plugin's section…), over the defaults
    };
    OrthancProcess();
    ~OrthancProcess();
    /// Starts it and waits (up to 60 s) until its REST API answers.
    bool start(const Options &options);
    bool start() { return start(Options()); }
    void stop();
    /// Killed (SIGKILL): a server that dies, answers cut off mid-way.
    void kill();
    quint16 httpPort() const { return m_httpPort; }
    quint16 dicomPort() const { return m_dicomPort; }
    QString aeTitle() const { return m_aeTitle; }
    QString dicomWebUrl() const;
    /// POST /instances; the Orthanc ID, or an empty string on failure.
    QString upload(const QByteArray &dicom);
    /// A REST call with the first configured user's credentials; status and body.
    QByteArray rest(const QByteArray &verb, const QString &path, const QByteArray &body = {}, int *status = nullptr);

private:
    QString m_dir;
    QProcess *m_process;
    quint16 m_httpPort = 0;
    quint16 m_dicomPort = 0;
    QString m_aeTitle;
    QPair<QString, QString> m_user;
};

/// The user-space link emulator (tests/bench/linkemu.py) in front of `upstream` on loopback: a wide-area link
/// with this round-trip time, per-connection window and capacity. Stops with the object.
class LinkEmulator
{
public:
    LinkEmulator(quint16 upstream, int rttMs, int windowKiB, int capacityMbit);
    ~LinkEmulator();
    /// Waits until it listens (it says so on its first line).
    bool waitUntilListening();
    quint16 port() const { return m_port; }

private:
    quint16 m_port;
    QProcess *m_process;
};

/// nginx (Debian's nginx-light) as a child process: `servers` is the inside of the http block (server blocks);
/// temp paths, pid and logs live in a folder of its own. Stopped on destruction.
class NginxProcess
{
public:
    NginxProcess();
    ~NginxProcess();
    QString directory() const { return m_dir; }  ///< for files the configuration serves
    /// Starts it and waits (up to 20 s) until `port` accepts connections.
    bool start(const QString &servers, quint16 port);
    void stop();

private:
    QString m_dir;
    QProcess *m_process;
};

} // namespace spectrum::test
