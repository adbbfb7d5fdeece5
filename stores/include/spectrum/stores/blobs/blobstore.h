// SPDX-License-Identifier: Apache-2.0
#pragma once
// BlobStore: one interface whatever the location of the bytes — memory, the workstation's disk, a blob server,
// a PACS (the Blob Store of the Blob Streaming paper, section 2.2.1). Every call returns a job (core/job.h):
// the caller picks Async or Sync when it starts it.
//
// Thread-safety: the job-creating methods and usage() are thread-safe; a job belongs to the thread that
// created it and reports there. Signals are emitted on the store's own thread.

#include "spectrum/core/bytes.h"
#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/resultjob.h"

#include <QDateTime>
#include <QList>
#include <QObject>

#include <atomic>
#include <memory>

namespace spectrum {

struct BlobInfo
{
    QString key;
    qint64 size = 0;
    /// Raw 32 bytes of the whole blob's SHA-256. stat() and snapshot() always carry it; query() and the commit
    /// of a blob committed with CommitOptions::deferSha256 may not yet (empty: not computed so far).
    QByteArray sha256;
    QDateTime committed;    ///< when this version was committed (UTC)
    quint64 version = 0;    ///< grows with every commit of any key in the store
    DicomIdentity dicom;    ///< invalid for blobs that are not DICOM Part 10 files
    /// The blob's hash tree (spectrum/transfer/hashtree.h: the SHA-256 of each 1 MiB leaf, one after another), which
    /// lets a reader check each leaf as it arrives. FileStore's and MemoryStore's stat() and snapshot() carry it;
    /// empty where a store has none (yet). A blob of at most one leaf has its SHA-256 as its tree.
    QByteArray tree;
};

/// Matches blobs by key prefix and by DICOM identity; empty fields match everything.
struct BlobQuery
{
    QString keyPrefix;
    QString patientId;
    QString studyInstanceUid;
    QString seriesInstanceUid;
    QString sopInstanceUid;
    int limit = -1;  ///< at most this many results; -1: all

    bool matches(const BlobInfo &info) const;
    /// The matches as a query answers them: in key order, at most `limit`.
    void arrange(QList<BlobInfo> *matches) const;
};

struct StoreUsage
{
    qint64 bytes = 0;    ///< committed bytes held
    qint64 budget = 0;   ///< bytes the store may hold; 0: no budget
    qint64 blobs = 0;
};

/// A committed blob's description and its bytes, taken together so that they always belong to one version.
struct BlobSnapshot
{
    BlobInfo info;
    ByteView bytes;
};

/// Fills in the tree of a blob of at most one leaf, whose only leaf digest is its SHA-256 (when known).
void completeTree(BlobInfo *info);

struct CommitOptions
{
    QByteArray expectedSha256;  ///< when set, a mismatch fails the commit with ErrorCode::Corrupt
    /// When set, the caller has already checked every byte against this SHA-256 (a transfer that verified the
    /// whole blob as it arrived): the store records it instead of reading the blob again to hash it.
    QByteArray verifiedSha256;
    /// When set, the caller has checked every byte against this hash tree (a pull that verified each leaf as it
    /// arrived): the store keeps it, and a deferred SHA-256 is computed when first asked for.
    QByteArray verifiedTree;
    /// When valid, the blob's DICOM identity as the caller already parsed it from these very bytes: the store
    /// indexes it instead of parsing the header again.
    DicomIdentity knownIdentity;
    /// false: the blob can be fetched again (a cache fill from an archive), so the commit does not wait for the
    /// disk. Stores that persist keep such a blob crash-safe all the same: it is never served half-written or
    /// changed (see FileStore), but an operating-system crash may lose it.
    bool durable = true;
    /// true: the SHA-256 is computed when first asked for (stat(), snapshot()) instead of at commit. For cache
    /// fills from an archive, most of which are only ever read locally: hashing every instance of a study was a
    /// third of its fetch's CPU. Stores that persist still check such a blob's bytes before they serve it
    /// after a crash, with a cheaper checksum (FileStore: XXH3-128).
    bool deferSha256 = false;
};

/// A reserved, not yet committed blob. Fill it with writeAt() (directly, or through BlobStore::write()), then
/// commit it through its store. Dropping the last reference without a commit discards it.
class BlobWriter : public ByteSink
{
public:
    explicit BlobWriter(QString key) : m_key(std::move(key)) {}
    QString key() const { return m_key; }

private:
    QString m_key;
};
using BlobWriterPtr = std::shared_ptr<BlobWriter>;

/// Carries a store's announcements from any thread: jobs hold it (shared), the store listens to it. Emitting
/// from a pool thread reaches the store through a queued connection; a destroyed store simply stops listening.
/// What nobody listens to is not announced at all: a headless fetch or a blob server commits hundreds of blobs a
/// second, and each announcement would wake the store's thread for nothing.
class StoreNotifier : public QObject
{
    Q_OBJECT
public:
    void announceCommitted(const BlobInfo &info)
    {
        if (m_commitsHeard.load(std::memory_order_acquire))
            Q_EMIT committed(info);
    }
    void announceRemoved(const QStringList &keys)
    {
        if (!keys.isEmpty() && m_removalsHeard.load(std::memory_order_acquire))
            Q_EMIT removed(keys);
    }
    /// The store says whether its signals have listeners (any thread).
    void setHeard(bool commits, bool removals)
    {
        m_commitsHeard.store(commits, std::memory_order_release);
        m_removalsHeard.store(removals, std::memory_order_release);
    }

Q_SIGNALS:
    void committed(const spectrum::BlobInfo &info);
    void removed(const QStringList &keys);

private:
    std::atomic<bool> m_commitsHeard{false};
    std::atomic<bool> m_removalsHeard{false};
};

class BlobStore : public QObject
{
    Q_OBJECT
public:
    explicit BlobStore(QObject *parent = nullptr);
    ~BlobStore() override;

    /// "memory", "file", …: the kind, for logs and the stores list.
    virtual QString kind() const = 0;
    /// Whether read() run with ExecutionPolicy::Sync may be called on any thread (a pool thread): true for the
    /// stores that read under a lock without an event loop (file, memory), false for the network's.
    virtual bool readsOnAnyThread() const { return false; }

    virtual ResultJob<BlobInfo> *stat(const QString &key) = 0;
    /// Results ordered by key.
    virtual ResultJob<QList<BlobInfo>> *query(const BlobQuery &query) = 0;
    /// Bytes [range.begin, range.end) of a committed blob. The view is not a copy where the store can avoid one
    /// (FileStore hands out a memory mapping); it stays valid even if the blob is replaced or evicted meanwhile.
    virtual ResultJob<ByteView> *read(const QString &key, ByteRange range = ByteRange::all()) = 0;
    /// The whole blob with its info, atomically (a server pins it for a client's session with this).
    virtual ResultJob<BlobSnapshot> *snapshot(const QString &key) = 0;
    /// Reserves room for a new blob (or a new version of one) of exactly `size` bytes. Readers keep seeing the
    /// committed version until commit().
    virtual ResultJob<BlobWriterPtr> *reserve(const QString &key, qint64 size) = 0;
    /// Writes [offset, offset + data.size()) of a reserved blob.
    ResultJob<Done> *write(const BlobWriterPtr &writer, qint64 offset, const ByteView &data);
    /// Makes a reserved blob visible, atomically: readers see the old version or the new one, never a mix.
    virtual ResultJob<BlobInfo> *commit(const BlobWriterPtr &writer, const CommitOptions &options = CommitOptions()) = 0;
    virtual ResultJob<Done> *remove(const QString &key) = 0;

    virtual StoreUsage usage() const = 0;

    /// Keys are flat names of letters, digits, '.', '_' and '-' (DICOM UIDs fit), 1 to 200 characters, not
    /// starting with '.', never containing "..": a key can never name anything outside its store.
    static Error validateKey(const QString &key);

Q_SIGNALS:
    void blobCommitted(const spectrum::BlobInfo &info);
    /// Removed by remove() or evicted under the budget.
    void blobRemoved(const QString &key);

protected:
    /// For implementations: hand this to jobs; what they announce arrives as the signals above.
    std::shared_ptr<StoreNotifier> notifier() const { return m_notifier; }

    /// Tell the notifier whether blobCommitted/blobRemoved have listeners. Overriders call these too.
    void connectNotify(const QMetaMethod &signal) override;
    void disconnectNotify(const QMetaMethod &signal) override;

private:
    std::shared_ptr<StoreNotifier> m_notifier;  // its queued connections deliver on the store's thread
    std::atomic<int> m_commitListeners{0};       // connections to blobCommitted, from connectNotify()
    std::atomic<int> m_removalListeners{0};
};

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::BlobInfo)
