// SPDX-License-Identifier: Apache-2.0
#include "viewer/paneoverlaytext.h"

#include <QObject>

namespace spectrum {

ViewportOverlay paneOverlayText(const StudySummary &study, const PanePlace &place, const ImageInfo *info)
{
    const DicomIdentity &id = study.identity;
    const SeriesSummary &series = study.series[place.series];
    ViewportOverlay o;
    // The patient as the image in view names them (the study's list may have been made from another instance);
    // where the two disagree, both are said.
    const DicomIdentity &own = info && !info->identity.patientId.isEmpty() ? info->identity : id;
    o.topLeft = QObject::tr("%1\nID %2\n%3  %4")
                    .arg(DicomIdentity::displayName(own.patientName), own.patientId,
                         DicomIdentity::displayDate(own.patientBirthDate), own.patientSex);
    if (!study.sexDisagreement.isEmpty())  // the images record the sex otherwise: this one's said, and that they differ
        o.topLeft += QObject::tr("\n⚠ sex differs: %1").arg(study.sexDisagreement);
    if (&own != &id && (own.patientId != id.patientId || DicomIdentity::displayName(own.patientName) != DicomIdentity::displayName(id.patientName)))
        o.topLeft += QObject::tr("\n⚠ the study is listed as %1, ID %2").arg(DicomIdentity::displayName(id.patientName), id.patientId);
    o.topRight = QObject::tr("%1\n%2\n%3 %4")
                     .arg(id.studyDescription, DicomIdentity::displayDate(id.studyDate), series.modality,
                          series.description);
    o.comparison = place.comparisonLabel;
    o.prior = place.prior;
    o.bottomLeft = QObject::tr("Im %1/%2").arg(place.slice + 1).arg(place.sliceCount);
    if (study.partial)  // laid out from what has come: the series is not whole yet, and its count says so
        o.bottomLeft += study.arriving > 0 ? QObject::tr(" so far (%n more of the study arriving)", nullptr, study.arriving)
                                           : QObject::tr(" so far");
    if (info && info->frames > 1) {
        o.bottomLeft += QObject::tr("  Fr %1/%2").arg(info->frameIndex + 1).arg(info->frames);
        if (const double ms = info->frameDurationMs(info->frameIndex); ms > 0)
            o.bottomLeft += QObject::tr("  (%1 ms)").arg(ms, 0, 'f', ms < 10 ? 1 : 0);
    }
    if (info && info->hasPosition) {
        o.bottomLeft += QObject::tr("\nPos %1 mm").arg(info->slicePositionAlongNormal(), 0, 'f', 1);
        if (info->sliceThickness > 0)  // a projection (a scout) has none: not "0.00"
            o.bottomLeft += QObject::tr("  Thk %1 mm").arg(info->sliceThickness, 0, 'f', 2);
    }
    if (info)
        o.bottomLeft += QObject::tr("\n%1 × %2").arg(info->columns).arg(info->rows);
    if (info)
        for (const QString &note : info->notes)
            o.bottomLeft += QObject::tr("\nNote: %1").arg(note);  // what the decoder did that the reader should know (no symbol: not every font has one)
    return o;
}

} // namespace spectrum
