// SPDX-License-Identifier: Apache-2.0
#pragma once
// StreamingDecoder: decodes a DICOM instance from its bytes as they arrive — a blob's growing prefix, a WADO-RS
// part, a file read in pieces — so that the image can be shown and filtered before it is complete
// (`../shared/seeds/000_…`, integrated layer processing).
//
// The header is parsed incrementally by DCMTK and reported as soon as it is whole. Native pixel data then fills
// the pixel buffer row by row as its bytes come in (frame by frame for colour stored plane by plane). Encapsulated
// pixel data is decoded frame by frame, each as soon as its fragments are complete: the Basic Offset Table says where
// frames start; without one, a JPEG-family or JPEG 2000 fragment ending in its end-of-image marker ends a frame, and
// every RLE fragment is a frame. Deflated data is decoded when it is complete. The pixels are exactly what
// decodeDicom() gives for the same bytes; rows are never reported before their bytes are in, and an image cut short
// is an error, never shown as complete.

#include "spectrum/core/error.h"
#include "spectrum/imaging/imageinfo.h"
#include "spectrum/imaging/pixelbuffer.h"

#include <QByteArray>

#include <functional>
#include <memory>

namespace spectrum {

class StreamingDecoder
{
public:
    StreamingDecoder();
    ~StreamingDecoder();
    StreamingDecoder(const StreamingDecoder &) = delete;
    StreamingDecoder &operator=(const StreamingDecoder &) = delete;

    /// The next bytes of the instance, in order, in pieces of any size. After an error every call returns it.
    Error feed(const char *data, qint64 length);
    Error feed(const QByteArray &bytes) { return feed(bytes.constData(), bytes.size()); }
    /// No more bytes will come: an error unless the image is complete.
    Error finish();

    bool hasHeader() const;
    /// What the pixels are (colour as RGB, as decodeDicom() reports it); valid once hasHeader().
    const ImageInfo &info() const;
    /// Allocated when the header is in: frames [0, framesComplete()) are whole, and rows [0, rowsComplete()) of
    /// frame framesComplete(); the rest is zero.
    const PixelBuffer &pixels() const;
    int framesComplete() const;
    int rowsComplete() const;
    bool isComplete() const;
    /// Bytes of the instance fed so far.
    qint64 bytesFed() const;

    /// The header is in (called from feed()).
    std::function<void(const ImageInfo &info)> onHeader;
    /// Rows [0, rows) of `frame` are now complete (called from feed(); rows == info().rows ends a frame).
    std::function<void(int frame, int rows)> onRows;

private:
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace spectrum
