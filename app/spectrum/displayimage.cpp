#include "displayimage.h"

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

} // namespace spectrum
