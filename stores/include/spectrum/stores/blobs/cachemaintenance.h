// SPDX-License-Identifier: Apache-2.0
#pragma once
// The disk cache kept by an administrator: everything removed, one study, or what came longer ago than a
// retention period — from `spectrum-cli cache`, or by the running workstation when it holds the cache.

#include "spectrum/core/job.h"
#include "spectrum/core/result.h"

#include <QDateTime>
#include <QJsonObject>
#include <QString>

namespace spectrum {

class FileStore;

struct CacheSelection
{
    enum class What { Everything, Study, ReceivedBefore };
    What what = What::Study;
    QString studyInstanceUid;  ///< Study
    QDateTime before;          ///< ReceivedBefore: blobs committed before this (UTC)

    QJsonObject toJson() const;
    static Result<CacheSelection> fromJson(const QJsonObject &json);
};

struct CacheRemoval
{
    int blobs = 0;
    qint64 bytes = 0;
    int studies = 0;  ///< distinct studies some of whose instances went

    QJsonObject toJson() const;
    static CacheRemoval fromJson(const QJsonObject &json);
    /// "removed 412 images of 3 studies (210.4 MB)".
    QString text() const;
};

/// Removes what `which` selects from `store`. Blocking, on any thread (the store's jobs run on the caller's);
/// stops between blobs when `cancel` is set, saying how far it got. NotFound when a study named is not held.
Result<CacheRemoval> removeFromCache(FileStore &store, const CacheSelection &which, const CancelToken &cancel);

} // namespace spectrum
