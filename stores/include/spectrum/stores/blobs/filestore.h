// SPDX-License-Identifier: Apache-2.0
#pragma once
// FileStore: the workstation's disk cache. Blobs are files in one directory (small whole ones share pack files),
// found through an index that survives restarts; commits are atomic; reads of files are memory mappings, not
// copies; least recently used blobs are evicted to stay under a byte budget.
//
// On disk, under the root:
//   objects/<key>~<version>   committed blobs (a new version never overwrites an old one in place), and whole
//                            blobs being written by put()/importFile() under the name they will have
//   packs/<n>                whole blobs of up to 4 MiB stored by put() (the instances of a fetch), appended one
//                            after another on 4 KiB boundaries, up to 64 MiB per pack
//   staging/<key>~<version>.part   reserved blobs being written; removed at open (an interrupted write is never
//                            served), unless a resumable reservation's record staging/<key>.resume keeps it
//   index.sqlite             the index (SQLite, with its -wal and -shm): a row per blob, and the counts per study and
//                            series that study lists are answered from (caches from before it had a `journal` of
//                            JSON lines instead, taken over at their first open)
//   lock                     flock()ed while a process has the store open (the kernel lets go when it ends)
//
// Commit order — write the file, fsync it, rename it into objects/ (a staging file), fsync the directory, commit
// the index's row and sync its log, then delete the previous version — means that after a crash at any point the
// store reopens to either the old or the new version of a blob, complete, and never a half-written one: only the
// row makes a file an entry. An open after a kill or crash (the index was not marked closed cleanly) deletes the
// files that no row names and drops the rows whose file is missing or has the wrong size. An open after a clean
// close reads neither files nor rows — a cache of a million instances opens in milliseconds — and a file lost
// behind the cache's back meanwhile is found when first read: NotFound, the entry dropped.
//
// Packs: a study is hundreds of instances of half a megabyte, and a file each cost more than writing their bytes
// (a 300-instance fetch spent 100 ms of CPU creating 300 files on ext4 just after 300 others were deleted). A
// packed blob's record names its pack and offset. When it goes (eviction, removal, a new version), the blocks it
// took are punched out of the pack at once, so the disk holds what the budget says; a pack is deleted once no
// entry is in it and it takes no more appends (full, or written before the last open). An append a crash cut
// short is dead space that the next open gives back; a pack shorter than a record says drops that record. Packed
// blobs are read by copy, not mapped: a mapping would show the zeros of a punched hole if its blob were evicted
// while someone still held the view.
//
// A commit with CommitOptions::durable false (blobs that can be fetched again) skips the syncs: its row
// carries the kernel's boot ID instead. A killed process loses nothing the kernel already holds, so within the
// same boot such an entry is as good as a synced one; after an operating-system crash or power loss (another
// boot ID) its bytes are checked against their checksum before they are first served, and the entry is dropped
// if they differ. The next open in the same boot syncs the file system and removes the tags.
//
// Every entry carries an XXH3-128 checksum of its bytes (column "xxh3", tens of GB/s) besides its SHA-256.
// A blob committed with CommitOptions::deferSha256 gets its SHA-256 when stat() or snapshot() first asks for it:
// the bytes are then checked against the checksum, hashed, and the digest is recorded; bytes that changed on
// the disk meanwhile drop the entry with ErrorCode::Corrupt (fetch it again).

#include "spectrum/core/dicomquery.h"
#include "spectrum/stores/blobs/blobstore.h"
#include "spectrum/stores/reading/studycatalog.h"

namespace spectrum {

class FileStore : public BlobStore
{
    Q_OBJECT
public:
    /// Opens (creating if needed) the store at `root`. Blocking: opens the index (after a kill or crash, checks
    /// it against the files and cleans up). ErrorCode::Busy when another process has it open; Io when the directory is not writable.
    /// `budgetBytes` 0: no budget.
    static Result<std::unique_ptr<FileStore>> open(const QString &root, qint64 budgetBytes);
    /// The same as a job: the index is opened on the pool, and the store handed back belongs to the thread
    /// that started the job (its signals arrive there). For callers that must not block, like the GUI.
    static ResultJob<std::shared_ptr<FileStore>> *openJob(const QString &root, qint64 budgetBytes);
    ~FileStore() override;

    QString kind() const override { return QStringLiteral("file"); }
    bool readsOnAnyThread() const override { return true; }
    QString root() const;

    ResultJob<BlobInfo> *stat(const QString &key) override;
    ResultJob<QList<BlobInfo>> *query(const BlobQuery &query) override;
    ResultJob<ByteView> *read(const QString &key, ByteRange range = ByteRange::all()) override;
    ResultJob<BlobSnapshot> *snapshot(const QString &key) override;
    ResultJob<BlobWriterPtr> *reserve(const QString &key, qint64 size) override;
    ResultJob<BlobInfo> *commit(const BlobWriterPtr &writer, const CommitOptions &options = CommitOptions()) override;
    ResultJob<Done> *remove(const QString &key) override;
    StoreUsage usage() const override;

    /// Like reserve(), but the reservation survives an interruption: its staging file and a record of the
    /// ranges safely received stay on disk (also across a restart), and reserving the same key with the same
    /// `identity` (say the remote version and digest) continues it — completedRanges() tells what is there.
    /// A different identity starts over.
    ResultJob<BlobWriterPtr> *reserveResumable(const QString &key, qint64 size, const QString &identity);
    /// Commits the file at `path` as `key`, copied inside the kernel (copy_file_range), never through our memory
    /// whole; `path` is removed once the blob is committed. For instances that arrived as files (DIMSE).
    ResultJob<BlobInfo> *importFile(const QString &key, const QString &path, const CommitOptions &options = CommitOptions());
    /// Makes every blob committed without a sync (CommitOptions::durable false) in this boot durable at once: one
    /// sync of the file system, then their journal records without the tag, synced. For bulk imports, which commit
    /// thousands of small files: one sync at the end instead of one per file; what a kill interrupts before it is
    /// kept all the same (the next open syncs), and what a system crash interrupts is checked before it is served.
    ResultJob<Done> *syncToDisk();
    /// Stores `bytes`, a whole blob already in memory, as `key`: written with one pwrite() and hashed from
    /// memory, without a reservation's preallocation and mapping; up to 4 MiB appended to a pack, larger into a
    /// file of its own. For instances received whole (WADO-RS parts).
    ResultJob<BlobInfo> *put(const QString &key, const ByteView &bytes, const CommitOptions &options = CommitOptions());

    /// The studies held, matching `query` at study level (patient name and ID, accession, description, dates,
    /// modality; limit and offset), newest first: their identity, instance count and bytes, and their series with
    /// instance counts (SeriesSummary::listedInstances) but without instances — loadStudies() of one study gives
    /// those. Answered from the index's study counts, never by reading every instance's row.
    ResultJob<QList<StudySummary>> *studies(const DicomQuery &query);

    /// Changes the budget; evicts at once if the store is now over it.
    void setBudget(qint64 budgetBytes);

    struct State;

private:
    explicit FileStore(std::shared_ptr<State> state);
    // The work of reserve() and commit(), on whatever thread runs it.
    /// Where a reservation's file is written: in the staging folder, renamed into place at the commit (what a
    /// transfer needs: it may resume after a crash, its record names the staging file); or at once under its final
    /// name — for a whole blob written in one go (put, importFile): unknown to the index, so invisible, until
    /// committed; a crash leaves an orphan that the next open removes. Saves a rename, and the lock of two folders,
    /// per blob.
    enum class Placement { Staging, Final };
    static Result<BlobWriterPtr> reserveNow(const std::shared_ptr<State> &d, const QString &key, qint64 size, bool mapped = true,
                                            Placement placement = Placement::Staging);
    /// `check`: the blob's XXH3-128 when the caller computed it from memory; empty: computed from the file.
    static Result<BlobInfo> commitNow(const std::shared_ptr<State> &d, const std::shared_ptr<StoreNotifier> &notifier, const BlobWriterPtr &writer,
                                      const CommitOptions &options, QByteArray check = QByteArray());
    /// put() of a blob small enough for a pack (see above).
    static Result<BlobInfo> putPacked(const std::shared_ptr<State> &d, const std::shared_ptr<StoreNotifier> &notifier, const QString &key,
                                      const ByteView &bytes, const CommitOptions &options);
    /// Whether `info` has its SHA-256 and its hash tree.
    static bool digested(const BlobInfo &info);
    /// `info` with its SHA-256 and hash tree, computed from the file (and journalled) if deferred, or kept by a
    /// version of the cache that kept no trees.
    static Result<BlobInfo> withDigest(const std::shared_ptr<State> &d, const BlobInfo &info, const ByteView &bytes);
    std::shared_ptr<State> d;
};

} // namespace spectrum
