// SPDX-License-Identifier: Apache-2.0
// The disk cache after what goes wrong: interrupted writes, kills, missing files, system crashes, damaged bytes, a
// second process; an old cache's journal taken over; and its packs, whose space comes back and which reopen without
// leftovers.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/stores/blobs/filestore.h"
#include "filestoresupport.h"
#include "testsupport.h"
#include "cacheindex.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
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

class tst_FileStoreRecovery : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void interruptedWriteIsInvisibleAfterReopen();
    void orphansOfAKilledProcessAreCleanedUp();
    void anOldCachesJournalIsTakenOver();
    void aCleanCloseReopensWithoutReadingTheFiles();
    void missingOrTruncatedFilesAreDropped();
    void secondOpenIsRefused();
    void aLockLeftByAKilledProcessDoesNotHoldTheCache_data();
    void aLockLeftByAKilledProcessDoesNotHoldTheCache();
    void unsyncedCommitsSurviveAKillAndAreCheckedAfterASystemCrash();
    void deferredRowsAreSeenAtOnceAndSurviveAKill();
    void seriesFieldsAreListedAndAnOlderIndexIsBroughtUpToDate();
    void deferredSha256IsComputedWhenAskedForAndChecked();
    void aChangedByteIsFoundOnReadAndTheEntryDropped();
    void smallWholeBlobsShareAPackAndGiveTheirSpaceBack();
    void aFullPackIsDeletedWithItsLastBlob();
    void packsReopenWithoutCrashLeftovers();
    void packedBlobsReadWhileEvictedAreWholeOrAbsent();
};

void tst_FileStoreRecovery::interruptedWriteIsInvisibleAfterReopen()
{
    QTemporaryDir dir, crashed;
    auto store = openStore(dir.path());
    QVERIFY(putBlob(*store, QStringLiteral("k"), pattern(4000, 1)).isOk());
    Result<BlobWriterPtr> w = runSync(store->reserve(QStringLiteral("k"), 8000));
    QVERIFY(w.isOk());
    QVERIFY(!w.value()->writeAt(0, pattern(8000, 2).constData(), 5000).isError());
    Result<BlobWriterPtr> fresh = runSync(store->reserve(QStringLiteral("new"), 100));
    QVERIFY(fresh.isOk());
    QVERIFY(filesUnder(dir.path()).filter(QStringLiteral("staging/")).size() == 2);  // the temp files exist
    copyTree(dir.path(), crashed.path());                                           // …and then the power fails

    auto reopened = openStore(crashed.path());
    QVERIFY(reopened);
    QCOMPARE(readBlob(*reopened, QStringLiteral("k")), pattern(4000, 1));  // the committed version, whole
    QCOMPARE(runSync(reopened->stat(QStringLiteral("new"))).error().code(), ErrorCode::NotFound);
    QVERIFY(filesUnder(crashed.path()).filter(QStringLiteral("staging/")).isEmpty());
}

// Killed between writing a file and recording it (an orphan), or with a whole blob half written under its final
// name: the next open, finding the index not closed cleanly, removes what no row names.
void tst_FileStoreRecovery::orphansOfAKilledProcessAreCleanedUp()
{
    QTemporaryDir dir, killed;
    {
        auto store = openStore(dir.path());
        QVERIFY(putBlob(*store, QStringLiteral("a"), pattern(1000, 1)).isOk());
        copyTree(dir.path(), killed.path());  // the process is killed here
    }
    QVERIFY(writeFile(killed.filePath(QStringLiteral("objects/orphan~99")), pattern(10, 1)));
    // A whole blob is written under its final name (put): a kill before its record leaves half of it there,
    // under the very name the next version of it will get.
    QVERIFY(writeFile(killed.filePath(QStringLiteral("objects/b~2")), pattern(5, 9)));
    auto store = openStore(killed.path());
    QVERIFY(store);
    QCOMPARE(readBlob(*store, QStringLiteral("a")), pattern(1000, 1));
    QCOMPARE(store->usage().blobs, 1);
    QCOMPARE(runSync(store->read(QStringLiteral("b"))).error().code(), ErrorCode::NotFound);  // never served
    QVERIFY(!QFile::exists(killed.filePath(QStringLiteral("objects/orphan~99"))));
    QVERIFY(!QFile::exists(killed.filePath(QStringLiteral("objects/b~2"))));
    // The index is writable again, and a put writes under that same name now.
    Result<BlobInfo> b = runSync(store->put(QStringLiteral("b"), ByteView(pattern(10, 2))));
    QVERIFY2(b.isOk(), qPrintable(b.error().toString()));
    QCOMPARE(b.value().version, quint64(2));
    QCOMPARE(readBlob(*store, QStringLiteral("b")), pattern(10, 2));
}

// A cache written by a version that kept its index as a journal of JSON lines: the first open takes the entries
// over (in their use order, with their digests and DICOM identities), checks them against the files, skips a torn
// last line and a removed entry, and deletes the journal.
void tst_FileStoreRecovery::anOldCachesJournalIsTakenOver()
{
    QTemporaryDir dir;
    const QByteArray a = pattern(1000, 1), c = pattern(3000, 3);
    auto sha = [](const QByteArray &bytes) { return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex(); };
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("objects")));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("objects/a~1")), a));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("objects/c~3")), c));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("objects/gone~2")), pattern(10, 2)));
    const QByteArray dicom = R"({"patientName":"OLD^CACHE","patientId":"P-OLD","studyInstanceUid":"1.2.3","seriesInstanceUid":"1.2.3.4",)"
                             R"("sopInstanceUid":"1.2.3.4.5","modality":"CT","studyDate":"20200102"})";
    const QByteArray journal =
        "{\"op\":\"put\",\"key\":\"c\",\"version\":\"3\",\"size\":\"3000\",\"sha256\":\"" + sha(c) + "\",\"committed\":1,\"access\":1}\n"
        "{\"op\":\"put\",\"key\":\"gone\",\"version\":\"2\",\"size\":\"10\",\"sha256\":\"" + sha(pattern(10, 2)) + "\"}\n"
        "{\"op\":\"put\",\"key\":\"a\",\"version\":\"1\",\"size\":\"1000\",\"sha256\":\"" + sha(a) + "\",\"dicom\":" + dicom + "}\n"
        "{\"op\":\"del\",\"key\":\"gone\"}\n"
        "{\"op\":\"put\",\"key\":\"b\",\"vers";  // torn by a crash during an append
    QVERIFY(writeFile(dir.filePath(QStringLiteral("journal")), journal));
    {
        auto store = openStore(dir.path());
        QVERIFY(store);
        QCOMPARE(store->usage().blobs, 2);
        QCOMPARE(readBlob(*store, QStringLiteral("a")), a);
        QCOMPARE(runSync(store->stat(QStringLiteral("c"))).value().sha256.toHex(), sha(c));
        QCOMPARE(runSync(store->stat(QStringLiteral("b"))).error().code(), ErrorCode::NotFound);
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("journal"))));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("objects/gone~2"))));  // removed in the journal: an orphan
        Result<QList<StudySummary>> studies = runSync(store->studies(DicomQuery()));
        QVERIFY(studies.isOk());
        QCOMPARE(studies.value().size(), 1);
        QCOMPARE(studies.value().first().identity.patientName, QStringLiteral("OLD^CACHE"));
        QCOMPARE(studies.value().first().instanceCount, 1);
        // New versions are numbered past the journal's.
        Result<BlobInfo> d = runSync(store->put(QStringLiteral("d"), ByteView(pattern(10, 4))));
        QVERIFY(d.isOk());
        QVERIFY(d.value().version > 3);
        // c was used before a in the journal: it goes first.
        store->setBudget(1000 + 10);
        QCOMPARE(runSync(store->stat(QStringLiteral("c"))).error().code(), ErrorCode::NotFound);
        QCOMPARE(readBlob(*store, QStringLiteral("a")), a);
    }
    auto store = openStore(dir.path());
    QVERIFY(store);
    QCOMPARE(store->usage().blobs, 2);
    QCOMPARE(readBlob(*store, QStringLiteral("a")), a);
}

// After a clean close the index is taken as it is: the next open does not check its rows against the files (what
// lets a cache of a million instances open at once), and says it closed cleanly; the index is marked in use while
// open, so that a kill is found. Files no row names (a put in flight at the close) are still found, file by file.
void tst_FileStoreRecovery::aCleanCloseReopensWithoutReadingTheFiles()
{
    QTemporaryDir dir;
    {
        auto store = openStore(dir.path());
        QVERIFY(store);
        QVERIFY(runSync(store->put(QStringLiteral("a"), ByteView(pattern(1000, 1)))).isOk());
        QVERIFY(runSync(store->put(QStringLiteral("b"), ByteView(pattern(1000, 2)))).isOk());
        QCOMPARE(indexSql(dir.path(), QStringLiteral("SELECT value FROM meta WHERE name = 'clean'")), QStringList{QStringLiteral("0")});
    }
    QCOMPARE(indexSql(dir.path(), QStringLiteral("SELECT value FROM meta WHERE name = 'clean'")), QStringList{QStringLiteral("1")});
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("journal"))));
    // What a put in flight at the close leaves: a pack, a file of its own, no row naming either.
    QVERIFY(writeFile(dir.filePath(QStringLiteral("packs/999")), pattern(10, 1)));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("objects/late~77")), pattern(10, 2)));
    {
        auto store = openStore(dir.path());
        QVERIFY(store);
        QCOMPARE(store->usage().blobs, 2);
        QCOMPARE(store->usage().bytes, 2000);
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("packs/999"))));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("objects/late~77"))));
        QCOMPARE(filesUnder(dir.filePath(QStringLiteral("packs"))).size(), 1);  // a and b's
        QCOMPARE(readBlob(*store, QStringLiteral("b")), pattern(1000, 2));
        QVERIFY(runSync(store->put(QStringLiteral("c"), ByteView(pattern(1000, 3)))).isOk());
        QVERIFY(runSync(store->remove(QStringLiteral("a"))).isOk());
    }
    auto store = openStore(dir.path());
    QVERIFY(store);
    QCOMPARE(store->usage().blobs, 2);
    QCOMPARE(store->usage().bytes, 2000);
    QCOMPARE(readBlob(*store, QStringLiteral("b")), pattern(1000, 2));
    QCOMPARE(readBlob(*store, QStringLiteral("c")), pattern(1000, 3));
    QVERIFY(runSync(store->put(QStringLiteral("d"), ByteView(pattern(1000, 4)))).isOk());
    QCOMPARE(readBlob(*store, QStringLiteral("d")), pattern(1000, 4));
}

// Files removed or cut short behind the cache's back. After a kill the open finds them; after a clean close the
// first read does — it says the blob is missing, drops the entry, and never maps past a file's end.
void tst_FileStoreRecovery::missingOrTruncatedFilesAreDropped()
{
    QTemporaryDir dir, killed;
    {
        auto store = openStore(dir.path());
        QVERIFY(putBlob(*store, QStringLiteral("keep"), pattern(1000, 1)).isOk());
        QVERIFY(putBlob(*store, QStringLiteral("lost"), pattern(1000, 2)).isOk());
        QVERIFY(putBlob(*store, QStringLiteral("cut"), pattern(1000, 3)).isOk());
        copyTree(dir.path(), killed.path());
    }
    for (const QString &root : {dir.path(), killed.path()}) {
        QDir objects(root + QStringLiteral("/objects"));
        for (const QString &name : objects.entryList(QDir::Files)) {
            if (name.startsWith(QLatin1String("lost~")))
                QVERIFY(objects.remove(name));
            if (name.startsWith(QLatin1String("cut~")))
                QVERIFY(QFile::resize(objects.filePath(name), 500));
        }
    }
    {
        auto store = openStore(killed.path());
        QVERIFY(runSync(store->stat(QStringLiteral("keep"))).isOk());
        QCOMPARE(runSync(store->stat(QStringLiteral("lost"))).error().code(), ErrorCode::NotFound);
        QCOMPARE(runSync(store->stat(QStringLiteral("cut"))).error().code(), ErrorCode::NotFound);
        QCOMPARE(store->usage().bytes, 1000);
    }
    auto store = openStore(dir.path());
    for (const QString &key : {QStringLiteral("lost"), QStringLiteral("cut")}) {
        const Result<ByteView> read = runSync(store->read(key));
        QCOMPARE(read.error().code(), ErrorCode::NotFound);
        QVERIFY2(read.error().message().contains(QStringLiteral("fetch it again")), qPrintable(read.error().toString()));
        QCOMPARE(runSync(store->stat(key)).error().code(), ErrorCode::NotFound);  // dropped
    }
    QCOMPARE(readBlob(*store, QStringLiteral("keep")), pattern(1000, 1));
    QCOMPARE(store->usage().bytes, 1000);
}

void tst_FileStoreRecovery::secondOpenIsRefused()
{
    QTemporaryDir dir;
    auto store = openStore(dir.path());
    auto second = FileStore::open(dir.path(), 0);
    QVERIFY(!second.isOk());
    QCOMPARE(second.error().code(), ErrorCode::Busy);
    QVERIFY2(second.error().message().contains(QStringLiteral("(pid %1)").arg(QCoreApplication::applicationPid())),
             qPrintable(second.error().message()));  // the holder is named
    store.reset();
    QVERIFY(FileStore::open(dir.path(), 0).isOk());  // released when the first closes
}

void tst_FileStoreRecovery::aLockLeftByAKilledProcessDoesNotHoldTheCache_data()
{
    QTest::addColumn<QByteArray>("left");
    // Killed between creating the lock file and writing its name into it (what QLockFile could never judge stale).
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("a gone process's name") << QByteArray("2147483646\nspectrum\n") + QSysInfo::machineHostName().toUtf8() + '\n';
    QTest::newRow("garbage") << QByteArray::fromHex("ff00") + QByteArray("not a pid\n");
}

void tst_FileStoreRecovery::aLockLeftByAKilledProcessDoesNotHoldTheCache()
{
    QFETCH(QByteArray, left);
    QTemporaryDir dir;
    {
        QFile lock(dir.filePath(QStringLiteral("lock")));
        QVERIFY(lock.open(QIODevice::WriteOnly) && lock.write(left) == left.size());
    }
    Result<std::unique_ptr<FileStore>> opened = FileStore::open(dir.path(), 0);
    QVERIFY2(opened.isOk(), qPrintable(opened.error().toString()));
    QCOMPARE(FileStore::open(dir.path(), 0).error().code(), ErrorCode::Busy);  // and it is ours now
}

void tst_FileStoreRecovery::unsyncedCommitsSurviveAKillAndAreCheckedAfterASystemCrash()
{
    QTemporaryDir dir, killed, crashed;
    const QByteArray a = pattern(200000, 1), b = pattern(200000, 2), c = pattern(1000, 3);
    auto store = openStore(dir.path());
    CommitOptions refetchable;  // what a fetch from an archive commits with
    refetchable.durable = false;
    refetchable.deferSha256 = true;
    QVERIFY(runSync(store->put(QStringLiteral("a"), ByteView(a), refetchable)).isOk());
    QVERIFY(runSync(store->put(QStringLiteral("b"), ByteView(b), refetchable)).isOk());
    QVERIFY(putBlob(*store, QStringLiteral("c"), c).isOk());  // durable
    const QString tagged = kUnsyncedBlobs;
    QCOMPARE(indexSql(dir.path(), tagged), QStringList{QStringLiteral("2")});  // tagged with this boot, not synced

    // The process is killed: the kernel still holds every byte. The same boot reopens it whole, synced.
    copyTree(dir.path(), killed.path());
    copyTree(dir.path(), crashed.path());
    store.reset();
    {
        auto reopened = openStore(killed.path());
        QVERIFY(reopened);
        QCOMPARE(readBlob(*reopened, QStringLiteral("a")), a);
        QCOMPARE(readBlob(*reopened, QStringLiteral("b")), b);
        QCOMPARE(indexSql(killed.path(), tagged), QStringList{QStringLiteral("0")});
    }

    // The system went down instead (another boot ID in the rows), and b's bytes never reached the disk.
    QCOMPARE(indexSql(crashed.path(), QStringLiteral("UPDATE blobs SET unsynced = '00000000-0000-0000-0000-000000000000' "
                                                     "WHERE unsynced IS NOT NULL")), QStringList());
    QCOMPARE(indexSql(crashed.path(), tagged), QStringList{QStringLiteral("2")});
    QVERIFY(damageOnDisk(crashed.path(), b, 100000, QByteArray(4096, '\0')));  // what a lost page reads as
    {
        auto reopened = openStore(crashed.path());
        QVERIFY(reopened);
        QCOMPARE(readBlob(*reopened, QStringLiteral("a")), a);  // checked against its checksum, kept
        const Result<ByteView> lost = runSync(reopened->read(QStringLiteral("b")));
        QCOMPARE(lost.error().code(), ErrorCode::NotFound);  // never served changed; fetched again instead
        QCOMPARE(runSync(reopened->stat(QStringLiteral("b"))).error().code(), ErrorCode::NotFound);
        QCOMPARE(readBlob(*reopened, QStringLiteral("c")), c);
        QCOMPARE(reopened->usage().blobs, 2);
    }
    auto last = openStore(crashed.path());
    QCOMPARE(last->usage().blobs, 2);
    QCOMPARE(readBlob(*last, QStringLiteral("a")), a);
}

// A blob committed without a sync is recorded in memory and in the log of deferred rows, and in the index a moment
// later, many at once: readers and searches see it at once, and a kill before the index has it loses nothing.
void tst_FileStoreRecovery::deferredRowsAreSeenAtOnceAndSurviveAKill()
{
    QTemporaryDir dir, killed;
    qputenv("SPECTRUM_CACHE_DEFER_MS", "600000");  // nothing written down by the clock: the kill comes first
    auto store = openStore(dir.path());
    qunsetenv("SPECTRUM_CACHE_DEFER_MS");
    QVERIFY(store);
    CommitOptions fetched;
    fetched.durable = false;
    fetched.deferSha256 = true;
    DicomIdentity id;
    id.patientName = QStringLiteral("DEFERRED^ROW");
    id.patientId = QStringLiteral("P-DEF");
    id.studyInstanceUid = QStringLiteral("1.2.3.99");
    id.seriesInstanceUid = QStringLiteral("1.2.3.99.1");
    QList<QByteArray> blobs;
    for (int i = 0; i < 5; ++i) {
        blobs << pattern(3000 + i, char(i));
        id.sopInstanceUid = QStringLiteral("1.2.3.99.1.%1").arg(i);
        fetched.knownIdentity = id;
        QVERIFY(runSync(store->put(id.sopInstanceUid, ByteView(blobs.last()), fetched)).isOk());
    }
    copyTree(dir.path(), killed.path());  // killed the moment the last put returned
    // The scenario holds: the rows were still only in the log when the process went.
    QVERIFY(QFileInfo(killed.filePath(QStringLiteral("deferred.log"))).size() > 0);
    QCOMPARE(readBlob(*store, QStringLiteral("1.2.3.99.1.4")), blobs[4]);
    QCOMPARE(store->usage().blobs, 5);
    Result<QList<StudySummary>> studies = runSync(store->studies(DicomQuery()));
    QVERIFY(studies.isOk());
    QCOMPARE(studies.value().size(), 1);
    QCOMPARE(studies.value().first().instanceCount, 5);
    QCOMPARE(QFileInfo(dir.filePath(QStringLiteral("deferred.log"))).size(), 0);  // the search wrote them down
    store.reset();

    auto reopened = openStore(killed.path());
    QVERIFY(reopened);
    QCOMPARE(reopened->usage().blobs, 5);
    for (int i = 0; i < 5; ++i)
        QCOMPARE(readBlob(*reopened, QStringLiteral("1.2.3.99.1.%1").arg(i)), blobs[i]);
    studies = runSync(reopened->studies(DicomQuery()));
    QCOMPARE(studies.value().size(), 1);
    QCOMPARE(studies.value().first().identity.patientName, QStringLiteral("DEFERRED^ROW"));
    QCOMPARE(QFileInfo(killed.filePath(QStringLiteral("deferred.log"))).size(), 0);
}

// The study list's series carry what the hanging protocols and the prior search match on (body part, view, plane,
// slice thickness), from the first instance that records each — without reading the instances. An index written
// before the series kept them (schema 1) gets them from its rows at its first open.
void tst_FileStoreRecovery::seriesFieldsAreListedAndAnOlderIndexIsBroughtUpToDate()
{
    QTemporaryDir dir;
    auto check = [](FileStore &store) {
        Result<QList<StudySummary>> studies = runSync(store.studies(DicomQuery()));
        QVERIFY(studies.isOk());
        QCOMPARE(studies.value().size(), 1);
        const QList<SeriesSummary> &series = studies.value().first().series;
        QCOMPARE(series.size(), 2);
        QCOMPARE(series[0].seriesNumber, 2);
        QCOMPARE(series[0].bodyPart, QStringLiteral("CHEST"));  // the second instance's: the first has none
        QCOMPARE(series[0].plane, QStringLiteral("Axial"));
        QCOMPARE(series[0].sliceThickness, 2.5);
        QCOMPARE(series[0].listedInstances, 3);
        QVERIFY(series[0].instances.isEmpty());
        QCOMPARE(series[1].viewPosition, QStringLiteral("PA"));
        QCOMPARE(series[1].plane, QString());
        QCOMPARE(series[1].sliceThickness, 0.0);
    };
    {
        auto store = openStore(dir.path());
        QVERIFY(store);
        DicomIdentity id;
        id.patientName = QStringLiteral("SERIES^FIELDS");
        id.patientId = QStringLiteral("P-SER");
        id.studyInstanceUid = QStringLiteral("1.2.3.77");
        id.studyDate = QStringLiteral("20260102");
        for (int i = 0; i < 4; ++i) {
            const bool ct = i < 3;
            id.seriesInstanceUid = ct ? QStringLiteral("1.2.3.77.2") : QStringLiteral("1.2.3.77.9");
            id.seriesNumber = ct ? 2 : 9;
            id.modality = ct ? QStringLiteral("CT") : QStringLiteral("CR");
            id.bodyPartExamined = ct && i > 0 ? (i == 1 ? QStringLiteral("CHEST") : QStringLiteral("ABDOMEN")) : QString();
            id.imageOrientation = ct ? QStringLiteral("1\\0\\0\\0\\1\\0") : QString();
            id.sliceThickness = ct ? QStringLiteral("2.5") : QString();
            id.viewPosition = ct ? QString() : QStringLiteral("PA");
            id.sopInstanceUid = QStringLiteral("1.2.3.77.%1").arg(10 + i);
            CommitOptions o;
            o.knownIdentity = id;
            QVERIFY(runSync(store->put(id.sopInstanceUid, ByteView(pattern(500 + i, char(i))), o)).isOk());
        }
        check(*store);
        if (QTest::currentTestFailed())
            return;
    }
    // As schema 1 left it: no such columns, and the schema said.
    QCOMPARE(indexSql(dir.path(), QStringLiteral("ALTER TABLE series DROP COLUMN body; ALTER TABLE series DROP COLUMN view;"
                                                 " ALTER TABLE series DROP COLUMN plane; ALTER TABLE series DROP COLUMN thickness;"
                                                 " UPDATE meta SET value = 1 WHERE name = 'schema'")),
             QStringList());
    auto reopened = openStore(dir.path());
    QVERIFY(reopened);
    check(*reopened);
    QCOMPARE(reopened->usage().blobs, 4);
    QCOMPARE(indexSql(dir.path(), QStringLiteral("SELECT value FROM meta WHERE name = 'schema'")), QStringList{QStringLiteral("2")});
    reopened.reset();
    // A newer Spectrum's index is refused, not rewritten.
    QCOMPARE(indexSql(dir.path(), QStringLiteral("UPDATE meta SET value = 3 WHERE name = 'schema'")), QStringList());
    auto newer = runSync(FileStore::openJob(dir.path(), 0));
    QVERIFY(!newer.isOk());
    QVERIFY2(newer.error().message().contains(QStringLiteral("newer")), qPrintable(newer.error().toString()));
}

// A byte changed on the disk under a committed blob: a whole read finds it (the checksum) before anyone uses the
// bytes, says so, and drops the entry so that it is fetched again; a blob next to it is not touched.
void tst_FileStoreRecovery::aChangedByteIsFoundOnReadAndTheEntryDropped()
{
    QTemporaryDir dir;
    auto store = openStore(dir.path());
    const QByteArray a = pattern(300000, 7), b = pattern(1000, 8);
    QVERIFY(putBlob(*store, QStringLiteral("a"), a).isOk());
    QVERIFY(putBlob(*store, QStringLiteral("b"), b).isOk());
    const QDir objects(dir.filePath(QStringLiteral("objects")));
    const QStringList files = objects.entryList({QStringLiteral("a~*")}, QDir::Files);
    QCOMPARE(files.size(), 1);
    QFile f(objects.filePath(files.first()));
    QVERIFY(f.open(QIODevice::ReadWrite) && f.seek(123457));
    QVERIFY(f.putChar(char(a.at(123457) ^ 1)));
    f.close();
    Result<ByteView> damaged = runSync(store->read(QStringLiteral("a")));
    QCOMPARE(damaged.error().code(), ErrorCode::Corrupt);
    QVERIFY(damaged.error().toString().contains(QStringLiteral("fetch it again")));
    QCOMPARE(runSync(store->stat(QStringLiteral("a"))).error().code(), ErrorCode::NotFound);  // dropped
    QCOMPARE(readBlob(*store, QStringLiteral("b")), b);
    QVERIFY(putBlob(*store, QStringLiteral("a"), a).isOk());  // fetched again, whole
    QCOMPARE(readBlob(*store, QStringLiteral("a")), a);
}

void tst_FileStoreRecovery::deferredSha256IsComputedWhenAskedForAndChecked()
{
    QTemporaryDir dir;
    const QByteArray d = pattern(300000, 4), e = pattern(70000, 5);
    auto sha = [](const QByteArray &bytes) { return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256); };
    auto store = openStore(dir.path());
    CommitOptions deferred;
    deferred.durable = false;
    deferred.deferSha256 = true;
    const Result<BlobInfo> put = runSync(store->put(QStringLiteral("d"), ByteView(d), deferred));
    QVERIFY2(put.isOk(), qPrintable(put.error().toString()));
    QVERIFY(put.value().sha256.isEmpty());  // not hashed at commit
    QVERIFY(runSync(store->query(BlobQuery())).value().first().sha256.isEmpty());
    QCOMPARE(runSync(store->stat(QStringLiteral("d"))).value().sha256, sha(d));  // hashed when asked for
    QCOMPARE(runSync(store->query(BlobQuery())).value().first().sha256, sha(d));
    Result<BlobSnapshot> snap = runSync(store->snapshot(QStringLiteral("d")));
    QCOMPARE(snap.value().info.sha256, sha(d));
    QCOMPARE(snap.value().bytes.toByteArray(), d);

    // A digest that was asked for is kept across a restart (journalled).
    store.reset();
    store = openStore(dir.path());
    QVERIFY(store);
    QCOMPARE(runSync(store->query(BlobQuery())).value().first().sha256, sha(d));

    // A deferred blob whose bytes changed on the disk is dropped when its digest is first asked for.
    QVERIFY(runSync(store->put(QStringLiteral("e"), ByteView(e), deferred)).isOk());
    QVERIFY(damageOnDisk(dir.path(), e, 12345, QByteArray(1, char(e.at(12345) ^ 0x10))));  // one bit
    QCOMPARE(runSync(store->snapshot(QStringLiteral("e"))).error().code(), ErrorCode::Corrupt);
    QCOMPARE(runSync(store->stat(QStringLiteral("e"))).error().code(), ErrorCode::NotFound);
    QCOMPARE(store->usage().blobs, 1);
    store.reset();
    store = openStore(dir.path());
    QCOMPARE(runSync(store->stat(QStringLiteral("e"))).error().code(), ErrorCode::NotFound);
    QCOMPARE(readBlob(*store, QStringLiteral("d")), d);

    // An expected digest is still checked at commit, deferred or not.
    CommitOptions wrong = deferred;
    wrong.expectedSha256 = sha(e);
    QCOMPARE(runSync(store->put(QStringLiteral("f"), ByteView(d), wrong)).error().code(), ErrorCode::Corrupt);
    QCOMPARE(runSync(store->stat(QStringLiteral("f"))).error().code(), ErrorCode::NotFound);
}

// Instances fetched whole (put) are appended to a shared pack file instead of getting a file each; the blocks of one
// that goes are given back at once, and a pack no blob uses any more is deleted.
void tst_FileStoreRecovery::smallWholeBlobsShareAPackAndGiveTheirSpaceBack()
{
    QTemporaryDir dir;
    if (!punchesHoles(dir.path()))
        QSKIP("this file system cannot give back part of a file (no hole punching)");
    auto store = openStore(dir.path());
    QVERIFY(store);
    constexpr int count = 40, size = 100000;
    for (int i = 0; i < count; ++i)
        QVERIFY(runSync(store->put(QStringLiteral("blob-%1").arg(i), ByteView(pattern(size, char(i))))).isOk());
    QCOMPARE(filesUnder(dir.filePath(QStringLiteral("objects"))), QStringList());
    const QStringList packs = filesUnder(dir.filePath(QStringLiteral("packs")));
    QCOMPARE(packs.size(), 1);  // one writer at a time: one pack
    const QString pack = dir.filePath(QStringLiteral("packs/") + packs.first());
    for (int i = 0; i < count; ++i) {
        QCOMPARE(readBlob(*store, QStringLiteral("blob-%1").arg(i)), pattern(size, char(i)));
        QCOMPARE(readBlob(*store, QStringLiteral("blob-%1").arg(i), ByteRange::of(4000, 9000)), pattern(size, char(i)).mid(4000, 5000));
    }
    Result<BlobSnapshot> snap = runSync(store->snapshot(QStringLiteral("blob-7")));
    QVERIFY(snap.isOk());
    QCOMPARE(snap.value().bytes.toByteArray(), pattern(size, char(7)));
    QCOMPARE(snap.value().info.sha256, QCryptographicHash::hash(pattern(size, char(7)), QCryptographicHash::Sha256));

    // Half of them go: their blocks come back, the others read as before.
    const qint64 before = allocatedBytes(pack);
    QVERIFY(before >= qint64(count) * size);
    for (int i = 0; i < count; i += 2)
        QVERIFY(runSync(store->remove(QStringLiteral("blob-%1").arg(i))).isOk());
    QVERIFY2(allocatedBytes(pack) <= before - qint64(count / 2) * size, qPrintable(QStringLiteral("%1 → %2").arg(before).arg(allocatedBytes(pack))));
    // A new version of one: the old bytes' blocks go too (on the pool, after the put).
    const qint64 afterRemoval = allocatedBytes(pack);
    QVERIFY(runSync(store->put(QStringLiteral("blob-1"), ByteView(pattern(size, 'n')))).isOk());
    QTRY_VERIFY(allocatedBytes(pack) <= afterRemoval + 4096);
    QCOMPARE(readBlob(*store, QStringLiteral("blob-1")), pattern(size, 'n'));
    for (int i = 3; i < count; i += 2)
        QCOMPARE(readBlob(*store, QStringLiteral("blob-%1").arg(i)), pattern(size, char(i)));
    QCOMPARE(store->usage().blobs, count / 2);

    // Across a restart; and once the last blob in it has gone, the pack goes too.
    store.reset();
    store = openStore(dir.path());
    QVERIFY(store);
    QCOMPARE(readBlob(*store, QStringLiteral("blob-1")), pattern(size, 'n'));
    QCOMPARE(readBlob(*store, QStringLiteral("blob-39")), pattern(size, char(39)));
    for (int i = 1; i < count; i += 2)
        QVERIFY(runSync(store->remove(QStringLiteral("blob-%1").arg(i))).isOk());
    QCOMPARE(store->usage().blobs, 0);
    QVERIFY(!QFile::exists(pack));  // no more appends after a restart: nothing keeps it
}

void tst_FileStoreRecovery::aFullPackIsDeletedWithItsLastBlob()
{
    QTemporaryDir dir;
    auto store = openStore(dir.path());
    QVERIFY(store);
    // 1 MiB blobs until a second pack has been started: the first one is full.
    int blobs = 0;
    while (filesUnder(dir.filePath(QStringLiteral("packs"))).size() < 2 && blobs < 200) {
        QVERIFY(runSync(store->put(QStringLiteral("b%1").arg(blobs), ByteView(pattern(1 << 20, char(blobs))))).isOk());
        ++blobs;
    }
    const QStringList packs = filesUnder(dir.filePath(QStringLiteral("packs")));
    QCOMPARE(packs.size(), 2);
    const QString first = dir.filePath(QStringLiteral("packs/") + *std::min_element(packs.begin(), packs.end(), [](const QString &a, const QString &b) {
        return a.toULongLong() < b.toULongLong();
    }));
    for (int i = 0; i < blobs - 1; ++i) {
        QVERIFY(QFile::exists(first));
        QVERIFY(runSync(store->remove(QStringLiteral("b%1").arg(i))).isOk());
    }
    QVERIFY(!QFile::exists(first));  // it takes no more appends, and nothing is left in it
    QCOMPARE(filesUnder(dir.filePath(QStringLiteral("packs"))).size(), 1);
    QCOMPARE(readBlob(*store, QStringLiteral("b%1").arg(blobs - 1)), pattern(1 << 20, char(blobs - 1)));
}

// What a crash can leave in the packs: an append cut short (bytes after the last record), a pack no record names,
// a pack cut shorter than a record says. The store reopens with exactly the blobs it can serve whole.
void tst_FileStoreRecovery::packsReopenWithoutCrashLeftovers()
{
    QTemporaryDir original, dir, cut;
    const QByteArray a = pattern(70000, 1), b = pattern(70000, 2), c = pattern(70000, 3);
    {
        auto store = openStore(original.path());
        QVERIFY(store);
        for (const auto &[key, bytes] : {std::pair{"a", a}, std::pair{"b", b}, std::pair{"c", c}})
            QVERIFY(runSync(store->put(QString::fromLatin1(key), ByteView(bytes))).isOk());
        copyTree(original.path(), dir.path());  // killed here, twice
        copyTree(original.path(), cut.path());
    }
    const QStringList packs = filesUnder(dir.filePath(QStringLiteral("packs")));
    QCOMPARE(packs.size(), 1);
    const QString pack = dir.filePath(QStringLiteral("packs/") + packs.first());
    {
        QFile f(pack);
        QVERIFY(f.open(QIODevice::Append));
        f.write(pattern(50000, 9));  // the bytes of a put whose record never made it
    }
    QVERIFY(writeFile(dir.filePath(QStringLiteral("packs/999")), pattern(1000, 4)));
    const qint64 grown = QFileInfo(pack).size();
    {
        auto store = openStore(dir.path());
        QVERIFY(store);
        QCOMPARE(readBlob(*store, QStringLiteral("a")), a);
        QCOMPARE(readBlob(*store, QStringLiteral("b")), b);
        QCOMPARE(readBlob(*store, QStringLiteral("c")), c);
        QVERIFY(QFileInfo(pack).size() < grown);  // the unrecorded tail is gone
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("packs/999"))));
        // New blobs go into a new pack, never after bytes of the old one.
        QVERIFY(runSync(store->put(QStringLiteral("d"), ByteView(pattern(1000, 5)))).isOk());
        QCOMPARE(filesUnder(dir.filePath(QStringLiteral("packs"))).size(), 2);
    }

    // The pack lost its end: the blob that reached into it is dropped, the others are served.
    const QString cutPack = cut.filePath(QStringLiteral("packs/") + packs.first());
    QVERIFY(QFile::resize(cutPack, QFileInfo(cutPack).size() - 1000));
    auto store = openStore(cut.path());
    QVERIFY(store);
    QCOMPARE(readBlob(*store, QStringLiteral("a")), a);
    QCOMPARE(readBlob(*store, QStringLiteral("b")), b);
    QCOMPARE(runSync(store->stat(QStringLiteral("c"))).error().code(), ErrorCode::NotFound);
    QCOMPARE(store->usage().blobs, 2);
}

// Writers fill the cache past its budget from several threads while readers read what was just written: every read
// is the whole blob asked for or NotFound (evicted), never the blocks given back after an eviction.
void tst_FileStoreRecovery::packedBlobsReadWhileEvictedAreWholeOrAbsent()
{
    QTemporaryDir dir;
    constexpr int size = 64 * 1024, perWriter = 150;
    auto store = openStore(dir.path(), 20 * size);
    QVERIFY(store);
    std::atomic<int> wrong{0}, found{0}, failed{0};
    auto writer = [&](int w) {
        for (int i = 0; i < perWriter; ++i) {
            const QString key = QStringLiteral("w%1-%2").arg(w).arg(i);
            if (!runSync(store->put(key, ByteView(pattern(size, char(w * 31 + i))))).isOk())
                ++failed;
            for (int back = 1; back <= 25 && back <= i; back += 4) {
                const int j = i - back;
                Result<ByteView> v = runSync(store->read(QStringLiteral("w%1-%2").arg(w).arg(j)));
                if (v.isOk()) {
                    ++found;
                    if (v.value().toByteArray() != pattern(size, char(w * 31 + j)))
                        ++wrong;
                } else if (v.error().code() != ErrorCode::NotFound) {
                    ++wrong;
                }
            }
        }
    };
    QFuture<void> w1 = QtConcurrent::run(writer, 1), w2 = QtConcurrent::run(writer, 2), w3 = QtConcurrent::run(writer, 3);
    writer(0);
    w1.waitForFinished();
    w2.waitForFinished();
    w3.waitForFinished();
    QCOMPARE(failed.load(), 0);
    QCOMPARE(wrong.load(), 0);
    QVERIFY(found.load() > 0);
    QVERIFY(store->usage().bytes <= 20 * size);
    // What the packs hold on the disk comes back near the budget: evicted blobs give their blocks back (on the
    // pool, after the puts that evicted them).
    auto held = [&] {
        qint64 bytes = 0;
        for (const QString &name : filesUnder(dir.filePath(QStringLiteral("packs"))))
            bytes += allocatedBytes(dir.filePath(QStringLiteral("packs/") + name));
        return bytes;
    };
    if (punchesHoles(dir.path()))
        QTRY_VERIFY2(held() <= 30 * size, qPrintable(QString::number(held())));
}

QTEST_GUILESS_MAIN(tst_FileStoreRecovery)
#include "tst_filestorerecovery.moc"
