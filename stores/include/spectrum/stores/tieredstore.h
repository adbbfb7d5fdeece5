#pragma once
// TieredStore: memory → workstation disk → remote, the Blob Streaming paper's hierarchy behind one BlobStore.
// A read is served by the nearest tier holding the blob; a remote read lands in the disk cache once (straight
// into its reservation, checked against the remote digest) and in memory when it fits, so the next read is
// local. Writes go to disk and push through to the remote. Each tier keeps its own budget.

#include "spectrum/stores/filestore.h"
#include "spectrum/stores/memorystore.h"
#include "spectrum/stores/remoteblobstore.h"

#include <QMutex>

namespace spectrum {

/// The identity a resumable disk reservation of a remote blob is kept under (its version and digest): a
/// reservation made for another version starts over.
QString resumeIdentity(const RemoteBlobInfo &blob);

/// Fetches `key` from `remote` into `disk`, straight from the wire into a resumable reservation — interrupted,
/// even by a kill, the next call continues where the verified ranges on record end — and commits it only against
/// the remote's SHA-256 (`options` adds the rest: durable or not…). `watch` sees the pull job as it starts
/// (progress). Blocking: for a worker thread or a command-line tool. This is how TieredStore fills its disk tier.
Result<PullResult> fillDiskFromRemote(FileStore &disk, RemoteBlobStore &remote, const QString &key, CommitOptions options = CommitOptions(),
                                      const std::function<void(Job *)> &watch = {});

class TieredStore : public BlobStore
{
    Q_OBJECT
public:
    /// The tiers are not owned and must outlive the store and its jobs. `remote` may be null.
    /// Blobs larger than `memoryLimitPerBlob` are not kept in memory.
    TieredStore(MemoryStore *memory, FileStore *disk, RemoteBlobStore *remote, qint64 memoryLimitPerBlob = 64 << 20,
                QObject *parent = nullptr);
    ~TieredStore() override;

    QString kind() const override { return QStringLiteral("tiered"); }

    ResultJob<BlobInfo> *stat(const QString &key) override;
    /// Local and remote answers merged by key (the local description wins: it is what a read returns).
    ResultJob<QList<BlobInfo>> *query(const BlobQuery &query) override;
    ResultJob<ByteView> *read(const QString &key, ByteRange range = ByteRange::all()) override;
    ResultJob<BlobSnapshot> *snapshot(const QString &key) override;
    ResultJob<BlobWriterPtr> *reserve(const QString &key, qint64 size) override;
    /// Commits to disk, then pushes to the remote (if any); fails if either fails.
    ResultJob<BlobInfo> *commit(const BlobWriterPtr &writer, const CommitOptions &options = CommitOptions()) override;
    ResultJob<Done> *remove(const QString &key) override;
    /// The disk tier's usage.
    StoreUsage usage() const override;

    struct Shared;

private:
    std::shared_ptr<Shared> d;
};

} // namespace spectrum
