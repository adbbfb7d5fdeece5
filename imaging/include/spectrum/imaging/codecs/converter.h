// SPDX-License-Identifier: Apache-2.0
#pragma once
// The decoder on its own, as DCMTK's dcmdjpeg is for JPEG: any instance we can decode rewritten as uncompressed
// explicit VR little endian, every attribute kept (same SOP Instance UID), every sample depth kept exactly —
// native pixel data and what DCMTK's codecs decompress as they are (32-bit and floating-point samples, 16-bit
// colour), JPEG 2000 as our decoder produced it (colour as RGB, gray at its native depth and precision; colour
// deeper than 8 bits refused, not cut).

#include "spectrum/core/bytes.h"
#include "spectrum/core/result.h"

namespace spectrum {

/// A clear error (the decoder's: an unsupported transfer syntax names its UID and name) for what cannot be read.
Result<QByteArray> convertToExplicitLittleEndian(const ByteView &dicom);

} // namespace spectrum
