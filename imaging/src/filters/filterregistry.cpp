// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/filters/filterregistry.h"

#include "spectrum/core/settings.h"

#include "filters/builtinfilters.h"

#include <QCoreApplication>
#include <QDir>
#include <QMutex>
#include <QPluginLoader>
#include <QStandardPaths>

#include <algorithm>
#include <cmath>

namespace spectrum {

namespace {

/// Loaded plugins stay loaded for the life of the process: filters made by them may outlive any registry.
QList<QPluginLoader *> &loadedPlugins()
{
    static auto *loaders = new QList<QPluginLoader *>;  // never destroyed: the plugins' code stays in use until exit
    return *loaders;
}
QMutex loaderMutex;

QString parameterList(const FilterInfo &info)
{
    QStringList names;
    for (const FilterParameter &p : info.parameters)
        names << p.name;
    return names.isEmpty() ? QStringLiteral("it takes none") : QStringLiteral("it takes ") + names.join(QStringLiteral(", "));
}

} // namespace

FilterRegistry::FilterRegistry()
{
    for (const FilterFactoryPtr &f : filters::builtinFilters())
        m_entries.append(Entry{f->info(), f});
}

FilterRegistry::~FilterRegistry() = default;
FilterRegistry::FilterRegistry(FilterRegistry &&) noexcept = default;
FilterRegistry &FilterRegistry::operator=(FilterRegistry &&) noexcept = default;

QStringList FilterRegistry::defaultPluginFolders()
{
    QStringList folders;
    for (const QString &p : qEnvironmentVariable("SPECTRUM_FILTER_PATH").split(QLatin1Char(':'), Qt::SkipEmptyParts))
        folders << p;
    if (QCoreApplication::instance()) {
        folders << QCoreApplication::applicationDirPath() + QStringLiteral("/filters");  // in the build tree
        folders << QDir::cleanPath(QCoreApplication::applicationDirPath() + QStringLiteral("/../" SPECTRUM_INSTALL_PLUGINDIR));  // installed
    }
    folders << WorkstationPaths::dataDirectory() + QStringLiteral("/filters");
    return folders;
}

FilterRegistry FilterRegistry::withPlugins(QList<Error> *problems)
{
    FilterRegistry r;
    for (const QString &folder : defaultPluginFolders()) {
        const QList<Error> errors = r.loadPlugins(folder);
        if (problems)
            *problems << errors;
    }
    return r;
}

QList<Error> FilterRegistry::loadPlugins(const QString &folder)
{
    QList<Error> problems;
    const QDir dir(folder);
    if (!dir.exists())
        return problems;
    for (const QString &name : dir.entryList({QStringLiteral("*.so")}, QDir::Files, QDir::Name)) {
        const QString path = dir.absoluteFilePath(name);
        auto *loader = new QPluginLoader(path);
        QObject *root = loader->instance();
        auto *plugin = root ? qobject_cast<FilterPlugin *>(root) : nullptr;
        if (!plugin) {
            problems << Error(ErrorCode::InvalidArgument, root ? QStringLiteral("%1 is a Qt plugin but not a Spectrum filter plugin (%2)").arg(path, QStringLiteral(SPECTRUM_FILTER_PLUGIN_IID))
                                                                : QStringLiteral("%1 is not a filter plugin: %2").arg(path, loader->errorString()));
            if (!root)
                delete loader;  // nothing of it is in use
            continue;
        }
        {
            QMutexLocker lock(&loaderMutex);
            if (!loadedPlugins().contains(loader))
                loadedPlugins() << loader;
        }
        for (const FilterFactoryPtr &f : plugin->filters()) {
            if (!f)
                continue;
            FilterInfo info = f->info();
            info.origin = path;
            const QStringList wanted = QStringList{info.name} + info.aliases;
            const auto unusable = std::find_if(wanted.begin(), wanted.end(), [](const QString &n) {
                return n.isEmpty() || n.contains(QLatin1Char(':')) || n.contains(QLatin1Char(' ')) || n != n.toLower();
            });
            if (unusable != wanted.end()) {
                problems << Error(ErrorCode::InvalidArgument, QStringLiteral("%1: a filter named '%2' cannot be asked for by name").arg(path, *unusable));
                continue;
            }
            const auto taken = std::find_if(wanted.begin(), wanted.end(), [this](const QString &n) { return entryFor(n) != nullptr; });
            if (taken != wanted.end()) {
                problems << Error(ErrorCode::InvalidArgument, QStringLiteral("%1: filter '%2' is already there (%3, %4); this one is left out")
                                                                  .arg(path, *taken, entryFor(*taken)->info.name, entryFor(*taken)->info.origin));
                continue;
            }
            m_entries.append(Entry{info, f});
        }
    }
    return problems;
}

QList<FilterInfo> FilterRegistry::filters() const
{
    QList<FilterInfo> out;
    for (const Entry &e : m_entries)
        out << e.info;
    std::sort(out.begin(), out.end(), [](const FilterInfo &a, const FilterInfo &b) { return a.name < b.name; });
    return out;
}

const FilterRegistry::Entry *FilterRegistry::entryFor(const QString &name) const
{
    for (const Entry &e : m_entries) {
        if (e.info.name == name || e.info.aliases.contains(name))
            return &e;
    }
    return nullptr;
}

FilterFactoryPtr FilterRegistry::find(const QString &name) const
{
    const Entry *e = entryFor(name.trimmed().toLower());  // as make() reads a name
    return e ? e->factory : nullptr;
}

Result<std::shared_ptr<const Filter>> FilterRegistry::make(const QString &spec) const
{
    const QString asked = spec.section(QLatin1Char(':'), 0, 0).trimmed().toLower();
    const QString args = spec.section(QLatin1Char(':'), 1);
    const Entry *entry = entryFor(asked);
    if (!entry) {
        QStringList names;
        for (const FilterInfo &i : filters())
            names << i.name;
        return Error(ErrorCode::InvalidArgument, QStringLiteral("no filter '%1' (there are: %2)").arg(asked, names.join(QStringLiteral(", "))));
    }
    const FilterInfo &info = entry->info;
    const QString &name = info.name;  // what errors and the Derivation Description say: median is recorded as despeckle
    QVariantMap values;
    for (const FilterParameter &p : info.parameters)
        values.insert(p.name, p.defaultValue);
    for (const QString &pair : args.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString key = pair.section(QLatin1Char('='), 0, 0).trimmed();
        const QString text = pair.section(QLatin1Char('='), 1).trimmed();
        const auto p = std::find_if(info.parameters.begin(), info.parameters.end(), [&](const FilterParameter &fp) { return fp.name == key; });
        if (p == info.parameters.end())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: no parameter '%2' (%3)").arg(name, key, parameterList(info)));
        if (!pair.contains(QLatin1Char('=')) || text.isEmpty())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: parameter '%2' needs a value (%2=…)").arg(name, key));
        if (!p->choices.isEmpty()) {
            if (!p->choices.contains(text))
                return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: %2 must be one of %3, not '%4'").arg(name, key, p->choices.join(QStringLiteral(", ")), text));
            values.insert(key, text);
            continue;
        }
        bool ok = false;
        const double v = text.toDouble(&ok);
        if (!ok || !std::isfinite(v))
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: %2 must be a number, not '%3'").arg(name, key, text));
        if (v < p->minimum || v > p->maximum)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: %2 must be between %3 and %4, not %5").arg(name, key).arg(p->minimum).arg(p->maximum).arg(text));
        if (p->integer && v != std::floor(v))
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: %2 must be a whole number, not %3").arg(name, key, text));
        values.insert(key, v);
    }
    std::unique_ptr<Filter> made = entry->factory->create(values);
    if (!made)
        return Error(ErrorCode::Internal, QStringLiteral("%1 (%2) made no filter").arg(name, info.origin));
    return std::shared_ptr<const Filter>(std::move(made));
}

Result<FilterChain> FilterRegistry::makeChain(const QStringList &specs) const
{
    FilterChain chain;
    for (const QString &spec : specs) {
        Result<std::shared_ptr<const Filter>> f = make(spec);
        if (!f.isOk())
            return f.error();
        chain.filters.push_back(f.value());
    }
    return chain;
}

} // namespace spectrum
