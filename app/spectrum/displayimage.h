#pragma once
// A rendered frame (imaging's renderFrame(): Gray8 or Rgb24 pixels) as a QImage for painting, without a copy.

#include "spectrum/imaging/pixelbuffer.h"

#include <QImage>

namespace spectrum {

/// Format_Grayscale8 or Format_RGB888 over the buffer's own pixels, which the image keeps alive; a null image
/// for a null buffer. Painting into the image detaches it (a copy), the buffer is never written.
QImage toQImage(const PixelBuffer &rendered);

/// `image` (Format_Grayscale8 or Format_RGB888) shrunk to `size` by averaging, for each output pixel, exactly
/// the area of the input it covers (fractional edges weighted): a line one pixel wide keeps its share of every
/// output pixel it crosses. (Qt's smooth scaling averages only when shrinking by more than half.)
QImage shrinkByAreaAverage(const QImage &image, QSize size);

} // namespace spectrum
