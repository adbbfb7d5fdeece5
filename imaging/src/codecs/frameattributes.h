// SPDX-License-Identifier: Apache-2.0
#pragma once
// Per-frame attributes of multi-frame images, read with DCMTK: an enhanced object's functional groups (PS3.3
// C.7.6.16 — Pixel Measures, Plane Position and Orientation, Pixel Value Transformation, Frame VOI LUT), shared
// and per frame, and the timing of a cine loop (Frame Time, Frame Time Vector, Cine Rate). Private to imaging.

#include "dcmtksupport.h"

#include "spectrum/imaging/imageinfo.h"

namespace spectrum::dcmtk {

/// Window Center / Width (and their explanations) of `item`.
QList<WindowPreset> readWindows(DcmItem *item, const DicomTextDecoder &text);

/// Fills `info.perFrame` (when the frames differ), the timing fields, and puts the shared groups' — or the first
/// frame's — geometry, rescale and windows in `info`'s own fields where the top level has none: an enhanced CT's
/// rescale to HU lives only in its functional groups. `info` holds the top level's attributes on entry.
void readFrameAttributes(DcmItem *dataset, const DicomTextDecoder &text, ImageInfo &info);

} // namespace spectrum::dcmtk
