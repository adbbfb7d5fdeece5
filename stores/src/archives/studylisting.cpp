// SPDX-License-Identifier: Apache-2.0
#include "archives/studylisting.h"

#include "spectrum/core/uid.h"

#include <QHash>
#include <QSet>

#include <algorithm>

namespace spectrum {

QList<DicomRecord> studiesFrom(const QList<DicomIdentity> &instances, const DicomQuery &q)
{
    QHash<QString, int> index;
    QList<DicomRecord> out;
    QHash<QString, QSet<QString>> series;
    for (const DicomIdentity &id : instances) {
        if (!id.isValid())
            continue;
        auto it = index.find(id.studyInstanceUid);
        if (it == index.end()) {
            DicomRecord r;
            r.level = QueryLevel::Study;
            r.identity = id;
            r.identity.seriesInstanceUid.clear();
            r.identity.sopInstanceUid.clear();
            r.identity.sopClassUid.clear();
            r.identity.seriesDescription.clear();
            r.identity.bodyPartExamined.clear();
            r.identity.viewPosition.clear();
            r.identity.imageOrientation.clear();
            r.identity.sliceThickness.clear();
            r.identity.imagePosition.clear();
            r.identity.frameOfReferenceUid.clear();
            r.identity.seriesNumber = r.identity.instanceNumber = 0;
            r.relatedInstances = 0;
            it = index.insert(id.studyInstanceUid, int(out.size()));
            out << r;
        }
        DicomRecord &r = out[*it];
        ++r.relatedInstances;
        if (!id.modality.isEmpty() && !r.modalitiesInStudy.contains(id.modality))
            r.modalitiesInStudy << id.modality;
        series[id.studyInstanceUid].insert(id.seriesInstanceUid);
    }
    QList<DicomRecord> kept;
    for (DicomRecord &r : out) {
        r.relatedSeries = int(series.value(r.identity.studyInstanceUid).size());
        if (q.matchesStudy(r.identity, r.modalitiesInStudy))
            kept << r;
    }
    return kept;
}

StudySummary studyFrom(const QString &studyUid, const QList<DicomRecord> &seriesRecords, const QList<DicomIdentity> &instances)
{
    StudySummary study;
    QHash<QString, int> seriesAt;
    for (const DicomRecord &r : seriesRecords) {
        SeriesSummary s;
        s.seriesInstanceUid = r.identity.seriesInstanceUid;
        s.modality = r.identity.modality;
        s.description = r.identity.seriesDescription;
        s.bodyPart = r.identity.bodyPartExamined;
        s.seriesNumber = r.identity.seriesNumber;
        s.listedInstances = r.relatedInstances;
        seriesAt.insert(s.seriesInstanceUid, int(study.series.size()));
        study.series << s;
        if (study.identity.studyInstanceUid.isEmpty())
            study.identity = r.identity;
    }
    for (const DicomIdentity &id : instances) {
        if (id.studyInstanceUid != studyUid && !id.studyInstanceUid.isEmpty())
            continue;
        if (!isValidUid(id.sopInstanceUid) || !isValidUid(id.seriesInstanceUid))
            continue;
        if (!seriesAt.contains(id.seriesInstanceUid)) {  // an instance whose series was not listed on its own
            SeriesSummary s;
            s.seriesInstanceUid = id.seriesInstanceUid;
            s.modality = id.modality;
            s.description = id.seriesDescription;
            s.bodyPart = id.bodyPartExamined;
            s.seriesNumber = id.seriesNumber;
            seriesAt.insert(s.seriesInstanceUid, int(study.series.size()));
            study.series << s;
        }
        SeriesSummary &s = study.series[seriesAt.value(id.seriesInstanceUid)];
        s.instances << InstanceRef::of(id.sopInstanceUid, id, 0);
        if (s.plane.isEmpty())  // when the archive's listing says (a DIMSE or blobd listing of full identities)
            s.plane = DicomIdentity::planeOf(id.imageOrientation, true);
        if (s.sliceThickness <= 0)
            s.sliceThickness = id.sliceThickness.toDouble();
        if (s.viewPosition.isEmpty())
            s.viewPosition = id.viewPosition;
        if (study.identity.patientId.isEmpty() && !id.patientId.isEmpty())
            study.identity = id;
        if (!study.modalities.contains(s.modality) && !s.modality.isEmpty())
            study.modalities << s.modality;
        ++study.instanceCount;
    }
    study.identity.studyInstanceUid = studyUid;
    study.identity.seriesInstanceUid.clear();
    study.identity.sopInstanceUid.clear();
    study.series.erase(std::remove_if(study.series.begin(), study.series.end(), [](const SeriesSummary &s) { return s.instances.isEmpty(); }),
                       study.series.end());
    std::stable_sort(study.series.begin(), study.series.end(), [](const SeriesSummary &a, const SeriesSummary &b) { return a.seriesNumber < b.seriesNumber; });
    for (SeriesSummary &s : study.series) {
        std::sort(s.instances.begin(), s.instances.end(), [](const InstanceRef &a, const InstanceRef &b) {
            return a.instanceNumber != b.instanceNumber ? a.instanceNumber < b.instanceNumber : a.sopInstanceUid < b.sopInstanceUid;
        });
        if (!study.modalities.contains(s.modality) && !s.modality.isEmpty())
            study.modalities << s.modality;
    }
    return study;
}

QSet<QString> keysOf(const StudySummary &study)
{
    QSet<QString> keys;
    keys.reserve(study.instanceCount);
    for (const SeriesSummary &s : study.series)
        for (const InstanceRef &i : s.instances)
            keys.insert(i.key);
    return keys;
}

} // namespace spectrum
