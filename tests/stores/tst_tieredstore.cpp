// RemoteBlobStore and TieredStore against a real spectrum-blobd: reads fill the caches once, writes push
// through, queries reach the remote's DICOM index, budgets hold.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/stores/tieredstore.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;
using namespace spectrum::test;

namespace {
BlobEndpoint endpointOf(const BlobdProcess &blobd)
{
    BlobEndpoint ep;
    ep.port = blobd.port();
    ep.token = blobd.token();
    return ep;
}

Result<BlobInfo> putBlob(BlobStore &store, const QString &key, const QByteArray &bytes)
{
    Result<BlobWriterPtr> w = runSync(store.reserve(key, bytes.size()));
    if (!w.isOk())
        return w.error();
    if (Error e = w.value()->writeAt(0, bytes.constData(), bytes.size()); e.isError())
        return e;
    return runSync(store.commit(w.value()));
}
} // namespace

class tst_TieredStore : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void remoteStoreIsABlobStore();
    void remoteReadFillsDiskAndMemoryOnce();
    void writesPushThrough();
    void budgetsHold();
};

void tst_TieredStore::remoteStoreIsABlobStore()
{
    QTemporaryDir dir;
    BlobdProcess blobd(dir.filePath(QStringLiteral("remote")));
    QVERIFY(blobd.start());
    RemoteBlobStore remote(endpointOf(blobd));
    DemoOptions demo;
    demo.studies = {DemoStudy::HeadMr};
    demo.mrSlices = 3;
    QList<DemoInstance> instances;
    DemoArchive::generate(demo, [&](DemoInstance &&i) { instances << std::move(i); return Error(); });
    for (const DemoInstance &i : instances)
        QVERIFY(putBlob(remote, i.identity.sopInstanceUid, i.bytes).isOk());

    BlobQuery byStudy;
    byStudy.studyInstanceUid = DemoArchive::studyUid(DemoStudy::HeadMr);
    Result<QList<BlobInfo>> found = runSync(remote.query(byStudy));
    QVERIFY2(found.isOk(), qPrintable(found.error().toString()));
    QCOMPARE(found.value().size(), 3);
    QCOMPARE(found.value().first().dicom.patientId, QStringLiteral("DEMO-HEAD-001"));  // the server's index travels

    const DemoInstance &first = instances.first();
    Result<ByteView> range = runSync(remote.read(first.identity.sopInstanceUid, ByteRange::of(128, 132)));
    QVERIFY(range.isOk());
    QCOMPARE(range.value().toByteArray(), QByteArray("DICM"));
    Result<BlobSnapshot> snap = runSync(remote.snapshot(first.identity.sopInstanceUid));
    QVERIFY(snap.isOk());
    QVERIFY(snap.value().bytes.toByteArray() == first.bytes);
    QVERIFY(runSync(remote.remove(first.identity.sopInstanceUid)).isOk());
    QCOMPARE(runSync(remote.stat(first.identity.sopInstanceUid)).error().code(), ErrorCode::NotFound);
}

void tst_TieredStore::remoteReadFillsDiskAndMemoryOnce()
{
    QTemporaryDir dir;
    auto blobd = std::make_unique<BlobdProcess>(dir.filePath(QStringLiteral("remote")));
    QVERIFY(blobd->start());
    RemoteBlobStore remote(endpointOf(*blobd));
    QByteArray bytes(3 << 20, Qt::Uninitialized);
    for (int i = 0; i < bytes.size(); ++i)
        bytes[i] = char(i * 131 + 7);
    QVERIFY(putBlob(remote, QStringLiteral("far-away"), bytes).isOk());

    MemoryStore memory(64 << 20);
    auto disk = FileStore::open(dir.filePath(QStringLiteral("cache")), 0).takeValue();
    TieredStore tiered(&memory, disk.get(), &remote);
    QCOMPARE(runSync(disk->stat(QStringLiteral("far-away"))).error().code(), ErrorCode::NotFound);

    Result<ByteView> first = runSync(tiered.read(QStringLiteral("far-away"), ByteRange::of(1000, 2000)));
    QVERIFY2(first.isOk(), qPrintable(first.error().toString()));
    QVERIFY(first.value().toByteArray() == bytes.mid(1000, 1000));
    // Now it is on the disk (whole, verified) and in memory.
    Result<BlobInfo> onDisk = runSync(disk->stat(QStringLiteral("far-away")));
    QVERIFY(onDisk.isOk());
    QCOMPARE(onDisk.value().size, bytes.size());
    QVERIFY(runSync(memory.stat(QStringLiteral("far-away"))).isOk());

    // With the remote gone, reads are still served: locally.
    blobd->kill();
    Result<ByteView> again = runSync(tiered.read(QStringLiteral("far-away")));
    QVERIFY2(again.isOk(), qPrintable(again.error().toString()));
    QVERIFY(again.value().toByteArray() == bytes);
    Result<ByteView> evictedFromMemory = (runSync(memory.remove(QStringLiteral("far-away"))), runSync(tiered.read(QStringLiteral("far-away"))));
    QVERIFY(evictedFromMemory.isOk());  // the disk tier answers
    QCOMPARE(runSync(tiered.read(QStringLiteral("never-there"))).error().code(), ErrorCode::Network);
}

void tst_TieredStore::writesPushThrough()
{
    QTemporaryDir dir;
    BlobdProcess blobd(dir.filePath(QStringLiteral("remote")));
    QVERIFY(blobd.start());
    RemoteBlobStore remote(endpointOf(blobd));
    MemoryStore memory(64 << 20);
    auto disk = FileStore::open(dir.filePath(QStringLiteral("cache")), 0).takeValue();
    TieredStore tiered(&memory, disk.get(), &remote);
    const QByteArray bytes("a processed image, say");
    Result<BlobInfo> info = putBlob(tiered, QStringLiteral("derived-1"), bytes);
    QVERIFY2(info.isOk(), qPrintable(info.error().toString()));
    Result<BlobInfo> atRemote = runSync(remote.stat(QStringLiteral("derived-1")));
    QVERIFY(atRemote.isOk());
    QCOMPARE(atRemote.value().sha256, info.value().sha256);
    QVERIFY(runSync(disk->stat(QStringLiteral("derived-1"))).isOk());
    BlobQuery all;
    Result<QList<BlobInfo>> merged = runSync(tiered.query(all));
    QVERIFY(merged.isOk());
    QCOMPARE(merged.value().size(), 1);  // one blob in two tiers is one blob
    QVERIFY(runSync(tiered.remove(QStringLiteral("derived-1"))).isOk());
    QCOMPARE(runSync(remote.stat(QStringLiteral("derived-1"))).error().code(), ErrorCode::NotFound);
}

void tst_TieredStore::budgetsHold()
{
    QTemporaryDir dir;
    BlobdProcess blobd(dir.filePath(QStringLiteral("remote")));
    QVERIFY(blobd.start());
    RemoteBlobStore remote(endpointOf(blobd));
    for (int i = 0; i < 6; ++i)
        QVERIFY(putBlob(remote, QStringLiteral("b%1").arg(i), QByteArray(1 << 20, char('a' + i))).isOk());
    MemoryStore memory(2 << 20);
    auto disk = FileStore::open(dir.filePath(QStringLiteral("cache")), 3 << 20).takeValue();
    TieredStore tiered(&memory, disk.get(), &remote);
    for (int i = 0; i < 6; ++i) {
        Result<ByteView> r = runSync(tiered.read(QStringLiteral("b%1").arg(i)));
        QVERIFY(r.isOk());
        QCOMPARE(r.value().toByteArray(), QByteArray(1 << 20, char('a' + i)));
        QVERIFY(memory.usage().bytes <= 2 << 20);
        QVERIFY(disk->usage().bytes <= 3 << 20);
    }
    QCOMPARE(disk->usage().blobs, 3);  // the three most recent
}

QTEST_GUILESS_MAIN(tst_TieredStore)
#include "tst_tieredstore.moc"
