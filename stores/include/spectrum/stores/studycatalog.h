#pragma once
// From the blobs of a store to what a radiologist browses: studies, their series, the instances in order.

#include "spectrum/stores/blobstore.h"

namespace spectrum {

struct InstanceRef
{
    QString key;             ///< the blob holding it
    QString sopInstanceUid;
    int instanceNumber = 0;
    qint64 size = 0;
};

struct SeriesSummary
{
    QString seriesInstanceUid;
    QString modality;
    QString description;
    QString bodyPart;              ///< Body Part Examined, when recorded
    QString viewPosition;          ///< a projection's View Position ("PA", "LL"…), when recorded
    /// "Axial", "Coronal" or "Sagittal": the plane an instance's Image Orientation is nearest to (tilted or not);
    /// empty when not known (not recorded, or the archive's listing does not say).
    QString plane;
    double sliceThickness = 0;     ///< mm, from an instance; 0 when not known
    int seriesNumber = 0;
    QList<InstanceRef> instances;  ///< by Instance Number, then SOP Instance UID
};

struct StudySummary
{
    DicomIdentity identity;        ///< the study- and patient-level fields (series/instance fields empty)
    QStringList modalities;        ///< distinct, in series order
    int instanceCount = 0;
    qint64 bytes = 0;
    QList<SeriesSummary> series;   ///< by Series Number
    /// Another patient's blobs claim the same Study Instance UID. Such studies are listed apart, once per
    /// patient, and flagged: never merged.
    bool identityConflict = false;
};

/// Groups DICOM blobs into studies (one per Study Instance UID and Patient ID), newest study first.
/// Blobs without a DICOM identity are ignored.
QList<StudySummary> summarizeStudies(const QList<BlobInfo> &blobs);

/// A job that queries `store` for every DICOM blob (optionally of one study) and summarises them.
ResultJob<QList<StudySummary>> *loadStudies(BlobStore *store, const QString &studyInstanceUid = QString());

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::StudySummary)
