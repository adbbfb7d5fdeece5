// SPDX-License-Identifier: Apache-2.0
#pragma once
// PartBuffer: one WADO-RS part's bytes while they arrive (private to transfer).

#include "spectrum/core/bytes.h"
#include "spectrum/transfer/dicomweb.h"
#include "spectrum/transfer/multipart.h"

#include <cstring>
#include <memory>

namespace spectrum {

/// One WADO-RS part's bytes while they arrive. A part that declares its length gets one buffer of that size at
/// once: the reader reads into it in place, and what is in can be looked at while the rest comes (Arrival: the
/// buffer never moves). A part of unknown length grows a buffer and is only seen whole.
class PartBuffer
{
public:
    /// A new part from its headers.
    WadoPart begin(int index, const MultipartHeaders &headers)
    {
        WadoPart part;
        part.index = index;
        part.contentType = headers.value("content-type");
        bool ok = false;
        const qint64 declared = headers.value("content-length").toLongLong(&ok);
        part.declaredLength = ok ? declared : -1;
        m_fixed.reset();
        m_base = nullptr;
        m_growing = QByteArray();
        m_filled = 0;
        if (ok && declared > 0 && declared < (qint64(1) << 31)) {
            auto buffer = std::make_shared<QByteArray>(qsizetype(declared), Qt::Uninitialized);
            m_base = buffer->data();  // taken once: the array is never copied while it fills, so never detached
            m_fixed = std::move(buffer);
            m_total = declared;
        } else {
            m_total = -1;
        }
        return part;
    }
    /// Room for up to `wanted` of the part's next bytes, read into in place; null for a part of unknown length.
    char *room(qint64 wanted, qint64 *capacity)
    {
        if (!m_base || m_filled >= m_total)
            return nullptr;
        *capacity = std::min(wanted, m_total - m_filled);
        return m_base + m_filled;
    }
    /// `n` bytes were read into room().
    void took(qint64 n) { m_filled += n; }
    /// The next bytes, copied in. False when they overrun the declared length.
    bool append(const char *data, qint64 n)
    {
        if (!m_base) {
            m_growing.append(data, n);
            m_filled += n;
            return true;
        }
        if (n > m_total - m_filled)
            return false;
        std::memcpy(m_base + m_filled, data, size_t(n));
        m_filled += n;
        return true;
    }
    qint64 size() const { return m_filled; }
    /// What is in so far; invalid for a part of unknown length.
    Arrival arrival() const { return m_fixed ? Arrival{m_fixed, m_filled, m_total} : Arrival{}; }
    /// The whole part; the buffer is handed over (the next part gets its own).
    QByteArray take()
    {
        QByteArray whole = m_fixed ? *m_fixed : std::exchange(m_growing, QByteArray());
        if (m_fixed && m_filled < m_total)
            whole.truncate(m_filled);
        m_fixed.reset();
        m_base = nullptr;
        m_filled = 0;
        return whole;
    }

private:
    std::shared_ptr<QByteArray> m_fixed;
    char *m_base = nullptr;
    qint64 m_total = -1;
    qint64 m_filled = 0;
    QByteArray m_growing;
};

} // namespace spectrum
