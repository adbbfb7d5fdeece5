#include "spectrum/transfer/filesink.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace spectrum {

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
        sink->m_map = sink->m_file.map(0, size);
        if (!sink->m_map)
            return Error(ErrorCode::Io, QStringLiteral("cannot map %1: %2").arg(path, sink->m_file.errorString()));
        ::madvise(sink->m_map, size_t(size), MADV_RANDOM);  // about to be overwritten: no read-ahead of zeros
    }
    return sink;
}

FileSink::~FileSink()
{
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

Error FileSink::sync()
{
    if (m_map && ::msync(m_map, size_t(m_size), MS_SYNC) != 0)
        return Error(ErrorCode::Io, QStringLiteral("cannot flush %1: %2").arg(m_file.fileName(), QString::fromLocal8Bit(std::strerror(errno))));
    if (!m_file.flush() || ::fsync(m_file.handle()) != 0)
        return Error(ErrorCode::Io, QStringLiteral("cannot sync %1").arg(m_file.fileName()));
    return Error();
}

} // namespace spectrum
