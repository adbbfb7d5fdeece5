// SPDX-License-Identifier: Apache-2.0
// FileStore's way out: stat, query, read and snapshot. A blob of its own is mapped; a packed one is copied out
// before its blocks can be given back; a whole blob is checked against its XXH3 before anyone uses it.

#include "blobs/filestore/state.h"

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

Error lostFile(const QString &key)
{
    return Error(ErrorCode::NotFound, QStringLiteral("blob '%1' is missing from the disk cache (its file was removed or cut short "
                                                     "behind the cache's back); fetch it again").arg(key));
}

/// Maps [begin, end) of a blob's file of `size` bytes. Caller holds the index lock (so eviction cannot race the
/// open). A file gone or of another size is NotFound (lostFile()): a mapping past its end would crash the reader.
Result<ByteView> mapLocked(const QString &path, const QString &key, qint64 size, qint64 begin, qint64 end)
{
    auto file = std::make_shared<QFile>(path);
    if (!file->open(QIODevice::ReadOnly)) {
        if (file->error() == QFileDevice::OpenError && !QFile::exists(path))
            return lostFile(key);
        return Error(ErrorCode::Io, QStringLiteral("cannot open blob '%1': %2").arg(key, file->errorString()));
    }
    if (file->size() != size)
        return lostFile(key);
    if (begin == end)
        return ByteView();
    uchar *p = file->map(begin, end - begin);
    if (!p)
        return Error(ErrorCode::Io, QStringLiteral("cannot map blob '%1': %2").arg(key, file->errorString()));
    return ByteView(reinterpret_cast<const char *>(p), end - begin, file);  // the QFile keeps the mapping
}

} // namespace

Result<ByteView> FileStore::State::bytesOf(const Entry &e, qint64 begin, qint64 end, QMutexLocker<QMutex> &lock)
{
    if (!e.pack) {
        Result<ByteView> mapped = mapLocked(objectPath(e.info.key, e.info.version), e.info.key, e.info.size, begin, end);
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
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? lostFile(key) : ioError(QStringLiteral("cannot open blob '%1'").arg(key), errno);
    if (begin == end) {
        ::close(fd);
        return ByteView();
    }
    QByteArray bytes(end - begin, Qt::Uninitialized);
    qint64 done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::pread(fd, bytes.data() + done, size_t(bytes.size() - done), off_t(from + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int err = errno;
            ::close(fd);
            return n == 0 ? lostFile(key) : ioError(QStringLiteral("cannot read blob '%1'").arg(key), err);  // 0: the pack was cut short
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
        const std::optional<Entry> e = d->closed ? std::nullopt : d->findLocked(key);
        digestPending = e && e->info.sha256.isEmpty();
    }
    return makeJob<BlobInfo>([d = d, key](const CancelToken &) -> Result<BlobInfo> {
        QMutexLocker lock(&d->mutex);
        if (d->closed)
            return d->closedError();
        const std::optional<Entry> e = d->findLocked(key);
        if (!e)
            return Error(ErrorCode::NotFound, QStringLiteral("no blob '%1' in the disk cache").arg(key));
        const BlobInfo info = e->info;
        if (!info.sha256.isEmpty())
            return info;
        Result<ByteView> bytes = d->bytesOf(*e, 0, info.size, lock);
        if (!bytes.isOk()) {
            if (bytes.error().code() == ErrorCode::NotFound)
                d->dropDamaged(key, info.version);
            return bytes.error();
        }
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
        if (const std::optional<Entry> e = d->closed ? std::nullopt : d->findLocked(info.key); e && e->info.version == info.version)
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
    if (d->closed)
        return out;
    // Not synced: if this change is lost the digest is simply computed again.
    Error err = d->changeLocked([&]() -> Error {
        std::optional<Entry> e = d->index->find(info.key);
        if (!e || e->info.version != info.version || digested(e->info))
            return Error();  // replaced, removed, or digested by someone else meanwhile
        e->info.sha256 = out.sha256;
        e->info.tree = out.tree;
        return d->index->updateDescription(*e);
    });
    if (err.isError())
        qCWarning(lcStores) << "the SHA-256 of" << info.key << "was not recorded:" << err.toString();
    return out;
}

ResultJob<QList<BlobInfo>> *FileStore::query(const BlobQuery &query)
{
    return makeJob<QList<BlobInfo>>([d = d, query](const CancelToken &) -> Result<QList<BlobInfo>> {
        QList<BlobInfo> out;
        if (Error e = d->flushPendingFor(); e.isError())
            return e;
        {
            QMutexLocker lock(&d->mutex);
            if (d->closed)
                return d->closedError();
            Result<QList<BlobInfo>> found = d->index->matching(query);
            if (!found.isOk())
                return found.error();
            out = found.takeValue();
        }
        query.arrange(&out);
        return out;
    });
}

ResultJob<QList<StudySummary>> *FileStore::studies(const DicomQuery &query)
{
    return makeJob<QList<StudySummary>>([d = d, query](const CancelToken &) -> Result<QList<StudySummary>> {
        if (Error e = d->flushPendingFor(); e.isError())
            return e;
        QMutexLocker lock(&d->mutex);
        if (d->closed)
            return d->closedError();
        return d->index->studies(query);
    });
}

ResultJob<ByteView> *FileStore::read(const QString &key, ByteRange range)
{
    return makeJob<ByteView>([d = d, key, range](const CancelToken &) -> Result<ByteView> {
        // Opened under the lock so eviction cannot delete the file in between; once open (and mapped) the
        // bytes stay readable even if the file is unlinked later.
        QMutexLocker lock(&d->mutex);
        Result<Entry> e = d->use(key, lock);
        if (!e.isOk())
            return e.error();
        qint64 begin = 0, end = 0;
        if (Error err = range.resolve(e.value().info.size, &begin, &end); err.isError())
            return err.withContext(key);
        const QByteArray check = e.value().check;
        const quint64 version = e.value().info.version;
        const qint64 size = e.value().info.size;
        Result<ByteView> bytes = d->bytesOf(e.value(), begin, end, lock);
        if (!bytes.isOk() && bytes.error().code() == ErrorCode::NotFound)
            d->dropDamaged(key, version);
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
        Result<Entry> e = d->use(key, lock);
        if (!e.isOk())
            return e.error();
        const BlobInfo info = e.value().info;
        Result<ByteView> bytes = d->bytesOf(e.value(), 0, info.size, lock);
        if (!bytes.isOk()) {
            if (bytes.error().code() == ErrorCode::NotFound)
                d->dropDamaged(key, info.version);
            return bytes.error();
        }
        Result<BlobInfo> digested = withDigest(d, info, bytes.value());
        if (!digested.isOk())
            return digested.error();
        return BlobSnapshot{digested.value(), bytes.value()};
    });
}

} // namespace spectrum
