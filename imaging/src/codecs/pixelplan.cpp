// SPDX-License-Identifier: Apache-2.0
#include "codecs/pixelplan.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace spectrum::pixels {

namespace {

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

/// YBR_FULL to RGB (PS3.3 C.7.6.3.1.2, full range), in place on interleaved triplets.
void ybrToRgb(uchar *p, qsizetype pixels)
{
    for (qsizetype i = 0; i < pixels; ++i) {
        const double y = p[3 * i], cb = p[3 * i + 1] - 128.0, cr = p[3 * i + 2] - 128.0;
        p[3 * i] = clamp8(y + 1.402 * cr);
        p[3 * i + 1] = clamp8(y - 0.344136 * cb - 0.714136 * cr);
        p[3 * i + 2] = clamp8(y + 1.772 * cb);
    }
}

Result<PaletteTable> readTable(DcmItem *ds, const DcmTagKey &descriptor, const DcmTagKey &data)
{
    Uint16 n = 0, first = 0, bits = 0;
    if (ds->findAndGetUint16(descriptor, n, 0).bad() || ds->findAndGetUint16(descriptor, first, 1).bad() || ds->findAndGetUint16(descriptor, bits, 2).bad())
        return Error(ErrorCode::InvalidDicom, QStringLiteral("PALETTE COLOR without a complete lookup table descriptor"));
    PaletteTable t;
    t.entries = n == 0 ? 65536 : n;
    t.first = first;
    t.bits = bits;
    if (bits != 8 && bits != 16)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("palette entries of %1 bits").arg(bits));
    const Uint16 *words = nullptr;
    unsigned long count = 0;
    if (ds->findAndGetUint16Array(data, words, &count).bad() || !words)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("PALETTE COLOR without lookup table data"));
    const unsigned long entries = static_cast<unsigned long>(t.entries);
    const unsigned long needed = bits == 16 ? entries : (entries + 1) / 2;
    if (count < needed)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("a palette lookup table holds %1 words, its descriptor needs %2").arg(count).arg(needed));
    t.values.resize(size_t(t.entries));
    for (int e = 0; e < t.entries; ++e)  // 16-bit entries keep their high byte; 8-bit ones are packed in words
        t.values[size_t(e)] = bits == 16 ? quint8(words[e] >> 8) : reinterpret_cast<const Uint8 *>(words)[e];
    return t;
}

} // namespace

Result<Plan> makePlan(DcmItem *ds, ImageInfo &info, bool jpeg2000)
{
    Plan plan;
    plan.gray = info.samplesPerPixel == 1 && info.isMonochrome();
    const bool ybr422 = info.photometricName == QLatin1String("YBR_FULL_422");
    // JPEG 2000 colour is RGB, YBR_RCT or YBR_ICT: OpenJPEG undoes the component transform, so it comes out RGB.
    const bool j2kColor = jpeg2000 && info.photometricName.startsWith(QLatin1String("YBR_"));
    plan.color = info.samplesPerPixel == 3 && (info.photometric == Photometric::Rgb || info.photometric == Photometric::YbrFull || ybr422 || j2kColor);
    plan.palette = info.samplesPerPixel == 1 && info.photometric == Photometric::PaletteColor;
    plan.ybr = !jpeg2000 && (info.photometric == Photometric::YbrFull || ybr422);
    plan.ybr422 = !jpeg2000 && ybr422;
    if (!plan.gray && !plan.color && !plan.palette) {
        return Error(ErrorCode::Unsupported, QStringLiteral("photometric interpretation %1 with %2 samples per pixel")
                                                 .arg(info.photometricName).arg(info.samplesPerPixel));
    }
    if (plan.palette && info.bitsAllocated != 8 && info.bitsAllocated != 16)
        return Error(ErrorCode::Unsupported, QStringLiteral("%1-bit palette indices (8 and 16 bits are read)").arg(info.bitsAllocated));
    if (plan.color && info.bitsAllocated != 8 && info.bitsAllocated != 16 && info.bitsAllocated != 32)
        return Error(ErrorCode::Unsupported, QStringLiteral("%1-bit colour samples (8-, 16- and 32-bit colour is shown)").arg(info.bitsAllocated));
    if (plan.ybr && info.bitsAllocated != 8)
        return Error(ErrorCode::Unsupported, QStringLiteral("%1 with %2-bit samples").arg(info.photometricName).arg(info.bitsAllocated));
    if (info.floatSamples && !plan.gray)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("floating-point samples in %1").arg(info.photometricName));
    if (info.bitsAllocated == 1 && (!plan.gray || info.bitsStored != 1))
        return Error(ErrorCode::InvalidDicom, QStringLiteral("1-bit samples must be MONOCHROME2 with Bits Stored 1"));
    plan.floatSamples = info.floatSamples;
    plan.bitPacked = info.bitsAllocated == 1;
    if (plan.ybr422 && info.columns % 2 != 0)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("YBR_FULL_422 with an odd number of columns (%1)").arg(info.columns));
    plan.planar = plan.color && !plan.ybr422 ? dcmtk::getInt(ds, DCM_PlanarConfiguration, 0) : 0;
    plan.bytesPerSample = std::max(1, info.bitsAllocated / 8);
    if (plan.color && (info.bitsAllocated == 16 || info.bitsAllocated == 32)) {
        // Colour is shown at 8 bits a sample: the top 8 of Bits Stored, and the reader is told.
        plan.colourShift = std::max(0, info.bitsStored - 8);
        info.notes << QStringLiteral("%1-bit colour shown at 8 bits per sample").arg(info.bitsStored);
    }

    if (plan.palette || plan.color)
        plan.format = PixelFormat::Rgb24;
    else if (info.floatSamples || info.bitsAllocated == 32)
        plan.format = PixelFormat::Float64;
    else if (info.bitsAllocated == 1)
        plan.format = PixelFormat::Gray8;
    else if (info.bitsAllocated == 8)
        plan.format = info.isSigned ? PixelFormat::Gray8Signed : PixelFormat::Gray8;
    else
        plan.format = info.isSigned ? PixelFormat::Gray16Signed : PixelFormat::Gray16;
    if (PixelBuffer::checkedByteCount(plan.format, info.columns, info.rows, info.frames) < 0) {
        return Error(ErrorCode::InvalidDicom, QStringLiteral("image too large: %1 × %2 × %3 frames")
                                                  .arg(info.columns).arg(info.rows).arg(info.frames));
    }
    const qsizetype samplesPerRow = plan.ybr422 ? qsizetype(info.columns) * 2 : qsizetype(info.columns) * info.samplesPerPixel;
    plan.storedRowBytes = plan.bitPacked ? 0 : samplesPerRow * plan.bytesPerSample;  // 1-bit rows are not whole bytes
    plan.storedFrameBytes = plan.storedRowBytes * info.rows;

    if (plan.palette) {
        if (ds->tagExists(DCM_SegmentedRedPaletteColorLookupTableData))
            return Error(ErrorCode::Unsupported, QStringLiteral("segmented palette colour lookup tables"));
        const DcmTagKey descriptors[3] = {DCM_RedPaletteColorLookupTableDescriptor, DCM_GreenPaletteColorLookupTableDescriptor, DCM_BluePaletteColorLookupTableDescriptor};
        const DcmTagKey tables[3] = {DCM_RedPaletteColorLookupTableData, DCM_GreenPaletteColorLookupTableData, DCM_BluePaletteColorLookupTableData};
        for (int c = 0; c < 3; ++c) {
            Result<PaletteTable> t = readTable(ds, descriptors[c], tables[c]);
            if (!t.isOk())
                return t.error();
            plan.tables[size_t(c)] = t.takeValue();
        }
    }
    if (plan.color || plan.palette) {  // what the pixels will be
        info.photometric = Photometric::Rgb;
        info.photometricName = QStringLiteral("RGB");
        info.samplesPerPixel = 3;
    }
    return plan;
}

void applyPalette(const Plan &plan, const uchar *indices, PixelFormat indexFormat, qsizetype count, uchar *rgb)
{
    for (qsizetype i = 0; i < count; ++i) {
        const int index = indexFormat == PixelFormat::Gray16 || indexFormat == PixelFormat::Gray16Signed
            ? reinterpret_cast<const quint16 *>(indices)[i] : indices[i];
        for (int c = 0; c < 3; ++c) {
            const PaletteTable &t = plan.tables[size_t(c)];
            const int e = std::clamp(index - t.first, 0, t.entries - 1);  // below the first: the first entry; above: the last
            rgb[3 * i + c] = t.values[size_t(e)];
        }
    }
}

void convertRows(const Plan &plan, const ImageInfo &info, const uchar *stored, int first, int count, uchar *frameOut)
{
    const qsizetype pixels = qsizetype(info.columns) * count;
    if (plan.palette) {
        uchar *out = frameOut + qsizetype(first) * info.columns * 3;
        applyPalette(plan, stored, plan.bytesPerSample == 2 ? PixelFormat::Gray16 : PixelFormat::Gray8, pixels, out);
        return;
    }
    if (plan.color && plan.bytesPerSample == 4) {  // 32-bit colour: the top 8 of Bits Stored
        uchar *out = frameOut + qsizetype(first) * info.columns * 3;
        const auto *in = reinterpret_cast<const quint32 *>(stored);
        const quint64 mask = info.bitsStored >= 32 ? 0xFFFFFFFFull : ((quint64(1) << info.bitsStored) - 1);
        const int shift = info.highBit + 1 - info.bitsStored;
        for (qsizetype i = 0; i < pixels * 3; ++i)
            out[i] = uchar(std::min<quint64>(255, ((quint64(in[i]) >> shift) & mask) >> plan.colourShift));
        return;
    }
    if (plan.color && plan.bytesPerSample == 2) {
        uchar *out = frameOut + qsizetype(first) * info.columns * 3;
        const auto *in = reinterpret_cast<const quint16 *>(stored);
        const unsigned mask = (1u << info.bitsStored) - 1u;
        const int shift = info.highBit + 1 - info.bitsStored;
        for (qsizetype i = 0; i < pixels * 3; ++i)
            out[i] = uchar(std::min(255u, ((unsigned(in[i]) >> shift) & mask) >> plan.colourShift));
        return;
    }
    if (plan.color) {
        uchar *out = frameOut + qsizetype(first) * info.columns * 3;
        if (plan.ybr422) {
            for (qsizetype p = 0; p + 1 < pixels; p += 2) {  // Y0 Y1 Cb Cr → two YCbCr pixels
                const uchar *s = stored + p * 2;
                out[3 * p] = s[0];
                out[3 * p + 1] = s[2];
                out[3 * p + 2] = s[3];
                out[3 * p + 3] = s[1];
                out[3 * p + 4] = s[2];
                out[3 * p + 5] = s[3];
            }
        } else {
            std::memcpy(out, stored, size_t(pixels * 3));
        }
        if (plan.ybr)
            ybrToRgb(out, pixels);
        return;
    }
    const qsizetype samples = pixels;
    if (plan.bytesPerSample == 4) {  // 32-bit integers, exactly, as doubles
        const auto *raw = reinterpret_cast<const quint32 *>(stored);
        double *out = reinterpret_cast<double *>(frameOut) + qsizetype(first) * info.columns;
        const int shift = info.highBit + 1 - info.bitsStored;
        const quint64 mask = info.bitsStored >= 32 ? 0xFFFFFFFFull : ((quint64(1) << info.bitsStored) - 1);
        const quint64 sign = quint64(1) << (info.bitsStored - 1);
        for (qsizetype i = 0; i < samples; ++i) {
            const quint64 v = (quint64(raw[i]) >> shift) & mask;
            out[i] = info.isSigned && (v & sign) ? double(qint64(v) - qint64(mask) - 1) : double(v);
        }
        return;
    }
    if (plan.bytesPerSample == 2) {
        const auto *raw = reinterpret_cast<const quint16 *>(stored);
        if (info.isSigned)
            unpackGray(raw, reinterpret_cast<qint16 *>(frameOut) + qsizetype(first) * info.columns, samples, info);
        else
            unpackGray(raw, reinterpret_cast<quint16 *>(frameOut) + qsizetype(first) * info.columns, samples, info);
    } else if (info.isSigned) {
        unpackGray(stored, reinterpret_cast<qint8 *>(frameOut) + qsizetype(first) * info.columns, samples, info);
    } else {
        unpackGray(stored, frameOut + qsizetype(first) * info.columns, samples, info);
    }
}

void convertPlanarFrame(const Plan &plan, const ImageInfo &info, const uchar *stored, uchar *frameOut)
{
    const qsizetype pixels = qsizetype(info.columns) * info.rows;
    if (plan.bytesPerSample == 4) {  // 32-bit colour, plane by plane
        const auto *in = reinterpret_cast<const quint32 *>(stored);
        const quint64 mask = info.bitsStored >= 32 ? 0xFFFFFFFFull : ((quint64(1) << info.bitsStored) - 1);
        const int shift = info.highBit + 1 - info.bitsStored;
        for (qsizetype i = 0; i < pixels; ++i)
            for (int c = 0; c < 3; ++c)
                frameOut[3 * i + c] = uchar(std::min<quint64>(255, ((quint64(in[c * pixels + i]) >> shift) & mask) >> plan.colourShift));
        return;
    }
    if (plan.bytesPerSample == 2) {  // 16-bit colour, plane by plane
        const auto *in = reinterpret_cast<const quint16 *>(stored);
        const unsigned mask = (1u << info.bitsStored) - 1u;
        const int shift = info.highBit + 1 - info.bitsStored;
        for (qsizetype i = 0; i < pixels; ++i)
            for (int c = 0; c < 3; ++c)
                frameOut[3 * i + c] = uchar(std::min(255u, ((unsigned(in[c * pixels + i]) >> shift) & mask) >> plan.colourShift));
        return;
    }
    for (qsizetype i = 0; i < pixels; ++i) {
        frameOut[3 * i] = stored[i];
        frameOut[3 * i + 1] = stored[pixels + i];
        frameOut[3 * i + 2] = stored[2 * pixels + i];
    }
    if (plan.ybr)
        ybrToRgb(frameOut, pixels);
}

} // namespace spectrum::pixels
