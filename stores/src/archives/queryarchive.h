// SPDX-License-Identifier: Apache-2.0
#pragma once
// QueryArchive: an archive searched by DICOM queries — QIDO-RS (DICOMweb) or C-FIND (DIMSE) — which lists a study
// and takes a first look at it the same way whichever protocol carries the queries. Private to stores.

#include "spectrum/stores/archives/archive.h"

namespace spectrum {

/// `records` of one `level` with each study (series, instance, patient) once — its first record, with what the
/// repeats add (modalities, counts when a repeat says them). `merged`: how many repeats were dropped.
QList<DicomRecord> mergeDuplicateRecords(const QList<DicomRecord> &records, QueryLevel level, int *merged = nullptr);

class QueryArchive : public Archive
{
    Q_OBJECT
public:
    using Archive::Archive;

    /// find(), with the records an archive repeats merged (mergeDuplicateRecords()).
    ResultJob<QList<DicomRecord>> *search(const DicomQuery &query) override { return track(finder()(query)); }
    /// Series first (descriptions, numbers), then every instance of the study.
    ResultJob<StudySummary> *list(const QString &studyUid) override;
    /// Two small queries: the study's series, then the one instance its first series (by Series Number) opens
    /// at — Instance Number n / 2 + 1 of its n. NotFound when the series has no such number.
    ResultJob<StudySummary> *firstLook(const QString &studyUid) override;

protected:
    /// One query, answered by the protocol.
    virtual ResultJob<QList<DicomRecord>> *find(const DicomQuery &query) = 0;

private:
    /// find(), for a job that may outlive this archive.
    std::function<ResultJob<QList<DicomRecord>> *(const DicomQuery &)> finder();
};

} // namespace spectrum
