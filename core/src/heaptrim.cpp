// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/heaptrim.h"

#include "spectrum/core/threadpools.h"

#include <QCoreApplication>
#include <QTimer>

#include <atomic>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace spectrum {

namespace {
void trimSoon()
{
#if defined(__GLIBC__)
    static std::atomic<bool> queued{false};
    if (queued.exchange(true))
        return;  // one trim waiting is enough: it gives back whatever is free when it runs
    startOnPool(blockingPool(), [] {
        queued = false;
        ::malloc_trim(0);
    });
#endif
}
} // namespace

void keepHeapReturnable()
{
#if defined(__GLIBC__)
    // Setting either turns glibc's own adjustment off; both are set so that neither falls back to its default
    // (a 128 KiB mmap threshold would map and fault in every 0.5 MiB slice anew).
    ::mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    ::mallopt(M_TRIM_THRESHOLD, 4 * 1024 * 1024);
#endif
}

void returnFreedMemory()
{
    trimSoon();
    // What the pool's threads still held (a decode or a read finishing for the study closed) is freed a moment
    // later: given back then too.
    if (QCoreApplication *app = QCoreApplication::instance())
        QTimer::singleShot(2000, app, [] { trimSoon(); });
}

} // namespace spectrum
