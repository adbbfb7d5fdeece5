#include "spectrum/transfer/buffersink.h"

#include <cstring>
#include <limits>

namespace spectrum {

BufferSink::BufferSink(qint64 size) : m_size(size)
{
    if (size < 0 || size > std::numeric_limits<qsizetype>::max() / 2)
        return;
    // Not zero-filled: only ranges that were written and checked are ever exposed, and touching every page
    // twice (memset, then the receive) costs as much as the transfer itself.
    m_buffer = QByteArray(qsizetype(size), Qt::Uninitialized);
    m_valid = m_buffer.size() == size;
    // Detach once now, so concurrent writers never trigger a copy-on-write.
    if (m_valid)
        m_raw = m_buffer.data();
}

Error BufferSink::writeAt(qint64 offset, const char *data, qint64 length)
{
    if (!m_valid)
        return Error(ErrorCode::Internal, QStringLiteral("write into an invalid buffer"));
    if (offset < 0 || length < 0 || offset > m_size - length) {
        return Error(ErrorCode::OutOfRange,
                     QStringLiteral("write [%1, %2) outside a buffer of %3 bytes").arg(offset).arg(offset + length).arg(m_size));
    }
    if (length > 0)
        std::memcpy(m_raw + offset, data, size_t(length));
    return Error();
}

} // namespace spectrum
