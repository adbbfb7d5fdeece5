#include "httpstream.h"

#include <QElapsedTimer>
#include <QNetworkProxy>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace spectrum {

QByteArray HttpHead::value(const QByteArray &lowerCaseName) const
{
    for (const auto &[name, v] : fields)
        if (name == lowerCaseName)
            return v;
    return {};
}

HttpCancel::HttpCancel()
{
    if (::pipe2(m_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        m_pipe[0] = m_pipe[1] = -1;
}

HttpCancel::~HttpCancel()
{
    for (int fd : m_pipe)
        if (fd >= 0)
            ::close(fd);
}

void HttpCancel::cancel()
{
    if (m_cancelled.exchange(true))
        return;
    if (m_pipe[1] >= 0) {
        const char one = 1;
        [[maybe_unused]] const ssize_t n = ::write(m_pipe[1], &one, 1);
    }
}

namespace {

constexpr qint64 kMaxHeaderBytes = 64 * 1024;
constexpr qint64 kMaxChunkLine = 4096;

class Socket
{
public:
    Socket(const HttpCancel &cancel, int timeoutMs, QString peer) : m_cancel(cancel), m_timeoutMs(timeoutMs), m_peer(std::move(peer)) {}
    ~Socket()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }

    /// A connection kept open from an earlier exchange.
    void adopt(int fd) { m_fd = fd; }
    /// Gives the connection up (to be kept for another exchange): as an adopted one expects it.
    int release()
    {
        if (m_lowWater != 1) {
            const int one = 1;
            ::setsockopt(m_fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
        }
        return std::exchange(m_fd, -1);
    }

    Error connectTo(const QByteArray &host, quint16 port)
    {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo *found = nullptr;
        if (const int rc = ::getaddrinfo(host.constData(), QByteArray::number(port).constData(), &hints, &found); rc != 0)
            return Error(ErrorCode::Network, QStringLiteral("cannot resolve %1: %2").arg(m_peer, QString::fromLocal8Bit(::gai_strerror(rc))));
        Error last(ErrorCode::Network, QStringLiteral("cannot connect to %1").arg(m_peer));
        for (addrinfo *a = found; a; a = a->ai_next) {
            const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
            if (fd < 0)
                continue;
            if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
                last = Error(ErrorCode::Network, QStringLiteral("cannot connect to %1: %2").arg(m_peer, QString::fromLocal8Bit(std::strerror(errno))));
                ::close(fd);
                continue;
            }
            m_fd = fd;
            if (Error e = wait(POLLOUT); e.isError()) {
                ::close(fd);
                m_fd = -1;
                last = e;
                if (e.code() != ErrorCode::Network)
                    break;  // cancelled or timed out: no other address helps
                continue;
            }
            int err = 0;
            socklen_t len = sizeof err;
            if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
                last = Error(ErrorCode::Network, QStringLiteral("cannot connect to %1: %2").arg(m_peer, QString::fromLocal8Bit(std::strerror(err ? err : errno))));
                ::close(fd);
                m_fd = -1;
                continue;
            }
            const int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            ::freeaddrinfo(found);
            return Error();
        }
        ::freeaddrinfo(found);
        return last;
    }

    Error sendAll(const QByteArray &bytes)
    {
        for (qint64 at = 0; at < bytes.size();) {
            const ssize_t n = ::send(m_fd, bytes.constData() + at, size_t(bytes.size() - at), MSG_NOSIGNAL);
            if (n > 0) {
                at += n;
            } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                if (Error e = wait(POLLOUT); e.isError())
                    return e;
            } else {
                return Error(ErrorCode::Network, QStringLiteral("cannot send to %1: %2").arg(m_peer, QString::fromLocal8Bit(std::strerror(errno))));
            }
        }
        return Error();
    }

    /// Up to `capacity` bytes (at least one), or 0 at the end of the stream. `bulk`: into a large buffer that
    /// wants many bytes (a part's body) — then woken only once a good share of it is in (the kernel's low-water
    /// mark), not for every segment: 150 MiB are a few hundred wake-ups instead of thousands. A trickle is still
    /// read within kLowWaterPatienceMs (wait() looks at what is there). Heads and framing: at once.
    Result<qint64> receive(char *into, qint64 capacity, bool bulk = false)
    {
        const int lowWater = bulk ? int(std::clamp<qint64>(capacity / 2, 1, kLowWater)) : 1;
        if (lowWater != m_lowWater && ::setsockopt(m_fd, SOL_SOCKET, SO_RCVLOWAT, &lowWater, sizeof lowWater) == 0)
            m_lowWater = lowWater;
        for (;;) {
            const ssize_t n = ::recv(m_fd, into, size_t(capacity), 0);
            if (n >= 0)
                return qint64(n);
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return Error(ErrorCode::Network, QStringLiteral("the connection to %1 broke: %2").arg(m_peer, QString::fromLocal8Bit(std::strerror(errno))));
            if (Error e = wait(POLLIN); e.isError())
                return e;
        }
    }

private:
    /// Until the socket is ready for `events`, the cancel pipe speaks, or the timeout passes.
    Error wait(short events)
    {
        pollfd fds[2] = {{m_fd, events, 0}, {m_cancel.fd(), POLLIN, 0}};
        QElapsedTimer clock;
        clock.start();
        for (;;) {
            if (m_cancel.isCancelled())
                return Error(ErrorCode::Cancelled, QStringLiteral("cancelled"));
            const qint64 left = m_timeoutMs - clock.elapsed();
            if (left <= 0)
                return Error(ErrorCode::Timeout, QStringLiteral("%1 sent nothing for %2 ms").arg(m_peer).arg(m_timeoutMs));
            // Short slices while a low-water mark is set (bytes below it are read after one slice at most),
            // else 1 s ones (a cancel without a pipe is seen too).
            const int slice = events == POLLIN && m_lowWater > 1 ? kLowWaterPatienceMs : 1000;
            const int rc = ::poll(fds, m_cancel.fd() >= 0 ? 2 : 1, int(std::min<qint64>(left, slice)));
            if (rc < 0 && errno != EINTR)
                return Error(ErrorCode::Network, QStringLiteral("waiting for %1: %2").arg(m_peer, QString::fromLocal8Bit(std::strerror(errno))));
            if (rc > 0 && fds[0].revents != 0)
                return Error();  // ready, or an error the next call reports
            int pending = 0;
            if (rc == 0 && events == POLLIN && m_lowWater > 1 && ::ioctl(m_fd, FIONREAD, &pending) == 0 && pending > 0) {
                const int one = 1;  // a trickle below the mark: take it
                if (::setsockopt(m_fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one) == 0)
                    m_lowWater = 1;
                return Error();
            }
        }
    }

    static constexpr int kLowWater = 128 * 1024;
    static constexpr int kLowWaterPatienceMs = 20;
    const HttpCancel &m_cancel;
    int m_lowWater = 1;
    int m_timeoutMs;
    QString m_peer;
    int m_fd = -1;
};

/// The body's framing (RFC 9112 section 6): a length, chunks, or everything until the connection closes.
class Body
{
public:
    enum class Framing { None, Length, Chunked, UntilClose };

    Body(Framing framing, qint64 length, HttpBodyConsumer &consumer) : m_framing(framing), m_left(length), m_consumer(consumer) {}

    bool isComplete() const { return m_framing == Framing::None || (m_framing == Framing::Length && m_left == 0) || m_state == State::Done; }
    /// How many bytes may now be read straight into the consumer's memory (0: the next bytes are framing).
    qint64 dataWanted() const
    {
        switch (m_framing) {
        case Framing::None: return 0;
        case Framing::Length: return m_left;
        case Framing::UntilClose: return qint64(1) << 40;
        case Framing::Chunked: return m_state == State::Data ? m_left : 0;
        }
        return 0;
    }
    Error tookDirect(qint64 n)
    {
        if (m_framing != Framing::UntilClose) {
            m_left -= n;
            if (m_framing == Framing::Chunked && m_left == 0)
                m_state = State::DataEnd;
        }
        return m_consumer.tookDirect(n);
    }

    /// Bytes as they came off the socket.
    Error take(const char *data, qint64 n)
    {
        while (n > 0 && !isComplete()) {
            if (const qint64 wanted = dataWanted(); wanted > 0) {
                const qint64 k = std::min(wanted, n);
                if (m_framing != Framing::UntilClose) {
                    m_left -= k;
                    if (m_framing == Framing::Chunked && m_left == 0)
                        m_state = State::DataEnd;
                }
                if (Error e = m_consumer.feed(data, k); e.isError())
                    return e;
                data += k;
                n -= k;
                continue;
            }
            // Chunk framing, a line at a time: "SIZE[;ext]" CRLF, the data's CRLF, trailer lines, an empty line.
            const char *nl = static_cast<const char *>(std::memchr(data, '\n', size_t(n)));
            const qint64 k = nl ? nl - data + 1 : n;
            m_line.append(data, k);
            data += k;
            n -= k;
            if (m_line.size() > kMaxChunkLine)
                return Error(ErrorCode::Network, QStringLiteral("a chunk header longer than %1 bytes").arg(kMaxChunkLine));
            if (!nl)
                continue;
            const QByteArray line = m_line.trimmed();
            m_line.clear();
            if (Error e = chunkLine(line); e.isError())
                return e;
        }
        if (n > 0 && m_framing != Framing::UntilClose)
            return Error(ErrorCode::Network, QStringLiteral("%1 bytes after the end of the answer").arg(n));
        return Error();
    }

    /// The connection closed.
    Error closed(qint64 received)
    {
        if (m_framing == Framing::UntilClose)
            m_state = State::Done;
        if (!isComplete())
            return Error(ErrorCode::Network, QStringLiteral("the answer broke off after %1 bytes").arg(received));
        return Error();
    }

private:
    enum class State { Size, Data, DataEnd, Trailer, Done };

    Error chunkLine(const QByteArray &line)
    {
        switch (m_state) {
        case State::Size: {
            bool ok = false;
            const qint64 size = line.left(line.indexOf(';') < 0 ? line.size() : line.indexOf(';')).trimmed().toLongLong(&ok, 16);
            if (!ok || size < 0)
                return Error(ErrorCode::Network, QStringLiteral("a broken chunk size in the answer"));
            m_left = size;
            m_state = size == 0 ? State::Trailer : State::Data;
            return Error();
        }
        case State::DataEnd:
            if (!line.isEmpty())
                return Error(ErrorCode::Network, QStringLiteral("a chunk longer than its size"));
            m_state = State::Size;
            return Error();
        case State::Trailer:
            if (line.isEmpty())
                m_state = State::Done;
            return Error();
        case State::Data:
        case State::Done:
            break;
        }
        return Error();
    }

    Framing m_framing;
    qint64 m_left;
    HttpBodyConsumer &m_consumer;
    State m_state = State::Size;
    QByteArray m_line;
};

Result<HttpHead> parseHead(const QByteArray &bytes)
{
    const QList<QByteArray> lines = bytes.split('\n');
    HttpHead head;
    const QList<QByteArray> status = lines.value(0).trimmed().split(' ');
    bool ok = false;
    head.status = status.value(1).toInt(&ok);
    if (!status.value(0).startsWith("HTTP/1.") || !ok || head.status < 100 || head.status > 999)
        return Error(ErrorCode::Network, QStringLiteral("not an HTTP answer: %1").arg(QString::fromLatin1(lines.value(0).left(80).trimmed())));
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray line = lines[i].trimmed();
        const qsizetype colon = line.indexOf(':');
        if (colon > 0)
            head.fields.append({line.left(colon).trimmed().toLower(), line.mid(colon + 1).trimmed()});
    }
    return head;
}

} // namespace

bool canStreamDirectly(const QUrl &url)
{
    if (url.scheme() != QLatin1String("http") || QNetworkProxy::applicationProxy().type() != QNetworkProxy::NoProxy)
        return false;
    for (const char *var : {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"})
        if (!qEnvironmentVariableIsEmpty(var))
            return false;
    return true;
}

namespace {

/// A method whose request carries a body (sent with its length, even an empty one).
bool carriesBody(const QByteArray &method)
{
    return method == "PUT" || method == "POST" || method == "PATCH";
}

/// A method that may be sent twice (RFC 9110 9.2.2): only those are sent again on a new connection.
bool idempotent(const QByteArray &method)
{
    return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE" || method == "OPTIONS";
}

enum class Outcome { Done, Failed, PeerHadClosed };

/// One exchange over `socket`. PeerHadClosed: a kept connection gave nothing back (closed or reset before the
/// first byte of the answer) — the consumer saw nothing and the request may be sent again on a new one.
Outcome exchange(Socket &socket, const HttpRequest &request, const QString &peer, bool reused, HttpBodyConsumer &consumer, const HttpCancel &cancel,
                 Error *error, bool *reusable)
{
    *reusable = false;
    const QUrl &url = request.url;
    const quint16 port = quint16(url.port(80));
    QByteArray head = request.method + ' ' + url.toEncoded(QUrl::RemoveScheme | QUrl::RemoveAuthority | QUrl::RemoveFragment) + " HTTP/1.1\r\n";
    if (head.startsWith(request.method + "  "))
        head.insert(request.method.size() + 1, '/');
    const QByteArray host = url.host(QUrl::FullyEncoded).toLatin1();
    head += "Host: " + (host.contains(':') ? "[" + host + "]" : host) + (url.port() > 0 ? ":" + QByteArray::number(port) : QByteArray()) + "\r\n";
    for (const auto &[name, value] : request.fields)
        head += name + ": " + value + "\r\n";
    if (carriesBody(request.method))
        head += "Content-Length: " + QByteArray::number(request.body.size()) + "\r\n";
    // Without keeping: one exchange per connection, whose end ends the answer.
    head += request.keepAlive ? QByteArray("\r\n") : QByteArray("Connection: close\r\n\r\n");
    const auto lost = [&](const Error &e) {
        *error = e;
        return reused && e.code() == ErrorCode::Network && idempotent(request.method) ? Outcome::PeerHadClosed : Outcome::Failed;
    };
    // Small bodies go out with the head, in one segment.
    const bool together = carriesBody(request.method) && request.body.size() <= 64 * 1024;
    if (Error e = socket.sendAll(together ? head + request.body : head); e.isError())
        return lost(e);
    if (carriesBody(request.method) && !together) {
        if (Error e = socket.sendAll(request.body); e.isError())
            return lost(e);
    }

    // The head, then whatever of the body came with it. Interim answers (1xx: "100 Continue", "103 Early Hints")
    // come before the final one and are passed over.
    QByteArray answer;
    qsizetype headEnd = -1;
    char chunk[64 * 1024];
    for (;;) {
        headEnd = answer.indexOf("\r\n\r\n");
        if (headEnd >= 0 && answer.startsWith("HTTP/1.") && answer.size() > 12 && answer[9] == '1' && !answer.startsWith("HTTP/1.1 101")) {
            answer.remove(0, headEnd + 4);
            continue;
        }
        if (headEnd >= 0)
            break;
        const Result<qint64> n = socket.receive(chunk, sizeof chunk);
        if (!n.isOk())
            return answer.isEmpty() ? lost(n.error()) : (*error = n.error(), Outcome::Failed);
        if (n.value() == 0) {
            const Error e(ErrorCode::Network, QStringLiteral("%1 closed the connection without an answer").arg(peer));
            return answer.isEmpty() ? lost(e) : (*error = e, Outcome::Failed);
        }
        answer.append(chunk, n.value());
        if (answer.indexOf("\r\n\r\n") < 0 && answer.size() > kMaxHeaderBytes)
            return *error = Error(ErrorCode::Network, QStringLiteral("the answer's header is longer than %1 bytes").arg(kMaxHeaderBytes)), Outcome::Failed;
    }
    Result<HttpHead> parsed = parseHead(answer.left(headEnd));
    if (!parsed.isOk())
        return *error = parsed.error(), Outcome::Failed;
    const HttpHead &h = parsed.value();
    if (Error e = consumer.head(h); e.isError())
        return *error = e, Outcome::Failed;

    Body::Framing framing = Body::Framing::UntilClose;
    qint64 length = 0;
    if (request.method == "HEAD" || h.status == 204 || h.status == 304 || h.status < 200) {
        framing = Body::Framing::None;
    } else if (h.value("transfer-encoding").toLower().contains("chunked")) {
        framing = Body::Framing::Chunked;
    } else if (!h.value("content-length").isEmpty()) {
        bool ok = false;
        length = h.value("content-length").toLongLong(&ok);
        if (!ok || length < 0)
            return *error = Error(ErrorCode::Network, QStringLiteral("a broken Content-Length in the answer")), Outcome::Failed;
        framing = Body::Framing::Length;
    }
    Body body(framing, length, consumer);
    qint64 received = answer.size() - headEnd - 4;
    if (Error e = body.take(answer.constData() + headEnd + 4, received); e.isError())
        return *error = e, Outcome::Failed;
    answer = QByteArray();

    while (!body.isComplete()) {
        if (cancel.isCancelled())
            return *error = Error(ErrorCode::Cancelled, QStringLiteral("cancelled")), Outcome::Failed;
        qint64 capacity = 0;
        const qint64 wanted = body.dataWanted();
        char *direct = wanted > 0 ? consumer.directBuffer(wanted, &capacity) : nullptr;
        if (direct && capacity > 0) {
            const Result<qint64> n = socket.receive(direct, std::min(capacity, wanted), true);
            if (!n.isOk())
                return *error = n.error(), Outcome::Failed;
            if (Error e = n.value() > 0 ? body.tookDirect(n.value()) : consumer.tookDirect(0); e.isError())
                return *error = e, Outcome::Failed;
            received += n.value();
            if (n.value() == 0) {
                if (Error e = body.closed(received); e.isError())
                    return *error = e, Outcome::Failed;
            }
            continue;
        }
        const Result<qint64> n = socket.receive(chunk, sizeof chunk);
        if (!n.isOk())
            return *error = n.error(), Outcome::Failed;
        received += n.value();
        if (Error e = n.value() > 0 ? body.take(chunk, n.value()) : body.closed(received); e.isError())
            return *error = e, Outcome::Failed;
    }
    // Kept for the next exchange when the answer ended by its framing and neither side asked to close.
    *reusable = request.keepAlive && framing != Body::Framing::UntilClose && !h.value("connection").toLower().contains("close")
        && parsed.value().status >= 200;
    *error = consumer.end();
    return error->isError() ? Outcome::Failed : Outcome::Done;
}

} // namespace

Error runHttp(const HttpRequest &request, int timeoutMs, HttpBodyConsumer &consumer, const HttpCancel &cancel)
{
    const QUrl &url = request.url;
    if (url.scheme() != QLatin1String("http") || url.host().isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("not a plain http:// address"));
    const quint16 port = quint16(url.port(80));
    const QString peer = QStringLiteral("%1:%2").arg(url.host()).arg(port);
    const QByteArray key = peer.toUtf8();
    for (;;) {
        Socket socket(cancel, timeoutMs > 0 ? timeoutMs : 60000, peer);
        const int kept = request.keepAlive ? HttpConnections::shared().take(key) : -1;
        if (kept >= 0) {
            socket.adopt(kept);
        } else if (Error e = socket.connectTo(url.host(QUrl::FullyEncoded).toLatin1(), port); e.isError()) {
            return e;
        }
        Error error;
        bool reusable = false;
        const Outcome outcome = exchange(socket, request, peer, kept >= 0, consumer, cancel, &error, &reusable);
        if (outcome == Outcome::PeerHadClosed && !cancel.isCancelled())
            continue;  // that connection was closed while kept: the next one (or a new one) is asked
        if (outcome == Outcome::Done && reusable)
            HttpConnections::shared().give(key, socket.release());
        return error;
    }
}

Error runHttpGet(const QUrl &url, const QList<QPair<QByteArray, QByteArray>> &fields, int timeoutMs, HttpBodyConsumer &consumer,
                 const HttpCancel &cancel)
{
    HttpRequest request;
    request.url = url;
    request.fields = fields;
    return runHttp(request, timeoutMs, consumer, cancel);
}

} // namespace spectrum
