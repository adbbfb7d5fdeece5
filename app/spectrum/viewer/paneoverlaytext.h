// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a pane's overlay says about the image in view: whose it is (the patient as the image names them; where the
// study's list or the other images say otherwise, both), which study and series, which image and frame of the
// stack (and the frame's duration), where it lies (position, thickness: none for a projection), its size, and what
// the decoder did that the reader should know.

#include "viewport/viewportlayers.h"

#include "spectrum/imaging/imageinfo.h"
#include "spectrum/stores/reading/studycatalog.h"

namespace spectrum {

/// Where in its stack the image is, and how it compares with the study being read.
struct PanePlace
{
    int series = 0;
    int slice = 0;
    int sliceCount = 0;
    QString comparisonLabel;  ///< "PRIOR 2023-01-03 (1 year earlier)"; empty: no other study open
    bool prior = false;
};

/// `info`: the image in view (null while it is fetched or failed: whose and which slice is still said).
ViewportOverlay paneOverlayText(const StudySummary &study, const PanePlace &place, const ImageInfo *info);

} // namespace spectrum
