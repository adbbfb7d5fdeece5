#pragma once
// BufferSink: a ByteSink over one memory buffer of fixed size — the in-memory destination of a transfer.

#include "spectrum/core/bytes.h"

#include <QByteArray>

namespace spectrum {

class BufferSink : public ByteSink
{
public:
    /// Allocates `size` bytes (not initialised). Check isValid(): a size the process cannot hold leaves it invalid.
    explicit BufferSink(qint64 size);

    bool isValid() const { return m_valid; }
    qint64 size() const override { return m_size; }
    /// Thread-safe for disjoint ranges: each write touches only its own bytes.
    Error writeAt(qint64 offset, const char *data, qint64 length) override;
    char *data() override { return m_size > 0 ? m_raw : nullptr; }

    /// The buffer, shared (not copied). Call after all writers are done.
    QByteArray bytes() const { return m_buffer; }

private:
    QByteArray m_buffer;
    char *m_raw = nullptr;  ///< m_buffer's storage, detached once at construction
    qint64 m_size = 0;
    bool m_valid = false;
};

} // namespace spectrum
