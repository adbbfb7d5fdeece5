// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/exchange/deidentifiedexport.h"

#include "spectrum/stores/audit/auditsubjects.h"
#include "spectrum/core/audit/audit.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/stores/blobs/blobstore.h"

#include <QDir>
#include <QSaveFile>
#include <QUrl>

namespace spectrum {

namespace {

/// An Export message per study exported (its original patient named: the audit trail is where the link is kept).
void auditExport(const QList<DicomIdentity> &originals, const QString &outDir, const Result<DeidentifiedExport> &result)
{
    const QString destination = QUrl::fromLocalFile(QDir(outDir).absolutePath()).toString();
    for (const auditevents::Study &s : auditStudiesOf(originals))
        audit(auditevents::dataExport(destination, s, true, result.isOk() ? AuditMessage::Outcome::Success : AuditMessage::Outcome::SeriousFailure,
                                      result.isOk() ? QString() : result.error().message()));
}

Result<DeidentifiedExport> exportInto(BlobStore *cache, const QStringList &keys, const DeidentifyOptions &options, const QString &outDir,
                                      const CancelToken &cancel, QList<DicomIdentity> *originals)
{
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
        if (isAuditing()) {
            if (Result<DicomIdentity> id = readDicomIdentity(bytes.value()); id.isOk() && id.value().isValid())
                originals->append(id.value());
        }
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
}

} // namespace

ResultJob<DeidentifiedExport> *exportDeidentified(BlobStore *cache, QStringList keys, DeidentifyOptions options, QString outDir)
{
    if (!cache->readsOnAnyThread())
        return failedJob<DeidentifiedExport>(Error(ErrorCode::Unsupported, QStringLiteral("the cache cannot be read off its own thread")));
    return makeJob<DeidentifiedExport>([cache, keys, options, outDir](const CancelToken &cancel) -> Result<DeidentifiedExport> {
        QList<DicomIdentity> originals;
        Result<DeidentifiedExport> r = exportInto(cache, keys, options, outDir, cancel, &originals);
        auditExport(originals, outDir, r);
        return r;
    });
}

} // namespace spectrum
