#include "spectrum/imaging/converter.h"

#include "dcmtksupport.h"
#include "pixelwriter.h"
#include "spectrum/imaging/dicomdecoder.h"

namespace spectrum {

Result<QByteArray> convertToExplicitLittleEndian(const ByteView &dicom)
{
    Result<DecodedImage> decoded = decodeDicom(dicom);
    if (!decoded.isOk())
        return decoded.error();
    DcmFileFormat file;
    if (Error e = dcmtk::parse(dicom, file, dcmtk::ParseExtent::Everything); e.isError())
        return e;
    DcmDataset *ds = file.getDataset();
    const int bitsStored = decoded.value().pixels.isGray() ? decoded.value().info.bitsStored : 0;
    if (Error e = dcmtk::writeNativePixels(ds, decoded.value().pixels, bitsStored); e.isError())
        return e;
    // The data set now holds native pixels only: write it as such, with a meta header that says so.
    ds->removeAllButCurrentRepresentations();
    file.getMetaInfo()->findAndDeleteElement(DCM_TransferSyntaxUID);
    return dcmtk::serialize(file, EXS_LittleEndianExplicit);
}

} // namespace spectrum
