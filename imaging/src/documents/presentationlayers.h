// SPDX-License-Identifier: Apache-2.0
#pragma once
// The graphic layers of our presentation states: the findings, and their values as shown (ours: measured again when
// read, not taken from the text).

namespace spectrum {

inline constexpr const char *kFindingsLayer = "FINDINGS";
inline constexpr const char *kValuesLayer = "MEASURED VALUES";  // CS: at most 16 characters

} // namespace spectrum
