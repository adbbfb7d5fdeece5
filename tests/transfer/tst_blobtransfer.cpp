// SPDX-License-Identifier: Apache-2.0
// The blob protocol end to end: a real spectrum-blobd process on loopback, our client, and a relay in the
// middle that damages, stalls or cuts the traffic on purpose.

#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/blobs/diskfill.h"
#include "spectrum/transfer/blobclient.h"
#include "spectrum/transfer/blobprotocol.h"
#include "spectrum/transfer/buffersink.h"
#include "blobsupport.h"
#include "blobserversuite.h"
#include "testsupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QDir>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <sys/types.h>
#include <QTimer>
#include <QScopeGuard>

using namespace spectrum;
using namespace spectrum::test;

class tst_BlobTransfer : public BlobServerSuite
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { BlobServerSuite::initTestCase(); }
    void roundTripSizesAndStreams_data();
    void roundTripSizesAndStreams();
    void randomRanges();
    void statAndList();
    void wrongTokenGetsNoData();
    void missingBlobIsNotFound();
    void flippedBitRefetchesOnlyThatFrame();
    void cutDataConnectionIsRecovered();
    void stalledServerTimesOut();
    void hostileFramesCloseOnlyThatConnection_data();
    void hostileFramesCloseOnlyThatConnection();
    void thirtyTwoConcurrentClients();
    void adaptiveAddsStreamsWhileTheRateGrows();
};

void tst_BlobTransfer::roundTripSizesAndStreams_data()
{
    QTest::addColumn<qint64>("size");
    QTest::addColumn<int>("streams");
    const qint64 chunk = 64 * 1024;
    const QList<QPair<const char *, qint64>> sizes = {
        {"empty", 0}, {"one byte", 1}, {"chunk-1", chunk - 1}, {"chunk", chunk}, {"chunk+1", chunk + 1},
        {"37 chunks and a bit", 37 * chunk + 5}, {"two frames and a bit", 2 * (1 << 20) + 17}};
    for (const auto &[name, size] : sizes) {
        for (int streams : {1, 4, 16})
            QTest::addRow("%s, %d stream(s)", name, streams) << size << streams;
    }
}

void tst_BlobTransfer::roundTripSizesAndStreams()
{
    QFETCH(qint64, size);
    QFETCH(int, streams);
    TransferOptions opt;
    opt.streams = streams;
    opt.chunkSize = 64 * 1024;
    const QByteArray bytes = randomBytes(size, quint32(size * 31 + streams));
    const QString key = QStringLiteral("size-%1-%2").arg(size).arg(streams);
    QCOMPARE(put(m_blobd->port(), key, bytes, opt), Error());
    auto c = makeClient(m_blobd->port(), opt);
    Pulled p = pull(*c, key);
    QVERIFY2(p.result.isOk(), qPrintable(p.result.error().toString()));
    QCOMPARE(p.bytes.size(), bytes.size());
    QVERIFY(p.bytes == bytes);
    QCOMPARE(p.result.value().verified, true);
    QCOMPARE(p.result.value().framesRefetched, 0);
    QVERIFY(p.result.value().streams <= streams);
    // Nothing crossed the wire twice, but what the endgame asked for again if a connection stalled.
    QVERIFY(p.result.value().bytesReceived >= size);
    QVERIFY(p.result.value().bytesReceived <= size + p.result.value().bytesDuplicated);
}

void tst_BlobTransfer::randomRanges()
{
    const QByteArray bytes = randomBytes(3 * 1000 * 1000 + 7, 99);
    QCOMPARE(put(m_blobd->port(), QStringLiteral("ranges"), bytes), Error());
    TransferOptions opt;
    opt.streams = 3;
    opt.chunkSize = 100 * 1000;
    auto c = makeClient(m_blobd->port(), opt);
    QRandomGenerator rng(7);
    for (int i = 0; i < 20; ++i) {
        qint64 a = rng.bounded(bytes.size() + 1), b = rng.bounded(bytes.size() + 1);
        if (a > b)
            std::swap(a, b);
        Pulled p = pull(*c, QStringLiteral("ranges"), ByteRange::of(a, b));
        QVERIFY2(p.result.isOk(), qPrintable(p.result.error().toString()));
        QCOMPARE(p.result.value().begin, a);
        QCOMPARE(p.result.value().end, b);
        QVERIFY(p.bytes == bytes.mid(a, b - a));
        QVERIFY(!p.result.value().verified || (a == 0 && b == bytes.size()));
    }
    Pulled outside = pull(*c, QStringLiteral("ranges"), ByteRange::of(10, bytes.size() + 1));
    QCOMPARE(outside.result.error().code(), ErrorCode::OutOfRange);
}

void tst_BlobTransfer::statAndList()
{
    const QByteArray bytes = randomBytes(1000, 5);
    QCOMPARE(put(m_blobd->port(), QStringLiteral("list-a"), bytes), Error());
    QCOMPARE(put(m_blobd->port(), QStringLiteral("list-b"), bytes), Error());
    auto c = makeClient(m_blobd->port());
    Result<RemoteBlobInfo> st = runSync(c->stat(QStringLiteral("list-a")));
    QVERIFY(st.isOk());
    QCOMPARE(st.value().size, 1000);
    QCOMPARE(st.value().sha256, QCryptographicHash::hash(bytes, QCryptographicHash::Sha256));
    Result<QList<RemoteBlobInfo>> ls = runSync(c->list(QStringLiteral("list-")));
    QVERIFY(ls.isOk());
    QCOMPARE(ls.value().size(), 2);
    QCOMPARE(ls.value().at(1).key, QStringLiteral("list-b"));
    QCOMPARE(runSync(c->push(QStringLiteral("../escape"), ByteView(bytes))).error().code(), ErrorCode::InvalidKey);
}

void tst_BlobTransfer::wrongTokenGetsNoData()
{
    QCOMPARE(put(m_blobd->port(), QStringLiteral("secret"), "classified"), Error());
    BlobEndpoint ep;
    ep.port = m_blobd->port();
    ep.token = QStringLiteral("not-the-token");
    BlobClient c(ep);
    Pulled p = pull(c, QStringLiteral("secret"));
    QCOMPARE(p.result.error().code(), ErrorCode::Authentication);
    QVERIFY(!p.sinkRequested);
    QCOMPARE(runSync(c.stat(QStringLiteral("secret"))).error().code(), ErrorCode::Authentication);
    QCOMPARE(runSync(c.push(QStringLiteral("secret"), ByteView(QByteArray("overwrite")))).error().code(), ErrorCode::Authentication);
    auto good = makeClient(m_blobd->port());
    QCOMPARE(pull(*good, QStringLiteral("secret")).bytes, QByteArray("classified"));
}

void tst_BlobTransfer::missingBlobIsNotFound()
{
    auto c = makeClient(m_blobd->port());
    Pulled p = pull(*c, QStringLiteral("no-such-blob"));
    QCOMPARE(p.result.error().code(), ErrorCode::NotFound);
    QVERIFY(!p.sinkRequested);
}

void tst_BlobTransfer::flippedBitRefetchesOnlyThatFrame()
{
    const QByteArray bytes = randomBytes(8 << 20, 11);
    QCOMPARE(put(m_blobd->port(), QStringLiteral("flip"), bytes), Error());
    Relay relay(m_blobd->port());
    int flips = 0;
    relay.onServerBytes = [&flips](int connection, qint64 pos, QByteArray &b) {
        // Connection 0 is the control connection; 1 is the first data connection. Byte 300000 of its stream
        // lies inside the payload of its first DATA frame.
        const qint64 target = 300000;
        if (connection == 1 && flips == 0 && pos <= target && target < pos + b.size()) {
            b[target - pos] = char(b[target - pos] ^ 0x10);
            ++flips;
        }
        return true;
    };
    TransferOptions opt;
    opt.streams = 2;
    auto c = makeClient(relay.port(), opt);
    Pulled p = pull(*c, QStringLiteral("flip"));
    QVERIFY2(p.result.isOk(), qPrintable(p.result.error().toString()));
    QCOMPARE(flips, 1);
    QCOMPARE(p.result.value().framesRefetched, 1);
    QVERIFY(p.bytes == bytes);
    QVERIFY(p.result.value().verified);
    // Exactly one frame (at most 1 MiB) crossed the wire twice.
    QVERIFY(p.result.value().bytesReceived > bytes.size());
    QVERIFY(p.result.value().bytesReceived <= bytes.size() + blobproto::kMaxDataFrame + p.result.value().bytesDuplicated);
}

void tst_BlobTransfer::cutDataConnectionIsRecovered()
{
    const QByteArray bytes = randomBytes(6 << 20, 12);
    QCOMPARE(put(m_blobd->port(), QStringLiteral("cut"), bytes), Error());
    Relay relay(m_blobd->port());
    relay.onServerBytes = [](int connection, qint64 pos, QByteArray &b) {
        // The first data connection dies after 1.5 MB, in the middle of a frame.
        return !(connection == 1 && pos + b.size() > 1500000);
    };
    TransferOptions opt;
    opt.streams = 2;
    auto c = makeClient(relay.port(), opt);
    Pulled p = pull(*c, QStringLiteral("cut"));
    QVERIFY2(p.result.isOk(), qPrintable(p.result.error().toString()));
    QVERIFY(p.bytes == bytes);
    QVERIFY(p.result.value().reconnects >= 1);
    QVERIFY(p.result.value().verified);
}

void tst_BlobTransfer::stalledServerTimesOut()
{
    const QByteArray bytes = randomBytes(4 << 20, 13);
    QCOMPARE(put(m_blobd->port(), QStringLiteral("stall"), bytes), Error());
    Relay relay(m_blobd->port());
    relay.onServerBytes = [](int connection, qint64 pos, QByteArray &b) {
        if (connection > 0 && pos + b.size() > 100000)
            b.truncate(std::max<qint64>(0, 100000 - pos));  // data connections go silent after 100 kB
        return true;
    };
    TransferOptions opt;
    opt.timeoutMs = 1000;
    opt.maxReconnects = 1;
    auto c = makeClient(relay.port(), opt);
    QElapsedTimer clock;
    clock.start();
    Pulled p = pull(*c, QStringLiteral("stall"));
    QCOMPARE(p.result.error().code(), ErrorCode::Timeout);
    QVERIFY2(p.result.error().message().contains(QLatin1String("no data")), qPrintable(p.result.error().message()));
    QVERIFY(clock.elapsed() < 20000);
}

void tst_BlobTransfer::hostileFramesCloseOnlyThatConnection_data()
{
    QTest::addColumn<QByteArray>("attack");
    QTest::newRow("not our protocol") << QByteArray("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    QTest::newRow("future version") << QByteArray("SPBS\x09\x01\x00\x00", 8);
    QTest::newRow("4 GiB control frame") << (blobproto::preface(blobproto::Channel::Control) + QByteArray("\xff\xff\xff\xff", 4));
    QTest::newRow("control frame not CBOR") << (blobproto::preface(blobproto::Channel::Control) + QByteArray("\x00\x00\x00\x03xyz", 7));
    QTest::newRow("request before hello") << (blobproto::preface(blobproto::Channel::Control)
                                              + blobproto::encodeControl(QCborMap{{QStringLiteral("t"), QStringLiteral("open")}, {QStringLiteral("key"), QStringLiteral("flip")}}));
    QTest::newRow("attach to no session") << (blobproto::preface(blobproto::Channel::Data)
                                              + blobproto::encodeControl(QCborMap{{QStringLiteral("t"), QStringLiteral("attach")}, {QStringLiteral("session"), QStringLiteral("guess")}}));
}

void tst_BlobTransfer::hostileFramesCloseOnlyThatConnection()
{
    QFETCH(QByteArray, attack);
    QTcpSocket hostile;
    hostile.connectToHost(QHostAddress::LocalHost, m_blobd->port());
    QVERIFY(hostile.waitForConnected(5000));
    QSignalSpy closed(&hostile, &QTcpSocket::disconnected);
    hostile.write(attack);
    QVERIFY(closed.wait(5000));  // the server hangs up on it…
    auto c = makeClient(m_blobd->port());
    Pulled p = pull(*c, QStringLiteral("ranges"));  // …and goes on serving everybody else
    QVERIFY2(p.result.isOk(), qPrintable(p.result.error().toString()));
}

void tst_BlobTransfer::thirtyTwoConcurrentClients()
{
    const QByteArray bytes = randomBytes(2 << 20, 14);
    QCOMPARE(put(m_blobd->port(), QStringLiteral("shared"), bytes), Error());
    TransferOptions opt;
    opt.streams = 2;
    opt.chunkSize = 256 * 1024;
    std::vector<std::unique_ptr<BlobClient>> clients;
    std::vector<std::unique_ptr<BufferSink>> sinks(32);
    int ok = 0, finished = 0;
    for (int i = 0; i < 32; ++i) {
        clients.push_back(makeClient(m_blobd->port(), opt));
        auto *job = clients.back()->pull(QStringLiteral("shared"), [&sinks, i](const RemoteBlobInfo &, qint64 b, qint64 e) -> Result<ByteSink *> {
            sinks[i] = std::make_unique<BufferSink>(e - b);
            return sinks[i].get();
        });
        connect(job, &Job::finished, this, [&, i, job] {
            ++finished;
            if (!job->hasError() && sinks[i]->toByteArray() == bytes && job->result().value().verified)
                ++ok;
        });
        job->start(ExecutionPolicy::Async);  // all at once, on one event loop
    }
    QTRY_COMPARE_WITH_TIMEOUT(finished, 32, 60000);
    QCOMPARE(ok, 32);
}

void tst_BlobTransfer::adaptiveAddsStreamsWhileTheRateGrows()
{
    // Through an emulated long path each connection is held to window / RTT (here 0.8 MB/s) while the link
    // carries 5 MB/s: more streams pay, and the adaptive client must find that out by itself.
    LinkEmulator emu(m_blobd->port(), 20, 16, 40);
    QVERIFY(emu.waitUntilListening());
    const QByteArray bytes = randomBytes(6 << 20, 22);
    QCOMPARE(put(m_blobd->port(), QStringLiteral("adaptive"), bytes), Error());
    auto c = makeClient(emu.port());  // default options: adaptive
    Pulled p = pull(*c, QStringLiteral("adaptive"));
    QVERIFY2(p.result.isOk(), qPrintable(p.result.error().toString()));
    QVERIFY(p.bytes == bytes);
    qInfo() << "adaptive pull used" << p.result.value().streams << "streams in" << p.result.value().seconds << "s";
    // A 20 ms path starts with four, and four carry 3.2 of the link's 5 MB/s: the first step multiplies them.
    QVERIFY2(p.result.value().streams >= 8, qPrintable(QString::number(p.result.value().streams)));
    QVERIFY(p.result.value().streams <= TransferOptions().maxStreams);

    // A link that four streams fill, behind a server that allows 64: the first step (four times as many) adds
    // nothing, and the count stops there instead of doubling on to the maximum.
    QTemporaryDir dir;
    Blobd wide(dir.filePath(QStringLiteral("root")));
    QVERIFY(wide.start({QStringLiteral("--max-streams"), QStringLiteral("64")}));
    LinkEmulator full(wide.port(), 20, 16, 26);
    QVERIFY(full.waitUntilListening());
    const QByteArray more = randomBytes(4 << 20, 23);
    QCOMPARE(put(wide.port(), QStringLiteral("adaptive-full"), more), Error());
    TransferOptions many;
    many.maxStreams = 64;
    auto n = makeClient(full.port(), many);
    Pulled q = pull(*n, QStringLiteral("adaptive-full"));
    QVERIFY2(q.result.isOk(), qPrintable(q.result.error().toString()));
    QVERIFY(q.bytes == more);
    qInfo() << "adaptive pull through a full link used" << q.result.value().streams << "streams in" << q.result.value().seconds << "s";
    // Usually 16; on a loaded machine one step's measured gain may be noise enough for one more doubling (32 was
    // seen once in a full parallel test run). Never on to the maximum: growth stops when the link is full.
    QVERIFY2(q.result.value().streams >= 16 && q.result.value().streams < many.maxStreams, qPrintable(QString::number(q.result.value().streams)));
}

QTEST_GUILESS_MAIN(tst_BlobTransfer)
#include "tst_blobtransfer.moc"
