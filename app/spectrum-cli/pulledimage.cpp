// SPDX-License-Identifier: Apache-2.0
#include "pulledimage.h"

#include "spectrum/imaging/codecs/progressiveimage.h"
#include "spectrum/transfer/buffersink.h"

#include <QElapsedTimer>

namespace spectrum::cli {

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

} // namespace spectrum::cli
