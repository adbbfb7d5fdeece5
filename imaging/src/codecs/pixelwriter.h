// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to imaging: writes a PixelBuffer into a DCMTK dataset as native (uncompressed) Pixel Data, with the
// Image Pixel attributes that describe it.

#include "dcmtksupport.h"
#include "spectrum/imaging/pixelbuffer.h"

namespace spectrum::dcmtk {

/// Replaces Pixel Data and sets Rows, Columns, Samples per Pixel, Bits Allocated, Pixel Representation, Planar
/// Configuration, Number of Frames and the photometric interpretation (RGB for colour; MONOCHROME1 kept, else
/// MONOCHROME2). `bitsStored` > 0 keeps that precision (and High Bit = bitsStored − 1) when it fits the format;
/// 0: all bits of the format.
Error writeNativePixels(DcmDataset *dataset, const PixelBuffer &pixels, int bitsStored = 0);

} // namespace spectrum::dcmtk
