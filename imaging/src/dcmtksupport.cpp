#include "dcmtksupport.h"

#include <dcmtk/dcmdata/dcistrmb.h>
#include <dcmtk/dcmdata/dcostrmb.h>
#include <dcmtk/dcmdata/dcrledrg.h>
#include <dcmtk/dcmjpeg/djdecode.h>
#include <dcmtk/dcmjpls/djdecode.h>
#include <dcmtk/oflog/oflog.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace spectrum::dcmtk {

void registerCodecs()
{
    static std::once_flag once;
    std::call_once(once, [] {
        // Our callers get every problem as an Error value; DCMTK's own warnings on stderr (for example
        // "PixelData encountered, skipping rest of dataset" on every header-only read) are noise.
        OFLog::getLogger("dcmtk.dcmdata").setLogLevel(OFLogger::ERROR_LOG_LEVEL);
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

Error parse(const ByteView &bytes, DcmFileFormat &fileFormat, ParseExtent extent)
{
    if (bytes.size() == 0)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("empty input"));
    DcmInputBufferStream stream;
    stream.setBuffer(bytes.data(), offile_off_t(bytes.size()));
    stream.setEos();
    fileFormat.transferInit();
    const OFCondition cond = extent == ParseExtent::HeaderOnly
        ? fileFormat.readUntilTag(stream, EXS_Unknown, EGL_noChange, DCM_MaxReadLength, DCM_PixelData)
        : fileFormat.read(stream, EXS_Unknown, EGL_noChange, DCM_MaxReadLength);
    fileFormat.transferEnd();
    if (cond.bad()) {
        if (cond == EC_StreamNotifyClient)
            return Error(ErrorCode::InvalidDicom, QStringLiteral("truncated DICOM data (%1 bytes)").arg(bytes.size()));
        return toError(cond, QStringLiteral("cannot parse DICOM data"));
    }
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

QString getString(DcmItem *item, const DcmTagKey &tag)
{
    OFString value;
    if (item->findAndGetOFStringArray(tag, value).bad())
        return QString();
    // Our demo data and most archives use ISO_IR 100 or ISO_IR 192; Latin-1 decoding is the safe default
    // for the former and lossless for ASCII. Full Specific Character Set support belongs with the decoder.
    return QString::fromLatin1(value.c_str()).trimmed();
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

DicomIdentity readIdentity(DcmItem *ds)
{
    DicomIdentity id;
    id.patientName = getString(ds, DCM_PatientName);
    id.patientId = getString(ds, DCM_PatientID);
    id.patientBirthDate = getString(ds, DCM_PatientBirthDate);
    id.patientSex = getString(ds, DCM_PatientSex);
    id.studyInstanceUid = getString(ds, DCM_StudyInstanceUID);
    id.studyDate = getString(ds, DCM_StudyDate);
    id.studyTime = getString(ds, DCM_StudyTime);
    id.studyDescription = getString(ds, DCM_StudyDescription);
    id.accessionNumber = getString(ds, DCM_AccessionNumber);
    id.seriesInstanceUid = getString(ds, DCM_SeriesInstanceUID);
    id.modality = getString(ds, DCM_Modality);
    id.seriesDescription = getString(ds, DCM_SeriesDescription);
    id.seriesNumber = getInt(ds, DCM_SeriesNumber);
    id.sopInstanceUid = getString(ds, DCM_SOPInstanceUID);
    id.sopClassUid = getString(ds, DCM_SOPClassUID);
    id.instanceNumber = getInt(ds, DCM_InstanceNumber);
    return id;
}

} // namespace spectrum::dcmtk
