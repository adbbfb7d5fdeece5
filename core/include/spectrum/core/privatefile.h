// SPDX-License-Identifier: Apache-2.0
#pragma once
// Files that hold secrets — tokens, passwords, private keys — are read only when nobody but their owner may read
// them, as ssh does with its keys: a secret others could read is no longer one, and the administrator is told
// how to fix it rather than the secret used.

#include "spectrum/core/result.h"

#include <QByteArray>
#include <QString>

namespace spectrum {

/// An error naming `what` ("the token file") and the fix when `path` is not a regular file, every user may read
/// it, or it is ours and its group may (ssh's rule), or it cannot be looked at; no error otherwise.
Error checkPrivateFile(const QString &path, const QString &what);
/// The content of `path` (at most `maxBytes`) after checkPrivateFile().
Result<QByteArray> readPrivateFile(const QString &path, const QString &what, qint64 maxBytes = 64 * 1024);

} // namespace spectrum
