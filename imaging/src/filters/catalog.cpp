// SPDX-License-Identifier: Apache-2.0
// The built-in filters: MedJava's set (sharpen, despeckle, edge detect, emboss, oil paint, pixelize, spread) and
// the everyday ones (blur, Gaussian, unsharp mask, invert, flip, rotate, zoom), on native-depth samples.

#include "filters/builtinfilter.h"

namespace spectrum::filters {

QList<FilterFactoryPtr> builtinFilters()
{
    return geometricFilters() + neighbourhoodFilters() + gaussianFilters() + effectFilters();
}

} // namespace spectrum::filters
