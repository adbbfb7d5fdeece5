// SPDX-License-Identifier: Apache-2.0
// spectrum-ilpbench: an image fetched from a blob server through a filter chain, filtered while it arrives and, in
// the same run, fetched first and filtered after. tests/bench/ilp.sh sets up the blob server and a throttled link.

#include "blobtarget.h"
#include "output.h"
#include "pulledimage.h"

#include "spectrum/imaging/filters/filterregistry.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QThreadPool>

#include <cstring>

using namespace spectrum;
using spectrum::cli::fail;
using spectrum::cli::out;
using spectrum::cli::BlobTarget;
using spectrum::cli::PulledImage;
using spectrum::cli::addTransferOptions;
using spectrum::cli::pullFiltered;
using spectrum::cli::target;

namespace {

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
        return fail(QStringLiteral("give the URL: blob://HOST:PORT/KEY"), 2);
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
            return fail(QStringLiteral("filtering while the image arrived gave other pixels than filtering after"));
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

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationVersion(QStringLiteral(SPECTRUM_VERSION));
    return benchIlp(app.arguments());
}
