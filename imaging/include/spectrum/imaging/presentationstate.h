#pragma once
// How a series was looked at, as a DICOM Grayscale Softcopy Presentation State (GSPS, PS3.3 A.33.1): the window,
// the part of the image shown (zoom and pan as the Displayed Area), rotation and flip, inversion, and the findings
// drawn as graphic annotations (in image pixels) — referencing the images it applies to. Written as a new instance
// of their study; read back from ours and other software's (DCMTK's dcmpsmk, PACS, Weasis).

#include "spectrum/core/bytes.h"
#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/result.h"
#include "spectrum/imaging/annotation.h"

#include <QHash>
#include <QRectF>

#include <optional>

namespace spectrum {

struct PresentationView
{
    std::optional<std::pair<double, double>> window;  ///< centre and width, in modality units
    /// The part of the image shown, in image coordinates (measurements.h: (0, 0) the first pixel's corner):
    /// scaled to fit the viewport. None: the whole image.
    std::optional<QRectF> displayedArea;
    int rotation = 0;           ///< degrees clockwise, a multiple of 90, applied after the flip
    bool flipHorizontally = false;
    bool inverse = false;       ///< shown inverted (Presentation LUT Shape INVERSE)
};

struct PresentationStateRequest
{
    DicomIdentity study;                 ///< patient and study of the images
    QList<ImageRef> images;              ///< what it applies to (series and SOP classes given)
    int columns = 0, rows = 0;           ///< their size (the whole image is the displayed area when none is given)
    PresentationView view;
    QHash<QString, QList<Annotation>> annotations;  ///< by SOP Instance UID ("UID#frame" for a frame): drawn on it
    QHash<QString, QStringList> labels;  ///< the same keys: the values beside each annotation, as the reader saw them
    double rescaleSlope = 1, rescaleIntercept = 0;  ///< the images' Modality LUT, which the window is in
    QString rescaleType;                 ///< "HU" for CT
    QString contentLabel;                ///< CS (upper case, letters, digits, '_'); empty: "SPECTRUM_VIEW"
    QString description;
    QString creatorName;                 ///< DICOM PN
    QString seriesInstanceUid;           ///< empty: a new series
    int seriesNumber = 0;                ///< 0: 9003
};

/// A Part 10 Grayscale Softcopy Presentation State of `request`, with a new SOP Instance UID.
Result<QByteArray> writePresentationState(const PresentationStateRequest &request);

struct PresentationState
{
    DicomIdentity identity;              ///< the state's patient, study, series and instance
    QString label;
    QString description;
    QString creatorName;
    QString creationDateTime;            ///< YYYYMMDDHHMMSS
    QList<ImageRef> images;              ///< the images it applies to
    PresentationView view;               ///< for all of them (per-image windows and areas: the first's, noted below)
    QHash<QString, QList<Annotation>> annotations;  ///< by SOP Instance UID (or "UID#frame")
    QStringList notShown;                ///< what it holds that the workstation does not apply, one line each
};

/// Reads a Grayscale Softcopy Presentation State. InvalidDicom when `bytes` are not one.
Result<PresentationState> readPresentationState(const ByteView &bytes);

/// The key a presentation state's annotations are kept under for an image (and frame).
QString presentationKey(const QString &sopInstanceUid, int frame);

} // namespace spectrum
