// SPDX-License-Identifier: Apache-2.0
#include "reading/userfile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

namespace spectrum {

Result<UserFile> readUserFile(const QString &path, qint64 maxBytes)
{
    UserFile out;
    QFile f(path);
    if (!f.exists())
        return out;
    if (!f.open(QIODevice::ReadOnly))
        return Error(ErrorCode::Io, QStringLiteral("cannot read %1: %2").arg(path, f.errorString()));
    if (f.size() > maxBytes)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: larger than %2 MiB, not a file of this kind").arg(path).arg(maxBytes / (1024 * 1024)));
    out.exists = true;
    out.bytes = f.readAll();
    return out;
}

Error writeUserFile(const QString &path, const QByteArray &bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
    f.write(bytes);
    if (!f.commit())
        return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
    return Error();
}

} // namespace spectrum
