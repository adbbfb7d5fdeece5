// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to imaging: JPEG 2000 frames (PS3.5 A.4.4; transfer syntaxes 1.2.840.10008.1.2.4.90 and .91) decoded
// with OpenJPEG, which DCMTK 3.6.7 lacks.

#include "spectrum/core/error.h"
#include "spectrum/imaging/pixelbuffer.h"

#include <QByteArray>

namespace spectrum::jpeg2000 {

/// Decodes one frame (a J2K codestream or a JP2 file) into `out`: `width` × `height` samples of `format`
/// (gray: one component; Rgb24: three, interleaved). Geometry, component count and precision must match what the
/// DICOM header says; otherwise a clear error.
/// A stream whose precision differs from Bits Stored (14 in the header, 16 in the stream) is decoded at the
/// stream's precision, given in `streamPrecision`; colour deeper than 8 bits is scaled to 8 for display.
/// A gray stream whose signedness disagrees with `format`'s (Pixel Representation) is read as Pixel Representation
/// says, its bit patterns kept; `signReread` says so (the reader is told).
Error decodeFrame(const QByteArray &codestream, int width, int height, PixelFormat format, int bitsStored, uchar *out,
                  int *streamPrecision = nullptr, bool *signReread = nullptr);

/// Decodes one colour frame at its full depth into `out`: `width` × `height` × 3 samples, interleaved R G B, each
/// as the stream holds it (up to 16 bits; OpenJPEG undoes a component transform). `precision`: the stream's bits.
/// For rewriting such a file exactly (convert), where decodeFrame() gives the screen's 8 bits.
Error decodeColourFrameFull(const QByteArray &codestream, int width, int height, quint16 *out, int *precision);

} // namespace spectrum::jpeg2000
