// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where an image lies in the patient, for what links panes: a pixel's place in patient coordinates, a patient
// point's place on an image, and the reference line — where one slice's plane cuts another image.
//
// Image coordinates are those the viewer paints in: pixel (column c, row r) covers [c, c+1] × [r, r+1], its
// centre at (c + ½, r + ½); Image Position (Patient) is the centre of the first pixel (PS3.3 C.7.6.2.1.1).

#include "spectrum/imaging/imageinfo.h"

#include <QLineF>
#include <QPointF>

#include <array>
#include <optional>

namespace spectrum {

using PatientPoint = std::array<double, 3>;

/// Whether `info` has what these need: a position, an orientation and pixel spacing.
bool hasPlaneGeometry(const ImageInfo &info);
/// The patient point (mm) at image coordinates `at`; nullopt without geometry.
std::optional<PatientPoint> patientPointAt(const ImageInfo &info, QPointF at);
/// Where `point` falls on the image — projected onto its plane — in image coordinates, and (when asked) how far
/// from the plane it lies (mm, along the normal); nullopt without geometry.
std::optional<QPointF> imagePointOf(const ImageInfo &info, const PatientPoint &point, double *distanceMm = nullptr);
/// The reference line of `slice` on `image`: where `slice`'s plane cuts `image`'s plane, the part within
/// `slice`'s extent, in `image`'s coordinates. nullopt when either has no geometry, they lie in other frames of
/// reference, their planes are parallel (within ~5°), or the slice does not reach the image's plane.
std::optional<QLineF> referenceLine(const ImageInfo &image, const ImageInfo &slice);

} // namespace spectrum
