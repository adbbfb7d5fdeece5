// The DICOM decoder on any bytes: whole (decodeDicom), and fed in pieces as they would arrive from the network
// (StreamingDecoder). Either decodes or says why not; never crashes, and both agree on what is acceptable.
#include "fuzztarget.h"

#include "spectrum/imaging/dicomdecoder.h"
#include "spectrum/imaging/streamingdecoder.h"

#include <QByteArray>

SPECTRUM_FUZZ_TARGET(dicomdecoder)
{
    using namespace spectrum;
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    const Result<DecodedImage> whole = decodeDicom(ByteView(bytes));
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
