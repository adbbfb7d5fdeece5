// SPDX-License-Identifier: Apache-2.0
#pragma once
// The benchmarks' look at their own memory.

#include <QFile>

namespace spectrum::bench {

/// Resident memory of this process from /proc/self/status: "VmRSS" now, "VmHWM" at its peak (bytes); -1 unknown.
inline qint64 memoryOf(const char *field)
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : f.readAll().split('\n')) {
        if (line.startsWith(field))
            return line.mid(qstrlen(field) + 1).trimmed().split(' ').value(0).toLongLong() * 1024;
    }
    return -1;
}

} // namespace spectrum::bench
