// SPDX-License-Identifier: Apache-2.0
#pragma once
// FileStore's index on the disk: an SQLite database (index.sqlite, write-ahead log) holding one row per blob, and
// per study and series the counts that the study list needs — so that a cache of millions of instances opens
// without reading them, and a search reads the studies, not the instances (docs/CACHE.md, decision 0023).
//
// Two connections. Lookups go through the reader, under the store's `mutex`; changes go through the writer, under
// `journalMutex`, and each change's transaction is committed with `mutex` held too, so that a reader either sees
// a blob together with its file or sees neither. Commits do not sync (synchronous=NORMAL): FileStore makes them
// durable in groups by syncing the log (walFd()). The log is copied into the database by checkpoint(), called
// without `mutex`, so that readers never wait for it.

#include "blobs/filestore/entry.h"

#include "spectrum/core/dicomquery.h"
#include "spectrum/core/result.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QHash>

#include <functional>
#include <memory>
#include <optional>

struct sqlite3;
struct sqlite3_stmt;

namespace spectrum::cachedisk {

class IndexDb
{
public:
    static constexpr auto kFileName = "index.sqlite";

    /// Opens (creating if needed) the index at `path`. Corrupt when the file is not an index of ours.
    static Result<std::unique_ptr<IndexDb>> open(const QString &path);
    ~IndexDb();
    IndexDb(const IndexDb &) = delete;
    IndexDb &operator=(const IndexDb &) = delete;

    /// The index was made by this open: a new cache, or one whose journal is still to be taken over.
    bool created() const { return m_created; }
    /// The store that had it open last closed it (markClosed()): every file it names is there, and the
    /// version counter it kept is right. After a kill or a crash the store checks the files against the rows.
    bool closedCleanly() const { return m_clean; }
    /// The next blob version, as the last clean close left it (0 when not known).
    quint64 keptNextVersion() const { return m_keptNextVersion; }
    /// Marks the index in use (synced): until markClosed(), an open finds it not closed cleanly.
    Error markOpen();
    /// Marks a clean close and keeps `nextVersion`; checkpoints the log into the database.
    Error markClosed(quint64 nextVersion);

    qint64 totalBytes() const { return m_totalBytes; }
    qint64 blobCount() const { return m_blobs; }

    // --- reader (caller holds the store's mutex) ---
    std::optional<Entry> find(const QString &key);
    Result<QList<BlobInfo>> matching(const BlobQuery &query);
    /// The studies matching `query` (study level), newest first, each with its series listed (instance counts,
    /// no instances).
    Result<QList<StudySummary>> studies(const DicomQuery &query);

    // --- writer (caller holds journalMutex; from begin() to commit() the store's mutex too) ---
    Error begin();
    Error commit();
    void rollback();
    /// Removes `key`'s row and returns it.
    Result<std::optional<Entry>> take(const QString &key);
    /// Inserts `e` (no row for its key may be there: take() it first) as the most recently used.
    Error insert(const Entry &e);
    /// Rewrites the digests and sync tag of `e`'s row, if it still holds e's version.
    Error updateDescription(const Entry &e);
    /// Marks `key` used at `accessMs` (most recently used).
    Error touch(const QString &key, qint64 accessMs);
    /// Up to `n` least recently used entries, oldest first.
    Result<QList<Entry>> oldest(int n);
    /// Whether any blob is in pack `pack`.
    Result<bool> packInUse(quint64 pack);
    /// Whether entries written without a sync under `boot` were recorded since the last markSynced(boot).
    Result<bool> anyUnsyncedUnder(const QString &boot);
    /// The seq the next row will get: read before a sync of the file system, it bounds what the sync covers.
    qint64 nextSeq() const { return m_nextUse; }
    /// Records that the file system was synced under `boot` after every entry with a seq below `below` was
    /// written: those are on the disk. (Their tags stay: a million rows are not rewritten for it.) In the open
    /// change.
    Error markSynced(const QString &boot, qint64 below);
    /// Whether `e` is known to be on the disk: committed with a sync, or covered by a markSynced() of its boot.
    bool synced(const Entry &e) const;
    /// Every row, in no particular order (the check after a crash). Stops at the first error of `visit`.
    Error forEach(const std::function<void(const Entry &)> &visit);

    /// The write-ahead log's descriptor, to make the commits so far durable with fdatasync (-1: none yet).
    int walFd();
    /// Copies the log into the database when it has grown past a few MB. Caller holds journalMutex, not mutex.
    void checkpointIfLarge();

private:
    IndexDb() = default;
    Error exec(sqlite3 *db, const char *sql);
    Error error(sqlite3 *db, const QString &what) const;
    sqlite3_stmt *prepare(sqlite3 *db, const char *sql);
    Error setMeta(const char *name, qint64 value);
    Error count(const Entry &e, int sign);
    /// Counts one more instance `id` in its series, taking the series' fields from it if not known yet (through
    /// `statement`, kSeriesAdd prepared; by default the index's own).
    Error addSeries(const DicomIdentity &id);
    Error addSeries(sqlite3_stmt *statement, const DicomIdentity &id);
    /// Schema 1 to 2, before the statements are prepared: the series' fields (body part, view, plane, slice
    /// thickness) as columns, their values from the rows, and the schema noted — one transaction.
    Error upgradeSchema1();

    QString m_path;
    sqlite3 *m_reader = nullptr;
    sqlite3 *m_writer = nullptr;
    struct Statements;
    std::unique_ptr<Statements> m_st;
    bool m_created = false;
    bool m_clean = false;
    quint64 m_keptNextVersion = 0;
    qint64 m_keptNextUse = 0;
    qint64 m_totalBytes = 0;
    qint64 m_blobs = 0;
    qint64 m_beganBytes = 0;
    qint64 m_beganBlobs = 0;
    qint64 m_nextUse = 1;
    int m_walFd = -1;
    int m_walPages = 0;
    QHash<QString, qint64> m_syncedBelow;  ///< boot → entries recorded under it with a lower seq are synced
};

} // namespace spectrum::cachedisk
