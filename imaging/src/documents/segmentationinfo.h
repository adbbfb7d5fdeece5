// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to imaging: what a Segmentation says about its segments (label, colour) and about each frame (the
// segment it marks, the source image it lies on), read with DCMTK — for showing it over its source.

#include "dcmtksupport.h"

#include "spectrum/imaging/imageinfo.h"

namespace spectrum::dcmtk {

/// Fills `info.segments` and `info.segmentFrames` from a Segmentation's Segment Sequence and its per-frame
/// functional groups (Segment Identification, Derivation Image); nothing for other objects.
void readSegmentation(DcmItem *dataset, const DicomTextDecoder &text, ImageInfo &info);

/// sRGB for a DICOM CIELab triplet (PS3.3 C.10.7.1.1: L*, a*, b* scaled to 0…65535; D65 white).
std::array<quint8, 3> rgbFromDicomLab(quint16 l, quint16 a, quint16 b);

} // namespace spectrum::dcmtk
