// SPDX-License-Identifier: Apache-2.0
#include "codecs/pixelwriter.h"

#include <cmath>
#include <limits>
#include <vector>

namespace spectrum::dcmtk {

namespace {

/// Values held as doubles (32-bit integer samples, Float or Double Float Pixel Data, or what a filter made of
/// them) written back exactly: as 32-bit integers of the original's sign when the original had them and every
/// value is a whole number in their range; as Float Pixel Data when the original had it and every value is a float
/// exactly; as Double Float Pixel Data otherwise (any double is one). The rescale is the original's, untouched.
Error writeRealPixels(DcmDataset *ds, const PixelBuffer &pixels)
{
    const qint64 count = qint64(pixels.width()) * pixels.height() * pixels.frames();
    const double *v = reinterpret_cast<const double *>(pixels.frameData(0));
    const bool wasFloat = ds->tagExists(DCM_FloatPixelData), wasDouble = ds->tagExists(DCM_DoubleFloatPixelData);
    const bool wasInt32 = !wasFloat && !wasDouble && getInt(ds, DCM_BitsAllocated) == 32;
    const bool isSigned = getInt(ds, DCM_PixelRepresentation) == 1;
    auto all = [&](auto ok) {
        for (qint64 i = 0; i < count; ++i)
            if (!ok(v[i]))
                return false;
        return true;
    };
    const double lo = isSigned ? double(std::numeric_limits<qint32>::min()) : 0.0;
    const double hi = isSigned ? double(std::numeric_limits<qint32>::max()) : double(std::numeric_limits<quint32>::max());
    const bool asInt32 = wasInt32 && all([&](double x) { return std::isfinite(x) && x == std::floor(x) && x >= lo && x <= hi; });
    const bool asFloat = !asInt32 && wasFloat && all([](double x) { return std::isnan(x) || double(float(x)) == x; });
    for (const DcmTagKey &t : {DCM_PixelData, DCM_FloatPixelData, DCM_DoubleFloatPixelData, DCM_PlanarConfiguration})
        ds->findAndDeleteElement(t);
    ds->putAndInsertUint16(DCM_Rows, Uint16(pixels.height()));
    ds->putAndInsertUint16(DCM_Columns, Uint16(pixels.width()));
    ds->putAndInsertUint16(DCM_SamplesPerPixel, 1);
    const QString photometric = getString(ds, DCM_PhotometricInterpretation);
    ds->putAndInsertString(DCM_PhotometricInterpretation, photometric == QLatin1String("MONOCHROME1") ? "MONOCHROME1" : "MONOCHROME2");
    if (pixels.frames() > 1)
        ds->putAndInsertString(DCM_NumberOfFrames, QByteArray::number(pixels.frames()).constData());
    else
        ds->findAndDeleteElement(DCM_NumberOfFrames);
    OFCondition c;
    if (asInt32) {
        ds->putAndInsertUint16(DCM_BitsAllocated, 32);
        ds->putAndInsertUint16(DCM_BitsStored, 32);
        ds->putAndInsertUint16(DCM_HighBit, 31);
        ds->putAndInsertUint16(DCM_PixelRepresentation, isSigned ? 1 : 0);
        std::vector<Uint32> words(static_cast<size_t>(count));
        for (qint64 i = 0; i < count; ++i)
            words[size_t(i)] = isSigned ? Uint32(qint32(v[i])) : Uint32(v[i]);
        // As 16-bit words in the host's order, which is little endian here: the bytes of little-endian 32-bit
        // samples, written as OW as Pixel Data of more than 8 bits must be.
        static_assert(Q_BYTE_ORDER == Q_LITTLE_ENDIAN, "32-bit samples are written as the host's 16-bit words");
        c = ds->putAndInsertUint16Array(DCM_PixelData, reinterpret_cast<const Uint16 *>(words.data()), static_cast<unsigned long>(count * 2));
    } else {
        // Float and Double Float Pixel Data have no Bits Stored, High Bit or Pixel Representation (PS3.3 C.7.6.3).
        for (const DcmTagKey &t : {DCM_BitsStored, DCM_HighBit, DCM_PixelRepresentation})
            ds->findAndDeleteElement(t);
        if (asFloat) {
            ds->putAndInsertUint16(DCM_BitsAllocated, 32);
            std::vector<Float32> f(static_cast<size_t>(count));
            for (qint64 i = 0; i < count; ++i)
                f[size_t(i)] = Float32(v[i]);
            c = ds->putAndInsertFloat32Array(DCM_FloatPixelData, f.data(), static_cast<unsigned long>(count));
        } else {
            ds->putAndInsertUint16(DCM_BitsAllocated, 64);
            c = ds->putAndInsertFloat64Array(DCM_DoubleFloatPixelData, v, static_cast<unsigned long>(count));
        }
    }
    if (c.bad())
        return toError(c, QStringLiteral("writing pixel data"));
    return Error();
}

} // namespace

Error writeNativePixels(DcmDataset *ds, const PixelBuffer &pixels, int bitsStored)
{
    if (pixels.isNull())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("no pixels to store"));
    if (pixels.format() == PixelFormat::Float64)
        return writeRealPixels(ds, pixels);
    for (const DcmTagKey &t : {DCM_PixelData, DCM_FloatPixelData, DCM_DoubleFloatPixelData})
        ds->findAndDeleteElement(t);
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
