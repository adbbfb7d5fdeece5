// SPDX-License-Identifier: Apache-2.0
// spectrum-filterbench: every filter on 16-bit images, and in the same run OpenCV's (spectrum-opencv-peer) and
// ImageMagick's closest operations on the same image; megapixels per second and ratios. tests/bench/filters.sh
// installs the peers and runs it; docs/PERFORMANCE.md holds the latest run.

#include "benchimage.h"
#include "output.h"

#include "spectrum/imaging/filters/bandprocessor.h"
#include "spectrum/imaging/filters/filterregistry.h"
#include "spectrum/imaging/pixelbuffer.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>
#include <QThreadPool>

#include <cstring>
#include <utility>

using namespace spectrum;
using spectrum::cli::fail;
using spectrum::cli::out;
using spectrum::bench::benchImage;

namespace {

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
            return fail(QStringLiteral("image sides from 16 to 16384, not %1").arg(side), 2);
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
            return fail(QStringLiteral("cannot write into %1").arg(tmp.path()));
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

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationVersion(QStringLiteral(SPECTRUM_VERSION));
    return benchFilters(app.arguments());
}
