// SPDX-License-Identifier: Apache-2.0
#pragma once
// The named thread pools: every thread Spectrum starts for its work belongs to one of these (no thread per
// image, request or transfer). Each is a static QThreadPool, joined at exit. Thread-safe.
//
//   blockingPool()  disk and DCMTK work, whole-file decoding, blocking jobs (ExecutionPolicy::Async)
//   networkPool()   readers that block on a socket for a whole exchange (an HTTP stream read straight from the
//                   socket): many at once, mostly waiting
//   computePool()   CPU-bound work that must keep pace with arriving bytes: decoding and filtering rows while an
//                   image arrives, one worker per core
//   keepingPool()   fetched instances checked and written into the cache, one per core (more only queue on the
//                   cache folder's lock)

#include <functional>

class QThreadPool;

namespace spectrum {

/// QThreadPool::start(std::function), kept out of the headers. A task of higher `priority` runs before those of
/// lower priority queued before it (what the reader waits for ahead of background work).
void startOnPool(QThreadPool *pool, std::function<void()> task, int priority = 0);

QThreadPool *blockingPool();
QThreadPool *networkPool();
QThreadPool *computePool();
QThreadPool *keepingPool();

} // namespace spectrum
