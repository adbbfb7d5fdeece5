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
            addRange(m_recorded, b, e);
    }
    return true;
}

QList<QPair<qint64, qint64>> ProgressRecord::ranges() const
{
    QList<QPair<qint64, qint64>> out;
    for (const auto &[b, e] : m_recorded)
        out << qMakePair(b, e);
    return out;
}

void ProgressRecord::verified(qint64 begin, qint64 end, uchar *map)
{
    if (begin >= end)
        return;
    addRange(m_unflushed, begin, end);
    m_unflushedBytes += end - begin;
    if (m_unflushedBytes >= kFlushEvery)
        flush(map);
}

void ProgressRecord::flush(uchar *map)
{
    // The bytes reach the disk first; only then does the record claim them.
    const long page = ::sysconf(_SC_PAGESIZE);
    for (const auto &[b, e] : m_unflushed) {
        const qint64 from = b - b % page;
        if (map && ::msync(map + from, size_t(e - from), MS_SYNC) != 0)
            return;  // left unrecorded: fetched again next time
    }
    for (const auto &[b, e] : m_unflushed)
        addRange(m_recorded, b, e);
    m_unflushed.clear();
    m_unflushedBytes = 0;
    QJsonArray ranges;
    for (const auto &[b, e] : m_recorded)
        ranges.append(QJsonArray{QString::number(b), QString::number(e)});
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
