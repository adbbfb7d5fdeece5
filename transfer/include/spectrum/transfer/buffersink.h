// SPDX-License-Identifier: Apache-2.0
#pragma once
// BufferSink: a ByteSink over one memory buffer of fixed size — the in-memory destination of a transfer.
// The memory comes straight from the kernel in huge pages where it can (fewer page faults when 1 GiB lands in
// it), and is handed on as a ByteView without a copy.

#include "spectrum/core/bytes.h"

#include <memory>

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
    char *data() override { return m_size > 0 ? m_memory.get() : nullptr; }

    /// The buffer as a view that shares it (no copy) and keeps it alive. Take it after all writers are done.
    ByteView view() const;
    /// A copy (for small things and tests).
    QByteArray toByteArray() const { return view().toByteArray(); }

private:
    std::shared_ptr<char> m_memory;
    qint64 m_size = 0;
    bool m_valid = false;
};

} // namespace spectrum
