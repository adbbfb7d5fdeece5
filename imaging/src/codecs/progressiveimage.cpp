// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/codecs/progressiveimage.h"

#include "spectrum/core/threadpools.h"
#include "spectrum/imaging/codecs/decodecounts.h"
#include "spectrum/imaging/codecs/streamingdecoder.h"

#include <QElapsedTimer>
#include <QMutex>
#include <QSemaphore>
#include <QWaitCondition>

#include <atomic>
#include <cstring>
#include <deque>

namespace spectrum {

struct ProgressiveImage::Private
{
    FilterChain chain;
    QThreadPool *pool = nullptr;

    // The work runs on computePool() one task after another (a strand): never two at once, in order.
    QMutex strandMutex;
    QWaitCondition strandIdle;
    std::deque<std::function<void()>> tasks;  ///< guarded by strandMutex
    bool draining = false;                    ///< a task of the pool runs the queue
    void post(std::function<void()> task)
    {
        QMutexLocker lock(&strandMutex);
        tasks.push_back(std::move(task));
        if (std::exchange(draining, true))
            return;
        startOnPool(computePool(), [this] {
            for (;;) {
                QMutexLocker lock(&strandMutex);
                if (tasks.empty()) {
                    draining = false;
                    strandIdle.wakeAll();
                    return;
                }
                std::function<void()> next = std::move(tasks.front());
                tasks.pop_front();
                lock.unlock();
                next();
            }
        });
    }
    void waitIdle()
    {
        QMutexLocker lock(&strandMutex);
        while (draining)
            strandIdle.wait(&strandMutex);
    }

    std::shared_ptr<const QByteArray> keep;  ///< the arriving buffer, when given as an Arrival
    std::atomic<const char *> data{nullptr};
    std::atomic<qint64> end{0};
    std::atomic<bool> scheduled{false};
    QElapsedTimer clock;
    std::atomic<qint64> firstRowsNs{-1};

    // The thread's own state.
    StreamingDecoder decoder;
    qint64 fed = 0;
    Error error;
    bool headerSignalled = false;
    PlaneFormat in, out;
    PixelBuffer filtered;
    std::unique_ptr<BandProcessor> band;
    int frame = 0;
    int rowsSignalled = 0;
    std::atomic<int> previewIntervalMs{-1};  ///< −1: no previews
    QElapsedTimer sincePreview;

    /// A copy of rows [0, rows) of frame 0 as filtered, and of rows [0, rowsIn) as decoded, for display (and
    /// for the values under the cursor) while the rest arrives.
    void preview(ProgressiveImage *q, int rows, int rowsIn)
    {
        const int interval = previewIntervalMs.load();
        if (interval < 0 || frame != 0)
            return;
        if (rows < out.height && sincePreview.isValid() && sincePreview.elapsed() < interval)
            return;
        sincePreview.start();
        DecodedImage image;
        image.info = decoder.info();
        // The filters may change the size (zoom, rotate): the spacing follows, the extent stays.
        if (out.width != in.width || out.height != in.height) {
            image.info.columnSpacing *= double(in.width) / out.width;
            image.info.rowSpacing *= double(in.height) / out.height;
            image.info.columns = out.width;
            image.info.rows = out.height;
        }
        image.info.frames = 1;
        image.pixels = PixelBuffer(filtered.format(), out.width, out.height, 1);
        std::memcpy(image.pixels.frameData(0), filtered.frameData(0), size_t(qsizetype(rows) * out.rowBytes()));
        if (chain.isEmpty())
            return Q_EMIT q->previewReady(image, rows, image, rows);
        DecodedImage original;
        original.info = decoder.info();
        original.info.frames = 1;
        const PixelBuffer &decoded = decoder.pixels();
        original.pixels = PixelBuffer(decoded.format(), in.width, in.height, 1);
        std::memcpy(original.pixels.frameData(0), decoded.frameData(0), size_t(qsizetype(rowsIn) * in.rowBytes()));
        Q_EMIT q->previewReady(image, rows, original, rowsIn);
    }

    /// Feeds what arrived to the decoder, then the decoded rows to the filters. On the image's thread.
    void process(ProgressiveImage *q)
    {
        scheduled = false;
        const qint64 upTo = end.load();
        const char *bytes = data.load();
        if (!error.isError() && upTo > fed && bytes) {
            error = decoder.feed(bytes + fed, upTo - fed);
            fed = upTo;
        }
        advance(q);
    }

    void advance(ProgressiveImage *q)
    {
        if (error.isError() || !decoder.hasHeader())
            return;
        if (!headerSignalled) {
            headerSignalled = true;
            Q_EMIT q->headerReady(decoder.info());
        }
        const PixelBuffer &decoded = decoder.pixels();
        if (decoded.isNull())
            return;  // compressed: the first frame is not decoded yet
        if (!isFilterable(decoded.format())) {  // real values: decoded whole, shown as they are
            if (!chain.isEmpty()) {
                error = unfilterable();
                return;
            }
            if (filtered.isNull()) {
                filtered = decoded;
                in = out = PlaneFormat{};
                out.width = in.width = decoded.width();
                out.height = in.height = decoded.height();
            }
            frame = decoded.frames();
            return;
        }
        if (filtered.isNull()) {
            in = planeFormatOf(decoded, decoder.info());
            out = chain.outputFormat(in);
            if (out.width < 1 || out.height < 1 || PixelBuffer::checkedByteCount(decoded.format(), out.width, out.height, decoded.frames(), qint64(4) << 30) < 0) {
                error = Error(ErrorCode::InvalidArgument, QStringLiteral("the filtered image would be %1 × %2 × %3 frames: too large").arg(out.width).arg(out.height).arg(decoded.frames()));
                return;
            }
            filtered = PixelBuffer(decoded.format(), out.width, out.height, decoded.frames());
        }
        while (frame < decoded.frames()) {
            const int rowsIn = decoder.framesComplete() > frame ? in.height : decoder.framesComplete() == frame ? decoder.rowsComplete() : 0;
            int rowsOut = 0;
            if (chain.isEmpty()) {
                const qsizetype rowBytes = in.rowBytes();
                std::memcpy(filtered.frameData(frame) + rowsSignalled * rowBytes, decoded.frameData(frame) + rowsSignalled * rowBytes,
                            size_t((rowsIn - rowsSignalled) * rowBytes));
                rowsOut = rowsIn;
            } else {
                if (!band) {
                    const uchar *src = decoded.frameData(frame);
                    uchar *dst = filtered.frameData(frame);
                    const qsizetype inRow = in.rowBytes(), outRow = out.rowBytes();
                    band = std::make_unique<BandProcessor>(chain, in, src, inRow, pool, dst, outRow);
                }
                rowsOut = band->inputArrived(rowsIn);
            }
            if (rowsOut > rowsSignalled) {
                if (firstRowsNs.load() < 0)
                    firstRowsNs = clock.nsecsElapsed();
                rowsSignalled = rowsOut;
                Q_EMIT q->rowsReady(frame, rowsOut);
                preview(q, rowsOut, rowsIn);
            }
            if (rowsOut < out.height)
                break;
            ++frame;
            band.reset();
            rowsSignalled = 0;
        }
    }
};

ProgressiveImage::ProgressiveImage(FilterChain chain, QThreadPool *pool, QObject *parent) : QObject(parent), d(std::make_unique<Private>())
{
    qRegisterMetaType<spectrum::ImageInfo>();
    qRegisterMetaType<spectrum::DecodedImage>();
    qRegisterMetaType<spectrum::Error>();
    d->chain = std::move(chain);
    d->pool = pool;
}

ProgressiveImage::~ProgressiveImage()
{
    d->waitIdle();  // its tasks use this object; what they emitted and is still queued is dropped with it
}

void ProgressiveImage::bytesAvailable(const char *data, qint64 end)
{
    if (!d->clock.isValid())
        d->clock.start();
    d->data = data;
    d->end = end;
    if (!d->scheduled.exchange(true))
        d->post([this] { d->process(this); });
}

void ProgressiveImage::bytesAvailable(const Arrival &arrival)
{
    if (!arrival.isValid())
        return;
    if (!d->keep)
        d->keep = arrival.buffer;  // the same buffer for every arrival of one instance
    else if (d->keep != arrival.buffer)
        return;  // another buffer: not this image's bytes
    bytesAvailable(arrival.data(), arrival.end);
}

/// The image as decoded and as filtered, or why there is none; on the strand, after the last bytes.
static Result<std::pair<DecodedImage, DecodedImage>> finishOnStrand(ProgressiveImage *q, ProgressiveImage::Private *d)
{
    d->process(q);
    if (!d->error.isError())
        d->error = d->decoder.finish();
    d->advance(q);  // what finishing decoded (deflated data, the last frame)
    if (d->error.isError())
        return d->error;
    if (d->filtered.isNull() || d->frame < d->filtered.frames())
        return Error(ErrorCode::Internal, QStringLiteral("the image was decoded but not all of it filtered"));
    DecodedImage original;
    original.info = d->decoder.info();
    original.pixels = d->decoder.pixels();
    DecodedImage filtered = original;
    if (!d->chain.isEmpty()) {
        filtered.pixels = d->filtered;
        // The filters may change the size (zoom): the spacing follows, the extent stays.
        if (d->out.width != d->in.width || d->out.height != d->in.height) {
            filtered.info.columnSpacing *= double(d->in.width) / d->out.width;
            filtered.info.rowSpacing *= double(d->in.height) / d->out.height;
            filtered.info.columns = d->out.width;
            filtered.info.rows = d->out.height;
        }
        noteFiltered(original.info.identity.sopInstanceUid);
    }
    noteDecoded(original.info.identity.sopInstanceUid);
    return std::make_pair(original, filtered);
}

Result<DecodedImage> ProgressiveImage::finish()
{
    Result<DecodedImage> result = Error(ErrorCode::Internal, QStringLiteral("not finished"));
    QSemaphore done;
    d->post([this, &result, &done] {
        Result<std::pair<DecodedImage, DecodedImage>> r = finishOnStrand(this, d.get());
        if (r.isOk()) {
            DecodedImage image = r.value().first;
            image.pixels = d->filtered.isNull() ? image.pixels : d->filtered;  // as before: info as decoded, pixels after the chain
            result = image;
        } else {
            result = r.error();
        }
        done.release();
    });
    done.acquire();
    return result;
}

void ProgressiveImage::finishAsync()
{
    d->post([this] {
        Result<std::pair<DecodedImage, DecodedImage>> r = finishOnStrand(this, d.get());
        if (r.isOk())
            Q_EMIT finished(r.value().first, r.value().second);
        else
            Q_EMIT failed(r.error());
    });
}

void ProgressiveImage::enablePreviews(int intervalMs)
{
    d->previewIntervalMs = std::max(0, intervalMs);
}

double ProgressiveImage::firstRowsSeconds() const { return d->firstRowsNs.load() < 0 ? -1 : d->firstRowsNs.load() / 1e9; }

} // namespace spectrum
