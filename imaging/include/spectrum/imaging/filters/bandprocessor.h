// SPDX-License-Identifier: Apache-2.0
#pragma once
// BandProcessor: runs a chain of filters over an image whose rows arrive in order — from a decoder following a
// transfer, or all at once. Each time more input rows are in, every filter computes the output rows it now has the
// neighbours for, split over the thread pool; the next filter takes them from there. Intermediate rows are
// dropped as soon as no later output row needs them, so a chain holds little beyond its input and its output.
// Results do not depend on how the rows arrived or on the number of threads.

#include "spectrum/core/result.h"
#include "spectrum/imaging/filters/filter.h"
#include "spectrum/imaging/imageinfo.h"
#include "spectrum/imaging/pixelbuffer.h"

#include <QByteArray>

#include <memory>
#include <vector>

class QThreadPool;

namespace spectrum {

/// Filters applied one after the other.
struct FilterChain
{
    std::vector<std::shared_ptr<const Filter>> filters;

    bool isEmpty() const { return filters.empty(); }
    /// "gaussian:sigma=2; invert" — for the Derivation Description.
    QString description() const;
    /// The format after every filter.
    PlaneFormat outputFormat(const PlaneFormat &in) const;
};

/// The rows of one frame of `pixels`, with the value range from `info` (Bits Stored, Pixel Representation).
PlaneFormat planeFormatOf(const PixelBuffer &pixels, const ImageInfo &info);
/// Whether filters can run on pixels of this format (not Float64: real values).
bool isFilterable(PixelFormat format);
/// The error for a chain asked of pixels that are not filterable.
Error unfilterable();

class BandProcessor
{
public:
    /// `inputRow(y)` gives row y of the input once it has arrived. `outputRow`, when given, is where the last
    /// filter writes row y (say a PixelBuffer's frame); otherwise the processor keeps its own output buffer.
    /// `pool` null: everything on the calling thread.
    BandProcessor(FilterChain chain, const PlaneFormat &input, std::function<const void *(int y)> inputRow,
                  QThreadPool *pool, std::function<void *(int y)> outputRow = {});
    /// Input and output are planes in memory (a PixelBuffer's frame, say): row y at base + y × stride bytes. The
    /// same results; filters that can run over many rows at once do.
    BandProcessor(FilterChain chain, const PlaneFormat &input, const void *inputBase, qsizetype inputStride, QThreadPool *pool,
                  void *outputBase, qsizetype outputStride);
    ~BandProcessor();
    BandProcessor(const BandProcessor &) = delete;
    BandProcessor &operator=(const BandProcessor &) = delete;

    /// Input rows [0, rows) are in (a count that never goes down). Computes what can be computed now and returns
    /// the number of output rows complete: always a prefix, [0, n).
    int inputArrived(int rows);
    int outputRowsComplete() const;
    const PlaneFormat &outputFormat() const;
    /// The processor's own output buffer (when no outputRow was given): outputFormat().height rows.
    const QByteArray &output() const;

private:
    struct Stage;
    void runStage(Stage &stage, int begin, int end);
    FilterChain m_chain;
    PlaneFormat m_input;
    std::function<const void *(int)> m_inputRow;
    QThreadPool *m_pool;
    std::vector<std::unique_ptr<Stage>> m_stages;
    std::function<void *(int)> m_outputRow;
    QByteArray m_output;
    const char *m_inputBase = nullptr;  ///< set when the input is a plane
    qsizetype m_inputStride = 0;
    char *m_outputBase = nullptr;  ///< set when the output is a plane (given, or m_output)
    qsizetype m_outputStride = 0;
    int m_inputRows = 0;
};

/// The whole-image case: every frame of `pixels` through `chain`. Output pixels keep the input's format.
Result<PixelBuffer> applyFilters(const FilterChain &chain, const PixelBuffer &pixels, const ImageInfo &info, QThreadPool *pool);

} // namespace spectrum
