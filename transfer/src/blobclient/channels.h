// SPDX-License-Identifier: Apache-2.0
#pragma once
// The blob client's connections (transfer/PROTOCOL.md): sockets set up for an endpoint, the control channel of a
// job (hello, then requests matched to answers by id), and a data stream (attach, then frames).

#include "spectrum/transfer/blobclient.h"
#include "spectrum/transfer/blobprotocol.h"
#include "spectrum/transfer/rangeset.h"

#include <QCborArray>
#include <QCborMap>
#include <QElapsedTimer>
#include <QHash>
#include <QSslSocket>
#include <QTimer>

#include <deque>
#include <functional>
#include <memory>
#include <vector>

namespace spectrum::blobwire {

using namespace blobproto;
using Range = RangeSet::Range;

void tuneSocket(QTcpSocket *s, const TransferOptions &opt);
Error socketError(QTcpSocket *s, const QString &what);
/// Configures a socket for the endpoint: trusted CAs for TLS. Plain endpoints use it as a TCP socket.
void prepareSocket(QSslSocket *s, const BlobEndpoint &ep);
/// Connects, encrypted for TLS endpoints; `ready` fires once bytes may be sent (after the handshake).
void startConnection(QSslSocket *s, const BlobEndpoint &ep, QObject *context, std::function<void()> ready);

/// The control connection of one job: preface, hello, then requests matched to answers by id.
class ControlChannel : public QObject
{
public:
    using Callback = std::function<void(const Error &, const QCborMap &)>;

    ControlChannel(const BlobEndpoint &ep, const TransferOptions &opt, QObject *parent)
        : QObject(parent), m_endpoint(ep), m_timeoutMs(opt.timeoutMs), m_hashTree(opt.hashTree && opt.verifySha256)
    {
        m_timer.setSingleShot(true);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            failAll(Error(ErrorCode::Timeout, QStringLiteral("the server at %1:%2 did not answer within %3 s")
                                                  .arg(m_endpoint.host).arg(m_endpoint.port).arg(m_timeoutMs / 1000.0)));
        });
        prepareSocket(&m_socket, m_endpoint);
        m_onConnected = [this, opt] {
            tuneSocket(&m_socket, opt);
            m_socket.write(preface(Channel::Control));
            QCborMap hello{{QStringLiteral("t"), QStringLiteral("hello")},
                           {QStringLiteral("token"), m_endpoint.token},
                           {QStringLiteral("client"), QStringLiteral("spectrum/" SPECTRUM_VERSION)}};
            if (m_hashTree)
                hello.insert(QStringLiteral("features"), QCborArray{QStringLiteral("tree")});
            send(hello, [this](const Error &e, const QCborMap &answer) {
                if (!e.isError())
                    m_session = answer.value(QStringLiteral("session")).toString();
                auto cb = std::move(m_onReady);
                m_onReady = nullptr;
                if (cb)
                    cb(e, answer);
            });
        };
        connect(&m_socket, &QTcpSocket::readyRead, this, &ControlChannel::onReadyRead);
        connect(&m_socket, &QTcpSocket::errorOccurred, this, [this] {
            failAll(socketError(&m_socket, QStringLiteral("control connection to %1:%2").arg(m_endpoint.host).arg(m_endpoint.port)));
        });
    }

    /// Connects and authenticates; `ready` gets the hello answer (maxStreams, maxChunk) or the error.
    void open(Callback ready)
    {
        m_onReady = std::move(ready);
        m_timer.start(m_timeoutMs);
        startConnection(&m_socket, m_endpoint, this, m_onConnected);
    }

    void send(QCborMap message, Callback cb)
    {
        const qint64 id = ++m_nextId;
        message.insert(QStringLiteral("id"), id);
        m_pending.insert(id, std::move(cb));
        m_socket.write(encodeControl(message));
        m_timer.start(m_timeoutMs);
    }

    QString session() const { return m_session; }
    void close() { m_socket.abort(); }

private:
    void onReadyRead()
    {
        while (true) {
            std::optional<Result<QCborMap>> frame = m_reader.next(&m_socket);
            if (!frame)
                return;
            if (!frame->isOk()) {
                failAll(frame->error().withContext(QStringLiteral("from the server")));
                return;
            }
            const QCborMap answer = frame->value();
            const qint64 id = answer.value(QStringLiteral("id")).toInteger(-1);
            auto it = m_pending.find(id);
            if (it == m_pending.end()) {
                // An error without a request id (e.g. wrong protocol version) ends the conversation.
                failAll(errorFrom(answer).isError() ? errorFrom(answer)
                                                    : Error(ErrorCode::Protocol, QStringLiteral("answer to no request (id %1)").arg(id)));
                return;
            }
            Callback cb = std::move(it.value());
            m_pending.erase(it);
            if (m_pending.isEmpty())
                m_timer.stop();
            cb(errorFrom(answer), answer);
        }
    }

    // Every failure is reported once: to whoever waits for an answer, or else through m_lost.
    void failAll(const Error &e)
    {
        m_timer.stop();
        auto pending = std::move(m_pending);
        m_pending.clear();
        auto ready = std::move(m_onReady);
        m_onReady = nullptr;
        m_socket.abort();
        const bool someoneTold = ready || !pending.isEmpty();
        if (ready)
            ready(e, QCborMap());
        for (auto &cb : pending)
            cb(e, QCborMap());
        if (!someoneTold && m_lost)
            m_lost(e);
    }

public:
    std::function<void(const Error &)> m_lost;  ///< the connection died (the session with it)

private:
    BlobEndpoint m_endpoint;
    int m_timeoutMs;
    bool m_hashTree;
    QSslSocket m_socket;
    std::function<void()> m_onConnected;
    ControlReader m_reader;
    QTimer m_timer;
    qint64 m_nextId = 0;
    QHash<qint64, Callback> m_pending;
    Callback m_onReady;
    QString m_session;
};

/// Deletes a QObject through the event loop: streams are often dropped from inside their own socket's signals.
struct LaterDeleter
{
    void operator()(QObject *o) const
    {
        if (auto *s = qobject_cast<QTcpSocket *>(o)) {
            s->disconnect();
            s->abort();
        }
        o->deleteLater();
    }
};

/// One data connection: preface and attach, then frames. The owning job drives it.
struct DataStream
{
    std::unique_ptr<QSslSocket, LaterDeleter> socket;
    ControlReader attachReader;
    bool attached = false;
    std::deque<Range> outstanding;  ///< READs sent (pull) or DATA frames unacknowledged (push), in order
    qint64 nextExpected = 0;        ///< pull: the next byte of the head request
    FrameReader frames;             ///< pull: the DATA frames coming in
    bool discarding = false;        ///< pull: the current frame duplicates bytes already received
    bool inPlace = false;           ///< pull: the current frame lands straight in the destination (no byte of it was here)
    QElapsedTimer quiet;            ///< since the last byte arrived
    std::vector<char> frameBuffer;  ///< pull into a file: the current frame, checked here before it is written
    std::unique_ptr<QTimer, LaterDeleter> idle;
};

} // namespace spectrum::blobwire
