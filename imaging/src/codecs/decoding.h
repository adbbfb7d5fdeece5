// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to imaging: the steps of decoding that the whole-file decoder (dicomdecoder.cpp) and the streaming one
// (streamingdecoder.cpp) share.

#include "dcmtksupport.h"
#include "codecs/pixelplan.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"

#include <QList>

namespace spectrum {

/// Geometry, pixel encoding and display metadata of a parsed header; clear errors for what cannot be an image.
Result<ImageInfo> readImageInfo(DcmDataset *dataset);
/// A dataset whose Pixel Data has been read (native or encapsulated) into pixels.
Result<DecodedImage> decodeDataset(DcmDataset *dataset);
/// The compressed frames of encapsulated Pixel Data, split by the Basic Offset Table or one fragment per frame.
Result<QList<QByteArray>> encapsulatedFrames(DcmElement *element, E_TransferSyntax xfer, int frameCount);
/// One JPEG 2000 frame into `out`, a frame in the plan's format; `stored` describes the data as stored.
/// `shown` (the image's info) learns the stream's precision when it differs from Bits Stored, with a note.
Error decodeJpeg2000Frame(const pixels::Plan &plan, const ImageInfo &stored, const QByteArray &codestream, uchar *out, ImageInfo *shown = nullptr);

} // namespace spectrum
