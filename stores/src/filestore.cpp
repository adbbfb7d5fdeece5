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
#include <QMutex>
#include <QThread>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

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
};

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
    const bool digests = (e->info.sha256.isEmpty() || e->info.sha256.size() == 32) && (e->check.isEmpty() || e->check.size() == 16)
        && !(e->info.sha256.isEmpty() && e->check.isEmpty());
    return okVersion && okSize && digests && e->info.size >= 0 && BlobStore::validateKey(e->info.key).code() == ErrorCode::None;
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
    /// the journal, then off the disk. Caller holds journalMutex, not mutex.
    QStringList evictJournalLocked(const QString &keep)
    {
        QList<Entry> victims;
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
        for (const Entry &v : victims)
            QFile::remove(objectPath(v.info.key, v.info.version));
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
        entries.remove(key);
        QFile::remove(objectPath(key, version));
        lock.unlock();
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
        const QString path = objectPath(key, e->info.version);
        bool same = false;
        {
            QFile f(path);
            if (f.open(QIODevice::ReadOnly) && f.size() == e->info.size) {
                const uchar *p = e->info.size > 0 ? f.map(0, e->info.size) : nullptr;
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
        entries.remove(key);
        QFile::remove(path);  // its record goes at the next open, which finds no file
        return Error(ErrorCode::NotFound, QStringLiteral("blob '%1' was lost from the disk cache in a system crash; fetch it again").arg(key));
    }
};

Error FileStore::State::openLocked()
{
    QDir dir(root);
    if (!dir.mkpath(QLatin1String(kObjects)) || !dir.mkpath(QLatin1String(kStaging)))
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
    QFile journal(journalPath());
    if (journal.exists()) {
        if (!journal.open(QIODevice::ReadOnly))
            return Error(ErrorCode::Io, QStringLiteral("cannot read the cache index: %1").arg(journal.errorString()));
        int lineNo = 0, skipped = 0;
        while (!journal.atEnd()) {
            const QByteArray line = journal.readLine();
            ++lineNo;
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
    }

    // Keep only records whose file is there with the right size, in use order.
    QList<Entry> alive;
    QSet<QString> referenced;
    for (const QString &key : replayed.order()) {
        const Entry &e = *replayed.find(key);
        const QString path = objectPath(e.info.key, e.info.version);
        const QFileInfo fi(path);
        if (fi.exists() && fi.size() == e.info.size) {
            alive << e;
            referenced.insert(fi.fileName());
        } else {
            qCWarning(lcStores) << "dropping cache entry" << e.info.key << "- its file is missing or has the wrong size";
        }
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
    for (const Entry &e : alive) {
        entries.insert(e.info.key, e);
        total += e.info.size;
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
    return compactJournalLocked();
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
        Result<ByteView> bytes = mapLocked(d->objectPath(key, info.version), key, 0, info.size);
        lock.unlock();
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
        Result<ByteView> bytes = mapLocked(d->objectPath(key, version), key, begin, end);
        lock.unlock();
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
        Result<ByteView> bytes = mapLocked(d->objectPath(key, info.version), key, 0, info.size);
        lock.unlock();
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
    if (Error e = validateKey(key); e.isError())
        return e;
    if (size < 0)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("negative size %1").arg(size));
    quint64 version = 0;
    {
        QMutexLocker lock(&d->mutex);
        if (d->closed)
            return d->closedError();
        if (d->budget > 0 && size > d->budget) {
            return Error(ErrorCode::DiskFull, QStringLiteral("blob '%1' of %2 bytes exceeds the cache budget of %3 bytes")
                                                  .arg(key).arg(size).arg(d->budget));
        }
        version = d->nextVersion++;
    }
    struct statvfs disk {};
    if (::statvfs(QFile::encodeName(d->root).constData(), &disk) == 0 && qint64(disk.f_bavail) * qint64(disk.f_frsize) < size) {
        return Error(ErrorCode::DiskFull, QStringLiteral("blob '%1' needs %2 bytes, the disk of %3 has %4 free")
                                              .arg(key).arg(size).arg(d->root).arg(qint64(disk.f_bavail) * qint64(disk.f_frsize)));
    }
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
    entry.check = check.isEmpty() ? xxh3Digest(content.data(), content.size()) : check;
    if (hashSha256) {
        entry.info.sha256 = Sha256::hash(content.data(), content.size());
        Sha256::releaseThreadState();  // usually a pool thread, which may outlive the program's end
    } else {
        entry.info.sha256 = options.verifiedSha256;  // empty when deferred
    }
    if (!options.expectedSha256.isEmpty() && options.expectedSha256 != entry.info.sha256)
        return Error(ErrorCode::Corrupt, QStringLiteral("blob '%1' does not match its expected SHA-256").arg(w->key()));
    if (options.knownIdentity.isValid())
        entry.info.dicom = options.knownIdentity;
    else if (Result<DicomIdentity> id = readDicomIdentity(content); id.isOk())
        entry.info.dicom = id.value();
    else
        qCWarning(lcStores) << "blob" << w->key() << "looks like DICOM but its header is unreadable:" << id.error().toString();

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
        if (!w->inPlace && ::rename(QFile::encodeName(w->file.fileName()).constData(), QFile::encodeName(target).constData()) != 0)
            return ioError(QStringLiteral("cannot move blob '%1' into the cache").arg(w->key()), errno);
        w->committed = true;  // the file is the entry's now; the writer must not delete anything
        // Made durable below, together with the commits that run meanwhile (group commit).
        if (Error e = d->appendLocked({putRecord(entry)}, false, &seq); e.isError()) {
            QFile::remove(target);  // without its record the file would be an orphan: not committed
            return e.withContext(QStringLiteral("blob '%1' not committed").arg(w->key()));
        }
        QString oldPath;
        {
            QMutexLocker lock(&d->mutex);
            if (const Entry *old = d->entries.find(w->key())) {
                d->total -= old->info.size;
                oldPath = d->objectPath(old->info.key, old->info.version);
            }
            d->entries.insert(w->key(), entry);
            d->total += entry.info.size;
        }
        if (!oldPath.isEmpty())
            QFile::remove(oldPath);  // readers that mapped it keep their mapping
        if (w->progress)
            w->progress->remove();
        evicted = d->evictJournalLocked(w->key());
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
            QString path;
            {
                QMutexLocker lock(&d->mutex);
                const Entry *e = d->entries.find(key);
                if (!e)
                    return Error(ErrorCode::NotFound, QStringLiteral("no blob '%1' in the disk cache").arg(key));
                path = d->objectPath(key, e->info.version);
            }
            if (Error err = d->appendLocked({QJsonObject{{QStringLiteral("op"), QStringLiteral("del")},
                                                         {QStringLiteral("key"), key}}}); err.isError())
                return err;
            {
                QMutexLocker lock(&d->mutex);
                d->total -= d->entries.find(key)->info.size;
                d->entries.remove(key);
            }
            QFile::remove(path);
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
