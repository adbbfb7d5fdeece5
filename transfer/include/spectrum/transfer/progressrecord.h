// SPDX-License-Identifier: Apache-2.0
#pragma once
// ProgressRecord: which ranges of a partly received blob are safely on disk, kept in a small JSON file beside
// it, so that a transfer interrupted by a crash or a kill continues where it stopped. The record is replaced
// atomically (a new file renamed over the old one): it is the old record or the new one, never half of one.
//
// Two kinds of ranges, so that a kill loses a tenth of a second of a transfer and a power cut never makes us
// trust bytes that did not reach the disk:
//   - "ranges": flushed (fdatasync) before they were recorded — good after any crash. Synced in the
//     background at most about once a second and every 16 MiB (a sync costs the disk's time, not ours).
//   - "unsynced", with the kernel's boot ID: verified and written, still in the kernel's page cache. A killed
//     process loses none of it, so a record read under the same boot ID trusts them; under another (the
//     machine went down) they are fetched again. Noted every 100 ms or 8 MiB, without any sync.
//
// The thread that receives never waits for the disk: notes and syncs run on core's blocking pool, one at a
// time. One thread calls the methods (transfers report from one thread); the background work is internal.

#include <QElapsedTimer>
#include <QFuture>
#include <QList>
#include <QMutex>
#include <QPair>
#include <QString>

#include "spectrum/transfer/rangeset.h"

namespace spectrum {

class ProgressRecord
{
public:
    /// `identity` ties the record to one version of one blob (e.g. version and digest): any other is ignored.
    ProgressRecord(QString path, QString identity, qint64 size, QString dataFile = QString());
    /// Waits for a background flush still running.
    ~ProgressRecord();

    /// Reads an existing record; false when there is none or it belongs to another identity or size.
    bool load();
    /// The data file named in the record (FileStore keeps versions in separate files).
    QString dataFile() const { return m_dataFile; }
    QList<QPair<qint64, qint64>> ranges() const;

    /// [begin, end) of the data file `fd` was received, written and verified; noted and flushed in the
    /// background, in batches. `fd` must stay open until flush(), remove() or the destructor.
    void verified(qint64 begin, qint64 end, int fd);
    /// Flushes the data file (fd; -1: nothing to flush) and records all that was verified as durable, now
    /// (waits for the disk).
    void flush(int fd);
    /// The transfer completed (or was abandoned for good): the record goes.
    void remove();
    /// Waits for a background flush still running (before the data file is closed, say).
    void waitForBackground();

private:
    /// fdatasync(fd) for `toSync`, then the record: durable ranges (with `toSync`), and `unsynced` tagged
    /// with the boot ID. Runs on any thread.
    void writeOut(int fd, const RangeSet &toSync, const RangeSet &unsynced);

    QString m_path;
    QString m_identity;
    qint64 m_size;
    QString m_dataFile;
    mutable QMutex m_mutex;  ///< guards m_durable and m_syncing, which the background work changes
    RangeSet m_durable;      ///< flushed, and in the record
    RangeSet m_syncing;      ///< handed to a background sync, not yet flushed
    RangeSet m_pending;      ///< verified (or found unsynced on record in this boot), not handed to a sync yet
    qint64 m_pendingBytes = 0;  ///< verified since the last sync
    qint64 m_notedBytes = 0;    ///< of those, noted
    QFuture<void> m_background;
    QElapsedTimer m_sinceSync;
    QElapsedTimer m_sinceNote;
};

} // namespace spectrum
