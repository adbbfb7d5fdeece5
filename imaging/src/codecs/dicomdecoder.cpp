// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/codecs/decodecounts.h"

#include "dcmtksupport.h"
#include "codecs/frameattributes.h"
#include "documents/segmentationinfo.h"
#include "codecs/identityscan.h"
#include "codecs/jpeg2000.h"
#include "codecs/decoding.h"
#include "codecs/pixelplan.h"

#include "spectrum/core/logging.h"

#include <QFile>

#include <dcmtk/dcmdata/dccodec.h>
#include <dcmtk/dcmdata/dcdict.h>
#include <dcmtk/dcmdata/dcpixseq.h>
#include <dcmtk/dcmdata/dcpxitem.h>
#include <dcmtk/dcmdata/dcstack.h>
#include <dcmtk/dcmdata/dcxfer.h>

#include <algorithm>
#include <thread>
#include <cmath>
#include <cstring>

namespace spectrum {

using namespace spectrum::dcmtk;

void preloadDicomDictionary()
{
    // Joined at exit, before DCMTK's global dictionary is destroyed (this static is created after it).
    static struct Loader
    {
        std::thread thread;
        ~Loader()
        {
            if (thread.joinable())
                thread.join();
        }
    } loader;
    if (loader.thread.joinable())
        return;
    loader.thread = std::thread([] {
        // The first reader creates it under DCMTK's own lock; everyone else waits for that.
        dcmDataDict.rdlock();
        dcmDataDict.rdunlock();
        registerCodecs();
    });
}

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
    if (std::optional<DicomIdentity> quick = scanDicomIdentity(bytes.data(), bytes.size()))
        return *quick;  // the usual case: no dictionary, no parse (identityscan.h)
    return readDicomIdentityWithDcmtk(bytes);
}

Error checkDicomWhole(const ByteView &bytes)
{
    registerCodecs();
    DcmFileFormat ff;
    return parse(bytes, ff, ParseExtent::Everything);
}

Result<DicomIdentity> readDicomIdentityWithDcmtk(const ByteView &bytes)
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

/// One JPEG 2000 frame into `out`, a frame of the plan's format: palette indices through the tables.
Error decodeJpeg2000Frame(const pixels::Plan &plan, const ImageInfo &stored, const QByteArray &codestream, uchar *out, ImageInfo *shown)
{
    if (!plan.palette) {
        int precision = 0;
        bool reread = false;
        if (Error e = jpeg2000::decodeFrame(codestream, stored.columns, stored.rows, plan.format, stored.bitsStored, out, &precision, &reread); e.isError())
            return e;
        const QString signNote = QStringLiteral("JPEG 2000 stream of %1 samples, Pixel Representation says %2: read as Pixel Representation says")
                                     .arg(stored.isSigned ? QStringLiteral("unsigned") : QStringLiteral("signed"),
                                          stored.isSigned ? QStringLiteral("signed") : QStringLiteral("unsigned"));
        if (shown && reread && !shown->notes.contains(signNote))
            shown->notes << signNote;
        if (shown && precision > 0 && precision != stored.bitsStored && plan.format != PixelFormat::Rgb24 && shown->bitsStored != precision) {
            shown->bitsStored = precision;
            shown->highBit = precision - 1;
            shown->notes << QStringLiteral("JPEG 2000 stream of %1-bit samples, the header says %2: the stream's values are shown").arg(precision).arg(stored.bitsStored);
        }
        return Error();
    }
    const PixelFormat indexFormat = stored.bitsAllocated == 8 ? PixelFormat::Gray8 : PixelFormat::Gray16;
    PixelBuffer indices(indexFormat, stored.columns, stored.rows, 1);
    if (Error e = jpeg2000::decodeFrame(codestream, stored.columns, stored.rows, indexFormat, stored.bitsStored, indices.frameData(0)); e.isError())
        return e;
    pixels::applyPalette(plan, indices.frameData(0), indexFormat, qsizetype(stored.columns) * stored.rows, out);
    return Error();
}

namespace {
/// Whether DCMTK 3.6.7's JPEG decoder would never return on this fragment. Before decoding a frame it walks the
/// fragment's markers to the frame header (DJCodecDecoder::scanJpegDataForBitDepth), and a TEM marker (FF01) on
/// that walk does not move it on: it loops forever (found by fuzzing). The same walk, here: the frame headers
/// (SOFn) end it, markers with a length are stepped over by it, the ones without by two bytes, a fill byte by
/// one, anything else ends it.
bool jpegMarkerWalkNeverEnds(const uchar *data, quint32 length)
{
    quint32 offset = 0;
    while (offset + 4 < length) {
        if (data[offset] != 0xFF)
            return false;
        const uchar m = data[offset + 1];
        const quint32 segment = quint32((data[offset + 2] << 8) | data[offset + 3]) + 2;
        if (m == 0x01)
            return true;  // TEM: where DCMTK's walk stays
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC)
            return false;  // a frame header: DCMTK has what it looks for
        if (m == 0xC4 || m == 0xC8 || m == 0xCC || (m >= 0xDA && m <= 0xDF) || (m >= 0xE0 && m <= 0xFE))
            offset += segment;
        else if ((m >= 0xD0 && m <= 0xD9) || (m > 0x02 && m <= 0xBF))
            offset += 2;
        else if (m == 0xFF)
            offset += 1;
        else
            return false;  // DCMTK stops at an invalid marker
    }
    return false;
}

/// The fragments of a JPEG (DCMTK's DJ codec) Pixel Data that would hang DCMTK's decoder: an error, or none.
Error checkJpegFragments(DcmDataset *ds, E_TransferSyntax xfer)
{
    const QByteArray uid(DcmXfer(xfer).getXferID());
    const bool dcmtkJpeg = uid.startsWith("1.2.840.10008.1.2.4.") && !uid.startsWith("1.2.840.10008.1.2.4.8")  // not JPEG-LS
                           && !uid.startsWith("1.2.840.10008.1.2.4.9") && !uid.startsWith("1.2.840.10008.1.2.4.10")
                           && !uid.startsWith("1.2.840.10008.1.2.4.2");  // nor JPEG 2000, MPEG, HTJ2K
    DcmStack found;  // every Pixel Data, nested ones included: DCMTK decodes them all
    if (!dcmtkJpeg || ds->findAndGetElements(DCM_PixelData, found).bad())
        return Error();
    while (!found.empty()) {
        auto *pixelData = dynamic_cast<DcmPixelData *>(found.pop());
        DcmPixelSequence *sequence = nullptr;
        if (!pixelData || pixelData->getEncapsulatedRepresentation(xfer, nullptr, sequence).bad() || !sequence)
            continue;
        for (unsigned long i = 1; i < sequence->card(); ++i) {
            DcmPixelItem *item = nullptr;
            Uint8 *data = nullptr;
            if (sequence->getItem(item, i).good() && item && item->getLength() > 0 && item->getUint8Array(data).good() && data
                && jpegMarkerWalkNeverEnds(data, item->getLength()))
                return Error(ErrorCode::InvalidDicom, QStringLiteral("broken JPEG stream in fragment %1: a TEM marker (FF01) before the frame header").arg(i));
        }
    }
    return Error();
}
} // namespace

namespace {
/// 32-bit samples of a native Pixel Data element as DCMTK holds them (host order); null when it holds none.
const Uint32 *uint32Samples(DcmElement *element)
{
    Uint32 *v = nullptr;
    if (element->getUint32Array(v).good() && v)
        return v;
    Uint16 *w = nullptr;  // OW as DCMTK reads it: the same bytes, in 16-bit words
    return element->getUint16Array(w).good() && w ? reinterpret_cast<const Uint32 *>(w) : nullptr;
}

/// 32-bit integer samples, Float and Double Float Pixel Data (into Float64), and 1-bit samples (into Gray8, 0 or
/// 1): whole frames from the element as DCMTK holds it (host byte order). False when the element is too short.
bool decodeWideOrPacked(const pixels::Plan &plan, const ImageInfo &stored, DcmElement *element, DecodedImage &image)
{
    const qint64 perFrame = qint64(stored.columns) * stored.rows;
    const qint64 samples = perFrame * stored.frames;
    if (plan.bitPacked) {
        // Bits run on from row to row and frame to frame; the first pixel is the least significant bit.
        Uint8 *bits = nullptr;
        Uint16 *words = nullptr;
        const uchar *raw = nullptr;
        if (element->getUint8Array(bits).good() && bits)
            raw = bits;
        else if (element->getUint16Array(words).good() && words)
            raw = reinterpret_cast<const uchar *>(words);
        if (!raw || qint64(element->getLength()) < (samples + 7) / 8)
            return false;
        for (int f = 0; f < stored.frames; ++f) {
            uchar *out = image.pixels.frameData(f);
            for (qint64 i = 0; i < perFrame; ++i) {
                const qint64 bit = qint64(f) * perFrame + i;
                out[i] = (raw[bit >> 3] >> (bit & 7)) & 1;
            }
        }
        return true;
    }
    if (qint64(element->getLength()) < samples * plan.bytesPerSample)
        return false;
    for (int f = 0; f < stored.frames; ++f) {
        auto *out = reinterpret_cast<double *>(image.pixels.frameData(f));
        const qint64 from = qint64(f) * perFrame;
        if (plan.floatSamples && plan.bytesPerSample == 4) {
            Float32 *v = nullptr;
            if (element->getFloat32Array(v).bad() || !v)
                return false;
            std::copy(v + from, v + from + perFrame, out);
        } else if (plan.floatSamples) {
            Float64 *v = nullptr;
            if (element->getFloat64Array(v).bad() || !v)
                return false;
            std::copy(v + from, v + from + perFrame, out);
        } else {
            const Uint32 *v = uint32Samples(element);
            if (!v)
                return false;
            pixels::convertRows(plan, stored, reinterpret_cast<const uchar *>(v + from), 0, stored.rows, reinterpret_cast<uchar *>(out));
        }
    }
    return true;
}

/// Colour of 32 bits a sample (native): shown at 8 bits, as 16-bit colour is (the plan's shift).
bool decodeWideColour(const pixels::Plan &plan, const ImageInfo &stored, DcmElement *element, DecodedImage &image)
{
    if (qint64(element->getLength()) < qint64(plan.storedFrameBytes) * stored.frames)
        return false;
    const Uint32 *v = uint32Samples(element);
    if (!v)
        return false;
    for (int f = 0; f < stored.frames; ++f) {
        const uchar *frame = reinterpret_cast<const uchar *>(v) + qsizetype(f) * plan.storedFrameBytes;
        if (plan.planar == 1)
            pixels::convertPlanarFrame(plan, stored, frame, image.pixels.frameData(f));
        else
            pixels::convertRows(plan, stored, frame, 0, stored.rows, image.pixels.frameData(f));
    }
    return true;
}
} // namespace

Result<DecodedImage> decodeDataset(DcmDataset *ds)
{
    const E_TransferSyntax original = ds->getOriginalXfer();
    const DcmXfer originalXfer(original);
    const QString xferUid = QString::fromLatin1(originalXfer.getXferID());
    // JPEG 2000 is ours (OpenJPEG); the other compressed syntaxes go through DCMTK's codecs.
    const bool jpeg2000 = original == EXS_JPEG2000LosslessOnly || original == EXS_JPEG2000;
    if (Error e = checkJpegFragments(ds, original); e.isError())
        return e;
    if (originalXfer.isEncapsulated() && !jpeg2000) {
        const OFCondition cond = ds->chooseRepresentation(EXS_LittleEndianExplicit, nullptr);
        if ((cond.bad() || !ds->canWriteXfer(EXS_LittleEndianExplicit)) && DcmCodecList::canChangeCoding(original, EXS_LittleEndianExplicit)) {
            // A codec is there: the data itself is broken.
            return Error(ErrorCode::InvalidDicom, QStringLiteral("cannot decode the %1 pixel data%2")
                                                      .arg(QString::fromLatin1(originalXfer.getXferName()),
                                                           cond.bad() ? QStringLiteral(": ") + QString::fromLatin1(cond.text()) : QString()));
        }
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
    const ImageInfo stored = info;  // as the data is stored; the plan turns colour into RGB
    Result<pixels::Plan> planned = pixels::makePlan(ds, info, jpeg2000);
    if (!planned.isOk())
        return planned.error();
    const pixels::Plan &plan = planned.value();

    DcmElement *pixelElement = nullptr;
    const DcmTagKey pixelTag = !stored.floatSamples ? DCM_PixelData : stored.bitsAllocated == 32 ? DCM_FloatPixelData : DCM_DoubleFloatPixelData;
    if (ds->findAndGetElement(pixelTag, pixelElement).bad() || !pixelElement)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("no Pixel Data"));
    image.pixels = PixelBuffer(plan.format, info.columns, info.rows, info.frames);
    if ((plan.floatSamples || plan.bytesPerSample == 4) && DcmXfer(original).isBigEndian())
        return Error(ErrorCode::Unsupported, QStringLiteral("32- and 64-bit samples in the retired big endian transfer syntax"));
    if (plan.color && plan.bytesPerSample == 4)
        return decodeWideColour(plan, stored, pixelElement, image) ? image : Result<DecodedImage>(Error(ErrorCode::InvalidDicom, QStringLiteral("Pixel Data holds fewer bytes than the image needs")));
    if (plan.floatSamples || plan.bytesPerSample == 4 || plan.bitPacked)
        return decodeWideOrPacked(plan, stored, pixelElement, image) ? image : Result<DecodedImage>(Error(ErrorCode::InvalidDicom, QStringLiteral("Pixel Data holds fewer bytes than the image needs")));

    if (jpeg2000) {
        Result<QList<QByteArray>> frames = encapsulatedFrames(pixelElement, original, info.frames);
        if (!frames.isOk())
            return frames.error();
        for (int f = 0; f < info.frames; ++f) {
            if (Error e = decodeJpeg2000Frame(plan, stored, frames.value().at(f), image.pixels.frameData(f), &info); e.isError())
                return e.withContext(QStringLiteral("frame %1").arg(f + 1));
        }
        return image;
    }

    // The element's value is in host byte order after parsing; 8-bit data may be held as OB or OW.
    const qint64 available = qint64(pixelElement->getLength());
    const qint64 needed = qint64(plan.storedFrameBytes) * info.frames;
    if (available < needed) {
        return Error(ErrorCode::InvalidDicom, QStringLiteral("Pixel Data holds %1 bytes, the image needs %2")
                                                  .arg(available).arg(needed));
    }
    const uchar *raw = nullptr;
    Uint8 *raw8 = nullptr;
    Uint16 *raw16 = nullptr;
    if (info.bitsAllocated == 16) {
        if (pixelElement->getUint16Array(raw16).bad() || !raw16)
            return Error(ErrorCode::InvalidDicom, QStringLiteral("cannot read 16-bit Pixel Data"));
        raw = reinterpret_cast<const uchar *>(raw16);
    } else if (pixelElement->getUint8Array(raw8).good() && raw8) {
        raw = raw8;
    } else if (pixelElement->getUint16Array(raw16).good() && raw16) {
        // OW on a little-endian host: the words' bytes are the original byte stream.
        static_assert(Q_BYTE_ORDER == Q_LITTLE_ENDIAN, "8-bit OW pixel data assumes a little-endian host");
        raw = reinterpret_cast<const uchar *>(raw16);
    } else {
        return Error(ErrorCode::InvalidDicom, QStringLiteral("cannot read 8-bit Pixel Data"));
    }
    for (int f = 0; f < info.frames; ++f) {
        const uchar *frame = raw + qsizetype(f) * plan.storedFrameBytes;
        if (plan.planar == 1)
            pixels::convertPlanarFrame(plan, stored, frame, image.pixels.frameData(f));
        else
            pixels::convertRows(plan, stored, frame, 0, info.rows, image.pixels.frameData(f));
    }
    return image;
}

Result<DecodedImage> decodeDicom(const ByteView &bytes)
{
    registerCodecs();
    DcmFileFormat ff;
    if (Error e = parse(bytes, ff, ParseExtent::Everything); e.isError())
        return e;
    Result<DecodedImage> image = decodeDataset(ff.getDataset());
    OFString stored;  // deflated data was inflated before DCMTK read it: the file's own syntax is in its meta header
    if (image.isOk() && ff.getMetaInfo()->findAndGetOFString(DCM_TransferSyntaxUID, stored).good()
        && stored == UID_DeflatedExplicitVRLittleEndianTransferSyntax)
        image.value().info.transferSyntaxUid = QString::fromLatin1(stored.c_str());
    if (image.isOk())
        noteDecoded(image.value().info.identity.sopInstanceUid);
    return image;
}

} // namespace spectrum
