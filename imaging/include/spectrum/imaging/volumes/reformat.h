// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reformatting (MPR): a plane cut through a Volume, thin or as a slab projection (MIP, MinIP, average), in patient
// coordinates. The same code serves the workstation's MPR panes and `spectrum-cli reformat`.
//
// Samples lie on the plane's pixel centres. Where the plane is one of the volume's own planes and its pixels fall on
// voxel centres (the standard planes below), the voxels are copied exactly; elsewhere they are interpolated
// (trilinear, or nearest on request). A pixel is never made from a slot that is not in: its sample needs a gap, a
// slice still arriving or a point outside the volume, and it is marked absent (with which) instead of interpolated
// across. Rows are cut in bands on a thread pool with the filters' instruction-set dispatch (x86-64-v3 where the
// processor has it).

#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/volumes/volume.h"

#include <QByteArray>
#include <QString>

class QThreadPool;

namespace spectrum {

enum class SlabMode { Mip, MinIp, Average };
enum class Interpolation { Trilinear, Nearest };
enum class PlaneOrientation { Axial, Coronal, Sagittal };

/// A plane to cut, in patient coordinates (LPS, mm).
struct ReformatPlane
{
    Vector3 origin{};           ///< the centre of the first pixel (top left)
    Vector3 rowDirection{};     ///< unit: along a row (columns increasing)
    Vector3 columnDirection{};  ///< unit: down a column (rows increasing), perpendicular to rowDirection
    double columnSpacing = 1;   ///< mm between the centres of neighbouring columns
    double rowSpacing = 1;      ///< mm between rows
    int columns = 0, rows = 0;
    double slabThickness = 0;   ///< mm; 0: the plane alone
    SlabMode slabMode = SlabMode::Mip;
    Interpolation interpolation = Interpolation::Trilinear;
    QString name;               ///< what the reader calls it: "coronal", "oblique"

    /// rowDirection × columnDirection.
    Vector3 normal() const;
    /// The patient point at column `c`, row `r` of the plane.
    Vector3 pointAt(double c, double r) const;
};

/// The axial, coronal or sagittal plane through `point`, covering the whole volume. It is made of the volume's own
/// axes nearest to the patient's (the acquired plane stays the acquired plane, a slightly rotated patient is not
/// resampled), with the volume's spacing, and `point` moved to the nearest voxel centre: its pixels are voxels.
ReformatPlane standardPlane(const VolumeGeometry &g, PlaneOrientation orientation, const Vector3 &point);
/// A plane through `point` along the given directions (made perpendicular), covering the volume, its pixels as
/// fine as the volume's finest spacing.
ReformatPlane planeThrough(const VolumeGeometry &g, const Vector3 &point, const Vector3 &rowDirection, const Vector3 &columnDirection);

/// Why a pixel of a cut plane has no value.
enum class PixelAbsence : quint8 {
    Present = 0,
    Outside,   ///< the point lies outside the volume
    Gap,       ///< it needs a slot no slice of the series fills, or a slice that was refused
    Arriving,  ///< it needs a slice that has not come yet
};

struct ReformattedImage
{
    /// Volume values (Gray16, or Gray16Signed for a signed volume): modality value = value × slope + intercept as
    /// `info` says. Absent pixels hold `paddingValue`, a value no present pixel has.
    PixelBuffer pixels;
    /// Where the plane lies (Image Position and Orientation, Pixel Spacing, Slice Thickness: the slab's), its values'
    /// rescale and windows, and the series' identity (no SOP Instance UID: no instance holds this image).
    ImageInfo info;
    /// One PixelAbsence per pixel, row after row; empty when every pixel is present.
    QByteArray absence;
    int absentPixels[4] = {0, 0, 0, 0};  ///< how many of each PixelAbsence
    int paddingValue = 0;
    /// Whether no present pixel holds paddingValue (false only when the present pixels use every 16-bit value).
    bool paddingUnique = true;
    /// Samples across the slab (1: a thin plane — also when the slab asked for is thinner than one voxel step).
    int slabSamples = 1;
    /// "coronal · MIP 20 mm · trilinear": what was cut, for the screen and a Derivation Description.
    QString description;

    bool isPresent(int x, int y) const { return absence.isEmpty() || absence[qsizetype(y) * pixels.width() + x] == 0; }
};

/// Cuts `plane` through what is in `volume` now (slots filled later are not read). `pool`: bands of rows run on
/// it, the calling thread helping (nullptr: all on the calling thread).
ReformattedImage reformat(const Volume &volume, const ReformatPlane &plane, QThreadPool *pool = nullptr);

/// The name of a slab mode as written in descriptions and options: "MIP", "MinIP", "average".
QString slabModeName(SlabMode mode);

} // namespace spectrum
