// SPDX-License-Identifier: Apache-2.0
#pragma once
// Measurements a radiologist takes on an image, in the units they read: distances and areas in mm (from Pixel
// Spacing), pixel values and region statistics in modality units (HU for CT, after the rescale).
//
// Positions are image coordinates in pixels: (0, 0) is the top-left corner of the first pixel, so pixel
// (x, y) covers [x, x + 1) × [y, y + 1) and its centre is (x + 0.5, y + 0.5).

#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/windowlevel.h"

#include <QPointF>
#include <QList>
#include <QRectF>

#include <optional>

namespace spectrum {

enum class RegionShape { Rectangle, Ellipse };

struct RegionStatistics
{
    qint64 pixels = 0;            ///< pixels whose centre lies inside the region
    double mean = 0;
    double standardDeviation = 0; ///< of the population of those pixels
    double minimum = 0;
    double maximum = 0;
    double areaPixels = 0;        ///< the drawn shape's area, in pixels²
    double areaMm2 = -1;          ///< the same in mm²; −1 without Pixel Spacing
};

/// The pixel under `position`, or nothing outside the image.
std::optional<QPoint> pixelAt(const ImageInfo &info, QPointF position);
/// The modality value of pixel `pixel` of `frame` (gray images; for colour, the mean of its samples).
double modalityValueAt(const DecodedImage &image, int frame, QPoint pixel);

/// The distance from `a` to `b` in mm, rows and columns each scaled by their spacing; −1 without Pixel Spacing.
double distanceMm(const ImageInfo &info, QPointF a, QPointF b);
/// The distance in pixels.
double distancePixels(QPointF a, QPointF b);

/// Statistics of the modality values inside the rectangle `bounds`, or the ellipse inscribed in it, clipped to
/// the image. A region without any pixel centre inside has pixels == 0 and zero statistics.
RegionStatistics regionStatistics(const DecodedImage &image, int frame, RegionShape shape, const QRectF &bounds);
/// The same inside a closed polygon (its vertices; the last joins the first), by the even-odd rule; the area by
/// the shoelace formula.
RegionStatistics regionStatistics(const DecodedImage &image, int frame, const QList<QPointF> &polygon);

/// The windows radiologists call up by name for CT (keys 1–5 in the viewer), in HU: brain, lung, bone, abdomen,
/// mediastinum.
const QList<WindowPreset> &ctWindowPresets();

/// A window from the image's own values: 0.5th to 99.5th percentile of the frame's modality values, so a few
/// extreme pixels (metal, the air outside the body) do not flatten everything else.
VoiWindow autoWindow(const DecodedImage &image, int frame = 0);

} // namespace spectrum
