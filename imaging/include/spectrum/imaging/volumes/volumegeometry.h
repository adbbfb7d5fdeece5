// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the slices of a series lie as one volume: the first step of reformatting (MPR). From the slices' headers alone
// — Image Position and Orientation (Patient), Pixel Spacing, size, Frame of Reference — before a pixel is decoded:
// their order along the normal, the spacing between them from their positions (never from Slice Thickness), the
// places no slice fills (missing, shown as missing, never interpolated across), spacing that is not even, and what
// makes a volume impossible, said plainly (other orientations or sizes, another frame of reference, a tilted
// gantry's sheared stack, two slices at one place). Slices may come in any order and one at a time: the geometry is
// made again as they arrive.

#include "spectrum/imaging/imageinfo.h"
#include "spectrum/imaging/volumes/vector3.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <array>

namespace spectrum {

/// One slice of the series, as its header says (a frame of a multi-frame image is one too).
struct VolumeSlice
{
    QString key;        ///< whatever names it for the caller (a cache key, a file)
    int frame = 0;      ///< which frame of that image
    ImageInfo info;     ///< its geometry: position, orientation, spacing, rows and columns, frame of reference
};

/// The slices an image gives: one, or one per frame of a multi-frame image (an enhanced CT or MR), each with that
/// frame's own position, orientation, spacing and rescale.
QList<VolumeSlice> volumeSlices(const QString &key, const ImageInfo &info);

struct VolumeGeometry
{
    bool ok = false;
    QString refusal;              ///< why there is no volume (ok false), in words a reader can act on

    int columns = 0, rows = 0;    ///< of every slice
    int slotCount = 0;                ///< places along the normal, from the first slice to the last, filled or not
    Vector3 origin{};             ///< the first slot's first pixel centre (LPS, mm)
    Vector3 rowDirection{};       ///< along a row (columns increasing)
    Vector3 columnDirection{};    ///< down a column (rows increasing)
    Vector3 normal{};             ///< row × column: the direction the slots go in
    Vector3 spacing{};            ///< between columns, rows and slots (mm)
    QString frameOfReferenceUid;

    /// Which slice fills each slot (an index into the slices given), -1 where none does.
    QList<int> slotSlice;
    /// Slots no slice fills (between the first and the last): gaps, shown as missing.
    QList<int> missing;
    /// Where the spacing is not the volume's: the slots whose slice lies more than a tenth of the spacing off its
    /// place (it is put in the nearest slot), said.
    QStringList unevenSpacing;
    QStringList notes;            ///< what else the reader should know (slices left out, and why)
    /// Laid out while the series arrives, before it was listed (ArrivingVolume): the slots no slice fills yet are
    /// awaited — arriving, not gaps — and are filled with Volume::fillSlot as their slices come.
    bool awaiting = false;

    /// The patient point (LPS, mm) at column `c`, row `r`, slot `s` (pixel centres at whole numbers).
    Vector3 patientPoint(double c, double r, double s) const;
};

/// How the spacing between slots is taken from the steps between neighbouring slices.
enum class SlotSpacing {
    Usual,   ///< the usual step (the lower median): a whole series, where a longer step is a gap
    Finest,  ///< the shortest step: the slices come so far of a series still arriving, where longer steps await slices
};

/// The volume the slices make (see the header's comment). Slices without position, orientation or spacing, or of
/// another size, are left out with a note when the others agree; a series that cannot make one volume is refused.
VolumeGeometry volumeGeometry(const QList<VolumeSlice> &slices, SlotSpacing spacing = SlotSpacing::Usual);

} // namespace spectrum
