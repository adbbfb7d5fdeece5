// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/codecs/streamingdecoder.h"

#include "codecs/decoding.h"

#include <dcmtk/dcmdata/dccodec.h>
#include <dcmtk/dcmdata/dcistrmb.h>
#include <dcmtk/dcmdata/dcpixseq.h>
#include <dcmtk/dcmdata/dcpxitem.h>

#include <algorithm>
#include <cstring>

namespace spectrum {

using namespace spectrum::dcmtk;

namespace {

enum class Stage {
    Header,        ///< DCMTK is parsing up to Pixel Data
    PixelElement,  ///< the Pixel Data element's own tag and length are next
    Native,        ///< rows of native pixel data
    ItemHeader,    ///< encapsulated: the next item's tag and length
    ItemValue,     ///< encapsulated: an item's bytes
    Whole,         ///< keeping every byte, decoded at finish() (deflated data)
    Done,
    Failed,
};

quint32 le32(const uchar *p) { return quint32(p[0]) | quint32(p[1]) << 8 | quint32(p[2]) << 16 | quint32(p[3]) << 24; }
quint32 be32(const uchar *p) { return quint32(p[3]) | quint32(p[2]) << 8 | quint32(p[1]) << 16 | quint32(p[0]) << 24; }
quint16 le16(const uchar *p) { return quint16(p[0] | p[1] << 8); }
quint16 be16(const uchar *p) { return quint16(p[1] | p[0] << 8); }

} // namespace

struct StreamingDecoder::Private
{
    Stage stage = Stage::Header;
    Error error;
    qint64 fed = 0;

    // Header: everything so far (read again until the header is whole; kept whole for deflated data).
    QByteArray all;
    qint64 nextHeaderAttempt = 0;  ///< the header is read again once this many bytes are here
    DcmFileFormat fileFormat;
    bool metaChecked = false;

    ImageInfo info;        ///< as reported: what the pixels are
    ImageInfo stored;      ///< as stored (before colour became RGB)
    pixels::Plan plan;
    PixelBuffer pixels;
    E_TransferSyntax xfer = EXS_Unknown;
    bool explicitVr = true;
    bool bigEndian = false;
    bool encapsulated = false;
    bool jpeg2000 = false;
    int frames = 0;        ///< complete
    int rows = 0;          ///< complete, of frame `frames`

    QByteArray pending;    ///< bytes not yet used: a partial element header, row, item header or fragment

    // Native data: the unit (a row, or a frame stored plane by plane) and how many bytes of the value remain.
    qsizetype unitBytes = 0;
    qint64 valueLeft = 0;

    // Encapsulated data.
    bool offsetTableSeen = false;
    QList<quint32> frameStarts;       ///< from the Basic Offset Table: frame offsets from the first fragment
    quint32 itemLength = 0;
    quint64 fragmentOffset = 0;       ///< of the next fragment item, counted like the offset table does
    QList<QByteArray> frameFragments; ///< fragments of the frame being received

    Error fail(const Error &e)
    {
        stage = Stage::Failed;
        error = e;
        pending.clear();
        all.clear();
        return e;
    }

    Error parseHeader(bool endOfData)
    {
        // Read from the start over everything so far each time (a header is a few kilobytes), as a whole input
        // with parse()'s checks — never an element allocated at a length the bytes do not back. Tried again once
        // half as much again has come, so a large header costs a few reads, not one per piece.
        if (!endOfData && all.size() < nextHeaderAttempt)
            return Error();
        fileFormat = DcmFileFormat();
        Result<qint64> valueAt = dcmtk::readHeaderSoFar(all.constData(), all.size(), endOfData, fileFormat);
        if (!valueAt.isOk())
            return fail(valueAt.error());
        if (valueAt.value() == dcmtk::kDeflatedWhole) {
            stage = Stage::Whole;  // offsets inside a deflated stream mean nothing here: decoded when complete
            return Error();
        }
        if (valueAt.value() < 0) {
            nextHeaderAttempt = std::max(all.size() + 2048, all.size() * 3 / 2);
            return Error();
        }
        // DCMTK stops having read the Pixel Data element's tag and length: its value starts here.
        return headerParsed(valueAt.value(), endOfData);
    }

    Error headerParsed(qint64 valueAt, bool endOfData)
    {
        DcmDataset *ds = fileFormat.getDataset();
        xfer = ds->getOriginalXfer();
        const DcmXfer x(xfer);
        if (xfer == EXS_DeflatedLittleEndianExplicit || ds->tagExists(DCM_FloatPixelData) || ds->tagExists(DCM_DoubleFloatPixelData)) {
            // Offsets inside a deflated stream mean nothing here; real-valued pixels (read as part of the header,
            // which stops at Pixel Data only) are rare: both decoded when complete.
            stage = Stage::Whole;
            return Error();
        }
        if (xfer == EXS_Unknown)
            return fail(Error(ErrorCode::InvalidDicom, QStringLiteral("no transfer syntax could be determined")));
        explicitVr = x.isExplicitVR();
        const qint64 pixelElementAt = valueAt - (explicitVr ? 12 : 8);
        if ((endOfData && valueAt >= all.size()) || pixelElementAt < 132)
            return fail(Error(ErrorCode::InvalidDicom, QStringLiteral("no Pixel Data")));
        bigEndian = x.isBigEndian();
        encapsulated = x.isEncapsulated();
        jpeg2000 = xfer == EXS_JPEG2000LosslessOnly || xfer == EXS_JPEG2000;
        if (encapsulated && !jpeg2000 && !DcmCodecList::canChangeCoding(xfer, EXS_LittleEndianExplicit)) {
            return fail(Error(ErrorCode::Unsupported, QStringLiteral("unsupported transfer syntax %1 (%2)")
                                                          .arg(QString::fromLatin1(x.getXferID()), QString::fromLatin1(x.getXferName()))));
        }
        Result<ImageInfo> read = readImageInfo(ds);
        if (!read.isOk())
            return fail(read.error());
        stored = read.value();
        stored.transferSyntaxUid = QString::fromLatin1(x.getXferID());
        if ((bigEndian && stored.bitsAllocated == 8) || stored.bitsAllocated == 1 || stored.bitsAllocated == 32) {
            // 8-bit samples in big-endian words, bits packed across rows, 32-bit samples: rare, left to the
            // whole-file decoder once complete.
            stage = Stage::Whole;
            return Error();
        }
        info = stored;
        if (!encapsulated || jpeg2000) {
            Result<pixels::Plan> planned = pixels::makePlan(ds, info, jpeg2000);
            if (!planned.isOk())
                return fail(planned.error());
            plan = planned.takeValue();
            pixels = PixelBuffer(plan.format, info.columns, info.rows, info.frames);
        } else if (PixelBuffer::checkedByteCount(PixelFormat::Rgb24, info.columns, info.rows, info.frames) < 0) {
            // What DCMTK's codecs give (the colour model may change) is known with the first frame: the pixels
            // are allocated then.
            return fail(Error(ErrorCode::InvalidDicom, QStringLiteral("image too large: %1 × %2 × %3 frames").arg(info.columns).arg(info.rows).arg(info.frames)));
        }
        pending = all.mid(pixelElementAt);
        all.clear();
        stage = Stage::PixelElement;
        return Error();
    }

    Error decodeWhole()
    {
        Result<DecodedImage> image = decodeDicom(ByteView(all));
        if (!image.isOk())
            return fail(image.error());
        info = image.value().info;
        pixels = image.value().pixels;
        frames = info.frames;
        rows = 0;
        stage = Stage::Done;
        all.clear();
        return Error();
    }

    /// Consumes what it can of `pending`; returns an error or nothing (waiting for more).
    Error advance(const std::function<void(int, int)> &onRows)
    {
        qsizetype at = 0;
        auto left = [&] { return pending.size() - at; };
        auto bytes = [&] { return reinterpret_cast<const uchar *>(pending.constData()) + at; };
        Error result;
        while (stage != Stage::Done && stage != Stage::Failed) {
            if (stage == Stage::PixelElement) {
                const int headerBytes = explicitVr ? 12 : 8;
                if (left() < headerBytes)
                    break;
                const uchar *p = bytes();
                const quint16 group = bigEndian ? be16(p) : le16(p), element = bigEndian ? be16(p + 2) : le16(p + 2);
                if (group != 0x7FE0 || element != 0x0010) {
                    result = fail(Error(ErrorCode::InvalidDicom, QStringLiteral("expected Pixel Data, found (%1,%2)")
                                                                     .arg(group, 4, 16, QLatin1Char('0')).arg(element, 4, 16, QLatin1Char('0'))));
                    break;
                }
                const quint32 length = explicitVr ? (bigEndian ? be32(p + 8) : le32(p + 8)) : (bigEndian ? be32(p + 4) : le32(p + 4));
                at += headerBytes;
                if (encapsulated) {
                    if (length != 0xFFFFFFFFu) {
                        result = fail(Error(ErrorCode::InvalidDicom, QStringLiteral("encapsulated Pixel Data with a defined length")));
                        break;
                    }
                    stage = Stage::ItemHeader;
                    continue;
                }
                const qint64 needed = qint64(plan.storedFrameBytes) * info.frames;
                if (length == 0xFFFFFFFFu || qint64(length) < needed) {
                    result = fail(Error(ErrorCode::InvalidDicom, QStringLiteral("Pixel Data holds %1 bytes, the image needs %2")
                                                                     .arg(length == 0xFFFFFFFFu ? QStringLiteral("an undefined number of") : QString::number(length)).arg(needed)));
                    break;
                }
                unitBytes = plan.planar == 1 ? plan.storedFrameBytes : plan.storedRowBytes;
                valueLeft = needed;
                stage = Stage::Native;
            } else if (stage == Stage::Native) {
                const qsizetype units = std::min<qint64>(left(), valueLeft) / unitBytes;
                if (units == 0)
                    break;
                QByteArray unit(unitBytes, Qt::Uninitialized);  // aligned, and swapped where the data is big endian
                for (qsizetype u = 0; u < units; ++u) {
                    std::memcpy(unit.data(), bytes(), size_t(unitBytes));
                    at += unitBytes;
                    valueLeft -= unitBytes;
                    if (bigEndian && plan.bytesPerSample == 2) {
                        auto *w = reinterpret_cast<quint16 *>(unit.data());
                        for (qsizetype i = 0; i < unitBytes / 2; ++i)
                            w[i] = quint16(w[i] << 8 | w[i] >> 8);
                    }
                    uchar *frameOut = pixels.frameData(frames);
                    if (plan.planar == 1) {
                        pixels::convertPlanarFrame(plan, stored, reinterpret_cast<const uchar *>(unit.constData()), frameOut);
                        rows = info.rows;
                    } else {
                        pixels::convertRows(plan, stored, reinterpret_cast<const uchar *>(unit.constData()), rows, 1, frameOut);
                        ++rows;
                    }
                    if (rows == info.rows) {
                        if (onRows)
                            onRows(frames, rows);
                        ++frames;
                        rows = 0;
                    }
                }
                if (onRows && rows > 0)
                    onRows(frames, rows);
                if (valueLeft == 0) {
                    stage = Stage::Done;  // whatever follows Pixel Data (padding, signatures) is not needed
                    break;
                }
            } else if (stage == Stage::ItemHeader) {
                if (left() < 8)
                    break;
                const uchar *p = bytes();
                const quint16 group = le16(p), element = le16(p + 2);
                const quint32 length = le32(p + 4);
                at += 8;
                if (group == 0xFFFE && element == 0xE0DD) {  // the end of the fragments
                    result = endOfFragments(onRows);
                    break;
                }
                if (group != 0xFFFE || element != 0xE000 || length == 0xFFFFFFFFu) {
                    result = fail(Error(ErrorCode::InvalidDicom, QStringLiteral("malformed encapsulated Pixel Data: item (%1,%2)")
                                                                     .arg(group, 4, 16, QLatin1Char('0')).arg(element, 4, 16, QLatin1Char('0'))));
                    break;
                }
                itemLength = length;
                if (offsetTableSeen) {
                    // A fragment starting where the offset table puts the next frame closes the current one.
                    const int next = frames + 1;
                    if (!frameFragments.isEmpty() && next < frameStarts.size() && fragmentOffset >= frameStarts[next]) {
                        if (Error e = decodeFrame(onRows); e.isError()) {
                            result = e;
                            break;
                        }
                    }
                }
                stage = Stage::ItemValue;
            } else if (stage == Stage::ItemValue) {
                if (left() < qint64(itemLength))
                    break;
                const QByteArray value = pending.mid(at, itemLength);
                at += itemLength;
                stage = Stage::ItemHeader;
                if (!offsetTableSeen) {
                    offsetTableSeen = true;
                    for (quint32 i = 0; i + 4 <= itemLength; i += 4)
                        frameStarts << le32(reinterpret_cast<const uchar *>(value.constData()) + i);
                    if (frameStarts.size() < info.frames || (!frameStarts.isEmpty() && frameStarts[0] != 0))
                        frameStarts.clear();  // absent or unusable: frames are told apart another way
                    continue;
                }
                fragmentOffset += 8 + quint64(itemLength);
                frameFragments << value;
                if (frames >= info.frames) {
                    result = fail(Error(ErrorCode::InvalidDicom, QStringLiteral("more fragments than the %1 frame(s) the header announces").arg(info.frames)));
                    break;
                }
                if (frameStarts.isEmpty() && info.frames > 1 && endsAFrame(value)) {
                    if (Error e = decodeFrame(onRows); e.isError()) {
                        result = e;
                        break;
                    }
                }
            } else {
                break;
            }
        }
        if (stage == Stage::Failed)
            return error;
        pending.remove(0, at);
        if (stage == Stage::Done)
            pending.clear();
        return result;
    }

    /// Without an offset table: RLE frames are one fragment each; JPEG and JPEG 2000 frames end with FF D9.
    bool endsAFrame(const QByteArray &fragment) const
    {
        if (xfer == EXS_RLELossless)
            return true;
        const qsizetype n = fragment.size();
        // An odd-length codestream is padded with one zero byte to an even fragment length.
        return (n >= 2 && uchar(fragment[n - 2]) == 0xFF && uchar(fragment[n - 1]) == 0xD9)
            || (n >= 3 && uchar(fragment[n - 3]) == 0xFF && uchar(fragment[n - 2]) == 0xD9 && fragment[n - 1] == 0);
    }

    Error endOfFragments(const std::function<void(int, int)> &onRows)
    {
        if (!frameFragments.isEmpty()) {
            if (Error e = decodeFrame(onRows); e.isError())
                return e;
        }
        if (frames != info.frames)
            return fail(Error(ErrorCode::InvalidDicom, QStringLiteral("the fragments hold %1 frame(s), the header announces %2").arg(frames).arg(info.frames)));
        stage = Stage::Done;
        return Error();
    }

    /// The fragments gathered make frame `frames`: decoded into the pixel buffer.
    Error decodeFrame(const std::function<void(int, int)> &onRows)
    {
        if (frames >= info.frames)
            return fail(Error(ErrorCode::InvalidDicom, QStringLiteral("more frames than the %1 the header announces").arg(info.frames)));
        const QByteArray codestream = frameFragments.join();
        frameFragments.clear();
        uchar *out = pixels.frameData(frames);
        if (jpeg2000) {
            if (Error e = decodeJpeg2000Frame(plan, stored, codestream, out, &info); e.isError())
                return fail(e.withContext(QStringLiteral("frame %1").arg(frames + 1)));
        } else {
            // The header and this one frame, encapsulated as it came, through DCMTK's codec.
            DcmDataset one(*fileFormat.getDataset());
            one.putAndInsertString(DCM_NumberOfFrames, "1");
            auto *sequence = new DcmPixelSequence(DCM_PixelSequenceTag);
            sequence->insert(new DcmPixelItem(DCM_PixelItemTag));  // an empty offset table
            auto *item = new DcmPixelItem(DCM_PixelItemTag);
            item->putUint8Array(reinterpret_cast<const Uint8 *>(codestream.constData()), static_cast<unsigned long>(codestream.size()));
            sequence->insert(item);
            auto *pixelData = new DcmPixelData(DCM_PixelData);
            pixelData->putOriginalRepresentation(xfer, nullptr, sequence);
            one.insert(pixelData, true);
            Result<DecodedImage> decoded = decodeDataset(&one);
            if (!decoded.isOk())
                return fail(decoded.error().withContext(QStringLiteral("frame %1").arg(frames + 1)));
            const PixelBuffer &px = decoded.value().pixels;
            if (pixels.isNull()) {  // the first frame says what the pixels are
                const int frameCount = info.frames;
                info = decoded.value().info;
                info.frames = frameCount;
                info.transferSyntaxUid = stored.transferSyntaxUid;
                pixels = PixelBuffer(px.format(), px.width(), px.height(), frameCount);
                out = pixels.frameData(frames);
            }
            if (px.format() != pixels.format() || px.width() != pixels.width() || px.height() != pixels.height())
                return fail(Error(ErrorCode::InvalidDicom, QStringLiteral("frame %1 decodes to another image than the header describes").arg(frames + 1)));
            std::memcpy(out, px.frameData(0), size_t(pixels.frameBytes()));
        }
        if (onRows)
            onRows(frames, info.rows);
        ++frames;
        rows = 0;
        return Error();
    }
};

StreamingDecoder::StreamingDecoder() : d(std::make_unique<Private>()) { dcmtk::registerCodecs(); }

StreamingDecoder::~StreamingDecoder() = default;

Error StreamingDecoder::feed(const char *data, qint64 length)
{
    if (d->stage == Stage::Failed)
        return d->error;
    if (length <= 0 || d->stage == Stage::Done)
        return Error();
    d->fed += length;
    if (d->stage == Stage::Header || d->stage == Stage::Whole) {
        d->all.append(data, length);
        if (d->stage == Stage::Whole)
            return Error();
        if (d->fed >= 132 && std::memcmp(d->all.constData() + 128, "DICM", 4) != 0)
            return d->fail(Error(ErrorCode::InvalidDicom, QStringLiteral("not a DICOM file (no DICM after the 128-byte preamble)")));
        if (d->fed < 132)
            return Error();
        if (!d->metaChecked) {
            // Deflated data is recognised from the meta header, before DCMTK reads into the dataset: decoded
            // when complete (offsets in a deflated stream say nothing about where rows are).
            if (d->fed < 144)
                return Error();
            const auto *p = reinterpret_cast<const uchar *>(d->all.constData()) + 132;
            if (le16(p) == 0x0002 && le16(p + 2) == 0x0000 && p[4] == 'U' && p[5] == 'L') {
                const qint64 metaEnd = 144 + qint64(le32(p + 8));
                if (d->fed < metaEnd)
                    return Error();
                if (d->all.left(metaEnd).contains("1.2.840.10008.1.2.1.99")) {
                    d->stage = Stage::Whole;
                    return Error();
                }
            }
            d->metaChecked = true;
        }
        if (Error e = d->parseHeader(false); e.isError())
            return e;
        if (d->stage == Stage::Header || d->stage == Stage::Whole)
            return Error();
        if (onHeader)
            onHeader(d->info);
    } else {
        d->pending.append(data, length);
    }
    return d->advance(onRows);
}

Error StreamingDecoder::finish()
{
    if (d->stage == Stage::Failed)
        return d->error;
    if (d->stage == Stage::Header) {
        if (d->fed < 132)
            return d->fail(Error(ErrorCode::InvalidDicom, d->fed == 0 ? QStringLiteral("empty input") : QStringLiteral("not a DICOM file (%1 bytes)").arg(d->fed)));
        if (Error e = d->parseHeader(true); e.isError())
            return e;
        if (d->stage != Stage::Whole) {
            if (onHeader)
                onHeader(d->info);
            if (Error e = d->advance(onRows); e.isError())
                return e;
        }
    }
    if (d->stage == Stage::Whole) {
        if (Error e = d->decodeWhole(); e.isError())
            return e;
        if (onHeader)
            onHeader(d->info);
        if (onRows) {
            for (int f = 0; f < d->info.frames; ++f)
                onRows(f, d->info.rows);
        }
        return Error();
    }
    if (d->stage != Stage::Done) {
        return d->fail(Error(ErrorCode::InvalidDicom, QStringLiteral("the data ended after %1 of %2 frame(s) (%3 rows of the next): the image is incomplete")
                                                          .arg(d->frames).arg(d->info.frames).arg(d->rows)));
    }
    return Error();
}

bool StreamingDecoder::hasHeader() const { return d->info.rows > 0; }
const ImageInfo &StreamingDecoder::info() const { return d->info; }
const PixelBuffer &StreamingDecoder::pixels() const { return d->pixels; }
int StreamingDecoder::framesComplete() const { return d->frames; }
int StreamingDecoder::rowsComplete() const { return d->rows; }
bool StreamingDecoder::isComplete() const { return d->stage == Stage::Done; }
qint64 StreamingDecoder::bytesFed() const { return d->fed; }

} // namespace spectrum
