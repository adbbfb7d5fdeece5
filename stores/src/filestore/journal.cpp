// FileStore's journal: one JSON record per line (put, del), appended with group commit, compacted into one record
// per entry; replayed at open, where everything it does not name is removed (docs/CACHE.md).

#include "filestore/state.h"

#include "spectrum/core/bootid.h"
#include "spectrum/core/logging.h"
#include "spectrum/transfer/hashtree.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>

#include <cerrno>
#include <algorithm>

#include <fcntl.h>
#include <unistd.h>

namespace spectrum {

using namespace cachedisk;

namespace cachedisk {

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
    // A blob of one leaf has its SHA-256 as its tree: only longer trees are written.
    if (hashtree::leafCount(e.info.size) > 1 && hashtree::fits(e.info.tree, e.info.size))
        o.insert(QStringLiteral("tree"), QString::fromLatin1(e.info.tree.toBase64()));
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
    // A tree that does not fit the size is not trusted: it is computed again when asked for.
    e->info.tree = QByteArray::fromBase64(o.value(QStringLiteral("tree")).toString().toLatin1());
    if (!hashtree::fits(e->info.tree, e->info.size))
        e->info.tree.clear();
    completeTree(&e->info);
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

} // namespace cachedisk

ResultJob<Done> *FileStore::syncToDisk()
{
    return makeJob<Done>([d = d](const CancelToken &) -> Result<Done> {
        const QString boot = kernelBootId();
        QMutexLocker journalLock(&d->journalMutex);  // no commit appends meanwhile: what is tagged is written
        if (d->closed)
            return d->closedError();
        if (boot.isEmpty())
            return Done{};  // without a boot ID every commit was synced
        bool any = false;
        {
            QMutexLocker lock(&d->mutex);
            for (const QString &key : d->entries.order()) {
                if (d->entries.find(key)->unsyncedBoot == boot) {
                    any = true;
                    break;
                }
            }
        }
        if (!any)
            return Done{};
        const int fd = ::open(QFile::encodeName(d->root).constData(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return ioError(QStringLiteral("cannot open the disk cache %1").arg(d->root), errno);
        const bool synced = ::syncfs(fd) == 0;
        const int err = errno;
        ::close(fd);
        if (!synced)
            return ioError(QStringLiteral("cannot sync the disk cache %1").arg(d->root), err);
        QList<QJsonObject> records;
        {
            QMutexLocker lock(&d->mutex);
            for (const QString &key : d->entries.order()) {
                Entry *e = d->entries.find(key);
                if (e->unsyncedBoot == boot) {
                    e->unsyncedBoot.clear();
                    records << putRecord(*e);
                }
            }
        }
        if (Error e = d->appendLocked(records, true); e.isError())
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
Error FileStore::State::appendLocked(const QList<QJsonObject> &records, bool sync, quint64 *seq)
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
Error FileStore::State::compactJournalLocked()
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

} // namespace spectrum
