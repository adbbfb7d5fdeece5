// SPDX-License-Identifier: Apache-2.0
// What a DICOM header says about its image — size, samples, bits, photometric interpretation, spacing (and imager
// spacing), position and orientation, rescale, windows, frames and their functional groups — checked for consistency
// before any pixel is decoded (readImageInfo, decoding.h; readDicomImageInfo from a file's bytes).
#include "spectrum/imaging/codecs/dicomdecoder.h"

#include "dcmtksupport.h"
#include "codecs/frameattributes.h"
#include "documents/segmentationinfo.h"
#include "codecs/decoding.h"

#include <dcmtk/dcmdata/dcxfer.h>

#include <algorithm>
#include <cmath>

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

} // namespace

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
    {
        // Without Pixel Spacing, a pixel's shape as the file gives it otherwise: Pixel Aspect Ratio, or the
        // detector's spacing. Only a sane ratio (1:10 … 10:1) is taken: a wrong one would distort the picture.
        Sint32 vertical = 0, horizontal = 0;  // IS: integers
        if (ds->findAndGetSint32(DCM_PixelAspectRatio, vertical, 0).bad() || ds->findAndGetSint32(DCM_PixelAspectRatio, horizontal, 1).bad())
            vertical = horizontal = 0;
        const double imagerRow = getDouble(ds, DCM_ImagerPixelSpacing, 0, 0), imagerColumn = getDouble(ds, DCM_ImagerPixelSpacing, 1, imagerRow);
        const double ratio = vertical > 0 && horizontal > 0 ? double(vertical) / horizontal : imagerRow > 0 && imagerColumn > 0 ? imagerRow / imagerColumn : 0;
        info.recordedAspect = std::isfinite(ratio) && ratio >= 0.1 && ratio <= 10 ? ratio : 0;
    }
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
    info.frameOfReferenceUid = getString(ds, DCM_FrameOfReferenceUID);
    info.imageType = getString(ds, DCM_ImageType).split(QLatin1Char('\\'), Qt::SkipEmptyParts);
    for (QString &v : info.imageType)
        v = v.trimmed().toUpper();
    info.rescaleSlope = getDouble(ds, DCM_RescaleSlope, 0, 1);
    if (info.rescaleSlope == 0)
        info.rescaleSlope = 1;  // a zero slope is invalid DICOM and would flatten the image
    info.rescaleIntercept = getDouble(ds, DCM_RescaleIntercept, 0, 0);
    info.rescaleType = getString(ds, DCM_RescaleType);
    // Float and Double Float Pixel Data hold real values: no bits to mask, no sign to read from Pixel Representation.
    if (ds->tagExists(DCM_FloatPixelData) || ds->tagExists(DCM_DoubleFloatPixelData)) {
        info.floatSamples = true;
        info.bitsAllocated = ds->tagExists(DCM_FloatPixelData) ? 32 : 64;
        info.bitsStored = info.bitsAllocated;
        info.highBit = info.bitsAllocated - 1;
        info.isSigned = true;
    }
    // RT Dose: Dose Grid Scaling turns stored values into dose (in Dose Units), where no rescale is given.
    if (!ds->tagExists(DCM_RescaleSlope)) {
        if (const double scaling = getDouble(ds, DCM_DoseGridScaling, 0, 0); scaling > 0) {
            info.rescaleSlope = scaling;
            info.rescaleIntercept = 0;
            info.rescaleType = getString(ds, DCM_DoseUnits);
            if (info.rescaleType.isEmpty())
                info.rescaleType = QStringLiteral("GY");
        }
    }

    const DicomTextDecoder text = textDecoder(ds);
    info.windows = readWindows(ds, text);
    readFrameAttributes(ds, text, info);  // enhanced objects: geometry, rescale and windows from the functional groups
    readSegmentation(ds, text, info);     // a Segmentation: its segments, and the image each frame lies on

    // VOI LUT Sequence (PS3.3 C.11.2.1.3): descriptor entries (0: 65536), first mapped value (US or SS), bits.
    DcmSequenceOfItems *voi = nullptr;
    if (ds->findAndGetSequence(DCM_VOILUTSequence, voi).good() && voi) {
        for (unsigned long i = 0; i < voi->card(); ++i) {
            DcmItem *item = voi->getItem(i);
            // The descriptor is US, or SS when the first mapped value is signed (PS3.3 C.11.2.1.3).
            auto descriptor = [item](unsigned long pos, bool *ok) -> int {
                Uint16 u = 0;
                Sint16 v = 0;
                *ok = true;
                if (item->findAndGetUint16(DCM_LUTDescriptor, u, pos).good())
                    return u;
                if (item->findAndGetSint16(DCM_LUTDescriptor, v, pos).good())
                    return v;
                *ok = false;
                return 0;
            };
            bool okEntries = false, okFirst = false, okBits = false;
            if (!item)
                continue;
            const int entries = Uint16(descriptor(0, &okEntries)), bits = Uint16(descriptor(2, &okBits));
            const int first = descriptor(1, &okFirst);
            const Uint16 *data = nullptr;
            unsigned long count = 0;
            if (!okEntries || !okFirst || !okBits || item->findAndGetUint16Array(DCM_LUTData, data, &count).bad() || !data)
                continue;  // an unusable table is skipped, as viewers do
            VoiLut lut;
            // A first mapped value read as unsigned is still signed when the pixels are.
            lut.firstMapped = info.isSigned ? int(Sint16(first)) : int(Uint16(first));
            lut.bits = std::clamp(int(bits), 8, 16);
            const unsigned long n = entries == 0 ? 65536ul : entries;
            if (count < n)
                continue;
            for (unsigned long k = 0; k < n; ++k)
                lut.data << quint16(data[k]);
            OFString explanation;
            if (item->findAndGetOFString(DCM_LUTExplanation, explanation).good())
                lut.explanation = text.decode(QByteArray(explanation.c_str(), qsizetype(explanation.length())));
            info.voiLuts << lut;
        }
    }

    if (info.rows <= 0 || info.columns <= 0)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("no image: Rows %1, Columns %2").arg(info.rows).arg(info.columns));
    if (!info.floatSamples && info.bitsAllocated != 1 && info.bitsAllocated != 8 && info.bitsAllocated != 16 && info.bitsAllocated != 32)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("Bits Allocated %1 (DICOM allows 1, 8, 16 and 32 for integer samples)").arg(info.bitsAllocated));
    if (info.bitsStored < 1 || info.bitsStored > info.bitsAllocated || info.highBit < info.bitsStored - 1
        || info.highBit >= info.bitsAllocated)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("inconsistent Bits Stored %1 / High Bit %2 for Bits Allocated %3")
                                                  .arg(info.bitsStored).arg(info.highBit).arg(info.bitsAllocated));
    return info;
}

Result<ImageInfo> readDicomImageInfo(const ByteView &bytes)
{
    if (!hasPart10Preamble(bytes.data(), bytes.size()))
        return Error(ErrorCode::InvalidDicom, QStringLiteral("not a DICOM file (no DICM preamble)"));
    registerCodecs();
    DcmFileFormat ff;
    if (Error e = parse(bytes, ff, ParseExtent::HeaderOnly); e.isError())
        return e;
    return readImageInfo(ff.getDataset());
}

} // namespace spectrum
