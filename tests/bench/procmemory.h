// SPDX-License-Identifier: Apache-2.0
#pragma once
// The benchmarks' look at their own memory.

#include <QFile>

namespace spectrum::bench {

/// A number of /proc/self/status as written there ("Threads": a count; "VmRSS": kB); -1 unknown.
inline qint64 statusOf(const char *field)
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : f.readAll().split('\n')) {
        if (line.startsWith(field))
            return line.mid(qstrlen(field) + 1).trimmed().split(' ').value(0).toLongLong();
    }
    return -1;
}

/// Resident memory of this process from /proc/self/status: "VmRSS" now, "VmHWM" at its peak (bytes); -1 unknown.
inline qint64 memoryOf(const char *field)
{
    const qint64 kb = statusOf(field);
    return kb < 0 ? -1 : kb * 1024;
}

} // namespace spectrum::bench
