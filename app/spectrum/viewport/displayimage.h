// SPDX-License-Identifier: Apache-2.0
#pragma once
// A rendered frame (imaging's renderFrame(): Gray8 or Rgb24 pixels) as a QImage for painting, without a copy.

#include "spectrum/imaging/pixelbuffer.h"
#include "spectrum/imaging/windowlevel.h"

#include <QImage>

#include <optional>

namespace spectrum {

/// Format_Grayscale8 or Format_RGB888 over the buffer's own pixels, which the image keeps alive; a null image
/// for a null buffer. Painting into the image detaches it (a copy), the buffer is never written.
QImage toQImage(const PixelBuffer &rendered);

/// `image` (Format_Grayscale8 or Format_RGB888) shrunk to `size` by averaging, for each output pixel, exactly
/// the area of the input it covers (fractional edges weighted): a line one pixel wide keeps its share of every
/// output pixel it crosses. (Qt's smooth scaling averages only when shrinking by more than half.)
/// Never enlarges: an axis of `size` larger than the image's is kept at the image's (see averagedSize()).
QImage shrinkByAreaAverage(const QImage &image, QSize size);

/// What an image `rendered` big is averaged down to before it is drawn `onScreen` big: each axis that shrinks, to
/// its size on screen; each that is magnified (a plane with anisotropic voxels: the slice direction), as it is — it
/// is stretched when painted. Equal to `rendered` when nothing shrinks.
QSize averagedSize(QSize rendered, QSize onScreen);

/// `image` made exactly `size` big: area-averaged along an axis that shrinks, smoothly interpolated along one that
/// grows (thumbnails, pictures of non-square pixels).
QImage resampledTo(const QImage &image, QSize size);

/// The size an image of `columns` × `rows` pixels of `aspect` (row spacing over column spacing) takes with square
/// pixels: the axis with the wider spacing stretched, never either shrunk (nothing averaged away).
QSize squarePixelSize(int columns, int rows, double aspect);

/// A frame rendered for the screen off the GUI thread, as ImageViewport would render it: instance `key`'s
/// first frame under `window`, as toQImage(renderFrame()) and again as RGB32 for magnified painting.
struct PrerenderedFrame
{
    QString key;
    PixelBuffer source;  ///< the decoded pixels it was rendered from (shared, not copied)
    VoiWindow window;
    QImage rendered;
    QImage paintable;
    /// `rendered` area-averaged to the size it will take on screen, when that is smaller (empty: none made).
    QImage shrunk;
};

/// The first frame of `image` (instance `key`) under `window`, or under its own default window without one.
/// Thread-safe: run on the pool as the image is decoded, so that the pane showing it does no windowing.
PrerenderedFrame prerenderFirstFrame(const DecodedImage &image, const QString &key, const std::optional<VoiWindow> &window);

} // namespace spectrum
