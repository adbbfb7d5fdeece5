// SPDX-License-Identifier: Apache-2.0
#pragma once
// FilterRegistry: the filters a user can ask for by name — the built-in ones and those of plugins found at run
// time (QPluginLoader; MedJava's Service Configurator: new filters without rebuilding the application).
//
// Plugins are shared libraries whose root object implements FilterPlugin (filter.h). They are looked for in
// $SPECTRUM_FILTER_PATH (folders separated by ':'), then <folder of the executable>/filters (the build tree), then
// <folder of the executable>/../lib/spectrum/filters (installed), then <application data>/filters. A file that is not a usable plugin, or that brings a name already taken, is left
// out with a clear error; the others still load.

#include "spectrum/core/error.h"
#include "spectrum/core/result.h"
#include "spectrum/imaging/filters/bandprocessor.h"
#include "spectrum/imaging/filters/filter.h"

#include <QList>
#include <QStringList>

#include <memory>

namespace spectrum {

class FilterRegistry
{
public:
    /// The built-in filters only.
    FilterRegistry();
    ~FilterRegistry();

    /// The built-in filters and every plugin in the default folders (errors: `problems`, may be null).
    static FilterRegistry withPlugins(QList<Error> *problems = nullptr);
    static QStringList defaultPluginFolders();

    /// Loads the plugins of `folder` (files ending in .so); returns the problems, one per file left out.
    QList<Error> loadPlugins(const QString &folder);

    /// Every filter, sorted by name.
    QList<FilterInfo> filters() const;
    /// By its name or one of its aliases (median → despeckle).
    FilterFactoryPtr find(const QString &name) const;

    /// A configured filter from "name" or "name:key=value,key=value" (numbers, or one of a choice's names).
    /// Unknown names and parameters, values out of range: InvalidArgument naming the filter and the parameter.
    Result<std::shared_ptr<const Filter>> make(const QString &spec) const;
    Result<FilterChain> makeChain(const QStringList &specs) const;

    FilterRegistry(FilterRegistry &&) noexcept;
    FilterRegistry &operator=(FilterRegistry &&) noexcept;

private:
    struct Entry
    {
        FilterInfo info;
        FilterFactoryPtr factory;
    };
    const Entry *entryFor(const QString &nameOrAlias) const;
    QList<Entry> m_entries;
};

} // namespace spectrum
