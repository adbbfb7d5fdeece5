// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private glue between DCMTK and our types. Only .cpp files of imaging include this.

#include "spectrum/core/bytes.h"
#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/dicomtext.h"
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
/// The header of DICOM data of which the first `size` bytes are here (`complete`: all of it), read up to the
/// Pixel Data element's tag and length with parse()'s checks (no element is allocated longer than the bytes
/// that follow it): the offset of Pixel Data's value, −1 when the bytes end before it and more may come, or an
/// error. Read again from the start as more bytes come: a header is small.
Result<qint64> readHeaderSoFar(const char *data, qint64 size, bool complete, DcmFileFormat &fileFormat);
/// readHeaderSoFar's answer for deflated data: decode it whole (parse() inflates it with a bound) once complete.
constexpr qint64 kDeflatedWhole = -2;

/// Serialises to a Part 10 byte stream in the given transfer syntax.
Result<QByteArray> serialize(DcmFileFormat &fileFormat, E_TransferSyntax xfer);

/// A value as text. Without `text`, Latin-1 (UIDs, codes, numbers: ASCII by the standard); with it, in the
/// dataset's Specific Character Set (textDecoder()).
QString getString(DcmItem *item, const DcmTagKey &tag, const DicomTextDecoder *text = nullptr);
int getInt(DcmItem *item, const DcmTagKey &tag, int fallback = 0);
/// The decoder for the text of `dataset`, from its Specific Character Set.
DicomTextDecoder textDecoder(DcmItem *dataset);
/// Names and descriptions in the dataset's character set, as Unicode.
DicomIdentity readIdentity(DcmItem *dataset);
/// Every text element of `dataset` (names, descriptions, comments; in its sequences too) re-encoded from its
/// Specific Character Set into UTF-8, which it then declares ("ISO_IR 192"): the characters unchanged, decoded as
/// Spectrum shows them (ISO 2022 escapes included). An error, the dataset untouched, when a value cannot be decoded.
Error convertTextToUtf8(DcmDataset *dataset);

} // namespace spectrum::dcmtk
