// SPDX-License-Identifier: Apache-2.0
#pragma once
// ProgressiveImage: an instance decoded and filtered while its bytes arrive — integrated layer processing
// (`../shared/seeds/000_…`, section 2.2.1). Whoever receives the bytes (a blob pull, a WADO-RS part) reports how
// much of the buffer is in; the image's work — decoding the new rows (StreamingDecoder) and running them through
// the filter chain (BandProcessor) — runs on computePool() as one task after another (never two at once), so the
// receiving thread never waits on either. Filtering overlaps the transfer: when the last byte is in, only the
// last band is left to do. The image it ends with is the one to show and keep: nothing decodes it again.

#include "spectrum/core/bytes.h"
#include "spectrum/core/result.h"
#include "spectrum/imaging/filters/bandprocessor.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/imageinfo.h"
#include "spectrum/imaging/pixelbuffer.h"

#include <QObject>

#include <memory>

class QThreadPool;

namespace spectrum {

class ProgressiveImage : public QObject
{
    Q_OBJECT
public:
    /// `chain` may be empty (decoding only). `pool`: the filters' threads (null: the decoding thread alone).
    explicit ProgressiveImage(FilterChain chain, QThreadPool *pool = nullptr, QObject *parent = nullptr);
    ~ProgressiveImage() override;
    struct Private;

    /// Bytes [0, end) of the instance are at `data` (which stays valid and unchanged until finish() returns).
    /// Thread-safe and cheap: the work happens on the pool.
    void bytesAvailable(const char *data, qint64 end);
    /// The same from an arrival (core/bytes.h), whose buffer the image holds while it needs it. Arrivals of
    /// another buffer than the first are ignored.
    void bytesAvailable(const Arrival &arrival);
    /// No more bytes: waits for the last of the work and returns the image — info as decoded, pixels after the
    /// chain — or why there is none (cut short, malformed, unsupported).
    Result<DecodedImage> finish();
    /// The same without waiting: finished() or failed() once the work is done (queued to the receiver's thread).
    /// Call once, after the last bytes.
    void finishAsync();
    /// Seconds from the first bytesAvailable() to the first filtered rows (−1: none yet).
    double firstRowsSeconds() const;
    /// Also emit previewReady() — a copy of the first frame as far as it is done — at most every `intervalMs`,
    /// and when the frame is complete. For showing an image while it arrives. Call before the first bytes.
    void enablePreviews(int intervalMs = 40);

Q_SIGNALS:
    /// finishAsync()'s image: `original` as decoded (its values), `filtered` after the chain (the same as
    /// `original` when the chain is empty; its info describes the filtered pixels' size).
    void finished(const spectrum::DecodedImage &original, const spectrum::DecodedImage &filtered);
    void failed(const spectrum::Error &error);
    /// The header is in (queued to the receiver's thread).
    void headerReady(const spectrum::ImageInfo &info);
    /// Rows [0, rows) of `frame` are decoded and filtered.
    void rowsReady(int frame, int rows);
    /// The first frame so far: rows [0, rows) of `image` are decoded and filtered, the rest is zero; `image.info`
    /// describes the filtered pixels (their size). `original` is the same frame before the filters — rows
    /// [0, originalRows) decoded, the rest zero — for the values a reader measures (the same pixels as `image`
    /// when the chain is empty).
    void previewReady(const spectrum::DecodedImage &image, int rows, const spectrum::DecodedImage &original, int originalRows);

private:
    std::unique_ptr<Private> d;
};

} // namespace spectrum
