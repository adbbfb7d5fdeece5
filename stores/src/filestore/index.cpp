// FileStore's index in memory: what may come in (admission), what was used last (LRU), what goes when the
// budget is reached (eviction) or asked (removal), and entries written without a sync checked after a crash.

#include "filestore/state.h"

#include "spectrum/core/logging.h"

#include <QDir>
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

/// Persists access times (so LRU order survives a clean restart) and releases the directory. Jobs that
/// still hold the state afterwards fail with a clear error instead of touching a closed cache.
void FileStore::State::close()
{
    QMutexLocker journalLocker(&journalMutex);
    QMutexLocker locker(&mutex);
    if (closed)
        return;
    closed = true;
    {
        std::lock_guard<std::mutex> idle(packMutex);
        for (const std::unique_ptr<Pack> &p : idlePacks)
            ::close(p->fd);
        idlePacks.clear();
        packsAppending.clear();  // one still in a put() is closed when it comes back (sealPack)
    }
    if (journalFd >= 0) {
        // Reads reorder the LRU without a record: write the order down. Without reads the journal already
        // holds it (every put and removal appended in order), and closing costs no rewrite and no sync.
        if (usedSinceCompaction)
            compactJournalLocked();
        ::close(journalFd);
        journalFd = -1;
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

/// Puts a journalled `entry` into the index in place of an older version, then evicts down to the budget.
/// What the old version and the evicted blobs leave to do on the disk goes to `space`; the evicted keys are
/// returned. Caller holds journalMutex, not mutex.
QStringList FileStore::State::enterJournalLocked(const Entry &entry, QList<Reclaim> *space)
{
    {
        QMutexLocker lock(&mutex);
        if (const Entry *previous = entries.find(entry.info.key)) {
            total -= previous->info.size;
            *space << releaseLocked(*previous);
        }
        entries.insert(entry.info.key, entry);
        total += entry.info.size;
        if (entry.pack)
            ++packLive[entry.pack];
    }
    return evictJournalLocked(entry.info.key, space);
}

/// Evicts least recently used blobs (never `keep`) until the budget holds: out of the index, then into
/// the journal, then off the disk — or, with `later`, what is left to do on the disk goes there, for the
/// caller to have done elsewhere. Caller holds journalMutex, not mutex.
QStringList FileStore::State::evictJournalLocked(const QString &keep, QList<Reclaim> *later)
{
    QList<Entry> victims;
    QList<Reclaim> space;
    {
        QMutexLocker locker(&mutex);
        if (budget <= 0)
            return {};
        auto it = entries.order().begin();
        while (total > budget && it != entries.order().end()) {
            const QString key = *it++;
            if (key == keep)
                continue;
            victims << *entries.find(key);
            total -= victims.last().info.size;
            space << releaseLocked(victims.last());
            entries.remove(key);
        }
    }
    QList<QJsonObject> records;
    QStringList keys;
    for (const Entry &v : victims) {
        records << QJsonObject{{QStringLiteral("op"), QStringLiteral("del")}, {QStringLiteral("key"), v.info.key}};
        keys << v.info.key;
    }
    if (!records.isEmpty()) {
        if (Error e = appendLocked(records); e.isError())
            qCWarning(lcStores) << "eviction not journalled; the blobs come back at the next open:" << e.toString();
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
    QMutexLocker lock(&mutex);
    const Entry *e = entries.find(key);
    if (closed || !e || e->info.version != version)
        return;  // replaced or removed meanwhile
    qCWarning(lcStores) << "cache entry" << key << "changed on the disk since it was committed; dropped";
    total -= e->info.size;
    const Reclaim space = releaseLocked(*e);
    entries.remove(key);
    lock.unlock();
    reclaim(space);
    if (Error err = appendLocked({QJsonObject{{QStringLiteral("op"), QStringLiteral("del")}, {QStringLiteral("key"), key}}}, false); err.isError())
        qCWarning(lcStores) << "removal of" << key << "not journalled; the next open drops it (its file is gone):" << err.toString();
}

/// The entry for `key`, marked as just used. Caller holds `mutex`.
Result<Entry *> FileStore::State::useLocked(const QString &key)
{
    if (closed)
        return closedError();
    Entry *e = entries.find(key);
    if (!e)
        return Error(ErrorCode::NotFound, QStringLiteral("no blob '%1' in the disk cache").arg(key));
    if (e->unconfirmed) {
        if (Error err = confirmLocked(e); err.isError())
            return err;
    }
    e->lastAccessMs = QDateTime::currentMSecsSinceEpoch();
    entries.touch(key);
    usedSinceCompaction = true;
    return e;
}

/// Checks an entry written without a sync under an earlier boot against its checksum: kept (and known to be
/// on the disk) when it matches, dropped when the crash left other bytes. Caller holds `mutex`.
Error FileStore::State::confirmLocked(Entry *e)
{
    const QString key = e->info.key;
    const QString path = e->pack ? packPath(e->pack) : objectPath(key, e->info.version);
    bool same = false;
    {
        QFile f(path);
        if (f.open(QIODevice::ReadOnly) && (e->pack ? f.size() >= e->offset + e->info.size : f.size() == e->info.size)) {
            const uchar *p = e->info.size > 0 ? f.map(e->offset, e->info.size) : nullptr;
            if (p || e->info.size == 0) {
                const char *bytes = reinterpret_cast<const char *>(p);
                if (!e->check.isEmpty()) {
                    same = xxh3Digest(bytes, e->info.size) == e->check;
                } else {
                    same = Sha256::hash(bytes, e->info.size) == e->info.sha256;
                    Sha256::releaseThreadState();
                }
            }
        }
    }
    if (same) {
        e->unconfirmed = false;
        e->unsyncedBoot.clear();
        return Error();
    }
    qCWarning(lcStores) << "cache entry" << key << "was not on the disk when the system went down; dropped";
    total -= e->info.size;
    const Reclaim space = releaseLocked(*e);
    entries.remove(key);
    reclaim(space);  // its record goes at the next open, which finds no file (or no blob in its pack)
    return Error(ErrorCode::NotFound, QStringLiteral("blob '%1' was lost from the disk cache in a system crash; fetch it again").arg(key));
}

ResultJob<Done> *FileStore::remove(const QString &key)
{
    return makeJob<Done>([d = d, key, notifier = notifier()](const CancelToken &) -> Result<Done> {
        {
            QMutexLocker journalLock(&d->journalMutex);
            if (d->closed)
                return d->closedError();
            {
                QMutexLocker lock(&d->mutex);
                if (!d->entries.find(key))
                    return Error(ErrorCode::NotFound, QStringLiteral("no blob '%1' in the disk cache").arg(key));
            }
            if (Error err = d->appendLocked({QJsonObject{{QStringLiteral("op"), QStringLiteral("del")},
                                                         {QStringLiteral("key"), key}}}); err.isError())
                return err;
            Reclaim space;
            {
                QMutexLocker lock(&d->mutex);
                if (const Entry *e = d->entries.find(key)) {  // unless a failed check dropped it meanwhile
                    d->total -= e->info.size;
                    space = d->releaseLocked(*e);
                    d->entries.remove(key);
                }
            }
            d->reclaim(space);
        }
        notifier->announceRemoved({key});
        return Done{};
    });
}

StoreUsage FileStore::usage() const
{
    QMutexLocker lock(&d->mutex);
    return StoreUsage{d->total, d->budget, d->entries.size()};
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
        evicted = d->evictJournalLocked(QString());
    }
    notifier()->announceRemoved(evicted);
}

} // namespace spectrum
