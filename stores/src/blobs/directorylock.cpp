// SPDX-License-Identifier: Apache-2.0
#include "blobs/directorylock.h"

#include "spectrum/core/logging.h"

#include <QCoreApplication>
#include <QFile>
#include <QSysInfo>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace spectrum {

namespace {

/// What the holder wrote: "pid\nprogram\nhost\n" (the layout QLockFile uses, so either reads the other's).
QString describeHolder(int fd)
{
    char buf[1024];
    const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
    const QList<QByteArray> lines = QByteArray(buf, n > 0 ? int(n) : 0).split('\n');
    bool ok = false;
    const qint64 pid = lines.value(0).toLongLong(&ok);
    if (!ok || pid <= 0)
        return QStringLiteral("another process");  // it took the lock an instant ago and is writing its name
    const QString program = QString::fromUtf8(lines.value(1));
    const QString host = QString::fromUtf8(lines.value(2));
    QString who = program.isEmpty() ? QStringLiteral("process %1").arg(pid) : QStringLiteral("%1 (pid %2)").arg(program).arg(pid);
    if (!host.isEmpty() && host != QSysInfo::machineHostName())
        who += QStringLiteral(" on %1").arg(host);
    return who;
}

} // namespace

Result<std::unique_ptr<DirectoryLock>> DirectoryLock::acquire(const QString &filePath)
{
    // Close on exec: a child that outlived us (a DICOM server we started, say) must not keep the lock.
    const int fd = ::open(QFile::encodeName(filePath).constData(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        const int err = errno;
        return Error(ErrorCode::Io, QStringLiteral("cannot open the lock file %1: %2").arg(filePath, QString::fromLocal8Bit(std::strerror(err))));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        if (err == EWOULDBLOCK) {
            const QString holder = describeHolder(fd);
            ::close(fd);
            return Error(ErrorCode::Busy, QStringLiteral("in use by %1").arg(holder));
        }
        ::close(fd);
        return Error(ErrorCode::Io, QStringLiteral("cannot lock %1: %2").arg(filePath, QString::fromLocal8Bit(std::strerror(err))));
    }
    // Ours. Whatever an earlier holder left in the file (it may have been killed) is replaced by who we are.
    const QByteArray program = QCoreApplication::instance() ? QCoreApplication::applicationName().toUtf8() : QByteArray();
    const QByteArray info = QByteArray::number(qint64(::getpid())) + '\n' + program + '\n' + QSysInfo::machineHostName().toUtf8() + '\n';
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, info.constData(), size_t(info.size()), 0) != ssize_t(info.size()))
        qCWarning(lcStores) << "locked" << filePath << "but could not write our name into it:" << std::strerror(errno);
    return std::unique_ptr<DirectoryLock>(new DirectoryLock(fd));
}

DirectoryLock::~DirectoryLock()
{
    // The name goes first, so no one reads a holder that has gone; closing lets go of the lock.
    if (::ftruncate(m_fd, 0) != 0)
        qCWarning(lcStores) << "could not clear the holder's name from a lock file:" << std::strerror(errno);
    ::close(m_fd);
}

} // namespace spectrum
