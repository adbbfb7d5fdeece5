// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/audit/audit.h"

#include <QMutex>
#include <QReadWriteLock>

#include <pwd.h>
#include <unistd.h>

namespace spectrum {

namespace {

/// The sink, and a lock held while a message is handed to it: uninstalling waits for record() calls under way,
/// so a sink going away never sees one after.
AuditSink *g_sink = nullptr;
QReadWriteLock &sinkLock()
{
    static auto *lock = new QReadWriteLock;
    return *lock;
}

struct Identity
{
    QMutex mutex;
    AuditUser user;
    bool signedIn = false;
    QString program;
};

Identity &identity()
{
    static auto *i = new Identity;  // read by messages recorded while the process ends
    return *i;
}

AuditUser machineLogin()
{
    AuditUser u;
    if (const passwd *pw = ::getpwuid(::geteuid())) {
        u.id = QString::fromLocal8Bit(pw->pw_name);
        if (pw->pw_gecos)
            u.name = QString::fromLocal8Bit(pw->pw_gecos).section(QLatin1Char(','), 0, 0).trimmed();
    }
    if (u.id.isEmpty())
        u.id = QStringLiteral("uid %1").arg(::geteuid());
    return u;
}

} // namespace

void installAuditSink(AuditSink *sink)
{
    QWriteLocker lock(&sinkLock());
    g_sink = sink;
}

void uninstallAuditSink(AuditSink *sink)
{
    QWriteLocker lock(&sinkLock());
    if (g_sink == sink)
        g_sink = nullptr;
}

bool isAuditing()
{
    QReadLocker lock(&sinkLock());
    return g_sink != nullptr;
}

void audit(const AuditMessage &message)
{
    QReadLocker lock(&sinkLock());
    if (g_sink)
        g_sink->record(message);
}

AuditUser auditUser()
{
    Identity &i = identity();
    QMutexLocker lock(&i.mutex);
    if (!i.signedIn)
        return machineLogin();
    return i.user;
}

void setAuditUser(const AuditUser &user)
{
    Identity &i = identity();
    QMutexLocker lock(&i.mutex);
    i.user = user;
    i.signedIn = true;
}

void resetAuditUser()
{
    Identity &i = identity();
    QMutexLocker lock(&i.mutex);
    i.signedIn = false;
    i.user = AuditUser();
}

QString auditHostName()
{
    static const QString name = [] {
        char host[256] = {};
        if (::gethostname(host, sizeof host - 1) != 0 || host[0] == 0)
            return QStringLiteral("localhost");
        return QString::fromLocal8Bit(host);
    }();
    return name;
}

QString auditProgram()
{
    Identity &i = identity();
    QMutexLocker lock(&i.mutex);
    return i.program.isEmpty() ? QStringLiteral("spectrum") : i.program;
}

void setAuditProgram(const QString &program)
{
    Identity &i = identity();
    QMutexLocker lock(&i.mutex);
    i.program = program;
}

} // namespace spectrum
