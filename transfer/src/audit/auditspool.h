// SPDX-License-Identifier: Apache-2.0
#pragma once
// The audit trail's spool: every message is written here, and synced, before it is sent — so a repository that
// is down, a network that is cut or a program that crashes loses nothing. One pair of append-only files per
// process, held locked while it lives: <program>-<pid>-<random>.spool (the frames, in order) and .sent (how many of them
// the repository took, one line per delivery). A process that ends with everything delivered removes its pair;
// one that cannot leaves it, and the next trail to open the folder adopts it (its lock is free) and sends what
// was left.

#include "spectrum/core/result.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <memory>

namespace spectrum {

class AuditSpool
{
public:
    /// Opens this process's spool in `directory` (created owner-only) and takes over the spools of processes
    /// that are gone: their undelivered frames come first, in their order. `adopted` says how many.
    static Result<std::unique_ptr<AuditSpool>> open(const QString &directory, const QString &program, int *adopted = nullptr);
    ~AuditSpool();

    /// Appends one frame and syncs it to the disk. An error when it could not be (a full disk): the frame is then
    /// still pending, from memory (nothing of it is left in the file).
    Error append(const QByteArray &frame);
    /// The frames not delivered yet, oldest first.
    QList<QByteArray> pending() const;
    int pendingCount() const { return int(m_pending.size()); }
    /// The first `count` pending frames were delivered: recorded (synced), and dropped from pending(). When
    /// nothing is left the files are emptied.
    Error delivered(int count);

    QString spoolFile() const { return m_spoolPath; }

private:
    AuditSpool() = default;
    Error appendSent(qint64 total);

    QString m_spoolPath, m_sentPath;
    int m_spoolFd = -1, m_sentFd = -1;
    struct Pending
    {
        QByteArray frame;
        bool onDisk = true;
    };
    QList<Pending> m_pending;
    qint64 m_deliveredTotal = 0;  ///< frames of this spool file delivered since it was last emptied
};

} // namespace spectrum
