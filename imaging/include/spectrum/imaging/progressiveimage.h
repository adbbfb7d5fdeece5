#pragma once
// ProgressiveImage: an instance decoded and filtered while its bytes arrive — integrated layer processing
// (`../shared/seeds/000_…`, section 2.2.1). Whoever receives the bytes (a blob pull, a WADO-RS part) reports how
// much of the buffer is in; a thread of this object's own decodes the new rows (StreamingDecoder) and runs them
// through the filter chain (BandProcessor) at once, so the receiving thread never waits on either. Filtering
// overlaps the transfer: when the last byte is in, only the last band is left to do.

#include "spectrum/core/result.h"
#include "spectrum/imaging/bandprocessor.h"
#include "spectrum/imaging/dicomdecoder.h"
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

    /// Bytes [0, end) of the instance are at `data` (which stays valid and unchanged until finish() returns).
    /// Thread-safe and cheap: the work happens on the image's own thread.
    void bytesAvailable(const char *data, qint64 end);
    /// No more bytes: waits for the last of the work and returns the image — info as decoded, pixels after the
    /// chain — or why there is none (cut short, malformed, unsupported).
    Result<DecodedImage> finish();
    /// Seconds from the first bytesAvailable() to the first filtered rows (−1: none yet).
    double firstRowsSeconds() const;
    /// Also emit previewReady() — a copy of the first frame as far as it is done — at most every `intervalMs`,
    /// and when the frame is complete. For showing an image while it arrives. Call before the first bytes.
    void enablePreviews(int intervalMs = 40);

Q_SIGNALS:
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
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace spectrum
