// SPDX-License-Identifier: Apache-2.0
#pragma once
// Window/level: stored values → modality values (rescale) → VOI window → 8-bit display, as DICOM PS3.3
// C.11.2.1.2.1 defines the linear function (and DCMTK's dcm2pnm renders it). MONOCHROME1 displays inverted.

#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/pixelbuffer.h"

namespace spectrum {

/// A VOI window in modality units (HU for CT).
struct VoiWindow
{
    double center = 0;
    double width = 1;  ///< values below 1 are treated as 1

    double lower() const { return center - 0.5 - (width - 1) / 2; }
    double upper() const { return center - 0.5 + (width - 1) / 2; }
    friend bool operator==(const VoiWindow &a, const VoiWindow &b) { return a.center == b.center && a.width == b.width; }
};

/// The window a radiologist sees first: the file's first preset, else the frame's min/max modality values.
VoiWindow defaultWindow(const DecodedImage &image, int frame = 0);
/// The window spanning the frame's smallest to largest modality value.
VoiWindow minMaxWindow(const DecodedImage &image, int frame = 0);

/// The display value (0…255) of one modality value under `window`, before any MONOCHROME1 inversion.
quint8 applyWindow(double modalityValue, const VoiWindow &window);

/// Renders one frame for display: one frame of PixelFormat::Gray8 for monochrome images, Rgb24 for colour (window
/// not applied), rows packed; null when there is no such frame. Thread-safe; a 512 × 512 16-bit frame takes a
/// 64 K-entry lookup table and one pass. Plain pixels, no QImage: imaging needs no GUI library, so neither do the
/// servers and tools built on it (the workstation wraps them without a copy, app/spectrum/displayimage.h).
PixelBuffer renderFrame(const DecodedImage &image, int frame, const VoiWindow &window);
/// The same through one of the file's VOI LUTs (info.voiLuts) instead of a window.
PixelBuffer renderFrame(const DecodedImage &image, int frame, const VoiLut &lut);

} // namespace spectrum
