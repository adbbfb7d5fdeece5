#include "spectrum/transfer/blobclient.h"

#include "spectrum/core/logging.h"
#include "spectrum/transfer/blobprotocol.h"
#include "spectrum/transfer/rangeset.h"
#include "spectrum/transfer/sha256.h"

#include <QCborArray>
#include <QElapsedTimer>
#include <QHash>
#include <QPointer>
#include <QSslSocket>
#include <QSslConfiguration>
#include <QThreadPool>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <deque>
#include <map>
#include <set>
#include <memory>

namespace spectrum {

using namespace blobproto;

Result<std::pair<BlobEndpoint, QString>> BlobEndpoint::fromUrl(const QUrl &url)
{
    if (url.scheme() != QLatin1String("blob") && url.scheme() != QLatin1String("blobs"))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not a blob:// or blobs:// URL").arg(url.toString()));
    if (url.host().isEmpty() || url.port() <= 0)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' needs a host and a port: blob://HOST:PORT/KEY").arg(url.toString()));
    BlobEndpoint ep;
    ep.host = url.host();
    ep.port = quint16(url.port());
    ep.tls = url.scheme() == QLatin1String("blobs");
    QString key = url.path();
    if (key.startsWith(QLatin1Char('/')))
        key.remove(0, 1);
    return std::make_pair(ep, key);
}

namespace {

using Range = RangeSet::Range;


void tuneSocket(QTcpSocket *s, const TransferOptions &opt)
{
    s->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    if (opt.socketBufferBytes > 0) {
        s->setSocketOption(QAbstractSocket::ReceiveBufferSizeSocketOption, opt.socketBufferBytes);
        s->setSocketOption(QAbstractSocket::SendBufferSizeSocketOption, opt.socketBufferBytes);
    }
}

Error socketError(QTcpSocket *s, const QString &what)
{
    const bool tls = s->error() == QAbstractSocket::SslHandshakeFailedError || s->error() == QAbstractSocket::SslInvalidUserDataError;
    return Error(tls ? ErrorCode::Authentication : ErrorCode::Network,
                 QStringLiteral("%1: %2").arg(what, tls ? QStringLiteral("TLS: ") + s->errorString() : s->errorString()));
}

/// Configures a socket for the endpoint: trusted CAs for TLS. Plain endpoints use it as a TCP socket.
void prepareSocket(QSslSocket *s, const BlobEndpoint &ep)
{
    if (!ep.tls)
        return;
    QSslConfiguration conf = QSslConfiguration::defaultConfiguration();
    if (!ep.caFile.isEmpty())
        conf.addCaCertificates(ep.caFile);
    conf.setPeerVerifyMode(QSslSocket::VerifyPeer);
    s->setSslConfiguration(conf);
}

/// Connects, encrypted for TLS endpoints; `ready` fires once bytes may be sent (after the handshake).
void startConnection(QSslSocket *s, const BlobEndpoint &ep, QObject *context, std::function<void()> ready)
{
    if (ep.tls) {
        QObject::connect(s, &QSslSocket::encrypted, context, ready);
        s->connectToHostEncrypted(ep.host, ep.port);
    } else {
        QObject::connect(s, &QSslSocket::connected, context, ready);
        s->connectToHost(ep.host, ep.port);
    }
}

/// The control connection of one job: preface, hello, then requests matched to answers by id.
class ControlChannel : public QObject
{
public:
    using Callback = std::function<void(const Error &, const QCborMap &)>;

    ControlChannel(const BlobEndpoint &ep, const TransferOptions &opt, QObject *parent)
        : QObject(parent), m_endpoint(ep), m_timeoutMs(opt.timeoutMs)
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
    bool inFrame = false;
    bool discarding = false;        ///< pull: the current frame duplicates bytes already received
    QElapsedTimer quiet;            ///< since the last byte arrived
    Header frame;
    qint64 frameReceived = 0;
    std::vector<char> frameBuffer;  ///< pull into a file: the current frame, checked here before it is written
    std::unique_ptr<QTimer, LaterDeleter> idle;
};

/// Common machinery of pull and push jobs: the control channel, data streams, timeouts, reconnects.
template <typename T>
class TransferJob : public ResultJob<T>
{
public:
    TransferJob(BlobEndpoint ep, QString key, TransferOptions opt)
        : m_endpoint(std::move(ep)), m_key(std::move(key)), m_opt(opt)
    {
        m_adaptive = m_opt.streams <= 0;
        m_opt.maxStreams = std::clamp(m_opt.maxStreams, 1, 64);
        m_opt.streams = m_adaptive ? m_opt.maxStreams : std::clamp(m_opt.streams, 1, 64);
        m_opt.pipelineDepth = std::clamp(m_opt.pipelineDepth, 1, 16);
        m_opt.chunkSize = std::clamp<qint64>(m_opt.chunkSize, 4096, kDefaultMaxChunk);
        m_reconnectsLeft = m_opt.maxReconnects;
    }

protected:
    void doCancel() override { shutdown(); }

    void fail(const Error &e)
    {
        shutdown();
        this->finishWith(e);
    }

    virtual void shutdown()
    {
        m_streams.clear();
        if (m_control) {
            m_control->m_lost = nullptr;
            m_control->close();
        }
    }

    void openControl(std::function<void(const QCborMap &hello)> then,
                     std::function<void(const Error &)> onConnectFailure = nullptr)
    {
        m_control = new ControlChannel(m_endpoint, m_opt, this);
        m_control->m_lost = [this](const Error &e) {
            if (!this->isFinished())
                controlLost(e);
        };
        m_control->open([this, then, onConnectFailure](const Error &e, const QCborMap &hello) {
            if (e.isError() && onConnectFailure && e.code() != ErrorCode::Authentication)
                return onConnectFailure(e);
            if (e.isError())
                return fail(e);
            const qint64 maxStreams = hello.value(QStringLiteral("maxStreams")).toInteger(1);
            m_opt.streams = int(std::clamp<qint64>(m_opt.streams, 1, std::max<qint64>(1, maxStreams)));
            const qint64 maxChunk = hello.value(QStringLiteral("maxChunk")).toInteger(kDefaultMaxChunk);
            m_opt.chunkSize = std::min(m_opt.chunkSize, std::max<qint64>(4096, maxChunk));
            then(hello);
        });
    }

    DataStream *addStream()
    {
        auto stream = std::make_unique<DataStream>();
        DataStream *s = stream.get();
        s->socket.reset(new QSslSocket);
        prepareSocket(s->socket.get(), m_endpoint);
        s->socket->setReadBufferSize(64 * 1024);  // the rest stays in the kernel for receiveDirect()
        s->idle.reset(new QTimer);
        s->idle->setSingleShot(true);
        QObject::connect(s->idle.get(), &QTimer::timeout, this, [this, s] {
            streamFailed(s, Error(ErrorCode::Timeout, QStringLiteral("a data connection moved no data for %1 s").arg(m_opt.timeoutMs / 1000.0)));
        });
        auto onConnected = [this, s] {
            tuneSocket(s->socket.get(), m_opt);
            s->socket->write(preface(Channel::Data));
            s->socket->write(encodeControl(QCborMap{{QStringLiteral("t"), QStringLiteral("attach")},
                                                    {QStringLiteral("id"), 1},
                                                    {QStringLiteral("session"), m_control->session()}}));
        };
        s->quiet.start();
        QObject::connect(s->socket.get(), &QTcpSocket::readyRead, this, [this, s] {
            s->idle->start(m_opt.timeoutMs);
            s->quiet.start();
            if (!s->attached) {
                std::optional<Result<QCborMap>> answer = s->attachReader.next(s->socket.get());
                if (!answer)
                    return;
                const Error e = answer->isOk() ? errorFrom(answer->value()) : answer->error();
                if (e.isError())
                    return streamFailed(s, e.withContext(QStringLiteral("attaching a data connection")));
                s->attached = true;
                streamReady(s);
            }
            if (s->attached)
                streamReadable(s);
        });
        QObject::connect(s->socket.get(), &QTcpSocket::errorOccurred, this, [this, s] {
            streamFailed(s, socketError(s->socket.get(), QStringLiteral("data connection")));
        });
        s->idle->start(m_opt.timeoutMs);
        startConnection(s->socket.get(), m_endpoint, this, onConnected);
        m_streams.push_back(std::move(stream));
        ++m_streamsOpened;
        return s;
    }

    void removeStream(DataStream *s)
    {
        for (auto it = m_streams.begin(); it != m_streams.end(); ++it) {
            if (it->get() == s) {
                s->idle->stop();
                m_streams.erase(it);  // the deleters hand socket and timer to the event loop
                return;
            }
        }
    }

    /// A data connection failed: its unfinished work goes back to the queue, and a new one may replace it.
    void streamFailed(DataStream *s, const Error &e)
    {
        if (this->isFinished())
            return;
        qCDebug(lcTransfer) << "data connection failed:" << e.toString();
        requeue(s);
        removeStream(s);
        m_lastStreamError = e;
        if (!m_control)
            return;  // the session is being re-established; it brings new data connections
        if (e.code() == ErrorCode::Protocol)
            return fail(e);
        // An attach refused for its session usually means the server restarted; the control connection will
        // notice. Plain failures get a new connection after a pause, while the budget lasts.
        if (e.code() != ErrorCode::Authentication && m_reconnectsLeft > 0) {
            --m_reconnectsLeft;
            ++m_reconnects;
            QTimer::singleShot(backoffMs(), this, [this] {
                if (!this->isFinished() && m_control)
                    addStream();
            });
        } else if (m_streams.empty()) {
            fail(e.withContext(QStringLiteral("all data connections failed")));
        }
    }

    /// The control connection (and with it the server-side session) is gone. Default: the job fails.
    virtual void controlLost(const Error &e) { fail(e.withContext(QStringLiteral("the session with the server ended"))); }

    int backoffMs() const { return std::min(2000, 50 << std::min(m_opt.maxReconnects - m_reconnectsLeft, 6)); }

    virtual void streamReady(DataStream *s) = 0;
    virtual void streamReadable(DataStream *s) = 0;
    virtual void requeue(DataStream *s) = 0;

    BlobEndpoint m_endpoint;
    QString m_key;
    TransferOptions m_opt;
    ControlChannel *m_control = nullptr;
    std::vector<std::unique_ptr<DataStream>> m_streams;
    int m_streamsOpened = 0;
    bool m_adaptive = false;
    int m_reconnectsLeft = 0;
    int m_reconnects = 0;
    Error m_lastStreamError;
    QElapsedTimer m_clock;
};

RemoteBlobInfo infoFrom(const QString &key, const QCborMap &m)
{
    RemoteBlobInfo info;
    info.key = key;
    info.size = m.value(QStringLiteral("size")).toInteger();
    info.version = m.value(QStringLiteral("version")).toString();
    info.sha256 = m.value(QStringLiteral("sha256")).toByteArray();
    if (m.contains(QStringLiteral("dicom")))
        info.dicom = DicomIdentity::fromJson(m.value(QStringLiteral("dicom")).toMap().toJsonObject());
    return info;
}

class PullJob : public TransferJob<PullResult>
{
public:
    PullJob(BlobEndpoint ep, QString key, BlobClient::SinkFactory factory, ByteRange range, TransferOptions opt)
        : TransferJob(std::move(ep), std::move(key), opt), m_factory(std::move(factory)), m_range(range) {}

protected:
    void doStart() override
    {
        m_clock.start();
        openControl([this](const QCborMap &) {
            m_control->send(QCborMap{{QStringLiteral("t"), QStringLiteral("open")}, {QStringLiteral("key"), m_key}},
                            [this](const Error &e, const QCborMap &answer) {
                if (e.isError())
                    return fail(e.withContext(m_key));
                opened(answer);
            });
        });
    }

    /// The server went away: reconnect, open the blob again, and fetch only what is still missing — unless
    /// the blob changed meanwhile, in which case everything starts over (never splice two versions).
    void controlLost(const Error &e) override
    {
        if (m_transfer == 0 || m_reconnectsLeft <= 0)
            return TransferJob::controlLost(e);
        --m_reconnectsLeft;
        ++m_reconnects;
        qCInfo(lcTransfer) << "lost the session for" << m_key << "(" << e.toString() << "); reconnecting";
        for (auto &s : m_streams)
            requeueOnly(s.get());
        m_streams.clear();
        m_control->m_lost = nullptr;
        m_control->deleteLater();
        m_control = nullptr;
        QTimer::singleShot(backoffMs(), this, [this] {
            if (isFinished())
                return;
            openControl([this](const QCborMap &) {
                m_control->send(QCborMap{{QStringLiteral("t"), QStringLiteral("open")}, {QStringLiteral("key"), m_key}},
                                [this](const Error &e, const QCborMap &answer) {
                    if (e.code() == ErrorCode::Network || e.code() == ErrorCode::Timeout)
                        return controlLost(e);
                    if (e.isError())
                        return fail(e.withContext(m_key));
                    reopened(answer);
                });
            }, [this](const Error &e) { controlLost(e); });
        });
    }

    void reopened(const QCborMap &answer)
    {
        const RemoteBlobInfo now = infoFrom(m_key, answer);
        m_transfer = quint32(answer.value(QStringLiteral("transfer")).toInteger());
        if (now.version != m_result.blob.version || now.size != m_result.blob.size || now.sha256 != m_result.blob.sha256) {
            qCInfo(lcTransfer) << m_key << "changed on the server; starting over";
            if (now.size != m_result.blob.size)
                return fail(Error(ErrorCode::Corrupt, QStringLiteral("'%1' changed size on the server during the transfer").arg(m_key)));
            m_hashFuture.waitForFinished();
            ++m_hashGeneration;
            m_result.blob = now;
            m_done.clear();
            m_sha.reset();
            m_hashedUpTo = 0;
            m_hashing = false;
            m_pending.clear();
            for (qint64 at = m_result.begin; at < m_result.end; at += m_opt.chunkSize)
                m_pending.push_back({at, std::min(m_result.end, at + m_opt.chunkSize)});
            ++m_result.restarts;
        }
        const int wanted = m_adaptive ? std::max(2, m_result.streams) : m_opt.streams;
        const int streams = int(std::min<qint64>(wanted, std::max<qint64>(1, qint64(m_pending.size()))));
        for (int i = 0; i < streams; ++i)
            addStream();
    }

    void opened(const QCborMap &answer)
    {
        m_result.blob = infoFrom(m_key, answer);
        m_transfer = quint32(answer.value(QStringLiteral("transfer")).toInteger());
        if (Error e = m_range.resolve(m_result.blob.size, &m_result.begin, &m_result.end); e.isError())
            return fail(e.withContext(m_key));
        Result<ByteSink *> sink = m_factory(m_result.blob, m_result.begin, m_result.end);
        if (!sink.isOk())
            return fail(sink.error());
        m_sink = sink.value();
        const qint64 length = m_result.end - m_result.begin;
        if (!m_sink || m_sink->size() != length)
            return fail(Error(ErrorCode::InvalidArgument, QStringLiteral("the destination does not hold %1 bytes").arg(length)));
        m_dest = m_sink->data();
        m_inPlace = m_sink->receivesInPlace();
        if (!m_dest && length > 0)
            return fail(Error(ErrorCode::InvalidArgument, QStringLiteral("the destination of %1 bytes has no memory to read back").arg(length)));
        m_checkSha = m_result.begin == 0 && m_result.end == m_result.blob.size && m_opt.verifySha256;
        // What an earlier attempt left in the destination is not fetched again.
        for (const auto &[b, e] : m_sink->completedRanges())
            m_done.add(m_result.begin + std::clamp<qint64>(b, 0, length), m_result.begin + std::clamp<qint64>(e, 0, length));
        m_result.resumedBytes = m_done.covered();
        // Small blobs get smaller chunks, so that every stream has work: at least two rounds of requests each.
        const qint64 perRound = qint64(m_opt.streams) * m_opt.pipelineDepth * 2;
        const qint64 missing = length - m_result.resumedBytes;
        m_opt.chunkSize = std::clamp<qint64>((missing + perRound - 1) / perRound, 64 * 1024, m_opt.chunkSize);
        for (qint64 at = m_result.begin; at < m_result.end; at += m_opt.chunkSize) {
            for (const Range &gap : m_done.gaps(at, std::min(m_result.end, at + m_opt.chunkSize)))
                m_pending.push_back(gap);
        }
        if (m_result.resumedBytes > 0) {
            qCInfo(lcTransfer) << "resuming" << m_key << "with" << m_result.resumedBytes << "of" << length << "bytes already here";
            const qint64 prefix = m_done.prefixEnd(m_result.begin);
            if (prefix > m_result.begin)
                emitDataAvailable(0, prefix - m_result.begin);
            hashAhead();
            if (m_pending.empty())
                return maybeFinish();
        }
        setProgress(0, length);
        if (length == 0)
            return maybeFinish();
        const int streams = int(std::min<qint64>(m_adaptive ? 2 : m_opt.streams, qint64(m_pending.size())));
        for (int i = 0; i < streams; ++i)
            addStream();
        m_result.streams = streams;
        if (m_adaptive)
            startAdapting();
    }

    /// Adaptive stream count: every 250 ms, compare the rate with the one before the last stream was added;
    /// add another while the rate grew by a tenth or more, stop for good once it did not.
    void startAdapting()
    {
        auto *timer = new QTimer(this);
        timer->setInterval(250);
        QObject::connect(timer, &QTimer::timeout, this, [this, timer] {
            const qint64 received = m_result.bytesReceived;
            const double rate = (received - m_adaptLastBytes) / 0.25;
            m_adaptLastBytes = received;
            if (m_adaptSkip > 0) {  // let a new stream get going before judging it
                --m_adaptSkip;
                return;
            }
            const bool grew = rate > 0 && rate >= m_adaptRateBefore * 1.1;
            const int active = int(m_streams.size());
            if (!grew || active >= m_opt.streams || m_pending.empty() || !m_control) {
                if (!grew)
                    timer->stop();
                return;
            }
            m_adaptRateBefore = rate;
            addStream();
            m_result.streams = std::max(m_result.streams, int(m_streams.size()));
            m_adaptSkip = 1;
        });
        m_adaptSkip = 1;
        timer->start();
    }

    void streamReady(DataStream *s) override { fill(s); }

    void sendRead(DataStream *s, const Range &r)
    {
        if (s->outstanding.empty())
            s->nextExpected = r.begin;
        s->outstanding.push_back(r);
        Header h;
        h.kind = Kind::Read;
        h.transfer = m_transfer;
        h.offset = quint64(r.begin);
        h.length = quint64(r.end - r.begin);
        s->socket->write(encodeHeader(h));
    }

    void fill(DataStream *s)
    {
        while (s->attached && int(s->outstanding.size()) < m_opt.pipelineDepth && !m_pending.empty()) {
            const Range r = m_pending.front();
            m_pending.pop_front();
            sendRead(s, r);
        }
        if (s->attached && s->outstanding.empty() && m_pending.empty())
            scheduleEndgame();
        if (s->outstanding.empty())
            s->idle->stop();
        else if (!s->idle->isActive())
            s->idle->start(m_opt.timeoutMs);
    }

    /// Nothing is left to hand out. If a stream that still waits for requests has been silent for a while,
    /// an idle stream asks for the largest of its requests a second time; whichever copy arrives first counts,
    /// the other is read and dropped. A slow or stalled connection then no longer holds back the end of the
    /// transfer, and healthy transfers never fetch anything twice.
    void scheduleEndgame()
    {
        if (!m_endgameTimer) {
            m_endgameTimer = new QTimer(this);
            m_endgameTimer->setSingleShot(true);
            QObject::connect(m_endgameTimer, &QTimer::timeout, this, [this] {
                bool waiting = false;
                for (const auto &s : m_streams) {
                    if (s->attached && s->outstanding.empty())
                        endgame(s.get());
                    waiting = waiting || !s->outstanding.empty();
                }
                if (waiting && !isFinished())
                    m_endgameTimer->start(kEndgameSilenceMs);
            });
        }
        if (!m_endgameTimer->isActive())
            m_endgameTimer->start(kEndgameSilenceMs);
    }

    static constexpr int kEndgameSilenceMs = 250;

    void endgame(DataStream *idle)
    {
        const Range *best = nullptr;
        for (const auto &other : m_streams) {
            if (other.get() == idle || other->quiet.elapsed() < kEndgameSilenceMs)
                continue;
            for (const Range &r : other->outstanding) {
                const bool duplicated = m_duplicated.count(r.begin) > 0;
                if (!duplicated && (!best || r.end - r.begin > best->end - best->begin))
                    best = &r;
            }
        }
        if (!best)
            return;
        m_duplicated.insert(best->begin);
        ++m_result.endgameRequests;
        m_result.bytesDuplicated += best->end - best->begin;
        sendRead(idle, *best);
    }

    void streamReadable(DataStream *s) override
    {
        QSslSocket *sock = s->socket.get();
        while (!isFinished()) {
            if (!s->inFrame) {
                if (sock->bytesAvailable() < kHeaderSize)
                    return;
                char raw[kHeaderSize];
                sock->read(raw, kHeaderSize);
                Result<Header> h = decodeHeader(raw);
                if (!h.isOk())
                    return streamFailed(s, h.error());
                if (h.value().kind == Kind::Error)
                    return streamFailed(s, Error(ErrorCode::Protocol, QStringLiteral("the server refused a read (status %1)").arg(h.value().status)));
                const Header &f = h.value();
                const bool expected = f.kind == Kind::Data && f.transfer == m_transfer && !s->outstanding.empty()
                    && qint64(f.offset) == s->nextExpected && f.length > 0 && qint64(f.length) <= kMaxDataFrame
                    && qint64(f.offset + f.length) <= s->outstanding.front().end;
                if (!expected)
                    return streamFailed(s, Error(ErrorCode::Protocol, QStringLiteral("unexpected data frame [%1, +%2)").arg(f.offset).arg(f.length)));
                s->frame = f;
                s->inFrame = true;
                s->frameReceived = 0;
                // A duplicate of bytes already received and checked goes to scratch memory, never over them
                // (the hash may be reading them right now).
                s->discarding = m_done.covers(qint64(f.offset), qint64(f.offset + f.length));
                if (s->discarding && m_scratch.size() < kMaxDataFrame)
                    m_scratch.resize(kMaxDataFrame);
                if (!s->discarding && !m_inPlace && s->frameBuffer.size() < size_t(kMaxDataFrame))
                    s->frameBuffer.resize(size_t(kMaxDataFrame));
            }
            // Into the destination's memory (or, for a file, the stream's frame buffer): first what the socket
            // object buffered, then straight from the kernel.
            const qint64 want = qint64(s->frame.length) - s->frameReceived;
            char *to = s->discarding ? m_scratch.data() + s->frameReceived
                : m_inPlace          ? m_dest + (qint64(s->frame.offset) - m_result.begin) + s->frameReceived
                                     : s->frameBuffer.data() + s->frameReceived;
            qint64 got = 0;
            if (sock->bytesAvailable() > 0 || m_endpoint.tls) {  // TLS: only the socket can decrypt
                got = sock->read(to, want);
            } else {
                Result<qint64> direct = receiveDirect(sock, to, want);
                if (!direct.isOk())
                    return streamFailed(s, direct.error());
                got = direct.value();
            }
            if (got <= 0)
                return;
            s->frameReceived += got;
            m_result.bytesReceived += got;
            if (s->frameReceived < qint64(s->frame.length))
                return;
            if (!frameDone(s))
                return;  // the stream is gone (its signals' receivers may run anything, even an event loop)
        }
    }

    bool alive(const DataStream *s) const
    {
        for (const auto &x : m_streams) {
            if (x.get() == s)
                return !isFinished();
        }
        return false;
    }

    /// Returns whether `s` still exists afterwards.
    bool frameDone(DataStream *s)
    {
        s->inFrame = false;
        const qint64 b = qint64(s->frame.offset), e = b + qint64(s->frame.length);
        if (s->discarding) {  // the other copy won
            s->discarding = false;
            advance(s, e);
            fill(s);
            maybeFinish();
            return alive(s);
        }
        const char *bytes = m_inPlace ? m_dest + (b - m_result.begin) : s->frameBuffer.data();
        const bool crcOk = checksum(bytes, e - b) == s->frame.checksum;
        if (crcOk && !m_inPlace) {
            if (Error err = m_sink->writeAt(b - m_result.begin, bytes, e - b); err.isError()) {
                fail(err.withContext(m_key));  // a full disk: nothing more can land
                return false;
            }
        }
        if (!crcOk) {
            ++m_result.framesRefetched;
            m_pending.push_front({b, e});  // only this frame again, before anything else
            qCInfo(lcTransfer) << "checksum mismatch in" << m_key << "at" << b << "- fetching that frame again";
        }
        advance(s, e);
        fill(s);
        if (crcOk) {
            m_sink->rangeVerified(b - m_result.begin, e - m_result.begin);
            // Tell the world last: its slots may re-enter us.
            const qint64 before = m_done.prefixEnd(m_result.begin);
            m_done.add(b, e);
            const qint64 after = m_done.prefixEnd(m_result.begin);
            hashAhead();
            QPointer<QObject> self(this);
            setProgress(m_done.covered(), m_result.end - m_result.begin);
            if (self && after > before)
                emitDataAvailable(0, after - m_result.begin);
            if (!self)
                return false;
        }
        maybeFinish();
        return alive(s);
    }

    /// The head request of `s` has been received up to `e`.
    void advance(DataStream *s, qint64 e)
    {
        s->nextExpected = e;
        if (e == s->outstanding.front().end) {
            s->outstanding.pop_front();
            if (!s->outstanding.empty())
                s->nextExpected = s->outstanding.front().begin;
        }
    }

    void requeue(DataStream *s) override
    {
        requeueOnly(s);
        for (auto &other : m_streams) {
            if (other.get() != s)
                fill(other.get());
        }
    }

    /// Puts what `s` had asked for and not yet received back at the front of the queue.
    void requeueOnly(DataStream *s)
    {
        bool first = true;
        for (auto it = s->outstanding.rbegin(); it != s->outstanding.rend(); ++it) {
            const bool head = std::next(it) == s->outstanding.rend();
            const Range r{head ? s->nextExpected : it->begin, it->end};
            if (r.begin < r.end && !m_done.covers(r.begin, r.end)) {
                m_pending.push_front(r);
                if (first && head && s->nextExpected > it->begin)
                    ++m_result.framesRefetched;
            }
            first = false;
        }
        s->outstanding.clear();
        s->inFrame = false;
    }

    // The whole blob's SHA-256 is computed on the pool as the verified prefix grows, one step at a time.
    void hashAhead()
    {
        if (!m_checkSha || m_hashing)
            return;
        // Steps of at most 16 MiB keep each pool task short (and a cancel's wait for it).
        const qint64 upTo = std::min(m_done.prefixEnd(0), m_hashedUpTo + (qint64(16) << 20));
        if (upTo <= m_hashedUpTo)
            return;
        m_hashing = true;
        Sha256 *sha = &m_sha;
        const char *from = m_dest + m_hashedUpTo;
        const qint64 n = upTo - m_hashedUpTo;
        // Reported back through one posted call, delivered only while the job lives (it waits for the step).
        std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(this);
        m_hashFuture = QtConcurrent::run(computePool(), [this, sha, from, n, upTo, toJob, generation = m_hashGeneration] {
            sha->add(from, n);
            Sha256::releaseThreadState();
            toJob->post([this, upTo, generation] {
                if (generation != m_hashGeneration)
                    return;  // a step of the hash before the blob changed on the server and it started over
                m_hashing = false;
                m_hashedUpTo = upTo;
                hashAhead();
                maybeFinish();
            });
        });
    }

    void maybeFinish()
    {
        // Every byte received and checked is enough: duplicates still on the wire are abandoned.
        if (isFinished() || m_done.covered() != m_result.end - m_result.begin)
            return;
        if (m_checkSha && (m_hashing || m_hashedUpTo != m_result.end))
            return;
        if (m_checkSha) {
            if (m_sha.result() != m_result.blob.sha256) {
                return fail(Error(ErrorCode::Corrupt, QStringLiteral("'%1' arrived whole but its SHA-256 does not match the server's")
                                                          .arg(m_key)));
            }
            m_result.verified = true;
        }
        if (!m_adaptive)
            m_result.streams = m_opt.streams;
        m_result.streams = std::min(m_result.streams, m_streamsOpened);
        m_result.reconnects = m_reconnects;
        m_result.seconds = m_clock.nsecsElapsed() / 1e9;
        shutdown();
        finishWith(m_result);
    }

    void shutdown() override
    {
        TransferJob::shutdown();
        // A hash step may still read the destination: the caller may free it once we finish. Steps are short.
        m_hashFuture.waitForFinished();
    }
    void doCancel() override { shutdown(); }

    ~PullJob() override { m_hashFuture.waitForFinished(); }

private:
    BlobClient::SinkFactory m_factory;
    ByteRange m_range;
    PullResult m_result;
    quint32 m_transfer = 0;
    ByteSink *m_sink = nullptr;
    char *m_dest = nullptr;
    bool m_inPlace = true;  ///< received straight into m_dest; else through each stream's frame buffer
    bool m_checkSha = false;
    std::deque<Range> m_pending;
    RangeSet m_done;
    Sha256 m_sha;
    quint64 m_hashGeneration = 0;  ///< bumps when the hash starts over: late steps of the old one are ignored
    qint64 m_hashedUpTo = 0;
    bool m_hashing = false;
    QFuture<void> m_hashFuture;
    std::set<qint64> m_duplicated;  ///< request starts asked for twice in the endgame
    QTimer *m_endgameTimer = nullptr;
    QByteArray m_scratch;           ///< where duplicate frames land
    qint64 m_adaptLastBytes = 0;
    double m_adaptRateBefore = 0;
    int m_adaptSkip = 0;
};

class PushJob : public TransferJob<RemoteBlobInfo>
{
public:
    PushJob(BlobEndpoint ep, QString key, ByteView data, TransferOptions opt)
        : TransferJob(std::move(ep), std::move(key), opt), m_data(std::move(data)) {}

protected:
    void doStart() override
    {
        m_clock.start();
        // The digest is computed on the pool while the bytes are on the wire; commit sends it, and the server
        // checks the blob against it before committing.
        const ByteView data = m_data;
        std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(this);
        m_shaFuture = QtConcurrent::run(computePool(), [this, data, toJob] {
            const QByteArray digest = Sha256::hash(data.data(), data.size());
            Sha256::releaseThreadState();
            toJob->post([this, digest] {
                m_sha = digest;
                if (m_commitWaitsForDigest)
                    commit();
            });
            return digest;
        });
        openControl([this](const QCborMap &) { reserve(); });
    }

    ~PushJob() override { m_shaFuture.waitForFinished(); }

    void reserve()
    {
        m_control->send(QCborMap{{QStringLiteral("t"), QStringLiteral("reserve")}, {QStringLiteral("key"), m_key},
                                 {QStringLiteral("size"), m_data.size()}},
                        [this](const Error &e, const QCborMap &answer) {
            if (e.isError())
                return fail(e.withContext(m_key));
            m_transfer = quint32(answer.value(QStringLiteral("transfer")).toInteger());
            for (qint64 at = 0; at < m_data.size(); at += kMaxDataFrame)
                m_pending.push_back({at, std::min(m_data.size(), at + kMaxDataFrame)});
            setProgress(0, m_data.size());
            if (m_pending.empty())
                return commit();
            const qint64 chunks = (m_data.size() + m_opt.chunkSize - 1) / m_opt.chunkSize;
            const int streams = int(std::min<qint64>(m_adaptive ? 4 : m_opt.streams, chunks));
            for (int i = 0; i < streams; ++i)
                addStream();
        });
    }

    void streamReady(DataStream *s) override { fill(s); }

    void fill(DataStream *s)
    {
        // Unacknowledged bytes per connection stay under pipelineDepth × chunkSize: memory stays bounded.
        qint64 inFlight = 0;
        for (const Range &r : s->outstanding)
            inFlight += r.end - r.begin;
        while (s->attached && !m_pending.empty() && inFlight < m_opt.pipelineDepth * m_opt.chunkSize) {
            const Range r = m_pending.front();
            m_pending.pop_front();
            Header h;
            h.kind = Kind::Data;
            h.transfer = m_transfer;
            h.offset = quint64(r.begin);
            h.length = quint64(r.end - r.begin);
            h.checksum = checksum(m_data.data() + r.begin, r.end - r.begin);
            s->socket->write(encodeHeader(h));
            s->socket->write(m_data.data() + r.begin, r.end - r.begin);
            s->outstanding.push_back(r);
            inFlight += r.end - r.begin;
        }
        if (s->outstanding.empty())
            s->idle->stop();
        else if (!s->idle->isActive())
            s->idle->start(m_opt.timeoutMs);
    }

    void streamReadable(DataStream *s) override
    {
        while (!isFinished() && s->socket->bytesAvailable() >= kHeaderSize) {
            char raw[kHeaderSize];
            s->socket->read(raw, kHeaderSize);
            Result<Header> h = decodeHeader(raw);
            if (!h.isOk())
                return streamFailed(s, h.error());
            const Header &a = h.value();
            if (a.kind == Kind::Error)
                return streamFailed(s, Error(ErrorCode::Protocol, QStringLiteral("the server refused data (status %1)").arg(a.status)));
            if (a.kind != Kind::Ack || s->outstanding.empty() || qint64(a.offset) != s->outstanding.front().begin)
                return streamFailed(s, Error(ErrorCode::Protocol, QStringLiteral("unexpected acknowledgement")));
            const Range r = s->outstanding.front();
            s->outstanding.pop_front();
            if (a.status == kAckDiskFull || a.status == kAckIoError) {
                return fail(Error(a.status == kAckDiskFull ? ErrorCode::DiskFull : ErrorCode::Io,
                                  QStringLiteral("the server could not store '%1': %2")
                                      .arg(m_key, a.status == kAckDiskFull ? QStringLiteral("its disk is full") : QStringLiteral("write error"))));
            }
            if (a.status != kAckOk) {
                ++m_refetched;
                m_pending.push_front(r);  // the server saw a damaged frame: send it again
            } else {
                m_acked += r.end - r.begin;
                setProgress(m_acked, m_data.size());
            }
            fill(s);
        }
        if (!isFinished() && m_acked == m_data.size() && !m_committing)
            commit();
    }

    void requeue(DataStream *s) override
    {
        for (auto it = s->outstanding.rbegin(); it != s->outstanding.rend(); ++it)
            m_pending.push_front(*it);
        s->outstanding.clear();
        for (auto &other : m_streams) {
            if (other.get() != s)
                fill(other.get());
        }
    }

    void commit()
    {
        if (m_sha.isEmpty()) {  // every byte is acknowledged, the digest is not ready yet
            m_commitWaitsForDigest = true;
            return;
        }
        m_commitWaitsForDigest = false;
        m_committing = true;
        m_streams.clear();
        m_control->send(QCborMap{{QStringLiteral("t"), QStringLiteral("commit")}, {QStringLiteral("transfer"), qint64(m_transfer)},
                                 {QStringLiteral("sha256"), m_sha}},
                        [this](const Error &e, const QCborMap &answer) {
            if (e.isError())
                return fail(e.withContext(m_key));
            RemoteBlobInfo info = infoFrom(m_key, answer);
            if (info.sha256 != m_sha || info.size != m_data.size())
                return fail(Error(ErrorCode::Corrupt, QStringLiteral("the server committed '%1' with a different digest").arg(m_key)));
            shutdown();
            finishWith(info);
        });
    }

private:
    ByteView m_data;
    QByteArray m_sha;
    QFuture<QByteArray> m_shaFuture;
    bool m_commitWaitsForDigest = false;
    quint32 m_transfer = 0;
    std::deque<Range> m_pending;
    qint64 m_acked = 0;
    int m_refetched = 0;
    bool m_committing = false;
};

/// stat and list: one request on a fresh control connection.
template <typename T>
class RequestJob : public TransferJob<T>
{
public:
    using Parse = std::function<Result<T>(const QCborMap &)>;
    RequestJob(BlobEndpoint ep, QCborMap request, Parse parse, TransferOptions opt)
        : TransferJob<T>(std::move(ep), QString(), opt), m_request(std::move(request)), m_parse(std::move(parse)) {}

protected:
    void doStart() override
    {
        this->openControl([this](const QCborMap &) {
            this->m_control->send(m_request, [this](const Error &e, const QCborMap &answer) {
                if (e.isError())
                    return this->fail(e);
                this->shutdown();
                this->finishWith(m_parse(answer));
            });
        });
    }
    void streamReady(DataStream *) override {}
    void streamReadable(DataStream *) override {}
    void requeue(DataStream *) override {}

private:
    QCborMap m_request;
    Parse m_parse;
};

} // namespace

BlobClient::BlobClient(BlobEndpoint endpoint, QObject *parent) : QObject(parent), m_endpoint(std::move(endpoint)) {}

ResultJob<RemoteBlobInfo> *BlobClient::stat(const QString &key)
{
    return new RequestJob<RemoteBlobInfo>(m_endpoint,
                                          QCborMap{{QStringLiteral("t"), QStringLiteral("stat")}, {QStringLiteral("key"), key}},
                                          [key](const QCborMap &m) { return Result<RemoteBlobInfo>(infoFrom(key, m)); }, m_defaults);
}

ResultJob<QList<RemoteBlobInfo>> *BlobClient::list(const QString &prefix, int limit)
{
    RemoteQuery q;
    q.keyPrefix = prefix;
    q.limit = limit;
    return list(q);
}

ResultJob<QList<RemoteBlobInfo>> *BlobClient::list(const RemoteQuery &query)
{
    QCborMap request{{QStringLiteral("t"), QStringLiteral("list")}, {QStringLiteral("prefix"), query.keyPrefix},
                     {QStringLiteral("limit"), query.limit}};
    const std::pair<const char *, QString> filters[] = {{"patientId", query.patientId}, {"studyInstanceUid", query.studyInstanceUid},
                                                        {"seriesInstanceUid", query.seriesInstanceUid}, {"sopInstanceUid", query.sopInstanceUid}};
    for (const auto &[name, value] : filters) {
        if (!value.isEmpty())
            request.insert(QLatin1String(name), value);
    }
    return new RequestJob<QList<RemoteBlobInfo>>(m_endpoint, request, [](const QCborMap &m) {
        QList<RemoteBlobInfo> out;
        for (const QCborValue &v : m.value(QStringLiteral("items")).toArray()) {
            const QCborMap item = v.toMap();
            out << infoFrom(item.value(QStringLiteral("key")).toString(), item);
        }
        return Result<QList<RemoteBlobInfo>>(out);
    }, m_defaults);
}

ResultJob<Done> *BlobClient::remove(const QString &key)
{
    return new RequestJob<Done>(m_endpoint, QCborMap{{QStringLiteral("t"), QStringLiteral("remove")}, {QStringLiteral("key"), key}},
                                [](const QCborMap &) { return Result<Done>(Done{}); }, m_defaults);
}

ResultJob<PullResult> *BlobClient::pull(const QString &key, SinkFactory sink, ByteRange range)
{
    return pull(key, std::move(sink), range, m_defaults);
}

ResultJob<PullResult> *BlobClient::pull(const QString &key, SinkFactory sink, ByteRange range, const TransferOptions &options)
{
    return new PullJob(m_endpoint, key, std::move(sink), range, options);
}

ResultJob<RemoteBlobInfo> *BlobClient::push(const QString &key, const ByteView &data)
{
    return push(key, data, m_defaults);
}

ResultJob<RemoteBlobInfo> *BlobClient::push(const QString &key, const ByteView &data, const TransferOptions &options)
{
    return new PushJob(m_endpoint, key, data, options);
}

} // namespace spectrum
