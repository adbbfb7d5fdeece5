// SPDX-License-Identifier: Apache-2.0
#pragma once
// Decoding a complete DICOM instance into ImageInfo + PixelBuffer, and reading only its identity.
// All functions are blocking and thread-safe (they share no state); run them on the pool.

#include "spectrum/core/bytes.h"
#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/result.h"
#include "spectrum/imaging/imageinfo.h"
#include "spectrum/imaging/pixelbuffer.h"

namespace spectrum {

struct DecodedImage
{
    ImageInfo info;
    PixelBuffer pixels;
};

/// Decodes an instance: native (implicit/explicit VR, little/big endian) and, through DCMTK's codecs, JPEG
/// baseline / extended / lossless, JPEG-LS and RLE. Monochrome 8/16-bit signed and unsigned, RGB and YBR_FULL
/// 8-bit. Anything else is ErrorCode::Unsupported with the transfer syntax or photometric named.
Result<DecodedImage> decodeDicom(const ByteView &bytes);
Result<DecodedImage> decodeDicomFile(const QString &path);

/// Reads the header only (stops before Pixel Data). Ok with an invalid identity when the bytes are not a
/// DICOM Part 10 file; an error when they claim to be one but cannot be parsed.
Result<DicomIdentity> readDicomIdentity(const ByteView &bytes);
/// Whether a Part 10 file holds every element it declares, to its end: one cut short (a copy interrupted, a CD
/// misread) is refused with why — its header alone may read well.
Error checkDicomWhole(const ByteView &bytes);

/// What an image is — geometry, encoding, rescale, windows, per-frame attributes — from its header alone (the
/// pixels are not decoded): a volume is laid out from its slices' headers before their pixels come.
Result<ImageInfo> readDicomImageInfo(const ByteView &bytes);

/// Starts loading DCMTK's data dictionary on a thread of its own, now. DCMTK loads it at the first parse, from
/// a text file (tens of milliseconds): a program that will parse DICOM soon (a fetch, the viewer) calls this at
/// its start, so that the first instance does not wait for it (and registers the decoders). Any later parse waits
/// until it is loaded. The workstation calls it when it starts.
void preloadDicomDictionary();

/// Name of a transfer syntax UID as DCMTK knows it ("JPEG Lossless, Non-hierarchical, First-Order Prediction").
QString transferSyntaxName(const QString &uid);

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::DecodedImage)
