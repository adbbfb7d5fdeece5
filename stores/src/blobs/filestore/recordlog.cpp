// SPDX-License-Identifier: Apache-2.0
// Entries as JSON lines: the journal of caches made before the index was a database (put and del records, taken
// over at their first open by this version), and the log of deferred rows (put records, appended without a sync
// and emptied once the index has them; replayed after a kill). opening.cpp reads both; index.cpp appends.

#include "blobs/filestore/state.h"

#include "spectrum/core/logging.h"
#include "spectrum/transfer/hashtree.h"

#include <QFile>
#include <QJsonDocument>

namespace spectrum::cachedisk {

namespace {

QJsonObject putRecord(const Entry &e)
{
    QJsonObject o;
    o.insert(QStringLiteral("op"), QStringLiteral("put"));
    o.insert(QStringLiteral("key"), e.info.key);
    o.insert(QStringLiteral("version"), QString::number(e.info.version));
    o.insert(QStringLiteral("size"), QString::number(e.info.size));
    if (!e.info.sha256.isEmpty())
        o.insert(QStringLiteral("sha256"), QString::fromLatin1(e.info.sha256.toHex()));
    if (!e.check.isEmpty())
        o.insert(QStringLiteral("xxh3"), QString::fromLatin1(e.check.toHex()));
    // A blob of one leaf has its SHA-256 as its tree: only longer trees are written.
    if (hashtree::leafCount(e.info.size) > 1 && hashtree::fits(e.info.tree, e.info.size))
        o.insert(QStringLiteral("tree"), QString::fromLatin1(e.info.tree.toBase64()));
    o.insert(QStringLiteral("committed"), e.info.committed.toMSecsSinceEpoch());
    o.insert(QStringLiteral("access"), e.lastAccessMs);
    if (e.info.dicom.isValid())
        o.insert(QStringLiteral("dicom"), e.info.dicom.toJson());
    if (!e.unsyncedBoot.isEmpty())
        o.insert(QStringLiteral("unsynced"), e.unsyncedBoot);
    if (e.pack) {
        o.insert(QStringLiteral("pack"), QString::number(e.pack));
        o.insert(QStringLiteral("offset"), QString::number(e.offset));
    }
    return o;
}

bool entryFromRecord(const QJsonObject &o, Entry *e)
{
    bool okVersion = false, okSize = false;
    e->info.key = o.value(QStringLiteral("key")).toString();
    e->info.version = o.value(QStringLiteral("version")).toString().toULongLong(&okVersion);
    e->info.size = o.value(QStringLiteral("size")).toString().toLongLong(&okSize);
    e->info.sha256 = QByteArray::fromHex(o.value(QStringLiteral("sha256")).toString().toLatin1());
    e->check = QByteArray::fromHex(o.value(QStringLiteral("xxh3")).toString().toLatin1());
    // A tree that does not fit the size is not trusted: it is computed again when asked for.
    e->info.tree = QByteArray::fromBase64(o.value(QStringLiteral("tree")).toString().toLatin1());
    if (!hashtree::fits(e->info.tree, e->info.size))
        e->info.tree.clear();
    completeTree(&e->info);
    e->info.committed = QDateTime::fromMSecsSinceEpoch(qint64(o.value(QStringLiteral("committed")).toDouble()), Qt::UTC);
    e->lastAccessMs = qint64(o.value(QStringLiteral("access")).toDouble());
    e->info.dicom = DicomIdentity::fromJson(o.value(QStringLiteral("dicom")).toObject());
    e->unsyncedBoot = o.value(QStringLiteral("unsynced")).toString();
    bool okPack = true, okOffset = true;
    if (o.contains(QStringLiteral("pack"))) {
        e->pack = o.value(QStringLiteral("pack")).toString().toULongLong(&okPack);
        e->offset = o.value(QStringLiteral("offset")).toString().toLongLong(&okOffset);
        okPack = okPack && e->pack > 0 && okOffset && e->offset >= 0 && e->offset % kPackAlign == 0;
    }
    const bool digests = (e->info.sha256.isEmpty() || e->info.sha256.size() == 32) && (e->check.isEmpty() || e->check.size() == 16)
        && !(e->info.sha256.isEmpty() && e->check.isEmpty());
    return okVersion && okSize && okPack && digests && e->info.size >= 0 && BlobStore::validateKey(e->info.key).code() == ErrorCode::None;
}

} // namespace

QByteArray recordLine(const Entry &e)
{
    return QJsonDocument(putRecord(e)).toJson(QJsonDocument::Compact) + '\n';
}

Result<QList<Entry>> readRecords(const QString &path)
{
    // Journal order is use order: compaction wrote entries least recently used first, and every later put moved
    // its key to the end. A torn last line (a crash during an append) is expected and skipped.
    QFile journal(path);
    if (!journal.open(QIODevice::ReadOnly))
        return Error(ErrorCode::Corrupt, QStringLiteral("cannot read %1: %2").arg(path, journal.errorString()));
    QHash<QString, Entry> entries;
    QHash<QString, quint64> order;
    quint64 at = 0;
    int lineNo = 0, skipped = 0;
    while (!journal.atEnd()) {
        const QByteArray line = journal.readLine();
        ++lineNo;
        QJsonParseError perr;
        const QJsonObject o = QJsonDocument::fromJson(line, &perr).object();
        const QString op = o.value(QStringLiteral("op")).toString();
        Entry e;
        if (perr.error == QJsonParseError::NoError && op == QLatin1String("put") && entryFromRecord(o, &e)) {
            order.insert(e.info.key, ++at);  // an update is also a use: to the end
            entries.insert(e.info.key, e);
        } else if (perr.error == QJsonParseError::NoError && op == QLatin1String("del")) {
            entries.remove(o.value(QStringLiteral("key")).toString());
        } else {
            ++skipped;
        }
    }
    if (skipped > 0)
        qCWarning(lcStores) << path << ": skipped" << skipped << "unreadable record(s) of" << lineNo;
    QList<Entry> out = entries.values();
    std::sort(out.begin(), out.end(), [&](const Entry &a, const Entry &b) { return order.value(a.info.key) < order.value(b.info.key); });
    return out;
}

} // namespace spectrum::cachedisk
