// SPDX-License-Identifier: Apache-2.0
#pragma once
// PixelBuffer: decoded pixels at their native depth — stored values, before any rescale or window.

#include <QtGlobal>

#include <memory>

namespace spectrum {

enum class PixelFormat {
    Gray8,          ///< quint8
    Gray8Signed,    ///< qint8
    Gray16,         ///< quint16
    Gray16Signed,   ///< qint16
    Rgb24,          ///< 3 × quint8, interleaved R G B
    Float64,        ///< double: 32-bit integer samples (RT Dose), Float and Double Float Pixel Data, exactly
};

class PixelBuffer
{
public:
    PixelBuffer() = default;
    /// Zero-filled pixels. Callers check the size first (see checkedByteCount()).
    PixelBuffer(PixelFormat format, int width, int height, int frames);

    PixelFormat format() const { return m_format; }
    int width() const { return m_width; }
    int height() const { return m_height; }
    int frames() const { return m_frames; }
    bool isNull() const { return m_bytes == 0; }
    bool isGray() const { return m_format != PixelFormat::Rgb24; }
    bool isSignedFormat() const { return m_format == PixelFormat::Gray8Signed || m_format == PixelFormat::Gray16Signed; }

    static int bytesPerPixel(PixelFormat format);
    qsizetype frameBytes() const { return qsizetype(m_width) * m_height * bytesPerPixel(m_format); }
    /// Bytes needed for the given image, or -1 when it would overflow or exceed `limit`.
    static qint64 checkedByteCount(PixelFormat format, qint64 width, qint64 height, qint64 frames,
                                   qint64 limit = qint64(1) << 40);

    /// Frames start on 64-byte boundaries when their size is a multiple of 64 (the first always does), so that
    /// vector loads and stores of a row never straddle two cache lines needlessly.
    const uchar *frameData(int frame) const { return m_data.get() + frame * frameBytes(); }
    /// Copies the pixels first when another PixelBuffer shares them (copies are cheap and independent, as
    /// QByteArray's are).
    uchar *frameData(int frame)
    {
        detach();
        return m_data.get() + frame * frameBytes();
    }

    /// The stored value at (x, y) of a gray image; for RGB the luminance-free mean of the three samples. Float64
    /// samples are rounded: sampleAt() gives them exactly.
    int valueAt(int x, int y, int frame = 0) const;
    /// The stored value at (x, y), exactly, whatever the format (RGB: the mean of the three samples).
    double sampleAt(int x, int y, int frame = 0) const;
    /// Smallest and largest stored value of one frame (gray formats; Float64 rounded outward and clamped to int).
    void minMax(int frame, int *outMin, int *outMax) const;
    /// The same, exactly, for every format.
    void minMax(int frame, double *outMin, double *outMax) const;

private:
    PixelFormat m_format = PixelFormat::Gray16;
    int m_width = 0;
    int m_height = 0;
    int m_frames = 0;
    static std::shared_ptr<uchar> allocate(qint64 bytes);
    void detach();
    qint64 m_bytes = 0;
    std::shared_ptr<uchar> m_data;  ///< 64-byte aligned, shared by copies until one of them writes
};

} // namespace spectrum
