// SPDX-License-Identifier: Apache-2.0
// MemoryStore: the BlobStore contract in memory, least recently used evicted first under its budget.

#include "spectrum/stores/blobs/memorystore.h"

#include <QSignalSpy>
#include <QTest>

using namespace spectrum;

namespace {
Result<BlobInfo> putBlob(BlobStore &store, const QString &key, const QByteArray &bytes)
{
    Result<BlobWriterPtr> w = runSync(store.reserve(key, bytes.size()));
    if (!w.isOk())
        return w.error();
    if (Error e = runSync(store.write(w.value(), 0, ByteView(bytes))).error(); e.isError())
        return e;
    return runSync(store.commit(w.value()));
}
QByteArray readBlob(BlobStore &store, const QString &key, ByteRange range = ByteRange::all())
{
    Result<ByteView> v = runSync(store.read(key, range));
    return v.isOk() ? v.value().toByteArray() : QByteArray("<error: ") + v.error().toString().toUtf8() + '>';
}
} // namespace

class tst_MemoryStore : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void roundTripAndRanges()
    {
        MemoryStore store(0);
        const QByteArray bytes("0123456789");
        Result<BlobInfo> info = putBlob(store, QStringLiteral("a"), bytes);
        QVERIFY2(info.isOk(), qPrintable(info.error().toString()));
        QCOMPARE(info.value().size, 10);
        QCOMPARE(info.value().sha256.size(), 32);
        QCOMPARE(readBlob(store, QStringLiteral("a")), bytes);
        QCOMPARE(readBlob(store, QStringLiteral("a"), ByteRange::of(3, 7)), QByteArray("3456"));
        QCOMPARE(readBlob(store, QStringLiteral("a"), ByteRange::of(10, 10)), QByteArray());
        QCOMPARE(runSync(store.read(QStringLiteral("a"), ByteRange::of(5, 11))).error().code(), ErrorCode::OutOfRange);
        QCOMPARE(runSync(store.read(QStringLiteral("nope"))).error().code(), ErrorCode::NotFound);
        QCOMPARE(runSync(store.stat(QStringLiteral("a"))).value().size, 10);
    }

    void evictsLeastRecentlyUsedUnderBudget()
    {
        MemoryStore store(300);
        QSignalSpy removed(&store, &BlobStore::blobRemoved);
        const QByteArray hundred(100, 'x');
        QVERIFY(putBlob(store, QStringLiteral("a"), hundred).isOk());
        QVERIFY(putBlob(store, QStringLiteral("b"), hundred).isOk());
        QVERIFY(putBlob(store, QStringLiteral("c"), hundred).isOk());
        QCOMPARE(store.usage().bytes, 300);
        readBlob(store, QStringLiteral("a"));  // a is now the most recently used; b the least
        QVERIFY(putBlob(store, QStringLiteral("d"), hundred).isOk());
        QCOMPARE(runSync(store.stat(QStringLiteral("b"))).error().code(), ErrorCode::NotFound);
        QVERIFY(runSync(store.stat(QStringLiteral("a"))).isOk());
        QVERIFY(runSync(store.stat(QStringLiteral("c"))).isOk());
        QTRY_COMPARE(removed.count(), 1);
        QCOMPARE(removed.first().first().toString(), QStringLiteral("b"));
        QVERIFY(putBlob(store, QStringLiteral("e"), QByteArray(200, 'y')).isOk());  // evicts c, then a
        QCOMPARE(runSync(store.stat(QStringLiteral("c"))).error().code(), ErrorCode::NotFound);
        QCOMPARE(runSync(store.stat(QStringLiteral("a"))).error().code(), ErrorCode::NotFound);
        QVERIFY(runSync(store.stat(QStringLiteral("d"))).isOk());
        QVERIFY(store.usage().bytes <= 300);
    }

    void refusesWhatCanNeverFit()
    {
        MemoryStore store(100);
        QCOMPARE(runSync(store.reserve(QStringLiteral("big"), 101)).error().code(), ErrorCode::DiskFull);
    }

    void aViewSurvivesEviction()
    {
        MemoryStore store(100);
        QVERIFY(putBlob(store, QStringLiteral("a"), QByteArray(100, 'a')).isOk());
        Result<ByteView> view = runSync(store.read(QStringLiteral("a")));
        QVERIFY(putBlob(store, QStringLiteral("b"), QByteArray(100, 'b')).isOk());  // evicts a
        QCOMPARE(view.value().toByteArray(), QByteArray(100, 'a'));
    }

    void aCommittedBlobCannotBeChangedThroughItsWriter()
    {
        MemoryStore store(0);
        Result<BlobWriterPtr> w = runSync(store.reserve(QStringLiteral("k"), 3));
        QVERIFY(!w.value()->writeAt(0, "abc", 3).isError());
        QVERIFY(runSync(store.commit(w.value())).isOk());
        QCOMPARE(w.value()->writeAt(0, "xyz", 3).code(), ErrorCode::InvalidArgument);
        QVERIFY(w.value()->data() == nullptr);
        QCOMPARE(readBlob(store, QStringLiteral("k")), QByteArray("abc"));
    }

    void rejectsBadKeys()
    {
        MemoryStore store(0);
        QCOMPARE(runSync(store.reserve(QStringLiteral("../x"), 1)).error().code(), ErrorCode::InvalidKey);
    }

    void checksTheExpectedDigest()
    {
        MemoryStore store(0);
        Result<BlobWriterPtr> w = runSync(store.reserve(QStringLiteral("k"), 3));
        QVERIFY(w.isOk());
        QVERIFY(!w.value()->writeAt(0, "abc", 3).isError());
        CommitOptions opts;
        opts.expectedSha256 = QByteArray(32, '\0');
        QCOMPARE(runSync(store.commit(w.value(), opts)).error().code(), ErrorCode::Corrupt);
        QCOMPARE(runSync(store.stat(QStringLiteral("k"))).error().code(), ErrorCode::NotFound);
    }
};

QTEST_GUILESS_MAIN(tst_MemoryStore)
#include "tst_memorystore.moc"
