#include "spectrum/core/settings.h"

#include <QCoreApplication>
#include <QStandardPaths>

namespace spectrum {

QString WorkstationPaths::cacheDirectory()
{
    const QString fromEnv = qEnvironmentVariable("SPECTRUM_CACHE_DIR");
    if (!fromEnv.isEmpty())
        return fromEnv;
    // Both the GUI and the CLI set the application name "Spectrum", so they share one cache.
    return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/cache");
}

qint64 WorkstationPaths::diskBudgetBytes()
{
    bool ok = false;
    const qint64 mb = qEnvironmentVariable("SPECTRUM_CACHE_BUDGET_MB").toLongLong(&ok);
    return ok && mb > 0 ? mb * 1024 * 1024 : qint64(20) * 1024 * 1024 * 1024;
}

} // namespace spectrum
