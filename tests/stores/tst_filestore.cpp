// SPDX-License-Identifier: Apache-2.0
// FileStore: the workstation's disk cache — persistence, atomic commits, crash leftovers, eviction, keys.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/stores/blobs/filestore.h"
#include "filestoresupport.h"
#include "testsupport.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QRegularExpression>
#include <QtConcurrent/QtConcurrentRun>
#include <QSignalSpy>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <atomic>

#include <fcntl.h>
#include <sys/stat.h>

using namespace spectrum;
using namespace spectrum::test;

class tst_FileStore : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void roundTripRangesAndEmptyBlobs();
    void readsAreMappedViewsThatOutliveReplacement();
    void readersSeeTheOldVersionDuringAWrite();
    void theNewerOfTwoReservationsStaysWhicheverCommitsLast();
    void persistsAcrossReopen();
    void evictsLeastRecentlyUsedUnderBudget();
    void lruOrderSurvivesReopen();
    void badKeysAreRejected_data();
    void badKeysAreRejected();
    void announcementsGoOnlyToListeners();
    void dicomIdentityIsIndexedAndQueryable();
    void expectedDigestMismatchCommitsNothing();
    void oversizedBlobIsRefused();
    void abandonedReservationLeavesNothing();
    void closingReleasesTheCacheEvenWhileJobsLinger();
    void concurrentReadersNeverSeeAMix();
    void putStoresWholeBlobsFromMemory();
};

void tst_FileStore::roundTripRangesAndEmptyBlobs()
{
    QTemporaryDir dir;
    auto store = openStore(dir.path());
    QVERIFY(store);
    const QByteArray bytes = pattern(100000, 1);
    Result<BlobInfo> info = putBlob(*store, QStringLiteral("blob-1"), bytes);
    QVERIFY2(info.isOk(), qPrintable(info.error().toString()));
    QCOMPARE(info.value().size, 100000);
    QCOMPARE(readBlob(*store, QStringLiteral("blob-1")), bytes);
    QCOMPARE(readBlob(*store, QStringLiteral("blob-1"), ByteRange::of(4095, 8193)), bytes.mid(4095, 4098));
    QCOMPARE(readBlob(*store, QStringLiteral("blob-1"), ByteRange::of(99999, -1)), bytes.right(1));
    QCOMPARE(runSync(store->read(QStringLiteral("blob-1"), ByteRange::of(-1, 5))).error().code(), ErrorCode::OutOfRange);
    QCOMPARE(runSync(store->read(QStringLiteral("blob-1"), ByteRange::of(0, 100001))).error().code(), ErrorCode::OutOfRange);

    QVERIFY(putBlob(*store, QStringLiteral("empty"), QByteArray()).isOk());
    QCOMPARE(runSync(store->stat(QStringLiteral("empty"))).value().size, 0);
    Result<ByteView> empty = runSync(store->read(QStringLiteral("empty")));
    QVERIFY(empty.isOk());
    QCOMPARE(empty.value().size(), 0);
    QVERIFY(runSync(store->remove(QStringLiteral("empty"))).isOk());
    QCOMPARE(runSync(store->stat(QStringLiteral("empty"))).error().code(), ErrorCode::NotFound);
    QCOMPARE(store->usage().blobs, 1);
    QCOMPARE(store->usage().bytes, 100000);
}

void tst_FileStore::readsAreMappedViewsThatOutliveReplacement()
{
    QTemporaryDir dir;
    auto store = openStore(dir.path());
    const QByteArray v1 = pattern(50000, 3), v2 = pattern(50000, 9);
    QVERIFY(putBlob(*store, QStringLiteral("k"), v1).isOk());
    Result<ByteView> view = runSync(store->read(QStringLiteral("k")));
    QVERIFY(view.isOk());
    const char *before = view.value().data();
    Result<ByteView> again = runSync(store->read(QStringLiteral("k")));
    QVERIFY(again.value().data() != nullptr);
    QVERIFY(putBlob(*store, QStringLiteral("k"), v2).isOk());  // replaces and deletes the old file
    QCOMPARE(view.value().data(), before);
    QCOMPARE(view.value().toByteArray(), v1);                   // the old mapping still reads the old bytes
    QCOMPARE(readBlob(*store, QStringLiteral("k")), v2);
}

void tst_FileStore::readersSeeTheOldVersionDuringAWrite()
{
    QTemporaryDir dir;
    auto store = openStore(dir.path());
    const QByteArray v1 = pattern(20000, 5), v2 = pattern(30000, 6);
    const Result<BlobInfo> first = putBlob(*store, QStringLiteral("k"), v1);
    QVERIFY(first.isOk());
    Result<BlobWriterPtr> w = runSync(store->reserve(QStringLiteral("k"), v2.size()));
    QVERIFY(w.isOk());
    QVERIFY(!w.value()->writeAt(0, v2.constData(), 10000).isError());
    QCOMPARE(readBlob(*store, QStringLiteral("k")), v1);              // half-written v2 is invisible
    QCOMPARE(runSync(store->stat(QStringLiteral("k"))).value().sha256, first.value().sha256);
    QVERIFY(!w.value()->writeAt(10000, v2.constData() + 10000, 20000).isError());
    QVERIFY(runSync(store->commit(w.value())).isOk());
    QCOMPARE(readBlob(*store, QStringLiteral("k")), v2);
    QCOMPARE(runSync(store->commit(w.value())).error().code(), ErrorCode::InvalidArgument);  // only once
}

// Two reservations of one key (two fetches of one instance, a pull that restarted): the one reserved later holds
// the newer bytes, and it stays even when the older one commits after it — committed one at a time, or the newer
// one deferred (a fetched instance, not synced) and written into the index by the older one's commit. The older
// one's bytes leave the disk. As after a reopen.
void tst_FileStore::theNewerOfTwoReservationsStaysWhicheverCommitsLast()
{
    QTemporaryDir dir;
    const QByteArray older = pattern(200000, 7), newer = pattern(210000, 8), small = pattern(3000, 9);
    quint64 kept = 0;
    {
        auto store = openStore(dir.path());
        auto reserveWhole = [&](const QString &key, const QByteArray &bytes) -> BlobWriterPtr {
            Result<BlobWriterPtr> w = runSync(store->reserve(key, bytes.size()));
            if (!w.isOk() || w.value()->writeAt(0, bytes.constData(), bytes.size()).isError())
                return nullptr;
            return w.value();
        };
        const BlobWriterPtr first = reserveWhole(QStringLiteral("a"), older), second = reserveWhole(QStringLiteral("a"), newer);
        QVERIFY(first && second);
        const Result<BlobInfo> newerIn = runSync(store->commit(second));
        QVERIFY(newerIn.isOk());
        QVERIFY(runSync(store->commit(first)).isOk());
        QCOMPARE(readBlob(*store, QStringLiteral("a")), newer);
        QCOMPARE(runSync(store->stat(QStringLiteral("a"))).value().version, newerIn.value().version);
        kept = newerIn.value().version;

        // The newer one small and deferred (in memory and the log), the older one's commit writing it in first.
        const BlobWriterPtr third = reserveWhole(QStringLiteral("b"), older);
        QVERIFY(third);
        CommitOptions deferred;
        deferred.durable = false;
        QVERIFY(runSync(store->put(QStringLiteral("b"), ByteView(small), deferred)).isOk());
        QVERIFY(runSync(store->commit(third)).isOk());
        QCOMPARE(readBlob(*store, QStringLiteral("b")), small);

        // The older one committed after the newer: superseded, its bytes given back, and nothing of it left to
        // replay (a superseded deferred put — packed, only under a race — writes no line in the log of deferred
        // rows: an open would put it back once the newer one is gone, and check every file while the log is not
        // empty).
        const BlobWriterPtr fourth = reserveWhole(QStringLiteral("c"), older);
        QVERIFY(fourth);
        QVERIFY(runSync(store->put(QStringLiteral("c"), ByteView(newer))).isOk());
        QVERIFY(runSync(store->commit(fourth)).isOk());
        QCOMPARE(readBlob(*store, QStringLiteral("c")), newer);
        QVERIFY(runSync(store->remove(QStringLiteral("c"))).isOk());
        QCOMPARE(runSync(store->stat(QStringLiteral("c"))).error().code(), ErrorCode::NotFound);
    }
    QCOMPARE(QFileInfo(dir.filePath(QStringLiteral("deferred.log"))).size(), 0);  // closed cleanly: nothing to replay
    auto store = openStore(dir.path());
    QCOMPARE(runSync(store->stat(QStringLiteral("c"))).error().code(), ErrorCode::NotFound);
    QCOMPARE(readBlob(*store, QStringLiteral("a")), newer);
    QCOMPARE(runSync(store->stat(QStringLiteral("a"))).value().version, kept);
    QCOMPARE(readBlob(*store, QStringLiteral("b")), small);
    // Only the newer one's file is left of "a", and none of "b" (small blobs live in packs).
    const QStringList files = QDir(dir.filePath(QStringLiteral("objects"))).entryList(QDir::Files);
    QCOMPARE(files.filter(QRegularExpression(QStringLiteral("^a~"))).size(), 1);
    QCOMPARE(files.filter(QRegularExpression(QStringLiteral("^b~"))).size(), 0);
}

void tst_FileStore::persistsAcrossReopen()
{
    QTemporaryDir dir;
    const QByteArray a = pattern(1000, 1), b = pattern(2000, 2);
    {
        auto store = openStore(dir.path());
        QVERIFY(putBlob(*store, QStringLiteral("a"), a).isOk());
        QVERIFY(putBlob(*store, QStringLiteral("b"), b).isOk());
        QVERIFY(putBlob(*store, QStringLiteral("gone"), a).isOk());
        QVERIFY(runSync(store->remove(QStringLiteral("gone"))).isOk());
    }
    auto store = openStore(dir.path());
    QVERIFY(store);
    QCOMPARE(store->usage().blobs, 2);
    QCOMPARE(store->usage().bytes, 3000);
    QCOMPARE(readBlob(*store, QStringLiteral("a")), a);
    QCOMPARE(readBlob(*store, QStringLiteral("b")), b);
    QCOMPARE(runSync(store->stat(QStringLiteral("gone"))).error().code(), ErrorCode::NotFound);
    // New versions keep counting up after a reopen.
    const quint64 before = runSync(store->stat(QStringLiteral("b"))).value().version;
    QVERIFY(putBlob(*store, QStringLiteral("c"), a).value().version > before);
}

void tst_FileStore::evictsLeastRecentlyUsedUnderBudget()
{
    QTemporaryDir dir;
    auto store = openStore(dir.path(), 3000);
    QSignalSpy removed(store.get(), &BlobStore::blobRemoved);
    QVERIFY(putBlob(*store, QStringLiteral("a"), pattern(1000, 1)).isOk());
    QVERIFY(putBlob(*store, QStringLiteral("b"), pattern(1000, 2)).isOk());
    QVERIFY(putBlob(*store, QStringLiteral("c"), pattern(1000, 3)).isOk());
    readBlob(*store, QStringLiteral("a"));
    QVERIFY(putBlob(*store, QStringLiteral("d"), pattern(1000, 4)).isOk());  // evicts b
    QCOMPARE(runSync(store->stat(QStringLiteral("b"))).error().code(), ErrorCode::NotFound);
    QVERIFY(putBlob(*store, QStringLiteral("e"), pattern(2000, 5)).isOk());  // evicts c, then a
    QCOMPARE(runSync(store->stat(QStringLiteral("c"))).error().code(), ErrorCode::NotFound);
    QCOMPARE(runSync(store->stat(QStringLiteral("a"))).error().code(), ErrorCode::NotFound);
    QVERIFY(runSync(store->stat(QStringLiteral("d"))).isOk());
    QVERIFY(store->usage().bytes <= 3000);
    QTRY_COMPARE(removed.count(), 3);
    QCOMPARE(removed.at(0).at(0).toString(), QStringLiteral("b"));
    QCOMPARE(removed.at(1).at(0).toString(), QStringLiteral("c"));
    QCOMPARE(removed.at(2).at(0).toString(), QStringLiteral("a"));
    // Evicted files are gone from the disk, too.
    QCOMPARE(QDir(dir.path() + QStringLiteral("/objects")).entryList(QDir::Files).size(), 2);
}

void tst_FileStore::lruOrderSurvivesReopen()
{
    QTemporaryDir dir;
    {
        auto store = openStore(dir.path(), 3000);
        QVERIFY(putBlob(*store, QStringLiteral("a"), pattern(1000, 1)).isOk());
        QVERIFY(putBlob(*store, QStringLiteral("b"), pattern(1000, 2)).isOk());
        QVERIFY(putBlob(*store, QStringLiteral("c"), pattern(1000, 3)).isOk());
        readBlob(*store, QStringLiteral("a"));  // order now: b, c, a — all within the same millisecond, likely
    }
    auto store = openStore(dir.path(), 3000);
    QVERIFY(putBlob(*store, QStringLiteral("d"), pattern(1000, 4)).isOk());
    QCOMPARE(runSync(store->stat(QStringLiteral("b"))).error().code(), ErrorCode::NotFound);
    QVERIFY(runSync(store->stat(QStringLiteral("a"))).isOk());
}

void tst_FileStore::badKeysAreRejected_data()
{
    QTest::addColumn<QString>("key");
    QTest::newRow("parent") << QStringLiteral("..");
    QTest::newRow("dot-dot inside") << QStringLiteral("a..b");
    QTest::newRow("escape") << QStringLiteral("../../etc/passwd");
    QTest::newRow("slash") << QStringLiteral("a/b");
    QTest::newRow("absolute") << QStringLiteral("/tmp/x");
    QTest::newRow("backslash") << QStringLiteral("a\\b");
    QTest::newRow("NUL") << QString::fromUtf16(u"a\0b", 3);
    QTest::newRow("empty") << QString();
    QTest::newRow("hidden") << QStringLiteral(".journal");
    QTest::newRow("tilde") << QStringLiteral("a~1");
    QTest::newRow("too long") << QString(201, QLatin1Char('x'));
}

void tst_FileStore::badKeysAreRejected()
{
    QFETCH(QString, key);
    QTemporaryDir parent;
    const QString root = parent.filePath(QStringLiteral("cache"));
    auto store = openStore(root);
    const QStringList before = filesUnder(parent.path());
    QCOMPARE(runSync(store->reserve(key, 10)).error().code(), ErrorCode::InvalidKey);
    QCOMPARE(filesUnder(parent.path()), before);  // nothing was created, inside or outside
    QCOMPARE(runSync(store->read(key)).error().code(), ErrorCode::NotFound);
}

void tst_FileStore::announcementsGoOnlyToListeners()
{
    QTemporaryDir dir;
    auto store = openStore(dir.path());
    // Nobody listens: nothing is announced (not even queued for later; a headless fetch commits hundreds a second).
    QVERIFY(runSync(store->put(QStringLiteral("unheard"), ByteView(pattern(10, 1)))).isOk());
    QStringList committed;
    const QMetaObject::Connection listening = connect(store.get(), &BlobStore::blobCommitted, this,
                                                      [&committed](const BlobInfo &info) { committed << info.key; });
    QSignalSpy removed(store.get(), &BlobStore::blobRemoved);
    QVERIFY(runSync(store->put(QStringLiteral("heard"), ByteView(pattern(10, 2)))).isOk());
    QVERIFY(runSync(store->remove(QStringLiteral("unheard"))).isOk());
    QTRY_COMPARE(committed, QStringList{QStringLiteral("heard")});
    QTRY_COMPARE(removed.count(), 1);
    QCOMPARE(removed.at(0).at(0).toString(), QStringLiteral("unheard"));
    // The last listener disconnects, another comes: it hears what comes after it. (A listener destroyed without
    // disconnecting leaves announcements on — Qt does not tell the store — and they go out as before.)
    QVERIFY(disconnect(listening));
    QVERIFY(runSync(store->put(QStringLiteral("between"), ByteView(pattern(10, 3)))).isOk());
    QSignalSpy again(store.get(), &BlobStore::blobCommitted);
    QVERIFY(runSync(store->put(QStringLiteral("later"), ByteView(pattern(10, 4)))).isOk());
    QTRY_COMPARE(again.count(), 1);
    QCOMPARE(again.at(0).at(0).value<BlobInfo>().key, QStringLiteral("later"));
}

void tst_FileStore::dicomIdentityIsIndexedAndQueryable()
{
    QTemporaryDir dir;
    DemoOptions options;
    options.studies = {DemoStudy::HeadCt, DemoStudy::HeadMr};
    options.ctSlices = 3;
    options.mrSlices = 2;
    QList<DemoInstance> instances;
    DemoArchive::generate(options, [&](DemoInstance &&i) { instances << std::move(i); return Error(); });
    {
        auto store = openStore(dir.path());
        for (const DemoInstance &i : instances)
            QVERIFY(putBlob(*store, i.identity.sopInstanceUid, i.bytes).isOk());
        QVERIFY(putBlob(*store, QStringLiteral("not-dicom"), "plain bytes").isOk());
    }
    auto store = openStore(dir.path());
    BlobQuery byStudy;
    byStudy.studyInstanceUid = DemoArchive::studyUid(DemoStudy::HeadCt);
    Result<QList<BlobInfo>> ct = runSync(store->query(byStudy));
    QVERIFY(ct.isOk());
    QCOMPARE(ct.value().size(), 3);
    for (const BlobInfo &b : ct.value()) {
        QCOMPARE(b.dicom.modality, QStringLiteral("CT"));
        QCOMPARE(b.dicom.patientName, QStringLiteral("DEMO^HEAD PHANTOM"));
        QCOMPARE(b.key, b.dicom.sopInstanceUid);
    }
    BlobQuery byPatient;
    byPatient.patientId = QStringLiteral("DEMO-HEAD-001");
    QCOMPARE(runSync(store->query(byPatient)).value().size(), 5);
    BlobQuery byInstance;
    byInstance.sopInstanceUid = instances.last().identity.sopInstanceUid;
    QCOMPARE(runSync(store->query(byInstance)).value().size(), 1);
    BlobQuery byPrefix;
    byPrefix.keyPrefix = QStringLiteral("not-");
    Result<QList<BlobInfo>> plain = runSync(store->query(byPrefix));
    QCOMPARE(plain.value().size(), 1);
    QVERIFY(!plain.value().first().dicom.isValid());
    BlobQuery limited;
    limited.limit = 2;
    QCOMPARE(runSync(store->query(limited)).value().size(), 2);
}

void tst_FileStore::expectedDigestMismatchCommitsNothing()
{
    QTemporaryDir dir;
    auto store = openStore(dir.path());
    Result<BlobWriterPtr> w = runSync(store->reserve(QStringLiteral("k"), 4));
    QVERIFY(!w.value()->writeAt(0, "abcd", 4).isError());
    CommitOptions opts;
    opts.expectedSha256 = QByteArray(32, '\1');
    QCOMPARE(runSync(store->commit(w.value(), opts)).error().code(), ErrorCode::Corrupt);
    QCOMPARE(runSync(store->stat(QStringLiteral("k"))).error().code(), ErrorCode::NotFound);
}

void tst_FileStore::oversizedBlobIsRefused()
{
    QTemporaryDir dir;
    auto store = openStore(dir.path(), 1000);
    Result<BlobWriterPtr> w = runSync(store->reserve(QStringLiteral("k"), 1001));
    QCOMPARE(w.error().code(), ErrorCode::DiskFull);
    QVERIFY(w.error().message().contains(QLatin1String("budget")));
    QCOMPARE(runSync(store->reserve(QStringLiteral("huge"), qint64(1) << 60)).error().code(), ErrorCode::DiskFull);
}

void tst_FileStore::abandonedReservationLeavesNothing()
{
    QTemporaryDir dir;
    auto store = openStore(dir.path());
    {
        Result<BlobWriterPtr> w = runSync(store->reserve(QStringLiteral("k"), 1000));
        QVERIFY(w.isOk());
        QCOMPARE(filesUnder(dir.filePath(QStringLiteral("staging"))).size(), 1);
    }
    QVERIFY(filesUnder(dir.filePath(QStringLiteral("staging"))).isEmpty());
    QCOMPARE(runSync(store->stat(QStringLiteral("k"))).error().code(), ErrorCode::NotFound);
}

void tst_FileStore::closingReleasesTheCacheEvenWhileJobsLinger()
{
    QTemporaryDir dir;
    auto store = openStore(dir.path());
    QVERIFY(putBlob(*store, QStringLiteral("k"), pattern(100, 1)).isOk());
    auto *lingering = store->read(QStringLiteral("k"));  // created, not yet run: it holds the store's state
    lingering->setAutoDelete(false);
    store.reset();
    auto reopened = openStore(dir.path());               // the lock was released all the same
    QVERIFY(reopened);
    QCOMPARE(readBlob(*reopened, QStringLiteral("k")), pattern(100, 1));
    lingering->start(ExecutionPolicy::Sync);
    QCOMPARE(lingering->error().code(), ErrorCode::Cancelled);  // a clear error, not a closed file touched
    QVERIFY(lingering->error().message().contains(QLatin1String("closed")));
    delete lingering;
}

void tst_FileStore::concurrentReadersNeverSeeAMix()
{
    // A writer commits version after version of one key (each filled with one byte value) while readers on
    // other threads read it: every read must be one whole version, never parts of two.
    QTemporaryDir dir;
    auto store = openStore(dir.path());
    constexpr int size = 256 * 1024;
    QVERIFY(putBlob(*store, QStringLiteral("k"), QByteArray(size, char(0))).isOk());
    std::atomic<bool> stop{false};
    std::atomic<int> reads{0}, mixed{0}, failures{0};
    auto reader = [&] {
        while (!stop.load()) {
            Result<ByteView> v = runSync(store->read(QStringLiteral("k")));
            if (!v.isOk()) {
                ++failures;
                continue;
            }
            const ByteView &b = v.value();
            if (b.size() != size || std::count(b.data(), b.data() + b.size(), b.data()[0]) != size)
                ++mixed;
            ++reads;
        }
    };
    QFuture<void> r1 = QtConcurrent::run(reader);
    QFuture<void> r2 = QtConcurrent::run(reader);
    for (int version = 1; version <= 30; ++version)
        QVERIFY(putBlob(*store, QStringLiteral("k"), QByteArray(size, char(version))).isOk());
    stop = true;
    r1.waitForFinished();
    r2.waitForFinished();
    QVERIFY(reads.load() > 0);
    QCOMPARE(mixed.load(), 0);
    QCOMPARE(failures.load(), 0);
    QCOMPARE(readBlob(*store, QStringLiteral("k")), QByteArray(size, char(30)));
}

void tst_FileStore::putStoresWholeBlobsFromMemory()
{
    QTemporaryDir dir;
    auto store = openStore(dir.path());
    const QByteArray bytes = pattern(300000, 5);
    const Result<BlobInfo> info = runSync(store->put(QStringLiteral("whole"), ByteView(bytes)));
    QVERIFY(info.isOk());
    QCOMPARE(info.value().size, bytes.size());
    QCOMPARE(info.value().sha256, QCryptographicHash::hash(bytes, QCryptographicHash::Sha256));
    QCOMPARE(readBlob(*store, QStringLiteral("whole")), bytes);
    QVERIFY(runSync(store->put(QStringLiteral("empty"), ByteView())).isOk());
    QCOMPARE(runSync(store->stat(QStringLiteral("empty"))).value().size, 0);
    // A digest the caller expected and the bytes do not have: nothing committed.
    CommitOptions expecting;
    expecting.expectedSha256 = QByteArray(32, 'x');
    QCOMPARE(runSync(store->put(QStringLiteral("wrong"), ByteView(bytes), expecting)).error().code(), ErrorCode::Corrupt);
    QCOMPARE(runSync(store->stat(QStringLiteral("wrong"))).error().code(), ErrorCode::NotFound);
    QCOMPARE(filesUnder(dir.filePath(QStringLiteral("staging"))), QStringList());
}

QTEST_GUILESS_MAIN(tst_FileStore)
#include "tst_filestore.moc"
