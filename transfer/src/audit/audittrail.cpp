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
    uninstallAuditSink(this);
    // What is pending stays in the spool, for the next trail to adopt.
    QMutexLocker lock(&m_mutex);
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
        if (Error e = m_spool->append(frame); e.isError())
            qCCritical(lcTransfer).noquote() << "audit: message not kept on disk (sent from memory; lost if this program ends before):" << message.summary() << "—" << e.message();
    }
    qCInfo(lcTransfer).noquote() << "audit:" << message.summary();
    const QString summary = message.summary();
    QMetaObject::invokeMethod(this, [this, summary] {
        Q_EMIT recorded(summary);
        sendPending();
    }, Qt::QueuedConnection);
}

int AuditTrail::pending() const
{
    QMutexLocker lock(&m_mutex);
    return m_spool ? m_spool->pendingCount() : 0;
}

void AuditTrail::sendPending()
{
    if (m_sending || m_retry.isActive() || !m_options.repository)
        return;
    QList<QByteArray> frames;
    {
        QMutexLocker lock(&m_mutex);
        if (!m_spool || m_spool->pendingCount() == 0)
            return;
        frames = m_spool->pending();
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
        Error kept;
        {
            QMutexLocker lock(&m_mutex);
            if (m_spool)
                kept = m_spool->delivered(d.delivered);
        }
        if (kept.isError())
            qCWarning(lcTransfer).noquote() << "audit: delivered, but the spool cannot record it (sent again later):" << kept.message();
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
        limit.start(int(std::max<qint64>(1, timeoutMs - clock.elapsed())));
        sendPending();
        if (m_sending)
            loop.exec();
        else if (!m_retry.isActive())
            break;
    }
    return pending() == 0;
}

} // namespace spectrum
