#include "pixelwriter.h"

namespace spectrum::dcmtk {

Error writeNativePixels(DcmDataset *ds, const PixelBuffer &pixels, int bitsStored)
{
    if (pixels.isNull())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("no pixels to store"));
    if (pixels.format() == PixelFormat::Float64)  // would need Float Pixel Data or 32-bit samples: not written yet
        return Error(ErrorCode::Unsupported, QStringLiteral("images of real values (32-bit or floating-point samples) cannot be sent as derived images yet"));
    ds->findAndDeleteElement(DCM_PixelData);
    const bool rgb = pixels.format() == PixelFormat::Rgb24;
    const int bits = PixelBuffer::bytesPerPixel(pixels.format()) * 8 / (rgb ? 3 : 1);
    const int stored = bitsStored > 0 && bitsStored <= bits ? bitsStored : bits;
    ds->putAndInsertUint16(DCM_Rows, Uint16(pixels.height()));
    ds->putAndInsertUint16(DCM_Columns, Uint16(pixels.width()));
    ds->putAndInsertUint16(DCM_SamplesPerPixel, rgb ? 3 : 1);
    ds->putAndInsertUint16(DCM_BitsAllocated, Uint16(bits));
    ds->putAndInsertUint16(DCM_BitsStored, Uint16(stored));
    ds->putAndInsertUint16(DCM_HighBit, Uint16(stored - 1));
    ds->putAndInsertUint16(DCM_PixelRepresentation, pixels.isSignedFormat() ? 1 : 0);
    if (rgb) {
        ds->putAndInsertString(DCM_PhotometricInterpretation, "RGB");
        ds->putAndInsertUint16(DCM_PlanarConfiguration, 0);
    } else {
        const QString photometric = getString(ds, DCM_PhotometricInterpretation);
        ds->putAndInsertString(DCM_PhotometricInterpretation, photometric == QLatin1String("MONOCHROME1") ? "MONOCHROME1" : "MONOCHROME2");
        ds->findAndDeleteElement(DCM_PlanarConfiguration);
    }
    if (pixels.frames() > 1)
        ds->putAndInsertString(DCM_NumberOfFrames, QByteArray::number(pixels.frames()).constData());
    else
        ds->findAndDeleteElement(DCM_NumberOfFrames);
    const qint64 total = qint64(pixels.frameBytes()) * pixels.frames();
    const uchar *data = pixels.frameData(0);
    const OFCondition c = bits == 16 ? ds->putAndInsertUint16Array(DCM_PixelData, reinterpret_cast<const Uint16 *>(data), static_cast<unsigned long>(total / 2))
                                     : ds->putAndInsertUint8Array(DCM_PixelData, data, static_cast<unsigned long>(total));
    if (c.bad())
        return toError(c, QStringLiteral("writing pixel data"));
    return Error();
}

} // namespace spectrum::dcmtk
