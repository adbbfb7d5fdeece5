// FileStore's way out: stat, query, read and snapshot. A blob of its own is mapped; a packed one is copied out
// before its blocks can be given back; a whole blob is checked against its XXH3 before anyone uses it.

#include "filestore/state.h"
#include "queryindex.h"

#include "spectrum/core/logging.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>

#include <cerrno>
#include "spectrum/transfer/hashtree.h"
#include "spectrum/transfer/sha256.h"
#include "spectrum/transfer/xxh3.h"

#include <algorithm>

#include <fcntl.h>
#include <unistd.h>

namespace spectrum {

using namespace cachedisk;

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
    // Answered at once from the index, unless the SHA-256 is still to be computed: that reads the blob, on the
    // pool. (The hash tree of an entry from before trees waits for snapshot(): stat does not read blobs for it.)
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

bool FileStore::digested(const BlobInfo &info)
{
    return !info.sha256.isEmpty() && hashtree::fits(info.tree, info.size);
}

Result<BlobInfo> FileStore::withDigest(const std::shared_ptr<State> &d, const BlobInfo &info, const ByteView &bytes)
{
    if (digested(info))
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
    const bool needTree = !hashtree::fits(out.tree, out.size);
    if (out.sha256.isEmpty() && needTree) {
        const hashtree::Digests digests = hashtree::sha256AndLeaves(bytes.data(), bytes.size());
        out.sha256 = digests.sha256;
        out.tree = digests.leaves;
    } else if (out.sha256.isEmpty()) {
        out.sha256 = Sha256::hash(bytes.data(), bytes.size());  // a fill checked by its tree: only the SHA-256 is left
    } else {
        out.tree = hashtree::leaves(bytes.data(), bytes.size());  // an entry from before trees
    }
    Sha256::releaseThreadState();
    QMutexLocker journalLock(&d->journalMutex);
    QJsonObject record;
    {
        QMutexLocker lock(&d->mutex);
        Entry *e = d->entries.find(info.key);
        if (d->closed || !e || e->info.version != info.version || digested(e->info))
            return out;  // replaced, removed, or digested by someone else meanwhile
        e->info.sha256 = out.sha256;
        e->info.tree = out.tree;
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
            out = matchingBlobs(d->entries, query);
        }
        query.arrange(&out);
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

} // namespace spectrum
