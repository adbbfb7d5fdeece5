#include "spectrum/imaging/converter.h"

#include "dcmtksupport.h"
#include "pixelwriter.h"
#include "spectrum/imaging/dicomdecoder.h"

namespace spectrum {

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
    // (decoded by OpenJPEG, ours) is written from our decoder's pixels.
    const E_TransferSyntax xfer = ds->getOriginalXfer();
    const bool jpeg2000 = xfer == EXS_JPEG2000LosslessOnly || xfer == EXS_JPEG2000;
    const bool keptAsIs = !jpeg2000 && ds->chooseRepresentation(EXS_LittleEndianExplicit, nullptr).good() && ds->canWriteXfer(EXS_LittleEndianExplicit);
    if (!keptAsIs) {
        const DecodedImage &image = decoded.value();
        if (!image.pixels.isGray() && image.info.bitsStored > 8)
            return Error(ErrorCode::Unsupported, QStringLiteral("JPEG 2000 colour of %1 bits a sample: our decoder gives it at 8 bits for the screen, "
                                                                "so it is not converted (that would lose its depth)").arg(image.info.bitsStored));
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
