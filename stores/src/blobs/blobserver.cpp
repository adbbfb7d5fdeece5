// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/blobs/blobserver.h"
#include "blobs/blobsession.h"

#include "spectrum/core/audit/audit.h"
#include "spectrum/core/audit/auditevents.h"
#include "spectrum/core/logging.h"
#include "spectrum/transfer/blobprotocol.h"
#include "spectrum/transfer/hashtree.h"

#include <QCborArray>
#include <QDateTime>
#include <QMutex>
#include <QHash>
#include <QPointer>
#include <QSslKey>
#include <QSslSocket>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QUuid>

#include <deque>

namespace spectrum {

using namespace blobproto;
using namespace blobsession;

namespace {

bool constantTimeEquals(const QByteArray &a, const QByteArray &b)
{
    // Compares every byte whatever the first difference, so timing reveals nothing but the length.
    unsigned diff = unsigned(a.size() ^ b.size());
    const qsizetype n = std::max(a.size(), b.size());
    for (qsizetype i = 0; i < n; ++i)
        diff |= unsigned(uchar(i < a.size() ? a[i] : 0) ^ uchar(i < b.size() ? b[i] : 0));
    return diff == 0;
}

} // namespace

/// Hands out QSslSockets: encrypted ones when TLS is on (the handshake runs before any byte is read), plain
/// ones otherwise.
class SocketServer : public QTcpServer
{
public:
    bool tls = false;
    QSslConfiguration configuration;

protected:
    void incomingConnection(qintptr descriptor) override
    {
        auto *socket = new QSslSocket(this);
        if (!socket->setSocketDescriptor(descriptor)) {
            delete socket;
            return;
        }
        if (tls) {
            socket->setSslConfiguration(configuration);
            socket->startServerEncryption();
        }
        addPendingConnection(socket);
    }
};

class BlobServer::Private : public QObject
{
public:
    class Connection;

    Private(BlobServer *q, BlobStore *store, BlobServerOptions opt) : q(q), store(store), opt(std::move(opt)) {}

    BlobServer *q;
    BlobStore *store;
    BlobServerOptions opt;
    SocketServer server;
    bool loopbackOnly = false;
    QList<Connection *> connections;
    QHash<QString, std::shared_ptr<Session>> sessions;

    void accept();
};

class BlobServer::Private::Connection : public QObject
{
public:
    enum class State { Preface, Control, Attach, Data, Closing };

    Connection(Private *server, QTcpSocket *socket) : m_server(server), m_socket(socket)
    {
        m_socket->setParent(this);
        m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        if (server->opt.socketBufferBytes > 0) {
            m_socket->setSocketOption(QAbstractSocket::SendBufferSizeSocketOption, server->opt.socketBufferBytes);
            m_socket->setSocketOption(QAbstractSocket::ReceiveBufferSizeSocketOption, server->opt.socketBufferBytes);
        }
        m_peer = QStringLiteral("%1:%2").arg(socket->peerAddress().toString()).arg(socket->peerPort());
        m_idle.setSingleShot(true);
        connect(&m_idle, &QTimer::timeout, this, [this] {
            drop(Error(ErrorCode::Timeout, QStringLiteral("idle for %1 s").arg(m_server->opt.idleTimeoutMs / 1000)));
        });
        m_idle.start(m_server->opt.idleTimeoutMs);
        // A client trickling its first bytes (slowloris) keeps the idle timer from firing; it has this long in
        // all to say who it is, however it spreads its bytes.
        m_handshake.setSingleShot(true);
        connect(&m_handshake, &QTimer::timeout, this, [this] {
            if (!m_session)
                drop(Error(ErrorCode::Timeout, QStringLiteral("no hello within %1 s of connecting").arg(handshakeMs() / 1000)));
        });
        m_handshake.start(handshakeMs());
        connect(m_socket, &QTcpSocket::readyRead, this, &Connection::onReadyRead);
        connect(m_socket, &QTcpSocket::bytesWritten, this, [this] {
            m_idle.start(m_server->opt.idleTimeoutMs);
            pump();
        });
        connect(m_socket, &QTcpSocket::disconnected, this, [this] { finish(); });
        connect(m_socket, &QTcpSocket::errorOccurred, this, [this] {
            if (m_socket->error() == QAbstractSocket::SslHandshakeFailedError) {
                const Error e(ErrorCode::Authentication, QStringLiteral("TLS handshake failed: ") + m_socket->errorString());
                auditRefusal(e);
                Q_EMIT m_server->q->connectionDropped(m_peer, e);
            }
            finish();
        });
    }

    ~Connection() override { endSession(); }

    /// What the client is told of its store's error: a blob missing is missing on this server (the store's own
    /// words speak of a disk cache, which is not the client's).
    static Error served(const Error &e, const QString &key)
    {
        return e.code() == ErrorCode::NotFound ? Error(ErrorCode::NotFound, QStringLiteral("no blob '%1' on this server").arg(key)) : e;
    }

    /// A client refused (its token, its TLS): a Security Alert on the audit trail.
    void auditRefusal(const Error &reason) const
    {
        const QString host = m_socket->peerAddress().toString();
        // One alert a minute per address and kind of refusal: a client hammering with a wrong token must not fill
        // the spool (the log still says each one).
        static QMutex mutex;
        static QHash<QString, qint64> last;
        {
            QMutexLocker lock(&mutex);
            const QString key = host + QLatin1Char('|') + reason.message().left(40);
            const qint64 now = QDateTime::currentSecsSinceEpoch();
            if (last.value(key, -3600) > now - 60)
                return;
            last.insert(key, now);
            if (last.size() > 10000)
                last.clear();
        }
        audit(auditevents::securityAlert(reason.message().startsWith(QLatin1String("TLS")) ? auditevents::Alert::NodeAuthentication
                                                                                            : auditevents::Alert::UseOfRestrictedFunction,
                                         auditevents::Peer{m_peer, QString(), host},
                                         QStringLiteral("blob server: refused %1: %2").arg(m_peer, reason.message()), auditevents::AlertBy::Server));
    }

    void drop(const Error &reason)
    {
        if (m_state == State::Closing)
            return;
        qCInfo(lcStores) << "blob server: dropping" << m_peer << "-" << reason.toString();
        if (reason.code() == ErrorCode::Authentication)
            auditRefusal(reason);
        Q_EMIT m_server->q->connectionDropped(m_peer, reason);
        if (m_state == State::Data) {
            Header h;
            h.kind = Kind::Error;
            h.status = quint32(reason.code());
            m_socket->write(encodeHeader(h));
        } else if (m_state == State::Control || m_state == State::Attach || m_state == State::Preface) {
            if (reason.code() != ErrorCode::Timeout)
                m_socket->write(encodeControl(errorMessage(m_lastId, reason)));
        }
        m_state = State::Closing;
        m_socket->disconnectFromHost();  // sends what is queued, then closes
        QTimer::singleShot(2000, this, [this] { m_socket->abort(); finish(); });
    }

private:
    void finish()
    {
        if (m_finished)
            return;
        m_finished = true;
        m_state = State::Closing;
        m_server->connections.removeOne(this);
        endSession();
        deleteLater();
    }

    void endSession()
    {
        if (!m_session)
            return;
        if (m_isControl) {
            m_server->sessions.remove(m_session->id);  // releases pinned versions and abandoned reservations
            // The session's data connections go with it.
            for (Connection *c : std::as_const(m_server->connections)) {
                if (c != this && c->m_session == m_session)
                    QMetaObject::invokeMethod(c, [c] { c->drop(Error(ErrorCode::Cancelled, QStringLiteral("session ended"))); }, Qt::QueuedConnection);
            }
        } else {
            --m_session->dataStreams;
        }
        m_session.reset();
    }

    void onReadyRead()
    {
        m_idle.start(m_server->opt.idleTimeoutMs);
        while (m_state != State::Closing) {
            const State before = m_state;
            const qint64 availableBefore = m_socket->bytesAvailable();
            switch (m_state) {
            case State::Preface: readPreface(); break;
            case State::Control: readControl(); break;
            case State::Attach: readAttach(); break;
            case State::Data: readData(); break;
            case State::Closing: return;
            }
            if (m_state == before && m_socket->bytesAvailable() == availableBefore)
                return;  // needs more bytes
        }
    }

    void readPreface()
    {
        if (m_socket->bytesAvailable() < kPrefaceSize)
            return;
        Result<Channel> channel = parsePreface(m_socket->read(kPrefaceSize));
        if (!channel.isOk())
            return drop(channel.error());
        m_isControl = channel.value() == Channel::Control;
        m_state = m_isControl ? State::Control : State::Attach;
    }

    void readAttach()
    {
        std::optional<Result<QCborMap>> frame = m_reader.next(m_socket);
        if (!frame)
            return;
        if (!frame->isOk())
            return drop(frame->error());
        const QCborMap m = frame->value();
        m_lastId = m.value(QStringLiteral("id")).toInteger();
        auto session = m_server->sessions.value(m.value(QStringLiteral("session")).toString());
        if (m.value(QStringLiteral("t")).toString() != QLatin1String("attach") || !session)
            return drop(Error(ErrorCode::Authentication, QStringLiteral("no such session")));
        if (session->dataStreams >= m_server->opt.maxStreamsPerSession)
            return drop(Error(ErrorCode::Busy, QStringLiteral("at most %1 data connections per session").arg(m_server->opt.maxStreamsPerSession)));
        m_session = session;
        m_handshake.stop();
        ++session->dataStreams;
        m_socket->write(encodeControl(okMessage(m_lastId)));
        m_state = State::Data;
    }

    // ---- control channel ----

    void readControl()
    {
        std::optional<Result<QCborMap>> frame = m_reader.next(m_socket);
        if (!frame)
            return;
        if (!frame->isOk())
            return drop(frame->error());
        handle(frame->value());
    }

    void answer(const QCborMap &m)
    {
        if (m_state != State::Closing)
            m_socket->write(encodeControl(m));
    }

    void handle(const QCborMap &m)
    {
        const QString t = m.value(QStringLiteral("t")).toString();
        const qint64 id = m.value(QStringLiteral("id")).toInteger();
        m_lastId = id;
        if (!m_session) {
            if (t != QLatin1String("hello"))
                return drop(Error(ErrorCode::Authentication, QStringLiteral("say hello first")));
            return hello(id, m);
        }
        const QString key = m.value(QStringLiteral("key")).toString();
        QPointer<Connection> self(this);
        if (m_server->opt.readOnly && (t == QLatin1String("reserve") || t == QLatin1String("commit") || t == QLatin1String("remove")))
            return answer(errorMessage(id, Error(ErrorCode::NotAllowed, QStringLiteral("this server shares its blobs read-only: it takes none, and removes none"))));
        if (t == QLatin1String("stat")) {
            if (Error e = BlobStore::validateKey(key); e.isError())  // a key no put could make: said so, as put says it
                return answer(errorMessage(id, e));
            auto *job = m_server->store->stat(key);
            connect(job, &Job::finished, this, [this, job, id, key] {
                answer(job->hasError() ? errorMessage(id, served(job->error(), key)) : infoAnswer(id, job->result().value(), m_session && m_session->tree));
            });
            job->start();
        } else if (t == QLatin1String("list")) {
            BlobQuery q;
            q.keyPrefix = m.value(QStringLiteral("prefix")).toString();
            q.patientId = m.value(QStringLiteral("patientId")).toString();
            q.studyInstanceUid = m.value(QStringLiteral("studyInstanceUid")).toString();
            q.seriesInstanceUid = m.value(QStringLiteral("seriesInstanceUid")).toString();
            q.sopInstanceUid = m.value(QStringLiteral("sopInstanceUid")).toString();
            q.limit = int(std::clamp<qint64>(m.value(QStringLiteral("limit")).toInteger(10000), 0, 100000));
            auto *job = m_server->store->query(q);
            connect(job, &Job::finished, this, [this, job, id] {
                if (job->hasError())
                    return answer(errorMessage(id, job->error()));
                QCborArray items;
                for (const BlobInfo &b : job->result().value())
                    items.append(describe(QCborMap{{QStringLiteral("key"), b.key}}, b));
                QCborMap a = okMessage(id);
                a.insert(QStringLiteral("items"), items);
                answer(a);
            });
            job->start();
        } else if (t == QLatin1String("open")) {
            auto *job = m_server->store->snapshot(key);
            connect(job, &Job::finished, this, [this, job, id, key] {
                if (job->hasError() || !m_session)
                    return answer(errorMessage(id, served(job->error(), key)));
                auto tr = std::make_shared<Transfer>();
                tr->key = key;
                tr->snapshot = job->result().value();
                tr->size = tr->snapshot.info.size;
                const quint32 handle = m_session->nextTransfer++;
                m_session->transfers.insert(handle, tr);
                QCborMap a = infoAnswer(id, tr->snapshot.info, m_session->tree);
                a.insert(QStringLiteral("transfer"), qint64(handle));
                answer(a);
            });
            job->start();
        } else if (t == QLatin1String("reserve")) {
            const qint64 size = m.value(QStringLiteral("size")).toInteger(-1);
            const QByteArray sha = m.value(QStringLiteral("sha256")).toByteArray();
            auto *job = m_server->store->reserve(key, size);
            connect(job, &Job::finished, this, [this, job, id, key, size, sha] {
                if (job->hasError() || !m_session)
                    return answer(errorMessage(id, job->error()));
                auto tr = std::make_shared<Transfer>();
                tr->key = key;
                tr->isRead = false;
                tr->writer = job->result().value();
                tr->size = size;
                tr->expectedSha = sha;
                const quint32 handle = m_session->nextTransfer++;
                m_session->transfers.insert(handle, tr);
                QCborMap a = okMessage(id);
                a.insert(QStringLiteral("transfer"), qint64(handle));
                answer(a);
            });
            job->start();
        } else if (t == QLatin1String("commit")) {
            const quint32 handle = quint32(m.value(QStringLiteral("transfer")).toInteger());
            auto tr = m_session->transfers.value(handle);
            if (!tr || tr->isRead || tr->committing)
                return answer(errorMessage(id, Error(ErrorCode::InvalidArgument, QStringLiteral("no reservation %1").arg(handle))));
            tr->committing = true;
            CommitOptions options;
            const QByteArray atCommit = m.value(QStringLiteral("sha256")).toByteArray();
            options.expectedSha256 = atCommit.isEmpty() ? tr->expectedSha : atCommit;
            auto *job = m_server->store->commit(tr->writer, options);
            connect(job, &Job::finished, this, [this, job, id, handle] {
                if (m_session)
                    m_session->transfers.remove(handle);
                answer(job->hasError() ? errorMessage(id, job->error()) : infoAnswer(id, job->result().value(), false));
            });
            job->start();
        } else if (t == QLatin1String("remove")) {
            auto *job = m_server->store->remove(key);
            connect(job, &Job::finished, this, [this, job, id] {
                answer(job->hasError() ? errorMessage(id, job->error()) : okMessage(id));
            });
            job->start();
        } else if (t == QLatin1String("close") || t == QLatin1String("abort")) {
            m_session->transfers.remove(quint32(m.value(QStringLiteral("transfer")).toInteger()));
            answer(okMessage(id));
        } else {
            drop(Error(ErrorCode::Protocol, QStringLiteral("unknown request '%1'").arg(t)));
        }
    }

    void hello(qint64 id, const QCborMap &m)
    {
        const QByteArray token = m.value(QStringLiteral("token")).toString().toUtf8();
        const bool open = m_server->opt.allowNoAuth && m_server->loopbackOnly;
        if (!open && (m_server->opt.token.isEmpty() || !constantTimeEquals(token, m_server->opt.token.toUtf8())))
            return drop(Error(ErrorCode::Authentication, QStringLiteral("wrong or missing token")));
        m_session = std::make_shared<Session>();
        m_handshake.stop();
        m_session->tree = m.value(QStringLiteral("features")).toArray().contains(QStringLiteral("tree"));
        m_session->id = QUuid::createUuid().toString(QUuid::Id128) + QUuid::createUuid().toString(QUuid::Id128);
        m_server->sessions.insert(m_session->id, m_session);
        QCborMap a = okMessage(id);
        a.insert(QStringLiteral("session"), m_session->id);
        a.insert(QStringLiteral("maxStreams"), m_server->opt.maxStreamsPerSession);
        a.insert(QStringLiteral("maxChunk"), m_server->opt.maxChunk);
        if (m_session->tree)
            a.insert(QStringLiteral("features"), QCborArray{QStringLiteral("tree")});
        answer(a);
    }

    // ---- data channel ----

    void readData()
    {
        if (!m_frames.inFrame()) {
            std::optional<Result<Header>> h = m_frames.nextHeader(m_socket);
            if (!h)
                return;
            if (!h->isOk())
                return drop(h->error());
            const Header &f = h->value();
            auto tr = m_session ? m_session->transfers.value(f.transfer) : nullptr;
            if (!tr)
                return drop(Error(ErrorCode::Protocol, QStringLiteral("no transfer %1 in this session").arg(f.transfer)));
            const bool inside = f.offset <= quint64(tr->size) && f.length <= quint64(tr->size) - f.offset;
            if (f.kind == Kind::Read) {
                if (!tr->isRead || !inside || f.length == 0 || qint64(f.length) > m_server->opt.maxChunk)
                    return drop(Error(ErrorCode::Protocol, QStringLiteral("bad read [%1, +%2)").arg(f.offset).arg(f.length)));
                m_sendQueue.push_back({tr, f.transfer, qint64(f.offset), qint64(f.offset + f.length)});
                pump();
                return;
            }
            if (f.kind != Kind::Data || tr->isRead || tr->committing || !inside || f.length == 0 || qint64(f.length) > kMaxDataFrame)
                return drop(Error(ErrorCode::Protocol, QStringLiteral("bad data frame [%1, +%2)").arg(f.offset).arg(f.length)));
            m_frameTransfer = tr;
        }
        // Push: into the reserved blob's memory, or for a file (the FileStore) into this connection's frame
        // buffer (one frame: memory per connection stays bounded), checked there, then written.
        const Header &frameHeader = m_frames.header();
        BlobWriter *writer = m_frameTransfer->writer.get();
        const bool inPlace = writer->receivesInPlace();
        if (!inPlace && m_frameBuffer.size() < size_t(kMaxDataFrame))
            m_frameBuffer.resize(size_t(kMaxDataFrame));
        char *frame = inPlace ? writer->data() + frameHeader.offset : m_frameBuffer.data();
        Result<qint64> got = m_frames.receive(m_socket, frame, false);
        if (!got.isOk())
            return drop(got.error());
        if (got.value() <= 0 || m_frames.inFrame())
            return;
        quint32 status = checksum(frame, qint64(frameHeader.length)) == frameHeader.checksum ? kAckOk : kAckDamaged;
        if (status == kAckOk && !inPlace) {
            if (Error e = writer->writeAt(qint64(frameHeader.offset), frame, qint64(frameHeader.length)); e.isError()) {
                qCWarning(lcStores) << "push of" << writer->key() << "failed:" << e.toString();
                status = e.code() == ErrorCode::DiskFull ? kAckDiskFull : kAckIoError;
            }
        }
        Header ack;
        ack.kind = Kind::Ack;
        ack.transfer = frameHeader.transfer;
        ack.offset = frameHeader.offset;
        ack.length = frameHeader.length;
        ack.status = status;
        m_socket->write(encodeHeader(ack));
        m_frameTransfer.reset();
    }

    /// Sends queued reads a frame at a time. Payloads go from the blob's memory mapping straight to the kernel
    /// while it takes them; only the rest of a frame the kernel could not take waits in the socket's buffer
    /// (at most one frame: memory per connection stays bounded).
    void pump()
    {
        while (!m_sendQueue.empty() && m_state == State::Data && m_socket->bytesToWrite() == 0) {
            SendItem &item = m_sendQueue.front();
            const qint64 n = std::min<qint64>(kMaxDataFrame, item.end - item.offset);
            const char *payload = item.transfer->snapshot.bytes.data() + item.offset;
            Header h;
            h.kind = Kind::Data;
            h.transfer = item.id;
            h.offset = quint64(item.offset);
            h.length = quint64(n);
            h.checksum = checksum(payload, n);
            QByteArray frame = encodeHeader(h);
            if (m_server->opt.tls) {  // the socket encrypts: everything goes through it
                m_socket->write(frame);
                m_socket->write(payload, n);
                item.offset += n;
                if (item.offset == item.end)
                    m_sendQueue.pop_front();
                m_idle.start(m_server->opt.idleTimeoutMs);
                continue;
            }
            Result<qint64> sent = sendDirect(m_socket, frame.constData(), frame.size());
            if (!sent.isOk())
                return drop(sent.error());
            if (sent.value() < frame.size()) {
                m_socket->write(frame.constData() + sent.value(), frame.size() - sent.value());
                m_socket->write(payload, n);
            } else {
                Result<qint64> body = sendDirect(m_socket, payload, n);
                if (!body.isOk())
                    return drop(body.error());
                if (body.value() < n)
                    m_socket->write(payload + body.value(), n - body.value());
            }
            item.offset += n;
            if (item.offset == item.end)
                m_sendQueue.pop_front();
            m_idle.start(m_server->opt.idleTimeoutMs);
        }
    }

    Private *m_server;
    QTcpSocket *m_socket;
    QString m_peer;
    State m_state = State::Preface;
    bool m_isControl = false;
    bool m_finished = false;
    ControlReader m_reader;
    qint64 m_lastId = 0;
    std::shared_ptr<Session> m_session;
    std::deque<SendItem> m_sendQueue;
    FrameReader m_frames;                        ///< data channel: the frames coming in
    std::shared_ptr<Transfer> m_frameTransfer;  ///< the push the current DATA frame belongs to
    std::vector<char> m_frameBuffer;  ///< push into a file: the frame being received
    QTimer m_idle;
    QTimer m_handshake;
    int handshakeMs() const { return std::min(m_server->opt.idleTimeoutMs, 10000); }
};

void BlobServer::Private::accept()
{
    while (QTcpSocket *socket = server.nextPendingConnection()) {
        if (connections.size() >= opt.maxConnections) {
            Q_EMIT q->connectionDropped(socket->peerAddress().toString(),
                                        Error(ErrorCode::Busy, QStringLiteral("at most %1 connections").arg(opt.maxConnections)));
            socket->abort();
            socket->deleteLater();
            continue;
        }
        auto *c = new Connection(this, socket);
        c->setParent(this);
        connections << c;
    }
}

BlobServer::BlobServer(BlobStore *store, BlobServerOptions options, QObject *parent)
    : QObject(parent), d(std::make_unique<Private>(this, store, std::move(options)))
{
    connect(&d->server, &QTcpServer::newConnection, d.get(), &Private::accept);
}

BlobServer::~BlobServer()
{
    close();
}

Error BlobServer::listen(const QHostAddress &address, quint16 port)
{
    d->server.tls = d->opt.tls;
    d->server.configuration = d->opt.tlsConfiguration;
    if (d->opt.tls && (d->opt.tlsConfiguration.localCertificate().isNull() || d->opt.tlsConfiguration.privateKey().isNull()))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("TLS needs a certificate and its private key"));
    d->loopbackOnly = address.isLoopback();
    if (d->opt.allowNoAuth && !d->loopbackOnly)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("serving without a token is allowed on a loopback address only"));
    if (!d->opt.allowNoAuth && d->opt.token.isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("a token is required"));
    d->server.setMaxPendingConnections(std::max(30, d->opt.maxConnections));
    // A burst of clients waits in the kernel's queue until accepted. With Qt's default queue of 50, the rest
    // of a burst looked connected to their clients while the server never saw them (found with 1,000 at once).
    d->server.setListenBacklogSize(std::clamp(d->opt.maxConnections, 50, 4096));
    if (!d->server.listen(address, port))
        return Error(ErrorCode::Network, QStringLiteral("cannot listen on %1:%2: %3").arg(address.toString()).arg(port).arg(d->server.errorString()));
    return Error();
}

quint16 BlobServer::port() const
{
    return d->server.serverPort();
}

int BlobServer::connectionCount() const
{
    return int(d->connections.size());
}

void BlobServer::close()
{
    d->server.close();
    const auto connections = d->connections;
    for (auto *c : connections)
        delete c;
    d->connections.clear();
    d->sessions.clear();
}

} // namespace spectrum
