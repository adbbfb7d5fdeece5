#include "spectrum/transfer/filesink.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace spectrum {

namespace {
constexpr qint64 kFlushEvery = qint64(16) << 20;  // progress made durable every 16 MiB: a kill loses at most that

void addRange(std::map<qint64, qint64> &set, qint64 b, qint64 e)
{
    auto it = set.upper_bound(b);
    if (it != set.begin() && std::prev(it)->second >= b) {
        --it;
        b = it->first;
        e = std::max(e, it->second);
        it = set.erase(it);
    }
    while (it != set.end() && it->first <= e) {
        e = std::max(e, it->second);
        it = set.erase(it);
    }
    set.emplace(b, e);
}
} // namespace

Error FileSink::map(qint64 size)
{
    if (size == 0)
        return Error();
    m_map = m_file.map(0, size);
    if (!m_map)
        return Error(ErrorCode::Io, QStringLiteral("cannot map %1: %2").arg(m_file.fileName(), m_file.errorString()));
    ::madvise(m_map, size_t(size), MADV_RANDOM);  // about to be overwritten: no read-ahead of zeros
    return Error();
}

Result<std::unique_ptr<FileSink>> FileSink::create(const QString &path, qint64 size)
{
    std::unique_ptr<FileSink> sink(new FileSink);
    sink->m_size = size;
    sink->m_file.setFileName(path);
    if (!sink->m_file.open(QIODevice::ReadWrite | QIODevice::Truncate))
        return Error(ErrorCode::Io, QStringLiteral("cannot create %1: %2").arg(path, sink->m_file.errorString()));
    if (size > 0) {
        // Real blocks now: a full disk fails here, not as SIGBUS on a write through the mapping.
        if (const int rc = ::posix_fallocate(sink->m_file.handle(), 0, off_t(size)); rc != 0) {
            return Error(rc == ENOSPC ? ErrorCode::DiskFull : ErrorCode::Io,
                         QStringLiteral("cannot allocate %1 bytes for %2: %3").arg(size).arg(path, QString::fromLocal8Bit(std::strerror(rc))));
        }
    }
    if (Error e = sink->map(size); e.isError())
        return e;
    return sink;
}

Result<std::unique_ptr<FileSink>> FileSink::createOrResume(const QString &path, qint64 size, const QString &identity)
{
    // An earlier attempt for the same blob version?
    QFile record(path + QStringLiteral(".partial"));
    if (record.open(QIODevice::ReadOnly) && QFileInfo(path).size() == size) {
        const QJsonObject o = QJsonDocument::fromJson(record.readAll()).object();
        if (o.value(QStringLiteral("identity")).toString() == identity && o.value(QStringLiteral("size")).toString() == QString::number(size)) {
            std::unique_ptr<FileSink> sink(new FileSink);
            sink->m_size = size;
            sink->m_resumable = true;
            sink->m_identity = identity;
            sink->m_file.setFileName(path);
            if (sink->m_file.open(QIODevice::ReadWrite)) {
                for (const QJsonValue &v : o.value(QStringLiteral("ranges")).toArray()) {
                    const qint64 b = v.toArray().at(0).toString().toLongLong(), e = v.toArray().at(1).toString().toLongLong();
                    if (0 <= b && b < e && e <= size)
                        addRange(sink->m_recorded, b, e);
                }
                if (Error e = sink->map(size); e.isError())
                    return e;
                return sink;
            }
        }
    }
    Result<std::unique_ptr<FileSink>> fresh = create(path, size);
    if (!fresh.isOk())
        return fresh;
    fresh.value()->m_resumable = true;
    fresh.value()->m_identity = identity;
    fresh.value()->flushProgress();  // the record exists from the start: a kill now resumes from nothing
    return fresh;
}

FileSink::~FileSink()
{
    if (m_resumable)
        flushProgress();
    if (m_map)
        m_file.unmap(m_map);
}

Error FileSink::writeAt(qint64 offset, const char *data, qint64 length)
{
    if (offset < 0 || length < 0 || offset > m_size - length)
        return Error(ErrorCode::OutOfRange, QStringLiteral("write [%1, %2) outside a file of %3 bytes").arg(offset).arg(offset + length).arg(m_size));
    if (length > 0)
        std::memcpy(m_map + offset, data, size_t(length));
    return Error();
}

QList<QPair<qint64, qint64>> FileSink::completedRanges() const
{
    QList<QPair<qint64, qint64>> out;
    for (const auto &[b, e] : m_recorded)
        out << qMakePair(b, e);
    return out;
}

void FileSink::rangeVerified(qint64 begin, qint64 end)
{
    if (!m_resumable || begin >= end)
        return;
    addRange(m_unflushed, begin, end);
    m_unflushedBytes += end - begin;
    if (m_unflushedBytes >= kFlushEvery)
        flushProgress();
}

void FileSink::flushProgress()
{
    // The bytes reach the disk first; only then does the record claim them.
    const long page = ::sysconf(_SC_PAGESIZE);
    for (const auto &[b, e] : m_unflushed) {
        const qint64 from = b - b % page;
        if (::msync(m_map + from, size_t(e - from), MS_SYNC) != 0)
            return;  // keep them unrecorded: they will be fetched again
    }
    for (const auto &[b, e] : m_unflushed)
        addRange(m_recorded, b, e);
    m_unflushed.clear();
    m_unflushedBytes = 0;
    QJsonArray ranges;
    for (const auto &[b, e] : m_recorded)
        ranges.append(QJsonArray{QString::number(b), QString::number(e)});
    QSaveFile out(recordPath());  // atomic: the old record or the new one, never half of one
    if (!out.open(QIODevice::WriteOnly))
        return;
    out.write(QJsonDocument(QJsonObject{{QStringLiteral("identity"), m_identity}, {QStringLiteral("size"), QString::number(m_size)},
                                        {QStringLiteral("ranges"), ranges}}).toJson(QJsonDocument::Compact));
    out.commit();
}

Error FileSink::sync()
{
    if (m_map && ::msync(m_map, size_t(m_size), MS_SYNC) != 0)
        return Error(ErrorCode::Io, QStringLiteral("cannot flush %1: %2").arg(m_file.fileName(), QString::fromLocal8Bit(std::strerror(errno))));
    if (!m_file.flush() || ::fsync(m_file.handle()) != 0)
        return Error(ErrorCode::Io, QStringLiteral("cannot sync %1").arg(m_file.fileName()));
    return Error();
}

Error FileSink::finish()
{
    if (Error e = sync(); e.isError())
        return e;
    m_resumable = false;
    m_unflushed.clear();
    QFile::remove(recordPath());
    return Error();
}

} // namespace spectrum
