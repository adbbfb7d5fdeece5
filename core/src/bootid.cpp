// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/bootid.h"

#include <QFile>

namespace spectrum {

const QString &kernelBootId()
{
    static const QString id = [] {
        QFile f(QStringLiteral("/proc/sys/kernel/random/boot_id"));
        return f.open(QIODevice::ReadOnly) ? QString::fromLatin1(f.readAll().trimmed()) : QString();
    }();
    return id;
}

} // namespace spectrum
