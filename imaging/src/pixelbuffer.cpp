// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/pixelbuffer.h"

#include <algorithm>
#include <cmath>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace spectrum {

PixelBuffer::PixelBuffer(PixelFormat format, int width, int height, int frames)
    : m_format(format), m_width(width), m_height(height), m_frames(frames)
{
    const qint64 bytes = checkedByteCount(format, width, height, frames);
    Q_ASSERT(bytes >= 0);
    m_data = allocate(bytes);
    std::memset(m_data.get(), 0, size_t(bytes));
    m_bytes = bytes;
}

std::shared_ptr<uchar> PixelBuffer::allocate(qint64 bytes)
{
    // aligned_alloc wants a size that is a multiple of the alignment.
    const size_t rounded = (size_t(std::max<qint64>(bytes, 1)) + 63) / 64 * 64;
    auto *p = static_cast<uchar *>(std::aligned_alloc(64, rounded));
    if (!p)
        throw std::bad_alloc();
    return std::shared_ptr<uchar>(p, [](uchar *q) { std::free(q); });
}

void PixelBuffer::detach()
{
    if (!m_data || m_data.use_count() == 1)
        return;
    std::shared_ptr<uchar> own = allocate(m_bytes);
    std::memcpy(own.get(), m_data.get(), size_t(m_bytes));
    m_data = std::move(own);
}

int PixelBuffer::bytesPerPixel(PixelFormat format)
{
    switch (format) {
    case PixelFormat::Gray8:
    case PixelFormat::Gray8Signed: return 1;
    case PixelFormat::Gray16:
    case PixelFormat::Gray16Signed: return 2;
    case PixelFormat::Rgb24: return 3;
    case PixelFormat::Float64: return 8;
    }
    return 1;
}

qint64 PixelBuffer::checkedByteCount(PixelFormat format, qint64 width, qint64 height, qint64 frames, qint64 limit)
{
    if (width <= 0 || height <= 0 || frames <= 0)
        return -1;
    // Each factor is below 2^32, so check step by step against the limit before multiplying further.
    qint64 n = width;
    for (qint64 f : {height, frames, qint64(bytesPerPixel(format))}) {
        if (n > limit / f)
            return -1;
        n *= f;
    }
    return n <= std::min<qint64>(limit, std::numeric_limits<qsizetype>::max()) ? n : -1;
}

int PixelBuffer::valueAt(int x, int y, int frame) const
{
    const qsizetype i = qsizetype(y) * m_width + x;
    const uchar *f = frameData(frame);
    switch (m_format) {
    case PixelFormat::Gray8: return f[i];
    case PixelFormat::Gray8Signed: return reinterpret_cast<const qint8 *>(f)[i];
    case PixelFormat::Gray16: return reinterpret_cast<const quint16 *>(f)[i];
    case PixelFormat::Gray16Signed: return reinterpret_cast<const qint16 *>(f)[i];
    case PixelFormat::Rgb24: return (f[3 * i] + f[3 * i + 1] + f[3 * i + 2]) / 3;
    case PixelFormat::Float64: {
        const double v = reinterpret_cast<const double *>(f)[i];
        return std::isfinite(v) ? int(std::lround(std::clamp(v, double(std::numeric_limits<int>::min()), double(std::numeric_limits<int>::max())))) : 0;
    }
    }
    return 0;
}

double PixelBuffer::sampleAt(int x, int y, int frame) const
{
    if (m_format == PixelFormat::Float64)
        return reinterpret_cast<const double *>(frameData(frame))[qsizetype(y) * m_width + x];
    if (m_format == PixelFormat::Rgb24) {
        const uchar *p = frameData(frame) + 3 * (qsizetype(y) * m_width + x);
        return (p[0] + p[1] + p[2]) / 3.0;
    }
    return valueAt(x, y, frame);
}

namespace {
template <typename T>
void minMaxOf(const uchar *data, qsizetype count, int *outMin, int *outMax)
{
    const T *p = reinterpret_cast<const T *>(data);
    T lo = std::numeric_limits<T>::max();
    T hi = std::numeric_limits<T>::lowest();
    for (qsizetype i = 0; i < count; ++i) {
        lo = std::min(lo, p[i]);
        hi = std::max(hi, p[i]);
    }
    *outMin = lo;
    *outMax = hi;
}
} // namespace

void PixelBuffer::minMax(int frame, int *outMin, int *outMax) const
{
    const qsizetype count = qsizetype(m_width) * m_height;
    const uchar *f = frameData(frame);
    switch (m_format) {
    case PixelFormat::Gray8: minMaxOf<quint8>(f, count, outMin, outMax); break;
    case PixelFormat::Gray8Signed: minMaxOf<qint8>(f, count, outMin, outMax); break;
    case PixelFormat::Gray16: minMaxOf<quint16>(f, count, outMin, outMax); break;
    case PixelFormat::Gray16Signed: minMaxOf<qint16>(f, count, outMin, outMax); break;
    case PixelFormat::Rgb24: minMaxOf<quint8>(f, count * 3, outMin, outMax); break;
    case PixelFormat::Float64: {
        double lo = 0, hi = 0;
        minMax(frame, &lo, &hi);
        const double intMin = std::numeric_limits<int>::min(), intMax = std::numeric_limits<int>::max();
        *outMin = int(std::clamp(std::floor(lo), intMin, intMax));
        *outMax = int(std::clamp(std::ceil(hi), intMin, intMax));
        break;
    }
    }
}

void PixelBuffer::minMax(int frame, double *outMin, double *outMax) const
{
    if (m_format != PixelFormat::Float64) {
        int lo = 0, hi = 0;
        minMax(frame, &lo, &hi);
        *outMin = lo;
        *outMax = hi;
        return;
    }
    const double *p = reinterpret_cast<const double *>(frameData(frame));
    const qsizetype count = qsizetype(m_width) * m_height;
    double lo = std::numeric_limits<double>::max(), hi = std::numeric_limits<double>::lowest();
    for (qsizetype i = 0; i < count; ++i) {
        if (!std::isfinite(p[i]))
            continue;  // NaN and infinities (allowed in Float Pixel Data) do not set the window
        lo = std::min(lo, p[i]);
        hi = std::max(hi, p[i]);
    }
    if (lo > hi)
        lo = hi = 0;
    *outMin = lo;
    *outMax = hi;
}

} // namespace spectrum
