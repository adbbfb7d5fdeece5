#pragma once
// Where the workstation keeps its data and how much it may use. Environment variables override the defaults,
// so tests and several instances can run side by side without touching a user's cache.

#include <QString>

namespace spectrum {

struct WorkstationPaths
{
    /// The FileStore root: $SPECTRUM_CACHE_DIR, else <AppLocalDataLocation>/cache
    /// (~/.local/share/Spectrum/cache on Linux).
    static QString cacheDirectory();
    /// Disk cache budget in bytes: $SPECTRUM_CACHE_BUDGET_MB, else 20 GiB.
    static qint64 diskBudgetBytes();
};

} // namespace spectrum
