// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the blob client's jobs share (pull, push, and the one-request jobs stat, list and remove): the control
// channel, data streams, timeouts, reconnects with a back-off.

#include "blobclient/channels.h"

#include "spectrum/core/logging.h"

#include <QCborArray>

#include <algorithm>
#include <optional>

namespace spectrum::blobwire {

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

/// A blob's description as the server gives it (open, stat, list).
RemoteBlobInfo infoFrom(const QString &key, const QCborMap &m);

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

/// The jobs of pulljob.cpp and pushjob.cpp.
ResultJob<PullResult> *makePullJob(BlobEndpoint ep, QString key, BlobClient::SinkFactory factory, ByteRange range, TransferOptions opt);
ResultJob<RemoteBlobInfo> *makePushJob(BlobEndpoint ep, QString key, ByteView data, TransferOptions opt);

} // namespace spectrum::blobwire
