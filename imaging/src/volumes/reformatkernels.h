// SPDX-License-Identifier: Apache-2.0
#pragma once
// The inner loops of reformatting: the rows of a plane cut through a volume, in the volume's index space (x along
// a slice's rows, y down its columns, z across its slots; voxel centres at whole numbers). Built for two
// instruction sets like the filters' kernels (filters/kernels.h), chosen at run time; both give the same values.

#include "spectrum/imaging/volumes/reformat.h"

namespace spectrum::reformatting {

struct CutJob
{
    const quint16 *voxels = nullptr;  ///< slot after slot, row after row (qint16 bits when isSigned)
    bool isSigned = false;
    int nx = 0, ny = 0, nz = 0;
    /// Per slot: 0 when it may be read, else the PixelAbsence of a sample that needs it (Gap, Arriving).
    const quint8 *slotAbsence = nullptr;
    bool allSlotsIn = false;
    int width = 0;                    ///< pixels per output row
    double origin[3] = {};            ///< index of output pixel (0, 0) at the slab's first sample
    double columnStep[3] = {};        ///< index step from one output column to the next
    double rowStep[3] = {};           ///< from one output row to the next
    double sampleStep[3] = {};        ///< from one sample of the slab to the next
    int samples = 1;                  ///< samples across the slab (1: a thin plane)
    SlabMode mode = SlabMode::Mip;
    Interpolation interpolation = Interpolation::Trilinear;
    int padding = 0;                  ///< value written where a pixel is absent (in the volume's signedness)
};

/// What rows came out as: their pixels of each PixelAbsence, and whether a present one holds the padding value.
struct CutTally
{
    qint64 pixels[4] = {};
    bool paddingUsed = false;
    void add(const CutTally &o)
    {
        for (int k = 0; k < 4; ++k)
            pixels[k] += o.pixels[k];
        paddingUsed = paddingUsed || o.paddingUsed;
    }
};

/// Output rows [first, last) of `job`: 16-bit values (qint16 bits when signed) and one PixelAbsence per pixel,
/// tallied into `tally`.
void cutRows(const CutJob &job, int first, int last, quint16 *out, quint8 *absence, CutTally *tally);

} // namespace spectrum::reformatting
