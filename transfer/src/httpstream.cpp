// SPDX-License-Identifier: Apache-2.0
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

class Socket : public HttpAnswerSource
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
    Result<qint64> receive(char *into, qint64 capacity, bool bulk) override
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

    const HttpAnswerEnd answer = readHttpAnswer(socket, request.method, peer, consumer, &cancel);
    if (answer.error.isError())
        return answer.nothingCame ? lost(answer.error) : (*error = answer.error, Outcome::Failed);
    // Kept for the next exchange when the answer ended by its framing and neither side asked to close.
    *reusable = request.keepAlive && answer.reusable;
    return Outcome::Done;
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
