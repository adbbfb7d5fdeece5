// SPDX-License-Identifier: Apache-2.0
#pragma once
// The short manual Help ▸ Manual shows (F1): what a reader does on a first day, in the order they do it.

#include <QString>

namespace spectrum {

/// The manual as HTML, for a QTextBrowser.
QString manualHtml();

} // namespace spectrum
