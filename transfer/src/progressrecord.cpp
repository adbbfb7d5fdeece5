#include "spectrum/transfer/progressrecord.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QtConcurrent>

#include "spectrum/core/job.h"

#include <unistd.h>

namespace spectrum {

namespace {
constexpr qint64 kFlushEvery = qint64(16) << 20;  // and at most once per kFlushIntervalMs: a kill loses about this much
constexpr qint64 kFlushIntervalMs = 1000;
} // namespace

ProgressRecord::ProgressRecord(QString path, QString identity, qint64 size, QString dataFile)
    : m_path(std::move(path)), m_identity(std::move(identity)), m_size(size), m_dataFile(std::move(dataFile))
{
    m_sinceFlush.start();
}

ProgressRecord::~ProgressRecord()
{
    waitForBackground();
}

void ProgressRecord::waitForBackground()
{
    m_background.waitForFinished();
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
    QMutexLocker lock(&m_mutex);
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
    QMutexLocker lock(&m_mutex);
    for (const RangeSet::Range &r : m_recorded.ranges())
        out << qMakePair(r.begin, r.end);
    return out;
}

void ProgressRecord::verified(qint64 begin, qint64 end, int fd)
{
    if (begin >= end)
        return;
    m_unflushed.add(begin, end);
    m_unflushedBytes += end - begin;
    if (m_unflushedBytes < kFlushEvery || m_sinceFlush.elapsed() < kFlushIntervalMs || fd < 0 || m_background.isRunning())
        return;
    // The receiving thread goes on; the disk is waited for on the blocking pool. One flush at a time, so
    // records are written in order.
    m_sinceFlush.restart();
    RangeSet batch = m_unflushed;
    m_unflushed.clear();
    m_unflushedBytes = 0;
    m_background = QtConcurrent::run(blockingPool(), [this, fd, batch] { writeOut(fd, batch); });
}

void ProgressRecord::flush(int fd)
{
    waitForBackground();
    RangeSet batch = m_unflushed;
    m_unflushed.clear();
    m_unflushedBytes = 0;
    writeOut(fd, batch);
}

void ProgressRecord::writeOut(int fd, const RangeSet &add)
{
    // The bytes reach the disk first (and the allocation of their blocks: fdatasync, not sync_file_range);
    // only then does the record claim them.
    if (fd >= 0 && !add.ranges().empty() && ::fdatasync(fd) != 0)
        return;  // left unrecorded: fetched again next time
    QJsonArray ranges;
    {
        QMutexLocker lock(&m_mutex);
        for (const RangeSet::Range &r : add.ranges())
            m_recorded.add(r.begin, r.end);
        for (const RangeSet::Range &r : m_recorded.ranges())
            ranges.append(QJsonArray{QString::number(r.begin), QString::number(r.end)});
    }
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
    waitForBackground();
    m_unflushed.clear();
    m_unflushedBytes = 0;
    QFile::remove(m_path);
}

} // namespace spectrum
