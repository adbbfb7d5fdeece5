// SPDX-License-Identifier: Apache-2.0
#include "spectrum/transfer/audit/audittrail.h"

#include "audit/auditspool.h"
#include "audit/syslogdelivery.h"
#include "spectrum/core/logging.h"
#include "spectrum/core/threadpools.h"
#include "spectrum/transfer/audit/syslogframe.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QPointer>
#include <QThread>
#include <QUrl>

#include <unistd.h>

namespace spectrum {

Result<AuditRepository> AuditRepository::fromUrl(const QString &text)
{
    const QUrl url(text.trimmed(), QUrl::StrictMode);
    AuditRepository r;
    const QString scheme = url.scheme().toLower();
    if (scheme == QLatin1String("tls"))
        r.transport = Transport::Tls;
    else if (scheme == QLatin1String("udp"))
        r.transport = Transport::Udp;
    else
        return Error(ErrorCode::InvalidArgument, QStringLiteral("audit repository '%1': give tls://HOST[:PORT] (RFC 5425) or udp://HOST[:PORT] (RFC 5426)").arg(text));
    r.host = url.host();
    if (!url.isValid() || r.host.isEmpty() || (!url.path().isEmpty() && url.path() != QLatin1String("/")))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("audit repository '%1' is not SCHEME://HOST[:PORT]").arg(text));
    r.port = quint16(url.port(r.transport == Transport::Tls ? 6514 : 514));
    return r;
}

QString AuditRepository::url() const
{
    return QStringLiteral("%1://%2:%3").arg(transport == Transport::Tls ? QStringLiteral("tls") : QStringLiteral("udp"), host).arg(port);
}

AuditTrail::AuditTrail(AuditTrailOptions options, QObject *parent) : QObject(parent), m_options(std::move(options))
{
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &AuditTrail::sendPending);
}

AuditTrail::~AuditTrail()
{
    uninstallAuditSink(this);  // no record() after this returns
    // What the writer has queued is written first; what is pending stays in the spool, for the next trail to adopt.
    QMutexLocker lock(&m_mutex);
    while (m_writing)
        m_idle.wait(&m_mutex);
    m_spool.reset();
}

Error AuditTrail::open()
{
    int adopted = 0;
    Result<std::unique_ptr<AuditSpool>> spool = AuditSpool::open(m_options.spoolDirectory, m_options.program, &adopted);
    if (!spool.isOk())
        return spool.error();
    {
        QMutexLocker lock(&m_mutex);
        m_spool = spool.takeValue();
        m_kept = m_spool->pending();
    }
    if (adopted > 0)
        qCInfo(lcTransfer).noquote() << "audit:" << adopted << "message(s) left by a program that had stopped are sent now";
    QMetaObject::invokeMethod(this, &AuditTrail::sendPending, Qt::QueuedConnection);
    return Error();
}

void AuditTrail::record(const AuditMessage &message)
{
    SyslogHeader header;
    header.when = message.when;
    header.hostName = auditHostName();
    header.appName = m_options.program;
    header.processId = qint64(::getpid());
    const QByteArray frame = syslogFrame(syslogMessage(header, message.toXml(m_options.source)));
    {
        QMutexLocker lock(&m_mutex);
        if (!m_spool) {
            qCCritical(lcTransfer).noquote() << "audit: no spool, message not kept:" << message.summary();
            return;
        }
        // Written and synced by the writer, off the caller's thread (the window's never waits for a disk).
        m_commands.append(SpoolCommand{frame, 0});
        ++m_unwritten;
        startWriter();
    }
    qCInfo(lcTransfer).noquote() << "audit:" << message.summary();
    const QString summary = message.summary();
    QMetaObject::invokeMethod(this, [this, summary] { Q_EMIT recorded(summary); }, Qt::QueuedConnection);
}

void AuditTrail::startWriter()
{
    if (m_writing)
        return;
    m_writing = true;
    startOnPool(blockingPool(), [this] { writeSpool(); });
}

void AuditTrail::writeSpool()
{
    for (;;) {
        QList<SpoolCommand> commands;
        {
            QMutexLocker lock(&m_mutex);
            if (m_commands.isEmpty()) {
                m_writing = false;
                m_idle.wakeAll();
                break;
            }
            commands.swap(m_commands);
        }
        for (const SpoolCommand &c : std::as_const(commands)) {
            if (c.delivered > 0) {
                if (Error e = m_spool->delivered(c.delivered); e.isError())
                    qCWarning(lcTransfer).noquote() << "audit: delivered, but the spool cannot record it (sent again later):" << e.message();
                continue;
            }
            if (Error e = m_spool->append(c.frame); e.isError())
                qCCritical(lcTransfer).noquote() << "audit: a message not kept on disk (sent from memory; lost if this program ends before):" << e.message();
            QMutexLocker lock(&m_mutex);
            m_kept.append(c.frame);
            --m_unwritten;
        }
        QMetaObject::invokeMethod(this, [this] {
            Q_EMIT spooled();
            sendPending();
        }, Qt::QueuedConnection);
    }
}

int AuditTrail::pending() const
{
    QMutexLocker lock(&m_mutex);
    return int(m_kept.size()) + m_unwritten;
}

void AuditTrail::sendPending()
{
    if (m_sending || m_retry.isActive() || !m_options.repository)
        return;
    QList<QByteArray> frames;
    {
        QMutexLocker lock(&m_mutex);
        if (m_kept.isEmpty())
            return;
        frames = m_kept;  // written to the spool first: only those go out
    }
    m_sending = true;
    const AuditRepository repository = *m_options.repository;
    const int timeoutMs = m_options.confirmTimeoutMs;
    QPointer<AuditTrail> self(this);
    startOnPool(networkPool(), [self, repository, frames, timeoutMs] {
        const SyslogDelivery d = deliverSyslog(repository, frames, timeoutMs);
        QMetaObject::invokeMethod(qApp, [self, d] {
            if (self)
                self->finishAttempt(d);
        }, Qt::QueuedConnection);
    });
}

void AuditTrail::finishAttempt(const SyslogDelivery &d)
{
    const int frames = pending();
    m_sending = false;
    if (d.delivered > 0) {
        {
            QMutexLocker lock(&m_mutex);
            m_kept.erase(m_kept.begin(), m_kept.begin() + std::min<qsizetype>(d.delivered, m_kept.size()));
            m_commands.append(SpoolCommand{QByteArray(), d.delivered});  // counted in the spool by the writer
            startWriter();
        }
        qCDebug(lcTransfer).noquote() << "audit:" << d.delivered << "message(s) delivered to" << m_options.repository->url();
        if (m_failedLast)
            qCInfo(lcTransfer).noquote() << "audit: the repository" << m_options.repository->url() << "takes messages again";
        m_failedLast = false;
        m_retryMs = 0;
        Q_EMIT delivered(d.delivered);
    }
    if (d.error.isError()) {
        if (!m_failedLast)
            qCWarning(lcTransfer).noquote() << "audit: the repository did not take" << frames << "message(s), kept to be sent again:" << d.error.message();
        m_failedLast = true;
        m_retryMs = m_retryMs == 0 ? m_options.retryMinMs : std::min(m_retryMs * 2, m_options.retryMaxMs);
        m_retry.start(m_retryMs);
        Q_EMIT deliveryFailed(d.error);
        return;
    }
    sendPending();  // what was recorded meanwhile
}

bool AuditTrail::flush(int timeoutMs)
{
    QElapsedTimer clock;
    clock.start();
    while (pending() > 0 && m_options.repository && clock.elapsed() < timeoutMs) {
        if (m_failedLast && !m_sending)
            break;  // down: kept for the next program to send
        QEventLoop loop;
        QTimer limit;
        limit.setSingleShot(true);
        connect(&limit, &QTimer::timeout, &loop, &QEventLoop::quit);
        connect(this, &AuditTrail::delivered, &loop, &QEventLoop::quit);
        connect(this, &AuditTrail::deliveryFailed, &loop, &QEventLoop::quit);
        connect(this, &AuditTrail::spooled, &loop, &QEventLoop::quit);
        limit.start(int(std::max<qint64>(1, timeoutMs - clock.elapsed())));
        sendPending();
        bool writing = false;
        {
            QMutexLocker lock(&m_mutex);
            writing = m_writing || m_unwritten > 0;
        }
        if (m_sending || writing)
            loop.exec();
        else if (!m_retry.isActive())
            break;
    }
    return pending() == 0;
}

} // namespace spectrum
