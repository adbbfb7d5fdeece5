// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/exchange/deidentifiedexport.h"

#include "spectrum/stores/blobs/blobstore.h"

#include <QDir>
#include <QSaveFile>

namespace spectrum {

ResultJob<DeidentifiedExport> *exportDeidentified(BlobStore *cache, QStringList keys, DeidentifyOptions options, QString outDir)
{
    if (!cache->readsOnAnyThread())
        return failedJob<DeidentifiedExport>(Error(ErrorCode::Unsupported, QStringLiteral("the cache cannot be read off its own thread")));
    return makeJob<DeidentifiedExport>([cache, keys, options, outDir](const CancelToken &cancel) -> Result<DeidentifiedExport> {
        if (!QDir().mkpath(outDir))
            return Error(ErrorCode::Io, QStringLiteral("cannot make the folder %1").arg(outDir));
        UidMap uids;
        DeidentifiedExport out;
        for (const QString &key : keys) {
            if (cancel.isCancelled())
                return Error(ErrorCode::Cancelled, QStringLiteral("cancelled"));
            Result<ByteView> bytes = runSync(cache->read(key));
            if (!bytes.isOk())
                return bytes.error().withContext(key);
            Result<DeidentifiedInstance> d = deidentify(bytes.value(), options, uids);
            if (!d.isOk())
                return d.error().withContext(key);
            const QString path = QDir(outDir).filePath(d.value().sopInstanceUid + QStringLiteral(".dcm"));
            QSaveFile f(path);
            if (!f.open(QIODevice::WriteOnly) || f.write(d.value().bytes) != d.value().bytes.size() || !f.commit())
                return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
            out.files << path;
            if (!d.value().burnedInWarning.isEmpty())
                out.burnedIn << qMakePair(d.value().sopInstanceUid, d.value().burnedInWarning);
            out.textsKept += int(d.value().textsKept.size());
        }
        return out;
    });
}

} // namespace spectrum
