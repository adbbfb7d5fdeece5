// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/reading/studycatalog.h"

#include "spectrum/stores/reading/priorsearch.h"

#include <cmath>

#include <QHash>
#include <QMap>
#include <QSet>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace spectrum {

namespace {
/// The `n` numbers of a DICOM decimal string of `n` values ("x\y\z"), each finite — or false. As QString::toDouble
/// reads them (spaces around a value allowed, a leading '+'), without its conversions: a study of 10,000 slices
/// is placed by 90,000 of them on the GUI thread.
bool readDecimals(QStringView text, double *out, int n)
{
    int i = 0;
    for (QStringView part : text.tokenize(u'\\')) {
        part = part.trimmed();
        char digits[32];
        if (i == n || part.isEmpty() || part.size() >= qsizetype(sizeof digits))
            return false;
        int length = 0;
        for (const QChar c : part) {
            if (c.unicode() > 127)
                return false;
            digits[length++] = char(c.unicode());
        }
        const char *begin = digits + (digits[0] == '+' ? 1 : 0), *end = digits + length;
        if (begin == end || !(std::isdigit(static_cast<unsigned char>(*begin)) || *begin == '.' || (begin == digits && *begin == '-')))
            return false;  // "+-5", "+", "-" alone: not numbers (toDouble refused them too)
        const std::from_chars_result r = std::from_chars(begin, end, out[i]);
        if (r.ec != std::errc() || r.ptr != end || !std::isfinite(out[i]))
            return false;
        ++i;
    }
    return i == n;
}
} // namespace

InstanceRef InstanceRef::of(const QString &key, const DicomIdentity &id, qint64 size)
{
    InstanceRef ref;
    ref.key = key;
    ref.sopInstanceUid = id.sopInstanceUid;
    ref.instanceNumber = id.instanceNumber;
    ref.size = size;
    ref.placeBy(id);
    return ref;
}

void InstanceRef::placeBy(const DicomIdentity &id)
{
    hasPlace = false;
    double v[9];
    if (id.frameOfReferenceUid.isEmpty() || !readDecimals(id.imagePosition, v, 3) || !readDecimals(id.imageOrientation, v + 3, 6))
        return;
    const std::array<double, 3> n{v[4] * v[8] - v[5] * v[7], v[5] * v[6] - v[3] * v[8], v[3] * v[7] - v[4] * v[6]};
    const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (length < 0.5)
        return;  // not two perpendicular unit directions: no plane to go by
    position = {v[0], v[1], v[2]};
    normal = {n[0] / length, n[1] / length, n[2] / length};
    frameOfReferenceUid = id.frameOfReferenceUid;
    hasPlace = true;
}

QList<StudySummary> summarizeStudies(const QList<BlobInfo> &blobs)
{
    QHash<QString, StudySummary> studies;  // key: study UID + '\n' + patient ID
    QHash<QString, QSet<QString>> patientsPerStudy;
    QHash<QString, QMap<QString, int>> sexes;  // study key → each sex recorded → how many images record it
    QHash<QString, DicomIdentity> firstPatient;  // study key → the patient as the first image with each field names them
    QSet<QString> seen;                          // study keys whose first image was read
    for (const BlobInfo &b : blobs) {
        const DicomIdentity &id = b.dicom;
        if (!id.isValid())
            continue;
        patientsPerStudy[id.studyInstanceUid].insert(id.patientId);
        const QString studyKey = id.studyInstanceUid + QLatin1Char('\n') + id.patientId;
        StudySummary &s = studies[studyKey];
        if (s.instanceCount == 0) {
            DicomIdentity studyLevel = id;
            studyLevel.seriesInstanceUid.clear();
            studyLevel.seriesDescription.clear();
            studyLevel.bodyPartExamined.clear();
            studyLevel.viewPosition.clear();
            studyLevel.imageOrientation.clear();
            studyLevel.sliceThickness.clear();
            studyLevel.imagePosition.clear();
            studyLevel.frameOfReferenceUid.clear();
            studyLevel.seriesNumber = 0;
            studyLevel.modality.clear();
            studyLevel.sopInstanceUid.clear();
            studyLevel.sopClassUid.clear();
            studyLevel.instanceNumber = 0;
            s.identity = studyLevel;
        }
        ++s.instanceCount;
        s.bytes += b.size;
        if (const QString sex = id.patientSex.trimmed().toUpper(); !sex.isEmpty())
            ++sexes[studyKey][sex];
        // Every image names the same patient as the first (the sex apart: flagged, not refused).
        DicomIdentity patient = id;
        patient.patientSex.clear();
        DicomIdentity &first = firstPatient[studyKey];
        if (seen.contains(studyKey) && s.patientDisagreement.isEmpty())  // (a Patient ID may be empty: type 2)
            s.patientDisagreement = patientMismatch(first, patient);
        seen.insert(studyKey);
        for (auto field : {&DicomIdentity::patientId, &DicomIdentity::patientName, &DicomIdentity::patientBirthDate, &DicomIdentity::issuerOfPatientId}) {
            if ((first.*field).isEmpty())
                first.*field = id.*field;
        }
        auto series = std::find_if(s.series.begin(), s.series.end(),
                                   [&](const SeriesSummary &x) { return x.seriesInstanceUid == id.seriesInstanceUid; });
        if (series == s.series.end()) {
            SeriesSummary fresh;
            fresh.seriesInstanceUid = id.seriesInstanceUid;
            fresh.modality = id.modality;
            fresh.description = id.seriesDescription;
            fresh.bodyPart = id.bodyPartExamined;
            fresh.viewPosition = id.viewPosition;
            fresh.seriesNumber = id.seriesNumber;
            s.series << fresh;
            series = s.series.end() - 1;
        }
        series->instances << InstanceRef::of(b.key, id, b.size);
        // Each field from the first instance that records it (as the cache index counts series).
        if (series->bodyPart.isEmpty())
            series->bodyPart = id.bodyPartExamined;
        if (series->viewPosition.isEmpty())
            series->viewPosition = id.viewPosition;
        if (series->plane.isEmpty())
            series->plane = DicomIdentity::planeOf(id.imageOrientation, true);
        if (series->sliceThickness <= 0)
            series->sliceThickness = id.sliceThickness.toDouble();
    }

    QList<StudySummary> out;
    for (auto it = studies.begin(); it != studies.end(); ++it) {
        StudySummary s = it.value();
        s.identityConflict = patientsPerStudy.value(s.identity.studyInstanceUid).size() > 1;
        if (const QMap<QString, int> recorded = sexes.value(it.key()); recorded.size() > 1) {
            QStringList counts;
            for (auto r = recorded.begin(); r != recorded.end(); ++r)
                counts << (counts.isEmpty() ? QStringLiteral("%1 in %2 image%3").arg(r.key()).arg(r.value()).arg(r.value() == 1 ? QString() : QStringLiteral("s"))
                                            : QStringLiteral("%1 in %2").arg(r.key()).arg(r.value()));
            s.sexDisagreement = counts.join(QStringLiteral(", "));
            s.identity.patientSex.clear();  // not one sex: each image says its own
        }
        std::sort(s.series.begin(), s.series.end(), [](const SeriesSummary &a, const SeriesSummary &b) {
            return a.seriesNumber != b.seriesNumber ? a.seriesNumber < b.seriesNumber : a.seriesInstanceUid < b.seriesInstanceUid;
        });
        for (SeriesSummary &series : s.series) {
            std::sort(series.instances.begin(), series.instances.end(), [](const InstanceRef &a, const InstanceRef &b) {
                return a.instanceNumber != b.instanceNumber ? a.instanceNumber < b.instanceNumber : a.sopInstanceUid < b.sopInstanceUid;
            });
            if (!series.modality.isEmpty() && !s.modalities.contains(series.modality))
                s.modalities << series.modality;
        }
        out << s;
    }
    std::sort(out.begin(), out.end(), [](const StudySummary &a, const StudySummary &b) {
        const QString ka = a.identity.studyDate + a.identity.studyTime, kb = b.identity.studyDate + b.identity.studyTime;
        return ka != kb ? ka > kb : a.identity.studyInstanceUid < b.identity.studyInstanceUid;
    });
    return out;
}

ResultJob<QList<StudySummary>> *loadStudies(BlobStore *store, const QString &studyInstanceUid)
{
    BlobQuery q;
    q.studyInstanceUid = studyInstanceUid;
    // Summarising thousands of instances runs on the pool, off the GUI thread.
    return chainJob<QList<StudySummary>>(store->query(q), [](const QList<BlobInfo> &blobs, const CancelToken &) {
        return Result<QList<StudySummary>>(summarizeStudies(blobs));
    });
}

} // namespace spectrum
