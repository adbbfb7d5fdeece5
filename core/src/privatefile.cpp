// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/privatefile.h"

#include <QFile>

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace spectrum {

Error checkPrivateFile(const QString &path, const QString &what)
{
    struct stat st{};
    if (::stat(QFile::encodeName(path).constData(), &st) != 0)
        return Error(ErrorCode::NotFound, QStringLiteral("cannot read %1 %2: %3").arg(what, path, QString::fromLocal8Bit(std::strerror(errno))));
    if (!S_ISREG(st.st_mode))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1 %2 is not a file").arg(what, path));
    // As ssh: nothing for every user, nothing for the group of a file of ours. A file another user (root) gave
    // a group or this user (systemd's credentials, by ACL) is the administrator's provision.
    if ((st.st_mode & S_IRWXO) || (st.st_uid == ::geteuid() && (st.st_mode & S_IRWXG)))
        return Error(ErrorCode::NotAllowed, QStringLiteral("%1 %2 may be read by others (mode %3): a secret must be its owner's alone "
                                                           "(chmod 600 %2), and this one is not used")
                                                .arg(what, path, QStringLiteral("%1").arg(st.st_mode & 07777, 4, 8, QLatin1Char('0'))));
    return Error();
}

Result<QByteArray> readPrivateFile(const QString &path, const QString &what, qint64 maxBytes)
{
    if (Error e = checkPrivateFile(path, what); e.isError())
        return e;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return Error(ErrorCode::Io, QStringLiteral("cannot read %1 %2: %3").arg(what, path, f.errorString()));
    return f.read(maxBytes);
}

} // namespace spectrum
