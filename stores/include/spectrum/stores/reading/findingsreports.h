// SPDX-License-Identifier: Apache-2.0
#pragma once
// Findings drawn on a study's images, made into the DICOM objects that keep them: one Measurement Report (TID 1500,
// measurementreport.h) per study, the key images as a Key Object Selection (keyobjects.h), and the series in view as
// a presentation state (presentationstate.h). Each finding's values are measured here on the image as the cache holds it (at the
// finding's frame) — never on a filtered or half-received view —, so the report says what the archive's own
// pixels measure.

#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/resultjob.h"
#include "spectrum/imaging/documents/keyobjects.h"
#include "spectrum/imaging/documents/measurementreport.h"
#include "spectrum/imaging/documents/presentationstate.h"

#include <optional>

#include <QHash>

namespace spectrum {

class BlobStore;

/// The series in view and how it is shown, to be kept as a Grayscale Softcopy Presentation State.
struct ViewToSave
{
    QStringList instanceKeys;          ///< the series' instances (cache keys); those in the cache are referenced
    PresentationView view;
    QList<ReportedFinding> findings;   ///< every finding on those images, drawn as its graphics with its values
    int columns = 0, rows = 0;         ///< the images' size
    double rescaleSlope = 1, rescaleIntercept = 0;
    QString rescaleType;
    QString description;               ///< "CT Axial 1.25 mm, brain window"
};

struct FindingsToSave
{
    QList<ReportedFinding> findings;   ///< their images in the cache under their SOP Instance UIDs; values measured here
    QHash<QString, DicomIdentity> studies;  ///< patient and study of each Study Instance UID the findings lie in
    QString observerName;              ///< the reading physician (DICOM PN)
    QString seriesDescription;         ///< empty: "Spectrum findings"
    QList<ImageRef> keyImages;         ///< key images to save, as one Key Object Selection per study (none: no KOS)
    QString keyNote;                   ///< its note
    /// Key Object Selections these replace (their study, series, SOP class and instance): withdrawn by a rejection
    /// note per study (IHE IOCM, "Rejected for Quality Reasons"), so that an image unmarked here is no longer a key
    /// image anywhere the note goes.
    QList<ImageRef> replacedKeySelections;
    std::optional<ViewToSave> view;    ///< the series in view, as a presentation state (none: not kept)
};

struct SavedReport
{
    QString modality;                  ///< "SR" (a measurement report), "KO" (key images) or "PR" (the view)
    QString studyInstanceUid;
    QString sopInstanceUid;
    QByteArray bytes;                  ///< DICOM Part 10
    QStringList trackingUids;          ///< of the findings it carries
    std::optional<KeyObjectSelection> keys;  ///< a KO's content, as the workstation reads it back
};

/// One report per study for the findings, one Key Object Selection per study for the key images and one rejection note
/// per study for the selections they replace, on the pool (`cache` must read on any thread, as the FileStore does).
/// Fails when an image is not in the cache or a finding lies on an image of a study `studies` does not describe:
/// nothing is written then.
ResultJob<QList<SavedReport>> *makeMeasurementReports(BlobStore *cache, FindingsToSave what);

} // namespace spectrum
