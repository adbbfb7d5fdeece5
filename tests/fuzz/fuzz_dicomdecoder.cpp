// SPDX-License-Identifier: Apache-2.0
// The DICOM decoder on any bytes: whole (decodeDicom), and fed in pieces as they would arrive from the network
// (StreamingDecoder); the tag viewer's element list too (readDicomTags). Either decodes or says why not; never crashes, and both agree on what is acceptable.
// The quick identity scanner (identityscan.h) answers only as DCMTK's parse does: anything else aborts.
#include "fuzztarget.h"

#include "codecs/identityscan.h"  // private to imaging

#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/dicomtags.h"
#include "spectrum/imaging/codecs/streamingdecoder.h"

#include <QByteArray>

#include <cstdlib>

SPECTRUM_FUZZ_TARGET(dicomdecoder)
{
    using namespace spectrum;
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    const Result<DecodedImage> whole = decodeDicom(ByteView(bytes));
    (void)readDicomTags(ByteView(bytes));  // the tag viewer's walk over every element
    if (const std::optional<DicomIdentity> quick = scanDicomIdentity(bytes.constData(), bytes.size())) {
        const Result<DicomIdentity> full = readDicomIdentityWithDcmtk(ByteView(bytes));
        if (!full.isOk() || !(full.value() == *quick))
            std::abort();  // the scanner gave an answer DCMTK does not
    }
    StreamingDecoder streaming;
    fuzz::Splitter split(data, size);
    Error e;
    for (size_t at = 0; at < size && !e.isError();) {
        const size_t n = split.next(size - at);
        e = streaming.feed(bytes.constData() + at, qint64(n));
        at += n;
    }
    if (!e.isError())
        e = streaming.finish();
    if (streaming.hasHeader())
        (void)streaming.info();
    return 0;
}
