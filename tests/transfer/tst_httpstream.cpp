// SPDX-License-Identifier: Apache-2.0
// The direct HTTP reader (transfer/src/httpstream.h) against a server written here, which answers each request
// with bytes chosen by the test: every framing (length, chunks with extensions and trailers, until close), bodies
// cut short, a server that stalls (timeout, cancel), one that refuses; and DicomWebClient's retrieval over it,
// including a refused token that is refreshed.
#include "testsupport.h"

#include "httpstream.h"  // private to transfer

#include "spectrum/transfer/dicomweb.h"

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTimer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QtConcurrent>

#include <functional>

using namespace spectrum;
using namespace spectrum::test;

namespace {

/// Answers every request (once its head is in) with what `answer(request)` gives, then closes — or, when
/// `stall` is set, sends that much and keeps the connection open without another byte.
class TestServer : public QObject
{
public:
    std::function<QByteArray(const QByteArray &request)> answer;
    bool stall = false;
    QList<QByteArray> requests;

    TestServer()
    {
        QObject::connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *s = m_server.nextPendingConnection()) {
                s->setParent(this);
                auto request = std::make_shared<QByteArray>();
                QObject::connect(s, &QTcpSocket::readyRead, s, [this, s, request] {
                    *request += s->readAll();
                    if (!request->contains("\r\n\r\n") || s->property("answered").toBool())
                        return;
                    s->setProperty("answered", true);
                    requests << *request;
                    s->write(answer(*request));
                    if (!stall)
                        s->disconnectFromHost();
                });
            }
        });
    }
    bool listen() { return m_server.listen(QHostAddress::LocalHost); }
    QUrl url(const QString &path) const { return QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(m_server.serverPort()).arg(path)); }

private:
    QTcpServer m_server;
};

/// An HTTP/1.1 server that keeps connections open: it reads each request (its head, and the body its
/// Content-Length says) and answers with `answer(request)`, on the same connection, until the client closes — or,
/// with `dropReused`, closes a connection without a word when a second request comes on it (as a server does that
/// closed an idle connection just as the client sent on it).
class KeepAliveServer : public QObject
{
public:
    std::function<QByteArray(const QByteArray &request)> answer;
    bool dropReused = false;
    QList<QByteArray> requests;
    int connections = 0;

    KeepAliveServer()
    {
        QObject::connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *s = m_server.nextPendingConnection()) {
                s->setParent(this);
                ++connections;
                auto pending = std::make_shared<QByteArray>();
                auto served = std::make_shared<int>(0);
                QObject::connect(s, &QTcpSocket::readyRead, s, [this, s, pending, served] {
                    *pending += s->readAll();
                    for (;;) {
                        const qsizetype end = pending->indexOf("\r\n\r\n");
                        if (end < 0)
                            return;
                        const QByteArray head = pending->left(end + 4);
                        const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("Content-Length: (\\d+)")).match(QString::fromLatin1(head));
                        const qint64 length = m.hasMatch() ? m.captured(1).toLongLong() : 0;
                        if (pending->size() < head.size() + length)
                            return;
                        const QByteArray request = pending->left(head.size() + length);
                        pending->remove(0, request.size());
                        if (dropReused && ++*served > 1) {
                            s->abort();
                            return;
                        }
                        requests << request;
                        s->write(answer(request));
                    }
                });
            }
        });
    }
    bool listen() { return m_server.listen(QHostAddress::LocalHost); }
    QUrl url(const QString &path) const { return QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(m_server.serverPort()).arg(path)); }
    QByteArray peer() const { return QByteArray("127.0.0.1:") + QByteArray::number(m_server.serverPort()); }

private:
    QTcpServer m_server;
};

/// Keeps the body, taking some of it through direct buffers of random sizes and the rest through feed().
class Collector : public HttpBodyConsumer
{
public:
    HttpHead headSeen;
    QByteArray body;
    int directReads = 0;
    bool ended = false;

    Error head(const HttpHead &h) override
    {
        headSeen = h;
        return Error();
    }
    char *directBuffer(qint64 wanted, qint64 *capacity) override
    {
        if (m_random.bounded(3) == 0)
            return nullptr;
        *capacity = std::min<qint64>(wanted, 1 + m_random.bounded(70000));
        m_at = body.size();
        body.resize(m_at + *capacity);
        return body.data() + m_at;
    }
    Error tookDirect(qint64 n) override
    {
        body.resize(m_at + n);
        directReads += n > 0;
        return Error();
    }
    Error feed(const char *data, qint64 n) override
    {
        body.append(data, n);
        return Error();
    }
    Error end() override
    {
        ended = true;
        return Error();
    }

private:
    QRandomGenerator m_random{7};
    qint64 m_at = 0;
};

/// runHttpGet on a worker thread while this thread's event loop serves; the test waits on its result.
Error get(const QUrl &url, Collector &c, int timeoutMs = 5000, HttpCancel *cancel = nullptr, const QList<QPair<QByteArray, QByteArray>> &fields = {})
{
    HttpCancel own;
    HttpCancel &k = cancel ? *cancel : own;
    QFuture<Error> f = QtConcurrent::run([&] { return runHttpGet(url, fields, timeoutMs, c, k); });
    if (!QTest::qWaitFor([&] { return f.isFinished(); }, timeoutMs + 10000)) {
        k.cancel();  // so that the worker, which holds references to this frame, ends before it goes
        f.waitForFinished();
        return Error(ErrorCode::Internal, QStringLiteral("the reader did not return"));
    }
    return f.result();
}

/// runHttp on a worker thread while this thread's event loop serves.
Error exchange(const HttpRequest &request, Collector &c, int timeoutMs = 5000)
{
    HttpCancel cancel;
    QFuture<Error> f = QtConcurrent::run([&] { return runHttp(request, timeoutMs, c, cancel); });
    if (!QTest::qWaitFor([&] { return f.isFinished(); }, timeoutMs + 10000)) {
        cancel.cancel();
        f.waitForFinished();
        return Error(ErrorCode::Internal, QStringLiteral("the reader did not return"));
    }
    return f.result();
}

} // namespace

class tst_HttpStream : public QObject
{
    Q_OBJECT
private slots:
    void sendsTheRequestAndReadsALengthFramedBody();
    void readsChunkedBodiesWithExtensionsAndTrailers();
    void readsUntilTheServerCloses();
    void aBodyCutShortIsAnError_data();
    void aBodyCutShortIsAnError();
    void aStalledServerTimesOutAndACancelEndsTheWaitAtOnce();
    void aRefusedConnectionIsANetworkError();
    void keptConnectionsCarryTheNextRequestsAndBodiesGoOut();
    void aKeptConnectionThePeerClosedIsReplacedUnseen();
    void anHttp10AnswerKeepsItsConnectionOnlyWhenItSaysSo();
    void oneLengthSaidTwiceIsOneLength();
    void dicomWebRetrievalRefreshesARefusedToken();
};

void tst_HttpStream::sendsTheRequestAndReadsALengthFramedBody()
{
    TestServer server;
    QVERIFY(server.listen());
    const QByteArray body = randomBytes(3'000'000, 1);
    server.answer = [&](const QByteArray &) { return "HTTP/1.1 200 OK\r\nContent-Type: application/x\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body; };
    Collector c;
    QCOMPARE(get(server.url(QStringLiteral("/a/b?x=1&y=%2F")), c, 5000, nullptr, {{"Accept", "multipart/related"}, {"Authorization", "Bearer t"}}), Error());
    QVERIFY(c.ended);
    QCOMPARE(c.headSeen.status, 200);
    QCOMPARE(c.headSeen.value("content-type"), QByteArray("application/x"));
    QVERIFY(c.body == body);
    QVERIFY(c.directReads > 0);  // straight into the consumer's memory, not only through feed()
    QCOMPARE(server.requests.size(), 1);
    const QByteArray &r = server.requests.first();
    QVERIFY2(r.startsWith("GET /a/b?x=1&y=%2F HTTP/1.1\r\n"), r.constData());
    QVERIFY(r.contains("\r\nHost: 127.0.0.1:"));
    QVERIFY(r.contains("\r\nAccept: multipart/related\r\n"));
    QVERIFY(r.contains("\r\nAuthorization: Bearer t\r\n"));
    QVERIFY(r.contains("\r\nConnection: close\r\n"));
}

void tst_HttpStream::readsChunkedBodiesWithExtensionsAndTrailers()
{
    TestServer server;
    QVERIFY(server.listen());
    const QByteArray body = randomBytes(1'000'000, 2);
    server.answer = [&](const QByteArray &) {
        QByteArray a = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        QRandomGenerator g(3);
        for (int at = 0; at < body.size();) {
            const int n = std::min<int>(body.size() - at, 1 + int(g.bounded(100000)));
            a += QByteArray::number(n, 16) + (at == 0 ? ";name=value" : "") + "\r\n" + body.mid(at, n) + "\r\n";
            at += n;
        }
        return a + "0\r\nX-Trailer: yes\r\n\r\n";
    };
    Collector c;
    QCOMPARE(get(server.url(QStringLiteral("/c")), c), Error());
    QVERIFY(c.ended);
    QVERIFY(c.body == body);
}

void tst_HttpStream::readsUntilTheServerCloses()
{
    TestServer server;
    QVERIFY(server.listen());
    const QByteArray body = randomBytes(2'000'000, 4);
    server.answer = [&](const QByteArray &) { return "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body; };  // as Orthanc answers WADO-RS
    Collector c;
    QCOMPARE(get(server.url(QStringLiteral("/u")), c), Error());
    QVERIFY(c.body == body);
}

void tst_HttpStream::aBodyCutShortIsAnError_data()
{
    QTest::addColumn<QByteArray>("answer");
    QTest::newRow("shorter than its length") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n") + QByteArray(500, 'x');
    QTest::newRow("chunks without the last") << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n");
    QTest::newRow("a chunk shorter than its size") << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123\r\n0\r\n\r\n");
    QTest::newRow("a broken chunk size") << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    QTest::newRow("no answer at all") << QByteArray();
    QTest::newRow("not HTTP") << QByteArray("SSH-2.0-OpenSSH\r\n\r\n");
    QTest::newRow("a header without end") << QByteArray("HTTP/1.1 200 OK\r\n") + QByteArray(70000, 'h');
    // Found by fuzz_httpanswer: a status line whose version is not HTTP/1.x was taken for an answer.
    QTest::newRow("a garbled version") << QByteArray("HTTP/1.1\x01\x01 100 Continue\r\n\r\n");
    QTest::newRow("a status of four digits") << QByteArray("HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n");
    QTest::newRow("protocols switched unasked") << QByteArray("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n");
    QTest::newRow("only interim answers") << QByteArray("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n");
    // Framing that says two things, or more than digits (RFC 9112 section 6.3: an unrecoverable error).
    QTest::newRow("two Content-Lengths that differ") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello");
    QTest::newRow("a Content-Length list that differs") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello!");
    QTest::newRow("a signed Content-Length") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello");
    QTest::newRow("a chunk size with 0x") << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n");
    QTest::newRow("a signed chunk size") << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n");
    // Coded bytes would be taken for the body.
    QTest::newRow("a transfer coding not read") << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
}

void tst_HttpStream::aBodyCutShortIsAnError()
{
    QFETCH(QByteArray, answer);
    TestServer server;
    QVERIFY(server.listen());
    server.answer = [&](const QByteArray &) { return answer; };
    Collector c;
    const Error e = get(server.url(QStringLiteral("/s")), c);
    QCOMPARE(e.code(), ErrorCode::Network);
    QVERIFY(!c.ended);
}

void tst_HttpStream::aStalledServerTimesOutAndACancelEndsTheWaitAtOnce()
{
    TestServer server;
    QVERIFY(server.listen());
    server.stall = true;
    server.answer = [](const QByteArray &) { return QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"); };
    Collector c;
    QElapsedTimer clock;
    clock.start();
    QCOMPARE(get(server.url(QStringLiteral("/t")), c, 300).code(), ErrorCode::Timeout);
    QVERIFY(clock.elapsed() >= 300);

    // Cancelled from this thread while the reader waits with a long timeout: it returns at once.
    Collector d;
    HttpCancel cancel;
    QTimer::singleShot(200, &server, [&cancel] { cancel.cancel(); });
    clock.restart();
    QCOMPARE(get(server.url(QStringLiteral("/t")), d, 60000, &cancel).code(), ErrorCode::Cancelled);
    QVERIFY2(clock.elapsed() < 30000, "the cancel did not end the wait");
}

void tst_HttpStream::aRefusedConnectionIsANetworkError()
{
    Collector c;
    const Error e = get(QUrl(QStringLiteral("http://127.0.0.1:%1/x").arg(freePort())), c);
    QCOMPARE(e.code(), ErrorCode::Network);
    QVERIFY2(e.message().contains(QStringLiteral("refused"), Qt::CaseInsensitive), qPrintable(e.toString()));
}

void tst_HttpStream::keptConnectionsCarryTheNextRequestsAndBodiesGoOut()
{
    // Kept open: GET, HEAD and PUT one after the other over one connection. The HEAD's Content-Length is not a
    // body to wait for; the PUT's body goes out with its length (a large one after its head).
    KeepAliveServer server;
    QVERIFY(server.listen());
    HttpConnections::shared().clear();
    const QByteArray object = randomBytes(500'000, 8), upload = randomBytes(300'000, 9);
    server.answer = [&](const QByteArray &request) -> QByteArray {
        if (request.startsWith("HEAD "))
            return "HTTP/1.1 200 OK\r\nContent-Length: " + QByteArray::number(object.size()) + "\r\nETag: \"e\"\r\n\r\n";
        if (request.startsWith("PUT "))
            return "HTTP/1.1 200 OK\r\nETag: \"" + QByteArray::number(request.size()) + "\"\r\nContent-Length: 0\r\n\r\n";
        return "HTTP/1.1 200 OK\r\nContent-Length: " + QByteArray::number(object.size()) + "\r\n\r\n" + object;
    };
    HttpRequest get;
    get.url = server.url(QStringLiteral("/o"));
    get.keepAlive = true;
    for (int round = 0; round < 3; ++round) {
        Collector c;
        QCOMPARE(exchange(get, c), Error());
        QVERIFY(c.ended && c.body == object);
        QCOMPARE(HttpConnections::shared().idle(server.peer()), 1);
    }
    HttpRequest head = get;
    head.method = "HEAD";
    Collector h;
    QCOMPARE(exchange(head, h), Error());
    QVERIFY(h.ended && h.body.isEmpty());
    QCOMPARE(h.headSeen.value("content-length"), QByteArray::number(object.size()));
    HttpRequest put = get;
    put.method = "PUT";
    put.body = upload;
    Collector p;
    QCOMPARE(exchange(put, p), Error());
    QVERIFY(p.ended);
    QCOMPARE(server.connections, 1);
    QCOMPARE(server.requests.size(), 5);
    QVERIFY(!server.requests[0].contains("Connection: close"));
    QVERIFY(server.requests[4].startsWith("PUT /o HTTP/1.1\r\n"));
    QVERIFY(server.requests[4].contains("\r\nContent-Length: 300000\r\n"));
    QVERIFY(server.requests[4].endsWith(upload));

    // An interim answer (100 Continue) before the final one is passed over.
    server.answer = [&](const QByteArray &) { return QByteArray("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfinal"); };
    Collector interim;
    QCOMPARE(exchange(get, interim), Error());
    QCOMPARE(interim.headSeen.status, 200);
    QCOMPARE(interim.body, QByteArray("final"));

    // An answer that says it closes is not kept.
    server.answer = [&](const QByteArray &) { return QByteArray("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"); };
    Collector last;
    QCOMPARE(exchange(get, last), Error());
    QCOMPARE(last.body, QByteArray("ok"));
    QCOMPARE(HttpConnections::shared().idle(server.peer()), 0);
    HttpConnections::shared().clear();
}

void tst_HttpStream::aKeptConnectionThePeerClosedIsReplacedUnseen()
{
    // The server drops every connection at its second request without answering. The client sends it again on
    // a new connection: the caller sees one clean answer each time.
    KeepAliveServer server;
    QVERIFY(server.listen());
    HttpConnections::shared().clear();
    server.dropReused = true;
    server.answer = [](const QByteArray &request) {
        const QByteArray path = request.mid(4, request.indexOf(" HTTP/") - 4);
        return "HTTP/1.1 200 OK\r\nContent-Length: " + QByteArray::number(path.size()) + "\r\n\r\n" + path;
    };
    for (int i = 0; i < 4; ++i) {
        HttpRequest get;
        get.url = server.url(QStringLiteral("/n%1").arg(i));
        get.keepAlive = true;
        Collector c;
        QCOMPARE(exchange(get, c), Error());
        QCOMPARE(c.body, QByteArray("/n") + QByteArray::number(i));
    }
    QCOMPARE(server.requests.size(), 4);
    QCOMPARE(server.connections, 4);
    HttpConnections::shared().clear();
}

void tst_HttpStream::anHttp10AnswerKeepsItsConnectionOnlyWhenItSaysSo()
{
    // HTTP/1.0 closes after each answer unless it says "keep-alive" (RFC 9112 section 9.3): a request sent on such
    // a connection again would meet a closed socket.
    for (const bool keepAlive : {false, true}) {
        KeepAliveServer server;
        QVERIFY(server.listen());
        HttpConnections::shared().clear();
        server.answer = [keepAlive](const QByteArray &) {
            return QByteArray("HTTP/1.0 200 OK\r\n") + (keepAlive ? "Connection: keep-alive\r\n" : "") + "Content-Length: 2\r\n\r\nok";
        };
        for (int i = 0; i < 3; ++i) {
            HttpRequest get;
            get.url = server.url(QStringLiteral("/n%1").arg(i));
            get.keepAlive = true;
            Collector c;
            QCOMPARE(exchange(get, c), Error());
            QCOMPARE(c.body, QByteArray("ok"));
        }
        QCOMPARE(server.requests.size(), 3);
        QCOMPARE(server.connections, keepAlive ? 1 : 3);
        HttpConnections::shared().clear();
    }
}

void tst_HttpStream::oneLengthSaidTwiceIsOneLength()
{
    TestServer server;
    QVERIFY(server.listen());
    server.answer = [](const QByteArray &) { return QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5, 5\r\n\r\nhello"); };
    Collector c;
    QCOMPARE(get(server.url(QStringLiteral("/s")), c), Error());
    QCOMPARE(c.body, QByteArray("hello"));
}

void tst_HttpStream::dicomWebRetrievalRefreshesARefusedToken()
{
    // A WADO-RS retrieval over plain HTTP goes through the direct reader: a stale token is refused (401), the
    // refresh hook gives a fresh one, and the answer streams in.
    TestServer server;
    QVERIFY(server.listen());
    const QByteArray part = randomBytes(200'000, 5);
    server.answer = [&](const QByteArray &request) -> QByteArray {
        if (!request.contains("Authorization: Bearer fresh"))
            return "HTTP/1.1 401 Unauthorized\r\nContent-Length: 12\r\n\r\nwho are you?";
        return "HTTP/1.1 200 OK\r\nContent-Type: multipart/related; type=\"application/dicom\"; boundary=B\r\n\r\n"
               "--B\r\nContent-Type: application/dicom\r\nContent-Length: " + QByteArray::number(part.size()) + "\r\n\r\n" + part
             + "\r\n--B\r\nContent-Type: application/dicom\r\n\r\n" + part + "\r\n--B--\r\n";
    };
    DicomWebEndpoint ep;
    ep.base = server.url(QStringLiteral("/dicom-web"));
    ep.auth.kind = HttpAuth::Kind::Bearer;
    ep.auth.token = QStringLiteral("stale");
    int refreshed = 0;
    ep.auth.refresh = [&refreshed]() -> Result<QString> { ++refreshed; return QStringLiteral("fresh"); };
    DicomWebClient client(ep);
    QList<QByteArray> parts;
    RetrieveCallbacks cb;
    cb.complete = [&](const WadoPart &, const ByteView &whole) { parts << whole.toByteArray(); return Error(); };
    const Result<RetrieveSummary> r = runSync(client.retrieve(QStringLiteral("1.2.3"), {}, {}, cb));
    QVERIFY2(r.isOk(), qPrintable(r.error().toString()));
    QCOMPARE(refreshed, 1);
    QCOMPARE(parts, (QList<QByteArray>{part, part}));
    QCOMPARE(r.value().parts, 2);
    QCOMPARE(server.requests.size(), 2);
    QVERIFY(server.requests.first().startsWith("GET /dicom-web/studies/1.2.3 HTTP/1.1"));

    // A redirect is left to QNetworkAccessManager, which follows it.
    server.answer = [&](const QByteArray &request) -> QByteArray {
        if (request.startsWith("GET /dicom-web/"))
            return "HTTP/1.1 301 Moved Permanently\r\nLocation: " + server.url(QStringLiteral("/moved/studies/1.2.3")).toEncoded() + "\r\nContent-Length: 0\r\n\r\n";
        return "HTTP/1.1 200 OK\r\nContent-Type: multipart/related; type=\"application/dicom\"; boundary=B\r\n\r\n"
               "--B\r\nContent-Type: application/dicom\r\n\r\n" + part + "\r\n--B--\r\n";
    };
    parts.clear();
    const Result<RetrieveSummary> moved = runSync(client.retrieve(QStringLiteral("1.2.3"), {}, {}, cb));
    QVERIFY2(moved.isOk(), qPrintable(moved.error().toString()));
    QCOMPARE(parts, QList<QByteArray>{part});
    QVERIFY(server.requests.last().startsWith("GET /moved/studies/1.2.3 HTTP/1.1"));

    // Without a refresh hook the refusal is an authentication error that does not show the token.
    server.answer = [&](const QByteArray &) -> QByteArray { return "HTTP/1.1 401 Unauthorized\r\nContent-Length: 12\r\n\r\nwho are you?"; };
    DicomWebEndpoint plain = ep;
    plain.auth.refresh = nullptr;
    DicomWebClient refused(plain);
    const Error e = runSync(refused.retrieve(QStringLiteral("1.2.3"), {}, {}, cb)).error();
    QCOMPARE(e.code(), ErrorCode::Authentication);
    QVERIFY(!e.toString().contains(QStringLiteral("stale")));
}

QTEST_GUILESS_MAIN(tst_HttpStream)
#include "tst_httpstream.moc"
