#pragma once
// FileSink: a ByteSink over a file of fixed size, filled through a memory mapping (out of order is fine).

#include "spectrum/core/bytes.h"
#include "spectrum/core/result.h"

#include <QFile>

#include <memory>

namespace spectrum {

class FileSink : public ByteSink
{
public:
    /// Creates (or truncates) `path` to `size` bytes, allocated on disk, and maps it.
    static Result<std::unique_ptr<FileSink>> create(const QString &path, qint64 size);
    ~FileSink() override;

    qint64 size() const override { return m_size; }
    Error writeAt(qint64 offset, const char *data, qint64 length) override;
    char *data() override { return reinterpret_cast<char *>(m_map); }
    /// Flushes the mapping and the file to disk.
    Error sync();

private:
    FileSink() = default;
    QFile m_file;
    uchar *m_map = nullptr;
    qint64 m_size = 0;
};

} // namespace spectrum
