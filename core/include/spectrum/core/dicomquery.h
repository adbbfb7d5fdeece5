// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a radiologist searches an archive for, and what comes back — one shape for every kind of store
// (QIDO-RS over DICOMweb, C-FIND over DIMSE, the local cache), so that a registry can ask them all and merge.

#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/error.h"

#include <QDate>
#include <QList>
#include <QStringList>

namespace spectrum {

/// Patient: DIMSE only (patient root C-FIND); QIDO-RS has no patient resource.
enum class QueryLevel { Patient, Study, Series, Instance };

struct DicomQuery
{
    QueryLevel level = QueryLevel::Study;
    QString patientName;       ///< DICOM wildcards * and ? allowed ("DOE*"); empty: any
    QString patientId;
    QString accessionNumber;
    QString modality;          ///< study level: a modality in the study; below: the series' modality
    QString description;       ///< study level: study description; series level: series description
    QDate dateFrom;            ///< study date range, inclusive; a null date leaves that end open
    QDate dateTo;
    QString studyInstanceUid;  ///< series and instance level: within this study (instance level needs it)
    QString seriesInstanceUid; ///< instance level: within this series
    int instanceNumber = 0;    ///< instance level: only this Instance Number; 0: any
    int limit = 0;             ///< 0: the server's default
    int offset = 0;

    /// InvalidArgument for a query no store can answer (an instance query without its study, a reversed date
    /// range, a negative limit, characters that would break the request).
    Error validate() const;
    /// The DICOM date range ("20240101-20240131", "20240101-", "-20240131"), or empty.
    QString dicomDateRange() const;
    /// Whether a study matches at study level, by the rules an archive applies to C-FIND and QIDO: wildcards
    /// (* ?) in names, IDs, accession and description, case-insensitive; the date range; a modality among
    /// `modalitiesInStudy`. For searching what the workstation holds itself.
    bool matchesStudy(const DicomIdentity &study, const QStringList &modalitiesInStudy) const;

    /// A patient name as a person types it into a search field, as an archive is asked for it: a pattern with a
    /// wildcard of its own (* or ?) as it is; plain words ("demo", "Doe, John") as names holding the longest of
    /// them ("*john*"), to be matched again by nameMatchesTyped() — archives differ in case, accents and
    /// components, so what they answer is checked here by one rule.
    static QString nameQueryFor(const QString &typed);
    /// Whether `name` (DICOM PN) is what a person typing `typed` means. Plain words: each the start of a component
    /// of the name (family, given, middle…, in any of its groups), case- and accent-insensitive ("demo" finds
    /// DEMO^HEAD, "jose" finds José, "doe j" finds DOE^JOHN). A pattern with wildcards: DICOM's rules (matchesStudy).
    static bool nameMatchesTyped(const QString &typed, const QString &name);
};

struct DicomRecord
{
    QueryLevel level = QueryLevel::Study;
    DicomIdentity identity;          ///< the fields the level has; the others stay empty
    QStringList modalitiesInStudy;   ///< study level
    int relatedStudies = -1;         ///< patient level, when the server says (-1: unknown)
    int relatedSeries = -1;          ///< study level, when the server says (-1: unknown)
    int relatedInstances = -1;       ///< study and series level, when the server says
    QString retrieveUrl;             ///< DICOMweb: where WADO-RS fetches it
};

} // namespace spectrum
