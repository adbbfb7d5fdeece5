// SPDX-License-Identifier: Apache-2.0
// Verified streaming: the blob's hash tree (1 MiB leaves, a root over their SHA-256s, as S3's composite checksums)
// equal to Python's hashlib on the same bytes; a real spectrum-blobd that sends it; every leaf checked before anyone
// hears of its bytes; a byte rotted on the server's disk caught at its leaf, nothing past it reported; bytes kept
// from an interrupted attempt checked like any others; servers and clients of either kind still verify; a cache
// written before trees were kept gets them when first served.

#include "spectrum/stores/blobs/diskfill.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/blobs/remoteblobstore.h"
#include "spectrum/transfer/blobclient.h"
#include "spectrum/transfer/buffersink.h"
#include "spectrum/transfer/hashtree.h"
#include "spectrum/transfer/rangeset.h"
#include "spectrum/transfer/s3client.h"
#include "spectrum/transfer/sha256.h"
#include "blobserversuite.h"
#include "blobsupport.h"
#include "testsupport.h"
#include "cacheindex.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;
using namespace spectrum::test;

namespace {

/// A sink that says [0, kept) is here from an earlier attempt — and holds `damagedAt` changed.
class KeptSink : public BufferSink
{
public:
    KeptSink(const QByteArray &bytes, qint64 kept, qint64 damagedAt) : BufferSink(bytes.size()), m_kept(kept)
    {
        std::copy(bytes.constData(), bytes.constData() + kept, data());
        data()[damagedAt] = char(data()[damagedAt] ^ 0x20);
    }
    QList<QPair<qint64, qint64>> completedRanges() const override { return {{0, m_kept}}; }

private:
    qint64 m_kept;
};

} // namespace

class tst_VerifiedStreaming : public BlobServerSuite
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { BlobServerSuite::initTestCase(); }
    void rangeSetRemove();
    void leavesAndRootEqualHashlib();
    void reportsOnlyWholeCheckedLeaves();
    void aByteRottedOnTheServersDiskIsCaughtAtItsLeaf();
    void keptBytesAreCheckedLikeAnyOthers();
    void withoutATreeTheWholeSha256IsChecked();
    void aCacheFromBeforeTreesGetsThemWhenFirstServed();
    void aCacheFillCheckedByTheTreeKeepsIt();
};

void tst_VerifiedStreaming::rangeSetRemove()
{
    RangeSet s;
    s.add(0, 100);
    s.add(200, 300);
    s.remove(50, 250);
    QCOMPARE(s.covered(), qint64(100));
    QVERIFY(s.covers(0, 50) && s.covers(250, 300));
    QVERIFY(!s.covers(49, 51) && !s.covers(249, 251));
    s.remove(0, 1000);
    QVERIFY(s.isEmpty());
    s.add(0, 10);
    s.remove(3, 4);
    QCOMPARE(s.ranges().size(), size_t(2));
    QCOMPARE(s.covered(), qint64(9));
}

void tst_VerifiedStreaming::leavesAndRootEqualHashlib()
{
    // Sizes around the leaf: none, one byte, one leaf, one byte more, several and a bit.
    for (const qint64 size : {qint64(0), qint64(1), hashtree::kLeafSize, hashtree::kLeafSize + 1, 5 * hashtree::kLeafSize + 12345}) {
        const QByteArray bytes = randomBytes(size, quint32(size + 7));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("blob"));
        QVERIFY(writeFile(path, bytes));
        const ProcessResult py = run(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QStringLiteral(
            "import hashlib,sys\n"
            "b=open(sys.argv[1],'rb').read()\n"
            "leaves=b''.join(hashlib.sha256(b[i:i+1048576]).digest() for i in range(0,len(b),1048576))\n"
            "print('L'+leaves.hex()); print(hashlib.sha256(leaves).hexdigest())\n"), path});
        QVERIFY2(py.exitCode == 0, py.err.constData());
        const QList<QByteArray> lines = py.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        const QByteArray leaves = hashtree::leaves(bytes.constData(), bytes.size());
        QCOMPARE(QByteArray("L" + leaves.toHex()), lines[0].trimmed());
        QCOMPARE(hashtree::root(leaves).toHex(), lines[1].trimmed());
        QVERIFY(hashtree::fits(leaves, size));
        QCOMPARE(leaves.size(), hashtree::leafCount(size) * 32);
        if (size > 0 && size <= hashtree::kLeafSize)
            QCOMPARE(leaves, Sha256::hash(bytes.constData(), bytes.size()));  // one leaf: the blob's own SHA-256
        // The construction of S3's composite checksums: the root is the composite of the leaves as parts.
        QList<QByteArray> parts;
        for (qint64 i = 0; i < hashtree::leafCount(size); ++i)
            parts << hashtree::leafDigest(leaves, i);
        QCOMPARE(s3::compositeChecksum(parts), hashtree::root(leaves).toBase64() + '-' + QByteArray::number(parts.size()));
    }
}

void tst_VerifiedStreaming::reportsOnlyWholeCheckedLeaves()
{
    const QByteArray bytes = randomBytes(9 * hashtree::kLeafSize + 777, 41);
    QCOMPARE(put(m_blobd->port(), QStringLiteral("tree-ok"), bytes), Error());
    TransferOptions opt;
    opt.streams = 4;
    auto c = makeClient(m_blobd->port(), opt);
    Result<RemoteBlobInfo> st = runSync(c->stat(QStringLiteral("tree-ok")));
    QVERIFY2(st.isOk(), qPrintable(st.error().toString()));
    QCOMPARE(st.value().tree, hashtree::leaves(bytes.constData(), bytes.size()));

    auto sink = std::make_unique<BufferSink>(bytes.size());
    QList<qint64> reported;
    auto *job = c->pull(QStringLiteral("tree-ok"), [&](const RemoteBlobInfo &, qint64, qint64) -> Result<ByteSink *> { return sink.get(); });
    connect(job, &Job::dataAvailable, this, [&](qint64, qint64 end) { reported << end; });
    Result<PullResult> r = runSync(job);
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QVERIFY(r.value().verified && r.value().verifiedByTree);
    QVERIFY(sink->toByteArray() == bytes);
    // Only whole leaves are ever reported: every prefix ends on a leaf boundary, or at the end — though the requests
    // and frames of a blob this small end elsewhere (its chunks are cut to give four streams work).
    QVERIFY(!reported.isEmpty());
    QCOMPARE(reported.last(), qint64(bytes.size()));
    for (const qint64 end : reported)
        QVERIFY2(end % hashtree::kLeafSize == 0 || end == bytes.size(), qPrintable(QString::number(end)));
}

void tst_VerifiedStreaming::aByteRottedOnTheServersDiskIsCaughtAtItsLeaf()
{
    QTemporaryDir dir;
    const QString root = dir.filePath(QStringLiteral("root"));
    Blobd blobd(root);
    QVERIFY(blobd.start());
    const QByteArray bytes = randomBytes(8 * hashtree::kLeafSize, 42);
    QCOMPARE(put(blobd.port(), QStringLiteral("rot"), bytes), Error());
    auto c = makeClient(blobd.port());
    // Served once whole, the tree is kept; then a byte of leaf 5 changes on the server's disk. The server reads it
    // through its mapping as it is now, and its frames' XXH3 are computed over what it sends: only the tree knows.
    QVERIFY(pull(*c, QStringLiteral("rot")).result.isOk());
    const qint64 at = 5 * hashtree::kLeafSize + 4321;
    QVERIFY(damageOnDisk(root, bytes, at, QByteArray(1, char(bytes[at] ^ 0x01))));

    auto sink = std::make_unique<BufferSink>(bytes.size());
    qint64 reported = 0;
    auto *job = c->pull(QStringLiteral("rot"), [&](const RemoteBlobInfo &, qint64, qint64) -> Result<ByteSink *> { return sink.get(); });
    connect(job, &Job::dataAvailable, this, [&](qint64, qint64 end) { reported = std::max(reported, end); });
    Result<PullResult> r = runSync(job);
    QVERIFY(!r.isOk());
    QCOMPARE(r.error().code(), ErrorCode::Corrupt);
    QVERIFY2(r.error().toString().contains(QStringLiteral("leaf 5")), qPrintable(r.error().toString()));
    QVERIFY2(reported <= 5 * hashtree::kLeafSize, qPrintable(QString::number(reported)));
}

void tst_VerifiedStreaming::keptBytesAreCheckedLikeAnyOthers()
{
    const QByteArray bytes = randomBytes(6 * hashtree::kLeafSize + 99, 43);
    QCOMPARE(put(m_blobd->port(), QStringLiteral("kept"), bytes), Error());
    // An earlier attempt left three leaves and a half — one byte of leaf 1 changed since (this disk, a crash).
    KeptSink sink(bytes, 3 * hashtree::kLeafSize + hashtree::kLeafSize / 2, hashtree::kLeafSize + 10);
    auto c = makeClient(m_blobd->port());
    Result<PullResult> r = runSync(c->pull(QStringLiteral("kept"), [&](const RemoteBlobInfo &, qint64, qint64) -> Result<ByteSink *> { return &sink; }));
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QVERIFY(r.value().verifiedByTree);
    QVERIFY(sink.toByteArray() == bytes);
    QCOMPARE(r.value().framesRefetched, 1);  // leaf 1 again, and nothing else that was kept
    QCOMPARE(r.value().resumedBytes, 3 * hashtree::kLeafSize + hashtree::kLeafSize / 2);
    QVERIFY(r.value().bytesReceived <= bytes.size() - r.value().resumedBytes + hashtree::kLeafSize + r.value().bytesDuplicated);

    // Everything kept, one leaf changed: a connection is opened for that leaf alone.
    KeptSink all(bytes, bytes.size(), 2 * hashtree::kLeafSize + 5);
    Result<PullResult> again = runSync(c->pull(QStringLiteral("kept"), [&](const RemoteBlobInfo &, qint64, qint64) -> Result<ByteSink *> { return &all; }));
    QVERIFY2(again.isOk(), qPrintable(again.error().toString()));
    QVERIFY(all.toByteArray() == bytes);
    QCOMPARE(again.value().framesRefetched, 1);
    QCOMPARE(again.value().bytesReceived, hashtree::kLeafSize);
}

void tst_VerifiedStreaming::withoutATreeTheWholeSha256IsChecked()
{
    // A client that does not ask (as version-1 clients do not) gets no tree, and checks the whole blob's SHA-256;
    // the same server sends the tree to one that asks.
    const QByteArray bytes = randomBytes(3 * hashtree::kLeafSize + 5, 44);
    QCOMPARE(put(m_blobd->port(), QStringLiteral("both"), bytes), Error());
    TransferOptions old;
    old.hashTree = false;
    auto oldClient = makeClient(m_blobd->port(), old);
    Result<RemoteBlobInfo> st = runSync(oldClient->stat(QStringLiteral("both")));
    QVERIFY(st.isOk());
    QVERIFY(st.value().tree.isEmpty());
    Pulled p = pull(*oldClient, QStringLiteral("both"));
    QVERIFY2(p.result.isOk(), qPrintable(p.result.error().toString()));
    QVERIFY(p.result.value().verified && !p.result.value().verifiedByTree);
    QVERIFY(p.bytes == bytes);

    auto newClient = makeClient(m_blobd->port());
    Pulled q = pull(*newClient, QStringLiteral("both"));
    QVERIFY2(q.result.isOk(), qPrintable(q.result.error().toString()));
    QVERIFY(q.result.value().verified && q.result.value().verifiedByTree);
    QCOMPARE(q.result.value().blob.sha256, Sha256::hash(bytes.constData(), bytes.size()));

    // A range is not a whole blob: neither is checked beyond the frames' XXH3, as before.
    Pulled part = pull(*newClient, QStringLiteral("both"), ByteRange::of(100, 2 * hashtree::kLeafSize));
    QVERIFY(part.result.isOk());
    QVERIFY(!part.result.value().verified);
    QVERIFY(part.bytes == bytes.mid(100, 2 * hashtree::kLeafSize - 100));
}

void tst_VerifiedStreaming::aCacheFromBeforeTreesGetsThemWhenFirstServed()
{
    QTemporaryDir dir;
    const QString root = dir.filePath(QStringLiteral("cache"));
    const QByteArray big = randomBytes(5 * hashtree::kLeafSize + 3, 45), small = randomBytes(300000, 46);
    {
        auto store = FileStore::open(root, 0);
        QVERIFY2(store.isOk(), qPrintable(store.error().toString()));
        QVERIFY(runSync(store.value()->put(QStringLiteral("big"), ByteView(big))).isOk());
        QVERIFY(runSync(store.value()->put(QStringLiteral("small"), ByteView(small))).isOk());
    }
    // What a cache written before trees looks like: no tree in any row.
    const QString trees = QStringLiteral("SELECT count(*) FROM blobs WHERE tree IS NOT NULL");
    QCOMPARE(indexSql(root, trees), QStringList{QStringLiteral("1")});  // kept from the commit, which hashed the blob anyway
    QCOMPARE(indexSql(root, QStringLiteral("UPDATE blobs SET tree = NULL")), QStringList());

    {
        auto opened = FileStore::open(root, 0);
        QVERIFY(opened.isOk());
        FileStore &store = *opened.value();
        Result<BlobInfo> s = runSync(store.stat(QStringLiteral("small")));
        QVERIFY(s.isOk());
        QCOMPARE(s.value().tree, Sha256::hash(small.constData(), small.size()));  // one leaf: nothing to compute
        Result<BlobSnapshot> b = runSync(store.snapshot(QStringLiteral("big")));
        QVERIFY2(b.isOk(), qPrintable(b.error().toString()));
        QCOMPARE(b.value().info.tree, hashtree::leaves(big.constData(), big.size()));
        QCOMPARE(b.value().info.sha256, Sha256::hash(big.constData(), big.size()));
        // Kept: recorded at once (not only at a clean close).
        QCOMPARE(indexSql(root, trees), QStringList{QStringLiteral("1")});
    }
    // And a reopened cache has it without reading the blob.
    {
        auto opened = FileStore::open(root, 0);
        QVERIFY(opened.isOk());
        FileStore &store = *opened.value();
        BlobQuery bigQuery;
        bigQuery.keyPrefix = QStringLiteral("big");
        Result<QList<BlobInfo>> all = runSync(store.query(bigQuery));
        QVERIFY(all.isOk() && all.value().size() == 1);
        QCOMPARE(all.value()[0].tree, hashtree::leaves(big.constData(), big.size()));
    }
}

void tst_VerifiedStreaming::aCacheFillCheckedByTheTreeKeepsIt()
{
    // The workstation's way of bringing a blob into its disk cache: the pull checks every leaf, the cache keeps the
    // tree it was checked against and computes the whole SHA-256 only when asked.
    const QByteArray bytes = randomBytes(3 * hashtree::kLeafSize + 1234, 47);
    QCOMPARE(put(m_blobd->port(), QStringLiteral("fill"), bytes), Error());
    QTemporaryDir dir;
    auto disk = FileStore::open(dir.filePath(QStringLiteral("cache")), 0);
    QVERIFY(disk.isOk());
    BlobEndpoint ep;
    ep.port = m_blobd->port();
    ep.token = kToken;
    RemoteBlobStore remote(ep, TransferOptions());
    Result<PullResult> r = fillDiskFromRemote(*disk.value(), remote, QStringLiteral("fill"), CommitOptions());
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QVERIFY(r.value().verifiedByTree);
    Result<BlobSnapshot> kept = runSync(disk.value()->snapshot(QStringLiteral("fill")));
    QVERIFY2(kept.isOk(), qPrintable(kept.error().toString()));
    QVERIFY(kept.value().bytes.toByteArray() == bytes);
    QCOMPARE(kept.value().info.tree, hashtree::leaves(bytes.constData(), bytes.size()));
    QCOMPARE(kept.value().info.sha256, Sha256::hash(bytes.constData(), bytes.size()));
}

QTEST_GUILESS_MAIN(tst_VerifiedStreaming)
#include "tst_verifiedstreaming.moc"
