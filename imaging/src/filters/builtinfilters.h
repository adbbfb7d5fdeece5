// SPDX-License-Identifier: Apache-2.0
#pragma once
// The filters Spectrum ships with (catalog.cpp lists them; builtinfilter.h says which file holds which); plugins
// add to them through FilterRegistry.

#include "spectrum/imaging/filters/filter.h"

namespace spectrum::filters {

QList<FilterFactoryPtr> builtinFilters();

} // namespace spectrum::filters
