#pragma once
// The filters Spectrum ships with (see builtinfilters.cpp); plugins add to them through FilterRegistry.

#include "spectrum/imaging/filter.h"

namespace spectrum::filters {

QList<FilterFactoryPtr> builtinFilters();

} // namespace spectrum::filters
