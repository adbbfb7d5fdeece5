// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/reading/findingsreports.h"

#include "spectrum/core/uid.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/stores/blobs/blobstore.h"

#include <map>

namespace spectrum {

ResultJob<QList<SavedReport>> *makeMeasurementReports(BlobStore *cache, FindingsToSave what)
{
    if (!cache->readsOnAnyThread())
        return failedJob<QList<SavedReport>>(Error(ErrorCode::Unsupported, QStringLiteral("the cache cannot be read off its own thread")));
    return makeJob<QList<SavedReport>>([cache, what](const CancelToken &cancel) -> Result<QList<SavedReport>> {
        // By study, in the order the findings came; each image decoded once.
        std::map<QString, MeasurementReportRequest> byStudy;
        QStringList order;
        QHash<QString, DecodedImage> images;
        auto imageOf = [&](const QString &sop) -> Result<DecodedImage> {
            auto it = images.find(sop);
            if (it == images.end()) {
                Result<ByteView> bytes = runSync(cache->read(sop));
                if (!bytes.isOk())
                    return bytes.error().withContext(QStringLiteral("the image of a finding"));
                Result<DecodedImage> image = decodeDicom(bytes.value());
                if (!image.isOk())
                    return image.error().withContext(sop);
                it = images.insert(sop, image.value());
            }
            return it.value();
        };
        for (ReportedFinding f : what.findings) {
            if (cancel.isCancelled())
                return Error(ErrorCode::Cancelled, QStringLiteral("cancelled"));
            const QString study = f.image.studyInstanceUid;
            if (!what.studies.contains(study))
                return Error(ErrorCode::InvalidArgument, QStringLiteral("a finding lies on an image of a study not open here (%1)").arg(study));
            Result<DecodedImage> loaded = imageOf(f.image.sopInstanceUid);
            if (!loaded.isOk())
                return loaded.error();
            const DecodedImage &image = loaded.value();
            if (image.info.identity.studyInstanceUid != study)
                return Error(ErrorCode::InvalidArgument, QStringLiteral("image %1 is not of study %2").arg(f.image.sopInstanceUid, study));
            const int frame = f.image.frame > 0 ? f.image.frame - 1 : 0;
            if (frame >= std::max(1, image.info.frames))
                return Error(ErrorCode::InvalidArgument, QStringLiteral("image %1 has no frame %2").arg(f.image.sopInstanceUid).arg(f.image.frame));
            f.image.sopClassUid = image.info.identity.sopClassUid;
            f.image.seriesInstanceUid = image.info.identity.seriesInstanceUid;
            f.values = measure(f.annotation, DecodedImage{image.info.frame(frame), image.pixels}, frame);
            if (f.annotation.trackingUid.isEmpty())
                f.annotation.trackingUid = makeUid();
            MeasurementReportRequest &r = byStudy[study];
            if (r.findings.isEmpty()) {
                order << study;
                r.study = what.studies.value(study);
                r.study.modality = image.info.identity.modality;  // the measured images' (for the quantity of their values)
                r.observerName = what.observerName;
                r.seriesDescription = what.seriesDescription;
            }
            r.findings << f;
        }
        QList<SavedReport> reports;
        for (const QString &study : order) {
            const MeasurementReportRequest &r = byStudy[study];
            Result<QByteArray> bytes = writeMeasurementReport(r);
            if (!bytes.isOk())
                return bytes.error();
            Result<DicomIdentity> id = readDicomIdentity(ByteView(bytes.value()));
            if (!id.isOk())
                return id.error().withContext(QStringLiteral("the report just written"));
            SavedReport saved{QStringLiteral("SR"), study, id.value().sopInstanceUid, bytes.value(), {}, std::nullopt};
            for (const ReportedFinding &f : r.findings)
                saved.trackingUids << f.annotation.trackingUid;
            reports << saved;
        }
        // The key images, one selection per study; the selections they replace withdrawn by a rejection note.
        QStringList keyStudies;
        for (const QList<ImageRef> *refs : {&what.keyImages, &what.replacedKeySelections})
            for (const ImageRef &r : *refs)
                if (!keyStudies.contains(r.studyInstanceUid))
                    keyStudies << r.studyInstanceUid;
        for (const QString &study : keyStudies) {
            if (!what.studies.contains(study))
                return Error(ErrorCode::InvalidArgument, QStringLiteral("a key image of a study not open here (%1)").arg(study));
            KeyObjectRequest k;
            k.study = what.studies.value(study);
            k.description = what.keyNote;
            k.observerName = what.observerName;
            for (const ImageRef &r : what.keyImages)
                if (r.studyInstanceUid == study)
                    k.images << r;
            KeyObjectRequest note;
            note.study = k.study;
            note.title = KeyObjectTitle::RejectedForQualityReasons;
            note.observerName = what.observerName;
            note.seriesDescription = QStringLiteral("Spectrum key images replaced");
            for (const ImageRef &r : what.replacedKeySelections)
                if (r.studyInstanceUid == study)
                    note.documents << r;
            auto write = [&](const KeyObjectRequest &request) -> Error {
                Result<QByteArray> bytes = writeKeyObjectSelection(request);
                if (!bytes.isOk())
                    return bytes.error();
                Result<KeyObjectSelection> read = readKeyObjectSelection(ByteView(bytes.value()));
                if (!read.isOk())
                    return read.error().withContext(QStringLiteral("the key images just written"));
                reports << SavedReport{QStringLiteral("KO"), study, read.value().identity.sopInstanceUid, bytes.value(), {}, read.value()};
                return Error();
            };
            if (!k.images.isEmpty())
                if (Error e = write(k); e.isError())
                    return e;
            if (!note.documents.isEmpty()) {
                note.description = k.images.isEmpty() ? QStringLiteral("Key images unmarked")
                                                      : QStringLiteral("Replaced by the key image selection %1").arg(reports.last().sopInstanceUid);
                if (Error e = write(note); e.isError())
                    return e;
            }
        }
        // The series in view, as it is shown, with every finding on its images.
        if (what.view) {
            const ViewToSave &v = *what.view;
            PresentationStateRequest ps;
            ps.view = v.view;
            ps.columns = v.columns;
            ps.rows = v.rows;
            ps.rescaleSlope = v.rescaleSlope;
            ps.rescaleIntercept = v.rescaleIntercept;
            ps.rescaleType = v.rescaleType;
            ps.description = v.description.left(64);
            ps.creatorName = what.observerName;
            for (const QString &key : v.instanceKeys) {
                if (cancel.isCancelled())
                    return Error(ErrorCode::Cancelled, QStringLiteral("cancelled"));
                Result<ByteView> bytes = runSync(cache->read(key));
                if (!bytes.isOk())
                    continue;  // not here (yet): the state names the images it was made with
                Result<DicomIdentity> id = readDicomIdentity(bytes.value());
                if (!id.isOk())
                    continue;
                if (ps.study.studyInstanceUid.isEmpty()) {
                    if (!what.studies.contains(id.value().studyInstanceUid))
                        return Error(ErrorCode::InvalidArgument, QStringLiteral("the series in view is of a study not open here"));
                    ps.study = what.studies.value(id.value().studyInstanceUid);
                }
                if (id.value().studyInstanceUid != ps.study.studyInstanceUid)
                    continue;
                ps.images << ImageRef{id.value().studyInstanceUid, id.value().seriesInstanceUid, id.value().sopClassUid, id.value().sopInstanceUid, 0};
            }
            for (const ReportedFinding &f : v.findings) {
                Result<DecodedImage> loaded = imageOf(f.image.sopInstanceUid);
                if (!loaded.isOk())
                    return loaded.error();
                const int frame = f.image.frame > 0 ? f.image.frame - 1 : 0;
                const QList<MeasuredValue> values = measure(f.annotation, DecodedImage{loaded.value().info.frame(frame), loaded.value().pixels}, frame);
                const QString key = presentationKey(f.image.sopInstanceUid, f.image.frame);
                ps.annotations[key] << f.annotation;
                ps.labels[key] << describeValues(values);
            }
            if (!ps.images.isEmpty()) {
                Result<QByteArray> bytes = writePresentationState(ps);
                if (!bytes.isOk())
                    return bytes.error();
                Result<DicomIdentity> id = readDicomIdentity(ByteView(bytes.value()));
                if (!id.isOk())
                    return id.error().withContext(QStringLiteral("the presentation state just written"));
                reports << SavedReport{QStringLiteral("PR"), ps.study.studyInstanceUid, id.value().sopInstanceUid, bytes.value(), {}, std::nullopt};
            }
        }
        return reports;
    });
}

} // namespace spectrum
