#pragma once
// The decoder on its own, as DCMTK's dcmdjpeg is for JPEG: any instance we can decode rewritten as uncompressed
// explicit VR little endian, every attribute kept (same SOP Instance UID), the pixels as our decoder produced
// them — colour as RGB (planar configuration 0), gray at its native depth and precision.

#include "spectrum/core/bytes.h"
#include "spectrum/core/result.h"

namespace spectrum {

/// A clear error (the decoder's: an unsupported transfer syntax names its UID and name) for what cannot be read.
Result<QByteArray> convertToExplicitLittleEndian(const ByteView &dicom);

} // namespace spectrum
