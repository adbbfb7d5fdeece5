// SPDX-License-Identifier: Apache-2.0
#include "spectrum/transfer/progressrecord.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtConcurrent>

#include "spectrum/core/bootid.h"
#include "spectrum/core/job.h"

#include <unistd.h>

namespace spectrum {

namespace {
constexpr qint64 kSyncEvery = qint64(16) << 20;  // and at most once per kSyncIntervalMs: a power cut loses about this much
constexpr qint64 kSyncIntervalMs = 1000;
constexpr qint64 kNoteIntervalMs = 100;          // or kNoteEvery bytes, whichever comes first: a kill loses about this much
constexpr qint64 kNoteEvery = qint64(8) << 20;

QJsonArray toJson(const RangeSet &set)
{
    QJsonArray out;
    for (const RangeSet::Range &r : set.ranges())
        out.append(QJsonArray{QString::number(r.begin), QString::number(r.end)});
    return out;
}

void addFromJson(RangeSet &set, const QJsonValue &value, qint64 size)
{
    for (const QJsonValue &v : value.toArray()) {
        const qint64 b = v.toArray().at(0).toString().toLongLong(), e = v.toArray().at(1).toString().toLongLong();
        if (0 <= b && b < e && e <= size)
            set.add(b, e);
    }
}

/// Writes `bytes` to a new file renamed over `path` (atomic against a kill); synced first when `sync`.
bool replaceFile(const QString &path, const QByteArray &bytes, bool sync)
{
    const QString temporary = path + QStringLiteral(".new");
    QFile f(temporary);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size() || !f.flush()
        || (sync && ::fdatasync(f.handle()) != 0)) {
        f.remove();
        return false;
    }
    f.close();
    return ::rename(QFile::encodeName(temporary).constData(), QFile::encodeName(path).constData()) == 0;
}
} // namespace

ProgressRecord::ProgressRecord(QString path, QString identity, qint64 size, QString dataFile)
    : m_path(std::move(path)), m_identity(std::move(identity)), m_size(size), m_dataFile(std::move(dataFile))
{
    m_sinceSync.start();
    m_sinceNote.start();
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
    m_durable.clear();
    m_syncing.clear();
    m_pending.clear();
    m_pendingBytes = m_notedBytes = 0;
    addFromJson(m_durable, o.value(QStringLiteral("ranges")), m_size);
    // Written by a process of this boot and not synced: still in the page cache, whatever became of that process.
    if (!kernelBootId().isEmpty() && o.value(QStringLiteral("boot")).toString() == kernelBootId())
        addFromJson(m_pending, o.value(QStringLiteral("unsynced")), m_size);
    return true;
}

QList<QPair<qint64, qint64>> ProgressRecord::ranges() const
{
    RangeSet all = m_pending;
    {
        QMutexLocker lock(&m_mutex);
        for (const RangeSet *s : {&m_durable, &m_syncing}) {
            for (const RangeSet::Range &r : s->ranges())
                all.add(r.begin, r.end);
        }
    }
    QList<QPair<qint64, qint64>> out;
    for (const RangeSet::Range &r : all.ranges())
        out << qMakePair(r.begin, r.end);
    return out;
}

void ProgressRecord::verified(qint64 begin, qint64 end, int fd)
{
    if (begin >= end)
        return;
    m_pending.add(begin, end);
    m_pendingBytes += end - begin;
    if (fd < 0 || m_background.isRunning())
        return;
    if (m_pendingBytes >= kSyncEvery && m_sinceSync.elapsed() >= kSyncIntervalMs) {
        // The receiving thread goes on; the disk is waited for on the blocking pool. One at a time, so
        // records are written in order.
        m_sinceSync.restart();
        m_sinceNote.restart();
        RangeSet batch = m_pending;
        m_pending.clear();
        m_pendingBytes = m_notedBytes = 0;
        {
            QMutexLocker lock(&m_mutex);
            m_syncing = batch;
        }
        m_background = QtConcurrent::run(blockingPool(), [this, fd, batch] { writeOut(fd, batch, RangeSet()); });
    } else if ((m_sinceNote.elapsed() >= kNoteIntervalMs || m_pendingBytes - m_notedBytes >= kNoteEvery) && !kernelBootId().isEmpty()) {
        m_sinceNote.restart();
        m_notedBytes = m_pendingBytes;
        m_background = QtConcurrent::run(blockingPool(), [this, noted = m_pending] { writeOut(-1, RangeSet(), noted); });
    }
}

void ProgressRecord::flush(int fd)
{
    waitForBackground();
    if (fd < 0) {
        writeOut(-1, RangeSet(), m_pending);  // nothing to sync: what is pending stays so
        return;
    }
    RangeSet batch = m_pending;
    m_pending.clear();
    m_pendingBytes = m_notedBytes = 0;
    writeOut(fd, batch, RangeSet());
}

void ProgressRecord::writeOut(int fd, const RangeSet &toSync, const RangeSet &unsynced)
{
    // The bytes reach the disk first (and the allocation of their blocks: fdatasync, not sync_file_range);
    // only then does the record claim them as durable.
    const bool sync = fd >= 0 && !toSync.isEmpty();
    if (sync && ::fdatasync(fd) != 0) {
        QMutexLocker lock(&m_mutex);
        m_syncing.clear();
        return;  // left unrecorded: fetched again next time
    }
    QJsonObject record{{QStringLiteral("identity"), m_identity}, {QStringLiteral("size"), QString::number(m_size)},
                       {QStringLiteral("file"), m_dataFile}};
    {
        QMutexLocker lock(&m_mutex);
        for (const RangeSet::Range &r : toSync.ranges())
            m_durable.add(r.begin, r.end);
        m_syncing.clear();
        record.insert(QStringLiteral("ranges"), toJson(m_durable));
    }
    if (!unsynced.isEmpty()) {
        record.insert(QStringLiteral("boot"), kernelBootId());
        record.insert(QStringLiteral("unsynced"), toJson(unsynced));
    }
    replaceFile(m_path, QJsonDocument(record).toJson(QJsonDocument::Compact), sync);
}

void ProgressRecord::remove()
{
    waitForBackground();
    m_pending.clear();
    m_pendingBytes = m_notedBytes = 0;
    QFile::remove(m_path);
}

} // namespace spectrum
