// SPDX-License-Identifier: Apache-2.0
// Spectrum's blob protocol parsers on hostile bytes: connection prefaces, 32-byte data frame headers, and
// length-prefixed CBOR control frames read as they arrive (and the answers a client reads out of them).
#include "fuzztarget.h"

#include "spectrum/transfer/blobprotocol.h"

#include <QBuffer>
#include <QByteArray>

SPECTRUM_FUZZ_TARGET(blobprotocol)
{
    using namespace spectrum::blobproto;
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    (void)parsePreface(bytes.left(8));
    for (size_t at = 0; at + kHeaderSize <= size; at += kHeaderSize) {
        const auto header = decodeHeader(bytes.constData() + at);
        if (header.isOk() && decodeHeader(encodeHeader(header.value()).constData()).isOk() == false)
            __builtin_trap();  // what decodes must encode back to something that decodes
    }
    // Control frames: the bytes arrive in pieces on a device; the reader gives whole messages or an error.
    QByteArray arrived;
    QBuffer device(&arrived);
    device.open(QIODevice::ReadOnly);
    ControlReader reader;
    spectrum::fuzz::Splitter split(data, size);
    for (size_t at = 0; at < size;) {
        const size_t n = split.next(size - at);
        const qint64 pos = device.pos();
        arrived.append(bytes.constData() + at, qsizetype(n));
        device.seek(pos);
        at += n;
        bool broken = false;
        while (auto message = reader.next(&device)) {
            if (!message->isOk()) {
                broken = true;  // the connection would be closed here
                break;
            }
            (void)errorFrom(message->value());
        }
        if (broken)
            break;
    }
    return 0;
}
