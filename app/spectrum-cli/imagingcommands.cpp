#include "imagingcommands.h"

#include "blobtarget.h"
#include "output.h"

#include "spectrum/imaging/bandprocessor.h"
#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/streamingdecoder.h"
#include "spectrum/imaging/derivedinstance.h"
#include "spectrum/imaging/dicomdecoder.h"
#include "spectrum/imaging/filterregistry.h"
#include "spectrum/imaging/pixelbuffer.h"
#include "spectrum/imaging/progressiveimage.h"
#include "spectrum/transfer/buffersink.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QSaveFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThreadPool>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

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

/// An instance pulled from a blob server and decoded and filtered by a ProgressiveImage: while it arrives
/// (`overlap`), or once it is all in (fetch, then filter).
struct PulledImage
{
    DecodedImage image;
    ByteView original;         ///< the instance's bytes
    double transferSeconds = 0;
    double totalSeconds = 0;   ///< to the filtered image
    double firstRowsSeconds = -1;
};

Result<PulledImage> pullFiltered(BlobTarget &t, const FilterChain &chain, QThreadPool *pool, bool overlap)
{
    std::unique_ptr<BufferSink> sink;
    auto factory = [&sink](const RemoteBlobInfo &, qint64 begin, qint64 end) -> Result<ByteSink *> {
        sink = std::make_unique<BufferSink>(end - begin);
        if (!sink->isValid())
            return Error(ErrorCode::DiskFull, QStringLiteral("cannot hold %1 bytes in memory").arg(end - begin));
        return sink.get();
    };
    ProgressiveImage progressive(chain, pool);
    QElapsedTimer clock;
    clock.start();
    auto *job = t.client->pull(t.key, factory);
    if (overlap) {
        QObject::connect(job, &Job::dataAvailable, job, [&progressive, &sink](qint64, qint64 end) { progressive.bytesAvailable(sink->data(), end); });
    }
    Result<PullResult> pulled = runSync(job);
    if (!pulled.isOk())
        return pulled.error();
    PulledImage result;
    result.transferSeconds = clock.nsecsElapsed() / 1e9;
    if (!overlap)
        progressive.bytesAvailable(sink->data(), sink->size());
    Result<DecodedImage> image = progressive.finish();
    if (!image.isOk())
        return image.error();
    result.totalSeconds = clock.nsecsElapsed() / 1e9;
    result.firstRowsSeconds = overlap ? progressive.firstRowsSeconds() : -1;
    result.image = image.takeValue();
    result.original = sink->view();
    return result;
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

namespace {

/// A 12-bit CT-like test image: an ellipse of soft tissue with a bright rim and an insert, plus noise.
QByteArray benchImage(int n)
{
    QByteArray bytes(qsizetype(n) * n * 2, Qt::Uninitialized);
    auto *p = reinterpret_cast<quint16 *>(bytes.data());
    QRandomGenerator g(n);
    for (int y = 0; y < n; ++y) {
        for (int x = 0; x < n; ++x) {
            const double u = (x - n / 2.0) / (0.40 * n), v = (y - n / 2.0) / (0.46 * n);
            const double r = u * u + v * v, insert = std::pow((x - 0.45 * n) / (0.08 * n), 2) + std::pow((y - 0.35 * n) / (0.1 * n), 2);
            const int base = r > 1 ? 24 : r > 0.9 ? 2600 : insert < 1 ? 1300 : 1064;
            p[qsizetype(y) * n + x] = quint16(std::clamp(base + int(g.bounded(61)) - 30, 0, 4095));
        }
    }
    return bytes;
}

/// Best wall time of `reps` runs of `chain` over the image (one 16-bit channel), in and out held as the product holds
/// pixels (PixelBuffer), output memory allocated once (as OpenCV's is).
double timeChain(const FilterChain &chain, const PlaneFormat &in, const QByteArray &image, QThreadPool *pool, int reps)
{
    const PlaneFormat of = chain.outputFormat(in);
    PixelBuffer input(PixelFormat::Gray16, in.width, in.height, 1), output(PixelFormat::Gray16, of.width, of.height, 1);
    std::memcpy(input.frameData(0), image.constData(), size_t(std::min<qsizetype>(image.size(), input.frameBytes())));
    const char *src = reinterpret_cast<const char *>(std::as_const(input).frameData(0));
    char *dst = reinterpret_cast<char *>(output.frameData(0));
    const qsizetype inRow = in.rowBytes(), outRow = of.rowBytes();
    double best = 1e9;
    for (int r = 0; r < reps; ++r) {
        QElapsedTimer t;
        t.start();
        BandProcessor bp(chain, in, src, inRow, pool, dst, outRow);
        bp.inputArrived(in.height);
        best = std::min(best, t.nsecsElapsed() / 1e9);
    }
    return best;
}

QString findTool(const QStringList &names)
{
    for (const QString &n : names) {
        const QString beside = QCoreApplication::applicationDirPath() + QLatin1Char('/') + n;
        if (QFileInfo(beside).isExecutable())
            return beside;
        const QString found = QStandardPaths::findExecutable(n);
        if (!found.isEmpty())
            return found;
    }
    return {};
}

/// Seconds of one run of `program args`, or −1 when it failed.
double timeProcess(const QString &program, const QStringList &args)
{
    QProcess p;
    QElapsedTimer t;
    t.start();
    p.start(program, args);
    if (!p.waitForFinished(600000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return -1;
    return t.nsecsElapsed() / 1e9;
}

QString rate(double pixels, double seconds) { return seconds > 0 ? QString::number(pixels / seconds / 1e6, 'f', 1) : QStringLiteral("–"); }
QString ratio(double ours, double theirs) { return ours > 0 && theirs > 0 ? QString::number(theirs / ours, 'f', 2) + QStringLiteral("×") : QStringLiteral("–"); }

int benchFilters(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Times every filter on 16-bit (12 bits stored) images and, in the same run, OpenCV's and "
                                               "ImageMagick's closest operations on the same image; prints megapixels per second and ratios."));
    p.addHelpOption();
    p.addOption({QStringLiteral("sizes"), QStringLiteral("Square image sides (default 512,2048,4096)."), QStringLiteral("N,N…"), QStringLiteral("512,2048,4096")});
    p.addOption({QStringLiteral("repeats"), QStringLiteral("Runs per measurement, best kept (default 5; ImageMagick 3)."), QStringLiteral("N"), QStringLiteral("5")});
    p.addOption({QStringLiteral("no-imagemagick"), QStringLiteral("Skip ImageMagick (slow on large images).")});
    p.addOption({QStringLiteral("only"), QStringLiteral("Only the filters whose name starts with this (repeatable)."), QStringLiteral("NAME")});
    p.addOption({QStringLiteral("rounds"), QStringLiteral("Rounds of ours and the peers in turn, best kept (default 3)."), QStringLiteral("N"), QStringLiteral("3")});
    p.process(args);
    const int reps = std::max(1, p.value(QStringLiteral("repeats")).toInt());
    const int rounds = std::max(1, p.value(QStringLiteral("rounds")).toInt());
    const FilterRegistry registry;
    struct Row
    {
        QString spec, opencv;
        QStringList magick;
    };
    const QList<Row> rows{
        {QStringLiteral("blur"), QStringLiteral("blur"), {QStringLiteral("-blur"), QStringLiteral("1x1")}},
        {QStringLiteral("despeckle"), QStringLiteral("despeckle"), {QStringLiteral("-despeckle")}},
        {QStringLiteral("edge"), QStringLiteral("edge"), {QStringLiteral("-edge"), QStringLiteral("1")}},
        {QStringLiteral("sharpen:p=0.5"), QStringLiteral("sharpen"), {QStringLiteral("-sharpen"), QStringLiteral("0x1")}},
        {QStringLiteral("emboss"), QStringLiteral("emboss"), {QStringLiteral("-emboss"), QStringLiteral("1")}},
        {QStringLiteral("gaussian:sigma=1"), QStringLiteral("gaussian"), {QStringLiteral("-gaussian-blur"), QStringLiteral("0x1")}},
        {QStringLiteral("unsharp:amount=1,radius=2"), QStringLiteral("unsharp"), {QStringLiteral("-unsharp"), QStringLiteral("0x2+1+0")}},
        {QStringLiteral("oilpaint"), QString(), {QStringLiteral("-paint"), QStringLiteral("1")}},
        {QStringLiteral("pixelize:size=4"), QString(), {}},
        {QStringLiteral("spread:radius=1"), QString(), {QStringLiteral("-spread"), QStringLiteral("1")}},
        {QStringLiteral("invert"), QStringLiteral("invert"), {QStringLiteral("-negate")}},
        {QStringLiteral("flip"), QStringLiteral("flip"), {QStringLiteral("-flop")}},
        {QStringLiteral("rotate:angle=90"), QStringLiteral("rotate"), {QStringLiteral("-rotate"), QStringLiteral("90")}},
        {QStringLiteral("zoom:factor=2,method=bilinear"), QStringLiteral("zoom-bilinear"), {QStringLiteral("-scale"), QStringLiteral("200%")}},
        {QStringLiteral("zoom:factor=2,method=bicubic"), QStringLiteral("zoom-bicubic"), {QStringLiteral("-filter"), QStringLiteral("Catrom"), QStringLiteral("-resize"), QStringLiteral("200%")}},
    };
    const QString opencv = findTool({QStringLiteral("spectrum-opencv-peer")});
    const QString magick = p.isSet(QStringLiteral("no-imagemagick")) ? QString() : findTool({QStringLiteral("convert-im6.q16"), QStringLiteral("magick")});
    if (opencv.isEmpty())
        out(QStringLiteral("(OpenCV peer not found: tests/bench/filters.sh installs libopencv-dev and builds spectrum-opencv-peer)"));
    if (magick.isEmpty() && !p.isSet(QStringLiteral("no-imagemagick")))
        out(QStringLiteral("(ImageMagick not found: tests/bench/filters.sh installs it)"));
    QThreadPool single, all;
    single.setMaxThreadCount(1);
    all.setMaxThreadCount(QThread::idealThreadCount());
    QTemporaryDir tmp;
    double worstCv = 1e9, worstIm = 1e9;
    QString worstCvName, worstImName;
    for (const QString &side : p.value(QStringLiteral("sizes")).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const int n = side.toInt();
        if (n < 16 || n > 16384)
            return fail(QStringLiteral("bench: image sides from 16 to 16384, not %1").arg(side), 2);
        const QByteArray image = benchImage(n);
        const double pixels = double(n) * n;
        PlaneFormat in;
        in.type = SampleType::U16;
        in.width = in.height = n;
        in.minValue = 0;
        in.maxValue = 4095;
        // The same pixels for the peers: raw for OpenCV, a 16-bit PGM (big endian) for ImageMagick.
        const QString raw = tmp.filePath(QStringLiteral("image.raw")), pgm = tmp.filePath(QStringLiteral("image.pgm"));
        QFile rf(raw), pf(pgm);
        if (!rf.open(QIODevice::WriteOnly) || rf.write(image) != image.size() || !pf.open(QIODevice::WriteOnly))
            return fail(QStringLiteral("bench: cannot write into %1").arg(tmp.path()));
        rf.close();
        QByteArray big = image;
        for (qsizetype i = 0; i + 1 < big.size(); i += 2)
            std::swap(big[i], big[i + 1]);
        pf.write(QByteArrayLiteral("P5\n") + QByteArray::number(n) + ' ' + QByteArray::number(n) + QByteArrayLiteral("\n4095\n") + big);
        pf.close();
        // OpenCV's best of `reps` for one operation, or −1.
        auto timeOpenCv = [&](const QString &op) {
            if (opencv.isEmpty() || op.isEmpty())
                return -1.0;
            QProcess peer;
            peer.start(opencv, {raw, side, side, QString::number(reps), QStringLiteral("1"), op});
            peer.waitForFinished(600000);
            for (const QByteArray &line : peer.readAllStandardOutput().split('\n')) {
                const QList<QByteArray> f = line.split(' ');
                if (f.size() == 2 && QString::fromLatin1(f[0]) == op)
                    return f[1].toDouble();
            }
            return -1.0;
        };
        const int magickReps = std::min(reps, n >= 4096 ? 1 : 3);
        out(QString());
        out(QStringLiteral("%1×%1, 16-bit (12 stored); megapixels per second, best of %2 × %3 rounds").arg(n).arg(reps).arg(rounds));
        out(QStringLiteral("%1 %2 %3 %4 %5 %6 %7").arg(QStringLiteral("filter"), -32).arg(QStringLiteral("ours 1 thr"), 11).arg(QStringLiteral("ours %1 thr").arg(all.maxThreadCount()), 11)
                .arg(QStringLiteral("OpenCV 1"), 10).arg(QStringLiteral("vs OpenCV"), 10).arg(QStringLiteral("ImageMagick"), 12).arg(QStringLiteral("vs IM"), 10));
        for (const Row &row : rows) {
            const QStringList only = p.values(QStringLiteral("only"));
            if (!only.isEmpty() && std::none_of(only.begin(), only.end(), [&](const QString &o) { return row.spec.startsWith(o); }))
                continue;
            Result<FilterChain> chain = registry.makeChain({row.spec});
            if (!chain.isOk())
                return fail(chain.error().toString());
            // Ours and OpenCV's in turn, `rounds` times, the best of each kept: both see the same quiet and busy
            // moments of a shared machine, rather than one of them a busier minute than the other.
            double one = 1e9, many = 1e9, theirs = -1;
            for (int round = 0; round < rounds; ++round) {
                const double cvTime = timeOpenCv(row.opencv);
                if (cvTime > 0)
                    theirs = theirs < 0 ? cvTime : std::min(theirs, cvTime);
                one = std::min(one, timeChain(chain.value(), in, image, &single, reps));
                many = std::min(many, timeChain(chain.value(), in, image, &all, reps));
            }
            double im = -1;
            if (!magick.isEmpty() && !row.magick.isEmpty()) {
                // The operation once and k times in one command, each time on a copy of the image that is dropped
                // after (so that a zoom does not grow it): the difference is k − 1 operations, without the start,
                // the reading of the file and the writing. k grows (3, 12, 48 … 768) until the difference lasts
                // 0.3 s, well above the noise of starting a process.
                const QStringList once = QStringList{QStringLiteral("("), QStringLiteral("+clone")} + row.magick
                    + QStringList{QStringLiteral(")"), QStringLiteral("+delete")};
                auto command = [&](int k) {
                    QStringList a{pgm};
                    for (int i = 0; i < k; ++i)
                        a += once;
                    return a + QStringList{QStringLiteral("null:")};
                };
                for (int r = 0; r < magickReps; ++r) {
                    const double t1 = timeProcess(magick, command(1));
                    int k = 3;
                    double tk = timeProcess(magick, command(k));
                    while (t1 > 0 && tk - t1 < 0.3 && k < 768) {
                        k *= 4;
                        tk = timeProcess(magick, command(k));
                    }
                    if (t1 > 0 && tk > t1)
                        im = im < 0 ? (tk - t1) / (k - 1) : std::min(im, (tk - t1) / (k - 1));
                }
            }
            if (theirs > 0 && theirs / one < worstCv) {
                worstCv = theirs / one;
                worstCvName = QStringLiteral("%1 at %2 px").arg(row.spec).arg(n);
            }
            if (im > 0 && im / std::min(one, many) < worstIm) {
                worstIm = im / std::min(one, many);
                worstImName = QStringLiteral("%1 at %2 px").arg(row.spec).arg(n);
            }
            out(QStringLiteral("%1 %2 %3 %4 %5 %6 %7").arg(row.spec, -32).arg(rate(pixels, one), 11).arg(rate(pixels, many), 11)
                    .arg(rate(pixels, theirs), 10).arg(ratio(one, theirs), 10).arg(rate(pixels, im), 12).arg(ratio(std::min(one, many), im), 10));
        }
    }
    out(QString());
    if (worstCvName.size())
        out(QStringLiteral("slowest against OpenCV (both single-threaded): %1× (%2); goal ≥ 1.0×").arg(worstCv, 0, 'f', 2).arg(worstCvName));
    if (worstImName.size())
        out(QStringLiteral("slowest against ImageMagick (ours at its best): %1× (%2); goal ≥ 10×").arg(worstIm, 0, 'f', 1).arg(worstImName));
    return 0;
}

int benchIlp(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Fetches an image from a blob server through a filter chain, filtering while it arrives and, in "
                                               "the same run, fetching first and filtering after; prints the times and the overlap's ratio to "
                                               "max(transfer, filtering). tests/bench/ilp.sh sets up a throttled link."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("url"), QStringLiteral("blob://HOST:PORT/KEY of a DICOM instance."));
    p.addOption({QStringLiteral("filter"), QStringLiteral("The chain (default: gaussian:sigma=2, unsharp, despeckle)."), QStringLiteral("SPEC")});
    p.addOption({QStringLiteral("repeats"), QStringLiteral("Runs of each, best kept (default 3)."), QStringLiteral("N"), QStringLiteral("3")});
    p.addOption({QStringLiteral("threads"), QStringLiteral("Threads to filter on (default 1, so that filtering takes its time)."), QStringLiteral("N"), QStringLiteral("1")});
    addTransferOptions(p);
    p.process(args);
    if (p.positionalArguments().size() != 1)
        return fail(QStringLiteral("bench ilp: URL"), 2);
    Result<BlobTarget> t = target(p, p.positionalArguments().at(0));
    if (!t.isOk())
        return fail(t.error().toString(), 2);
    const QStringList specs = p.isSet(QStringLiteral("filter")) ? p.values(QStringLiteral("filter"))
        : QStringList{QStringLiteral("gaussian:sigma=2"), QStringLiteral("unsharp"), QStringLiteral("despeckle")};
    Result<FilterChain> chain = FilterRegistry().makeChain(specs);
    if (!chain.isOk())
        return fail(chain.error().message(), 2);
    QThreadPool pool;
    pool.setMaxThreadCount(std::max(1, p.value(QStringLiteral("threads")).toInt()));
    const int reps = std::max(1, p.value(QStringLiteral("repeats")).toInt());
    double transfer = 1e9, filtering = 1e9, sequential = 1e9, overlapped = 1e9, firstRows = 1e9;
    QByteArray reference;
    for (int r = 0; r < reps; ++r) {
        Result<PulledImage> after = pullFiltered(t.value(), chain.value(), &pool, false);
        if (!after.isOk())
            return fail(after.error().toString());
        transfer = std::min(transfer, after.value().transferSeconds);
        filtering = std::min(filtering, after.value().totalSeconds - after.value().transferSeconds);
        sequential = std::min(sequential, after.value().totalSeconds);
        Result<PulledImage> during = pullFiltered(t.value(), chain.value(), &pool, true);
        if (!during.isOk())
            return fail(during.error().toString());
        overlapped = std::min(overlapped, during.value().totalSeconds);
        firstRows = std::min(firstRows, during.value().firstRowsSeconds);
        const PixelBuffer &a = after.value().image.pixels, &b = during.value().image.pixels;
        if (a.frameBytes() != b.frameBytes() || std::memcmp(a.frameData(0), b.frameData(0), size_t(a.frameBytes() * a.frames())) != 0)
            return fail(QStringLiteral("bench ilp: filtering while the image arrived gave other pixels than filtering after"));
        if (r == 0)
            out(QStringLiteral("%1: %2×%3, %4 bytes; chain %5; %6 thread(s)").arg(p.positionalArguments().at(0)).arg(a.width()).arg(a.height())
                    .arg(after.value().original.size()).arg(chain.value().description()).arg(pool.maxThreadCount()));
    }
    out(QStringLiteral("best of %1                                  seconds").arg(reps));
    out(QStringLiteral("transfer alone                               %1").arg(transfer, 8, 'f', 3));
    out(QStringLiteral("decoding and filtering alone                 %1").arg(filtering, 8, 'f', 3));
    out(QStringLiteral("fetch, then filter                           %1").arg(sequential, 8, 'f', 3));
    out(QStringLiteral("filtering while it arrives                   %1   (first filtered rows after %2)").arg(overlapped, 8, 'f', 3).arg(firstRows, 0, 'f', 3));
    out(QStringLiteral("overlapped / max(transfer, filtering) = %1  (goal ≤ 1.15); overlapped / sequential = %2")
            .arg(overlapped / std::max(transfer, filtering), 0, 'f', 2).arg(overlapped / sequential, 0, 'f', 2));
    return 0;
}

/// Resident memory of this process from /proc/self/status: "VmRSS" now, "VmHWM" at its peak (bytes).
qint64 memoryOf(const char *field)
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : f.readAll().split('\n')) {
        if (line.startsWith(field))
            return line.mid(qstrlen(field) + 1).trimmed().split(' ').value(0).toLongLong() * 1024;
    }
    return -1;
}

/// The measured part of bench memory, in a process of its own (so that its peak is only this): the file read in
/// 1 MiB pieces into the streaming decoder, each new band through the chain into the output.
int memoryChild(const QString &path, const QStringList &specs)
{
    Result<FilterChain> chain = FilterRegistry().makeChain(specs);
    if (!chain.isOk())
        return fail(chain.error().message(), 2);
    const qint64 baseline = memoryOf("VmRSS");
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("cannot read %1").arg(path));
    StreamingDecoder decoder;
    std::unique_ptr<BandProcessor> band;
    PixelBuffer output;
    QByteArray piece(1 << 20, Qt::Uninitialized);
    for (qint64 n; (n = file.read(piece.data(), piece.size())) > 0;) {
        if (Error e = decoder.feed(piece.constData(), n); e.isError())
            return fail(e.toString());
        if (!decoder.hasHeader() || decoder.pixels().isNull())
            continue;
        if (!band) {
            if (!isFilterable(decoder.pixels().format()))
                return fail(unfilterable().toString());
            const PlaneFormat in = planeFormatOf(decoder.pixels(), decoder.info());
            const PlaneFormat of = chain.value().outputFormat(in);
            output = PixelBuffer(decoder.pixels().format(), of.width, of.height, 1);
            const uchar *src = decoder.pixels().frameData(0);
            uchar *dst = output.frameData(0);
            band = std::make_unique<BandProcessor>(chain.value(), in, src, in.rowBytes(), nullptr, dst, of.rowBytes());
        }
        band->inputArrived(decoder.framesComplete() > 0 ? decoder.info().rows : decoder.rowsComplete());
    }
    if (Error e = decoder.finish(); e.isError())
        return fail(e.toString());
    const qint64 image = decoder.pixels().frameBytes();
    const qint64 peak = memoryOf("VmHWM") - baseline;
    out(QStringLiteral("%1 × %2, %3 MB of pixels through %4: peak resident memory %5 MB above the process's start = %6× the image (goal ≤ 3×)")
            .arg(decoder.info().columns).arg(decoder.info().rows).arg(image / 1e6, 0, 'f', 1).arg(chain.value().description())
            .arg(peak / 1e6, 0, 'f', 1).arg(double(peak) / image, 0, 'f', 2));
    return band && band->outputRowsComplete() == output.height() ? 0 : 1;
}

int benchMemory(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Peak memory of a 16-bit image streamed from a file through a filter chain, against the image's size."));
    p.addHelpOption();
    p.addOption({QStringLiteral("size"), QStringLiteral("Side of the square image (default 4096)."), QStringLiteral("N"), QStringLiteral("4096")});
    p.addOption({QStringLiteral("filter"), QStringLiteral("The chain (default: gaussian:sigma=2, unsharp, despeckle)."), QStringLiteral("SPEC")});
    p.addOption({QStringLiteral("child"), QStringLiteral("(internal) measure this file."), QStringLiteral("FILE")});
    p.process(args);
    const QStringList specs = p.isSet(QStringLiteral("filter")) ? p.values(QStringLiteral("filter"))
        : QStringList{QStringLiteral("gaussian:sigma=2"), QStringLiteral("unsharp"), QStringLiteral("despeckle")};
    if (p.isSet(QStringLiteral("child")))
        return memoryChild(p.value(QStringLiteral("child")), specs);
    const int n = p.value(QStringLiteral("size")).toInt();
    if (n < 16 || n > 16384)
        return fail(QStringLiteral("bench memory: --size from 16 to 16384"), 2);
    // The test image: the demo CR's header around n × n pixels, as a derived instance.
    QByteArray cr;
    DemoOptions demo;
    demo.studies = {DemoStudy::ChestCr};
    DemoArchive::generate(demo, [&cr](DemoInstance &&i) { cr = i.bytes; return Error(); });
    const QByteArray pixels = benchImage(n);
    PixelBuffer px(PixelFormat::Gray16, n, n, 1);
    std::memcpy(px.frameData(0), pixels.constData(), size_t(pixels.size()));
    Derivation derivation;
    derivation.description = QStringLiteral("bench memory test image");
    Result<DerivedInstance> file = makeDerivedInstance(ByteView(cr), px, derivation);
    if (!file.isOk())
        return fail(file.error().toString());
    QTemporaryDir tmp;
    const QString path = tmp.filePath(QStringLiteral("image.dcm"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(file.value().bytes) != file.value().bytes.size())
        return fail(QStringLiteral("cannot write %1").arg(path));
    f.close();
    QProcess child;
    child.setProcessChannelMode(QProcess::ForwardedChannels);
    QStringList childArgs{QStringLiteral("bench"), QStringLiteral("memory"), QStringLiteral("--child"), path};
    for (const QString &spec : specs)
        childArgs << QStringLiteral("--filter") << spec;
    child.start(QCoreApplication::applicationFilePath(), childArgs);
    if (!child.waitForFinished(600000))
        return fail(QStringLiteral("bench memory: the measuring process did not finish"));
    return child.exitCode();
}

} // namespace

int cmdBench(const QStringList &args)
{
    const QString what = args.value(1);
    QStringList rest = args;
    if (rest.size() > 1)
        rest.removeAt(1);
    rest[0] = QStringLiteral("spectrum-cli bench ") + what;
    if (what == QLatin1String("filters"))
        return benchFilters(rest);
    if (what == QLatin1String("ilp"))
        return benchIlp(rest);
    if (what == QLatin1String("memory"))
        return benchMemory(rest);
    return fail(QStringLiteral("bench: filters | ilp | memory"), 2);
}

} // namespace spectrum::cli
