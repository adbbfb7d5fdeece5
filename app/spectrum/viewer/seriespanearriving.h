// SPDX-License-Identifier: Apache-2.0
#pragma once
// SeriesPane's image in view while it arrives (seriespanearriving.cpp follows it; seriespane.cpp owns it).

#include "viewer/seriespane.h"

#include "spectrum/imaging/codecs/progressiveimage.h"

#include <memory>

namespace spectrum {

/// How many slices either side of the one in view a pane loads ahead, and how many loads it keeps in flight.
inline constexpr int kPrefetchRadius = 12;
inline constexpr int kMaxLoadsInFlight = 4;

/// The slice in view while it arrives: decoded (and filtered) as its bytes come; the image it ends with is the
/// one shown and kept once the instance is checked and cached — it is never decoded again.
struct SeriesPane::Arriving
{
    QString key;
    quint64 serial = 0;                         ///< which arrival: late signals of a dropped decoder are not this one's
    std::shared_ptr<const QByteArray> buffer;   ///< the request whose bytes it decodes
    std::unique_ptr<ProgressiveImage> decoder;  ///< holds the arriving buffer while it reads it
    bool finishing = false;                     ///< every byte is in: the decoder is finishing
    bool cached = false;                        ///< the instance was checked and kept: it may be shown as whole
    bool ready = false;                         ///< the decoder finished: original and filtered below
    quint64 chainGeneration = 0;                ///< the filters it runs; others chosen since: only its original is kept
    std::shared_ptr<const DecodedImage> original, filtered;
};

} // namespace spectrum
