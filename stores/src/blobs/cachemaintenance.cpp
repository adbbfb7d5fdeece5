// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/blobs/cachemaintenance.h"

#include "spectrum/core/resultjob.h"
#include "spectrum/stores/blobs/filestore.h"

#include <QSet>

namespace spectrum {

QJsonObject CacheSelection::toJson() const
{
    switch (what) {
    case What::Everything: return {{QStringLiteral("what"), QStringLiteral("everything")}};
    case What::Study: return {{QStringLiteral("what"), QStringLiteral("study")}, {QStringLiteral("study"), studyInstanceUid}};
    case What::ReceivedBefore:
        return {{QStringLiteral("what"), QStringLiteral("before")}, {QStringLiteral("before"), before.toUTC().toString(Qt::ISODateWithMs)}};
    }
    return {};
}

Result<CacheSelection> CacheSelection::fromJson(const QJsonObject &json)
{
    CacheSelection s;
    const QString what = json.value(QStringLiteral("what")).toString();
    if (what == QLatin1String("everything")) {
        s.what = What::Everything;
    } else if (what == QLatin1String("study") && !json.value(QStringLiteral("study")).toString().isEmpty()) {
        s.what = What::Study;
        s.studyInstanceUid = json.value(QStringLiteral("study")).toString();
    } else if (what == QLatin1String("before")) {
        s.what = What::ReceivedBefore;
        s.before = QDateTime::fromString(json.value(QStringLiteral("before")).toString(), Qt::ISODateWithMs);
        if (!s.before.isValid())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("a removal by age without a valid date"));
    } else {
        return Error(ErrorCode::InvalidArgument, QStringLiteral("a removal of neither everything, a study nor what is older"));
    }
    return s;
}

QJsonObject CacheRemoval::toJson() const
{
    return {{QStringLiteral("blobs"), blobs}, {QStringLiteral("bytes"), double(bytes)}, {QStringLiteral("studies"), studies}};
}

CacheRemoval CacheRemoval::fromJson(const QJsonObject &json)
{
    CacheRemoval r;
    r.blobs = json.value(QStringLiteral("blobs")).toInt();
    r.bytes = qint64(json.value(QStringLiteral("bytes")).toDouble());
    r.studies = json.value(QStringLiteral("studies")).toInt();
    return r;
}

QString CacheRemoval::text() const
{
    return QStringLiteral("removed %1 blob(s) of %2 study(ies) (%3 MB)").arg(blobs).arg(studies).arg(bytes / 1e6, 0, 'f', 1);
}

Result<CacheRemoval> removeFromCache(FileStore &store, const CacheSelection &which, const CancelToken &cancel)
{
    BlobQuery query;
    if (which.what == CacheSelection::What::Study)
        query.studyInstanceUid = which.studyInstanceUid;
    Result<QList<BlobInfo>> found = runSync(store.query(query));
    if (!found.isOk())
        return found.error();
    QList<BlobInfo> chosen;
    for (const BlobInfo &b : found.value()) {
        if (which.what != CacheSelection::What::ReceivedBefore || (b.committed.isValid() && b.committed < which.before))
            chosen << b;
    }
    if (which.what == CacheSelection::What::Study && chosen.isEmpty())
        return Error(ErrorCode::NotFound, QStringLiteral("the cache holds no study %1").arg(which.studyInstanceUid));
    CacheRemoval done;
    QSet<QString> studies;
    for (const BlobInfo &b : chosen) {
        if (cancel.isCancelled())
            return Error(ErrorCode::Cancelled, QStringLiteral("stopped: %1 of %2 blob(s) removed").arg(done.blobs).arg(chosen.size()));
        const Error e = runSync(store.remove(b.key)).error();
        if (e.isError() && e.code() != ErrorCode::NotFound)  // gone meanwhile: not an error
            return e.withContext(QStringLiteral("%1 of %2 blob(s) removed").arg(done.blobs).arg(chosen.size()));
        if (!e.isError()) {
            ++done.blobs;
            done.bytes += b.size;
            if (!b.dicom.studyInstanceUid.isEmpty())
                studies.insert(b.dicom.studyInstanceUid);
        }
    }
    done.studies = int(studies.size());
    return done;
}

} // namespace spectrum
