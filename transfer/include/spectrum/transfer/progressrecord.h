#pragma once
// ProgressRecord: which ranges of a partly received blob are safely on disk, kept in a small JSON file beside
// it, so that a transfer interrupted by a crash or a kill continues where it stopped. Ranges are recorded only
// after their bytes were flushed (fdatasync) to the file, and the record is replaced atomically: it never claims
// more than the file holds.
//
// While a transfer runs, flushes happen in the background (on core's blocking pool, one at a time, at most
// about once a second and every 64 MiB): the thread that receives never waits for the disk. One thread calls
// the methods (transfers report from one thread); the background flush is internal.

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

    /// [begin, end) of the data file `fd` was received and verified; flushed and recorded in the background,
    /// in batches. `fd` must stay open until flush(), remove() or the destructor.
    void verified(qint64 begin, qint64 end, int fd);
    /// Flushes the data file (fd; -1: nothing to flush) and rewrites the record, now (waits for the disk).
    void flush(int fd);
    /// The transfer completed (or was abandoned for good): the record goes.
    void remove();
    /// Waits for a background flush still running (before the data file is closed, say).
    void waitForBackground();

private:
    /// fdatasync(fd), then the record with `add` recorded too. Runs on any thread.
    void writeOut(int fd, const RangeSet &add);

    QString m_path;
    QString m_identity;
    qint64 m_size;
    QString m_dataFile;
    mutable QMutex m_mutex;  ///< guards m_recorded, which the background flush extends
    RangeSet m_recorded;     ///< durable: flushed, and in the record
    RangeSet m_unflushed;    ///< verified, not yet handed to a flush
    qint64 m_unflushedBytes = 0;
    QFuture<void> m_background;
    QElapsedTimer m_sinceFlush;
};

} // namespace spectrum
