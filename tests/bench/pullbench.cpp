// SPDX-License-Identifier: Apache-2.0
// pullbench: the blob protocol's own speed, memory to memory, as iperf3 measures TCP's.
//
// iperf3 receives into one reused 128 KiB buffer; a fresh 1 GiB destination instead pays the first touch of
// every page, which on these virtual machines costs more than the transfer itself (the kernel zeroes each page
// and the hypervisor backs it). So this pulls the same blob RUNS times into one destination that was touched
// once beforehand, and prints the best run — the protocol, checksums and whole-blob SHA-256 included — next to
// the cost of touching fresh memory, measured on the same machine in the same run.
//
// Usage: spectrum-pullbench blob://HOST:PORT/KEY STREAMS RUNS [nosha]   (token from $SPECTRUM_TOKEN)
// nosha: per-frame XXH3 checks only, without the whole-blob SHA-256.
// Prints one line: "<best seconds> <cpu seconds of that run> <first-touch seconds per GiB>".

#include "spectrum/core/resultjob.h"
#include "spectrum/transfer/blobclient.h"
#include "spectrum/transfer/buffersink.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QUrl>

#include <cstdio>
#include <cstring>
#include <sys/mman.h>
#include <sys/resource.h>

using namespace spectrum;

namespace {

double cpuSeconds()
{
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/// Seconds to touch one fresh GiB of anonymous memory, page by page: what a new destination costs here.
double firstTouchSecondsPerGiB()
{
    const size_t n = size_t(1) << 30;
    void *p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    QElapsedTimer t;
    t.start();
    for (size_t i = 0; i < n; i += 4096)
        static_cast<volatile char *>(p)[i] = 1;
    const double s = double(t.nsecsElapsed()) / 1e9;
    ::munmap(p, n);
    return s;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    const QString mode = args.size() == 5 ? args[4] : QString();
    if (args.size() < 4 || args.size() > 5 || !(mode.isEmpty() || mode == QLatin1String("nosha") || mode == QLatin1String("notree"))) {
        std::fprintf(stderr, "usage: spectrum-pullbench blob://HOST:PORT/KEY STREAMS RUNS [nosha|notree]\n"
                             "  (default: each MiB checked against the server's hash tree; notree: the whole blob's SHA-256; nosha: XXH3 per frame only)\n");
        return 2;
    }
    auto parsed = BlobEndpoint::fromUrl(QUrl(args[1]));
    if (!parsed.isOk()) {
        std::fprintf(stderr, "%s\n", qPrintable(parsed.error().toString()));
        return 2;
    }
    BlobEndpoint endpoint = parsed.value().first;
    endpoint.token = qEnvironmentVariable("SPECTRUM_TOKEN");
    BlobClient client(endpoint);
    TransferOptions options;
    options.streams = args[2].toInt();
    options.verifySha256 = mode != QLatin1String("nosha");
    options.hashTree = mode.isEmpty();
    client.setDefaults(options);
    const QString key = parsed.value().second;
    const int runs = std::max(1, args[3].toInt());

    std::unique_ptr<BufferSink> sink;
    double best = 0, bestCpu = 0;
    for (int run = 0; run < runs; ++run) {
        auto factory = [&](const RemoteBlobInfo &, qint64 begin, qint64 end) -> Result<ByteSink *> {
            if (!sink) {
                sink = std::make_unique<BufferSink>(end - begin);
                if (!sink->isValid())
                    return Error(ErrorCode::DiskFull, QStringLiteral("cannot hold the blob in memory"));
                std::memset(sink->data(), 0, size_t(end - begin));  // touched once, outside the timing
            }
            return sink.get();
        };
        if (!sink) {  // the first pull only sizes and touches the destination
            Result<PullResult> warm = runSync(client.pull(key, factory));
            if (!warm.isOk()) {
                std::fprintf(stderr, "%s\n", qPrintable(warm.error().toString()));
                return 1;
            }
        }
        const double cpu0 = cpuSeconds();
        QElapsedTimer t;
        t.start();
        Result<PullResult> r = runSync(client.pull(key, factory));
        const double s = double(t.nsecsElapsed()) / 1e9, cpu = cpuSeconds() - cpu0;
        if (!r.isOk() || r.value().verified != options.verifySha256 || r.value().verifiedByTree != options.hashTree) {
            std::fprintf(stderr, "%s\n", r.isOk() ? "not verified" : qPrintable(r.error().toString()));
            return 1;
        }
        if (run == 0 || s < best) {
            best = s;
            bestCpu = cpu;
        }
    }
    std::printf("%.3f %.3f %.3f\n", best, bestCpu, firstTouchSecondsPerGiB());
    return 0;
}
