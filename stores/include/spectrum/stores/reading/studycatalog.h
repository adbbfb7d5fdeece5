// SPDX-License-Identifier: Apache-2.0
#pragma once
// From the blobs of a store to what a radiologist browses: studies, their series, the instances in order.

#include "spectrum/stores/blobs/blobstore.h"

#include <array>

namespace spectrum {

struct InstanceRef
{
    QString key;             ///< the blob holding it
    QString sopInstanceUid;
    int instanceNumber = 0;
    qint64 size = 0;
    /// Where the slice lies, when its header says (Image Position and Orientation (Patient) and the Frame of
    /// Reference, at the top level of the dataset): a linked pane finds its slice before any pixel is decoded.
    bool hasPlace = false;
    std::array<double, 3> position{};  ///< mm, the first pixel's centre
    std::array<double, 3> normal{};    ///< unit, row × column direction
    QString frameOfReferenceUid;

    /// The instance `id` in blob `key` of `size` bytes, placed by its header.
    static InstanceRef of(const QString &key, const DicomIdentity &id, qint64 size);
    /// Takes the place `id` gives (hasPlace stays false when it gives none, or a degenerate one).
    void placeBy(const DicomIdentity &id);
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
    /// How many instances the archive's series query said the series has (-1: not said). A first look lists one
    /// instance of a series and this says how many are coming.
    int listedInstances = -1;
    QList<InstanceRef> instances;  ///< by Instance Number, then SOP Instance UID
};

/// A series of documents, not images: Structured Reports, Key Object Selections, Presentation States.
inline bool isDocumentSeries(const SeriesSummary &s)
{
    return s.modality == QLatin1String("SR") || s.modality == QLatin1String("KO") || s.modality == QLatin1String("PR");
}

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
    /// The images record the patient's sex differently ("F in 2 images, M in 1"): the study opens, flagged — its
    /// identity's sex left empty, each image showing the sex it records and this beside it. Empty when they agree.
    QString sexDisagreement;
    /// The images of one Patient ID name the patient otherwise (another name, birth date or issuer): why, in words.
    /// Such a study is not shown — one screen would mix what may be two people. Empty when they agree.
    QString patientDisagreement;
    /// Laid out from the instances that have come so far, while the study streams in before it is listed
    /// (StudyStreamer::laidOut()): its series hold only those, and `arriving` more of the study are on their way
    /// (0 when the archive did not say how many it holds). False for a study as listed.
    bool partial = false;
    int arriving = 0;
};

/// Groups DICOM blobs into studies (one per Study Instance UID and Patient ID), newest study first.
/// Blobs without a DICOM identity are ignored.
QList<StudySummary> summarizeStudies(const QList<BlobInfo> &blobs);

/// A job that queries `store` for every DICOM blob (optionally of one study) and summarises them.
ResultJob<QList<StudySummary>> *loadStudies(BlobStore *store, const QString &studyInstanceUid = QString());

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::StudySummary)
