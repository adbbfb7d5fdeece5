// SPDX-License-Identifier: Apache-2.0
#pragma once
// FileStore's insides, shared by the files that each do one of its jobs (see filestore.h for what it promises):
//   filestore.cpp   opening and closing, errors of the operating system
//   indexdb.cpp     the index on the disk (SQLite): schema, opening and closing, rows, the use order, changes
//   indexstudies.cpp  the index's study and series counts, and the study searches answered from them
//   recording.cpp   how commits reach the index: one by one, several threads' in one change, or deferred
//   opening.cpp     opening: the index, the check of the files after a kill or crash, cleanup; group commit
//   recordlog.cpp   entries as JSON lines: an old cache's journal (taken over), the log of deferred rows
//   index.cpp       admission, changes as transactions, use (LRU order), eviction, removal, checks after a crash
//   packs.cpp       small blobs appended to pack files, and space given back by punching holes
//   staging.cpp     reservations in the staging folder, resumable ones, commits, put and import
//   reads.cpp       stat, query, read and snapshot: mapped files, copies out of packs, digests computed late
// The disk format and its crash-safety are described in docs/CACHE.md.

#include "blobs/directorylock.h"
#include "blobs/filestore/entry.h"
#include "blobs/filestore/indexdb.h"

#include "spectrum/stores/blobs/filestore.h"

#include <QHash>
#include <QJsonObject>
#include <QMutex>
#include <QStringList>
#include <QSet>

#include <condition_variable>
#include <functional>
#include <optional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace spectrum {

namespace cachedisk {

inline constexpr auto kObjects = "objects";
inline constexpr auto kStaging = "staging";
inline constexpr auto kJournal = "journal";  ///< the index of caches made before index.sqlite (taken over)
inline constexpr auto kDeferredLog = "deferred.log";  ///< rows recorded in memory, not yet in the index
inline constexpr auto kPacks = "packs";
// Whole blobs up to this size that arrive in memory (put(): instances fetched from an archive) are appended to a
// pack file instead of getting a file each; a pack takes appends until it holds this much.
inline constexpr qint64 kPackedBlobMax = 4 << 20;
inline constexpr qint64 kPackBytes = 64 << 20;
// Blobs start on a block boundary in their pack, so that the space of one that goes is given back whole.
inline constexpr qint64 kPackAlign = 4096;


inline qint64 alignUp(qint64 n) { return (n + kPackAlign - 1) & ~(kPackAlign - 1); }


/// What is left to do on the disk once an entry has left the index: nothing, delete a file (its own, or a pack
/// no entry uses any more), or give back the blocks its bytes took in a pack that others still use.
struct Reclaim
{
    QString path;
    bool pack = false;        ///< `path` is a pack: readers copy out of it under punchMutex
    qint64 punchOffset = -1;  ///< >= 0: punch [punchOffset, punchOffset + punchLength) out of `path`
    qint64 punchLength = 0;
};

QString osError(int err);
/// DiskFull for ENOSPC and EDQUOT, Io otherwise: "what: the system's words".
Error ioError(const QString &what, int err);
Error fsyncPath(const QString &path);
/// DiskFull, with the numbers, when the disk under `root` has less than `size` bytes free.
Error checkFreeSpace(const QString &root, const QString &key, qint64 size);
/// Describes `content` in `entry` as `options` say: its XXH3 (`check` when the caller has it), its SHA-256
/// (computed, given, or deferred), its DICOM identity. Corrupt when it is not the SHA-256 the caller expected.
Error describeContent(Entry *entry, const ByteView &content, const CommitOptions &options, const QByteArray &check);
/// The entries a file of JSON records names (an old cache's journal, the log of deferred rows), least recently
/// used first; a torn last line is skipped (recordlog.cpp). Corrupt when it cannot be read.
Result<QList<Entry>> readRecords(const QString &path);
/// `e` as one line of such a file.
QByteArray recordLine(const Entry &e);

} // namespace cachedisk

using cachedisk::Entry;
using cachedisk::Reclaim;

struct FileStore::State : std::enable_shared_from_this<FileStore::State>
{
    QString root;
    // Two locks, always taken in this order. journalMutex serialises changes to the disk — renames, the index's
    // writes, deletions — and may be held across fsync. mutex guards reading the index and is only ever held
    // briefly (a change is committed under it too, see indexdb.h), so readers (and the GUI thread asking for
    // usage()) never wait on the disk.
    QMutex journalMutex;
    mutable QMutex mutex;
    std::unique_ptr<cachedisk::IndexDb> index;
    qint64 budget = 0;
    quint64 nextVersion = 1;
    std::unique_ptr<DirectoryLock> lock;
    // Reads change the use order without a write each: the uses are kept here (guarded by mutex) and written with
    // the next change, at close, or — once many have gathered — by a task on the pool. `confirmed`: its bytes
    // were checked after a system crash (Entry::unconfirmed), and its tag of that boot goes with the use.
    struct Use
    {
        qint64 ms = 0;
        quint64 order = 0;
        quint64 version = 0;
        bool confirmed = false;
    };
    QHash<QString, Use> uses;
    quint64 useOrder = 0;
    bool usesFlushQueued = false;
    // Group commit: changes committed without a sync get a sequence number; syncUpTo() makes everything up to a
    // number durable with one fsync of the objects folder and one of the index's log, shared by every commit that
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
    QSet<quint64> packsAppending;     ///< guarded by mutex: packs that may still take appends
    std::shared_mutex punchMutex;

    bool closed = false;

    ~State() { close(); }

    /// Writes the uses down and marks the index closed cleanly, then releases the directory. Jobs that still
    /// hold the state afterwards fail with a clear error instead of touching a closed cache.
    void close();

    Error closedError() const
    {
        return Error(ErrorCode::Cancelled, QStringLiteral("the disk cache %1 was closed").arg(root));
    }

    QString objectPath(const QString &key, quint64 version) const
    {
        return root + QLatin1Char('/') + QLatin1String(cachedisk::kObjects) + QLatin1Char('/') + key + QLatin1Char('~') + QString::number(version);
    }
    QString stagingPath(const QString &key, quint64 version) const
    {
        return root + QLatin1Char('/') + QLatin1String(cachedisk::kStaging) + QLatin1Char('/') + key + QLatin1Char('~') + QString::number(version) + QStringLiteral(".part");
    }
    QString journalPath() const { return root + QLatin1Char('/') + QLatin1String(cachedisk::kJournal); }
    QString packPath(quint64 pack) const
    {
        return root + QLatin1Char('/') + QLatin1String(cachedisk::kPacks) + QLatin1Char('/') + QString::number(pack);
    }

    /// `e` has just left the index in the open change (caller holds journalMutex): what to do on the disk about
    /// it, after the change is committed.
    Reclaim releaseLocked(const Entry &e);
    /// In the open change: `entry` takes the place of its key's row — unless that row is of a newer version (two
    /// reservations of one key committed out of order: the newer stays, whichever committed last). `*lost` is the
    /// row that lost, its disk space for releaseLocked(). Caller holds journalMutex and mutex.
    Error replaceRowLocked(const Entry &entry, std::optional<Entry> *lost);

    /// Does what releaseLocked() said. Caller holds `mutex` or nothing (never waits on a reader while holding it
    /// unless the reader does not need it: readers take punchMutex after `mutex`, and copy without it).
    void reclaim(const Reclaim &r);

    /// Takes a pack to append one blob to: an idle one, or a new one.
    Result<std::unique_ptr<Pack>> takePack();

    /// Gives a pack back after an append: it waits for the next one, or, full, takes no more. Caller holds no lock.
    void givePack(std::unique_ptr<Pack> p);

    /// The pack takes no more appends; deleted if no entry uses it. Caller holds no lock.
    void sealPack(std::unique_ptr<Pack> p);

    /// A new blob of `size` for `key` may come in (the store is open, the budget and the disk can hold it): its
    /// version.
    Result<quint64> admit(const QString &key, qint64 size);

    /// Records `entry` in the index in place of an older version (not synced: `seq` is for syncUpTo()), then
    /// evicts down to the budget. What the old version and the evicted blobs leave to do on the disk goes to
    /// `space`; the evicted keys to `evicted`. Caller holds journalMutex, not mutex.
    Error recordLocked(const Entry &entry, QList<Reclaim> *space, QStringList *evicted, quint64 *seq);

    /// Runs `change` as one transaction of the index, committed under `mutex`; rolled back when it fails.
    /// Caller holds journalMutex, not mutex.
    Error changeLocked(const std::function<Error()> &change);

    /// Reads [begin, end) of `e` (caller holds `mutex`, which this releases): a mapping of a file of its own; a
    /// copy of a packed blob, made before anyone can give its blocks back. NotFound when its file is gone or cut
    /// short behind the cache's back (the caller drops the entry: dropDamaged()).
    Result<ByteView> bytesOf(const Entry &e, qint64 begin, qint64 end, QMutexLocker<QMutex> &lock);

    /// Makes the changes up to `seq` durable (see appendedSeq). Caller holds no lock.
    Error syncUpTo(quint64 seq);

    /// Writes the uses gathered since the last change into the index. Caller holds journalMutex, not mutex.
    Error flushUsesLocked();

    /// Evicts least recently used blobs (never those in `keep`) until the budget holds: out of the index, then off
    /// the disk — or, with `later`, what is left to do on the disk goes there, for the caller to have done
    /// elsewhere. Caller holds journalMutex, not mutex.
    QStringList evictJournalLocked(const QSet<QString> &keep, QList<Reclaim> *later = nullptr);

    /// recordLocked() for many threads at once: whoever comes first records every entry waiting meanwhile in one
    /// change of the index (a study's instances arrive together: one change each wrote the same index pages again
    /// and again). Caller holds no lock.
    Error recordBatched(const Entry &entry, QList<Reclaim> *space, QStringList *evicted, quint64 *seq);
    struct Recording
    {
        const Entry *entry = nullptr;
        Error error;
        QList<Reclaim> space;
        QStringList evicted;
        quint64 seq = 0;
        bool done = false;
    };
    void recordManyLocked(const std::vector<Recording *> &batch);
    /// Records a blob committed without a sync (CommitOptions::durable false: a fetched or imported instance) in
    /// memory at once, visible to every reader, and appended to deferred.log; in the index with the next change or
    /// within 25 ms — many in one change. A kill loses none (the next open replays the log). Caller holds no lock.
    Error recordDeferred(const Entry &entry);
    /// Writes the deferred rows into the index in one change (changeLocked() does it first thing). What replaced
    /// rows leave on the disk is reclaimed. Caller holds journalMutex, not mutex.
    Error flushPendingLocked();
    /// Has a task on the pool write the deferred rows within deferMs. Caller holds `mutex`.
    void queueFlushLocked();
    /// flushPendingLocked() for a search, which must see every blob: takes journalMutex when rows are waiting.
    Error flushPendingFor()
    {
        {
            QMutexLocker lock(&mutex);
            if (pending.empty())
                return Error();
        }
        QMutexLocker journalLock(&journalMutex);
        return closed ? closedError() : flushPendingLocked();
    }
    /// The entry of `key`: a deferred one, else the index's. Caller holds `mutex`.
    std::optional<Entry> findLocked(const QString &key);
    std::vector<Entry> pending;               ///< guarded by mutex: deferred rows, in commit order
    QHash<QString, int> pendingAt;            ///< guarded by mutex: key → its latest row in `pending`
    qint64 pendingBytes = 0, pendingBlobs = 0;  ///< guarded by mutex: what they add to the index's totals
    bool pendingFlushQueued = false;          ///< guarded by mutex
    /// How long deferred rows wait at most: 25 ms (SPECTRUM_CACHE_DEFER_MS, for tests that look at the moment
    /// before they are written).
    unsigned long deferMs = 25;
    std::mutex deferMutex;  ///< guards deferWake; never held with another lock
    std::condition_variable deferCv;
    bool deferWake = false;  ///< the store closes: a flush waiting for its moment goes at once
    std::shared_ptr<StoreNotifier> notifier;  ///< announces what a flush of deferred rows evicted
    /// deferred.log, appended (without a sync) with each deferred row under `mutex`, emptied when they are written
    /// into the index: a kill loses none of them (the kernel holds the lines), the next open replays them.
    int deferredLogFd = -1;

    std::mutex recordMutex;  ///< guards recordQueue and recordLeader; taken before journalMutex, never inside it
    std::condition_variable recordCv;
    std::vector<Recording *> recordQueue;
    bool recordLeader = false;

    /// Opens the index (taking an old journal over), checks it against the files after a kill or crash, and
    /// removes from the disk whatever it does not name (opening.cpp). Caller holds journalMutex, not mutex.
    Error openLocked();

    /// Forgets `key` at `version` and deletes its file: its bytes are not what was committed. Takes both locks.
    void dropDamaged(const QString &key, quint64 version);

    /// The entry for `key`, marked as just used. Caller holds `mutex`. `damaged` (not 0): the version whose bytes
    /// were lost in a system crash — the caller drops it (dropDamaged()) once it has let go of `mutex`.
    Result<Entry> useLocked(const QString &key, quint64 *damaged);

    /// useLocked(), and a blob lost in a system crash dropped (after letting go of `lock`, which it then leaves
    /// unlocked).
    Result<Entry> use(const QString &key, QMutexLocker<QMutex> &lock)
    {
        quint64 damaged = 0;
        Result<Entry> e = useLocked(key, &damaged);
        if (!e.isOk()) {
            lock.unlock();
            if (damaged)
                dropDamaged(key, damaged);
        }
        return e;
    }

    /// Checks an entry written without a sync under an earlier boot against its checksum: whether its bytes are
    /// the ones committed. Caller holds `mutex`.
    bool confirmLocked(const Entry &e);
};

} // namespace spectrum
