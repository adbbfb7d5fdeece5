// SPDX-License-Identifier: Apache-2.0
// spectrum-cli's image commands: render a frame, rewrite a file uncompressed, list the filters, filter a file or a
// blob as it streams in into a derived instance.

#include "blobtarget.h"
#include "commands.h"
#include "imagefile.h"
#include "output.h"
#include "pulledimage.h"

#include "spectrum/imaging/codecs/converter.h"
#include "spectrum/imaging/documents/derivedinstance.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/filters/filterregistry.h"
#include "spectrum/imaging/windowlevel.h"

#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFile>
#include <QSaveFile>
#include <QThread>
#include <QThreadPool>

#include <cstdio>

namespace spectrum::cli {

namespace {

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

int cmdConvert(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Rewrites a DICOM file as uncompressed explicit VR little endian, decoded by Spectrum's decoder."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("in"), QStringLiteral("A DICOM file in any transfer syntax Spectrum decodes."));
    p.addPositionalArgument(QStringLiteral("out"), QStringLiteral("Where to write the uncompressed file."));
    processArguments(p, args);
    if (p.positionalArguments().size() != 2)
        return fail(QStringLiteral("convert: IN OUT"), 2);
    QFile in(p.positionalArguments().at(0));
    if (!in.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("cannot read %1: %2").arg(in.fileName(), in.errorString()));
    Result<QByteArray> converted = convertToExplicitLittleEndian(ByteView(in.readAll()));
    if (!converted.isOk())
        return fail(QStringLiteral("%1: %2").arg(in.fileName(), converted.error().toString()));
    QSaveFile file(p.positionalArguments().at(1));
    if (!file.open(QIODevice::WriteOnly) || file.write(converted.value()) != converted.value().size() || !file.commit())
        return fail(QStringLiteral("cannot write %1: %2").arg(file.fileName(), file.errorString()));
    out(QStringLiteral("%1 → %2 (explicit VR little endian)").arg(in.fileName(), p.positionalArguments().at(1)));
    return 0;
}

int cmdRender(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Renders one frame of a DICOM file to an 8-bit image (PNG, PGM or PPM)."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("in"), QStringLiteral("DICOM file."));
    p.addPositionalArgument(QStringLiteral("out"), QStringLiteral("Image file: .png, .pgm (gray), .ppm (colour) or .pnm."));
    p.addOption({QStringLiteral("window"), QStringLiteral("Window as CENTER,WIDTH in modality units (default: the file's first preset, else min/max)."), QStringLiteral("C,W")});
    p.addOption({QStringLiteral("frame"), QStringLiteral("Frame number, from 0."), QStringLiteral("N"), QStringLiteral("0")});
    processArguments(p, args);
    if (p.positionalArguments().size() != 2)
        return fail(QStringLiteral("render: IN and OUT are required"), 2);
    Result<DecodedImage> image = decodeDicomFile(p.positionalArguments().at(0));
    if (!image.isOk())
        return fail(image.error().toString());
    const int frame = p.value(QStringLiteral("frame")).toInt();
    if (frame < 0 || frame >= image.value().info.frames)
        return fail(QStringLiteral("render: frame %1 out of 0…%2").arg(frame).arg(image.value().info.frames - 1), 2);
    VoiWindow window = defaultWindow(image.value(), frame);
    if (p.isSet(QStringLiteral("window"))) {
        const QStringList cw = p.value(QStringLiteral("window")).split(QLatin1Char(','));
        bool okC = false, okW = false;
        if (cw.size() == 2)
            window = VoiWindow{cw[0].toDouble(&okC), cw[1].toDouble(&okW)};
        if (!okC || !okW)
            return fail(QStringLiteral("render: --window takes CENTER,WIDTH"), 2);
    }
    if (Error e = writeImageFile(renderFrame(image.value(), frame, window), p.positionalArguments().at(1)); e.isError())
        return fail(e.toString(), e.code() == ErrorCode::InvalidArgument ? 2 : 1);
    const ImageInfo &info = image.value().info;
    out(QStringLiteral("%1×%2, %3 frame(s), %4, window %5/%6 → %7")
            .arg(info.columns).arg(info.rows).arg(info.frames).arg(info.photometricName)
            .arg(window.center).arg(window.width).arg(p.positionalArguments().at(1)));
    return 0;
}

int cmdFilters(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Lists the filters: built-in ones and those of the plugins found, with their parameters."));
    p.addHelpOption();
    p.addOption(pluginsOption);
    processArguments(p, args);
    const FilterRegistry registry = registryFor(p);
    for (const FilterInfo &f : registry.filters()) {
        const QString also = f.aliases.isEmpty() ? QString() : QStringLiteral(" (also: %1)").arg(f.aliases.join(QStringLiteral(", ")));
        out(QStringLiteral("%1  %2%3%4").arg(f.name, -10).arg(f.description, also,
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
    p.addPositionalArgument(QStringLiteral("in"), QStringLiteral("A DICOM file, or blob://HOST:PORT/KEY (filtered while it streams in)."));
    p.addPositionalArgument(QStringLiteral("out"), QStringLiteral("The derived instance to write."));
    p.addOption({QStringLiteral("filter"), QStringLiteral("NAME[:param=value,...] (repeatable, applied in order; see `spectrum-cli filters`)."), QStringLiteral("SPEC")});
    p.addOption({QStringLiteral("threads"), QStringLiteral("Threads to filter on (default: all cores)."), QStringLiteral("N")});
    p.addOption(pluginsOption);
    addTransferOptions(p);
    processArguments(p, args);
    if (p.positionalArguments().size() != 2)
        return fail(QStringLiteral("filter: IN OUT --filter NAME[:param=value,...]"), 2);
    if (!p.isSet(QStringLiteral("filter")))
        return fail(QStringLiteral("filter: at least one --filter is needed (spectrum-cli filters lists them)"), 2);
    const FilterRegistry registry = registryFor(p);
    Result<FilterChain> chain = registry.makeChain(p.values(QStringLiteral("filter")));
    if (!chain.isOk())
        return fail(QStringLiteral("filter: %1").arg(chain.error().message()), 2);

    const QString inPath = p.positionalArguments().at(0), outPath = p.positionalArguments().at(1);
    QThreadPool pool;
    pool.setMaxThreadCount(p.isSet(QStringLiteral("threads")) ? std::max(1, p.value(QStringLiteral("threads")).toInt()) : QThread::idealThreadCount());
    ByteView original;
    Result<PixelBuffer> filtered = Error(ErrorCode::Internal, QString());
    QElapsedTimer clock;
    clock.start();
    QString timing;
    if (inPath.startsWith(QLatin1String("blob://")) || inPath.startsWith(QLatin1String("blobs://"))) {
        // Decoded and filtered while it streams in.
        Result<BlobTarget> t = target(p, inPath);
        if (!t.isOk())
            return fail(t.error().toString(), 2);
        Result<PulledImage> pulled = pullFiltered(t.value(), chain.value(), &pool, true);
        if (!pulled.isOk())
            return fail(QStringLiteral("%1: %2").arg(inPath, pulled.error().toString()));
        original = pulled.value().original;
        filtered = pulled.value().image.pixels;
        timing = QStringLiteral("transfer %1 ms, filtered image %2 ms after the start (first rows at %3 ms)")
                     .arg(pulled.value().transferSeconds * 1e3, 0, 'f', 1).arg(pulled.value().totalSeconds * 1e3, 0, 'f', 1)
                     .arg(pulled.value().firstRowsSeconds * 1e3, 0, 'f', 1);
    } else {
        QFile in(inPath);
        if (!in.open(QIODevice::ReadOnly))
            return fail(QStringLiteral("cannot read %1: %2").arg(inPath, in.errorString()));
        original = ByteView(in.readAll());
        Result<DecodedImage> image = decodeDicom(original);
        if (!image.isOk())
            return fail(QStringLiteral("%1: %2").arg(inPath, image.error().toString()));
        clock.restart();
        filtered = applyFilters(chain.value(), image.value().pixels, image.value().info, &pool);
        timing = QStringLiteral("%1 ms").arg(clock.nsecsElapsed() / 1e6, 0, 'f', 1);
    }
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
    out(QStringLiteral("%1 → %2: %3 (%4×%5, %6 frame(s), %7 on %8 thread(s)); SOP Instance UID %9")
            .arg(inPath, outPath, derivation.description)
            .arg(filtered.value().width()).arg(filtered.value().height()).arg(filtered.value().frames())
            .arg(timing).arg(pool.maxThreadCount()).arg(derived.value().identity.sopInstanceUid));
    return 0;
}

} // namespace

QList<Command> imageCommands()
{
    return {
        {"render", "IN OUT", "render a DICOM frame to PNG/PGM/PPM with a window", cmdRender},
        {"convert", "IN OUT", "rewrite as uncompressed explicit VR little endian (our decoder)", cmdConvert},
        {"filters", "", "the filters (built-in and plugins), their other names and parameters", cmdFilters, false},
        {"filter", "IN OUT --filter NAME[:p=v,...]...", "filter a DICOM file or blob into a derived instance", cmdFilter},
    };
}

} // namespace spectrum::cli
