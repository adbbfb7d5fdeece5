// SPDX-License-Identifier: Apache-2.0
// spectrum-memorybench: the peak memory of a 16-bit image streamed from a file through a filter chain, against the
// image's size. The measured part runs in a child process of its own, so that its peak is only this.

#include "benchimage.h"
#include "output.h"
#include "procmemory.h"

#include "spectrum/imaging/filters/bandprocessor.h"
#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/documents/derivedinstance.h"
#include "spectrum/imaging/filters/filterregistry.h"
#include "spectrum/imaging/pixelbuffer.h"
#include "spectrum/imaging/codecs/streamingdecoder.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <cstring>
#include <memory>

using namespace spectrum;
using spectrum::cli::fail;
using spectrum::cli::out;
using spectrum::bench::memoryOf;
using spectrum::bench::benchImage;

namespace {

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
        return fail(QStringLiteral("--size from 16 to 16384"), 2);
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
    QStringList childArgs{QStringLiteral("--child"), path};
    for (const QString &spec : specs)
        childArgs << QStringLiteral("--filter") << spec;
    child.start(QCoreApplication::applicationFilePath(), childArgs);
    if (!child.waitForFinished(600000))
        return fail(QStringLiteral("the measuring process did not finish"));
    return child.exitCode();
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationVersion(QStringLiteral(SPECTRUM_VERSION));
    return benchMemory(app.arguments());
}
