#include "spectrum/imaging/dicomdecoder.h"

#include "dcmtksupport.h"
#include "jpeg2000.h"

#include "spectrum/core/logging.h"

#include <QFile>

#include <dcmtk/dcmdata/dcpixseq.h>
#include <dcmtk/dcmdata/dcpxitem.h>
#include <dcmtk/dcmdata/dcxfer.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace spectrum {

using namespace spectrum::dcmtk;

namespace {

Photometric photometricFrom(const QString &name)
{
    if (name == QLatin1String("MONOCHROME1")) return Photometric::Monochrome1;
    if (name == QLatin1String("MONOCHROME2")) return Photometric::Monochrome2;
    if (name == QLatin1String("RGB")) return Photometric::Rgb;
    if (name == QLatin1String("YBR_FULL")) return Photometric::YbrFull;
    if (name == QLatin1String("PALETTE COLOR")) return Photometric::PaletteColor;
    return Photometric::Other;
}

double getDouble(DcmItem *ds, const DcmTagKey &tag, unsigned long pos, double fallback, bool *found = nullptr)
{
    Float64 v = 0;
    const bool ok = ds->findAndGetFloat64(tag, v, pos).good();
    if (found)
        *found = ok;
    return ok ? double(v) : fallback;
}

Result<ImageInfo> readImageInfo(DcmDataset *ds)
{
    ImageInfo info;
    info.identity = readIdentity(ds);
    info.rows = getInt(ds, DCM_Rows);
    info.columns = getInt(ds, DCM_Columns);
    info.frames = std::max(1, getInt(ds, DCM_NumberOfFrames, 1));
    info.samplesPerPixel = getInt(ds, DCM_SamplesPerPixel, 1);
    info.bitsAllocated = getInt(ds, DCM_BitsAllocated);
    info.bitsStored = getInt(ds, DCM_BitsStored, info.bitsAllocated);
    info.highBit = getInt(ds, DCM_HighBit, info.bitsStored - 1);
    info.isSigned = getInt(ds, DCM_PixelRepresentation) == 1;
    info.photometricName = getString(ds, DCM_PhotometricInterpretation);
    info.photometric = photometricFrom(info.photometricName);

    info.rowSpacing = getDouble(ds, DCM_PixelSpacing, 0, 0);
    info.columnSpacing = getDouble(ds, DCM_PixelSpacing, 1, info.rowSpacing);
    bool hasPos = true;
    for (unsigned long i = 0; i < 3; ++i) {
        bool found = false;
        info.imagePosition[i] = getDouble(ds, DCM_ImagePositionPatient, i, 0, &found);
        hasPos = hasPos && found;
    }
    bool hasOri = true;
    for (unsigned long i = 0; i < 6; ++i) {
        bool found = false;
        info.imageOrientation[i] = getDouble(ds, DCM_ImageOrientationPatient, i, 0, &found);
        hasOri = hasOri && found;
    }
    info.hasPosition = hasPos && hasOri;
    info.sliceThickness = getDouble(ds, DCM_SliceThickness, 0, 0);
    info.rescaleSlope = getDouble(ds, DCM_RescaleSlope, 0, 1);
    if (info.rescaleSlope == 0)
        info.rescaleSlope = 1;  // a zero slope is invalid DICOM and would flatten the image
    info.rescaleIntercept = getDouble(ds, DCM_RescaleIntercept, 0, 0);
    info.rescaleType = getString(ds, DCM_RescaleType);

    const unsigned long windowCount = [&] {
        DcmElement *e = nullptr;
        return ds->findAndGetElement(DCM_WindowCenter, e).good() && e ? e->getVM() : 0ul;
    }();
    for (unsigned long i = 0; i < windowCount; ++i) {
        bool c = false, w = false;
        WindowPreset p;
        p.center = getDouble(ds, DCM_WindowCenter, i, 0, &c);
        p.width = getDouble(ds, DCM_WindowWidth, i, 0, &w);
        OFString explanation;
        if (ds->findAndGetOFString(DCM_WindowCenterWidthExplanation, explanation, i).good())
            p.name = QString::fromLatin1(explanation.c_str()).trimmed();
        if (c && w && p.width >= 1)
            info.windows.append(p);
    }

    if (info.rows <= 0 || info.columns <= 0)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("no image: Rows %1, Columns %2").arg(info.rows).arg(info.columns));
    if (info.bitsAllocated != 8 && info.bitsAllocated != 16)
        return Error(ErrorCode::Unsupported, QStringLiteral("Bits Allocated %1 (only 8 and 16 are supported)").arg(info.bitsAllocated));
    if (info.bitsStored < 1 || info.bitsStored > info.bitsAllocated || info.highBit < info.bitsStored - 1
        || info.highBit >= info.bitsAllocated)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("inconsistent Bits Stored %1 / High Bit %2 for Bits Allocated %3")
                                                  .arg(info.bitsStored).arg(info.highBit).arg(info.bitsAllocated));
    return info;
}

// Extracts the stored value from a raw word: shift the high bit down, mask to Bits Stored, sign-extend.
template <typename Raw, typename Out>
void unpackGray(const Raw *src, Out *dst, qsizetype count, const ImageInfo &info)
{
    const int shift = info.highBit + 1 - info.bitsStored;
    const unsigned mask = info.bitsStored >= 32 ? ~0u : ((1u << info.bitsStored) - 1u);
    const unsigned signBit = 1u << (info.bitsStored - 1);
    const bool needsWork = shift != 0 || info.bitsStored != int(sizeof(Raw) * 8);
    for (qsizetype i = 0; i < count; ++i) {
        unsigned v = unsigned(src[i]);
        if (needsWork)
            v = (v >> shift) & mask;
        if (info.isSigned && (v & signBit))
            dst[i] = Out(int(v) - int(mask) - 1);
        else
            dst[i] = Out(v);
    }
}

quint8 clamp8(double v) { return quint8(std::lround(std::clamp(v, 0.0, 255.0))); }

} // namespace

QString transferSyntaxName(const QString &uid)
{
    const DcmXfer xfer(uid.toLatin1().constData());
    if (xfer.getXfer() == EXS_Unknown)
        return QStringLiteral("unknown transfer syntax");
    return QString::fromLatin1(xfer.getXferName());
}

Result<DicomIdentity> readDicomIdentity(const ByteView &bytes)
{
    if (!hasPart10Preamble(bytes.data(), bytes.size()))
        return DicomIdentity();
    registerCodecs();
    DcmFileFormat ff;
    if (Error e = parse(bytes, ff, ParseExtent::HeaderOnly); e.isError())
        return e;
    return readIdentity(ff.getDataset());
}

Result<DecodedImage> decodeDicomFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Error(ErrorCode::Io, QStringLiteral("cannot open %1: %2").arg(path, file.errorString()));
    const qint64 size = file.size();
    if (size == 0)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("%1 is empty").arg(path));
    uchar *map = file.map(0, size);
    if (!map)
        return Error(ErrorCode::Io, QStringLiteral("cannot map %1: %2").arg(path, file.errorString()));
    // Decoding copies the pixels out, so the mapping only has to outlive the call.
    Result<DecodedImage> result = decodeDicom(ByteView(reinterpret_cast<const char *>(map), size, nullptr));
    file.unmap(map);
    return result;
}

/// The compressed frames of encapsulated Pixel Data (PS3.5 A.4): fragments joined per frame, split by the Basic
/// Offset Table, or one fragment per frame, or all fragments when there is one frame.
Result<QList<QByteArray>> encapsulatedFrames(DcmElement *element, E_TransferSyntax xfer, int frameCount)
{
    auto *pixelData = dynamic_cast<DcmPixelData *>(element);
    DcmPixelSequence *sequence = nullptr;
    if (!pixelData || pixelData->getEncapsulatedRepresentation(xfer, nullptr, sequence).bad() || !sequence)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("encapsulated Pixel Data without its fragments"));
    const unsigned long items = sequence->card();
    if (items < 2)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("encapsulated Pixel Data without fragments"));
    QList<QByteArray> fragments;
    QList<quint64> fragmentOffsets;  // from the first fragment's item tag, as the offset table counts
    quint64 position = 0;
    for (unsigned long i = 1; i < items; ++i) {
        DcmPixelItem *item = nullptr;
        Uint8 *data = nullptr;
        if (sequence->getItem(item, i).bad() || !item)
            return Error(ErrorCode::InvalidDicom, QStringLiteral("unreadable fragment %1").arg(i));
        const Uint32 length = item->getLength();
        if (length > 0 && (item->getUint8Array(data).bad() || !data))
            return Error(ErrorCode::InvalidDicom, QStringLiteral("unreadable fragment %1").arg(i));
        fragments << QByteArray(reinterpret_cast<const char *>(data), qsizetype(length));
        fragmentOffsets << position;
        position += 8 + quint64(length);
    }
    QList<QByteArray> frames;
    if (frameCount == 1) {
        frames << fragments.join();
        return frames;
    }
    DcmPixelItem *table = nullptr;
    Uint8 *tableData = nullptr;
    const Uint32 tableLength = sequence->getItem(table, 0).good() && table ? table->getLength() : 0;
    if (tableLength >= Uint32(4 * frameCount) && table->getUint8Array(tableData).good() && tableData) {
        QList<quint64> starts;
        for (int f = 0; f < frameCount; ++f) {
            Uint32 v = 0;
            std::memcpy(&v, tableData + 4 * f, 4);  // little endian, as encapsulated syntaxes are
            starts << v;
        }
        for (int f = 0; f < frameCount; ++f) {
            QByteArray frame;
            for (int i = 0; i < fragments.size(); ++i) {
                if (fragmentOffsets[i] >= starts[f] && (f + 1 == frameCount || fragmentOffsets[i] < starts[f + 1]))
                    frame += fragments[i];
            }
            if (frame.isEmpty())
                return Error(ErrorCode::InvalidDicom, QStringLiteral("the offset table points frame %1 at no fragment").arg(f + 1));
            frames << frame;
        }
        return frames;
    }
    if (fragments.size() == frameCount)
        return fragments;
    return Error(ErrorCode::InvalidDicom, QStringLiteral("%1 fragments for %2 frames and no offset table to split them").arg(fragments.size()).arg(frameCount));
}

/// PALETTE COLOR (PS3.3 C.7.6.3.1.5): the decoded indices through the red, green and blue lookup tables into
/// RGB. Entries of 16 bits keep their high byte. Segmented palettes are not supported (a clear error).
Error applyPalette(DcmItem *ds, DecodedImage &image)
{
    if (ds->tagExists(DCM_SegmentedRedPaletteColorLookupTableData))
        return Error(ErrorCode::Unsupported, QStringLiteral("segmented palette colour lookup tables"));
    struct Lut
    {
        int entries = 0, first = 0, bits = 0;
        const Uint16 *data = nullptr;
        unsigned long count = 0;
    };
    const DcmTagKey descriptors[3] = {DCM_RedPaletteColorLookupTableDescriptor, DCM_GreenPaletteColorLookupTableDescriptor, DCM_BluePaletteColorLookupTableDescriptor};
    const DcmTagKey tables[3] = {DCM_RedPaletteColorLookupTableData, DCM_GreenPaletteColorLookupTableData, DCM_BluePaletteColorLookupTableData};
    Lut luts[3];
    for (int c = 0; c < 3; ++c) {
        Uint16 n = 0, first = 0, bits = 0;
        if (ds->findAndGetUint16(descriptors[c], n, 0).bad() || ds->findAndGetUint16(descriptors[c], first, 1).bad() || ds->findAndGetUint16(descriptors[c], bits, 2).bad())
            return Error(ErrorCode::InvalidDicom, QStringLiteral("PALETTE COLOR without a complete lookup table descriptor"));
        luts[c].entries = n == 0 ? 65536 : n;
        luts[c].first = first;
        luts[c].bits = bits;
        if (bits != 8 && bits != 16)
            return Error(ErrorCode::InvalidDicom, QStringLiteral("palette entries of %1 bits").arg(bits));
        if (ds->findAndGetUint16Array(tables[c], luts[c].data, &luts[c].count).bad() || !luts[c].data)
            return Error(ErrorCode::InvalidDicom, QStringLiteral("PALETTE COLOR without lookup table data"));
        const unsigned long entries = static_cast<unsigned long>(luts[c].entries);
        const unsigned long needed = bits == 16 ? entries : (entries + 1) / 2;
        if (luts[c].count < needed)
            return Error(ErrorCode::InvalidDicom, QStringLiteral("a palette lookup table holds %1 words, its descriptor needs %2").arg(luts[c].count).arg(needed));
    }
    const PixelBuffer &indices = image.pixels;
    PixelBuffer rgb(PixelFormat::Rgb24, indices.width(), indices.height(), indices.frames());
    const qint64 count = qint64(indices.width()) * indices.height();
    for (int f = 0; f < indices.frames(); ++f) {
        uchar *out = rgb.frameData(f);
        for (qint64 i = 0; i < count; ++i) {
            const int index = indices.format() == PixelFormat::Gray8 ? indices.frameData(f)[i]
                                                                     : reinterpret_cast<const quint16 *>(indices.frameData(f))[i];
            for (int c = 0; c < 3; ++c) {
                const Lut &l = luts[c];
                const int e = std::clamp(index - l.first, 0, l.entries - 1);  // below the first: the first entry; above: the last
                out[3 * i + c] = l.bits == 16 ? uchar(l.data[e] >> 8)
                                              : uchar(reinterpret_cast<const Uint8 *>(l.data)[e]);  // 8-bit entries packed in words
            }
        }
    }
    image.pixels = rgb;
    image.info.photometric = Photometric::Rgb;
    image.info.photometricName = QStringLiteral("RGB");
    image.info.samplesPerPixel = 3;
    return Error();
}

Result<DecodedImage> decodeDicom(const ByteView &bytes)
{
    registerCodecs();
    DcmFileFormat ff;
    if (Error e = parse(bytes, ff, ParseExtent::Everything); e.isError())
        return e;
    DcmDataset *ds = ff.getDataset();

    const E_TransferSyntax original = ds->getOriginalXfer();
    const DcmXfer originalXfer(original);
    const QString xferUid = QString::fromLatin1(originalXfer.getXferID());
    // JPEG 2000 is ours (OpenJPEG); the other compressed syntaxes go through DCMTK's codecs.
    const bool jpeg2000 = original == EXS_JPEG2000LosslessOnly || original == EXS_JPEG2000;
    if (originalXfer.isEncapsulated() && !jpeg2000) {
        const OFCondition cond = ds->chooseRepresentation(EXS_LittleEndianExplicit, nullptr);
        if (cond.bad() || !ds->canWriteXfer(EXS_LittleEndianExplicit)) {
            return Error(ErrorCode::Unsupported, QStringLiteral("unsupported transfer syntax %1 (%2)%3")
                                                     .arg(xferUid, QString::fromLatin1(originalXfer.getXferName()),
                                                          cond.bad() ? QStringLiteral(": ") + QString::fromLatin1(cond.text()) : QString()));
        }
    }

    Result<ImageInfo> infoResult = readImageInfo(ds);  // after decompression: photometric may have changed
    if (!infoResult.isOk())
        return infoResult.error();
    DecodedImage image;
    image.info = infoResult.takeValue();
    ImageInfo &info = image.info;
    info.transferSyntaxUid = xferUid;

    const bool gray = info.samplesPerPixel == 1 && info.isMonochrome();
    // JPEG 2000 colour is RGB, YBR_RCT or YBR_ICT: OpenJPEG undoes the component transform, so it comes out RGB.
    const bool color = info.samplesPerPixel == 3
        && (info.photometric == Photometric::Rgb || info.photometric == Photometric::YbrFull
            || (jpeg2000 && info.photometricName.startsWith(QLatin1String("YBR_"))));
    const bool palette = info.samplesPerPixel == 1 && info.photometric == Photometric::PaletteColor;
    if (!gray && !color && !palette) {
        return Error(ErrorCode::Unsupported, QStringLiteral("photometric interpretation %1 with %2 samples per pixel")
                                                 .arg(info.photometricName).arg(info.samplesPerPixel));
    }
    if (color && info.bitsAllocated != 8)
        return Error(ErrorCode::Unsupported, QStringLiteral("%1-bit colour").arg(info.bitsAllocated));

    PixelFormat format;
    if (palette)  // the indices first, unsigned; mapped to RGB at the end
        format = info.bitsAllocated == 8 ? PixelFormat::Gray8 : PixelFormat::Gray16;
    else if (color)
        format = PixelFormat::Rgb24;
    else if (info.bitsAllocated == 8)
        format = info.isSigned ? PixelFormat::Gray8Signed : PixelFormat::Gray8;
    else
        format = info.isSigned ? PixelFormat::Gray16Signed : PixelFormat::Gray16;

    const qint64 outBytes = PixelBuffer::checkedByteCount(format, info.columns, info.rows, info.frames);
    if (outBytes < 0) {
        return Error(ErrorCode::InvalidDicom, QStringLiteral("image too large: %1 × %2 × %3 frames")
                                                  .arg(info.columns).arg(info.rows).arg(info.frames));
    }
    const qint64 pixelsPerFrame = qint64(info.columns) * info.rows;
    const qint64 samples = pixelsPerFrame * info.frames * info.samplesPerPixel;

    DcmElement *pixelElement = nullptr;
    if (ds->findAndGetElement(DCM_PixelData, pixelElement).bad() || !pixelElement)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("no Pixel Data"));

    image.pixels = PixelBuffer(format, info.columns, info.rows, info.frames);
    uchar *out = image.pixels.frameData(0);

    if (jpeg2000) {
        Result<QList<QByteArray>> frames = encapsulatedFrames(pixelElement, original, info.frames);
        if (!frames.isOk())
            return frames.error();
        for (int f = 0; f < info.frames; ++f) {
            if (Error e = jpeg2000::decodeFrame(frames.value().at(f), info.columns, info.rows, format, info.bitsStored, image.pixels.frameData(f)); e.isError())
                return e.withContext(QStringLiteral("frame %1").arg(f + 1));
        }
        if (color) {
            info.photometric = Photometric::Rgb;
            info.photometricName = QStringLiteral("RGB");
        }
        if (palette) {
            if (Error e = applyPalette(ds, image); e.isError())
                return e;
        }
        return image;
    }

    // The element's value is in host byte order after parsing; 8-bit data may be held as OB or OW.
    const qint64 available = qint64(pixelElement->getLength());
    const qint64 needed = samples * (info.bitsAllocated / 8);
    if (available < needed) {
        return Error(ErrorCode::InvalidDicom, QStringLiteral("Pixel Data holds %1 bytes, the image needs %2")
                                                  .arg(available).arg(needed));
    }
    if (info.bitsAllocated == 16) {
        Uint16 *raw = nullptr;
        if (pixelElement->getUint16Array(raw).bad() || !raw)
            return Error(ErrorCode::InvalidDicom, QStringLiteral("cannot read 16-bit Pixel Data"));
        if (info.isSigned)
            unpackGray(raw, reinterpret_cast<qint16 *>(out), samples, info);
        else
            unpackGray(raw, reinterpret_cast<quint16 *>(out), samples, info);
    } else {
        const Uint8 *raw = nullptr;
        Uint8 *raw8 = nullptr;
        Uint16 *raw16 = nullptr;
        if (pixelElement->getUint8Array(raw8).good() && raw8) {
            raw = raw8;
        } else if (pixelElement->getUint16Array(raw16).good() && raw16) {
            // OW on a little-endian host: the words' bytes are the original byte stream.
            static_assert(Q_BYTE_ORDER == Q_LITTLE_ENDIAN, "8-bit OW pixel data assumes a little-endian host");
            raw = reinterpret_cast<const Uint8 *>(raw16);
        } else {
            return Error(ErrorCode::InvalidDicom, QStringLiteral("cannot read 8-bit Pixel Data"));
        }
        if (color) {
            const int planar = getInt(ds, DCM_PlanarConfiguration, 0);
            for (int f = 0; f < info.frames; ++f) {
                const Uint8 *src = raw + f * pixelsPerFrame * 3;
                uchar *dst = out + f * pixelsPerFrame * 3;
                if (planar == 1) {
                    for (qint64 i = 0; i < pixelsPerFrame; ++i) {
                        dst[3 * i] = src[i];
                        dst[3 * i + 1] = src[pixelsPerFrame + i];
                        dst[3 * i + 2] = src[2 * pixelsPerFrame + i];
                    }
                } else {
                    std::memcpy(dst, src, size_t(pixelsPerFrame * 3));
                }
                if (info.photometric == Photometric::YbrFull) {
                    for (qint64 i = 0; i < pixelsPerFrame; ++i) {  // PS3.3 C.7.6.3.1.2, full range
                        const double y = dst[3 * i], cb = dst[3 * i + 1] - 128.0, cr = dst[3 * i + 2] - 128.0;
                        dst[3 * i] = clamp8(y + 1.402 * cr);
                        dst[3 * i + 1] = clamp8(y - 0.344136 * cb - 0.714136 * cr);
                        dst[3 * i + 2] = clamp8(y + 1.772 * cb);
                    }
                }
            }
            if (info.photometric == Photometric::YbrFull) {
                info.photometric = Photometric::Rgb;
                info.photometricName = QStringLiteral("RGB");
            }
        } else if (info.isSigned) {
            unpackGray(raw, reinterpret_cast<qint8 *>(out), samples, info);
        } else {
            unpackGray(raw, reinterpret_cast<quint8 *>(out), samples, info);
        }
    }
    if (palette) {
        if (Error e = applyPalette(ds, image); e.isError())
            return e;
    }
    return image;
}

} // namespace spectrum
