// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the patient lies on screen, as the overlay says it: the patient directions at the image's edges after the
// view's turns and flips, and a scale bar of a round length — both from the image's geometry (orientation, pixel
// spacing) and the view (viewgeometry.h); none where the image does not say.

#include "viewport/viewgeometry.h"

#include "spectrum/imaging/imageinfo.h"

#include <QString>

#include <array>
#include <optional>
#include <utility>

namespace spectrum {

/// The patient direction a vector points to, as letters ("L", "PH"…), strongest first (LPS coordinates).
QString patientDirectionLabel(const std::array<double, 3> &direction);

/// The patient directions at the image's edges as shown — after rotation and flips — ("L", "A", "HF"…).
struct ScreenDirections
{
    QString left, right, up, down;
};
/// Empty without Image Orientation (or without an image in `view`).
ScreenDirections screenDirections(const ImageInfo &info, const ViewGeometry &view);

/// The scale bar: its length in mm and on screen in pixels (the longest of 1, 2, 5 × 10ⁿ mm that fits in 120
/// pixels); none without Pixel Spacing.
std::optional<std::pair<double, double>> scaleBar(const ImageInfo &info, const ViewGeometry &view);

} // namespace spectrum
