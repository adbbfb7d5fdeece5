#pragma once
// ProgressRecord: which ranges of a partly received blob are safely on disk, kept in a small JSON file beside
// it, so that a transfer interrupted by a crash or a kill continues where it stopped. Ranges are recorded only
// after their bytes were flushed (msync) to the file, and the record is replaced atomically: it never claims
// more than the file holds. Not thread-safe: one writer at a time (transfers report from one thread).

#include <QList>
#include <QPair>
#include <QString>

#include "spectrum/transfer/rangeset.h"

namespace spectrum {

class ProgressRecord
{
public:
    /// `identity` ties the record to one version of one blob (e.g. version and digest): any other is ignored.
    ProgressRecord(QString path, QString identity, qint64 size, QString dataFile = QString());

    /// Reads an existing record; false when there is none or it belongs to another identity or size.
    bool load();
    /// The data file named in the record (FileStore keeps versions in separate files).
    QString dataFile() const { return m_dataFile; }
    QList<QPair<qint64, qint64>> ranges() const;

    /// [begin, end) of `map` was received and verified; flushed and recorded in batches of 16 MiB.
    void verified(qint64 begin, qint64 end, uchar *map);
    /// Flushes what is verified and rewrites the record.
    void flush(uchar *map);
    /// The transfer completed (or was abandoned for good): the record goes.
    void remove();

private:
    QString m_path;
    QString m_identity;
    qint64 m_size;
    QString m_dataFile;
    RangeSet m_recorded;   ///< durable: flushed, and in the record
    RangeSet m_unflushed;  ///< verified, not yet flushed
    qint64 m_unflushedBytes = 0;
};

} // namespace spectrum
