// SPDX-License-Identifier: Apache-2.0
#include "dcmtksupport.h"

#include <dcmtk/dcmdata/dcistrmb.h>
#include <dcmtk/dcmdata/dcostrmb.h>
#include <dcmtk/dcmdata/dcrledrg.h>
#include <dcmtk/dcmjpeg/djdecode.h>
#include <dcmtk/dcmjpls/djdecode.h>
#include <dcmtk/oflog/oflog.h>

#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace spectrum::dcmtk {

void registerCodecs()
{
    static std::once_flag once;
    std::call_once(once, [] {
        // Our callers get every problem as an Error value; DCMTK's own warnings and errors on stderr (for example
        // "PixelData encountered, skipping rest of dataset" on every header-only read) are noise.
        OFLog::getLogger("dcmtk.dcmdata").setLogLevel(OFLogger::FATAL_LOG_LEVEL);
        OFLog::getLogger("dcmtk.dcmsr").setLogLevel(OFLogger::FATAL_LOG_LEVEL);  // reports: what is not read is listed
        // Colour JPEG is converted to RGB on decompression, which is what the renderer expects.
        DJDecoderRegistration::registerCodecs(EDC_photometricInterpretation);
        DJLSDecoderRegistration::registerCodecs();
        DcmRLEDecoderRegistration::registerCodecs();
        // Unregistered at exit, when no decoding runs any more: DCMTK's list would otherwise be freed without
        // its entries (LeakSanitizer reports them).
        std::atexit([] {
            DcmRLEDecoderRegistration::cleanup();
            DJLSDecoderRegistration::cleanup();
            DJDecoderRegistration::cleanup();
        });
    });
}

bool hasPart10Preamble(const char *data, qint64 size)
{
    return size >= 132 && std::memcmp(data + 128, "DICM", 4) == 0;
}

namespace {
/// Raw deflate (RFC 1951, as the Deflated Explicit VR Little Endian syntax has it) inflated whole — never more
/// than `limit` bytes, so that a deflate bomb is an error, not all the memory there is.
Result<std::vector<char>> inflateRaw(const char *data, qint64 size, qint64 limit)
{
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
        return Error(ErrorCode::Internal, QStringLiteral("zlib cannot start"));
    std::vector<char> out(size_t(std::min<qint64>(limit, std::max<qint64>(4096, size * 4))));
    z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data));
    qint64 left = size;
    qint64 produced = 0;
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        if (produced == qint64(out.size())) {
            if (produced >= limit) {
                inflateEnd(&z);
                return Error(ErrorCode::InvalidDicom, QStringLiteral("deflated data inflates beyond %1 bytes").arg(limit));
            }
            out.resize(size_t(std::min<qint64>(limit, produced * 2)));
        }
        const uInt in = uInt(std::min<qint64>(left, 1 << 30));
        z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data + (size - left)));
        z.avail_in = in;
        z.next_out = reinterpret_cast<Bytef *>(out.data() + produced);
        z.avail_out = uInt(std::min<qint64>(qint64(out.size()) - produced, 1 << 30));
        const uInt outBefore = z.avail_out;
        rc = inflate(&z, Z_NO_FLUSH);
        left -= in - z.avail_in;
        produced += outBefore - z.avail_out;
        if (rc == Z_BUF_ERROR && left == 0)
            break;  // the stream ends without its final block: take what there is (DCMTK does the same)
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            inflateEnd(&z);
            return Error(ErrorCode::InvalidDicom, QStringLiteral("deflated data is damaged (zlib: %1)").arg(QString::fromLatin1(z.msg ? z.msg : "?")));
        }
    }
    inflateEnd(&z);
    out.resize(size_t(produced));
    return out;
}

constexpr qint64 kMaxInflated = qint64(2) << 30;

/// Where a value DCMTK deferred (longer than DCM_MaxReadLength) is read again: the same memory, from its offset.
class MemoryStreamFactory : public DcmInputStreamFactory
{
public:
    MemoryStreamFactory(const char *base, offile_off_t size, offile_off_t offset) : m_base(base), m_size(size), m_offset(offset) {}
    DcmInputStream *create() const override
    {
        auto *stream = new DcmInputBufferStream();
        stream->setBuffer(m_base + m_offset, m_size - m_offset);
        stream->setEos();
        return stream;
    }
    DcmInputStreamFactory *clone() const override { return new MemoryStreamFactory(*this); }
    DcmInputStreamFactoryType ident() const override { return DFT_DcmInputFileStreamFactory; }  // never kept: see below

private:
    const char *m_base;
    offile_off_t m_size, m_offset;
};

/// The whole input in memory, read with DCMTK's checks: DCMTK allocates an element's value as its length says
/// before it reads it — 4 GB for a 600-byte file with a lying length (found by fuzzing) — unless the stream
/// can give the value later, in which case it first skips over it and fails if the bytes are not there. This
/// stream can; the values are then loaded at once (parse() below), so nothing points into the input after.
class CheckedMemoryStream : public DcmInputBufferStream
{
public:
    /// `end`: these are all the bytes (else more may follow, and a value cut short just waits for them).
    CheckedMemoryStream(const char *base, offile_off_t size, bool end = true) : m_base(base), m_size(size)
    {
        setBuffer(base, size);
        if (end)
            setEos();
    }
    DcmInputStreamFactory *newFactory() const override
    {
        // Behind a compression filter, offsets in the input say nothing about the values (as DCMTK's file stream).
        return m_filtered ? nullptr : new MemoryStreamFactory(m_base, m_size, tell());
    }
    OFCondition installCompressionFilter(E_StreamCompression filterType) override
    {
        m_filtered = true;
        return DcmInputBufferStream::installCompressionFilter(filterType);
    }

private:
    const char *m_base;
    offile_off_t m_size;
    bool m_filtered = false;
};
} // namespace

Result<qint64> readHeaderSoFar(const char *data, qint64 size, bool complete, DcmFileFormat &fileFormat)
{
    // Deflated data is never read here: behind DCMTK's inflating filter no length can be checked against what
    // follows (found by fuzzing: 3 GB for a deflated file without a meta group length). It is decoded whole.
    if (hasPart10Preamble(data, size)) {
        DcmMetaInfo meta;
        CheckedMemoryStream metaStream(data, offile_off_t(size), complete);
        meta.transferInit();
        const OFCondition metaRead = meta.read(metaStream, EXS_Unknown, EGL_noChange, DCM_MaxReadLength);
        meta.transferEnd();
        OFString xfer;
        if (metaRead.good() && meta.loadAllDataIntoMemory().good() && meta.findAndGetOFString(DCM_TransferSyntaxUID, xfer).good()
            && xfer == UID_DeflatedExplicitVRLittleEndianTransferSyntax)
            return qint64(kDeflatedWhole);
    }
    CheckedMemoryStream stream(data, offile_off_t(size), complete);
    fileFormat.transferInit();
    const OFCondition cond = fileFormat.readUntilTag(stream, EXS_Unknown, EGL_noChange, DCM_MaxReadLength, DCM_PixelData);
    fileFormat.transferEnd();
    if (cond == EC_StreamNotifyClient || cond == EC_InvalidStream) {
        if (!complete)
            return qint64(-1);
        return Error(ErrorCode::InvalidDicom, QStringLiteral("the data ended inside the header (%1 bytes)").arg(size));
    }
    if (cond.bad())
        return toError(cond, QStringLiteral("cannot parse DICOM data"));
    const qint64 valueAt = qint64(stream.tell());
    if (OFCondition loaded = fileFormat.loadAllDataIntoMemory(); loaded.bad())  // nothing points into `data` after this
        return toError(loaded, QStringLiteral("cannot read DICOM data"));
    return valueAt;
}

Error parse(const ByteView &bytes, DcmFileFormat &fileFormat, ParseExtent extent)
{
    if (bytes.size() == 0)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("empty input"));
    // Deflated data: DCMTK would inflate as it reads, not knowing how much is left, and allocate whatever an
    // element's length says (4 GB for a 600-byte file, found by fuzzing). Inflated here first, bounded, then
    // read as the explicit VR little endian it is, where DCMTK checks every length against what is there.
    if (hasPart10Preamble(bytes.data(), bytes.size())) {
        DcmMetaInfo meta;
        CheckedMemoryStream metaStream(bytes.data(), offile_off_t(bytes.size()));
        meta.transferInit();
        OFCondition metaRead = meta.read(metaStream, EXS_Unknown, EGL_noChange, DCM_MaxReadLength);
        meta.transferEnd();
        if (metaRead.good())
            metaRead = meta.loadAllDataIntoMemory();
        OFString xfer;
        if (metaRead.good() && meta.findAndGetOFString(DCM_TransferSyntaxUID, xfer).good()
            && xfer == UID_DeflatedExplicitVRLittleEndianTransferSyntax) {
            const qint64 at = qint64(metaStream.tell());
            Result<std::vector<char>> inflated = inflateRaw(bytes.data() + at, bytes.size() - at, kMaxInflated);
            if (!inflated.isOk())
                return inflated.error();
            CheckedMemoryStream stream(inflated.value().data(), offile_off_t(inflated.value().size()));
            *fileFormat.getMetaInfo() = meta;
            DcmDataset *ds = fileFormat.getDataset();
            ds->transferInit();
            const OFCondition cond = extent == ParseExtent::HeaderOnly
                ? ds->readUntilTag(stream, EXS_LittleEndianExplicit, EGL_noChange, DCM_MaxReadLength, DCM_PixelData)
                : ds->read(stream, EXS_LittleEndianExplicit, EGL_noChange, DCM_MaxReadLength);
            ds->transferEnd();
            if (cond.bad()) {
                if (cond == EC_StreamNotifyClient)
                    return Error(ErrorCode::InvalidDicom, QStringLiteral("truncated deflated DICOM data (%1 bytes inflated)").arg(inflated.value().size()));
                return toError(cond, QStringLiteral("cannot parse deflated DICOM data"));
            }
            if (OFCondition loaded = ds->loadAllDataIntoMemory(); loaded.bad())  // nothing may point into the inflated buffer after this
                return toError(loaded, QStringLiteral("cannot read deflated DICOM data"));
            return Error();
        }
    }
    CheckedMemoryStream stream(bytes.data(), offile_off_t(bytes.size()));
    fileFormat.transferInit();
    const OFCondition cond = extent == ParseExtent::HeaderOnly
        ? fileFormat.readUntilTag(stream, EXS_Unknown, EGL_noChange, DCM_MaxReadLength, DCM_PixelData)
        : fileFormat.read(stream, EXS_Unknown, EGL_noChange, DCM_MaxReadLength);
    fileFormat.transferEnd();
    if (cond.bad()) {
        if (cond == EC_StreamNotifyClient || cond == EC_InvalidStream)
            return Error(ErrorCode::InvalidDicom, QStringLiteral("truncated DICOM data (%1 bytes; an element is longer than what follows it)").arg(bytes.size()));
        return toError(cond, QStringLiteral("cannot parse DICOM data"));
    }
    if (OFCondition loaded = fileFormat.loadAllDataIntoMemory(); loaded.bad())  // nothing points into `bytes` after this
        return toError(loaded, QStringLiteral("cannot read DICOM data"));
    return Error();
}

Result<QByteArray> serialize(DcmFileFormat &fileFormat, E_TransferSyntax xfer)
{
    std::vector<char> chunk(1 << 20);
    DcmOutputBufferStream stream(chunk.data(), offile_off_t(chunk.size()));
    QByteArray out;
    fileFormat.transferInit();
    OFCondition cond = EC_StreamNotifyClient;
    while (cond == EC_StreamNotifyClient) {
        cond = fileFormat.write(stream, xfer, EET_ExplicitLength, nullptr);
        void *filled = nullptr;
        offile_off_t length = 0;
        stream.flushBuffer(filled, length);
        out.append(static_cast<const char *>(filled), qsizetype(length));
    }
    fileFormat.transferEnd();
    if (cond.bad())
        return toError(cond, QStringLiteral("cannot encode DICOM data"));
    return out;
}

QString getString(DcmItem *item, const DcmTagKey &tag, const DicomTextDecoder *text)
{
    OFString value;
    if (item->findAndGetOFStringArray(tag, value).bad())
        return QString();
    if (text)
        return text->decode(QByteArray(value.c_str(), qsizetype(value.length())), DcmTag(tag).getEVR() == EVR_PN);
    return QString::fromLatin1(value.c_str()).trimmed();
}

DicomTextDecoder textDecoder(DcmItem *dataset)
{
    OFString charset;
    if (dataset->findAndGetOFStringArray(DCM_SpecificCharacterSet, charset).bad())
        return DicomTextDecoder();
    return DicomTextDecoder(QByteArray(charset.c_str(), qsizetype(charset.length())));
}

int getInt(DcmItem *item, const DcmTagKey &tag, int fallback)
{
    Sint32 value = 0;
    if (item->findAndGetSint32(tag, value).good())
        return int(value);
    const QString s = getString(item, tag);
    bool ok = false;
    const int parsed = s.toInt(&ok);
    return ok ? parsed : fallback;
}

/// `count` numbers of a Decimal String, as DicomIdentity keeps them; empty when absent or not `count` of them.
QString decimals(DcmItem *ds, const DcmTagKey &tag, unsigned long count)
{
    DcmElement *e = nullptr;
    if (ds->findAndGetElement(tag, e).bad() || !e || e->getVM() != count)
        return QString();
    std::vector<double> values;
    for (unsigned long i = 0; i < count; ++i) {
        Float64 v = 0;
        if (e->getFloat64(v, i).bad())
            return QString();
        values.push_back(v);
    }
    return DicomIdentity::formatDecimals(values);
}

DicomIdentity readIdentity(DcmItem *ds)
{
    DicomIdentity id;
    const DicomTextDecoder text = textDecoder(ds);
    id.patientName = getString(ds, DCM_PatientName, &text);
    id.patientId = getString(ds, DCM_PatientID, &text);
    id.issuerOfPatientId = getString(ds, DCM_IssuerOfPatientID, &text);
    id.patientBirthDate = getString(ds, DCM_PatientBirthDate);
    id.patientSex = getString(ds, DCM_PatientSex);
    id.studyInstanceUid = getString(ds, DCM_StudyInstanceUID);
    id.studyDate = getString(ds, DCM_StudyDate);
    id.studyTime = getString(ds, DCM_StudyTime);
    id.studyDescription = getString(ds, DCM_StudyDescription, &text);
    id.accessionNumber = getString(ds, DCM_AccessionNumber, &text);
    id.seriesInstanceUid = getString(ds, DCM_SeriesInstanceUID);
    id.modality = getString(ds, DCM_Modality);
    id.seriesDescription = getString(ds, DCM_SeriesDescription, &text);
    id.bodyPartExamined = getString(ds, DCM_BodyPartExamined);
    id.viewPosition = getString(ds, DCM_ViewPosition);
    id.imageOrientation = decimals(ds, DCM_ImageOrientationPatient, 6);
    id.sliceThickness = decimals(ds, DCM_SliceThickness, 1);
    id.imagePosition = decimals(ds, DCM_ImagePositionPatient, 3);
    id.frameOfReferenceUid = getString(ds, DCM_FrameOfReferenceUID);
    id.seriesNumber = getInt(ds, DCM_SeriesNumber);
    id.sopInstanceUid = getString(ds, DCM_SOPInstanceUID);
    id.sopClassUid = getString(ds, DCM_SOPClassUID);
    id.instanceNumber = getInt(ds, DCM_InstanceNumber);
    return id;
}

namespace {

bool isText(DcmEVR vr)
{
    return vr == EVR_SH || vr == EVR_LO || vr == EVR_ST || vr == EVR_LT || vr == EVR_UT || vr == EVR_PN || vr == EVR_UC;
}

/// An element whose type DCMTK does not know: UN as written, or a private element read from implicit VR data.
bool ofUnknownType(const DcmElement *e)
{
    const DcmEVR vr = const_cast<DcmElement *>(e)->ident();
    return vr == EVR_UN || vr == EVR_UNKNOWN || vr == EVR_UNKNOWN2B;
}

bool anyNonAscii(const char *p, size_t n)
{
    return std::any_of(p, p + n, [](char c) { return (unsigned char)c >= 0x80; });
}

/// The text elements of `item` and its sequences' items, decoded: what convertTextToUtf8 writes back. False, with
/// why, when a value cannot be read plainly in its set: bytes not of it, non-ASCII text in no declared set (its set
/// would be a guess), or bytes in an element of no known type that may be text in it.
bool collectText(DcmItem *item, const DicomTextDecoder &text, QList<std::pair<DcmElement *, QByteArray>> *out, QString *problem)
{
    const QByteArray set = text.characterSet();
    const bool undeclared = set.isEmpty() || set == "ISO_IR 6";
    auto name = [](DcmElement *e) { return QStringLiteral("%1 %2").arg(QString::fromLatin1(DcmTag(e->getTag()).getTagName()), QString::fromLatin1(e->getTag().toString().c_str())); };
    for (unsigned long i = 0; i < item->card(); ++i) {
        DcmElement *e = item->getElement(i);
        if (e->ident() == EVR_SQ) {
            auto *sq = static_cast<DcmSequenceOfItems *>(e);
            for (unsigned long k = 0; k < sq->card(); ++k) {
                DcmItem *nested = sq->getItem(k);
                // An item may name its own character set (rare): its text is decoded by it.
                OFString own;
                const bool hasOwn = nested->findAndGetOFStringArray(DCM_SpecificCharacterSet, own, OFFalse).good();
                const DicomTextDecoder ownText(hasOwn ? QByteArray(own.c_str(), qsizetype(own.length())) : QByteArray());
                if (!collectText(nested, hasOwn ? ownText : text, out, problem))
                    return false;
            }
            continue;
        }
        if (ofUnknownType(e)) {
            // Its bytes may be text in the old set, and would be declared UTF-8: not relabelled silently.
            Uint8 *bytes = nullptr;
            if (e->getLength() > 0 && e->getUint8Array(bytes).good() && bytes && anyNonAscii(reinterpret_cast<const char *>(bytes), e->getLength())) {
                *problem = QStringLiteral("element %1 has no known type and holds bytes that may be text in '%2'; they cannot be re-encoded "
                                          "without knowing what they are")
                               .arg(QString::fromLatin1(e->getTag().toString().c_str()), QString::fromLatin1(undeclared ? QByteArray("no declared set") : set));
                return false;
            }
            continue;
        }
        if (!isText(e->ident()) || e->getLength() == 0)
            continue;
        OFString raw;
        if (e->getOFStringArray(raw).bad())  // DCMTK takes the padding off: leading and trailing spaces, trailing for ST, LT, UT
            continue;
        if (undeclared && anyNonAscii(raw.c_str(), raw.length())) {
            *problem = QStringLiteral("its %1 is not ASCII and its character set is not declared: it cannot be re-encoded without guessing").arg(name(e));
            return false;
        }
        const DcmEVR vr = e->ident();
        const auto kind = vr == EVR_PN                                       ? DicomTextDecoder::TextKind::PersonNames
            : vr == EVR_ST || vr == EVR_LT || vr == EVR_UT ? DicomTextDecoder::TextKind::FreeText
                                                                             : DicomTextDecoder::TextKind::Values;
        const QString value = text.decodeExact(QByteArray(raw.c_str(), qsizetype(raw.length())), kind);
        if (!text.problem().isEmpty()) {
            *problem = QStringLiteral("%1: %2").arg(name(e), text.problem());
            return false;
        }
        *out << std::make_pair(e, value.toUtf8());
    }
    return true;
}

} // namespace

Error convertTextToUtf8(DcmDataset *dataset)
{
    const DicomTextDecoder text = textDecoder(dataset);
    QList<std::pair<DcmElement *, QByteArray>> values;
    QString problem;
    if (!collectText(dataset, text, &values, &problem))
        return Error(ErrorCode::Unsupported, QStringLiteral("its text cannot be re-encoded (%1)").arg(problem));
    for (const auto &[element, utf8] : std::as_const(values))
        if (element->putString(utf8.constData()).bad())
            return Error(ErrorCode::Internal, QStringLiteral("cannot write %1 in UTF-8").arg(QString::fromLatin1(DcmTag(element->getTag()).getTagName())));
    // Nested items that named their own set now hold UTF-8 too.
    dataset->findAndDeleteElement(DCM_SpecificCharacterSet, OFTrue, OFTrue);
    dataset->putAndInsertString(DCM_SpecificCharacterSet, "ISO_IR 192");
    return {};
}

} // namespace spectrum::dcmtk
