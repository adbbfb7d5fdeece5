// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/codecs/decodecounts.h"

#include <QMutex>

namespace spectrum {

namespace {
QMutex &mutex()
{
    static QMutex m;
    return m;
}
DecodeCounts &counts()
{
    static DecodeCounts c;
    return c;
}
} // namespace

void noteDecoded(const QString &sopInstanceUid)
{
    QMutexLocker lock(&mutex());
    ++counts().decoded[sopInstanceUid];
}

void noteFiltered(const QString &sopInstanceUid)
{
    QMutexLocker lock(&mutex());
    ++counts().filtered[sopInstanceUid];
}

DecodeCounts decodeCounts()
{
    QMutexLocker lock(&mutex());
    return counts();
}

void resetDecodeCounts()
{
    QMutexLocker lock(&mutex());
    counts() = DecodeCounts();
}

} // namespace spectrum
