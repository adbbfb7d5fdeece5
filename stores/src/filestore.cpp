#include "spectrum/stores/filestore.h"

#include "directorylock.h"
#include "lrumap.h"

#include "spectrum/core/bootid.h"
#include "spectrum/core/logging.h"
#include "spectrum/imaging/dicomdecoder.h"
#include "spectrum/transfer/progressrecord.h"
#include "spectrum/transfer/sha256.h"
#include "spectrum/transfer/xxh3.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QHash>
#include <QMutex>
#include <QSet>
#include <QThread>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <shared_mutex>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace spectrum {

namespace {

constexpr auto kObjects = "objects";
constexpr auto kStaging = "staging";
constexpr auto kJournal = "journal";
constexpr auto kPacks = "packs";
// Whole blobs up to this size that arrive in memory (put(): instances fetched from an archive) are appended to a
// pack file instead of getting a file each; a pack takes appends until it holds this much.
constexpr qint64 kPackedBlobMax = 4 << 20;
constexpr qint64 kPackBytes = 64 << 20;
// Blobs start on a block boundary in their pack, so that the space of one that goes is given back whole.
constexpr qint64 kPackAlign = 4096;

qint64 alignUp(qint64 n) { return (n + kPackAlign - 1) & ~(kPackAlign - 1); }

struct Entry
{
    BlobInfo info;
    QByteArray check;  ///< XXH3-128 of the bytes; empty for entries journalled before checksums were kept
    qint64 lastAccessMs = 0;
    /// Committed without a sync (CommitOptions::durable false): the boot ID of the kernel that holds its
    /// bytes. Empty once known to be on the disk.
    QString unsyncedBoot;
    /// Its bytes must be checked against the checksum before they are served: written without a sync under a
    /// kernel that has since gone (another boot).
    bool unconfirmed = false;
    /// The pack file holding its bytes (packs/<pack>, from `offset` on); 0: a file of its own,
    /// objects/<key>~<version>.
    quint64 pack = 0;
    qint64 offset = 0;
};

/// What is left to do on the disk once an entry has left the index: nothing, delete a file (its own, or a pack
/// no entry uses any more), or give back the blocks its bytes took in a pack that others still use.
struct Reclaim
{
    QString path;
    bool pack = false;        ///< `path` is a pack: readers copy out of it under punchMutex
    qint64 punchOffset = -1;  ///< >= 0: punch [punchOffset, punchOffset + punchLength) out of `path`
    qint64 punchLength = 0;
};

/// Describes `content` in `entry` as `options` say: its XXH3 (`check` when the caller has it), its SHA-256
/// (computed, given, or deferred), its DICOM identity. Corrupt when it is not the SHA-256 the caller expected.
Error describeContent(Entry *entry, const ByteView &content, const CommitOptions &options, const QByteArray &check)
{
    entry->check = check.isEmpty() ? xxh3Digest(content.data(), content.size()) : check;
    if (options.verifiedSha256.isEmpty() && (!options.deferSha256 || !options.expectedSha256.isEmpty())) {
        entry->info.sha256 = Sha256::hash(content.data(), content.size());
        Sha256::releaseThreadState();  // usually a pool thread, which may outlive the program's end
    } else {
        entry->info.sha256 = options.verifiedSha256;  // empty when deferred
    }
    if (!options.expectedSha256.isEmpty() && options.expectedSha256 != entry->info.sha256)
        return Error(ErrorCode::Corrupt, QStringLiteral("blob '%1' does not match its expected SHA-256").arg(entry->info.key));
    if (options.knownIdentity.isValid())
        entry->info.dicom = options.knownIdentity;
    else if (Result<DicomIdentity> id = readDicomIdentity(content); id.isOk())
        entry->info.dicom = id.value();
    else
        qCWarning(lcStores) << "blob" << entry->info.key << "looks like DICOM but its header is unreadable:" << id.error().toString();
    return Error();
}

QString osError(int err) { return QString::fromLocal8Bit(std::strerror(err)); }

Error ioError(const QString &what, int err)
{
    return Error(err == ENOSPC || err == EDQUOT ? ErrorCode::DiskFull : ErrorCode::Io,
                 QStringLiteral("%1: %2").arg(what, osError(err)));
}

Error fsyncPath(const QString &path)
{
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ioError(QStringLiteral("cannot open %1 to sync it").arg(path), errno);
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    return rc == 0 ? Error() : ioError(QStringLiteral("cannot sync %1").arg(path), err);
}

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

QJsonObject putRecord(const Entry &e)
{
    QJsonObject o;
    o.insert(QStringLiteral("op"), QStringLiteral("put"));
    o.insert(QStringLiteral("key"), e.info.key);
    o.insert(QStringLiteral("version"), QString::number(e.info.version));
    o.insert(QStringLiteral("size"), QString::number(e.info.size));
    if (!e.info.sha256.isEmpty())
        o.insert(QStringLiteral("sha256"), QString::fromLatin1(e.info.sha256.toHex()));
    if (!e.check.isEmpty())
        o.insert(QStringLiteral("xxh3"), QString::fromLatin1(e.check.toHex()));
    o.insert(QStringLiteral("committed"), e.info.committed.toMSecsSinceEpoch());
    o.insert(QStringLiteral("access"), e.lastAccessMs);
    if (e.info.dicom.isValid())
        o.insert(QStringLiteral("dicom"), e.info.dicom.toJson());
    if (!e.unsyncedBoot.isEmpty())
        o.insert(QStringLiteral("unsynced"), e.unsyncedBoot);
    if (e.pack) {
        o.insert(QStringLiteral("pack"), QString::number(e.pack));
        o.insert(QStringLiteral("offset"), QString::number(e.offset));
    }
    return o;
}

bool entryFromRecord(const QJsonObject &o, Entry *e)
{
    bool okVersion = false, okSize = false;
    e->info.key = o.value(QStringLiteral("key")).toString();
    e->info.version = o.value(QStringLiteral("version")).toString().toULongLong(&okVersion);
    e->info.size = o.value(QStringLiteral("size")).toString().toLongLong(&okSize);
    e->info.sha256 = QByteArray::fromHex(o.value(QStringLiteral("sha256")).toString().toLatin1());
    e->check = QByteArray::fromHex(o.value(QStringLiteral("xxh3")).toString().toLatin1());
    e->info.committed = QDateTime::fromMSecsSinceEpoch(qint64(o.value(QStringLiteral("committed")).toDouble()), Qt::UTC);
    e->lastAccessMs = qint64(o.value(QStringLiteral("access")).toDouble());
    e->info.dicom = DicomIdentity::fromJson(o.value(QStringLiteral("dicom")).toObject());
    e->unsyncedBoot = o.value(QStringLiteral("unsynced")).toString();
    bool okPack = true, okOffset = true;
    if (o.contains(QStringLiteral("pack"))) {
        e->pack = o.value(QStringLiteral("pack")).toString().toULongLong(&okPack);
        e->offset = o.value(QStringLiteral("offset")).toString().toLongLong(&okOffset);
        okPack = okPack && e->pack > 0 && okOffset && e->offset >= 0 && e->offset % kPackAlign == 0;
    }
    const bool digests = (e->info.sha256.isEmpty() || e->info.sha256.size() == 32) && (e->check.isEmpty() || e->check.size() == 16)
        && !(e->info.sha256.isEmpty() && e->check.isEmpty());
    return okVersion && okSize && okPack && digests && e->info.size >= 0 && BlobStore::validateKey(e->info.key).code() == ErrorCode::None;
}

} // namespace

struct FileStore::State
{
    QString root;
    // Two locks, always taken in this order. journalMutex serialises changes to the disk — renames, journal
    // appends, deletions — and may be held across fsync. mutex guards the in-memory index below and is only ever
    // held briefly, so readers (and the GUI thread asking for usage()) never wait on the disk.
    QMutex journalMutex;
    mutable QMutex mutex;
    LruMap<Entry> entries;
    qint64 total = 0;
    qint64 budget = 0;
    quint64 nextVersion = 1;
    int journalFd = -1;
    std::unique_ptr<DirectoryLock> lock;
    // Group commit: records appended without a sync get a sequence number; syncUpTo() makes everything up to a
    // number durable with one fsync of the objects folder and one of the journal, shared by every commit that
    // waits meanwhile (many instances of a study arrive at once: one sync each cost 0.25 s per 200 instances).
    quint64 appendedSeq = 0;  ///< guarded by journalMutex
    QMutex syncMutex;         ///< taken after journalMutex is released, never with it
    quint64 syncedSeq = 0;    ///< guarded by syncMutex
    // Files are created one at a time. Creating a file write-locks its folder in the kernel, and a second thread
    // creating beside it spins on that lock (rwsem_spin_on_owner) for as long as the first allocates its inode:
    // measured while fetching 300 instances with two writing threads, a fifth of their CPU went into that spin.
    // Waiting here sleeps instead, and leaves the core to the network and the other writer.
    std::mutex createMutex;

    // Packs (see filestore.h). A pack open for appends is used by one put() at a time; between puts it waits in
    // idlePacks. A pack stops taking appends when it is full or the store closes, and is deleted once no entry
    // uses it. Entries that go give their blocks back at once (a hole punched into the pack): a reader copies a
    // packed blob out under punchMutex held shared, a punch or deletion holds it exclusively, so nobody ever reads
    // blocks given back — a mapping could not promise that, so packed blobs are read by copy.
    struct Pack
    {
        quint64 id = 0;
        int fd = -1;
        qint64 end = 0;  ///< where the next blob goes
    };
    std::mutex packMutex;  ///< guards idlePacks and nextPackId
    std::vector<std::unique_ptr<Pack>> idlePacks;
    quint64 nextPackId = 1;
    QHash<quint64, int> packLive;     ///< guarded by mutex: entries per pack
    QSet<quint64> packsAppending;     ///< guarded by mutex: packs that may still take appends
    std::shared_mutex punchMutex;

    bool closed = false;
    bool usedSinceCompaction = false;  ///< guarded by mutex: an entry was read since the journal was last rewritten

    ~State() { close(); }

    /// Persists access times (so LRU order survives a clean restart) and releases the directory. Jobs that
    /// still hold the state afterwards fail with a clear error instead of touching a closed cache.
    void close()
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

    Error closedError() const
    {
        return Error(ErrorCode::Cancelled, QStringLiteral("the disk cache %1 was closed").arg(root));
    }

    QString objectPath(const QString &key, quint64 version) const
    {
        return root + QLatin1Char('/') + QLatin1String(kObjects) + QLatin1Char('/') + key + QLatin1Char('~') + QString::number(version);
    }
    QString stagingPath(const QString &key, quint64 version) const
    {
        return root + QLatin1Char('/') + QLatin1String(kStaging) + QLatin1Char('/') + key + QLatin1Char('~') + QString::number(version) + QStringLiteral(".part");
    }
    QString journalPath() const { return root + QLatin1Char('/') + QLatin1String(kJournal); }
    QString packPath(quint64 pack) const
    {
        return root + QLatin1Char('/') + QLatin1String(kPacks) + QLatin1Char('/') + QString::number(pack);
    }

    /// `e` has just left the index (caller holds `mutex`): what to do on the disk about it, after the lock.
    Reclaim releaseLocked(const Entry &e)
    {
        if (!e.pack)
            return Reclaim{objectPath(e.info.key, e.info.version)};
        auto live = packLive.find(e.pack);
        if (live != packLive.end() && --live.value() <= 0) {
            packLive.erase(live);
            if (!packsAppending.contains(e.pack))
                return Reclaim{packPath(e.pack), true};  // nothing else in it, and nothing more to come
        }
        return Reclaim{packPath(e.pack), true, e.offset, alignUp(e.offset + e.info.size) - e.offset};
    }

    /// Does what releaseLocked() said. Caller holds `mutex` or nothing (never waits on a reader while holding it
    /// unless the reader does not need it: readers take punchMutex after `mutex`, and copy without it).
    void reclaim(const Reclaim &r)
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
    Result<std::unique_ptr<Pack>> takePack()
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
        p->fd = ::open(QFile::encodeName(packPath(id)).constData(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (p->fd < 0) {
            const int err = errno;
            QMutexLocker lock(&mutex);
            packsAppending.remove(id);
            return ioError(QStringLiteral("cannot create %1").arg(packPath(id)), err);
        }
        return p;
    }

    /// Gives a pack back after an append: it waits for the next one, or, full, takes no more. Caller holds no lock.
    void givePack(std::unique_ptr<Pack> p)
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
    void sealPack(std::unique_ptr<Pack> p)
    {
        ::close(p->fd);
        QMutexLocker lock(&mutex);
        packsAppending.remove(p->id);
        if (closed || packLive.value(p->id) > 0)
            return;  // after a close the next open deletes what no record names
        lock.unlock();
        reclaim(Reclaim{packPath(p->id), true});
    }

    /// A new blob of `size` for `key` may come in (the store is open, the budget and the disk can hold it): its
    /// version.
    Result<quint64> admit(const QString &key, qint64 size)
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
    QStringList enterJournalLocked(const Entry &entry, QList<Reclaim> *space)
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

    /// Reads [begin, end) of `e` (caller holds `mutex`, which this releases): a mapping of a file of its own; a
    /// copy of a packed blob, made before anyone can give its blocks back.
    Result<ByteView> bytesOf(const Entry &e, qint64 begin, qint64 end, QMutexLocker<QMutex> &lock);

    /// Makes the renames and journal records up to `seq` durable (see appendedSeq). Caller holds no lock.
    Error syncUpTo(quint64 seq)
    {
        QMutexLocker syncLock(&syncMutex);
        if (syncedSeq >= seq)
            return Error();  // another commit's sync covered ours
        quint64 target = 0;
        int fd = -1;
        {
            QMutexLocker journalLock(&journalMutex);
            target = appendedSeq;
            if (journalFd >= 0)
                fd = ::dup(journalFd);  // compaction may replace the journal meanwhile; this one stays ours
        }
        Error e = fsyncPath(root + QLatin1Char('/') + QLatin1String(kObjects));
        if (!e.isError())
            e = fsyncPath(root + QLatin1Char('/') + QLatin1String(kPacks));  // a pack made since
        if (!e.isError() && fd >= 0 && ::fdatasync(fd) != 0)
            e = ioError(QStringLiteral("cannot sync the cache index"), errno);
        if (fd >= 0)
            ::close(fd);
        if (!e.isError())
            syncedSeq = target;
        return e;
    }

    /// Appends records; with `sync` false they become durable only through syncUpTo(the returned sequence).
    Error appendLocked(const QList<QJsonObject> &records, bool sync = true, quint64 *seq = nullptr)
    {
        QByteArray line;
        for (const QJsonObject &r : records) {
            line += QJsonDocument(r).toJson(QJsonDocument::Compact);
            line += '\n';
        }
        const char *p = line.constData();
        qint64 left = line.size();
        while (left > 0) {
            const ssize_t n = ::write(journalFd, p, size_t(left));
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                return ioError(QStringLiteral("cannot append to the cache index"), errno);
            }
            p += n;
            left -= n;
        }
        ++appendedSeq;
        if (seq)
            *seq = appendedSeq;
        if (sync && ::fdatasync(journalFd) != 0)
            return ioError(QStringLiteral("cannot sync the cache index"), errno);
        return Error();
    }

    /// Rewrites the journal as one put record per entry, oldest access first. Atomic: temp file + rename.
    Error compactJournalLocked()
    {
        const QString tmp = journalPath() + QStringLiteral(".tmp");
        QFile f(tmp);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
            return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(tmp, f.errorString()));
        for (const QString &key : entries.order()) {
            const QByteArray line = QJsonDocument(putRecord(*entries.find(key))).toJson(QJsonDocument::Compact) + '\n';
            if (f.write(line) != line.size()) {
                f.remove();
                return Error(ErrorCode::DiskFull, QStringLiteral("cannot write %1: %2").arg(tmp, f.errorString()));
            }
        }
        if (!f.flush() || ::fsync(f.handle()) != 0) {
            f.remove();
            return ioError(QStringLiteral("cannot sync %1").arg(tmp), errno);
        }
        f.close();
        if (::rename(QFile::encodeName(tmp).constData(), QFile::encodeName(journalPath()).constData()) != 0) {
            const int err = errno;
            QFile::remove(tmp);
            return ioError(QStringLiteral("cannot replace the cache index"), err);
        }
        fsyncPath(root);
        usedSinceCompaction = false;
        if (journalFd >= 0)
            ::close(journalFd);
        if (closed) {
            journalFd = -1;
            return Error();
        }
        journalFd = ::open(QFile::encodeName(journalPath()).constData(), O_WRONLY | O_APPEND | O_CLOEXEC);
        return journalFd >= 0 ? Error() : ioError(QStringLiteral("cannot open the cache index"), errno);
    }

    /// Evicts least recently used blobs (never `keep`) until the budget holds: out of the index, then into
    /// the journal, then off the disk — or, with `later`, what is left to do on the disk goes there, for the
    /// caller to have done elsewhere. Caller holds journalMutex, not mutex.
    QStringList evictJournalLocked(const QString &keep, QList<Reclaim> *later = nullptr)
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

    Error openLocked();

    /// Forgets `key` at `version` and deletes its file: its bytes are not what was committed. Takes both locks.
    void dropDamaged(const QString &key, quint64 version)
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
    Result<Entry *> useLocked(const QString &key)
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
    Error confirmLocked(Entry *e)
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
};

Error FileStore::State::openLocked()
{
    QDir dir(root);
    if (!dir.mkpath(QLatin1String(kObjects)) || !dir.mkpath(QLatin1String(kStaging)) || !dir.mkpath(QLatin1String(kPacks)))
        return Error(ErrorCode::Io, QStringLiteral("cannot create the cache directory %1").arg(root));
    QFileInfo rootInfo(root);
    if (!rootInfo.isWritable())
        return Error(ErrorCode::Io, QStringLiteral("the cache directory %1 is not writable").arg(root));

    Result<std::unique_ptr<DirectoryLock>> locked = DirectoryLock::acquire(root + QStringLiteral("/lock"));
    if (!locked.isOk())
        return Error(locked.error().code(), QStringLiteral("the cache %1: %2").arg(root, locked.error().message()));
    lock = locked.takeValue();

    // Replay the journal. A torn last line (crash during an append) is expected and ignored.
    // Journal order is use order: compaction writes entries least recently used first, and every later put
    // moves its key to the end. No clock is involved, so equal timestamps cannot scramble the LRU.
    LruMap<Entry> replayed;
    int records = 0;            // lines in the journal
    bool wholeLines = true;     // the last one ends with its newline (an append after it starts a line of its own)
    QFile journal(journalPath());
    if (journal.exists()) {
        if (!journal.open(QIODevice::ReadOnly))
            return Error(ErrorCode::Io, QStringLiteral("cannot read the cache index: %1").arg(journal.errorString()));
        int lineNo = 0, skipped = 0;
        while (!journal.atEnd()) {
            const QByteArray line = journal.readLine();
            ++lineNo;
            wholeLines = line.endsWith('\n');
            QJsonParseError perr;
            const QJsonObject o = QJsonDocument::fromJson(line, &perr).object();
            const QString op = o.value(QStringLiteral("op")).toString();
            Entry e;
            if (perr.error == QJsonParseError::NoError && op == QLatin1String("put") && entryFromRecord(o, &e)) {
                replayed.insert(e.info.key, e);  // an update is also a use: to the end
                nextVersion = std::max(nextVersion, e.info.version + 1);
            } else if (perr.error == QJsonParseError::NoError && op == QLatin1String("del")) {
                replayed.remove(o.value(QStringLiteral("key")).toString());
            } else {
                ++skipped;
            }
        }
        if (skipped > 0)
            qCWarning(lcStores) << "cache index" << journalPath() << ": skipped" << skipped << "unreadable record(s) of" << lineNo;
        records = lineNo;
    }

    // Keep only records whose file is there with the right size (whose pack reaches to their end), in use order.
    QList<Entry> alive;
    QSet<QString> referenced;
    QHash<quint64, qint64> packSizes;
    QHash<quint64, QList<QPair<qint64, qint64>>> packRanges;  // pack → [offset, end) of its entries
    for (const QString &key : replayed.order()) {
        const Entry &e = *replayed.find(key);
        bool there = false;
        if (e.pack) {
            if (!packSizes.contains(e.pack)) {
                const QFileInfo fi(packPath(e.pack));
                packSizes.insert(e.pack, fi.exists() ? fi.size() : -1);
            }
            there = packSizes.value(e.pack) >= e.offset + e.info.size;
            if (there)
                packRanges[e.pack] << qMakePair(e.offset, e.offset + e.info.size);
        } else {
            const QFileInfo fi(objectPath(e.info.key, e.info.version));
            there = fi.exists() && fi.size() == e.info.size;
            if (there)
                referenced.insert(fi.fileName());
        }
        if (there)
            alive << e;
        else
            qCWarning(lcStores) << "dropping cache entry" << e.info.key << "- its file is missing or has the wrong size";
    }
    // Entries committed without a sync: those of this boot reach the disk now, with one sync of the file
    // system (usually long since written back); those of an earlier boot are checked before they are served.
    bool syncNeeded = false;
    for (Entry &e : alive) {
        if (e.unsyncedBoot.isEmpty())
            continue;
        if (e.unsyncedBoot == kernelBootId())
            syncNeeded = true;
        else
            e.unconfirmed = true;
    }
    if (syncNeeded) {
        const int fd = ::open(QFile::encodeName(root).constData(), O_RDONLY | O_CLOEXEC);
        const bool synced = fd >= 0 && ::syncfs(fd) == 0;
        if (fd >= 0)
            ::close(fd);
        for (Entry &e : alive) {
            if (synced && e.unsyncedBoot == kernelBootId())
                e.unsyncedBoot.clear();
        }
    }
    // One record per entry, nothing dropped or untagged: the journal already says exactly this, in this order.
    const bool journalIsCurrent = records == alive.size() && wholeLines && !syncNeeded;
    for (const Entry &e : alive) {
        entries.insert(e.info.key, e);
        total += e.info.size;
        if (e.pack)
            ++packLive[e.pack];
    }

    // Nothing unnamed survives: interrupted writes and orphans of crashed commits or evictions.
    // Interrupted resumable reservations stay (their record names their file); everything else goes.
    QDir staging(root + QLatin1Char('/') + QLatin1String(kStaging));
    QSet<QString> resumable;
    for (const QString &name : staging.entryList({QStringLiteral("*.resume")}, QDir::Files)) {
        // Partial blobs nobody came back for in a week are given up: they are outside the budget.
        if (QFileInfo(staging.filePath(name)).lastModified().daysTo(QDateTime::currentDateTime()) > 7)
            continue;
        QFile f(staging.filePath(name));
        const QString part = f.open(QIODevice::ReadOnly)
            ? QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("file")).toString() : QString();
        if (!part.isEmpty() && !part.contains(QLatin1Char('/')) && staging.exists(part)) {
            resumable << name << part;
            nextVersion = std::max(nextVersion, part.section(QLatin1Char('~'), -1).section(QLatin1Char('.'), 0, 0).toULongLong() + 1);
        }
    }
    for (const QString &name : staging.entryList(QDir::Files | QDir::Hidden | QDir::System)) {
        if (!resumable.contains(name))
            staging.remove(name);
    }
    QDir objects(root + QLatin1Char('/') + QLatin1String(kObjects));
    for (const QString &name : objects.entryList(QDir::Files | QDir::Hidden | QDir::System)) {
        if (!referenced.contains(name))
            objects.remove(name);
    }
    // Packs: those no entry uses go; in the others, the space between entries (blobs removed while a reader still
    // held them, appends a crash cut short) is given back, and no pack takes appends any more.
    QDir packs(root + QLatin1Char('/') + QLatin1String(kPacks));
    for (const QString &name : packs.entryList(QDir::Files | QDir::Hidden | QDir::System)) {
        bool numbered = false;
        const quint64 id = name.toULongLong(&numbered);
        if (numbered)
            nextPackId = std::max(nextPackId, id + 1);
        auto ranges = packRanges.find(id);
        if (!numbered || ranges == packRanges.end()) {
            packs.remove(name);
            continue;
        }
        std::sort(ranges->begin(), ranges->end());
        const int fd = ::open(QFile::encodeName(packs.filePath(name)).constData(), O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        qint64 at = 0;
        for (const auto &range : *ranges) {
            if (range.first > at)
                ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(at), off_t(range.first - at));
            at = std::max(at, alignUp(range.second));
        }
        if (packSizes.value(id) > at && ::ftruncate(fd, off_t(at)) != 0)
            qCWarning(lcStores) << "cannot trim" << packs.filePath(name) << ":" << osError(errno);
        ::close(fd);
    }
    if (!journalIsCurrent)
        return compactJournalLocked();
    // Nothing to rewrite: appended to as it is (an empty one made for a new store needs no sync — losing it loses
    // nothing). Saves every start two fsyncs and a rename.
    journalFd = ::open(QFile::encodeName(journalPath()).constData(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    return journalFd >= 0 ? Error() : ioError(QStringLiteral("cannot open the cache index"), errno);
}

Result<std::unique_ptr<FileStore>> FileStore::open(const QString &root, qint64 budgetBytes)
{
    auto state = std::make_shared<State>();
    state->root = QDir(root).absolutePath();
    state->budget = std::max<qint64>(0, budgetBytes);
    {
        QMutexLocker journalLock(&state->journalMutex);
        {
            QMutexLocker lock(&state->mutex);
            if (Error e = state->openLocked(); e.isError())
                return e;
        }
        state->evictJournalLocked(QString());
    }
    return std::unique_ptr<FileStore>(new FileStore(std::move(state)));
}

ResultJob<std::shared_ptr<FileStore>> *FileStore::openJob(const QString &root, qint64 budgetBytes)
{
    QThread *caller = QThread::currentThread();
    return makeJob<std::shared_ptr<FileStore>>([root, budgetBytes, caller](const CancelToken &) -> Result<std::shared_ptr<FileStore>> {
        Result<std::unique_ptr<FileStore>> opened = open(root, budgetBytes);
        if (!opened.isOk())
            return opened.error();
        std::shared_ptr<FileStore> store(opened.takeValue());
        store->moveToThread(caller);  // pushed from the thread that created it, as Qt requires
        return store;
    });
}

FileStore::FileStore(std::shared_ptr<State> state) : d(std::move(state)) {}

FileStore::~FileStore()
{
    d->close();
}

QString FileStore::root() const { return d->root; }

namespace {

/// A reserved blob: a file in the staging folder (or already under its final name, Placement::Final), written
/// with pwrite() and mapped for reading what arrived.
class FileWriter : public BlobWriter
{
public:
    FileWriter(QString key, const void *owner) : BlobWriter(std::move(key)), owner(owner) {}
    ~FileWriter() override
    {
        if (progress && !committed)
            progress->flush(file.handle());  // resumable: what arrived stays for the next attempt
        if (map)
            file.unmap(map);
        if (!committed && !progress && file.fileName().size() > 0)
            file.remove();  // abandoned: never becomes visible
    }
    QList<QPair<qint64, qint64>> completedRanges() const override
    {
        return progress ? progress->ranges() : QList<QPair<qint64, qint64>>();
    }
    void rangeVerified(qint64 begin, qint64 end) override
    {
        if (progress && !committed)
            progress->verified(begin, end, file.handle());
    }
    qint64 size() const override { return blobSize; }
    Error writeAt(qint64 offset, const char *data, qint64 length) override
    {
        if (committed)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("blob '%1' is already committed").arg(key()));
        if (offset < 0 || length < 0 || offset > blobSize - length) {
            return Error(ErrorCode::OutOfRange, QStringLiteral("write [%1, %2) outside blob '%3' of %4 bytes")
                                                    .arg(offset).arg(offset + length).arg(key()).arg(blobSize));
        }
        return writeFileAt(file.handle(), offset, data, length, file.fileName());
    }

    /// For reading what arrived (a decoder following a transfer); writes go through writeAt().
    char *data() override { return committed ? nullptr : reinterpret_cast<char *>(map); }
    bool receivesInPlace() const override { return false; }

    const void *owner;
    QFile file;
    uchar *map = nullptr;
    std::unique_ptr<ProgressRecord> progress;  ///< resumable reservations only
    qint64 blobSize = 0;
    quint64 version = 0;
    bool inPlace = false;  ///< written under its final name (Placement::Final): no rename at the commit
    bool committed = false;
};

} // namespace

namespace {
/// Maps [begin, end) of a blob's file. Caller holds the index lock (so eviction cannot race the open).
Result<ByteView> mapLocked(const QString &path, const QString &key, qint64 begin, qint64 end)
{
    if (begin == end)
        return ByteView();
    auto file = std::make_shared<QFile>(path);
    if (!file->open(QIODevice::ReadOnly))
        return Error(ErrorCode::Io, QStringLiteral("cannot open blob '%1': %2").arg(key, file->errorString()));
    uchar *p = file->map(begin, end - begin);
    if (!p)
        return Error(ErrorCode::Io, QStringLiteral("cannot map blob '%1': %2").arg(key, file->errorString()));
    return ByteView(reinterpret_cast<const char *>(p), end - begin, file);  // the QFile keeps the mapping
}
} // namespace

Result<ByteView> FileStore::State::bytesOf(const Entry &e, qint64 begin, qint64 end, QMutexLocker<QMutex> &lock)
{
    if (!e.pack) {
        Result<ByteView> mapped = mapLocked(objectPath(e.info.key, e.info.version), e.info.key, begin, end);
        lock.unlock();
        return mapped;
    }
    // Taken before the index lock is let go: whoever removes the entry after that point waits for the copy
    // before giving its blocks back.
    std::shared_lock<std::shared_mutex> reading(punchMutex);
    const QString path = packPath(e.pack);
    const QString key = e.info.key;
    const qint64 from = e.offset + begin;
    lock.unlock();
    if (begin == end)
        return ByteView();
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ioError(QStringLiteral("cannot open blob '%1'").arg(key), errno);
    QByteArray bytes(end - begin, Qt::Uninitialized);
    qint64 done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::pread(fd, bytes.data() + done, size_t(bytes.size() - done), off_t(from + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int err = n < 0 ? errno : EIO;
            ::close(fd);
            return ioError(QStringLiteral("cannot read blob '%1'").arg(key), err);
        }
        done += n;
    }
    ::close(fd);
    return ByteView(std::move(bytes));
}

ResultJob<BlobInfo> *FileStore::stat(const QString &key)
{
    // Answered at once from the index, unless the SHA-256 is still to be computed: that reads the blob, on the pool.
    bool digestPending = false;
    {
        QMutexLocker lock(&d->mutex);
        const Entry *e = d->entries.find(key);
        digestPending = e && e->info.sha256.isEmpty();
    }
    return makeJob<BlobInfo>([d = d, key](const CancelToken &) -> Result<BlobInfo> {
        QMutexLocker lock(&d->mutex);
        if (d->closed)
            return d->closedError();
        const Entry *e = d->entries.find(key);
        if (!e)
            return Error(ErrorCode::NotFound, QStringLiteral("no blob '%1' in the disk cache").arg(key));
        const BlobInfo info = e->info;
        if (!info.sha256.isEmpty())
            return info;
        Result<ByteView> bytes = d->bytesOf(*e, 0, info.size, lock);
        if (!bytes.isOk())
            return bytes.error();
        return withDigest(d, info, bytes.value());
    }, digestPending ? RunOn::Pool : RunOn::Caller);
}

Result<BlobInfo> FileStore::withDigest(const std::shared_ptr<State> &d, const BlobInfo &info, const ByteView &bytes)
{
    if (!info.sha256.isEmpty())
        return info;
    QByteArray check;
    {
        QMutexLocker lock(&d->mutex);
        if (const Entry *e = d->entries.find(info.key); e && e->info.version == info.version)
            check = e->check;
    }
    if (!check.isEmpty() && xxh3Digest(bytes.data(), bytes.size()) != check) {
        d->dropDamaged(info.key, info.version);
        return Error(ErrorCode::Corrupt, QStringLiteral("blob '%1' changed on the disk since it was cached; fetch it again").arg(info.key));
    }
    BlobInfo out = info;
    out.sha256 = Sha256::hash(bytes.data(), bytes.size());
    Sha256::releaseThreadState();
    QMutexLocker journalLock(&d->journalMutex);
    QJsonObject record;
    {
        QMutexLocker lock(&d->mutex);
        Entry *e = d->entries.find(info.key);
        if (d->closed || !e || e->info.version != info.version || !e->info.sha256.isEmpty())
            return out;  // replaced, removed, or digested by someone else meanwhile
        e->info.sha256 = out.sha256;
        record = putRecord(*e);
    }
    // Not synced: if this record is lost the digest is simply computed again.
    if (Error err = d->appendLocked({record}, false); err.isError())
        qCWarning(lcStores) << "the SHA-256 of" << info.key << "was not journalled:" << err.toString();
    return out;
}

ResultJob<QList<BlobInfo>> *FileStore::query(const BlobQuery &query)
{
    return makeJob<QList<BlobInfo>>([d = d, query](const CancelToken &) -> Result<QList<BlobInfo>> {
        QList<BlobInfo> out;
        {
            QMutexLocker lock(&d->mutex);
            if (d->closed)
                return d->closedError();
            for (const QString &key : d->entries.order()) {
                const Entry *e = d->entries.find(key);
                if (query.matches(e->info))
                    out << e->info;
            }
        }
        std::sort(out.begin(), out.end(), [](const BlobInfo &a, const BlobInfo &b) { return a.key < b.key; });
        if (query.limit >= 0 && out.size() > query.limit)
            out.resize(query.limit);
        return out;
    });
}

ResultJob<ByteView> *FileStore::read(const QString &key, ByteRange range)
{
    return makeJob<ByteView>([d = d, key, range](const CancelToken &) -> Result<ByteView> {
        // Opened under the lock so eviction cannot delete the file in between; once open (and mapped) the
        // bytes stay readable even if the file is unlinked later.
        QMutexLocker lock(&d->mutex);
        Result<Entry *> e = d->useLocked(key);
        if (!e.isOk())
            return e.error();
        qint64 begin = 0, end = 0;
        if (Error err = range.resolve(e.value()->info.size, &begin, &end); err.isError())
            return err.withContext(key);
        const QByteArray check = e.value()->check;
        const quint64 version = e.value()->info.version;
        const qint64 size = e.value()->info.size;
        Result<ByteView> bytes = d->bytesOf(*e.value(), begin, end, lock);
        // A whole blob is checked against its checksum before anyone uses it (XXH3: 50 µs for a CT slice): a
        // byte changed on the disk is never shown as an image. The entry goes; the caller fetches it again.
        if (bytes.isOk() && begin == 0 && end == size && !check.isEmpty() && xxh3Digest(bytes.value().data(), bytes.value().size()) != check) {
            d->dropDamaged(key, version);
            return Error(ErrorCode::Corrupt, QStringLiteral("blob '%1' changed on the disk since it was cached; fetch it again").arg(key));
        }
        return bytes;
    });
}

ResultJob<BlobSnapshot> *FileStore::snapshot(const QString &key)
{
    return makeJob<BlobSnapshot>([d = d, key](const CancelToken &) -> Result<BlobSnapshot> {
        QMutexLocker lock(&d->mutex);
        Result<Entry *> e = d->useLocked(key);
        if (!e.isOk())
            return e.error();
        const BlobInfo info = e.value()->info;
        Result<ByteView> bytes = d->bytesOf(*e.value(), 0, info.size, lock);
        if (!bytes.isOk())
            return bytes.error();
        Result<BlobInfo> digested = withDigest(d, info, bytes.value());
        if (!digested.isOk())
            return digested.error();
        return BlobSnapshot{digested.value(), bytes.value()};
    });
}

ResultJob<BlobWriterPtr> *FileStore::reserve(const QString &key, qint64 size)
{
    return makeJob<BlobWriterPtr>([d = d, key, size](const CancelToken &) { return reserveNow(d, key, size); });
}

Result<BlobWriterPtr> FileStore::reserveNow(const std::shared_ptr<State> &d, const QString &key, qint64 size, bool mapped, Placement placement)
{
    Result<quint64> admitted = d->admit(key, size);
    if (!admitted.isOk())
        return admitted.error();
    const quint64 version = admitted.value();
    auto w = std::make_shared<FileWriter>(key, d.get());
    w->blobSize = size;
    w->version = version;
    w->inPlace = placement == Placement::Final;
    w->file.setFileName(w->inPlace ? d->objectPath(key, version) : d->stagingPath(key, version));
    // A final name is new: versions only grow, and the open removed what no record names.
    std::unique_lock<std::mutex> creating(d->createMutex);
    const bool opened = w->file.open(QIODevice::ReadWrite | (w->inPlace ? QIODevice::NewOnly : QIODevice::Truncate));
    creating.unlock();
    if (!opened)
        return Error(ErrorCode::Io, QStringLiteral("cannot create %1: %2").arg(w->file.fileName(), w->file.errorString()));
    if (size > 0 && mapped) {
        // Allocate the blocks now: a full disk fails here with a clear error, not later as SIGBUS in a
        // write through the mapping.
        const int rc = ::posix_fallocate(w->file.handle(), 0, off_t(size));
        if (rc != 0)
            return ioError(QStringLiteral("cannot reserve %1 bytes for blob '%2'").arg(size).arg(key), rc);
        w->map = w->file.map(0, size);
        if (!w->map)
            return Error(ErrorCode::Io, QStringLiteral("cannot map %1: %2").arg(w->file.fileName(), w->file.errorString()));
    }
    return BlobWriterPtr(w);
}

ResultJob<BlobWriterPtr> *FileStore::reserveResumable(const QString &key, qint64 size, const QString &identity)
{
    auto *plain = reserve(key, size);
    return chainJob<BlobWriterPtr>(plain, [d = d, key, size, identity](const BlobWriterPtr &fresh, const CancelToken &) -> Result<BlobWriterPtr> {
        auto *w = static_cast<FileWriter *>(fresh.get());
        const QString recordPath = d->root + QLatin1Char('/') + QLatin1String(kStaging) + QLatin1Char('/') + key + QStringLiteral(".resume");
        auto progress = std::make_unique<ProgressRecord>(recordPath, identity, size);
        if (progress->load() && size > 0) {
            // An earlier attempt: continue in its file, and drop the fresh one.
            auto old = std::make_shared<FileWriter>(key, w->owner);
            old->blobSize = size;
            old->version = progress->dataFile().section(QLatin1Char('~'), -1).section(QLatin1Char('.'), 0, 0).toULongLong();
            old->file.setFileName(d->root + QLatin1Char('/') + QLatin1String(kStaging) + QLatin1Char('/') + progress->dataFile());
            if (old->version > 0 && old->file.size() == size && old->file.open(QIODevice::ReadWrite)) {
                old->map = old->file.map(0, size);
                if (old->map) {
                    old->progress = std::move(progress);
                    return BlobWriterPtr(old);
                }
            }
            old->file.close();
        }
        // A new start: the fresh reservation, with a record naming its file from the first moment.
        progress = std::make_unique<ProgressRecord>(recordPath, identity, size, QFileInfo(w->file.fileName()).fileName());
        progress->flush(w->file.handle());
        w->progress = std::move(progress);
        return fresh;
    });
}

ResultJob<BlobInfo> *FileStore::commit(const BlobWriterPtr &writer, const CommitOptions &options)
{
    return makeJob<BlobInfo>([d = d, writer, options, notifier = notifier()](const CancelToken &) { return commitNow(d, notifier, writer, options); });
}

Result<BlobInfo> FileStore::commitNow(const std::shared_ptr<State> &d, const std::shared_ptr<StoreNotifier> &notifier, const BlobWriterPtr &writer,
                                     const CommitOptions &options, QByteArray check)
{
    auto *w = dynamic_cast<FileWriter *>(writer.get());
    if (!w || w->owner != d.get())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("the blob was not reserved in this disk cache"));
    if (w->committed)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("blob '%1' was already committed").arg(w->key()));
    if (w->progress)
        w->progress->waitForBackground();  // it may still be syncing the file we are about to close

    Entry entry;
    entry.info.key = w->key();
    entry.info.size = w->blobSize;
    entry.info.version = w->version;
    const bool hashSha256 = options.verifiedSha256.isEmpty() && (!options.deferSha256 || !options.expectedSha256.isEmpty());
    const bool needContent = hashSha256 || check.isEmpty() || !options.knownIdentity.isValid();
    if (needContent && !w->map && w->blobSize > 0) {
        w->map = w->file.map(0, w->blobSize);
        if (!w->map)
            return Error(ErrorCode::Io, QStringLiteral("cannot map %1: %2").arg(w->file.fileName(), w->file.errorString()));
    }
    const ByteView content(reinterpret_cast<const char *>(w->map), w->blobSize, nullptr);
    if (Error e = describeContent(&entry, content, options, check); e.isError())
        return e;

    if (w->map) {
        w->file.unmap(w->map);
        w->map = nullptr;
    }
    // Without a sync only where a crash of the kernel can be told afterwards (its boot ID; see filestore.h).
    const bool synced = options.durable || kernelBootId().isEmpty();
    if (!w->file.flush() || (synced && ::fdatasync(w->file.handle()) != 0))
        return ioError(QStringLiteral("cannot sync blob '%1'").arg(w->key()), errno);
    w->file.close();
    if (!synced)
        entry.unsyncedBoot = kernelBootId();

    entry.info.committed = QDateTime::currentDateTimeUtc();
    entry.lastAccessMs = entry.info.committed.toMSecsSinceEpoch();
    const QString target = d->objectPath(w->key(), w->version);
    QStringList evicted;
    quint64 seq = 0;
    {
        QMutexLocker journalLock(&d->journalMutex);
        if (d->closed)
            return d->closedError();
        // A resumable reservation's staging file stays, with its record, until the entry is journalled: it is
        // linked into objects/ rather than moved. A kill in between then leaves what had been received to be
        // continued, where a rename left an orphan in objects/ (deleted at the next open) and a record naming a
        // file that was gone — the progress lost (tst_faults caught it once in several thousand kills).
        const bool resumable = w->progress != nullptr;
        if (!w->inPlace) {
            const QByteArray from = QFile::encodeName(w->file.fileName()), to = QFile::encodeName(target);
            if ((resumable ? ::link(from.constData(), to.constData()) : ::rename(from.constData(), to.constData())) != 0)
                return ioError(QStringLiteral("cannot move blob '%1' into the cache").arg(w->key()), errno);
        }
        w->committed = !resumable;  // a moved or final file is the entry's now; the writer must not delete it
        // Made durable below, together with the commits that run meanwhile (group commit).
        if (Error e = d->appendLocked({putRecord(entry)}, false, &seq); e.isError()) {
            QFile::remove(target);  // without its record the file would be an orphan: not committed
            return e.withContext(QStringLiteral("blob '%1' not committed").arg(w->key()));
        }
        w->committed = true;
        if (resumable) {
            w->progress->remove();                 // first the record, then the file it names
            QFile::remove(w->file.fileName());     // the entry has its own link
        }
        QList<Reclaim> space;
        evicted = d->enterJournalLocked(entry, &space);
        for (const Reclaim &r : space)
            d->reclaim(r);  // readers that mapped an old file keep their mapping; packed blobs were copied
    }
    // Only a durable commit is acknowledged. The bytes were synced above; this covers the rename and the record.
    if (Error e = synced ? d->syncUpTo(seq) : Error(); e.isError())
        return e.withContext(QStringLiteral("blob '%1' may not survive a crash").arg(w->key()));
    notifier->announceCommitted(entry.info);
    notifier->announceRemoved(evicted);
    return entry.info;
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

ResultJob<BlobInfo> *FileStore::put(const QString &key, const ByteView &bytes, const CommitOptions &options)
{
    return makeJob<BlobInfo>([d = d, notifier = notifier(), key, bytes, options](const CancelToken &) -> Result<BlobInfo> {
        if (bytes.size() <= kPackedBlobMax)
            return putPacked(d, notifier, key, bytes, options);
        Result<BlobWriterPtr> w = reserveNow(d, key, bytes.size(), false, Placement::Final);
        if (!w.isOk())
            return w.error();
        if (Error e = w.value()->writeAt(0, bytes.data(), bytes.size()); e.isError())
            return e;
        CommitOptions fromMemory = options;
        if (fromMemory.verifiedSha256.isEmpty() && (!options.deferSha256 || !options.expectedSha256.isEmpty())) {
            fromMemory.verifiedSha256 = Sha256::hash(bytes.data(), bytes.size());
            Sha256::releaseThreadState();
        }
        if (!fromMemory.knownIdentity.isValid()) {
            if (Result<DicomIdentity> id = readDicomIdentity(bytes); id.isOk())
                fromMemory.knownIdentity = id.value();
        }
        return commitNow(d, notifier, w.value(), fromMemory, xxh3Digest(bytes.data(), bytes.size()));
    });
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
    {
        QMutexLocker journalLock(&d->journalMutex);
        if (d->closed) {
            recorded = d->closedError();
        } else if (Error e = d->appendLocked({putRecord(entry)}, false, &seq); e.isError()) {
            recorded = e.withContext(QStringLiteral("blob '%1' not committed").arg(key));
        } else {
            evicted = d->enterJournalLocked(entry, &space);
        }
    }
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

ResultJob<BlobInfo> *FileStore::importFile(const QString &key, const QString &path, const CommitOptions &options)
{
    return makeJob<BlobInfo>([d = d, notifier = notifier(), key, path, options](const CancelToken &) -> Result<BlobInfo> {
        const int src = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_CLOEXEC);
        if (src < 0)
            return ioError(QStringLiteral("cannot read %1").arg(path), errno);
        struct stat st {};
        if (::fstat(src, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(src);
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1 is not a regular file").arg(path));
        }
        Result<BlobWriterPtr> w = reserveNow(d, key, qint64(st.st_size), true, Placement::Final);
        if (!w.isOk()) {
            ::close(src);
            return w.error();
        }
        auto *writer = static_cast<FileWriter *>(w.value().get());
        const int dst = writer->file.handle();
        loff_t in = 0, out = 0;
        qint64 left = qint64(st.st_size);
        while (left > 0) {
            const ssize_t n = ::copy_file_range(src, &in, dst, &out, size_t(left), 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                const int err = n < 0 ? errno : EIO;
                ::close(src);
                return ioError(QStringLiteral("cannot copy %1 into the cache").arg(path), err);
            }
            left -= n;
        }
        ::close(src);
        Result<BlobInfo> committed = commitNow(d, notifier, w.value(), options);
        if (committed.isOk())
            QFile::remove(path);
        return committed;
    });
}

} // namespace spectrum
