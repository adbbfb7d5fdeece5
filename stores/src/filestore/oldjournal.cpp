// The journal of caches made before the index was a database: one JSON record per line (put, del), replayed
// once at the first open by this version, whose index then takes its entries over (opening.cpp).

#include "filestore/state.h"

#include "spectrum/core/logging.h"
#include "spectrum/transfer/hashtree.h"

#include <QFile>
#include <QJsonDocument>

namespace spectrum::cachedisk {

namespace {

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

Result<QList<Entry>> readOldJournal(const QString &path)
{
    // Journal order is use order: compaction wrote entries least recently used first, and every later put moved
    // its key to the end. A torn last line (a crash during an append) is expected and skipped.
    QFile journal(path);
    if (!journal.open(QIODevice::ReadOnly))
        return Error(ErrorCode::Corrupt, QStringLiteral("cannot read the cache's old index %1: %2").arg(path, journal.errorString()));
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
        qCWarning(lcStores) << "old cache index" << path << ": skipped" << skipped << "unreadable record(s) of" << lineNo;
    QList<Entry> out = entries.values();
    std::sort(out.begin(), out.end(), [&](const Entry &a, const Entry &b) { return order.value(a.info.key) < order.value(b.info.key); });
    return out;
}

} // namespace spectrum::cachedisk
