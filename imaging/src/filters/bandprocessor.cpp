// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/filters/bandprocessor.h"

#include <QThreadPool>
#include <QtConcurrent/QtConcurrentMap>

#include <algorithm>

namespace spectrum {

QString FilterChain::description() const
{
    QStringList parts;
    for (const auto &f : filters)
        parts << f->description();
    return parts.join(QStringLiteral("; "));
}

PlaneFormat FilterChain::outputFormat(const PlaneFormat &in) const
{
    PlaneFormat f = in;
    for (const auto &filter : filters)
        f = filter->outputFormat(f);
    return f;
}

PlaneFormat planeFormatOf(const PixelBuffer &pixels, const ImageInfo &info)
{
    PlaneFormat f;
    f.width = pixels.width();
    f.height = pixels.height();
    switch (pixels.format()) {
    case PixelFormat::Gray8: f.type = SampleType::U8; break;
    case PixelFormat::Gray8Signed: f.type = SampleType::S8; break;
    case PixelFormat::Gray16: f.type = SampleType::U16; break;
    case PixelFormat::Gray16Signed: f.type = SampleType::S16; break;
    case PixelFormat::Rgb24: f.type = SampleType::U8; f.channels = 3; break;
    case PixelFormat::Float64: f.type = SampleType::U16; f.channels = 0; break;  // not filterable (see isFilterable): no samples
    }
    const int container = f.bytesPerSample() * 8;
    const int bits = pixels.isGray() && info.bitsStored >= 1 ? std::min(info.bitsStored, container) : container;
    if (pixels.isSignedFormat()) {
        f.minValue = -(1 << (bits - 1));
        f.maxValue = (1 << (bits - 1)) - 1;
    } else {
        f.minValue = 0;
        f.maxValue = (1 << bits) - 1;
    }
    return f;
}

/// One filter of the chain and the rows it has produced. An intermediate stage keeps its rows until the next
/// filter no longer needs them; the last writes into the output.
struct BandProcessor::Stage
{
    std::shared_ptr<const Filter> filter;
    PlaneFormat in;
    PlaneFormat out;
    int done = 0;                             ///< output rows [0, done) are complete
    std::vector<std::unique_ptr<char[]>> rows;  ///< intermediate stages only: row y, or null once released
    int releasedBelow = 0;
};

BandProcessor::BandProcessor(FilterChain chain, const PlaneFormat &input, std::function<const void *(int)> inputRow, QThreadPool *pool,
                             std::function<void *(int)> outputRow)
    : m_chain(std::move(chain)), m_input(input), m_inputRow(std::move(inputRow)), m_pool(pool)
{
    PlaneFormat f = input;
    for (const auto &filter : m_chain.filters) {
        auto s = std::make_unique<Stage>();
        s->filter = filter;
        s->in = f;
        s->out = filter->outputFormat(f);
        f = s->out;
        m_stages.push_back(std::move(s));
    }
    for (size_t i = 0; i + 1 < m_stages.size(); ++i)
        m_stages[i]->rows.resize(size_t(m_stages[i]->out.height));
    if (!outputRow && !m_stages.empty()) {
        m_output = QByteArray(f.rowBytes() * f.height, Qt::Uninitialized);
        m_outputBase = m_output.data();
        m_outputStride = f.rowBytes();
    }
    m_outputRow = std::move(outputRow);
}

BandProcessor::BandProcessor(FilterChain chain, const PlaneFormat &input, const void *inputBase, qsizetype inputStride, QThreadPool *pool,
                             void *outputBase, qsizetype outputStride)
    : BandProcessor(std::move(chain), input,
                    [base = static_cast<const char *>(inputBase), inputStride](int y) -> const void * { return base + y * inputStride; }, pool,
                    [base = static_cast<char *>(outputBase), outputStride](int y) -> void * { return base + y * outputStride; })
{
    m_inputBase = static_cast<const char *>(inputBase);
    m_inputStride = inputStride;
    m_outputBase = static_cast<char *>(outputBase);
    m_outputStride = outputStride;
}

BandProcessor::~BandProcessor() = default;

const PlaneFormat &BandProcessor::outputFormat() const { return m_stages.empty() ? m_input : m_stages.back()->out; }

int BandProcessor::outputRowsComplete() const { return m_stages.empty() ? m_inputRows : m_stages.back()->done; }

const QByteArray &BandProcessor::output() const { return m_output; }

int BandProcessor::inputArrived(int rows)
{
    m_inputRows = std::clamp(std::max(rows, m_inputRows), 0, m_input.height);
    int available = m_inputRows;
    for (size_t i = 0; i < m_stages.size(); ++i) {
        Stage &s = *m_stages[i];
        const int height = s.out.height;
        if (s.done < height) {
            // The furthest output row whose input rows are all in (inputRows() grows with its end).
            int lo = s.done, hi = height;
            while (lo < hi) {
                const int mid = lo + (hi - lo + 1) / 2;
                if (s.filter->inputRows(s.done, mid, s.in).last <= available)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            if (lo > s.done) {
                if (i + 1 < m_stages.size()) {
                    for (int y = s.done; y < lo; ++y)
                        s.rows[size_t(y)].reset(new char[size_t(s.out.rowBytes())]);
                }
                runStage(s, s.done, lo);
                s.done = lo;
            }
            // The previous stage's rows that no remaining output row of this one reads.
            if (i > 0) {
                Stage &prev = *m_stages[i - 1];
                const int needed = s.done < height ? s.filter->inputRows(s.done, height, s.in).first : prev.out.height;
                for (int y = prev.releasedBelow; y < std::min(needed, prev.done); ++y)
                    prev.rows[size_t(y)].reset();
                prev.releasedBelow = std::max(prev.releasedBelow, std::min(needed, prev.done));
            }
        }
        available = s.done;
    }
    return outputRowsComplete();
}

void BandProcessor::runStage(Stage &stage, int begin, int end)
{
    const size_t index = size_t(std::find_if(m_stages.begin(), m_stages.end(), [&](const auto &s) { return s.get() == &stage; }) - m_stages.begin());
    RowsIn in;
    in.format = stage.in;
    if (index == 0) {
        in.rowAt = m_inputRow;
        in.base = m_inputBase;
        in.stride = m_inputStride;
    } else {
        Stage *prev = m_stages[index - 1].get();
        in.rowAt = [prev](int y) -> const void * { return prev->rows[size_t(y)].get(); };
    }
    RowsOut out;
    out.format = stage.out;
    if (index + 1 < m_stages.size()) {
        out.rowAt = [&stage](int y) -> void * { return stage.rows[size_t(y)].get(); };
    } else if (m_outputRow) {
        out.rowAt = m_outputRow;
        out.base = m_outputBase;
        out.stride = m_outputStride;
    } else {
        char *base = m_output.data();
        const qsizetype rowBytes = stage.out.rowBytes();
        out.rowAt = [base, rowBytes](int y) -> void * { return base + y * rowBytes; };
        out.base = base;
        out.stride = rowBytes;
    }

    // Bands of rows on the pool; small jobs stay on this thread. Every row is computed the same way wherever
    // its band starts, so the split changes nothing in the result.
    const int threads = m_pool ? m_pool->maxThreadCount() : 1;
    const qint64 work = qint64(end - begin) * std::max<qsizetype>(stage.out.samplesPerRow(), 1);
    if (threads <= 1 || work < 65536 || end - begin < 2) {
        stage.filter->run(in, begin, end, out);
        return;
    }
    const int bands = std::min(end - begin, threads * 4);
    std::vector<RowSpan> spans;
    for (int b = 0; b < bands; ++b)
        spans.push_back(RowSpan{begin + int(qint64(end - begin) * b / bands), begin + int(qint64(end - begin) * (b + 1) / bands)});
    const Filter *filter = stage.filter.get();
    QtConcurrent::blockingMap(m_pool, spans, [filter, &in, &out](const RowSpan &span) { filter->run(in, span.first, span.last, out); });
}

bool isFilterable(PixelFormat format)
{
    return format != PixelFormat::Float64;
}

Error unfilterable()
{
    return Error(ErrorCode::Unsupported, QStringLiteral("the filters work on 8- and 16-bit images and 8-bit colour; this image holds real values "
                                                        "(32-bit or floating-point samples) and is shown unfiltered"));
}

Result<PixelBuffer> applyFilters(const FilterChain &chain, const PixelBuffer &pixels, const ImageInfo &info, QThreadPool *pool)
{
    if (!isFilterable(pixels.format()))
        return chain.isEmpty() ? Result<PixelBuffer>(pixels) : Result<PixelBuffer>(unfilterable());
    const PlaneFormat in = planeFormatOf(pixels, info);
    const PlaneFormat outFormat = chain.outputFormat(in);
    if (PixelBuffer::checkedByteCount(pixels.format(), outFormat.width, outFormat.height, pixels.frames(), qint64(4) << 30) < 0
        || outFormat.width < 1 || outFormat.height < 1) {
        return Error(ErrorCode::InvalidArgument, QStringLiteral("the filtered image would be %1 × %2 × %3 frames: too large")
                                                     .arg(outFormat.width).arg(outFormat.height).arg(pixels.frames()));
    }
    PixelBuffer out(pixels.format(), outFormat.width, outFormat.height, pixels.frames());
    for (int f = 0; f < pixels.frames(); ++f) {
        const uchar *src = pixels.frameData(f);
        uchar *dst = out.frameData(f);
        const qsizetype inRow = in.rowBytes(), outRow = outFormat.rowBytes();
        BandProcessor bp(chain, in, src, inRow, pool, dst, outRow);
        if (chain.isEmpty())
            std::copy(src, src + inRow * in.height, dst);
        else if (bp.inputArrived(in.height) != outFormat.height)
            return Error(ErrorCode::Internal, QStringLiteral("a filter left rows undone"));
    }
    return out;
}

} // namespace spectrum
