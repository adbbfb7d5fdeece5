// SPDX-License-Identifier: Apache-2.0
// FileStore's packs: whole blobs up to 4 MiB appended to shared pack files, and the space of those that go given
// back at once by punching a hole (docs/CACHE.md).

#include "blobs/filestore/state.h"

#include "spectrum/core/logging.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>

#include <cerrno>
#include "spectrum/core/bootid.h"
#include "spectrum/core/threadpools.h"
#include "spectrum/transfer/filesink.h"

#include <algorithm>

#include <fcntl.h>
#include <unistd.h>

namespace spectrum {

using namespace cachedisk;

/// `e` has just left the index in the open change (caller holds journalMutex): what to do on the disk about it,
/// after the change is committed.
Reclaim FileStore::State::releaseLocked(const Entry &e)
{
    if (!e.pack)
        return Reclaim{objectPath(e.info.key, e.info.version)};
    const Result<bool> inUse = index->packInUse(e.pack);
    const bool deferredIn = std::any_of(pending.begin(), pending.end(), [&](const Entry &p) { return p.pack == e.pack; });
    if (inUse.isOk() && !inUse.value() && !deferredIn && !packsAppending.contains(e.pack))
        return Reclaim{packPath(e.pack), true};  // nothing else in it, and nothing more to come
    return Reclaim{packPath(e.pack), true, e.offset, alignUp(e.offset + e.info.size) - e.offset};
}

/// Does what releaseLocked() said. Caller holds `mutex` or nothing (never waits on a reader while holding it
/// unless the reader does not need it: readers take punchMutex after `mutex`, and copy without it).
void FileStore::State::reclaim(const Reclaim &r)
{
    if (r.path.isEmpty())
        return;
    std::unique_lock<std::shared_mutex> exclusive(punchMutex, std::defer_lock);
    if (r.pack)
        exclusive.lock();
    if (r.punchOffset < 0) {
        QFile::remove(r.path);  // readers that mapped a file of its own keep their mapping
        return;
    }
    if (r.punchLength <= 0)
        return;
    const int fd = ::open(QFile::encodeName(r.path).constData(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return;  // already gone with the whole pack
    if (::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(r.punchOffset), off_t(r.punchLength)) != 0) {
        // A file system without holes: the space comes back when the whole pack is deleted. No entry names
        // these bytes any more, so nothing reads them meanwhile.
        const int err = errno;
        qCWarning(lcStores) << "cannot give back" << r.punchLength << "bytes of" << r.path << ":" << osError(err);
    }
    ::close(fd);
}

/// Takes a pack to append one blob to: an idle one, or a new one.
Result<std::unique_ptr<FileStore::State::Pack>> FileStore::State::takePack()
{
    quint64 id = 0;
    {
        std::lock_guard<std::mutex> idle(packMutex);
        if (!idlePacks.empty()) {
            std::unique_ptr<Pack> p = std::move(idlePacks.back());
            idlePacks.pop_back();
            return p;
        }
        id = nextPackId++;
    }
    {
        QMutexLocker lock(&mutex);
        if (closed)
            return closedError();
        packsAppending.insert(id);
    }
    auto p = std::make_unique<Pack>();
    p->id = id;
    p->fd = ::open(QFile::encodeName(packPath(id)).constData(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (p->fd < 0) {
        const int err = errno;
        QMutexLocker lock(&mutex);
        packsAppending.remove(id);
        return ioError(QStringLiteral("cannot create %1").arg(packPath(id)), err);
    }
    return p;
}

/// Gives a pack back after an append: it waits for the next one, or, full, takes no more. Caller holds no lock.
void FileStore::State::givePack(std::unique_ptr<Pack> p)
{
    {
        QMutexLocker lock(&mutex);
        if (!closed && p->end < kPackBytes) {
            std::lock_guard<std::mutex> idle(packMutex);  // after mutex, as in close()
            idlePacks.push_back(std::move(p));
            return;
        }
    }
    sealPack(std::move(p));
}

/// The pack takes no more appends; deleted if no entry uses it. Caller holds no lock.
void FileStore::State::sealPack(std::unique_ptr<Pack> p)
{
    ::close(p->fd);
    QMutexLocker journalLock(&journalMutex);  // the index's writer answers whether the pack is in use
    QMutexLocker lock(&mutex);
    packsAppending.remove(p->id);
    if (closed || !index)
        return;  // after a close the next open deletes a pack no row names
    const Result<bool> inUse = index->packInUse(p->id);
    if (!inUse.isOk() || inUse.value())
        return;
    for (const Entry &e : pending) {
        if (e.pack == p->id)
            return;  // a deferred row is in it
    }
    lock.unlock();
    reclaim(Reclaim{packPath(p->id), true});
}

Result<BlobInfo> FileStore::putPacked(const std::shared_ptr<State> &d, const std::shared_ptr<StoreNotifier> &notifier, const QString &key,
                                      const ByteView &bytes, const CommitOptions &options)
{
    Result<quint64> admitted = d->admit(key, bytes.size());
    if (!admitted.isOk())
        return admitted.error();
    Entry entry;
    entry.info.key = key;
    entry.info.size = bytes.size();
    entry.info.version = admitted.value();
    // Everything that needs only the bytes in memory first, so that the pack is held for the write alone.
    if (Error e = describeContent(&entry, bytes, options, QByteArray()); e.isError())
        return e;
    const bool synced = options.durable || kernelBootId().isEmpty();  // as in commitNow()
    if (!synced)
        entry.unsyncedBoot = kernelBootId();

    Result<std::unique_ptr<State::Pack>> taken = d->takePack();
    if (!taken.isOk())
        return taken.error();
    std::unique_ptr<State::Pack> pack = taken.takeValue();
    entry.pack = pack->id;
    entry.offset = pack->end;
    // The range is the blob's from now on, written or not: a failed write leaves dead bytes that the next open
    // gives back, never a blob.
    pack->end = alignUp(entry.offset + bytes.size());
    const QString packFile = d->packPath(pack->id);
    Error written = writeFileAt(pack->fd, entry.offset, bytes.data(), bytes.size(), packFile);
    if (!written.isError() && synced && ::fdatasync(pack->fd) != 0)
        written = ioError(QStringLiteral("cannot sync blob '%1'").arg(key), errno);
    if (written.isError()) {
        d->sealPack(std::move(pack));  // a full disk: the next blob starts a fresh pack, or fails there
        return written.withContext(QStringLiteral("blob '%1' not committed").arg(key));
    }
    entry.info.committed = QDateTime::currentDateTimeUtc();
    entry.lastAccessMs = entry.info.committed.toMSecsSinceEpoch();

    QStringList evicted;
    QList<Reclaim> space;  // what the old version and the evicted blobs leave to do on the disk
    quint64 seq = 0;
    Error recorded;
    // Durable: recorded (with others arriving meanwhile) and synced before the call returns. Not: recorded in
    // memory now and in the index within moments (recordDeferred()).
    if (Error e = synced ? d->recordBatched(entry, &space, &evicted, &seq) : d->recordDeferred(entry); e.isError())
        recorded = e.withContext(QStringLiteral("blob '%1' not committed").arg(key));
    d->givePack(std::move(pack));  // after the entry counts in it: a full pack with no entry would be deleted
    if (!space.isEmpty()) {
        // Punching holes and deleting files is done on the pool: a put usually runs on the thread that reads a
        // fetch off the network (~0.1 ms per hole here), and a full cache evicts at every put.
        startOnPool(blockingPool(), [d, space] {
            for (const Reclaim &r : space)
                d->reclaim(r);
        });
    }
    if (recorded.isError())
        return recorded;
    if (Error e = synced ? d->syncUpTo(seq) : Error(); e.isError())
        return e.withContext(QStringLiteral("blob '%1' may not survive a crash").arg(key));
    notifier->announceCommitted(entry.info);
    notifier->announceRemoved(evicted);
    return entry.info;
}

} // namespace spectrum
