// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writing a rendered frame (imaging's renderFrame(): Gray8 or Rgb24) to an image file: PNG through libpng, or a
// binary PGM / PPM. The CLI needs no GUI library for it.

#include "spectrum/core/error.h"
#include "spectrum/imaging/pixelbuffer.h"

#include <QString>

namespace spectrum::cli {

/// The format follows the suffix: .png; .pgm (gray) or .ppm (colour); .pnm (either). Written whole or not at all
/// (a temporary file renamed into place). InvalidArgument for another suffix or a colour image asked for as .pgm.
Error writeImageFile(const PixelBuffer &rendered, const QString &path);

} // namespace spectrum::cli
