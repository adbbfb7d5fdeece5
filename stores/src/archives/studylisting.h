// SPDX-License-Identifier: Apache-2.0
#pragma once
// Studies from what a store listed (private to stores): instance identities grouped into study records, and a
// study's series and instances put in reading order.

#include "spectrum/core/dicomquery.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QSet>

namespace spectrum {

/// Instances (as identities) grouped into study records, filtered by the query.
QList<DicomRecord> studiesFrom(const QList<DicomIdentity> &instances, const DicomQuery &q);

/// A study from the series and instances a store listed: series by Series Number, instances by Instance Number;
/// instances of another study, or without valid UIDs, left out; series without instances dropped.
StudySummary studyFrom(const QString &studyUid, const QList<DicomRecord> &seriesRecords, const QList<DicomIdentity> &instances);
/// Every instance key of `study`.
QSet<QString> keysOf(const StudySummary &study);

} // namespace spectrum
