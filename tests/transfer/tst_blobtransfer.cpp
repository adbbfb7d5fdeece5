// The blob protocol end to end: a real spectrum-blobd process on loopback, our client, and a relay in the
// middle that damages, stalls or cuts the traffic on purpose.

#include "spectrum/stores/filestore.h"
#include "spectrum/stores/diskfill.h"
#include "spectrum/transfer/blobclient.h"
#include "spectrum/transfer/blobprotocol.h"
#include "spectrum/transfer/buffersink.h"
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

namespace {

const QString kToken = QStringLiteral("test-token-1234");

using Blobd = BlobdProcess;

/// A TCP relay between client and server. Hooks act on the server → client bytes of each connection.
class Relay : public QObject
{
public:
    explicit Relay(quint16 upstream) : m_upstream(upstream)
    {
        m_server.listen(QHostAddress::LocalHost, 0);
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *down = m_server.nextPendingConnection()) {
                const int index = m_connections++;
                auto *up = new QTcpSocket(down);
                auto *pos = new qint64(0);
                connect(down, &QObject::destroyed, [pos] { delete pos; });
                up->connectToHost(QHostAddress::LocalHost, m_upstream);
                connect(down, &QTcpSocket::readyRead, up, [down, up] {
                    if (up->state() == QAbstractSocket::ConnectedState)
                        up->write(down->readAll());
                });
                connect(up, &QTcpSocket::connected, down, [down, up] { up->write(down->readAll()); });
                connect(up, &QTcpSocket::readyRead, down, [this, down, up, index, pos] {
                    QByteArray bytes = up->readAll();
                    if (onServerBytes && !onServerBytes(index, *pos, bytes)) {
                        down->abort();  // the hook cut the connection
                        return;
                    }
                    *pos += bytes.size();
                    if (!bytes.isEmpty())
                        down->write(bytes);
                });
                connect(up, &QTcpSocket::disconnected, down, &QTcpSocket::disconnectFromHost);
                connect(down, &QTcpSocket::disconnected, down, [down] { down->deleteLater(); });
            }
        });
    }
    quint16 port() const { return m_server.serverPort(); }
    int connections() const { return m_connections; }

    /// (connection index, stream position of bytes[0], bytes) → false cuts the connection. May edit or drop bytes.
    std::function<bool(int, qint64, QByteArray &)> onServerBytes;

private:
    quint16 m_upstream;
    QTcpServer m_server;
    int m_connections = 0;
};


struct Pulled
{
    Result<PullResult> result;
    QByteArray bytes;
    bool sinkRequested = false;
};

Pulled pull(BlobClient &client, const QString &key, ByteRange range = ByteRange::all())
{
    Pulled out;
    auto sink = std::make_shared<std::unique_ptr<BufferSink>>();
    out.result = runSync(client.pull(key, [&out, sink](const RemoteBlobInfo &, qint64 b, qint64 e) -> Result<ByteSink *> {
        out.sinkRequested = true;
        *sink = std::make_unique<BufferSink>(e - b);
        return sink->get();
    }, range));
    if (*sink)
        out.bytes = (*sink)->toByteArray();
    return out;
}

} // namespace

class tst_BlobTransfer : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
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
    void serverKilledAndRestartedResumes();
    void blobChangedBetweenAttemptsStartsOver();
    void tlsEncryptsEveryChannelAndVerifiesTheServer();
    void adaptiveAddsStreamsWhileTheRateGrows();
    void blobLargerThanFourGiBHasSixtyFourBitOffsets();
    void endgameDoesNotWaitForAStalledConnection();
    void killedClientResumesWhereItStopped();
    void interruptedCacheFillResumesAfterRestart();
    void connectionLimitAndIdleTimeoutHold();
    void idleSlowAndStoppedClientsDoNotStarveANormalOne();

private:
    std::unique_ptr<BlobClient> makeClient(quint16 port, TransferOptions opt = TransferOptions()) const
    {
        BlobEndpoint ep;
        ep.port = port;
        ep.token = kToken;
        auto c = std::make_unique<BlobClient>(ep);
        c->setDefaults(opt);
        return c;
    }
    Error put(quint16 port, const QString &key, const QByteArray &bytes, TransferOptions opt = TransferOptions())
    {
        return runSync(makeClient(port, opt)->push(key, ByteView(bytes))).error();
    }

    QTemporaryDir m_dir;
    std::unique_ptr<Blobd> m_blobd;
};

void tst_BlobTransfer::initTestCase()
{
    m_blobd = std::make_unique<Blobd>(m_dir.filePath(QStringLiteral("root")));
    QVERIFY(m_blobd->start());
}

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

void tst_BlobTransfer::serverKilledAndRestartedResumes()
{
    QTemporaryDir dir;
    const QString root = dir.filePath(QStringLiteral("root"));
    auto blobd = std::make_unique<Blobd>(root);
    QVERIFY(blobd->start());
    const QByteArray bytes = randomBytes(48 << 20, 15);
    QCOMPARE(put(blobd->port(), QStringLiteral("resume"), bytes), Error());

    // A relay slows the first attempt down so that the kill lands mid-transfer.
    Relay relay(blobd->port());
    bool killed = false;
    qint64 receivedAtKill = 0;
    TransferOptions opt;
    opt.streams = 4;
    opt.chunkSize = 1 << 20;
    auto c = makeClient(relay.port(), opt);
    auto sink = std::make_unique<BufferSink>(bytes.size());
    auto *job = c->pull(QStringLiteral("resume"), [&sink](const RemoteBlobInfo &, qint64, qint64) -> Result<ByteSink *> { return sink.get(); });
    connect(job, &Job::dataAvailable, this, [&](qint64, qint64 end) {
        if (!killed && end > 12 << 20) {
            killed = true;
            receivedAtKill = end;
            blobd->kill();              // kill -9: no goodbye
            blobd = std::make_unique<Blobd>(root, blobd->port());
            QVERIFY(blobd->start());    // back on the same port, same blobs
        }
    });
    Result<PullResult> r = runSync(job);
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QVERIFY(killed);
    QVERIFY(sink->toByteArray() == bytes);
    QVERIFY(r.value().verified);
    QVERIFY(r.value().reconnects >= 1);
    QCOMPARE(r.value().restarts, 0);
    // Only what was missing came again: at most what was in flight when the server died.
    const qint64 twice = r.value().bytesReceived - bytes.size() - r.value().bytesDuplicated;
    qInfo() << "bytes fetched twice after the kill:" << twice << "of" << bytes.size() << "(prefix at kill" << receivedAtKill << ")";
    QVERIFY(twice < qint64(opt.streams) * opt.pipelineDepth * opt.chunkSize + blobproto::kMaxDataFrame);
}

void tst_BlobTransfer::blobChangedBetweenAttemptsStartsOver()
{
    // Two roots hold two versions of one key; the server comes back from its crash serving the newer one.
    QTemporaryDir dir;
    const QString root1 = dir.filePath(QStringLiteral("root1")), root2 = dir.filePath(QStringLiteral("root2"));
    const QByteArray v1 = randomBytes(32 << 20, 16), v2 = randomBytes(32 << 20, 17);
    {
        Blobd other(root2);
        QVERIFY(other.start());
        QCOMPARE(put(other.port(), QStringLiteral("changing"), v2), Error());
    }
    auto blobd = std::make_unique<Blobd>(root1);
    QVERIFY(blobd->start());
    QCOMPARE(put(blobd->port(), QStringLiteral("changing"), v1), Error());
    TransferOptions opt;
    opt.streams = 2;
    opt.chunkSize = 1 << 20;
    auto c = makeClient(blobd->port(), opt);
    auto sink = std::make_unique<BufferSink>(v1.size());
    bool replaced = false;
    auto *job = c->pull(QStringLiteral("changing"), [&sink](const RemoteBlobInfo &, qint64, qint64) -> Result<ByteSink *> { return sink.get(); });
    connect(job, &Job::dataAvailable, this, [&](qint64, qint64 end) {
        if (!replaced && end > 8 << 20) {
            replaced = true;
            blobd->kill();
            blobd = std::make_unique<Blobd>(root2, blobd->port());
            QVERIFY(blobd->start());
        }
    });
    Result<PullResult> r = runSync(job);
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QVERIFY(replaced);
    QCOMPARE(r.value().restarts, 1);
    QVERIFY(sink->toByteArray() == v2);  // all of the new version, nothing of the old
    QVERIFY(r.value().verified);
}

void tst_BlobTransfer::tlsEncryptsEveryChannelAndVerifiesTheServer()
{
    QTemporaryDir dir;
    const QString cert = dir.filePath(QStringLiteral("cert.pem")), key = dir.filePath(QStringLiteral("key.pem"));
    const ProcessResult made = run(QStringLiteral("openssl"), {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"), QStringLiteral("rsa:2048"),
                                                               QStringLiteral("-nodes"), QStringLiteral("-days"), QStringLiteral("1"), QStringLiteral("-subj"), QStringLiteral("/CN=localhost"),
                                                               QStringLiteral("-addext"), QStringLiteral("subjectAltName=IP:127.0.0.1,DNS:localhost"),
                                                               QStringLiteral("-keyout"), key, QStringLiteral("-out"), cert});
    QVERIFY2(made.ok(), made.err.constData());
    BlobdProcess blobd(dir.filePath(QStringLiteral("root")));
    QVERIFY(blobd.start({QStringLiteral("--tls-cert"), cert, QStringLiteral("--tls-key"), key}));

    BlobEndpoint ep;
    ep.port = blobd.port();
    ep.token = blobd.token();
    ep.tls = true;
    ep.caFile = cert;  // the hospital's own CA, here the self-signed certificate itself
    BlobClient secure(ep);
    TransferOptions opt;
    opt.streams = 3;
    secure.setDefaults(opt);
    const QByteArray bytes = randomBytes(5 << 20, 21);
    QCOMPARE(runSync(secure.push(QStringLiteral("private"), ByteView(bytes))).error(), Error());
    Pulled p = pull(secure, QStringLiteral("private"));
    QVERIFY2(p.result.isOk(), qPrintable(p.result.error().toString()));
    QVERIFY(p.bytes == bytes);
    QVERIFY(p.result.value().verified);

    // Without trusting that certificate, no connection: a clear TLS error, no data.
    BlobEndpoint untrusting = ep;
    untrusting.caFile.clear();
    BlobClient wary(untrusting);
    Pulled refused = pull(wary, QStringLiteral("private"));
    QCOMPARE(refused.result.error().code(), ErrorCode::Authentication);
    QVERIFY2(refused.result.error().message().contains(QLatin1String("TLS")), qPrintable(refused.result.error().message()));
    QVERIFY(!refused.sinkRequested);

    // A plain-text client gets nothing either.
    BlobEndpoint plain = ep;
    plain.tls = false;
    BlobClient naive(plain);
    TransferOptions quick;
    quick.timeoutMs = 3000;
    naive.setDefaults(quick);
    Pulled nothing = pull(naive, QStringLiteral("private"));
    QVERIFY(!nothing.result.isOk());
    QVERIFY(!nothing.sinkRequested);
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
    QVERIFY(p.result.value().streams >= 3);
    QVERIFY(p.result.value().streams <= TransferOptions().maxStreams);
}

void tst_BlobTransfer::blobLargerThanFourGiBHasSixtyFourBitOffsets()
{
    // A 5 GiB blob, mostly zeros, with marks past 4 GiB; served by a real server, read back by ranges.
    QTemporaryDir dir;
    const QString root = dir.filePath(QStringLiteral("root"));
    const qint64 size = (qint64(5) << 30) + 123;
    const qint64 marks[] = {0, (qint64(4) << 30) - 3, (qint64(4) << 30) + 77, size - 16};
    {
        auto store = FileStore::open(root, 0);
        QVERIFY(store.isOk());
        Result<BlobWriterPtr> w = runSync(store.value()->reserve(QStringLiteral("huge"), size));
        if (!w.isOk() && w.error().code() == ErrorCode::DiskFull)
            QSKIP("not enough free disk for a 5 GiB blob");
        QVERIFY2(w.isOk(), qPrintable(w.error().toString()));
        for (qint64 at : marks)
            QVERIFY(!w.value()->writeAt(at, "SPECTRUM-64-BITS", 16).isError());
        Result<BlobInfo> committed = runSync(store.value()->commit(w.value()));
        QVERIFY2(committed.isOk(), qPrintable(committed.error().toString()));
        QCOMPARE(committed.value().size, size);
    }
    BlobdProcess blobd(root);
    QVERIFY(blobd.start());
    auto c = makeClient(blobd.port());
    Result<RemoteBlobInfo> st = runSync(c->stat(QStringLiteral("huge")));
    QVERIFY(st.isOk());
    QCOMPARE(st.value().size, size);
    for (qint64 at : marks) {
        Pulled p = pull(*c, QStringLiteral("huge"), ByteRange::of(at - (at > 1000 ? 1000 : 0), at + 16));
        QVERIFY2(p.result.isOk(), qPrintable(p.result.error().toString()));
        QVERIFY(p.bytes.endsWith("SPECTRUM-64-BITS"));
    }
    Pulled tail = pull(*c, QStringLiteral("huge"), ByteRange::of(size - 3 * (qint64(1) << 20), size));
    QVERIFY(tail.result.isOk());
    QCOMPARE(tail.bytes.size(), 3 << 20);
    QVERIFY(tail.bytes.endsWith("SPECTRUM-64-BITS"));
}

void tst_BlobTransfer::endgameDoesNotWaitForAStalledConnection()
{
    const QByteArray bytes = randomBytes(4 << 20, 23);
    QCOMPARE(put(m_blobd->port(), QStringLiteral("endgame"), bytes), Error());
    Relay relay(m_blobd->port());
    relay.onServerBytes = [](int connection, qint64 pos, QByteArray &b) {
        if (connection == 1 && pos + b.size() > 100000)
            b.truncate(std::max<qint64>(0, 100000 - pos));  // the first data connection goes silent, stays open
        return true;
    };
    TransferOptions opt;
    opt.streams = 2;
    opt.chunkSize = 256 * 1024;
    opt.timeoutMs = 60000;  // far beyond this test: only the endgame can finish it early
    auto c = makeClient(relay.port(), opt);
    Pulled p = pull(*c, QStringLiteral("endgame"));
    QVERIFY2(p.result.isOk(), qPrintable(p.result.error().toString()));
    QVERIFY(p.bytes == bytes);
    QVERIFY(p.result.value().verified);
    QVERIFY(p.result.value().endgameRequests >= 1);
    QCOMPARE(p.result.value().reconnects, 0);  // no timeout was needed
}

void tst_BlobTransfer::killedClientResumesWhereItStopped()
{
    QTemporaryDir dir;
    const QByteArray bytes = randomBytes(40 << 20, 24);
    QCOMPARE(put(m_blobd->port(), QStringLiteral("resumable"), bytes), Error());
    // A slow path (about 8 MB/s), so that the kill lands mid-download.
    LinkEmulator emu(m_blobd->port(), 20, 64, 64);
    QVERIFY(emu.waitUntilListening());

    const QString out = dir.filePath(QStringLiteral("out.bin"));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_TOKEN"), m_blobd->token());
    QProcess first;
    first.setProcessEnvironment(env);
    first.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("get"), QStringLiteral("blob://127.0.0.1:%1/resumable").arg(emu.port()),
                                                          out, QStringLiteral("--streams"), QStringLiteral("4")});
    QVERIFY(first.waitForStarted());
    // Wait until the progress record holds something, then kill -9: no goodbye, no flush.
    auto recorded = [&] {
        const QJsonArray ranges = QJsonDocument::fromJson(readFile(out + QStringLiteral(".partial"))).object().value(QStringLiteral("ranges")).toArray();
        qint64 n = 0;
        for (const QJsonValue &r : ranges)
            n += r.toArray().at(1).toString().toLongLong() - r.toArray().at(0).toString().toLongLong();
        return n;
    };
    QTRY_VERIFY_WITH_TIMEOUT(recorded() > 0 || first.state() != QProcess::Running, 60000);
    QVERIFY2(first.state() == QProcess::Running, first.readAllStandardError().constData());
    first.kill();
    first.waitForFinished();
    const qint64 kept = recorded();
    QVERIFY(kept > 0 && kept < bytes.size());

    // The same command again (straight to the server now): only the rest comes over the wire.
    QProcess second;
    second.setProcessEnvironment(env);
    second.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("get"), QStringLiteral("blob://127.0.0.1:%1/resumable").arg(m_blobd->port()), out});
    QVERIFY(second.waitForFinished(60000));
    const QByteArray summary = second.readAllStandardError();
    QVERIFY2(second.exitCode() == 0, summary.constData());
    QVERIFY2(summary.contains(QByteArray::number(kept) + " resumed"), summary.constData());
    QVERIFY(summary.contains("SHA-256 verified"));
    QVERIFY(readFile(out) == bytes);
    QVERIFY(!QFile::exists(out + QStringLiteral(".partial")));
}

void tst_BlobTransfer::interruptedCacheFillResumesAfterRestart()
{
    // The workstation's cache fills from a remote store; the network dies half-way; the workstation restarts;
    // the next read fetches only what was missing.
    QTemporaryDir dir;
    const QByteArray bytes = randomBytes(48 << 20, 25);
    QCOMPARE(put(m_blobd->port(), QStringLiteral("cache-fill"), bytes), Error());
    const QString cacheRoot = dir.filePath(QStringLiteral("cache"));
    TransferOptions opt;
    opt.streams = 2;
    opt.maxReconnects = 0;
    {
        Relay dying(m_blobd->port());
        qint64 forwarded = 0;
        dying.onServerBytes = [&forwarded](int connection, qint64, QByteArray &b) {
            if (connection == 0)
                return true;  // the control connection
            forwarded += b.size();
            return forwarded < (30 << 20);  // every data connection is cut once 30 MB went through
        };
        BlobEndpoint ep;
        ep.port = dying.port();
        ep.token = kToken;
        RemoteBlobStore remote(ep, opt);
        auto disk = FileStore::open(cacheRoot, 0).takeValue();
        Result<PullResult> r = fillDiskFromRemote(*disk, remote, QStringLiteral("cache-fill"));
        QVERIFY(!r.isOk());
        QCOMPARE(runSync(disk->stat(QStringLiteral("cache-fill"))).error().code(), ErrorCode::NotFound);  // nothing half-made is visible
    }
    // "Restart": everything reopened; the record of what arrived survived.
    Relay counting(m_blobd->port());
    qint64 secondTime = 0;
    counting.onServerBytes = [&secondTime](int, qint64, QByteArray &b) {
        secondTime += b.size();
        return true;
    };
    BlobEndpoint ep;
    ep.port = counting.port();
    ep.token = kToken;
    RemoteBlobStore remote(ep);
    auto disk = FileStore::open(cacheRoot, 0).takeValue();
    Result<PullResult> pulled = fillDiskFromRemote(*disk, remote, QStringLiteral("cache-fill"));
    QVERIFY2(pulled.isOk(), qPrintable(pulled.error().toString()));
    Result<ByteView> r = runSync(disk->read(QStringLiteral("cache-fill")));
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QVERIFY(r.value().toByteArray() == bytes);
    qInfo() << "second attempt moved" << secondTime << "bytes of" << bytes.size();
    QVERIFY(secondTime < bytes.size() - (16 << 20));  // at least the 16 MiB recorded before the cut were kept
    QVERIFY(QDir(cacheRoot + QStringLiteral("/staging")).entryList(QDir::Files).isEmpty());  // committed: no leftovers
}

void tst_BlobTransfer::connectionLimitAndIdleTimeoutHold()
{
    QTemporaryDir dir;
    BlobdProcess blobd(dir.filePath(QStringLiteral("root")));
    QVERIFY(blobd.start({QStringLiteral("--max-connections"), QStringLiteral("2"), QStringLiteral("--idle-timeout"), QStringLiteral("1")}));
    QTcpSocket a, b, c;
    for (QTcpSocket *s : {&a, &b}) {
        s->connectToHost(QHostAddress::LocalHost, blobd.port());
        QVERIFY(s->waitForConnected(5000));
    }
    // The server accepts in order, so the third connection is the one over the limit.
    QSignalSpy refused(&c, &QTcpSocket::disconnected);
    c.connectToHost(QHostAddress::LocalHost, blobd.port());
    QVERIFY(c.waitForConnected(5000));
    QVERIFY(refused.wait(5000));  // the third is closed at once
    // The two idle ones are closed after their idle timeout, well before the test's patience runs out.
    QSignalSpy idleA(&a, &QTcpSocket::disconnected), idleB(&b, &QTcpSocket::disconnected);
    QTRY_VERIFY_WITH_TIMEOUT(idleA.count() == 1 && idleB.count() == 1, 10000);
    // Capacity is free again: a real client is served.
    QCOMPARE(runSync(makeClient(blobd.port())->push(QStringLiteral("after"), ByteView(QByteArray("ok")))).error(), Error());
}

namespace {
/// Resident memory of process `pid` in bytes (Linux), or −1.
qint64 residentBytes(qint64 pid)
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').first().toLongLong() * 1024;
    }
    return -1;
}
} // namespace

// A thousand idle connections, a client trickling one byte every two seconds (slowloris), and a client that
// stopped reading in the middle of a 256 MB download: a normal client is still served, the server's memory stays
// bounded (it sends only what the kernel takes), the idle ones are closed after their idle timeout and the
// trickling one when its time to say hello is up.
void tst_BlobTransfer::idleSlowAndStoppedClientsDoNotStarveANormalOne()
{
    QTemporaryDir dir;
    BlobdProcess blobd(dir.filePath(QStringLiteral("root")));
    QVERIFY(blobd.start({QStringLiteral("--max-connections"), QStringLiteral("1100"), QStringLiteral("--idle-timeout"), QStringLiteral("6")}));
    const QByteArray big = randomBytes(256 << 20, 31);
    QCOMPARE(put(blobd.port(), QStringLiteral("big"), big), Error());
    const qint64 before = residentBytes(blobd.pid());
    QVERIFY(before > 0);

    std::vector<std::unique_ptr<QTcpSocket>> idle;
    for (int i = 0; i < 1000; ++i) {
        idle.push_back(std::make_unique<QTcpSocket>());
        idle.back()->connectToHost(QHostAddress::LocalHost, blobd.port());
    }
    auto connected = [&] { return std::count_if(idle.begin(), idle.end(), [](const auto &s) { return s->state() == QAbstractSocket::ConnectedState; }); };
    QTRY_VERIFY_WITH_TIMEOUT(connected() == 1000, 30000);

    QTcpSocket slow;
    slow.connectToHost(QHostAddress::LocalHost, blobd.port());
    QVERIFY(slow.waitForConnected(5000));
    const QByteArray preface = blobproto::preface(blobproto::Channel::Control);
    int trickled = 0;
    QTimer trickle;
    connect(&trickle, &QTimer::timeout, &slow, [&] {
        if (slow.state() == QAbstractSocket::ConnectedState)
            slow.write(preface.mid(trickled++ % preface.size(), 1));
    });
    trickle.start(2000);

    // The reader that stops: a download, frozen (SIGSTOP) once data flows.
    const QString out = dir.filePath(QStringLiteral("frozen.bin"));
    QProcess frozen;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_TOKEN"), blobd.token());
    frozen.setProcessEnvironment(env);
    frozen.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("get"), QStringLiteral("blob://127.0.0.1:%1/big").arg(blobd.port()), out,
                                                           QStringLiteral("--streams"), QStringLiteral("4"), QStringLiteral("--no-sha256")});
    QVERIFY(frozen.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(out + QStringLiteral(".partial")) || frozen.state() != QProcess::Running, 30000);
    QVERIFY2(frozen.state() == QProcess::Running, "the download ended before it could be frozen");
    ::kill(pid_t(frozen.processId()), SIGSTOP);
    auto thaw = qScopeGuard([&] {
        ::kill(pid_t(frozen.processId()), SIGKILL);
        frozen.waitForFinished(10000);
    });

    // Meanwhile, a normal client stores and reads back a blob.
    const QByteArray small = randomBytes(8 << 20, 32);
    QCOMPARE(put(blobd.port(), QStringLiteral("normal"), small), Error());
    Pulled back = pull(*makeClient(blobd.port()), QStringLiteral("normal"));
    QVERIFY2(back.result.isOk(), qPrintable(back.result.isOk() ? QString() : back.result.error().toString()));
    QVERIFY(back.bytes == small);

    // Bounded: the frozen reader's data waits in the kernel, not in the server (at most a frame per connection).
    const qint64 after = residentBytes(blobd.pid());
    qInfo() << "server memory:" << before / 1048576 << "MiB before," << after / 1048576 << "MiB with 1,000 idle, a slow and a frozen client";
    QVERIFY2(after - before < (128 << 20), qPrintable(QStringLiteral("grew by %1 MiB").arg((after - before) >> 20)));

    // The idle ones go after their idle timeout, the trickling one after the handshake's time (however it
    // spreads its bytes); the server is still there for the next client.
    QTRY_VERIFY_WITH_TIMEOUT(connected() == 0, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(slow.state() == QAbstractSocket::UnconnectedState, 30000);
    QVERIFY(trickled >= 2);
    // Its log told what it dropped and why, never the token its clients presented.
    const QByteArray log = readFile(dir.filePath(QStringLiteral("root.log")));
    QVERIFY(log.contains("dropping"));
    QVERIFY(!log.contains(blobd.token().toUtf8()));
    QCOMPARE(runSync(makeClient(blobd.port())->push(QStringLiteral("after"), ByteView(QByteArray("ok")))).error(), Error());
}

QTEST_GUILESS_MAIN(tst_BlobTransfer)
#include "tst_blobtransfer.moc"
