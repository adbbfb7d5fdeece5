// SPDX-License-Identifier: Apache-2.0
#include "viewport/displayimage.h"

#include <vector>

#include <cmath>

#include <algorithm>

#include <utility>

namespace spectrum {

QImage toQImage(const PixelBuffer &rendered)
{
    if (rendered.isNull())
        return QImage();
    const bool gray = rendered.format() == PixelFormat::Gray8;
    if (!gray && rendered.format() != PixelFormat::Rgb24)
        return QImage();  // not a rendered frame
    auto *owner = new PixelBuffer(rendered);  // shares the pixels; released with the image's last copy
    const qsizetype bytesPerLine = qsizetype(rendered.width()) * PixelBuffer::bytesPerPixel(rendered.format());
    const uchar *pixels = std::as_const(*owner).frameData(0);  // the const overload: no copy
    return QImage(pixels, rendered.width(), rendered.height(), bytesPerLine,
                  gray ? QImage::Format_Grayscale8 : QImage::Format_RGB888,
                  [](void *p) { delete static_cast<PixelBuffer *>(p); }, owner);
}

PrerenderedFrame prerenderFirstFrame(const DecodedImage &image, const QString &key, const std::optional<VoiWindow> &window)
{
    PrerenderedFrame out;
    const DecodedImage first{image.info.frame(0), image.pixels};  // what the viewport shows of a new image
    out.key = key;
    out.source = image.pixels;
    out.window = window ? *window : defaultWindow(first, 0);
    if (window)  // as the viewport takes a window it is given (ImageViewport::withUsableWidth)
        out.window.width = std::max(image.pixels.format() == PixelFormat::Float64 ? 1e-9 : 1.0, out.window.width);
    out.rendered = toQImage(renderFrame(first, 0, out.window));
    if (!out.rendered.isNull())
        out.paintable = out.rendered.convertToFormat(QImage::Format_RGB32);
    return out;
}

namespace {
/// For each output index along one axis: the input span it covers, as (first input index, weights).
struct Span
{
    int first = 0;
    std::vector<float> weights;
};

std::vector<Span> spans(int in, int out)
{
    std::vector<Span> result(static_cast<size_t>(out));
    const double step = double(in) / out;
    for (int o = 0; o < out; ++o) {
        const double a = o * step, b = (o + 1) * step;
        Span &sp = result[size_t(o)];
        sp.first = int(std::floor(a));
        const int last = std::min(in - 1, int(std::ceil(b)) - 1);
        for (int i = sp.first; i <= last; ++i)
            sp.weights.push_back(float((std::min(b, i + 1.0) - std::max(a, double(i))) / step));
    }
    return result;
}
} // namespace

QImage shrinkByAreaAverage(const QImage &image, QSize size)
{
    const QImage src = image.format() == QImage::Format_Grayscale8 || image.format() == QImage::Format_RGB888 ? image
                                                                                                              : image.convertToFormat(QImage::Format_RGB888);
    const int channels = src.format() == QImage::Format_Grayscale8 ? 1 : 3;
    const int w = src.width(), h = src.height();
    const int ow = std::max(1, std::min(size.width(), w)), oh = std::max(1, std::min(size.height(), h));
    const std::vector<Span> across = spans(w, ow), down = spans(h, oh);
    // Rows first (each input row averaged across), then columns.
    std::vector<float> rows(size_t(ow) * h * channels);
    for (int y = 0; y < h; ++y) {
        const uchar *line = src.constScanLine(y);
        float *out = rows.data() + size_t(y) * ow * channels;
        for (int x = 0; x < ow; ++x) {
            const Span &sp = across[size_t(x)];
            for (int c = 0; c < channels; ++c) {
                float sum = 0;
                for (size_t k = 0; k < sp.weights.size(); ++k)
                    sum += sp.weights[k] * line[(sp.first + int(k)) * channels + c];
                out[x * channels + c] = sum;
            }
        }
    }
    QImage result(ow, oh, src.format());
    for (int y = 0; y < oh; ++y) {
        const Span &sp = down[size_t(y)];
        uchar *line = result.scanLine(y);
        for (int x = 0; x < ow * channels; ++x) {
            float sum = 0;
            for (size_t k = 0; k < sp.weights.size(); ++k)
                sum += sp.weights[k] * rows[size_t(sp.first + int(k)) * ow * channels + x];
            line[x] = uchar(std::clamp(int(sum + 0.5f), 0, 255));
        }
    }
    return result;
}

QSize averagedSize(QSize rendered, QSize onScreen)
{
    return QSize(std::max(1, std::min(onScreen.width(), rendered.width())), std::max(1, std::min(onScreen.height(), rendered.height())));
}

QImage resampledTo(const QImage &image, QSize size)
{
    size = size.expandedTo(QSize(1, 1));  // a sliver of an image is a pixel wide, never its own size
    if (image.isNull() || image.size() == size)
        return image;
    QImage averaged = averagedSize(image.size(), size) == image.size() ? image : shrinkByAreaAverage(image, size);
    // What is left to do only enlarges, where smooth interpolation adds no detail and drops none.
    return averaged.size() == size ? averaged : averaged.scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
}

QSize squarePixelSize(int columns, int rows, double aspect)
{
    if (!(aspect > 0) || !std::isfinite(aspect))
        aspect = 1;
    return QSize(std::max(1, int(std::lround(columns * std::max(1.0, 1.0 / aspect)))), std::max(1, int(std::lround(rows * std::max(1.0, aspect)))));
}

} // namespace spectrum
