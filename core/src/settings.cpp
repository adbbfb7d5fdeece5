// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/settings.h"

#include <QCoreApplication>
#include <QStandardPaths>

namespace spectrum {

// Named here, not by the application and organisation names (which decide QSettings' file): every program of
// Spectrum finds the same folders whatever names it sets.
QString WorkstationPaths::configDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation) + QStringLiteral("/Spectrum");
}

QString WorkstationPaths::dataDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + QStringLiteral("/Spectrum");
}

QString WorkstationPaths::cacheDirectory()
{
    const QString fromEnv = qEnvironmentVariable("SPECTRUM_CACHE_DIR");
    if (!fromEnv.isEmpty())
        return fromEnv;
    return dataDirectory() + QStringLiteral("/cache");
}

qint64 WorkstationPaths::diskBudgetBytes()
{
    bool ok = false;
    const qint64 mb = qEnvironmentVariable("SPECTRUM_CACHE_BUDGET_MB").toLongLong(&ok);
    return ok && mb > 0 ? mb * 1024 * 1024 : qint64(20) * 1024 * 1024 * 1024;
}

} // namespace spectrum
