// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to imaging: how stored pixel data becomes a PixelBuffer, decided once from the header and then applied
// row by row — by the whole-file decoder and by the streaming one alike, so both give the same pixels.

#include "dcmtksupport.h"
#include "spectrum/imaging/imageinfo.h"
#include "spectrum/imaging/pixelbuffer.h"

#include <array>
#include <vector>

namespace spectrum::pixels {

/// One palette colour lookup table (PS3.3 C.7.6.3.1.5).
struct PaletteTable
{
    int entries = 0;
    int first = 0;
    int bits = 0;
    std::vector<quint8> values;  ///< the high byte of each entry, `entries` of them
};

struct Plan
{
    PixelFormat format = PixelFormat::Gray16;  ///< of the output
    bool gray = false;
    bool color = false;    ///< RGB or YBR_FULL / YBR_FULL_422 (8 bits), turned into RGB
    bool ybr = false;
    bool ybr422 = false;   ///< two pixels share their Cb and Cr: Y Y Cb Cr
    bool palette = false;  ///< indices mapped to RGB through `tables`
    int planar = 0;        ///< colour stored plane by plane: rows are only whole with the frame
    int bytesPerSample = 2;
    bool floatSamples = false;  ///< Float / Double Float Pixel Data (into Float64)
    bool bitPacked = false;     ///< 1-bit samples, packed across rows and frames (into Gray8, 0 or 1)
    int colourShift = 0;        ///< 16-bit colour: the shift that brings Bits Stored to the screen's 8 bits
    qsizetype storedRowBytes = 0;    ///< one row as stored (interleaved data)
    qsizetype storedFrameBytes = 0;  ///< one frame as stored
    std::array<PaletteTable, 3> tables;
};

/// The plan for `info` (read from `dataset`, after any decompression). Unsupported photometric interpretations,
/// colour deeper than 8 bits and images too large for memory are clear errors.
/// `jpeg2000`: the pixels come from OpenJPEG, which turns YBR_RCT / YBR_ICT into RGB itself. `info` is updated
/// to what the pixels will be (colour: RGB, three samples).
Result<Plan> makePlan(DcmItem *dataset, ImageInfo &info, bool jpeg2000 = false);

/// Rows [first, first + count) of one frame: `rows` holds them as stored (interleaved, in host byte order);
/// written into `frameOut` (the PixelBuffer's frame) at the same rows. `info` describes the stored data (before
/// makePlan changed it).
void convertRows(const Plan &plan, const ImageInfo &info, const uchar *rows, int first, int count, uchar *frameOut);
/// A whole frame stored plane by plane (Planar Configuration 1).
void convertPlanarFrame(const Plan &plan, const ImageInfo &info, const uchar *stored, uchar *frameOut);
/// Palette indices (Gray8 or Gray16 samples, `count` of them) to RGB.
void applyPalette(const Plan &plan, const uchar *indices, PixelFormat indexFormat, qsizetype count, uchar *rgb);

} // namespace spectrum::pixels
