// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/bytes.h"

#include <cerrno>
#include <cstring>

#include <unistd.h>

namespace spectrum {

Error ByteRange::resolve(qint64 size, qint64 *outBegin, qint64 *outEnd) const
{
    const qint64 b = begin;
    const qint64 e = end < 0 ? size : end;
    if (b < 0 || b > e || e > size) {
        return Error(ErrorCode::OutOfRange,
                     QStringLiteral("range [%1, %2) is outside a blob of %3 bytes").arg(b).arg(end).arg(size));
    }
    *outBegin = b;
    *outEnd = e;
    return Error();
}

ByteView::ByteView(QByteArray bytes)
{
    auto owned = std::make_shared<QByteArray>(std::move(bytes));
    m_data = owned->constData();
    m_size = owned->size();
    m_owner = std::move(owned);
}

ByteView::ByteView(const char *data, qint64 size, std::shared_ptr<const void> keepAlive)
    : m_data(data), m_size(size), m_owner(std::move(keepAlive))
{
}

ByteView ByteView::mid(qint64 offset, qint64 length) const
{
    Q_ASSERT(offset >= 0 && length >= 0 && offset + length <= m_size);
    return ByteView(m_data + offset, length, m_owner);
}

Error writeFileAt(int fd, qint64 offset, const char *data, qint64 length, const QString &what)
{
    while (length > 0) {
        const ssize_t n = ::pwrite(fd, data, size_t(length), off_t(offset));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int err = n < 0 ? errno : ENOSPC;
            return Error(err == ENOSPC || err == EDQUOT ? ErrorCode::DiskFull : ErrorCode::Io,
                         QStringLiteral("cannot write %1 bytes at %2 of %3: %4").arg(length).arg(offset).arg(what, QString::fromLocal8Bit(std::strerror(err))));
        }
        data += n;
        offset += n;
        length -= n;
    }
    return Error();
}

} // namespace spectrum
