// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a radiologist draws on an image — a distance, an angle, a region, an arrow with a note — and the values it
// measures there, in the units the reader relies on: lengths in mm (from Pixel Spacing), angles in degrees, region
// statistics in modality units (HU for CT). The same model is drawn in the viewer, written as a DICOM Structured
// Report (measurementreport.h) and read back from one, ours or another program's.
//
// Points are image coordinates in pixels, as in measurements.h and as DICOM's SCOORD and GSPS PIXEL graphic data:
// (0, 0) is the top-left corner of the first pixel, its centre (0.5, 0.5).

#include "spectrum/imaging/codecs/dicomdecoder.h"

#include <QByteArray>

#include <QList>
#include <QMetaType>
#include <QPointF>
#include <QString>

namespace spectrum {

/// The measurement tools, one class each in imaging/src/tools/ (measurementtool.h): a distance, a bidirectional
/// (long and short axis, RECIST), an angle, a Cobb angle, the regions (rectangle, ellipse, polygon, freehand), the
/// value at a point, an arrow and a text with words, and the polyline read from other programs' reports. Adding a
/// tool: its file, and its line here. In the Tools menu's order.
#define SPECTRUM_MEASUREMENT_TOOLS(TOOL) \
    TOOL(Distance)                       \
    TOOL(Bidirectional)                  \
    TOOL(Angle)                          \
    TOOL(CobbAngle)                      \
    TOOL(Rectangle)                      \
    TOOL(Ellipse)                        \
    TOOL(Polygon)                        \
    TOOL(Freehand)                       \
    TOOL(Point)                          \
    TOOL(Arrow)                          \
    TOOL(Text)                           \
    TOOL(Polyline)

/// Which tool a finding is of: its name where findings are written and read (reports, presentation states).
enum class AnnotationKind {
#define SPECTRUM_ANNOTATION_KIND(kind) kind,
    SPECTRUM_MEASUREMENT_TOOLS(SPECTRUM_ANNOTATION_KIND)
#undef SPECTRUM_ANNOTATION_KIND
};

/// Which image, and which frame of it, an annotation lies on.
struct ImageRef
{
    QString studyInstanceUid;
    QString seriesInstanceUid;
    QString sopClassUid;
    QString sopInstanceUid;
    int frame = 0;  ///< 1-based frame number of a multi-frame image; 0 for a single-frame image

    /// The image `info` describes, at its frame (info.frameIndex) when it has several.
    static ImageRef of(const ImageInfo &info);
    bool sameImage(const ImageRef &o) const { return sopInstanceUid == o.sopInstanceUid && frame == o.frame; }
    bool operator==(const ImageRef &o) const
    {
        return studyInstanceUid == o.studyInstanceUid && seriesInstanceUid == o.seriesInstanceUid && sopClassUid == o.sopClassUid
            && sopInstanceUid == o.sopInstanceUid && frame == o.frame;
    }
};

struct Annotation
{
    AnnotationKind kind = AnnotationKind::Distance;
    QList<QPointF> points;  ///< image coordinates; how many: the tool's pointCount()
    QString text;           ///< an arrow's or text's words; for the others an optional label
    /// The finding's Tracking Unique Identifier: the same in every report that carries it (a measurement
    /// re-saved is the same finding, not a new one). Made when first saved.
    QString trackingUid;

    bool operator==(const Annotation &o) const { return kind == o.kind && points == o.points && text == o.text && trackingUid == o.trackingUid; }
};

// What follows asks the kind's tool (measurementtool.h).

/// How many points `kind` takes: exactly that many, or (−3, −2) at least 3 or 2 for polygons, freehand, polylines.
int pointCount(AnnotationKind kind);
/// Whether the annotation has the points its kind needs (and finite coordinates).
bool isWellFormed(const Annotation &a);
/// "Distance", "Cobb angle"…: for lists and the report's tracking identifiers.
QString kindName(AnnotationKind kind);
/// Whether `kind` encloses a region (rectangle, ellipse, polygon, freehand).
bool isRegion(AnnotationKind kind);
/// The outline of a region kind as a closed polygon in image coordinates (an ellipse by `ellipseSteps` points),
/// or the annotation's points for the other kinds.
QList<QPointF> outline(const Annotation &a, int ellipseSteps = 64);

/// A bidirectional measurement from its long axis: the short axis across its middle, perpendicular, half as long.
Annotation bidirectionalFrom(QPointF longA, QPointF longB);
/// `a` with point `index` moved to `to`, as the kind allows: a bidirectional's axes stay perpendicular (moving a
/// long-axis end turns and stretches the short axis with it; a short-axis end slides along its line).
Annotation withPointMoved(const Annotation &a, int index, QPointF to);
/// `a` moved by `delta`, whole.
Annotation translated(const Annotation &a, QPointF delta);

enum class Quantity { Length, LongAxis, ShortAxis, Angle, CobbAngle, Area, Mean, StandardDeviation, Minimum, Maximum, Value };

/// A measured value with its unit: `unit` is the UCUM code ("mm", "mm2", "deg", "[hnsf'U]", "1", "{pixels}"),
/// `unitMeaning` what the reader is shown ("mm", "mm²", "°", "HU", or the Rescale Type).
struct MeasuredValue
{
    Quantity quantity = Quantity::Length;
    double value = 0;
    QString unit;
    QString unitMeaning;
    qint64 pixels = 0;  ///< regions: how many pixel centres lie inside (not written; 0 when read back)

    bool operator==(const MeasuredValue &o) const
    {
        return quantity == o.quantity && value == o.value && unit == o.unit && unitMeaning == o.unitMeaning;
    }
};

/// "Length", "Mean"…
QString quantityName(Quantity q);

/// What `a` measures on `image` at `frame` (0-based): lengths in mm ({pixels} without Pixel Spacing), angles in
/// degrees (the image's aspect taken into account), region area and statistics of the modality values, the value
/// under a point. Nothing for arrows and text. Statistics only over rows 0…`valueRows`−1 when given (an image
/// still arriving): a region reaching further gets its area alone. `noValue` (one byte a pixel of the frame, when
/// given): pixels that hold no value (a reformatted plane's gaps) — no value under a point there, and a region that
/// touches one gets its area alone.
QList<MeasuredValue> measure(const Annotation &a, const DecodedImage &image, int frame, int valueRows = -1, const QByteArray &noValue = QByteArray());

/// The values as the overlay and the findings list show them: "42.1 mm", "Mean 41.2 SD 3.1 HU\nMin 35 Max 48\nArea
/// 120.4 mm²"…; significant digits for real-valued images (`realValued`).
QString describeValues(const QList<MeasuredValue> &values, bool realValued = false);

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::Annotation)
