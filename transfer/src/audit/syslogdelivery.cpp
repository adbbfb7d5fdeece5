// SPDX-License-Identifier: Apache-2.0
#include "audit/syslogdelivery.h"

#include "spectrum/core/logging.h"
#include "spectrum/transfer/audit/syslogframe.h"

#include <QFile>
#include <QScopeGuard>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <netdb.h>
#include <pthread.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace spectrum {

namespace {

QString sslErrors()
{
    QStringList parts;
    while (const unsigned long e = ERR_get_error()) {
        char buf[256];
        ERR_error_string_n(e, buf, sizeof buf);
        parts.append(QString::fromLatin1(buf));
    }
    return parts.join(QStringLiteral("; "));
}

QString where(const AuditRepository &r)
{
    return QStringLiteral("the audit repository %1").arg(r.url());
}

/// A connected socket (TCP or UDP) with send and receive timeouts, or -1 and why.
int connectTo(const AuditRepository &r, int type, int timeoutMs, QString *why)
{
    addrinfo hints = {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = type;
    addrinfo *found = nullptr;
    const QByteArray host = r.host.toUtf8();
    const QByteArray port = QByteArray::number(r.port);
    if (const int rc = ::getaddrinfo(host.constData(), port.constData(), &hints, &found); rc != 0) {
        *why = QStringLiteral("cannot resolve %1: %2").arg(r.host, QString::fromLocal8Bit(::gai_strerror(rc)));
        return -1;
    }
    const auto freeFound = qScopeGuard([found] { ::freeaddrinfo(found); });
    for (addrinfo *a = found; a; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        timeval tv = {timeoutMs / 1000, (timeoutMs % 1000) * 1000};
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);  // on Linux also connect()'s limit
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        if (type == SOCK_STREAM) {
            const int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            return fd;
        *why = QString::fromLocal8Bit(std::strerror(errno));
        ::close(fd);
    }
    if (why->isEmpty())
        *why = QStringLiteral("no address");
    return -1;
}

SyslogDelivery failure(ErrorCode code, const QString &message, bool security = false)
{
    SyslogDelivery d;
    d.error = Error(code, message);
    d.securityRefusal = security;
    return d;
}

SyslogDelivery deliverUdp(const AuditRepository &r, const QList<QByteArray> &frames, int timeoutMs)
{
    QString why;
    const int fd = connectTo(r, SOCK_DGRAM, timeoutMs, &why);
    if (fd < 0)
        return failure(ErrorCode::Network, QStringLiteral("%1: %2").arg(where(r), why));
    const auto closeFd = qScopeGuard([fd] { ::close(fd); });
    SyslogDelivery d;
    for (const QByteArray &frame : frames) {
        Result<QList<QByteArray>> message = parseSyslogFrames(frame);
        if (!message.isOk() || message.value().size() != 1)
            return failure(ErrorCode::Corrupt, QStringLiteral("an audit message in the spool is not a syslog frame"));
        if (::send(fd, message.value().first().constData(), size_t(message.value().first().size()), 0) < 0) {
            d.error = Error(ErrorCode::Network, QStringLiteral("%1: %2").arg(where(r), QString::fromLocal8Bit(std::strerror(errno))));
            return d;  // those sent before count
        }
        ++d.delivered;
    }
    return d;
}

SyslogDelivery deliverTls(const AuditRepository &r, const QList<QByteArray> &frames, int timeoutMs)
{
    // OpenSSL keeps state per thread (its error queue, random generators) until the thread ends; a pool thread
    // may outlive OpenSSL's own clean-up at exit, leaving it behind. Given back after each delivery (made again,
    // cheaply, by the next one): nothing of OpenSSL's stays on a thread that is not using it.
    const auto stopThread = qScopeGuard([] { OPENSSL_thread_stop(); });
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx)
        return failure(ErrorCode::Internal, QStringLiteral("TLS: %1").arg(sslErrors()));
    const auto freeCtx = qScopeGuard([ctx] { SSL_CTX_free(ctx); });
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);  // BCP 195, as DICOM's TLS profiles ask
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);  // rsyslog ends without close_notify: its end of stream is its answer
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    const int loaded = r.caFile.isEmpty() ? SSL_CTX_set_default_verify_paths(ctx)
                                          : SSL_CTX_load_verify_locations(ctx, QFile::encodeName(r.caFile).constData(), nullptr);
    if (loaded != 1)
        return failure(ErrorCode::InvalidArgument, QStringLiteral("cannot read the audit repository's CA file %1: %2").arg(r.caFile, sslErrors()));
    if (!r.certificateFile.isEmpty()) {
        if (SSL_CTX_use_certificate_chain_file(ctx, QFile::encodeName(r.certificateFile).constData()) != 1
            || SSL_CTX_use_PrivateKey_file(ctx, QFile::encodeName(r.keyFile).constData(), SSL_FILETYPE_PEM) != 1
            || SSL_CTX_check_private_key(ctx) != 1)
            return failure(ErrorCode::InvalidArgument, QStringLiteral("cannot use the audit certificate %1 with its key %2: %3")
                                                           .arg(r.certificateFile, r.keyFile, sslErrors()));
    }
    QString why;
    const int fd = connectTo(r, SOCK_STREAM, timeoutMs, &why);
    if (fd < 0)
        return failure(ErrorCode::Network, QStringLiteral("%1: %2").arg(where(r), why));
    const auto closeFd = qScopeGuard([fd] { ::close(fd); });
    SSL *ssl = SSL_new(ctx);
    const auto freeSsl = qScopeGuard([ssl] { SSL_free(ssl); });
    SSL_set_fd(ssl, fd);
    const QByteArray host = r.host.toUtf8();
    SSL_set_tlsext_host_name(ssl, host.constData());
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (SSL_set1_host(ssl, host.constData()) != 1)
        return failure(ErrorCode::InvalidArgument, QStringLiteral("%1: cannot check certificates against '%2'").arg(where(r), r.host));
    ERR_clear_error();
    if (SSL_connect(ssl) != 1) {
        const long verify = SSL_get_verify_result(ssl);
        if (verify != X509_V_OK)
            return failure(ErrorCode::Authentication, QStringLiteral("%1: its certificate was refused: %2")
                                                           .arg(where(r), QString::fromLatin1(X509_verify_cert_error_string(verify))), true);
        const QString detail = sslErrors();
        return failure(ErrorCode::Authentication, QStringLiteral("%1: the TLS handshake failed (%2)").arg(where(r), detail.isEmpty() ? QStringLiteral("the connection closed") : detail), true);
    }
    QByteArray all;
    for (const QByteArray &frame : frames)
        all += frame;
    qsizetype at = 0;
    while (at < all.size()) {
        const int n = SSL_write(ssl, all.constData() + at, int(std::min<qsizetype>(all.size() - at, 1 << 20)));
        if (n <= 0)
            return failure(ErrorCode::Network, QStringLiteral("%1: the connection broke while sending (%2)").arg(where(r), QString::fromLocal8Bit(std::strerror(errno))));
        at += n;
    }
    // Every byte in the repository's hands (acknowledged by its machine), and the connection still open: a
    // repository that closed on its own meanwhile (refusing our certificate after the handshake, shutting down) has
    // not read them, and its close must not be taken for an answer to ours.
    for (qint64 waited = 0;; waited += 5) {
        tcp_info ti = {};
        socklen_t len = sizeof ti;
        if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
            break;
        if (ti.tcpi_state != TCP_ESTABLISHED)
            return failure(ErrorCode::Network, QStringLiteral("%1 closed the connection before it took the messages").arg(where(r)));
        if (ti.tcpi_unacked == 0)
            break;
        if (waited > timeoutMs)
            return failure(ErrorCode::Network, QStringLiteral("%1 did not take the messages in time").arg(where(r)));
        ::usleep(5000);
    }
    // Our side ends (close_notify, then the TCP stream): the repository reads to the end and closes its own.
    SSL_shutdown(ssl);
    ::shutdown(fd, SHUT_WR);
    char sink[256];
    for (;;) {
        ERR_clear_error();
        errno = 0;
        const int n = SSL_read(ssl, sink, sizeof sink);
        if (n > 0)
            continue;  // a repository has nothing to say on this channel; whatever it is, read past it
        const int e = SSL_get_error(ssl, n);
        if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0)) {
            SyslogDelivery d;
            d.delivered = int(frames.size());
            return d;
        }
        const QString reason = errno == EAGAIN || errno == EWOULDBLOCK ? QStringLiteral("it did not close the connection in time")
                             : errno != 0                              ? QString::fromLocal8Bit(std::strerror(errno))
                                                                       : sslErrors();
        return failure(ErrorCode::Network, QStringLiteral("%1 may not have read what was sent: %2").arg(where(r), reason));
    }
}

} // namespace

SyslogDelivery deliverSyslog(const AuditRepository &repository, const QList<QByteArray> &frames, int timeoutMs)
{
    if (frames.isEmpty())
        return SyslogDelivery();
    // A repository that resets the connection while we write must not end the program (SIGPIPE): blocked on this
    // thread while it delivers, and one it raised taken back before the thread goes on.
    sigset_t pipe, old;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &old);
    const auto restore = qScopeGuard([&] {
        const timespec none = {0, 0};
        while (sigtimedwait(&pipe, nullptr, &none) > 0) {
        }
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
    });
    return repository.transport == AuditRepository::Transport::Udp ? deliverUdp(repository, frames, timeoutMs)
                                                                   : deliverTls(repository, frames, timeoutMs);
}

} // namespace spectrum
