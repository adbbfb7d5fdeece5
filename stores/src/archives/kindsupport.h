// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the archive kinds share when they check and write their fields (private to stores).

#include "spectrum/stores/archives/archivekind.h"

#include <QJsonObject>
#include <QString>

namespace spectrum::kinds {

inline Error invalid(const QString &where, const QString &what)
{
    return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: %2").arg(where, what));
}

/// `value` under `key` when it is set.
inline void put(QJsonObject &json, const char *key, const QString &value)
{
    if (!value.isEmpty())
        json.insert(QLatin1String(key), value);
}

/// Whether `url` is an http(s) address with a host and no credentials.
bool isWebAddress(const QString &url);

} // namespace spectrum::kinds
