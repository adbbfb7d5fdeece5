// SPDX-License-Identifier: Apache-2.0
// The audit spool's frames (RFC 5425 octet counting), as a spool left by a crashed program may hold them: either an
// error, or whole messages that framed again give back exactly the bytes they were read from — never a crash, never
// a message read past the end.
#include "fuzztarget.h"

#include "spectrum/transfer/audit/syslogframe.h"

#include <QByteArray>

#include <cstdlib>

SPECTRUM_FUZZ_TARGET(syslogframes)
{
    using namespace spectrum;
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    qsizetype consumed = -1;
    const Result<QList<QByteArray>> frames = parseSyslogFrames(bytes, &consumed);
    if (!frames.isOk())
        return 0;
    if (consumed < 0 || consumed > bytes.size())
        std::abort();
    QByteArray again;
    for (const QByteArray &m : frames.value())
        again += syslogFrame(m);
    if (again != bytes.left(consumed))
        std::abort();
    return 0;
}
