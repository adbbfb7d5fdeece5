// SPDX-License-Identifier: Apache-2.0
// Faults on purpose, against the real processes: the blob server killed (SIGKILL) at random points while it
// writes a large blob into its FileStore, fifty times; the command-line tool killed so fifty times while it
// fetches a large blob into the workstation's cache, where the partial entry must survive and resume; a disk that fills up (a small tmpfs); a cache on a
// read-only disk. Whatever happens, the store opens again, serves every blob whole or not at all, and says
// clearly what went wrong.

#include "testsupport.h"
#include "shell/workstation.h"

#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/blobs/diskfill.h"
#include "spectrum/transfer/blobclient.h"

#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

using namespace spectrum;
using namespace spectrum::test;

namespace {
QByteArray randomBlob(qint64 size, quint32 seed)
{
    QByteArray b(size, Qt::Uninitialized);
    QRandomGenerator g(seed);
    g.fillRange(reinterpret_cast<quint32 *>(b.data()), size / 4);
    return b;
}

Result<QByteArray> readWhole(FileStore &store, const QString &key)
{
    Result<ByteView> r = runSync(store.read(key));
    if (!r.isOk())
        return r.error();
    return r.value().toByteArray();
}

/// A tmpfs of `megabytes` at `path` (root only), unmounted by the returned guard; empty when it cannot be.
QString mountTmpfs(const QString &path, int megabytes)
{
    if (::geteuid() != 0)
        return QStringLiteral("mounting a tmpfs needs root");
    QProcess mount;
    mount.start(QStringLiteral("mount"), {QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"),
                                          QStringLiteral("size=%1m").arg(megabytes), QStringLiteral("tmpfs"), path});
    if (!mount.waitForFinished(10000) || mount.exitCode() != 0)
        return QStringLiteral("cannot mount a tmpfs here: ") + QString::fromLocal8Bit(mount.readAllStandardError()).trimmed();
    return QString();
}

void unmount(const QString &path)
{
    QProcess::execute(QStringLiteral("umount"), {QStringLiteral("-l"), path});
}

/// Fills the file system holding `dir` with one file until it is full; returns the file's path.
QString fillDisk(const QString &dir)
{
    const QString path = dir + QStringLiteral("/filler");
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return QString();
    const QByteArray chunk(64 * 1024, 'x');
    while (f.write(chunk) == chunk.size()) {
    }
    f.write(chunk.constData(), 512);  // the last bits of a page
    f.close();
    return path;
}
} // namespace

class tst_Faults : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void killNineWhileTheServerWritesALargeBlobFiftyTimes();
    void killNineWhileTheCacheFetchesALargeBlobFiftyTimes();
    void aFullDiskIsAClearErrorAndLosesNothing();
    void aReadOnlyCacheIsAClearStartError();
};

void tst_Faults::killNineWhileTheServerWritesALargeBlobFiftyTimes()
{
    QTemporaryDir dir;
    const QString root = dir.filePath(QStringLiteral("blobd"));
    const QString token = QStringLiteral("fault-token-5678");
    // Two versions of one large blob, sent in turn: a blob read back must be one of them entirely.
    const QByteArray a = randomBlob(24 << 20, 1), b = randomBlob(24 << 20, 2), keep = randomBlob(1 << 20, 3);
    const QString fileA = dir.filePath(QStringLiteral("a.bin")), fileB = dir.filePath(QStringLiteral("b.bin")), fileKeep = dir.filePath(QStringLiteral("keep.bin"));
    for (const auto &[path, bytes] : {std::pair{fileA, a}, std::pair{fileB, b}, std::pair{fileKeep, keep}}) {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size());
    }
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_TOKEN"), token);
    auto put = [&](quint16 port, const QString &key, const QString &file) {
        auto *p = new QProcess;
        p->setProcessEnvironment(env);
        p->start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("put"), QStringLiteral("blob://127.0.0.1:%1/%2").arg(port).arg(key), file});
        return p;
    };
    // A blob committed before any of it, and how long a whole put takes here.
    qint64 wholePutMs = 0;
    {
        BlobdProcess blobd(root, 0, token);
        QVERIFY(blobd.start());
        std::unique_ptr<QProcess> first(put(blobd.port(), QStringLiteral("keep"), fileKeep));
        QVERIFY(first->waitForFinished(60000) && first->exitCode() == 0);
        QElapsedTimer clock;
        clock.start();
        std::unique_ptr<QProcess> whole(put(blobd.port(), QStringLiteral("big"), fileA));
        QVERIFY2(whole->waitForFinished(60000) && whole->exitCode() == 0, whole->readAllStandardError().constData());
        wholePutMs = clock.elapsed();
        blobd.stop();
    }
    int written = 0, before = 0, absent = 0;
    QRandomGenerator random(7);
    for (int round = 0; round < 50; ++round) {
        BlobdProcess blobd(root, 0, token);
        QVERIFY2(blobd.start(), qPrintable(QStringLiteral("round %1: the server does not start on its store again").arg(round)));
        std::unique_ptr<QProcess> writing(put(blobd.port(), QStringLiteral("big"), round % 2 ? fileA : fileB));
        QVERIFY(writing->waitForStarted());
        // The fault: SIGKILL at a random moment of the write (or before, or just after it).
        QTest::qWait(int(random.bounded(qint64(wholePutMs * 12 / 10 + 20))));
        blobd.kill();
        writing->waitForFinished(30000);
        // What the server left behind opens, and serves every blob whole or not at all.
        Result<std::unique_ptr<FileStore>> opened = FileStore::open(root, 0);
        QVERIFY2(opened.isOk(), qPrintable(QStringLiteral("round %1: %2").arg(round).arg(opened.isOk() ? QString() : opened.error().toString())));
        std::unique_ptr<FileStore> store = opened.takeValue();
        Result<QByteArray> k = readWhole(*store, QStringLiteral("keep"));
        QVERIFY2(k.isOk() && k.value() == keep, qPrintable(QStringLiteral("round %1: the untouched blob changed").arg(round)));
        Result<QByteArray> big = readWhole(*store, QStringLiteral("big"));
        if (big.isOk()) {
            QVERIFY2(big.value() == a || big.value() == b, qPrintable(QStringLiteral("round %1: a blob served that is neither version").arg(round)));
            ++(big.value() == (round % 2 ? a : b) ? written : before);
        } else {
            QCOMPARE(big.error().code(), ErrorCode::NotFound);
            ++absent;
        }
    }
    qInfo() << "after 50 kills: the version being written, whole:" << written << "times; the one before, whole:" << before
            << "times; none:" << absent << "times";
}

// The other writer of a FileStore: the workstation's cache filling from blobd (spectrum-cli get --cache, the
// code path the workstation uses for a blob store), killed at random points. After each kill the cache opens,
// serves nothing half-written, and keeps what was verified of the partial entry: the next attempt continues it
// (the verified bytes on record never go down between attempts), and the last attempt completes it.
void tst_Faults::killNineWhileTheCacheFetchesALargeBlobFiftyTimes()
{
    QTemporaryDir dir;
    const QString cacheRoot = dir.filePath(QStringLiteral("cache"));
    const QString token = QStringLiteral("fault-token-9012");
    const QByteArray big = randomBlob(64 << 20, 11), keep = randomBlob(1 << 20, 12);
    BlobdProcess blobd(dir.filePath(QStringLiteral("blobd")), 0, token);
    QVERIFY(blobd.start());
    BlobEndpoint ep;
    ep.port = blobd.port();
    ep.token = token;
    BlobClient client(ep);
    QVERIFY(runSync(client.push(QStringLiteral("big"), ByteView(big))).isOk());
    QVERIFY(runSync(client.push(QStringLiteral("keep"), ByteView(keep))).isOk());
    Result<RemoteBlobInfo> remote = runSync(client.stat(QStringLiteral("big")));
    QVERIFY(remote.isOk());
    const QString identity = resumeIdentity(remote.value());

    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_TOKEN"), token);
    env.insert(QStringLiteral("SPECTRUM_CACHE_DIR"), cacheRoot);
    auto get = [&](const QString &key) {
        auto p = std::make_unique<QProcess>();
        p->setProcessEnvironment(env);
        p->start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("get"), QStringLiteral("blob://127.0.0.1:%1/%2").arg(blobd.port()).arg(key), QStringLiteral("--cache")});
        return p;
    };
    auto openCache = [&](int round) -> std::unique_ptr<FileStore> {
        Result<std::unique_ptr<FileStore>> opened = FileStore::open(cacheRoot, 0);
        if (!opened.isOk())
            qWarning("round %d: %s", round, qPrintable(opened.error().toString()));
        return opened.isOk() ? opened.takeValue() : nullptr;
    };
    // What the cache's record says was verified of the partial entry, as the next attempt will find it.
    auto verifiedOnRecord = [&](FileStore &store) -> qint64 {
        Result<BlobWriterPtr> w = runSync(store.reserveResumable(QStringLiteral("big"), big.size(), identity));
        qint64 n = 0;
        if (w.isOk()) {
            for (const auto &[b, e] : w.value()->completedRanges())
                n += e - b;
        }
        return n;  // dropping the reservation keeps it for the next attempt
    };
    // A blob cached before any of it, and how long a whole fetch takes here.
    {
        std::unique_ptr<QProcess> first = get(QStringLiteral("keep"));
        QVERIFY2(first->waitForFinished(60000) && first->exitCode() == 0, first->readAllStandardError().constData());
    }
    qint64 wholeMs = 0;
    {
        QElapsedTimer clock;
        clock.start();
        std::unique_ptr<QProcess> whole = get(QStringLiteral("big"));
        QVERIFY2(whole->waitForFinished(60000) && whole->exitCode() == 0, whole->readAllStandardError().constData());
        wholeMs = clock.elapsed();
        std::unique_ptr<FileStore> store = openCache(-1);
        QVERIFY(store);
        QVERIFY(runSync(store->remove(QStringLiteral("big"))).isOk());
    }
    int completed = 0, continued = 0, absent = 0;
    qint64 onRecord = 0;
    QRandomGenerator random(13);
    for (int round = 0; round < 50; ++round) {
        std::unique_ptr<QProcess> fetching = get(QStringLiteral("big"));
        QVERIFY(fetching->waitForStarted());
        // The fault: SIGKILL at a random moment of the fetch (or of its start-up, or its commit).
        QTest::qWait(int(random.bounded(qint64(wholeMs * 9 / 10 + 20))));
        fetching->kill();
        fetching->waitForFinished(30000);
        std::unique_ptr<FileStore> store = openCache(round);
        QVERIFY2(store, qPrintable(QStringLiteral("round %1: the cache does not open after the kill").arg(round)));
        Result<QByteArray> k = readWhole(*store, QStringLiteral("keep"));
        QVERIFY2(k.isOk() && k.value() == keep, qPrintable(QStringLiteral("round %1: the untouched blob changed").arg(round)));
        Result<QByteArray> b = readWhole(*store, QStringLiteral("big"));
        if (b.isOk()) {
            QVERIFY2(b.value() == big, qPrintable(QStringLiteral("round %1: a blob served that is not the server's").arg(round)));
            ++completed;
            if (onRecord > 0)
                ++continued;  // finished what an earlier attempt left
            QVERIFY(runSync(store->remove(QStringLiteral("big"))).isOk());  // and again from the start
            onRecord = 0;
            continue;
        }
        QCOMPARE(b.error().code(), ErrorCode::NotFound);
        ++absent;
        const qint64 now = verifiedOnRecord(*store);
        QVERIFY2(now >= onRecord, qPrintable(QStringLiteral("round %1: the partial entry lost verified bytes (%2 → %3)").arg(round).arg(onRecord).arg(now)));
        if (now > onRecord && onRecord > 0)
            ++continued;
        onRecord = now;
    }
    qInfo() << "after 50 kills: completed" << completed << "times, left partial" << absent << "times;" << continued
            << "attempts continued a partial entry; verified bytes on record now:" << onRecord;
    QVERIFY2(continued > 0, "no attempt ever continued a partial entry");
    // The last attempt, not killed: it fetches only what is missing and the cache holds the blob whole.
    std::unique_ptr<QProcess> last = get(QStringLiteral("big"));
    QVERIFY(last->waitForFinished(60000));
    const QString report = QString::fromLocal8Bit(last->readAllStandardError());
    QVERIFY2(last->exitCode() == 0, qPrintable(report));
    const QRegularExpressionMatch resumed = QRegularExpression(QStringLiteral("(\\d+) resumed")).match(report);
    QVERIFY2(resumed.hasMatch(), qPrintable(report));
    QCOMPARE(resumed.captured(1).toLongLong(), onRecord);
    std::unique_ptr<FileStore> store = openCache(50);
    QVERIFY(store);
    Result<QByteArray> b = readWhole(*store, QStringLiteral("big"));
    QVERIFY(b.isOk() && b.value() == big);
}

void tst_Faults::aFullDiskIsAClearErrorAndLosesNothing()
{
    QTemporaryDir dir;
    const QString disk = dir.filePath(QStringLiteral("small"));
    QVERIFY(QDir().mkpath(disk));
    if (const QString why = mountTmpfs(disk, 16); !why.isEmpty())
        QSKIP(qPrintable(why));
    auto guard = qScopeGuard([&] { unmount(disk); });
    const QString root = disk + QStringLiteral("/cache");
    std::unique_ptr<FileStore> store = FileStore::open(root, 0).takeValue();
    QVERIFY(store);
    const QByteArray a = randomBlob(2 << 20, 11), b = randomBlob(3 << 20, 12);
    QVERIFY(runSync(store->put(QStringLiteral("a"), ByteView(a))).isOk());

    // Full before a write: refused with the reason, nothing made, the rest intact.
    const QString filler = fillDisk(disk);
    QVERIFY(!filler.isEmpty());
    Result<BlobInfo> refused = runSync(store->put(QStringLiteral("b"), ByteView(b)));
    QCOMPARE(refused.error().code(), ErrorCode::DiskFull);
    QVERIFY2(refused.error().toString().contains(QStringLiteral("free")), qPrintable(refused.error().toString()));
    Result<BlobWriterPtr> reserved = runSync(store->reserve(QStringLiteral("b"), b.size()));
    QCOMPARE(reserved.error().code(), ErrorCode::DiskFull);
    QCOMPARE(runSync(store->stat(QStringLiteral("b"))).error().code(), ErrorCode::NotFound);
    QCOMPARE(readWhole(*store, QStringLiteral("a")).value(), a);

    // Full while a blob is being written (its blocks were reserved at the start) and at its commit: the commit
    // either lands whole or fails clearly; either way the store reopens consistent.
    QVERIFY(QFile::remove(filler));
    Result<BlobWriterPtr> w = runSync(store->reserve(QStringLiteral("b"), b.size()));
    QVERIFY2(w.isOk(), qPrintable(w.error().toString()));
    QVERIFY(!fillDisk(disk).isEmpty());
    QCOMPARE(w.value()->writeAt(0, b.constData(), b.size()), Error());
    const Result<BlobInfo> committed = runSync(store->commit(w.value()));
    if (!committed.isOk())
        QVERIFY2(committed.error().code() == ErrorCode::DiskFull || committed.error().code() == ErrorCode::Io, qPrintable(committed.error().toString()));
    store.reset();
    QVERIFY(QFile::remove(filler));
    store = FileStore::open(root, 0).takeValue();
    QVERIFY(store);
    QCOMPARE(readWhole(*store, QStringLiteral("a")).value(), a);
    const Result<QByteArray> again = readWhole(*store, QStringLiteral("b"));
    QVERIFY(committed.isOk() ? again.isOk() && again.value() == b : again.error().code() == ErrorCode::NotFound);

    // Room again: the store is usable as before.
    QVERIFY(runSync(store->put(QStringLiteral("c"), ByteView(b))).isOk());
    QCOMPARE(readWhole(*store, QStringLiteral("c")).value(), b);
}

void tst_Faults::aReadOnlyCacheIsAClearStartError()
{
    QTemporaryDir dir;
    const QString disk = dir.filePath(QStringLiteral("ro"));
    QVERIFY(QDir().mkpath(disk));
    if (const QString why = mountTmpfs(disk, 4); !why.isEmpty())
        QSKIP(qPrintable(why));
    auto guard = qScopeGuard([&] { unmount(disk); });
    const QString root = disk + QStringLiteral("/cache");
    {
        std::unique_ptr<FileStore> store = FileStore::open(root, 0).takeValue();
        QVERIFY(store);
        QVERIFY(runSync(store->put(QStringLiteral("a"), ByteView(randomBlob(4096, 1)))).isOk());
    }
    QCOMPARE(QProcess::execute(QStringLiteral("mount"), {QStringLiteral("-o"), QStringLiteral("remount,ro"), disk}), 0);
    Result<std::unique_ptr<FileStore>> opened = FileStore::open(root, 0);
    QVERIFY(!opened.isOk());
    QVERIFY2(opened.error().toString().contains(root) && opened.error().toString().contains(QStringLiteral("not writable")),
             qPrintable(opened.error().toString()));

    // The workstation says so at start, instead of failing later.
    Workstation::Options options;
    options.cacheDirectory = root;
    options.seedDemoWhenEmpty = false;
    Workstation ws(options);
    QSignalSpy failed(&ws, &Workstation::startFailed);
    ws.start();
    QVERIFY(failed.wait(10000));
    QVERIFY2(failed.first().first().value<Error>().toString().contains(QStringLiteral("not writable")),
             qPrintable(failed.first().first().value<Error>().toString()));
}

QTEST_MAIN(tst_Faults)
#include "tst_faults.moc"
