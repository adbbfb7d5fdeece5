// SPDX-License-Identifier: Apache-2.0
#pragma once
// A synthetic CT whose every pixel is known, for tests that check what is measured or shown: stored value
// 1024 + x + 10·y with rescale intercept −1024, so pixel (x, y) is x + 10·y HU. Header-only: for tests that link
// the imaging library.

#include "spectrum/imaging/codecs/dicomdecoder.h"

namespace spectrum::test {

inline DecodedImage rampCt(int width, int height, double rowSpacing, double columnSpacing)
{
    DecodedImage image;
    image.info.rows = height;
    image.info.columns = width;
    image.info.bitsAllocated = 16;
    image.info.bitsStored = 16;
    image.info.highBit = 15;
    image.info.photometric = Photometric::Monochrome2;
    image.info.rescaleIntercept = -1024;
    image.info.rowSpacing = rowSpacing;
    image.info.columnSpacing = columnSpacing;
    image.info.identity.modality = QStringLiteral("CT");
    image.pixels = PixelBuffer(PixelFormat::Gray16, width, height, 1);
    auto *p = reinterpret_cast<quint16 *>(image.pixels.frameData(0));
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            p[y * width + x] = quint16(1024 + x + 10 * y);
    return image;
}

} // namespace spectrum::test
