// SPDX-License-Identifier: Apache-2.0
#pragma once
// FileSink: a ByteSink over a file of fixed size, written with pwrite() in any order, readable through a memory
// mapping (data()) while it fills.
//
// Resumable: next to the file, "<file>.partial" records which ranges are complete and which version of which
// blob they belong to. Ranges are recorded only after their bytes were flushed to disk, so after a crash or a
// kill the record never claims more than the file holds. Opening the same file for the same blob version
// continues where it stopped; for any other version it starts over.

#include "spectrum/core/bytes.h"
#include "spectrum/core/result.h"
#include "spectrum/transfer/progressrecord.h"

#include <QFile>

#include <memory>

namespace spectrum {

class FileSink : public ByteSink
{
public:
    /// Creates (or truncates) `path` to `size` bytes, allocated on disk, and maps it. Not resumable.
    static Result<std::unique_ptr<FileSink>> create(const QString &path, qint64 size);
    /// Continues an interrupted download of the blob identified by `identity` (e.g. its version and digest)
    /// if `path` and its record match; else starts afresh. Resumable.
    static Result<std::unique_ptr<FileSink>> createOrResume(const QString &path, qint64 size, const QString &identity);
    ~FileSink() override;

    qint64 size() const override { return m_size; }
    Error writeAt(qint64 offset, const char *data, qint64 length) override;
    char *data() override { return reinterpret_cast<char *>(m_map); }
    bool receivesInPlace() const override { return false; }
    QList<QPair<qint64, qint64>> completedRanges() const override;
    void rangeVerified(qint64 begin, qint64 end) override;

    /// Flushes the file to disk.
    Error sync();
    /// The download is complete: sync, and forget the progress record.
    Error finish();

private:
    FileSink() = default;
    Error map(qint64 size);

    QFile m_file;
    uchar *m_map = nullptr;
    qint64 m_size = 0;
    std::unique_ptr<ProgressRecord> m_progress;  ///< only for resumable sinks
};

} // namespace spectrum
