// SPDX-License-Identifier: Apache-2.0
#pragma once
// Byte ranges, read-only views that may point into a memory mapping, and sinks that received bytes go into.

#include "spectrum/core/error.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QMetaType>

#include <memory>

namespace spectrum {

/// A half-open byte range [begin, end). end == -1 means "to the end of the blob".
struct ByteRange
{
    qint64 begin = 0;  ///< inclusive
    qint64 end = -1;   ///< exclusive; -1: until the end

    static ByteRange all() { return {}; }
    static ByteRange of(qint64 begin, qint64 end) { return {begin, end}; }
    bool isOpenEnded() const { return end < 0; }
    /// The concrete range inside a blob of `size` bytes, or an OutOfRange error.
    Error resolve(qint64 size, qint64 *outBegin, qint64 *outEnd) const;
};

/// Read-only bytes that are not copied: they may live in a QByteArray or in a memory-mapped file kept alive by
/// the view itself. Copying a view copies a reference, never the bytes. Thread-safe to read from many threads.
class ByteView
{
public:
    ByteView() = default;
    explicit ByteView(QByteArray bytes);
    /// `data` stays valid while `keepAlive` lives; the view holds it.
    ByteView(const char *data, qint64 size, std::shared_ptr<const void> keepAlive);

    const char *data() const { return m_data; }
    qint64 size() const { return m_size; }
    bool isEmpty() const { return m_size == 0; }

    /// A view of [offset, offset + length) of this one, sharing its owner.
    ByteView mid(qint64 offset, qint64 length) const;
    /// A QByteArray over the same bytes, valid only while this view (or a copy) is alive. No copy.
    QByteArray asByteArrayView() const { return QByteArray::fromRawData(m_data, m_size); }
    /// A deep copy.
    QByteArray toByteArray() const { return QByteArray(m_data, m_size); }

private:
    const char *m_data = nullptr;
    qint64 m_size = 0;
    std::shared_ptr<const void> m_owner;
};

/// An object's bytes while they arrive — the one shape "bytes arrived" has from the socket to the screen (a
/// WADO-RS part, a blob pull, an instance in the view): bytes [0, end) of `total` are in `buffer`. The buffer has
/// its whole size from the start, never moves, and its bytes before `end` never change; holding the pointer keeps
/// them alive. Made by the receiving thread, read on any; later arrivals of the same object only grow `end`.
struct Arrival
{
    std::shared_ptr<const QByteArray> buffer;
    qint64 end = 0;
    qint64 total = 0;

    const char *data() const { return buffer ? buffer->constData() : nullptr; }
    bool isValid() const { return buffer && total > 0 && end >= 0 && end <= total && buffer->size() >= total; }
    bool isComplete() const { return isValid() && end == total; }
};

/// Where received bytes go: a reserved blob in a store, a memory buffer. Its size is fixed when it is created.
/// Writers may fill it out of order; writeAt() is thread-safe for disjoint ranges.
class ByteSink
{
public:
    virtual ~ByteSink() = default;
    virtual qint64 size() const = 0;
    /// Copies `length` bytes to [offset, offset + length). OutOfRange if that is outside [0, size()).
    virtual Error writeAt(qint64 offset, const char *data, qint64 length) = 0;
    /// The destination's own memory, [0, size()) — a memory mapping or a buffer — so that a network reader can
    /// receive straight into it without an intermediate copy. nullptr when size() is 0. Valid for the sink's
    /// lifetime; disjoint ranges may be filled from different threads.
    virtual char *data() = 0;

    /// Ranges [begin, end) already present and verified, from an earlier, interrupted attempt: a transfer
    /// fetches only the rest. Default: none.
    virtual QList<QPair<qint64, qint64>> completedRanges() const { return {}; }
    /// A writer received and verified [begin, end): a resumable sink may record it durably. Default: nothing.
    virtual void rangeVerified(qint64 begin, qint64 end) { Q_UNUSED(begin) Q_UNUSED(end) }

    /// How a network reader fills this sink. true (memory): receive straight into data(). false (a file):
    /// receive a frame into a small buffer, check it there, and hand it to writeAt(), which writes it to the
    /// file; data() then serves reading only. Writing a file through its mapping costs a page fault per 4 KiB
    /// and a write-protect pass over every mapped page when it is synced: measured here (Linux 6.x, ext4)
    /// 1.2–4 s per GiB against 0.72 s for pwrite() from a 1 MiB buffer, fdatasync included.
    virtual bool receivesInPlace() const { return true; }
};

/// Writes all of [data, data + length) to the file descriptor at `offset` (pwrite, retried on short writes and
/// EINTR). A full disk is ErrorCode::DiskFull; `what` names the file in errors.
Error writeFileAt(int fd, qint64 offset, const char *data, qint64 length, const QString &what);

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::ByteView)
Q_DECLARE_METATYPE(spectrum::Arrival)
