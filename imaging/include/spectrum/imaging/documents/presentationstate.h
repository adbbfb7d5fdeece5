// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a series was looked at, as a DICOM Grayscale Softcopy Presentation State (GSPS, PS3.3 A.33.1): the window,
// the part of the image shown (zoom and pan as the Displayed Area), rotation and flip, inversion, and the findings
// drawn as graphic annotations (in image pixels) — referencing the images it applies to. Written as a new instance
// of their study; read back from ours and other software's (DCMTK's dcmpsmk, PACS, Weasis).

#include "spectrum/core/bytes.h"
#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/result.h"
#include "spectrum/imaging/tools/annotation.h"

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

/// A window or a displayed area of a presentation state, and the images it is for (empty: every image of the state).
struct PresentationWindow
{
    QList<ImageRef> images;
    std::pair<double, double> window;    ///< centre and width, in modality units
};
struct PresentationArea
{
    QList<ImageRef> images;
    QRectF area;                         ///< in image coordinates, as PresentationView::displayedArea
};

/// The display shutter (PS3.3 C.7.6.11): what lies outside every shape given is covered in the shutter's grey.
struct PresentationShutter
{
    std::optional<QRectF> rectangle;     ///< in image coordinates
    std::optional<std::pair<QPointF, double>> circle;  ///< centre (image coordinates) and radius in pixels
    QList<QPointF> polygon;              ///< vertices in image coordinates (empty: none)
    double grey = 0;                     ///< 0 black … 1 white (Shutter Presentation Value / 65535)

    bool isEmpty() const { return !rectangle && !circle && polygon.size() < 3; }
    /// Whether the image point `p` is shown (inside every shape).
    bool shows(QPointF p) const;
};

/// An overlay plane the state carries (PS3.3 C.9.2), shown on the images it is for in its layer's grey.
struct PresentationOverlay
{
    QList<ImageRef> images;              ///< empty: every image of the state
    int rows = 0, columns = 0;
    QPointF origin;                      ///< its first pixel's corner, in image coordinates
    QByteArray bits;                     ///< one byte per pixel, row by row: 1 set, 0 not
    double grey = 1;                     ///< 0 black … 1 white
    QString label;
};

struct PresentationState
{
    DicomIdentity identity;              ///< the state's patient, study, series and instance
    QString label;
    QString description;
    QString creatorName;
    QString creationDateTime;            ///< YYYYMMDDHHMMSS
    QList<ImageRef> images;              ///< the images it applies to
    PresentationView view;               ///< rotation, flip and inversion for all of them; the first image's window and area
    QList<PresentationWindow> windows;   ///< each image's window (the images of each)
    QList<PresentationArea> areas;       ///< each image's displayed area
    std::optional<PresentationShutter> shutter;
    QList<PresentationOverlay> overlays;
    QHash<QString, QList<Annotation>> annotations;  ///< by SOP Instance UID (or "UID#frame")
    QStringList notShown;                ///< what it holds that the workstation does not apply, one line each

    /// Whether it applies to the image `sopInstanceUid` (frame `frame`, 1-based; 0 for a single-frame image).
    bool appliesTo(const QString &sopInstanceUid, int frame = 0) const;
    /// The view of one of its images: its own window and displayed area, the state's rotation, flip and inversion.
    PresentationView viewFor(const QString &sopInstanceUid, int frame = 0) const;
    /// Its overlays on one of its images.
    QList<PresentationOverlay> overlaysFor(const QString &sopInstanceUid, int frame = 0) const;
};

/// Reads a Grayscale Softcopy Presentation State. InvalidDicom when `bytes` are not one.
Result<PresentationState> readPresentationState(const ByteView &bytes);

/// The key a presentation state's annotations are kept under for an image (and frame).
QString presentationKey(const QString &sopInstanceUid, int frame);

} // namespace spectrum
