// SPDX-License-Identifier: Apache-2.0
#pragma once
// AuditTrail: the process's audit sink (core's audit.h). Each message becomes an RFC 5424 syslog message, is
// kept in the spool (auditspool.h: synced to disk first, nothing lost) and is then sent to the hospital's audit
// record repository — over TLS (RFC 5425, DICOM PS3.15 A.6; the repository's certificate checked, ours presented
// when it asks) or UDP (RFC 5426, A.7).
//
// record() returns at once on any thread (the window's never waits for a disk): a writer on the blocking pool
// appends and syncs each message, in order, and only what it has written is sent.
//
// Over TLS a message counts as delivered only when the repository has read it: the trail sends what is pending,
// ends its side of the connection and waits for the repository to end its own — which it does once it has read
// every byte (a repository killed before that resets the connection, and everything is sent again: at least once,
// never lost). Failures are retried, 1 s after the first and doubling up to a minute. Over UDP nothing confirms:
// a datagram sent counts as delivered (use it only where the network is trusted not to drop them).

#include "spectrum/core/audit/audit.h"
#include "spectrum/core/result.h"

#include <QObject>
#include <QMutex>
#include <QWaitCondition>
#include <QTimer>

#include <memory>

namespace spectrum {

class AuditSpool;
struct SyslogDelivery;

/// Where audit messages go: "tls://host:6514" or "udp://host:514", with the TLS files.
struct AuditRepository
{
    enum class Transport { Tls, Udp };
    Transport transport = Transport::Tls;
    QString host;
    quint16 port = 6514;
    QString caFile;           ///< PEM CAs the repository's certificate must chain to (empty: the system's)
    QString certificateFile;  ///< our certificate (PEM), for a repository that authenticates its clients (ATNA)
    QString keyFile;
    /// "tls://audit.hospital.org:6514", "udp://10.0.0.5" (port 6514 for TLS, 514 for UDP when not given).
    static Result<AuditRepository> fromUrl(const QString &url);
    QString url() const;
};

struct AuditTrailOptions
{
    std::optional<AuditRepository> repository;  ///< none: messages are only kept in the spool
    QString spoolDirectory;
    QString program;           ///< syslog APP-NAME, the spool's name
    AuditSource source;
    int retryMinMs = 1000;
    int retryMaxMs = 60000;
    int confirmTimeoutMs = 10000;  ///< how long the repository may take to close after us
};

/// Lives on the main thread (its deliveries report back there).
class AuditTrail : public QObject, public AuditSink
{
    Q_OBJECT
public:
    explicit AuditTrail(AuditTrailOptions options, QObject *parent = nullptr);
    ~AuditTrail() override;

    /// Opens the spool (adopting what earlier processes left) and starts sending it. Must succeed before
    /// record() keeps anything: a trail that cannot keep messages says so (the caller decides whether to run).
    Error open();
    /// Keeps and sends `message` (any thread). A message the spool cannot keep is logged as an error.
    void record(const AuditMessage &message) override;

    /// Messages kept and not delivered yet.
    int pending() const;
    /// Waits (running the event loop) until everything is delivered, the repository is found down, or
    /// `timeoutMs` passes: for a program about to exit. True when nothing is pending.
    bool flush(int timeoutMs);
    const AuditTrailOptions &options() const { return m_options; }

Q_SIGNALS:
    void recorded(const QString &summary);
    void delivered(int count);
    /// A try failed (the trail tries again later): the repository is down, refused us or our certificate.
    void deliveryFailed(const spectrum::Error &error);
    /// Messages were written to the spool (and are now sent).
    void spooled();

private:
    void sendPending();
    void finishAttempt(const SyslogDelivery &delivery);
    /// The spool is written by one writer at a time on the blocking pool, in the order of the commands: a message
    /// to append (and sync), or how many were delivered. Under m_mutex.
    void startWriter();
    void writeSpool();

    struct SpoolCommand
    {
        QByteArray frame;   ///< a message to keep
        int delivered = 0;  ///< or: this many delivered
    };

    AuditTrailOptions m_options;
    mutable QMutex m_mutex;  ///< record() comes from any thread, the writer runs on the pool
    QWaitCondition m_idle;
    std::unique_ptr<AuditSpool> m_spool;   ///< touched by the writer alone once open
    QList<SpoolCommand> m_commands;
    bool m_writing = false;
    QList<QByteArray> m_kept;              ///< written to the spool, not delivered yet, oldest first
    int m_unwritten = 0;                   ///< recorded, not written yet
    bool m_sending = false;     ///< a delivery is under way (on the network pool)
    bool m_failedLast = false;  ///< the last try failed: flush() does not wait for a repository that is down
    int m_retryMs = 0;
    QTimer m_retry;
};

} // namespace spectrum
