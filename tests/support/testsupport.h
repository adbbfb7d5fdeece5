#pragma once
// Helpers shared by the test suites: running external tools, free ports, temporary folders.

#include <QByteArray>
#include <QString>
#include <QStringList>

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

} // namespace spectrum::test
