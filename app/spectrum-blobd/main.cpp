// SPDX-License-Identifier: Apache-2.0
// spectrum-blobd: a blob store server. Serves a FileStore directory over the blob protocol
// (transfer/PROTOCOL.md). Wiring only: BlobServer and FileStore do the work.

#include "spectrum/core/audit/auditevents.h"
#include "spectrum/core/logging.h"
#include "spectrum/core/privatefile.h"
#include "spectrum/core/programlog.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/transfer/audit/audittrail.h"
#include "spectrum/stores/blobs/blobserver.h"
#include "spectrum/stores/blobs/cacheshare.h"
#include "spectrum/stores/blobs/filestore.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFile>
#include <QSocketNotifier>
#include <QSslSocket>

#include <csignal>
#include <cstdio>

#include <sys/socket.h>
#include <unistd.h>

using namespace spectrum;

namespace {

int signalPipe[2] = {-1, -1};

void onSignal(int)
{
    const char c = 1;
    [[maybe_unused]] const ssize_t n = ::write(signalPipe[1], &c, 1);  // async-signal-safe hand-off
}

int fail(const QString &message, int code = 1)
{
    std::fprintf(stderr, "spectrum-blobd: %s\n", qPrintable(message));
    return code;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("spectrum-blobd"));
    QCoreApplication::setApplicationVersion(QStringLiteral(SPECTRUM_VERSION));

    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Spectrum blob store server: serves a blob directory to Spectrum clients."));
    p.addHelpOption();
    p.addVersionOption();
    p.addOption({QStringLiteral("root"), QStringLiteral("The blob directory (created if needed)."), QStringLiteral("DIR")});
    p.addOption({QStringLiteral("listen"), QStringLiteral("Address to listen on (default 127.0.0.1)."), QStringLiteral("ADDR"), QStringLiteral("127.0.0.1")});
    p.addOption({QStringLiteral("port"), QStringLiteral("TCP port (default 7411; 0 picks a free one and prints it)."), QStringLiteral("N"), QStringLiteral("7411")});
    p.addOption({QStringLiteral("token-file"), QStringLiteral("File whose content is the token clients must present."), QStringLiteral("FILE")});
    p.addOption({QStringLiteral("allow-no-auth"), QStringLiteral("Serve without a token (only on a loopback address).")});
    p.addOption({QStringLiteral("budget-mb"), QStringLiteral("Evict least recently used blobs beyond this size (0: never)."), QStringLiteral("MB"), QStringLiteral("0")});
    p.addOption({QStringLiteral("max-connections"), QStringLiteral("Connections served at once (default 256)."), QStringLiteral("N"), QStringLiteral("256")});
    p.addOption({QStringLiteral("max-streams"), QStringLiteral("Data connections per client session (default 16)."), QStringLiteral("N"), QStringLiteral("16")});
    p.addOption({QStringLiteral("idle-timeout"), QStringLiteral("Close connections silent this many seconds (default 120)."), QStringLiteral("S"), QStringLiteral("120")});
    p.addOption({QStringLiteral("tls-cert"), QStringLiteral("PEM certificate (chain) for TLS on every connection."), QStringLiteral("FILE")});
    p.addOption({QStringLiteral("tls-key"), QStringLiteral("PEM private key of the certificate."), QStringLiteral("FILE")});
    p.addOption({QStringLiteral("socket-buffer"), QStringLiteral("SO_SNDBUF/SO_RCVBUF in bytes (default: the system's)."), QStringLiteral("BYTES"), QStringLiteral("0")});
    p.addOption({QStringLiteral("read-only"), QStringLiteral("Serve reads only: storing and removing blobs are refused.")});
    p.addOption({QStringLiteral("audit-config"),
                 QStringLiteral("The configuration whose \"audit\" section names the audit repository (default: the hospital's, "
                                "$SPECTRUM_SYSTEM_CONFIG or /etc/spectrum/stores.json, when it exists): start, stop and every "
                                "client refused are sent there."),
                 QStringLiteral("FILE")});
    p.addOption({QStringLiteral("audit-spool"),
                 QStringLiteral("Where audit messages wait while the repository cannot take them (default: the configuration's, else "
                                "~/.local/state/spectrum/audit)."),
                 QStringLiteral("DIR")});
    addProgramLogOptions(p);
    p.process(app);
    {
        Result<ProgramLogOptions> log = programLogOptions(p, QStringLiteral("spectrum-blobd"));
        if (!log.isOk())
            return fail(log.error().message(), 2);
        // A service's stderr is its journal: what it does goes there too, not only its warnings.
        if (!log.value().stderrLevel)
            log.value().stderrLevel = LogLevel::Info;
        installProgramLog(log.value());
    }
    AuditConfig auditConfig;
    {
        Result<AuditConfig> followed = auditConfigToFollow(p.isSet(QStringLiteral("audit-config")) ? p.value(QStringLiteral("audit-config"))
                                                                                                    : StoreConfigFile::systemPath());
        if (!followed.isOk())
            return fail(QStringLiteral("the audit trail cannot be kept: %1").arg(followed.error().message()));
        auditConfig = followed.value();
    }
    if (p.isSet(QStringLiteral("audit-spool")))
        auditConfig.spoolDirectory = p.value(QStringLiteral("audit-spool"));
    Result<std::unique_ptr<AuditTrail>> auditTrail = startAuditTrail(auditConfig, QStringLiteral("spectrum-blobd"), 4);
    if (!auditTrail.isOk())
        return fail(QStringLiteral("the audit trail cannot be kept: %1").arg(auditTrail.error().message()));

    if (!p.isSet(QStringLiteral("root")))
        return fail(QStringLiteral("--root DIR is required"), 2);
    BlobServerOptions options;
    options.allowNoAuth = p.isSet(QStringLiteral("allow-no-auth"));
    if (p.isSet(QStringLiteral("token-file"))) {
        const QString file = p.value(QStringLiteral("token-file"));
        Result<QByteArray> token = readPrivateFile(file, QStringLiteral("the token file"));
        if (!token.isOk())
            return fail(token.error().message());
        options.token = QString::fromUtf8(token.value()).trimmed();
        if (options.token.isEmpty())
            return fail(QStringLiteral("the token file %1 is empty").arg(file));
    } else if (!options.allowNoAuth) {
        return fail(QStringLiteral("give --token-file FILE (or --allow-no-auth on a loopback address)"), 2);
    }
    options.maxConnections = p.value(QStringLiteral("max-connections")).toInt();
    options.maxStreamsPerSession = p.value(QStringLiteral("max-streams")).toInt();
    options.idleTimeoutMs = p.value(QStringLiteral("idle-timeout")).toInt() * 1000;
    options.socketBufferBytes = p.value(QStringLiteral("socket-buffer")).toInt();
    options.readOnly = p.isSet(QStringLiteral("read-only"));
    if (options.maxConnections < 1 || options.maxStreamsPerSession < 1 || options.idleTimeoutMs < 1000)
        return fail(QStringLiteral("--max-connections, --max-streams and --idle-timeout must be positive"), 2);

    if (p.isSet(QStringLiteral("tls-cert")) != p.isSet(QStringLiteral("tls-key")))
        return fail(QStringLiteral("--tls-cert and --tls-key go together"), 2);
    if (p.isSet(QStringLiteral("tls-cert"))) {
        Result<QSslConfiguration> conf = serverTlsConfiguration(p.value(QStringLiteral("tls-cert")), p.value(QStringLiteral("tls-key")));
        if (!conf.isOk())
            return fail(conf.error().message());
        options.tls = true;
        options.tlsConfiguration = conf.value();
    }
    auto store = FileStore::open(p.value(QStringLiteral("root")), p.value(QStringLiteral("budget-mb")).toLongLong() * 1024 * 1024);
    if (!store.isOk())
        return fail(QStringLiteral("cannot serve the blob root %1: %2%3")
                        .arg(p.value(QStringLiteral("root")), store.error().message(),
                             store.error().code() == ErrorCode::Io ? QStringLiteral(" (the server's user must be able to create it, or own it)") : QString()));
    BlobServer server(store.value().get(), options);
    const QHostAddress address(p.value(QStringLiteral("listen")));
    if (address.isNull())
        return fail(QStringLiteral("'%1' is not an IP address").arg(p.value(QStringLiteral("listen"))), 2);
    if (Error e = server.listen(address, quint16(p.value(QStringLiteral("port")).toUInt())); e.isError())
        return fail(e.toString());

    // SIGTERM / SIGINT end the event loop through a pipe: open transfers are dropped, the index is saved.
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, signalPipe) != 0)
        return fail(QStringLiteral("cannot create the signal pipe"));
    QSocketNotifier notifier(signalPipe[0], QSocketNotifier::Read);
    QObject::connect(&notifier, &QSocketNotifier::activated, &app, [&] {
        char c;
        [[maybe_unused]] const ssize_t n = ::read(signalPipe[0], &c, 1);
        qCInfo(lcApp, "shutting down");
        server.close();
        QCoreApplication::quit();
    });
    struct sigaction sa = {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);

    audit(auditevents::applicationActivity(true));
    qCInfo(lcApp).noquote() << "listening on" << address.toString() << server.port() << (options.tls ? "(TLS)" : "") << "serving" << store.value()->root();
    std::printf("spectrum-blobd listening on %s:%u%s, serving %s\n", qPrintable(address.toString()), server.port(),
                options.tls ? " (TLS)" : "",
                qPrintable(store.value()->root()));
    std::fflush(stdout);
    const int status = app.exec();
    audit(auditevents::applicationActivity(false));
    if (auditTrail.value())
        auditTrail.value()->flush(3000);
    return status;
}
