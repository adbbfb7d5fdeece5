// SPDX-License-Identifier: Apache-2.0
// How FileStore's commits reach its index (state.h): one at a time (recordLocked, index.cpp), several threads' in
// one change (recordBatched), or deferred — in memory and deferred.log at once, in the index a moment later, many
// together (recordDeferred, flushPendingLocked; docs/CACHE.md).

#include "blobs/filestore/state.h"

#include "spectrum/core/logging.h"
#include "spectrum/core/threadpools.h"

#include <QThread>

#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

namespace spectrum {

using namespace cachedisk;

namespace {

/// Appends `line` whole, or not at all: a line cut short (a full disk) is cut off again, so that the next one
/// starts on a line of its own.
Error appendWhole(int fd, const QByteArray &line)
{
    if (fd < 0)
        return Error(ErrorCode::Io, QStringLiteral("the log is not open"));
    const off_t before = ::lseek(fd, 0, SEEK_END);
    qint64 done = 0;
    while (done < line.size()) {
        const ssize_t n = ::write(fd, line.constData() + done, size_t(line.size() - done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int err = n < 0 ? errno : EIO;
            if (before >= 0 && ::ftruncate(fd, before) != 0)
                qCWarning(lcStores) << "cannot cut a partial line off the cache's log:" << osError(errno);
            return ioError(QStringLiteral("cannot append to the cache's log"), err);
        }
        done += n;
    }
    return Error();
}

} // namespace

std::optional<Entry> FileStore::State::findLocked(const QString &key)
{
    if (auto at = pendingAt.constFind(key); at != pendingAt.constEnd())
        return pending[size_t(*at)];
    return index->find(key);
}

Error FileStore::State::recordDeferred(const Entry &entry)
{
    bool flushNow = false, superseded = false;
    {
        QMutexLocker lock(&mutex);
        if (closed || !index)
            return closedError();
        const std::optional<Entry> previous = findLocked(entry.info.key);
        superseded = previous && previous->info.version > entry.info.version;
        if (!superseded) {
            // The line first: a row readers see is one a kill cannot lose. (Never the line of a superseded one:
            // an open would put it back once the newer row is gone, over a pack range given back.)
            if (Error e = appendWhole(deferredLogFd, recordLine(entry)); e.isError())
                return e.withContext(QStringLiteral("blob '%1' not recorded in the cache's log").arg(entry.info.key));
            pendingBytes += entry.info.size - (previous ? previous->info.size : 0);
            pendingBlobs += previous ? 0 : 1;
            pendingAt.insert(entry.info.key, int(pending.size()));
            pending.push_back(entry);
            flushNow = pending.size() >= 256;
            if (!flushNow && !pendingFlushQueued)
                queueFlushLocked();
        }
    }
    if (superseded) {
        // A newer version of the key came first (two reservations committed out of order): it stays, and this
        // one's bytes go, without a line in the log.
        Reclaim space;
        {
            QMutexLocker journalLock(&journalMutex);  // whether its pack is still in use is the index's to say
            QMutexLocker lock(&mutex);
            if (closed || !index)
                return Error();  // its pack range is dead space the next open gives back
            space = releaseLocked(entry);
        }
        reclaim(space);
        return Error();
    }
    if (flushNow) {
        QStringList evicted;
        {
            QMutexLocker journalLock(&journalMutex);
            if (closed)
                return closedError();
            // Failing, the rows stay deferred (and this blob readable): the next change writes them, or the close
            // says why.
            if (Error e = flushPendingLocked(); e.isError())
                qCWarning(lcStores) << "cache" << root << ": fetched blobs not recorded yet:" << e.toString();
            evicted = evictJournalLocked({});
        }
        if (notifier)
            notifier->announceRemoved(evicted);
    }
    return Error();
}

/// Writes the deferred rows within deferMs, on the pool: the rows of the next moments go together.
void FileStore::State::queueFlushLocked()
{
    pendingFlushQueued = true;
    startOnPool(blockingPool(), [weak = weak_from_this()] {
        std::shared_ptr<State> d = weak.lock();
        if (!d)
            return;
        {
            // A deadline, not a wait for something: the rows of the next moments go together. A close
            // ends it early (and writes them itself).
            std::unique_lock<std::mutex> waiting(d->deferMutex);
            d->deferCv.wait_for(waiting, std::chrono::milliseconds(d->deferMs), [&] { return d->deferWake; });
        }
        {
            QMutexLocker lock(&d->mutex);
            d->pendingFlushQueued = false;  // one such task at a time: rows from now on queue the next
        }
        {
            QStringList evicted;
            {
                QMutexLocker journalLock(&d->journalMutex);
                if (d->closed)
                    return;
                if (Error e = d->flushPendingLocked(); e.isError())
                    qCWarning(lcStores) << "cache" << d->root << ": fetched blobs not recorded yet:" << e.toString();
                evicted = d->evictJournalLocked({});
            }
            if (d->notifier)
                d->notifier->announceRemoved(evicted);
        }
    });
}

Error FileStore::State::flushPendingLocked()
{
    if (closed || !index)
        return closedError();
    QList<Reclaim> space;
    {
        QMutexLocker lock(&mutex);
        if (pending.empty())
            return Error();
        if (Error e = index->begin(); e.isError())
            return e;
        // Every row in first, then what the replaced ones leave: whether a pack is still in use is asked once all
        // the rows that may be in it are.
        QList<Entry> replaced;
        for (const Entry &entry : pending) {
            std::optional<Entry> lost;
            if (Error e = replaceRowLocked(entry, &lost); e.isError()) {
                index->rollback();
                return e;
            }
            if (lost)
                replaced << *lost;
        }
        for (const Entry &old : std::as_const(replaced))
            space << releaseLocked(old);
        if (Error e = index->commit(); e.isError())
            return e;
        ++appendedSeq;
        pending.clear();
        pendingAt.clear();
        pendingBytes = pendingBlobs = 0;
        // The index has them: the log starts over (a kill before this replays rows the index already holds,
        // which changes nothing).
        if (deferredLogFd >= 0 && ::ftruncate(deferredLogFd, 0) != 0)
            qCWarning(lcStores) << "cache" << root << ": cannot empty the log of deferred rows:" << osError(errno);
    }
    index->checkpointIfLarge();
    for (const Reclaim &r : space)
        reclaim(r);
    return Error();
}

Error FileStore::State::recordBatched(const Entry &entry, QList<Reclaim> *space, QStringList *evicted, quint64 *seq)
{
    Recording mine;
    mine.entry = &entry;
    std::unique_lock<std::mutex> lock(recordMutex);
    recordQueue.push_back(&mine);
    while (!mine.done) {
        if (recordLeader) {
            recordCv.wait(lock);
            continue;
        }
        // The first to come records every entry waiting, its own among them, in one change.
        recordLeader = true;
        std::vector<Recording *> batch;
        batch.swap(recordQueue);
        lock.unlock();
        {
            QMutexLocker journalLock(&journalMutex);
            recordManyLocked(batch);
        }
        lock.lock();
        recordLeader = false;
        for (Recording *r : batch)
            r->done = true;
        recordCv.notify_all();
    }
    *space = std::move(mine.space);
    *evicted = std::move(mine.evicted);
    *seq = mine.seq;
    return mine.error;
}

void FileStore::State::recordManyLocked(const std::vector<Recording *> &batch)
{
    if (closed || !index) {
        for (Recording *r : batch)
            r->error = closedError();
        return;
    }
    if (Error e = flushUsesLocked(); e.isError())
        qCWarning(lcStores) << "cache" << root << ": uses not written down:" << e.toString();
    // Every row in first, then what the replaced ones leave (whether a pack is still in use is asked once all the
    // rows that may be in it are).
    QList<QPair<Recording *, Entry>> replaced;
    auto recordOne = [&](Recording *r) -> Error {
        std::optional<Entry> lost;
        if (Error e = replaceRowLocked(*r->entry, &lost); e.isError())
            return e;
        if (lost)
            replaced << qMakePair(r, *lost);
        return Error();
    };
    auto releaseReplaced = [&] {
        for (const auto &[r, old] : std::as_const(replaced))
            r->space << releaseLocked(old);
        return Error();
    };
    Error e = changeLocked([&]() -> Error {
        for (Recording *r : batch) {
            if (Error one = recordOne(r); one.isError())
                return one;
        }
        return releaseReplaced();
    });
    if (e.isError() && batch.size() > 1) {
        // One entry's failure is not the others': each on its own.
        for (Recording *r : batch) {
            replaced.clear();
            r->space.clear();
            r->error = changeLocked([&] {
                Error one = recordOne(r);
                return one.isError() ? one : releaseReplaced();
            });
        }
    } else if (e.isError()) {
        batch.front()->space.clear();
        batch.front()->error = e;
    }
    QSet<QString> keep;
    for (Recording *r : batch) {
        r->seq = appendedSeq;
        if (!r->error.isError())
            keep.insert(r->entry->info.key);
    }
    // What the eviction leaves to do goes to the first: each put announces and reclaims what it is given.
    batch.front()->evicted = evictJournalLocked(keep, &batch.front()->space);
}

} // namespace spectrum
