// SPDX-License-Identifier: Apache-2.0
// FileStore's opening: the index (taken over from an old journal the first time), the check of the files against
// it after a kill or a crash, and the removal of whatever it does not name (docs/CACHE.md); and the syncs that make
// changes durable — one for many commits (group commit), one for a whole bulk import.

#include "blobs/filestore/state.h"

#include "spectrum/core/bootid.h"
#include "spectrum/core/logging.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>

#include <cerrno>
#include <algorithm>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace spectrum {

using namespace cachedisk;

ResultJob<Done> *FileStore::syncToDisk()
{
    return makeJob<Done>([d = d](const CancelToken &) -> Result<Done> {
        const QString boot = kernelBootId();
        QMutexLocker journalLock(&d->journalMutex);  // no commit appends meanwhile: what is tagged is written
        if (d->closed)
            return d->closedError();
        if (boot.isEmpty())
            return Done{};  // without a boot ID every commit was synced
        if (Error e = d->flushPendingLocked(); e.isError())
            return e;
        Result<bool> tagged = d->index->anyUnsyncedUnder(boot);
        if (!tagged.isOk())
            return tagged.error();
        if (!tagged.value())
            return Done{};
        // What the sync covers: the rows recorded before it (their bytes were written before they were recorded).
        // A deferred row that comes while it runs gets a later seq, and stays to be checked after a crash.
        const qint64 below = d->index->nextSeq();
        const int fd = ::open(QFile::encodeName(d->root).constData(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return ioError(QStringLiteral("cannot open the disk cache %1").arg(d->root), errno);
        const bool synced = ::syncfs(fd) == 0;
        const int err = errno;
        ::close(fd);
        if (!synced)
            return ioError(QStringLiteral("cannot sync the disk cache %1").arg(d->root), err);
        Error e = d->changeLocked([&] { return d->index->markSynced(boot, below); });
        if (!e.isError() && ::fdatasync(d->index->walFd()) != 0)
            e = ioError(QStringLiteral("cannot sync the cache index"), errno);
        if (e.isError())
            return e.withContext(QStringLiteral("the imported blobs were written but not recorded as synced; the next start syncs them"));
        return Done{};
    });
}

/// Makes the renames and journal records up to `seq` durable (see appendedSeq). Caller holds no lock.
Error FileStore::State::syncUpTo(quint64 seq)
{
    QMutexLocker syncLock(&syncMutex);
    if (syncedSeq >= seq)
        return Error();  // another commit's sync covered ours
    quint64 target = 0;
    int fd = -1;
    {
        QMutexLocker journalLock(&journalMutex);
        target = appendedSeq;
        if (index && index->walFd() >= 0)
            fd = ::dup(index->walFd());  // the index may close meanwhile; this one stays ours
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

Error FileStore::State::openLocked()
{
    QDir dir(root);
    // Patients' images: the cache (or blob root) is its owner's alone whoever starts it and whatever the umask —
    // made 0700; one found open to every user is made 0700 too (what it gave its group came with "everyone", no
    // one's choice); one open to its group alone is the administrator's choice, and left.
    const bool made = !dir.exists();
    if (made && !dir.mkpath(QStringLiteral(".")))
        return Error(ErrorCode::Io, QStringLiteral("cannot create the cache directory %1").arg(root));
    struct stat rootStat{};
    if (::stat(QFile::encodeName(root).constData(), &rootStat) == 0 && rootStat.st_uid == ::geteuid()
        && (made ? (rootStat.st_mode & 077) != 0 : (rootStat.st_mode & S_IRWXO) != 0)) {
        const mode_t tightened = 0700;
        if (::chmod(QFile::encodeName(root).constData(), tightened) != 0)
            return ioError(QStringLiteral("cannot make the folder %1 private").arg(root), errno);
        if (!made)
            qCWarning(lcStores).noquote() << "the folder" << root << "was open to every user: now" << QString::number(tightened, 8);
    }
    // Its folders made as private as it (an admin's group kept, never every user); those found more open (an
    // older version made them 0755) lose what the root does not give — never given more.
    struct stat nowRoot{};
    const mode_t folderMode = ::stat(QFile::encodeName(root).constData(), &nowRoot) == 0 ? (nowRoot.st_mode & (0770 | S_ISGID)) | 0700 : 0700;
    for (const char *name : {kObjects, kStaging, kPacks}) {
        const QByteArray path = QFile::encodeName(root + QLatin1Char('/') + QLatin1String(name));
        if (::mkdir(path.constData(), folderMode) != 0 && errno != EEXIST)
            return ioError(QStringLiteral("cannot create the cache directory %1").arg(root + QLatin1Char('/') + QLatin1String(name)), errno);
        struct stat folder{};
        if (::stat(path.constData(), &folder) != 0 || !S_ISDIR(folder.st_mode))
            return Error(ErrorCode::Io, QStringLiteral("cannot create the cache directory %1: a file is in its place").arg(root + QLatin1Char('/') + QLatin1String(name)));
        const mode_t was = folder.st_mode & (0777 | S_ISGID), narrowed = (was & folderMode) | 0700;
        if (folder.st_uid == ::geteuid() && narrowed != was && ::chmod(path.constData(), narrowed) != 0)
            return ioError(QStringLiteral("cannot make the cache directory %1 private").arg(root + QLatin1Char('/') + QLatin1String(name)), errno);
    }
    QFileInfo rootInfo(root);
    if (!rootInfo.isWritable())
        return Error(ErrorCode::Io, QStringLiteral("the cache directory %1 is not writable").arg(root));

    Result<std::unique_ptr<DirectoryLock>> locked = DirectoryLock::acquire(root + QStringLiteral("/lock"));
    if (!locked.isOk())
        return Error(locked.error().code(), QStringLiteral("the cache %1: %2").arg(root, locked.error().message()));
    lock = locked.takeValue();

    Result<std::unique_ptr<IndexDb>> opened = IndexDb::open(root + QLatin1Char('/') + QLatin1String(IndexDb::kFileName));
    if (!opened.isOk())
        return opened.error();
    index = opened.takeValue();

    // A cache made before the index was a database: its journal's entries go into the index in one change, in
    // their use order, and are then checked like any index after a crash. The journal goes once that change is
    // on the disk; an index found made (its schema recorded) wins over a journal left beside it.
    const bool oldJournal = QFile::exists(journalPath());
    if (index->created() && oldJournal) {
        Result<QList<Entry>> old = readRecords(journalPath());
        if (!old.isOk())
            return old.error();
        Error e = changeLocked([&]() -> Error {
            for (const Entry &entry : old.value()) {
                if (Error inserted = index->insert(entry); inserted.isError())
                    return inserted;
            }
            return Error();
        });
        if (e.isError())
            return e.withContext(QStringLiteral("cannot take the cache's old index over"));
        qCInfo(lcStores) << "cache" << root << ": took" << old.value().size() << "entries over from the old journal";
    }

    // Rows recorded in memory and in the log of deferred rows, not yet in the index when the process was killed:
    // put in now (unless the index holds that version or a newer one already), then checked with the rest.
    const QString logPath = root + QLatin1Char('/') + QLatin1String(kDeferredLog);
    const bool replay = QFileInfo(logPath).size() > 0;
    if (replay) {
        Result<QList<Entry>> deferred = readRecords(logPath);
        if (!deferred.isOk())
            return deferred.error();
        Error e = changeLocked([&]() -> Error {
            for (const Entry &entry : deferred.value()) {
                Result<std::optional<Entry>> there = index->take(entry.info.key);
                if (!there.isOk())
                    return there.error();
                const bool newer = there.value() && there.value()->info.version >= entry.info.version;
                if (Error inserted = index->insert(newer ? *there.value() : entry); inserted.isError())
                    return inserted;
            }
            return Error();
        });
        if (e.isError())
            return e.withContext(QStringLiteral("cannot take the cache's deferred rows in"));
        qCInfo(lcStores) << "cache" << root << ": took" << deferred.value().size() << "deferred rows in after an interruption";
    }
    deferredLogFd = ::open(QFile::encodeName(logPath).constData(), O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (deferredLogFd < 0)
        return ioError(QStringLiteral("cannot open %1").arg(logPath), errno);

    // After a kill or a crash (the index was not closed cleanly), every row is checked against the disk: kept only
    // with its file there at the right size (its pack reaching to its end). After a clean close the index is taken
    // as it is — that is what makes a cache of millions of blobs open at once — and a file lost behind the cache's
    // back is found when it is read (bytesOf()).
    const bool check = !index->closedCleanly() || replay;  // a replayed row may have replaced one whose file stays
    QSet<QString> referenced;
    QHash<quint64, qint64> packSizes;
    QHash<quint64, QList<QPair<qint64, qint64>>> packRanges;  // pack → [offset, end) of its entries
    if (check) {
        QList<Entry> missing;
        quint64 maxVersion = 0;
        Error e = index->forEach([&](const Entry &e) {
            maxVersion = std::max(maxVersion, e.info.version);
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
            if (!there)
                missing << e;
        });
        if (e.isError())
            return e;
        nextVersion = std::max(nextVersion, maxVersion + 1);
        if (!missing.isEmpty()) {
            for (const Entry &m : missing)
                qCWarning(lcStores) << "dropping cache entry" << m.info.key << "- its file is missing or has the wrong size";
            e = changeLocked([&]() -> Error {
                for (const Entry &m : missing) {
                    if (Result<std::optional<Entry>> gone = index->take(m.info.key); !gone.isOk())
                        return gone.error();
                }
                return Error();
            });
            if (e.isError())
                return e;
        }
    } else {
        nextVersion = std::max(nextVersion, index->keptNextVersion());
    }

    // Entries committed without a sync: those of this boot reach the disk now, with one sync of the file
    // system (usually long since written back); those of an earlier boot are checked before they are served.
    if (!kernelBootId().isEmpty()) {
        Result<bool> tagged = index->anyUnsyncedUnder(kernelBootId());
        if (!tagged.isOk())
            return tagged.error();
        if (tagged.value()) {
            const qint64 below = index->nextSeq();
            const int fd = ::open(QFile::encodeName(root).constData(), O_RDONLY | O_CLOEXEC);
            const bool synced = fd >= 0 && ::syncfs(fd) == 0;
            if (fd >= 0)
                ::close(fd);
            if (synced) {
                if (Error e = changeLocked([&] { return index->markSynced(kernelBootId(), below); }); e.isError())
                    return e;
            }
        }
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
    QDir packs(root + QLatin1Char('/') + QLatin1String(kPacks));
    if (!check) {
        // After a clean close: what a put in flight at the close wrote, and a pack emptied while it still took
        // appends, are named by no row. Looked up file by file (few: packs hold the small blobs), not row by row.
        QDir objects(root + QLatin1Char('/') + QLatin1String(kObjects));
        for (const QString &name : objects.entryList(QDir::Files | QDir::Hidden | QDir::System)) {
            const std::optional<Entry> e = index->find(name.section(QLatin1Char('~'), 0, -2));
            if (!e || e->pack || QString::number(e->info.version) != name.section(QLatin1Char('~'), -1))
                objects.remove(name);
        }
        for (const QString &name : packs.entryList(QDir::Files | QDir::Hidden | QDir::System)) {
            bool numbered = false;
            const quint64 id = name.toULongLong(&numbered);
            const Result<bool> inUse = numbered ? index->packInUse(id) : Result<bool>(false);
            if (inUse.isOk() && !inUse.value())
                packs.remove(name);
        }
    }
    if (check) {
        QDir objects(root + QLatin1Char('/') + QLatin1String(kObjects));
        for (const QString &name : objects.entryList(QDir::Files | QDir::Hidden | QDir::System)) {
            if (!referenced.contains(name))
                objects.remove(name);
        }
        // Packs: those no entry uses go; in the others, the space between entries (blobs removed while a reader
        // still held them, appends a crash cut short) is given back.
        for (const QString &name : packs.entryList(QDir::Files | QDir::Hidden | QDir::System)) {
            bool numbered = false;
            const quint64 id = name.toULongLong(&numbered);
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
    }
    // No pack takes appends any more; new ones are numbered past every one there.
    for (const QString &name : packs.entryList(QDir::Files | QDir::Hidden | QDir::System)) {
        bool numbered = false;
        const quint64 id = name.toULongLong(&numbered);
        if (numbered)
            nextPackId = std::max(nextPackId, id + 1);
    }

    // In use from now on: a kill before the next clean close makes the next open check the files.
    if (Error e = index->markOpen(); e.isError())
        return e;
    if (oldJournal) {
        QFile::remove(journalPath());
        QFile::remove(journalPath() + QStringLiteral(".tmp"));
    }
    return Error();
}

} // namespace spectrum
