// SPDX-License-Identifier: Apache-2.0
// FileStore's bookkeeping over its index (indexdb.h): what may come in (admission), changes as transactions, what
// was used last (LRU), what goes when the budget is reached (eviction) or asked (removal), and entries written
// without a sync checked after a system crash.

#include "blobs/filestore/state.h"

#include "spectrum/core/bootid.h"
#include "spectrum/core/logging.h"
#include "spectrum/core/threadpools.h"

#include <QDir>
#include <QThread>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>

#include <cerrno>
#include "spectrum/transfer/sha256.h"
#include "spectrum/transfer/xxh3.h"

#include <sys/statvfs.h>

#include <fcntl.h>
#include <unistd.h>

namespace spectrum {

using namespace cachedisk;

namespace cachedisk {

/// DiskFull, with the numbers, when the disk under `root` has less than `size` bytes free.
Error checkFreeSpace(const QString &root, const QString &key, qint64 size)
{
    struct statvfs disk {};
    if (::statvfs(QFile::encodeName(root).constData(), &disk) == 0 && qint64(disk.f_bavail) * qint64(disk.f_frsize) < size) {
        return Error(ErrorCode::DiskFull, QStringLiteral("blob '%1' needs %2 bytes, the disk of %3 has %4 free")
                                              .arg(key).arg(size).arg(root).arg(qint64(disk.f_bavail) * qint64(disk.f_frsize)));
    }
    return Error();
}

} // namespace cachedisk

void FileStore::State::close()
{
    {
        std::lock_guard<std::mutex> waking(deferMutex);
        deferWake = true;
    }
    deferCv.notify_all();
    QMutexLocker journalLocker(&journalMutex);
    if (closed)
        return;
    if (index) {
        if (Error e = flushPendingLocked(); e.isError())
            qCWarning(lcStores) << "cache" << root << ": the last fetched blobs were not recorded; the next open gives their space back:" << e.toString();
        if (Error e = flushUsesLocked(); e.isError())
            qCWarning(lcStores) << "cache" << root << ": the last uses were not written down:" << e.toString();
    }
    QMutexLocker locker(&mutex);
    closed = true;
    {
        std::lock_guard<std::mutex> idle(packMutex);
        for (const std::unique_ptr<Pack> &p : idlePacks)
            ::close(p->fd);
        idlePacks.clear();
        packsAppending.clear();  // one still in a put() is closed when it comes back (sealPack)
    }
    if (deferredLogFd >= 0) {
        ::close(deferredLogFd);
        deferredLogFd = -1;
    }
    if (index) {
        // A clean close: the next open takes the index as it is, without checking the files.
        if (Error e = index->markClosed(nextVersion); e.isError())
            qCWarning(lcStores) << "cache" << root << ": not closed cleanly; the next open checks it:" << e.toString();
        index.reset();
    }
    lock.reset();
}

/// A new blob of `size` for `key` may come in (the store is open, the budget and the disk can hold it): its
/// version.
Result<quint64> FileStore::State::admit(const QString &key, qint64 size)
{
    if (Error e = BlobStore::validateKey(key); e.isError())
        return e;
    if (size < 0)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("negative size %1").arg(size));
    quint64 version = 0;
    {
        QMutexLocker lock(&mutex);
        if (closed)
            return closedError();
        if (budget > 0 && size > budget) {
            return Error(ErrorCode::DiskFull, QStringLiteral("blob '%1' of %2 bytes exceeds the cache budget of %3 bytes")
                                                  .arg(key).arg(size).arg(budget));
        }
        version = nextVersion++;
    }
    if (Error e = checkFreeSpace(root, key, size); e.isError())
        return e;
    return version;
}

Error FileStore::State::changeLocked(const std::function<Error()> &change)
{
    if (closed || !index)
        return closedError();
    if (Error e = flushPendingLocked(); e.isError())
        return e;
    QMutexLocker lock(&mutex);
    if (Error e = index->begin(); e.isError())
        return e;
    Error e = change();
    if (e.isError()) {
        index->rollback();
        return e;
    }
    if (Error c = index->commit(); c.isError())
        return c;
    ++appendedSeq;
    lock.unlock();
    index->checkpointIfLarge();
    return Error();
}

Error FileStore::State::flushUsesLocked()
{
    QHash<QString, Use> taken;
    {
        QMutexLocker lock(&mutex);
        taken.swap(uses);
        usesFlushQueued = false;
    }
    if (taken.isEmpty())
        return Error();
    QList<QPair<quint64, QString>> order;
    order.reserve(taken.size());
    for (auto it = taken.cbegin(); it != taken.cend(); ++it)
        order << qMakePair(it->order, it.key());
    std::sort(order.begin(), order.end());
    return changeLocked([&]() -> Error {
        for (const auto &[n, key] : std::as_const(order)) {
            const Use &use = taken[key];
            if (Error e = index->touch(key, use.ms); e.isError())
                return e;
            if (use.confirmed) {
                std::optional<Entry> e = index->find(key);  // committed rows only: nothing else changed in between
                if (e && e->info.version == use.version) {
                    e->unsyncedBoot.clear();
                    if (Error u = index->updateDescription(*e); u.isError())
                        return u;
                }
            }
        }
        return Error();
    });
}

Error FileStore::State::recordLocked(const Entry &entry, QList<Reclaim> *space, QStringList *evicted, quint64 *seq)
{
    if (Error e = flushUsesLocked(); e.isError())
        qCWarning(lcStores) << "cache" << root << ": uses not written down:" << e.toString();
    Error e = changeLocked([&]() -> Error {
        std::optional<Entry> lost;
        if (Error replaced = replaceRowLocked(entry, &lost); replaced.isError())
            return replaced;
        if (lost)
            *space << releaseLocked(*lost);
        return Error();
    });
    if (e.isError())
        return e;
    *seq = appendedSeq;
    *evicted = evictJournalLocked({entry.info.key}, space);
    return Error();
}

Error FileStore::State::replaceRowLocked(const Entry &entry, std::optional<Entry> *lost)
{
    Result<std::optional<Entry>> previous = index->take(entry.info.key);
    if (!previous.isOk())
        return previous.error();
    const bool newerThere = previous.value() && previous.value()->info.version > entry.info.version;
    if (Error inserted = index->insert(newerThere ? *previous.value() : entry); inserted.isError())
        return inserted;
    *lost = newerThere ? std::optional<Entry>(entry) : previous.value();
    return Error();
}

/// Evicts least recently used blobs (never `keep`) until the budget holds: out of the index, then off the disk —
/// or, with `later`, what is left to do on the disk goes there, for the caller to have done elsewhere. Caller holds
/// journalMutex, not mutex.
QStringList FileStore::State::evictJournalLocked(const QSet<QString> &keep, QList<Reclaim> *later)
{
    QStringList keys;
    QList<Reclaim> space;
    if (budget > 0 && index && !closed) {
        if (Error e = flushPendingLocked(); e.isError())
            qCWarning(lcStores) << "cache" << root << ": fetched blobs not recorded before an eviction:" << e.toString();
    }
    if (budget <= 0 || !index || index->totalBytes() <= budget)
        return keys;
    if (Error e = flushUsesLocked(); e.isError())
        qCWarning(lcStores) << "cache" << root << ": uses not written down before an eviction:" << e.toString();
    while (index->totalBytes() > budget) {
        QStringList batch;
        QList<Reclaim> batchSpace;
        Error e = changeLocked([&]() -> Error {
            Result<QList<Entry>> oldest = index->oldest(64);
            if (!oldest.isOk())
                return oldest.error();
            for (const Entry &v : oldest.value()) {
                if (index->totalBytes() <= budget)
                    break;
                if (keep.contains(v.info.key))
                    continue;
                Result<std::optional<Entry>> gone = index->take(v.info.key);
                if (!gone.isOk())
                    return gone.error();
                batchSpace << releaseLocked(v);
                batch << v.info.key;
            }
            return Error();
        });
        if (e.isError()) {
            qCWarning(lcStores) << "cache" << root << ": eviction failed:" << e.toString();
            break;
        }
        if (batch.isEmpty())
            break;  // only what is kept is left over the budget
        keys += batch;
        space += batchSpace;
    }
    if (later)
        *later += space;
    else
        for (const Reclaim &r : space)
            reclaim(r);
    return keys;
}

/// Forgets `key` at `version` and deletes its file: its bytes are not what was committed. Takes both locks.
void FileStore::State::dropDamaged(const QString &key, quint64 version)
{
    QMutexLocker journalLock(&journalMutex);
    if (closed || !index)
        return;
    Reclaim space;
    Error e = changeLocked([&]() -> Error {
        const std::optional<Entry> current = index->find(key);
        if (!current || current->info.version != version)
            return Error();  // replaced or removed meanwhile
        qCWarning(lcStores) << "cache entry" << key << "is not on the disk as it was committed; dropped";
        if (Result<std::optional<Entry>> gone = index->take(key); !gone.isOk())
            return gone.error();
        space = releaseLocked(*current);
        return Error();
    });
    if (e.isError())
        qCWarning(lcStores) << "the damaged blob" << key << "could not be dropped from the index:" << e.toString();
    else
        reclaim(space);
}

/// The entry for `key`, marked as just used. Caller holds `mutex`.
Result<Entry> FileStore::State::useLocked(const QString &key, quint64 *damaged)
{
    *damaged = 0;
    if (closed || !index)
        return closedError();
    std::optional<Entry> e = findLocked(key);
    if (!e)
        return Error(ErrorCode::NotFound, QStringLiteral("no blob '%1' in the disk cache").arg(key));
    Use &use = uses[key];
    if (use.version != e->info.version)
        use = Use{};
    use.version = e->info.version;
    e->unconfirmed = !index->synced(*e) && e->unsyncedBoot != kernelBootId() && !use.confirmed;
    if (e->unconfirmed) {
        if (!confirmLocked(*e)) {
            uses.remove(key);
            *damaged = e->info.version;
            qCWarning(lcStores) << "cache entry" << key << "was not on the disk when the system went down; dropped";
            return Error(ErrorCode::NotFound, QStringLiteral("blob '%1' was lost from the disk cache in a system crash; fetch it again").arg(key));
        }
        use.confirmed = true;
    }
    use.ms = QDateTime::currentMSecsSinceEpoch();
    use.order = ++useOrder;
    // Written down by the next change; a reading session that changes nothing has them written from the pool.
    if (uses.size() >= 4096 && !usesFlushQueued) {
        usesFlushQueued = true;
        startOnPool(blockingPool(), [weak = weak_from_this()] {
            if (std::shared_ptr<State> d = weak.lock()) {
                QMutexLocker journalLock(&d->journalMutex);
                if (!d->closed)
                    d->flushUsesLocked();
            }
        });
    }
    return *e;
}

/// Checks an entry written without a sync under an earlier boot against its checksum. Caller holds `mutex`.
bool FileStore::State::confirmLocked(const Entry &e)
{
    const QString path = e.pack ? packPath(e.pack) : objectPath(e.info.key, e.info.version);
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly) || (e.pack ? f.size() < e.offset + e.info.size : f.size() != e.info.size))
        return false;
    const uchar *p = e.info.size > 0 ? f.map(e.offset, e.info.size) : nullptr;
    if (!p && e.info.size > 0)
        return false;
    const char *bytes = reinterpret_cast<const char *>(p);
    if (!e.check.isEmpty())
        return xxh3Digest(bytes, e.info.size) == e.check;
    const bool same = Sha256::hash(bytes, e.info.size) == e.info.sha256;
    Sha256::releaseThreadState();
    return same;
}

ResultJob<Done> *FileStore::remove(const QString &key)
{
    return makeJob<Done>([d = d, key, notifier = notifier()](const CancelToken &) -> Result<Done> {
        {
            QMutexLocker journalLock(&d->journalMutex);
            if (d->closed)
                return d->closedError();
            if (Error e = d->flushUsesLocked(); e.isError())
                qCWarning(lcStores) << "uses not written down:" << e.toString();
            Reclaim space;
            bool found = false;
            if (Error err = d->changeLocked([&]() -> Error {
                    Result<std::optional<Entry>> gone = d->index->take(key);
                    if (!gone.isOk())
                        return gone.error();
                    found = bool(gone.value());
                    if (found)
                        space = d->releaseLocked(*gone.value());
                    return Error();
                });
                err.isError())
                return err;
            if (!found)
                return Error(ErrorCode::NotFound, QStringLiteral("no blob '%1' in the disk cache").arg(key));
            // Durable before the call returns, as a removal always was.
            if (::fdatasync(d->index->walFd()) != 0)
                return ioError(QStringLiteral("cannot sync the cache index"), errno);
            d->reclaim(space);
        }
        notifier->announceRemoved({key});
        return Done{};
    });
}

StoreUsage FileStore::usage() const
{
    QMutexLocker lock(&d->mutex);
    if (!d->index)
        return StoreUsage{0, d->budget, 0};
    return StoreUsage{d->index->totalBytes() + d->pendingBytes, d->budget, d->index->blobCount() + d->pendingBlobs};
}

void FileStore::setBudget(qint64 budgetBytes)
{
    QStringList evicted;
    {
        QMutexLocker journalLock(&d->journalMutex);
        {
            QMutexLocker lock(&d->mutex);
            d->budget = std::max<qint64>(0, budgetBytes);
        }
        evicted = d->evictJournalLocked({});
    }
    notifier()->announceRemoved(evicted);
}

} // namespace spectrum
