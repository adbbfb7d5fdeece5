// SPDX-License-Identifier: Apache-2.0
#pragma once
// An instance pulled from a blob server and decoded and filtered by a ProgressiveImage, either while it arrives
// or once it is all in: `spectrum-cli filter blob://…` and the overlap benchmark (tests/bench/ilpbench.cpp).

#include "blobtarget.h"

#include "spectrum/core/bytes.h"
#include "spectrum/core/result.h"
#include "spectrum/imaging/filters/bandprocessor.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"

class QThreadPool;

namespace spectrum::cli {

/// What pullFiltered brings: the filtered image, the bytes it came from, and when each step ended.
struct PulledImage
{
    DecodedImage image;
    ByteView original;         ///< the instance's bytes
    double transferSeconds = 0;
    double totalSeconds = 0;   ///< to the filtered image
    double firstRowsSeconds = -1;
};

/// Pulls `t` and runs `chain` over it: while it arrives when `overlap`, else after the last byte.
Result<PulledImage> pullFiltered(BlobTarget &t, const FilterChain &chain, QThreadPool *pool, bool overlap);

} // namespace spectrum::cli
