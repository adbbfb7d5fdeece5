#include "spectrum/stores/tieredstore.h"

#include <map>

namespace spectrum {

struct TieredStore::Shared
{
    MemoryStore *memory;
    FileStore *disk;
    RemoteBlobStore *remote;
    qint64 memoryLimitPerBlob;
    QMutex fetchMutex;                                  // guards fetchLocks
    std::map<QString, std::weak_ptr<QMutex>> fetchLocks; // one fetch per key at a time; others wait, then read disk

    std::shared_ptr<QMutex> fetchLock(const QString &key)
    {
        QMutexLocker lock(&fetchMutex);
        std::shared_ptr<QMutex> m = fetchLocks[key].lock();
        if (!m) {
            m = std::make_shared<QMutex>();
            fetchLocks[key] = m;
        }
        for (auto it = fetchLocks.begin(); it != fetchLocks.end();)
            it = it->second.expired() ? fetchLocks.erase(it) : std::next(it);
        return m;
    }

    /// Copies a blob into memory if it is small enough (a cache: failures are not errors).
    void keepInMemory(const QString &key, const ByteView &bytes)
    {
        if (bytes.size() > memoryLimitPerBlob)
            return;
        Result<BlobWriterPtr> w = runSync(memory->reserve(key, bytes.size()));
        if (!w.isOk() || w.value()->writeAt(0, bytes.data(), bytes.size()).isError())
            return;
        runSync(memory->commit(w.value()));
    }

    /// Makes sure the disk tier holds `key`, fetching it from the remote once if needed.
    Error ensureOnDisk(const QString &key)
    {
        if (runSync(disk->stat(key)).isOk())
            return Error();
        if (!remote)
            return Error(ErrorCode::NotFound, QStringLiteral("no blob '%1' here, and no remote store is configured").arg(key));
        std::shared_ptr<QMutex> m = fetchLock(key);
        QMutexLocker lock(m.get());
        if (runSync(disk->stat(key)).isOk())
            return Error();  // another reader fetched it while we waited
        return fillDiskFromRemote(*disk, *remote, key).error();
    }
};

QString resumeIdentity(const RemoteBlobInfo &blob)
{
    return blob.version + QLatin1Char(' ') + QString::fromLatin1(blob.sha256.toHex());
}

Result<PullResult> fillDiskFromRemote(FileStore &disk, RemoteBlobStore &remote, const QString &key, CommitOptions options,
                                      const std::function<void(Job *)> &watch)
{
    BlobWriterPtr writer;
    QByteArray expected;
    auto *job = remote.pull(key, [&](const RemoteBlobInfo &blob, qint64, qint64) -> Result<ByteSink *> {
        // Resumable: after an interruption (even a restart) only what is missing comes again.
        Result<BlobWriterPtr> w = runSync(disk.reserveResumable(key, blob.size, resumeIdentity(blob)));
        if (!w.isOk())
            return w.error();
        writer = w.value();
        expected = blob.sha256;
        return writer.get();
    });
    if (watch)
        watch(job);
    Result<PullResult> pulled = runSync(job);
    if (!pulled.isOk())
        return pulled.error();
    options.expectedSha256 = expected;
    if (pulled.value().verified)
        options.verifiedSha256 = expected;  // checked on the way in: not hashed a second time
    if (Error e = runSync(disk.commit(writer, options)).error(); e.isError())
        return e;
    return pulled;
}

TieredStore::TieredStore(MemoryStore *memory, FileStore *disk, RemoteBlobStore *remote, qint64 memoryLimitPerBlob, QObject *parent)
    : BlobStore(parent), d(std::make_shared<Shared>())
{
    d->memory = memory;
    d->disk = disk;
    d->remote = remote;
    d->memoryLimitPerBlob = memoryLimitPerBlob;
    for (BlobStore *tier : {static_cast<BlobStore *>(memory), static_cast<BlobStore *>(disk), static_cast<BlobStore *>(remote)}) {
        if (tier)
            connect(tier, &BlobStore::blobCommitted, this, &BlobStore::blobCommitted);
    }
}

TieredStore::~TieredStore() = default;

// Every operation runs on the pool and drives the tiers synchronously there: blocking code, one thread per
// operation, the caller's thread never waits.

ResultJob<BlobInfo> *TieredStore::stat(const QString &key)
{
    return makeJob<BlobInfo>([d = d, key](const CancelToken &) -> Result<BlobInfo> {
        Result<BlobInfo> local = runSync(d->disk->stat(key));
        if (local.isOk() || !d->remote || local.error().code() != ErrorCode::NotFound)
            return local;
        return runSync(d->remote->stat(key));
    });
}

ResultJob<QList<BlobInfo>> *TieredStore::query(const BlobQuery &query)
{
    return makeJob<QList<BlobInfo>>([d = d, query](const CancelToken &) -> Result<QList<BlobInfo>> {
        Result<QList<BlobInfo>> local = runSync(d->disk->query(query));
        if (!local.isOk())
            return local;
        if (!d->remote)
            return local;
        Result<QList<BlobInfo>> remote = runSync(d->remote->query(query));
        if (!remote.isOk())
            return remote.error().withContext(QStringLiteral("remote store"));
        std::map<QString, BlobInfo> merged;
        for (const BlobInfo &b : remote.value())
            merged[b.key] = b;
        for (const BlobInfo &b : local.value())
            merged[b.key] = b;
        QList<BlobInfo> out;
        for (const auto &[key, info] : merged) {
            if (query.limit >= 0 && out.size() >= query.limit)
                break;
            out << info;
        }
        return out;
    });
}

ResultJob<ByteView> *TieredStore::read(const QString &key, ByteRange range)
{
    return makeJob<ByteView>([d = d, key, range](const CancelToken &) -> Result<ByteView> {
        Result<ByteView> fromMemory = runSync(d->memory->read(key, range));
        if (fromMemory.isOk() || fromMemory.error().code() != ErrorCode::NotFound)
            return fromMemory;
        if (Error e = d->ensureOnDisk(key); e.isError())
            return e;
        Result<ByteView> whole = runSync(d->disk->read(key));
        if (!whole.isOk())
            return whole;
        d->keepInMemory(key, whole.value());
        qint64 b = 0, e = 0;
        if (Error err = range.resolve(whole.value().size(), &b, &e); err.isError())
            return err.withContext(key);
        return whole.value().mid(b, e - b);
    });
}

ResultJob<BlobSnapshot> *TieredStore::snapshot(const QString &key)
{
    return makeJob<BlobSnapshot>([d = d, key](const CancelToken &) -> Result<BlobSnapshot> {
        if (Error e = d->ensureOnDisk(key); e.isError())
            return e;
        return runSync(d->disk->snapshot(key));
    });
}

ResultJob<BlobWriterPtr> *TieredStore::reserve(const QString &key, qint64 size)
{
    return d->disk->reserve(key, size);
}

ResultJob<BlobInfo> *TieredStore::commit(const BlobWriterPtr &writer, const CommitOptions &options)
{
    return makeJob<BlobInfo>([d = d, writer, options](const CancelToken &) -> Result<BlobInfo> {
        Result<BlobInfo> local = runSync(d->disk->commit(writer, options));
        if (!local.isOk() || !d->remote)
            return local;
        Result<ByteView> bytes = runSync(d->disk->read(local.value().key));
        if (!bytes.isOk())
            return bytes.error();
        // Push through: the same bytes to the remote, checked against the local digest.
        Result<BlobWriterPtr> rw = runSync(d->remote->reserve(local.value().key, bytes.value().size()));
        if (!rw.isOk())
            return rw.error();
        if (Error e = rw.value()->writeAt(0, bytes.value().data(), bytes.value().size()); e.isError())
            return e;
        CommitOptions remoteOptions;
        remoteOptions.expectedSha256 = local.value().sha256;
        Result<BlobInfo> remote = runSync(d->remote->commit(rw.value(), remoteOptions));
        if (!remote.isOk())
            return remote.error().withContext(QStringLiteral("stored locally, but not on the remote store"));
        return local;
    });
}

ResultJob<Done> *TieredStore::remove(const QString &key)
{
    return makeJob<Done>([d = d, key](const CancelToken &) -> Result<Done> {
        bool found = false;
        for (BlobStore *tier : {static_cast<BlobStore *>(d->memory), static_cast<BlobStore *>(d->disk), static_cast<BlobStore *>(d->remote)}) {
            if (!tier)
                continue;
            Result<Done> r = runSync(tier->remove(key));
            if (r.isOk())
                found = true;
            else if (r.error().code() != ErrorCode::NotFound)
                return r.error();
        }
        if (!found)
            return Error(ErrorCode::NotFound, QStringLiteral("no blob '%1' in any tier").arg(key));
        return Done{};
    });
}

StoreUsage TieredStore::usage() const
{
    return d->disk->usage();
}

} // namespace spectrum
