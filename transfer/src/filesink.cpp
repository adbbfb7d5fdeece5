// SPDX-License-Identifier: Apache-2.0
#include "spectrum/transfer/filesink.h"

#include <QFileInfo>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace spectrum {

Error FileSink::map(qint64 size)
{
    if (size == 0)
        return Error();
    m_map = m_file.map(0, size);
    if (!m_map)
        return Error(ErrorCode::Io, QStringLiteral("cannot map %1: %2").arg(m_file.fileName(), m_file.errorString()));
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
    auto progress = std::make_unique<ProgressRecord>(path + QStringLiteral(".partial"), identity, size);
    // An earlier attempt for the same blob version?
    if (progress->load() && QFileInfo(path).size() == size) {
        std::unique_ptr<FileSink> sink(new FileSink);
        sink->m_size = size;
        sink->m_file.setFileName(path);
        if (sink->m_file.open(QIODevice::ReadWrite)) {
            if (Error e = sink->map(size); e.isError())
                return e;
            sink->m_progress = std::move(progress);
            return sink;
        }
    }
    Result<std::unique_ptr<FileSink>> fresh = create(path, size);
    if (!fresh.isOk())
        return fresh;
    progress = std::make_unique<ProgressRecord>(path + QStringLiteral(".partial"), identity, size);
    progress->flush(-1);  // the record exists from the start: a kill now resumes from nothing
    fresh.value()->m_progress = std::move(progress);
    return fresh;
}

FileSink::~FileSink()
{
    if (m_progress)
        m_progress->flush(m_file.handle());
    if (m_map)
        m_file.unmap(m_map);
}

Error FileSink::writeAt(qint64 offset, const char *data, qint64 length)
{
    if (offset < 0 || length < 0 || offset > m_size - length)
        return Error(ErrorCode::OutOfRange, QStringLiteral("write [%1, %2) outside a file of %3 bytes").arg(offset).arg(offset + length).arg(m_size));
    return writeFileAt(m_file.handle(), offset, data, length, m_file.fileName());
}

QList<QPair<qint64, qint64>> FileSink::completedRanges() const
{
    return m_progress ? m_progress->ranges() : QList<QPair<qint64, qint64>>();
}

void FileSink::rangeVerified(qint64 begin, qint64 end)
{
    if (m_progress)
        m_progress->verified(begin, end, m_file.handle());
}

Error FileSink::sync()
{
    // Also writes back what came through the mapping: for a shared mapping that is the same page cache.
    if (!m_file.flush() || ::fdatasync(m_file.handle()) != 0)
        return Error(ErrorCode::Io, QStringLiteral("cannot sync %1: %2").arg(m_file.fileName(), QString::fromLocal8Bit(std::strerror(errno))));
    return Error();
}

Error FileSink::finish()
{
    if (Error e = sync(); e.isError())
        return e;
    if (m_progress) {
        m_progress->remove();
        m_progress.reset();
    }
    return Error();
}

} // namespace spectrum
