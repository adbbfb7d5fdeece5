// SPDX-License-Identifier: Apache-2.0
// The blob protocol when things go wrong: a server killed and restarted, a blob changed between attempts, TLS
// with an untrusted or wrong server, offsets past 4 GiB, a stalled connection at the end, a killed client, a cache
// fill interrupted by a restart, connection limits and idle, slow and stopped clients.

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

class tst_BlobFaults : public BlobServerSuite
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { BlobServerSuite::initTestCase(); }
    void serverKilledAndRestartedResumes();
    void blobChangedBetweenAttemptsStartsOver();
    void tlsEncryptsEveryChannelAndVerifiesTheServer();
    void blobLargerThanFourGiBHasSixtyFourBitOffsets();
    void endgameDoesNotWaitForAStalledConnection();
    void killedClientResumesWhereItStopped();
    void interruptedCacheFillResumesAfterRestart();
    void connectionLimitAndIdleTimeoutHold();
    void idleSlowAndStoppedClientsDoNotStarveANormalOne();
};

void tst_BlobFaults::serverKilledAndRestartedResumes()
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

void tst_BlobFaults::blobChangedBetweenAttemptsStartsOver()
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
    // Behind a link of 100 Mbit/s (some 2.7 s for the 32 MiB): the change is made a quarter of the way through,
    // however late the test hears of it on a loaded machine — on loopback the whole of v1 could be in before it did
    // (a CI run: no restart, v1 received and verified, which is right but not what this tests).
    LinkEmulator link(blobd->port(), 2, 256, 100);
    QVERIFY(link.waitUntilListening());
    auto c = makeClient(link.port(), opt);
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

void tst_BlobFaults::tlsEncryptsEveryChannelAndVerifiesTheServer()
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

void tst_BlobFaults::blobLargerThanFourGiBHasSixtyFourBitOffsets()
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

void tst_BlobFaults::endgameDoesNotWaitForAStalledConnection()
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

void tst_BlobFaults::killedClientResumesWhereItStopped()
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
        const QJsonArray ranges = QJsonDocument::fromJson(readFile(out + QStringLiteral(".part.partial"))).object().value(QStringLiteral("ranges")).toArray();
        qint64 n = 0;
        for (const QJsonValue &r : ranges)
            n += r.toArray().at(1).toString().toLongLong() - r.toArray().at(0).toString().toLongLong();
        return n;
    };
    QTRY_VERIFY_WITH_TIMEOUT(recorded() > 0 || first.state() != QProcess::Running, 60000);
    QVERIFY2(first.state() == QProcess::Running, first.readAllStandardError().constData());
    first.kill();
    first.waitForFinished();
    QVERIFY(!QFile::exists(out));  // what came is in OUT.part: nothing under the name asked for
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
    QVERIFY2(summary.contains("checked against the server's hash tree"), summary.constData());
    QVERIFY(readFile(out) == bytes);
    QVERIFY(!QFile::exists(out + QStringLiteral(".part")) && !QFile::exists(out + QStringLiteral(".part.partial")));
}

void tst_BlobFaults::interruptedCacheFillResumesAfterRestart()
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

void tst_BlobFaults::connectionLimitAndIdleTimeoutHold()
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
void tst_BlobFaults::idleSlowAndStoppedClientsDoNotStarveANormalOne()
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
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(out + QStringLiteral(".part.partial")) || frozen.state() != QProcess::Running, 30000);
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

QTEST_GUILESS_MAIN(tst_BlobFaults)
#include "tst_blobfaults.moc"
