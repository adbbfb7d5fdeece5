// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/codecs/decodecounts.h"

#include <QMutex>

#include <atomic>

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
std::atomic<bool> counting{false};
} // namespace

void noteDecoded(const QString &sopInstanceUid)
{
    if (!counting.load(std::memory_order_relaxed))
        return;
    QMutexLocker lock(&mutex());
    ++counts().decoded[sopInstanceUid];
}

void noteFiltered(const QString &sopInstanceUid)
{
    if (!counting.load(std::memory_order_relaxed))
        return;
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
    counting.store(true);
}

} // namespace spectrum
