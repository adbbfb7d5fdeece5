// SPDX-License-Identifier: Apache-2.0
// The multipart/related reader (WADO-RS answers) on any body, split anywhere: every part it reports is within
// the input, and a broken body is an error, never a crash or a part reported whole that was not.
#include "fuzztarget.h"

#include "spectrum/transfer/multipart.h"

#include <QByteArray>

#include <cstdlib>

SPECTRUM_FUZZ_TARGET(multipart)
{
    using namespace spectrum;
    const QByteArray body(reinterpret_cast<const char *>(data), qsizetype(size));
    // The boundary a server announced; the second parse takes it from a Content-Type made of the input's start.
    (void)MultipartReader::boundaryOf(body.left(200));
    MultipartReader reader(QByteArrayLiteral("spectrum-fuzz"), 4096);
    qint64 delivered = 0;
    int open = -1;
    reader.onPartBegin = [&](int index, const MultipartHeaders &) { open = index; };
    reader.onPartData = [&](int index, const char *, qint64 length) {
        if (index != open || length < 0)
            std::abort();
        delivered += length;
    };
    reader.onPartEnd = [&](int index) {
        if (index != open)
            std::abort();
        return Error();
    };
    fuzz::Splitter split(data, size);
    Error e;
    for (size_t at = 0; at < size && !e.isError();) {
        const size_t n = split.next(size - at);
        // Half of the time, take what the reader says it wants straight into a buffer of our own (takeBody).
        if ((at & 1) && reader.isInPartBody() && reader.bodyBytesWanted() > 0) {
            const qint64 take = std::min<qint64>(qint64(n), reader.bodyBytesWanted());
            delivered += take;
            e = reader.takeBody(take);
            at += size_t(take);
            continue;
        }
        e = reader.feed(body.constData() + at, qint64(n));
        at += n;
    }
    if (!e.isError())
        (void)reader.finish();
    if (delivered > qint64(size))
        std::abort();  // more body bytes than the input held
    return 0;
}
