#pragma once
// Private glue between DCMTK and our types. Only .cpp files of imaging include this.

#include "spectrum/core/bytes.h"
#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/result.h"

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dctk.h>

namespace spectrum::dcmtk {

/// OFCondition → Error, through core's single mapping.
inline Error toError(const OFCondition &cond, const QString &context)
{
    return Error::fromDcmtkCondition(cond.module(), cond.code(), cond.text(), context);
}

/// Registers DCMTK's decoders (JPEG, JPEG-LS, RLE) and quiets its logging, once per process. Thread-safe.
/// Every entry point that parses calls it.
void registerCodecs();

/// True when `bytes` is a DICOM Part 10 file: 128-byte preamble, then "DICM".
bool hasPart10Preamble(const char *data, qint64 size);

enum class ParseExtent { HeaderOnly, Everything };
/// Parses a complete DICOM object held in memory. HeaderOnly stops before Pixel Data.
Error parse(const ByteView &bytes, DcmFileFormat &fileFormat, ParseExtent extent);

/// Serialises to a Part 10 byte stream in the given transfer syntax.
Result<QByteArray> serialize(DcmFileFormat &fileFormat, E_TransferSyntax xfer);

QString getString(DcmItem *item, const DcmTagKey &tag);
int getInt(DcmItem *item, const DcmTagKey &tag, int fallback = 0);
DicomIdentity readIdentity(DcmItem *dataset);

} // namespace spectrum::dcmtk
