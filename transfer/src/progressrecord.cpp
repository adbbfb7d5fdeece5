#include "spectrum/transfer/progressrecord.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <sys/mman.h>
#include <unistd.h>

namespace spectrum {

namespace {
constexpr qint64 kFlushEvery = qint64(16) << 20;  // a kill loses at most this much progress
} // namespace

ProgressRecord::ProgressRecord(QString path, QString identity, qint64 size, QString dataFile)
    : m_path(std::move(path)), m_identity(std::move(identity)), m_size(size), m_dataFile(std::move(dataFile))
{
}

bool ProgressRecord::load()
{
    QFile f(m_path);
    if (!f.open(QIODevice::ReadOnly))
        return false;
    const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
    if (o.value(QStringLiteral("identity")).toString() != m_identity || o.value(QStringLiteral("size")).toString() != QString::number(m_size))
        return false;
    m_dataFile = o.value(QStringLiteral("file")).toString();
    m_recorded.clear();
    for (const QJsonValue &v : o.value(QStringLiteral("ranges")).toArray()) {
        const qint64 b = v.toArray().at(0).toString().toLongLong(), e = v.toArray().at(1).toString().toLongLong();
        if (0 <= b && b < e && e <= m_size)
            m_recorded.add(b, e);
    }
    return true;
}

QList<QPair<qint64, qint64>> ProgressRecord::ranges() const
{
    QList<QPair<qint64, qint64>> out;
    for (const RangeSet::Range &r : m_recorded.ranges())
        out << qMakePair(r.begin, r.end);
    return out;
}

void ProgressRecord::verified(qint64 begin, qint64 end, uchar *map)
{
    if (begin >= end)
        return;
    m_unflushed.add(begin, end);
    m_unflushedBytes += end - begin;
    if (m_unflushedBytes >= kFlushEvery)
        flush(map);
}

void ProgressRecord::flush(uchar *map)
{
    // The bytes reach the disk first; only then does the record claim them.
    const long page = ::sysconf(_SC_PAGESIZE);
    for (const RangeSet::Range &r : m_unflushed.ranges()) {
        const qint64 from = r.begin - r.begin % page;
        if (map && ::msync(map + from, size_t(r.end - from), MS_SYNC) != 0)
            return;  // left unrecorded: fetched again next time
    }
    for (const RangeSet::Range &r : m_unflushed.ranges())
        m_recorded.add(r.begin, r.end);
    m_unflushed.clear();
    m_unflushedBytes = 0;
    QJsonArray ranges;
    for (const RangeSet::Range &r : m_recorded.ranges())
        ranges.append(QJsonArray{QString::number(r.begin), QString::number(r.end)});
    QSaveFile out(m_path);  // atomic: the old record or the new one, never half of one
    if (!out.open(QIODevice::WriteOnly))
        return;
    out.write(QJsonDocument(QJsonObject{{QStringLiteral("identity"), m_identity}, {QStringLiteral("size"), QString::number(m_size)},
                                        {QStringLiteral("file"), m_dataFile}, {QStringLiteral("ranges"), ranges}})
                  .toJson(QJsonDocument::Compact));
    out.commit();
}

void ProgressRecord::remove()
{
    m_unflushed.clear();
    QFile::remove(m_path);
}

} // namespace spectrum
