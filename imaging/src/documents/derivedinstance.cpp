// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/documents/derivedinstance.h"

#include "dcmtksupport.h"
#include "codecs/pixelwriter.h"
#include "spectrum/core/uid.h"

#include <QDateTime>

#include <algorithm>
#include <cmath>
#include <numeric>

#include <set>
#include <string>

namespace spectrum {

namespace {

/// SOP classes whose IODs allow Image Type DERIVED with their own pixel module (a derived CT is still a CT).
bool derivedAllowed(const QString &sopClass)
{
    static const std::set<std::string> classes{
        UID_CTImageStorage, UID_MRImageStorage, UID_ComputedRadiographyImageStorage, UID_DigitalXRayImageStorageForPresentation,
        UID_DigitalMammographyXRayImageStorageForPresentation, UID_UltrasoundImageStorage, UID_UltrasoundMultiframeImageStorage,
        UID_XRayAngiographicImageStorage, UID_XRayRadiofluoroscopicImageStorage, UID_NuclearMedicineImageStorage,
        UID_PositronEmissionTomographyImageStorage, UID_SecondaryCaptureImageStorage,
        UID_RTDoseStorage, UID_ParametricMapStorage};  // their own 32-bit and real samples: no other class holds them
    return classes.count(sopClass.toStdString()) > 0;
}

/// ASCII values: UIDs, numbers, dates, codes.
OFCondition put(DcmItem *item, const DcmTagKey &tag, const QString &value)
{
    return item->putAndInsertString(tag, value.toLatin1().constData());
}

/// Text (descriptions) in the dataset's character set: as is when it is ASCII; in Latin-1 when the original
/// declares no set (as its own text is: bytes the reader's software reads as the original's) and the value fits
/// it; in the original's own set when that holds every character (every other element untouched); else in UTF-8 —
/// the dataset converted to UTF-8 first (every other text element re-encoded, its characters unchanged; refused
/// when the original's own text is not plainly readable, or an element of no known type holds bytes that may be
/// text). Never a '?' for a character the original's set lacks, never bytes of one set under another's name.
Error putText(DcmDataset *ds, const DcmTagKey &tag, DicomTextDecoder::TextKind kind, const QString &value)
{
    const bool ascii = std::all_of(value.begin(), value.end(), [](QChar c) { return c.unicode() < 128; });
    const QString charset = dcmtk::getString(ds, DCM_SpecificCharacterSet).trimmed();
    const bool latin1 = std::all_of(value.begin(), value.end(), [](QChar c) { return c.unicode() < 256; });
    QByteArray bytes;
    if (ascii)
        bytes = value.toLatin1();
    else if (latin1 && (charset.isEmpty() || charset == QLatin1String("ISO_IR 6")))
        bytes = value.toLatin1();
    else if (charset == QLatin1String("ISO_IR 192"))
        bytes = value.toUtf8();
    else if (!dcmtk::textDecoder(ds).encode(value, kind, &bytes)) {
        if (Error e = dcmtk::convertTextToUtf8(ds); e.isError())
            return Error(e.code(), QStringLiteral("cannot write '%1' beside the original's text: %2").arg(value.left(64), e.message()));
        bytes = value.toUtf8();
    }
    if (ds->putAndInsertString(tag, bytes.constData()).bad())
        return Error(ErrorCode::Internal, QStringLiteral("cannot write '%1'").arg(value.left(64)));
    return {};
}

} // namespace

Result<DerivedInstance> makeDerivedInstance(const ByteView &original, const PixelBuffer &pixels, const Derivation &derivation)
{
    dcmtk::registerCodecs();
    if (pixels.isNull())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("no pixels to store"));
    if (derivation.description.size() > 1024)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("the derivation description is longer than 1024 characters"));
    if (!derivation.seriesInstanceUid.isEmpty() && !isValidUid(derivation.seriesInstanceUid))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not a UID").arg(derivation.seriesInstanceUid));
    DcmFileFormat file;
    if (Error e = dcmtk::parse(original, file, dcmtk::ParseExtent::Everything); e.isError())
        return e;
    DcmDataset *ds = file.getDataset();
    const QString sourceClass = dcmtk::getString(ds, DCM_SOPClassUID);
    const QString sourceInstance = dcmtk::getString(ds, DCM_SOPInstanceUID);
    if (sourceClass.isEmpty() || sourceInstance.isEmpty())
        return Error(ErrorCode::InvalidDicom, QStringLiteral("the original has no SOP Class or SOP Instance UID"));
    const int oldRows = dcmtk::getInt(ds, DCM_Rows), oldColumns = dcmtk::getInt(ds, DCM_Columns);

    // The pixels: native depth, uncompressed. An unprocessed copy keeps the original's samples, and with them what
    // describes them (padding, smallest and largest value, a lossy original's ratio).
    const E_TransferSyntax xfer = ds->getOriginalXfer();
    const bool keepOriginal = derivation.pixelsAreTheOriginals && !derivation.plane && xfer != EXS_JPEG2000LosslessOnly && xfer != EXS_JPEG2000
                           && pixels.width() == oldColumns && pixels.height() == oldRows
                           && ds->chooseRepresentation(EXS_LittleEndianExplicit, nullptr).good() && ds->canWriteXfer(EXS_LittleEndianExplicit);
    if (!keepOriginal)
        for (const DcmTagKey &gone : {DCM_PixelPaddingValue, DCM_SmallestImagePixelValue, DCM_LargestImagePixelValue, DCM_LossyImageCompressionRatio})
            ds->findAndDeleteElement(gone);
    // The original's precision (Bits Stored) when every processed value still fits in it, as filters that clamp
    // to the stored range guarantee; all bits of the format otherwise.
    int bitsStored = dcmtk::getInt(ds, DCM_BitsStored);
    if (pixels.isGray() && pixels.format() != PixelFormat::Float64 && bitsStored > 0 && bitsStored < PixelBuffer::bytesPerPixel(pixels.format()) * 8) {
        const int lo = pixels.isSignedFormat() ? -(1 << (bitsStored - 1)) : 0;
        const int hi = pixels.isSignedFormat() ? (1 << (bitsStored - 1)) - 1 : (1 << bitsStored) - 1;
        for (int f = 0; f < pixels.frames() && bitsStored > 0; ++f) {
            int mn = 0, mx = 0;
            pixels.minMax(f, &mn, &mx);
            if (mn < lo || mx > hi)
                bitsStored = 0;
        }
    } else {
        bitsStored = 0;
    }
    if (keepOriginal)
        ds->removeAllButCurrentRepresentations();  // its own samples, at their own depth
    else if (Error e = dcmtk::writeNativePixels(ds, pixels, bitsStored); e.isError())
        return e;
    if (derivation.plane) {
        // A plane cut from a volume: its own place, spacing and values' rescale.
        const DerivedPlane &plane = *derivation.plane;
        auto numbers = [](const auto &values) {
            QStringList s;
            for (double v : values)
                s << QString::number(v, 'g', 10);
            return s.join(QLatin1Char('\\'));
        };
        put(ds, DCM_ImagePositionPatient, numbers(plane.position));
        put(ds, DCM_ImageOrientationPatient, numbers(plane.orientation));
        put(ds, DCM_PixelSpacing, numbers(std::array<double, 2>{plane.rowSpacing, plane.columnSpacing}));
        if (plane.sliceThickness > 0)
            put(ds, DCM_SliceThickness, QString::number(plane.sliceThickness, 'g', 10));
        else
            ds->findAndDeleteElement(DCM_SliceThickness);
        // An enhanced original's per-frame geometry no longer holds either.
        for (const DcmTagKey &gone : {DCM_SliceLocation, DCM_SpacingBetweenSlices, DCM_TablePosition, DCM_SharedFunctionalGroupsSequence,
                                      DCM_PerFrameFunctionalGroupsSequence, DCM_FrameIncrementPointer})
            ds->findAndDeleteElement(gone);
        put(ds, DCM_RescaleSlope, QString::number(plane.rescaleSlope, 'g', 10));
        put(ds, DCM_RescaleIntercept, QString::number(plane.rescaleIntercept, 'g', 10));
        if (plane.paddingValue) {
            if (pixels.isSignedFormat())
                ds->putAndInsertSint16(DCM_PixelPaddingValue, Sint16(*plane.paddingValue));
            else
                ds->putAndInsertUint16(DCM_PixelPaddingValue, Uint16(*plane.paddingValue));
        }
        put(ds, DCM_InstanceNumber, QStringLiteral("1"));
    } else if (pixels.width() != oldColumns || pixels.height() != oldRows) {
        // Resampled: the spacing scales; position and orientation of the original grid no longer hold.
        OFString spacing;
        double rowSpacing = 0, columnSpacing = 0;
        if (ds->findAndGetFloat64(DCM_PixelSpacing, rowSpacing, 0).good() && ds->findAndGetFloat64(DCM_PixelSpacing, columnSpacing, 1).good() && pixels.width() > 0 && pixels.height() > 0) {
            rowSpacing *= double(oldRows) / pixels.height();
            columnSpacing *= double(oldColumns) / pixels.width();
            put(ds, DCM_PixelSpacing, QStringLiteral("%1\\%2").arg(rowSpacing, 0, 'g', 10).arg(columnSpacing, 0, 'g', 10));
        }
        // The detector's spacing and a recorded pixel shape scale the same way: the picture keeps its proportions.
        if (ds->findAndGetFloat64(DCM_ImagerPixelSpacing, rowSpacing, 0).good() && ds->findAndGetFloat64(DCM_ImagerPixelSpacing, columnSpacing, 1).good()
            && pixels.width() > 0 && pixels.height() > 0)
            put(ds, DCM_ImagerPixelSpacing, QStringLiteral("%1\\%2").arg(rowSpacing * oldRows / pixels.height(), 0, 'g', 10)
                                                .arg(columnSpacing * oldColumns / pixels.width(), 0, 'g', 10));
        Sint32 vertical = 0, horizontal = 0;
        if (ds->findAndGetSint32(DCM_PixelAspectRatio, vertical, 0).good() && ds->findAndGetSint32(DCM_PixelAspectRatio, horizontal, 1).good()
            && vertical > 0 && horizontal > 0 && pixels.width() > 0 && pixels.height() > 0) {
            // vertical : horizontal in whole numbers (IS), to a thousandth
            const double ratio = (double(vertical) * oldRows / pixels.height()) / (double(horizontal) * oldColumns / pixels.width());
            long v = std::lround(ratio * 1000), h = 1000;
            const long g = std::gcd(v, h);
            if (v > 0 && g > 0)
                put(ds, DCM_PixelAspectRatio, QStringLiteral("%1\\%2").arg(v / g).arg(h / g));
            else
                ds->findAndDeleteElement(DCM_PixelAspectRatio);
        }
        ds->findAndDeleteElement(DCM_ImagePositionPatient);
        ds->findAndDeleteElement(DCM_ImageOrientationPatient);
    }

    // Who it is: the same patient and study, a new series and instance.
    const QString seriesUid = derivation.seriesInstanceUid.isEmpty() ? makeUid() : derivation.seriesInstanceUid;
    const QString sopUid = makeUid();
    const QString sopClass = derivedAllowed(sourceClass) ? sourceClass : QString::fromLatin1(UID_SecondaryCaptureImageStorage);
    // Secondary Capture holds 8- and 16-bit samples: an image of 32-bit or real values of another class is refused
    // rather than sent as one an archive or a viewer would read wrong.
    if (sopClass != sourceClass && (dcmtk::getInt(ds, DCM_BitsAllocated) > 16 || ds->tagExists(DCM_FloatPixelData) || ds->tagExists(DCM_DoubleFloatPixelData)))
        return Error(ErrorCode::Unsupported, QStringLiteral("an image of %1-bit or real values of this kind (%2) cannot be sent as a Secondary Capture: not sent")
                                                 .arg(dcmtk::getInt(ds, DCM_BitsAllocated)).arg(sourceClass));
    put(ds, DCM_SOPClassUID, sopClass);
    put(ds, DCM_SOPInstanceUID, sopUid);
    put(ds, DCM_SeriesInstanceUID, seriesUid);
    const int seriesNumber = derivation.seriesNumber > 0 ? derivation.seriesNumber : dcmtk::getInt(ds, DCM_SeriesNumber) + 1000;
    put(ds, DCM_SeriesNumber, QString::number(seriesNumber));
    const DicomTextDecoder text = dcmtk::textDecoder(ds);
    const QString description = derivation.seriesDescription.isEmpty()
                                    ? (dcmtk::getString(ds, DCM_SeriesDescription, &text) + QStringLiteral(" (processed)")).trimmed()
                                    : derivation.seriesDescription;
    if (Error e = putText(ds, DCM_SeriesDescription, DicomTextDecoder::TextKind::Values, description.left(64)); e.isError())
        return e;
    // DERIVED\SECONDARY, and the original's further values (AXIAL, LOCALIZER, …) that say what the image shows.
    QStringList imageType = dcmtk::getString(ds, DCM_ImageType).split(QLatin1Char('\\'));
    imageType = QStringList{QStringLiteral("DERIVED"), QStringLiteral("SECONDARY")}
        + (derivation.plane ? derivation.plane->imageTypeValues : imageType.size() > 2 ? imageType.mid(2) : QStringList());
    put(ds, DCM_ImageType, imageType.join(QLatin1Char('\\')));
    if (Error e = putText(ds, DCM_DerivationDescription, DicomTextDecoder::TextKind::FreeText, derivation.description); e.isError())
        return e;
    if (sopClass == QLatin1String(UID_SecondaryCaptureImageStorage) && dcmtk::getString(ds, DCM_ConversionType).isEmpty())
        put(ds, DCM_ConversionType, QStringLiteral("WSD"));  // workstation
    const QDateTime now = QDateTime::currentDateTime();
    put(ds, DCM_InstanceCreationDate, now.toString(QStringLiteral("yyyyMMdd")));
    put(ds, DCM_InstanceCreationTime, now.toString(QStringLiteral("HHmmss")));
    put(ds, DCM_SeriesDate, now.toString(QStringLiteral("yyyyMMdd")));
    put(ds, DCM_SeriesTime, now.toString(QStringLiteral("HHmmss")));
    put(ds, DCM_ContentDate, now.toString(QStringLiteral("yyyyMMdd")));
    put(ds, DCM_ContentTime, now.toString(QStringLiteral("HHmmss")));
    ds->findAndDeleteElement(DCM_SourceImageSequence);
    DcmItem *source = nullptr;
    if (ds->findOrCreateSequenceItem(DCM_SourceImageSequence, source, -2).bad() || !source)
        return Error(ErrorCode::Internal, QStringLiteral("cannot write the Source Image Sequence"));
    put(source, DCM_ReferencedSOPClassUID, sourceClass);
    put(source, DCM_ReferencedSOPInstanceUID, sourceInstance);
    if (derivation.plane) {
        for (const auto &[cls, instance] : derivation.plane->sources) {
            if (instance == sourceInstance)
                continue;
            DcmItem *more = nullptr;
            if (ds->findOrCreateSequenceItem(DCM_SourceImageSequence, more, -2).bad() || !more)
                return Error(ErrorCode::Internal, QStringLiteral("cannot write the Source Image Sequence"));
            put(more, DCM_ReferencedSOPClassUID, cls);
            put(more, DCM_ReferencedSOPInstanceUID, instance);
        }
    }

    // A new file meta header for the new instance and syntax.
    file.getMetaInfo()->clear();
    file.getMetaInfo()->putAndInsertString(DCM_MediaStorageSOPClassUID, sopClass.toLatin1().constData());
    file.getMetaInfo()->putAndInsertString(DCM_MediaStorageSOPInstanceUID, sopUid.toLatin1().constData());
    Result<QByteArray> bytes = dcmtk::serialize(file, EXS_LittleEndianExplicit);
    if (!bytes.isOk())
        return bytes.error();
    DerivedInstance out;
    out.bytes = bytes.value();
    out.identity = dcmtk::readIdentity(ds);
    return out;
}

} // namespace spectrum
