#include "imagingcommands.h"

#include "spectrum/imaging/bandprocessor.h"
#include "spectrum/imaging/derivedinstance.h"
#include "spectrum/imaging/dicomdecoder.h"
#include "spectrum/imaging/filterregistry.h"

#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFile>
#include <QSaveFile>
#include <QThreadPool>

#include <cstdio>

namespace spectrum::cli {

namespace {

int fail(const QString &message, int code = 1)
{
    std::fprintf(stderr, "spectrum-cli: %s\n", qPrintable(message));
    return code;
}

void out(const QString &line)
{
    std::printf("%s\n", qPrintable(line));
    std::fflush(stdout);
}

/// The registry with the default plugin folders and those given with --plugins; problems go to stderr.
FilterRegistry registryFor(const QCommandLineParser &p)
{
    QList<Error> problems;
    FilterRegistry r = FilterRegistry::withPlugins(&problems);
    for (const QString &folder : p.values(QStringLiteral("plugins")))
        problems << r.loadPlugins(folder);
    for (const Error &e : problems)
        std::fprintf(stderr, "spectrum-cli: plugin left out: %s\n", qPrintable(e.message()));
    return r;
}

const QCommandLineOption pluginsOption{QStringLiteral("plugins"), QStringLiteral("Another folder of filter plugins (repeatable)."), QStringLiteral("DIR")};

} // namespace

int cmdFilters(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Lists the filters: built-in ones and those of the plugins found, with their parameters."));
    p.addHelpOption();
    p.addOption(pluginsOption);
    p.process(args);
    const FilterRegistry registry = registryFor(p);
    for (const FilterInfo &f : registry.filters()) {
        out(QStringLiteral("%1  %2%3").arg(f.name, -10).arg(f.description,
                                                             f.origin == QLatin1String("built-in") ? QString() : QStringLiteral("  [") + f.origin + QLatin1Char(']')));
        for (const FilterParameter &param : f.parameters) {
            const QString range = param.choices.isEmpty()
                ? QStringLiteral("%1 to %2%3").arg(QString::number(param.minimum, 'g', 12), QString::number(param.maximum, 'g', 12)).arg(param.integer ? QStringLiteral(", whole") : QString())
                : param.choices.join(QLatin1Char('|'));
            out(QStringLiteral("            %1=%2  (%3; default %4)").arg(param.name, param.choices.isEmpty() ? QStringLiteral("N") : QStringLiteral("NAME"),
                                                                       param.description + QStringLiteral(": ") + range, param.defaultValue.toString()));
        }
    }
    return 0;
}

int cmdFilter(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Applies filters to a DICOM file and writes the result as a derived instance "
                                               "(same patient and study, new series, DERIVED\\SECONDARY, the filters in its Derivation Description)."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("in"), QStringLiteral("A DICOM file."));
    p.addPositionalArgument(QStringLiteral("out"), QStringLiteral("The derived instance to write."));
    p.addOption({QStringLiteral("filter"), QStringLiteral("NAME[:param=value,...] (repeatable, applied in order; see `spectrum-cli filters`)."), QStringLiteral("SPEC")});
    p.addOption({QStringLiteral("threads"), QStringLiteral("Threads to filter on (default: all cores)."), QStringLiteral("N")});
    p.addOption(pluginsOption);
    p.process(args);
    if (p.positionalArguments().size() != 2)
        return fail(QStringLiteral("filter: IN OUT --filter NAME[:param=value,...]"), 2);
    if (!p.isSet(QStringLiteral("filter")))
        return fail(QStringLiteral("filter: at least one --filter is needed (spectrum-cli filters lists them)"), 2);
    const FilterRegistry registry = registryFor(p);
    Result<FilterChain> chain = registry.makeChain(p.values(QStringLiteral("filter")));
    if (!chain.isOk())
        return fail(QStringLiteral("filter: %1").arg(chain.error().message()), 2);

    const QString inPath = p.positionalArguments().at(0), outPath = p.positionalArguments().at(1);
    QFile in(inPath);
    if (!in.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("cannot read %1: %2").arg(inPath, in.errorString()));
    const ByteView original(in.readAll());
    Result<DecodedImage> image = decodeDicom(original);
    if (!image.isOk())
        return fail(QStringLiteral("%1: %2").arg(inPath, image.error().toString()));

    QThreadPool pool;
    pool.setMaxThreadCount(p.isSet(QStringLiteral("threads")) ? std::max(1, p.value(QStringLiteral("threads")).toInt()) : QThread::idealThreadCount());
    QElapsedTimer clock;
    clock.start();
    Result<PixelBuffer> filtered = applyFilters(chain.value(), image.value().pixels, image.value().info, &pool);
    const double ms = clock.nsecsElapsed() / 1e6;
    if (!filtered.isOk())
        return fail(QStringLiteral("%1: %2").arg(inPath, filtered.error().toString()));

    Derivation derivation;
    derivation.description = chain.value().description();
    Result<DerivedInstance> derived = makeDerivedInstance(original, filtered.value(), derivation);
    if (!derived.isOk())
        return fail(QStringLiteral("%1: %2").arg(inPath, derived.error().toString()));
    QSaveFile file(outPath);
    if (!file.open(QIODevice::WriteOnly) || file.write(derived.value().bytes) != derived.value().bytes.size() || !file.commit())
        return fail(QStringLiteral("cannot write %1: %2").arg(outPath, file.errorString()));
    out(QStringLiteral("%1 → %2: %3 (%4×%5, %6 frame(s), %7 ms on %8 thread(s)); SOP Instance UID %9")
            .arg(inPath, outPath, derivation.description)
            .arg(filtered.value().width()).arg(filtered.value().height()).arg(filtered.value().frames())
            .arg(ms, 0, 'f', 1).arg(pool.maxThreadCount()).arg(derived.value().identity.sopInstanceUid));
    return 0;
}

} // namespace spectrum::cli
