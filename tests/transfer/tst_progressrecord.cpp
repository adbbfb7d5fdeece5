// SPDX-License-Identifier: Apache-2.0
// ProgressRecord: what a resumable transfer may skip after an interruption. Ranges verified and written but not
// yet synced are trusted again only under the same kernel boot (a killed process loses nothing the kernel holds;
// a machine that went down may have lost them); synced ranges are trusted always.

#include "spectrum/core/bootid.h"
#include "spectrum/transfer/progressrecord.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;

namespace {
constexpr qint64 kSize = qint64(32) << 20;
using Ranges = QList<QPair<qint64, qint64>>;

QJsonObject readRecord(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
}

void writeRecord(const QString &path, const QJsonObject &o)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(QJsonDocument(o).toJson());
}

Ranges loaded(const QString &path, const QString &identity = QStringLiteral("v1 abc"))
{
    ProgressRecord r(path, identity, kSize);
    return r.load() ? r.ranges() : Ranges{{-1, -1}};
}
} // namespace

class tst_ProgressRecord : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void unsyncedRangesCountOnlyInTheSameBoot();
    void syncedRangesCountAfterAnyCrash();
    void anotherIdentityStartsOver();
};

void tst_ProgressRecord::unsyncedRangesCountOnlyInTheSameBoot()
{
    if (kernelBootId().isEmpty())
        QSKIP("this system has no boot ID: every range is synced before it is recorded");
    QTemporaryDir dir;
    const QString data = dir.filePath(QStringLiteral("blob.part")), path = dir.filePath(QStringLiteral("blob.resume"));
    QFile file(data);
    QVERIFY(file.open(QIODevice::ReadWrite) && file.resize(kSize));
    {
        ProgressRecord record(path, QStringLiteral("v1 abc"), kSize, QStringLiteral("blob.part"));
        record.flush(file.handle());  // the record exists from the start, empty
        record.verified(0, qint64(9) << 20, file.handle());  // past the noting threshold: noted, not synced
        record.waitForBackground();
        // The process dies here (no flush, no goodbye): the record is all that is left.
    }
    const QJsonObject o = readRecord(path);
    QCOMPARE(o.value(QStringLiteral("boot")).toString(), kernelBootId());
    QVERIFY(o.value(QStringLiteral("ranges")).toArray().isEmpty());
    QCOMPARE(o.value(QStringLiteral("unsynced")).toArray().size(), 1);
    // Read again in this boot: the noted bytes are in the page cache, not fetched again.
    QCOMPARE(loaded(path), (Ranges{{0, qint64(9) << 20}}));
    // Read after the machine went down (another boot ID): not trusted.
    QJsonObject otherBoot = o;
    otherBoot.insert(QStringLiteral("boot"), QStringLiteral("00000000-0000-0000-0000-000000000000"));
    writeRecord(path, otherBoot);
    QCOMPARE(loaded(path), Ranges{});
}

void tst_ProgressRecord::syncedRangesCountAfterAnyCrash()
{
    QTemporaryDir dir;
    const QString data = dir.filePath(QStringLiteral("blob.part")), path = dir.filePath(QStringLiteral("blob.resume"));
    QFile file(data);
    QVERIFY(file.open(QIODevice::ReadWrite) && file.resize(kSize));
    {
        ProgressRecord record(path, QStringLiteral("v1 abc"), kSize, QStringLiteral("blob.part"));
        record.verified(0, qint64(1) << 20, file.handle());
        record.verified(qint64(4) << 20, qint64(6) << 20, file.handle());
        record.flush(file.handle());  // an orderly stop: synced, then recorded as such
    }
    const QJsonObject o = readRecord(path);
    QVERIFY(!o.contains(QStringLiteral("unsynced")));
    QCOMPARE(o.value(QStringLiteral("ranges")).toArray().size(), 2);
    QJsonObject otherBoot = o;
    otherBoot.insert(QStringLiteral("boot"), QStringLiteral("00000000-0000-0000-0000-000000000000"));
    writeRecord(path, otherBoot);
    QCOMPARE(loaded(path), (Ranges{{0, qint64(1) << 20}, {qint64(4) << 20, qint64(6) << 20}}));
    // Resumed and continued: the next ranges join the earlier ones.
    {
        ProgressRecord record(path, QStringLiteral("v1 abc"), kSize);
        QVERIFY(record.load());
        QCOMPARE(record.dataFile(), QStringLiteral("blob.part"));
        record.verified(qint64(1) << 20, qint64(4) << 20, file.handle());
        record.flush(file.handle());
    }
    QCOMPARE(loaded(path), (Ranges{{0, qint64(6) << 20}}));
}

void tst_ProgressRecord::anotherIdentityStartsOver()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("blob.resume"));
    {
        ProgressRecord record(path, QStringLiteral("v1 abc"), kSize, QStringLiteral("blob.part"));
        record.verified(0, 100, -1);
        record.flush(-1);
    }
    QCOMPARE(loaded(path, QStringLiteral("v2 def")), (Ranges{{-1, -1}}));  // not loaded: another version of the blob
    writeRecord(path, QJsonObject{{QStringLiteral("identity"), QStringLiteral("v1 abc")}, {QStringLiteral("size"), QString::number(kSize)},
                                  {QStringLiteral("ranges"), QJsonArray{QJsonArray{QStringLiteral("-5"), QStringLiteral("10")},
                                                                        QJsonArray{QStringLiteral("0"), QString::number(kSize + 1)}}}});
    QCOMPARE(loaded(path), Ranges{});  // ranges outside the blob are ignored
}

QTEST_GUILESS_MAIN(tst_ProgressRecord)
#include "tst_progressrecord.moc"
