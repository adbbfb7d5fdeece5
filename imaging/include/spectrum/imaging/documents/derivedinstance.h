// SPDX-License-Identifier: Apache-2.0
#pragma once
// A processed image as a new DICOM instance that an archive can take back (PS3.3 C.7.6.1.1.2 "Derived"):
// the same patient and study; new Series and SOP Instance UIDs under our own 2.25 root; Image Type
// DERIVED\SECONDARY; a Derivation Description naming the processing; a Source Image Sequence pointing at the
// original; the original's SOP class where a derived image of that class is valid (CT, MR, CR, DX, MG, US, XA,
// RF, NM, PET, SC), Secondary Capture otherwise; the processed pixels at their native depth, uncompressed
// (explicit VR little endian).

#include "spectrum/core/bytes.h"
#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/result.h"
#include "spectrum/imaging/pixelbuffer.h"

#include <QList>

#include <array>
#include <optional>
#include <utility>

namespace spectrum {

/// Where a reformatted image (a plane cut through a volume) lies and what it was made from: written in place of
/// the original's geometry.
struct DerivedPlane
{
    std::array<double, 3> position{};      ///< Image Position (Patient)
    std::array<double, 6> orientation{};   ///< Image Orientation (Patient)
    double rowSpacing = 0, columnSpacing = 0;
    double sliceThickness = 0;             ///< a slab's thickness; 0: Slice Thickness removed
    double rescaleSlope = 1, rescaleIntercept = 0;
    std::optional<int> paddingValue;       ///< Pixel Padding Value: where the plane has no value
    QStringList imageTypeValues;           ///< Image Type after DERIVED\SECONDARY (REFORMATTED, MAX_IP…)
    QList<std::pair<QString, QString>> sources;  ///< SOP Class and Instance UIDs of the images it was made from
};

struct Derivation
{
    QString description;        ///< e.g. "unsharp mask amount=1.5 radius=2; invert" (up to 1024 characters)
    QString seriesInstanceUid;  ///< the derived series (share it between the instances of one series); empty: new
    QString seriesDescription;  ///< empty: the original's with " (processed)"
    int seriesNumber = 0;       ///< 0: the original's + 1000
    std::optional<DerivedPlane> plane;  ///< set: a plane cut from a volume (its own geometry and sources)
    /// The pixels given are the original's own, unchanged (an unprocessed copy): the original's pixel data is then
    /// kept at its depth — native, or decompressed by DCMTK's codecs (colour of 16 bits a sample, 32-bit and real
    /// samples) — and the pixels given are written only where it cannot be (JPEG 2000).
    bool pixelsAreTheOriginals = false;
};

struct DerivedInstance
{
    QByteArray bytes;           ///< DICOM Part 10
    DicomIdentity identity;
};

/// Builds the derived instance of `original` (a whole DICOM file) with `pixels`. The pixels may differ from the
/// original's in size (zoom, rotate): Rows/Columns follow them, Pixel Spacing is scaled, and the patient
/// geometry (position, orientation), which no longer holds, is removed.
Result<DerivedInstance> makeDerivedInstance(const ByteView &original, const PixelBuffer &pixels, const Derivation &derivation);

} // namespace spectrum
