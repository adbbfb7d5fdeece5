// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the workstation keeps its data and how much it may use. Environment variables override the defaults,
// so tests and several instances can run side by side without touching a user's cache.

#include <QString>

namespace spectrum {

struct WorkstationPaths
{
    /// Spectrum's configuration folder: ~/.config/Spectrum on Linux ($XDG_CONFIG_HOME/Spectrum): stores.json and
    /// Spectrum.conf (QSettings, with the organisation and application both "Spectrum").
    static QString configDirectory();
    /// Spectrum's data folder: ~/.local/share/Spectrum ($XDG_DATA_HOME/Spectrum): the cache, filter plugins.
    static QString dataDirectory();
    /// The FileStore root: $SPECTRUM_CACHE_DIR, else <dataDirectory>/cache (~/.local/share/Spectrum/cache).
    static QString cacheDirectory();
    /// Disk cache budget in bytes: $SPECTRUM_CACHE_BUDGET_MB, else 20 GiB.
    static qint64 diskBudgetBytes();
};

} // namespace spectrum
