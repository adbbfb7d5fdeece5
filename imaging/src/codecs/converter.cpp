// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/codecs/converter.h"

#include "dcmtksupport.h"
#include "codecs/decoding.h"
#include "codecs/jpeg2000.h"
#include "codecs/pixelwriter.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"

#include <vector>

namespace spectrum {

namespace {
/// The JPEG 2000 colour frames of `ds` made native Pixel Data (R G B interleaved) at the streams' precision (Bits
/// Stored): 8-bit samples up to 8 bits, 16-bit beyond, exactly.
Error writeFullDepthColour(DcmDataset *ds, E_TransferSyntax xfer)
{
    DcmElement *element = nullptr;
    if (ds->findAndGetElement(DCM_PixelData, element).bad() || !element)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("no Pixel Data"));
    const int rows = dcmtk::getInt(ds, DCM_Rows), columns = dcmtk::getInt(ds, DCM_Columns);
    const int frameCount = std::max(1, dcmtk::getInt(ds, DCM_NumberOfFrames, 1));
    Result<QList<QByteArray>> frames = encapsulatedFrames(element, xfer, frameCount);
    if (!frames.isOk())
        return frames.error();
    const qint64 perFrame = qint64(rows) * columns * 3;
    std::vector<quint16> samples(size_t(perFrame * frameCount));
    int precision = 0;
    for (int f = 0; f < frameCount; ++f) {
        int p = 0;
        if (Error e = jpeg2000::decodeColourFrameFull(frames.value()[f], columns, rows, samples.data() + perFrame * f, &p); e.isError())
            return e;
        if (precision != 0 && p != precision)
            return Error(ErrorCode::InvalidDicom, QStringLiteral("JPEG 2000 frames of %1 and %2 bits").arg(precision).arg(p));
        precision = p;
    }
    ds->findAndDeleteElement(DCM_PixelData);
    ds->putAndInsertUint16(DCM_SamplesPerPixel, 3);
    if (precision <= 8) {  // 8 bits a sample: bytes
        ds->putAndInsertUint16(DCM_BitsAllocated, 8);
        ds->putAndInsertUint16(DCM_BitsStored, Uint16(precision));
        ds->putAndInsertUint16(DCM_HighBit, Uint16(precision - 1));
        ds->putAndInsertUint16(DCM_PixelRepresentation, 0);
        ds->putAndInsertString(DCM_PhotometricInterpretation, "RGB");
        ds->putAndInsertUint16(DCM_PlanarConfiguration, 0);
        std::vector<Uint8> bytes(samples.begin(), samples.end());
        const OFCondition c = ds->putAndInsertUint8Array(DCM_PixelData, bytes.data(), static_cast<unsigned long>(bytes.size()));
        return c.good() ? Error() : Error(ErrorCode::Io, QStringLiteral("writing pixel data: %1").arg(QString::fromLatin1(c.text())));
    }
    ds->putAndInsertUint16(DCM_BitsAllocated, 16);
    ds->putAndInsertUint16(DCM_BitsStored, Uint16(precision));
    ds->putAndInsertUint16(DCM_HighBit, Uint16(precision - 1));
    ds->putAndInsertUint16(DCM_PixelRepresentation, 0);
    ds->putAndInsertString(DCM_PhotometricInterpretation, "RGB");  // OpenJPEG undid YBR_RCT / YBR_ICT
    ds->putAndInsertUint16(DCM_PlanarConfiguration, 0);
    const OFCondition c = ds->putAndInsertUint16Array(DCM_PixelData, samples.data(), static_cast<unsigned long>(samples.size()));
    return c.good() ? Error() : Error(ErrorCode::Io, QStringLiteral("writing pixel data: %1").arg(QString::fromLatin1(c.text())));
}
} // namespace

Result<QByteArray> convertToExplicitLittleEndian(const ByteView &dicom)
{
    Result<DecodedImage> decoded = decodeDicom(dicom);  // what our decoder cannot read is refused, saying why
    if (!decoded.isOk())
        return decoded.error();
    DcmFileFormat file;
    if (Error e = dcmtk::parse(dicom, file, dcmtk::ParseExtent::Everything); e.isError())
        return e;
    DcmDataset *ds = file.getDataset();
    // Native pixel data, or what DCMTK's own codecs (JPEG, JPEG-LS, RLE) give back, is kept exactly as it is: every
    // depth — 32-bit integers, Float and Double Float Pixel Data, colour of 16 bits a sample, single bits. JPEG 2000
    // (decoded by OpenJPEG, ours) is written from our decoder's pixels, its colour deeper than 8 bits decoded again
    // at full depth.
    const E_TransferSyntax xfer = ds->getOriginalXfer();
    const bool jpeg2000 = xfer == EXS_JPEG2000LosslessOnly || xfer == EXS_JPEG2000;
    const bool keptAsIs = !jpeg2000 && ds->chooseRepresentation(EXS_LittleEndianExplicit, nullptr).good() && ds->canWriteXfer(EXS_LittleEndianExplicit);
    if (!keptAsIs) {
        const DecodedImage &image = decoded.value();
        // JPEG 2000 colour: decoded again at the streams' own depth (the header's Bits Stored may say less; the
        // decoder above gives the screen's 8), every sample as the stream holds it.
        if (jpeg2000 && !image.pixels.isGray()) {
            if (Error e = writeFullDepthColour(ds, xfer); e.isError())
                return e;
            ds->removeAllButCurrentRepresentations();
            file.getMetaInfo()->findAndDeleteElement(DCM_TransferSyntaxUID);
            return dcmtk::serialize(file, EXS_LittleEndianExplicit);
        }
        const int bitsStored = image.pixels.isGray() ? image.info.bitsStored : 0;
        if (Error e = dcmtk::writeNativePixels(ds, image.pixels, bitsStored); e.isError())
            return e;
    }
    // The data set now holds native pixels only: write it as such, with a meta header that says so.
    ds->removeAllButCurrentRepresentations();
    file.getMetaInfo()->findAndDeleteElement(DCM_TransferSyntaxUID);
    return dcmtk::serialize(file, EXS_LittleEndianExplicit);
}

} // namespace spectrum
