// SPDX-License-Identifier: Apache-2.0
#pragma once
// The JSON files readers and IT write by hand beside the settings (hanging protocols, saved searches): read whole
// and bounded, written whole and atomically (its folder made when missing). Private to stores.

#include "spectrum/core/result.h"

#include <QByteArray>
#include <QString>

namespace spectrum {

/// A file as read: `exists` false when there is none.
struct UserFile
{
    bool exists = false;
    QByteArray bytes;
};
/// The file's bytes; an error naming the file when it cannot be read or is larger than `maxBytes` (then it is
/// not a file of this kind).
Result<UserFile> readUserFile(const QString &path, qint64 maxBytes = 4 * 1024 * 1024);
Error writeUserFile(const QString &path, const QByteArray &bytes);

/// "<path>: <what fromJson said>", with its code.
inline Error inFile(const QString &path, const Error &e)
{
    return Error(e.code(), QStringLiteral("%1: %2").arg(path, e.message()));
}

} // namespace spectrum
