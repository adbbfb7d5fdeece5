// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/windowlevel.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace spectrum {

namespace {
// The linear VOI function of PS3.3 C.11.2.1.2.1 as a real number in [0, 255].
double windowed(double x, const VoiWindow &window)
{
    const double width = std::max(1.0, window.width);
    const double c = window.center - 0.5;
    const double w = width - 1;
    if (x <= c - w / 2)
        return 0;
    if (x > c + w / 2 || w <= 0)
        return 255;
    return ((x - c) / w + 0.5) * 255.0;
}

// Truncation, not rounding, and inversion before truncating: the same integer mapping as DCMTK's renderer,
// so both show identical pixels.
quint8 toDisplay(double y, bool invert)
{
    return quint8(std::clamp(int(invert ? 255.0 - y : y), 0, 255));
}
} // namespace

quint8 applyWindow(double x, const VoiWindow &window)
{
    return toDisplay(windowed(x, window), false);
}

VoiWindow minMaxWindow(const DecodedImage &image, int frame)
{
    double lo = 0, hi = 0;
    image.pixels.minMax(frame, &lo, &hi);
    const double a = image.info.toModalityValue(lo);
    const double b = image.info.toModalityValue(hi);
    const double mn = std::min(a, b), mx = std::max(a, b);
    if (image.pixels.format() == PixelFormat::Float64)  // real values: no "+1" of integer sample steps
        return VoiWindow{(mn + mx) / 2, std::max(mx - mn, 1e-9)};
    return VoiWindow{(mn + mx + 1) / 2, std::max(1.0, mx - mn + 1)};
}

VoiWindow defaultWindow(const DecodedImage &image, int frame)
{
    if (!image.info.windows.isEmpty())
        return VoiWindow{image.info.windows.first().center, image.info.windows.first().width};
    return minMaxWindow(image, frame);
}

namespace {
template <typename T>
void renderGray(const T *src, uchar *dst, qsizetype pixels, const std::vector<quint8> &lut, int lutOffset)
{
    for (qsizetype i = 0; i < pixels; ++i)
        dst[i] = lut[size_t(int(src[i]) + lutOffset)];
}
} // namespace

namespace {
/// Renders a gray frame through `displayOf(modality value)` → 0…255, one lookup table entry per stored value.
template <typename DisplayOf>
PixelBuffer renderGrayFrame(const DecodedImage &image, int frame, DisplayOf displayOf);
} // namespace

PixelBuffer renderFrame(const DecodedImage &image, int frame, const VoiLut &voi)
{
    if (voi.data.isEmpty())
        return PixelBuffer();
    const double top = double((1 << voi.bits) - 1);
    return renderGrayFrame(image, frame, [&voi, top](double modality) {
        const int index = std::clamp(int(std::floor(modality)) - voi.firstMapped, 0, int(voi.data.size()) - 1);
        return std::min(255.0, voi.data[index] * 255.0 / top);
    });
}

PixelBuffer renderFrame(const DecodedImage &image, int frame, const VoiWindow &window)
{
    if (image.pixels.format() == PixelFormat::Float64) {
        // Real values (dose, parametric maps): the exact linear function (PS3.3 C.11.2.1.3.2, LINEAR_EXACT),
        // any width above zero — the integer formula's "width − 1" would make a 0…1 map black and white.
        const double width = std::max(window.width, 1e-12);
        return renderGrayFrame(image, frame, [&window, width](double x) {
            return std::isfinite(x) ? std::clamp(((x - window.center) / width + 0.5) * 255.0, 0.0, 255.0) : 0.0;
        });
    }
    return renderGrayFrame(image, frame, [&window](double modality) { return windowed(modality, window); });
}

namespace {
template <typename DisplayOf>
PixelBuffer renderGrayFrame(const DecodedImage &image, int frame, DisplayOf displayOf)
{
    const PixelBuffer &px = image.pixels;
    if (px.isNull() || frame < 0 || frame >= px.frames())
        return PixelBuffer();
    const int w = px.width(), h = px.height();

    if (px.format() == PixelFormat::Rgb24) {
        PixelBuffer out(PixelFormat::Rgb24, w, h, 1);
        std::copy_n(px.frameData(frame), px.frameBytes(), out.frameData(0));
        return out;
    }

    const bool invert = image.info.photometric == Photometric::Monochrome1;
    if (px.format() == PixelFormat::Float64) {  // no table over every possible value: each pixel computed
        PixelBuffer out(PixelFormat::Gray8, w, h, 1);
        const double *src = reinterpret_cast<const double *>(px.frameData(frame));
        uchar *dst = out.frameData(0);
        for (qsizetype i = 0, n = qsizetype(w) * h; i < n; ++i)
            dst[i] = toDisplay(displayOf(image.info.toModalityValue(src[i])), invert);
        return out;
    }

    // One LUT entry per possible stored value: window + rescale + inversion cost one lookup per pixel.
    int lutMin = 0, lutMax = 255;
    switch (px.format()) {
    case PixelFormat::Gray8: lutMin = 0; lutMax = 255; break;
    case PixelFormat::Gray8Signed: lutMin = -128; lutMax = 127; break;
    case PixelFormat::Gray16: lutMin = 0; lutMax = 65535; break;
    case PixelFormat::Gray16Signed: lutMin = -32768; lutMax = 32767; break;
    case PixelFormat::Rgb24:
    case PixelFormat::Float64: break;
    }
    std::vector<quint8> lut(size_t(lutMax - lutMin + 1));
    for (int v = lutMin; v <= lutMax; ++v) {
        lut[size_t(v - lutMin)] = toDisplay(displayOf(image.info.toModalityValue(v)), invert);
    }

    PixelBuffer out(PixelFormat::Gray8, w, h, 1);
    const uchar *src = px.frameData(frame);
    uchar *dst = out.frameData(0);
    const qsizetype pixels = qsizetype(w) * h;
    const int offset = -lutMin;
    switch (px.format()) {
    case PixelFormat::Gray8: renderGray(reinterpret_cast<const quint8 *>(src), dst, pixels, lut, offset); break;
    case PixelFormat::Gray8Signed: renderGray(reinterpret_cast<const qint8 *>(src), dst, pixels, lut, offset); break;
    case PixelFormat::Gray16: renderGray(reinterpret_cast<const quint16 *>(src), dst, pixels, lut, offset); break;
    case PixelFormat::Gray16Signed: renderGray(reinterpret_cast<const qint16 *>(src), dst, pixels, lut, offset); break;
    case PixelFormat::Rgb24:
    case PixelFormat::Float64: break;
    }
    return out;
}

} // namespace

} // namespace spectrum
