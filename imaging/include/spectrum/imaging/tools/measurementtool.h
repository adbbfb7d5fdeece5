// SPDX-License-Identifier: Apache-2.0
#pragma once
// A measurement tool: one class per kind of finding (a distance, an angle, a region…) that knows all of it — how
// many points it takes and how a hand places them, the shapes it is drawn with, what it measures on the image's
// geometry and values, and how it is written into a DICOM Structured Report and a presentation state. The viewer
// draws and places any tool from this description; the document writers ask the tool. No GUI library.
//
// Adding a tool: its class in imaging/src/tools/<name>tool.cpp (a `make<Kind>Tool()` returning it, in the global
// namespace, where registry.cpp declares it) and its line in SPECTRUM_MEASUREMENT_TOOLS (annotation.h). See
// docs/ARCHITECTURE.md, "How to add…".

#include "spectrum/imaging/tools/annotation.h"

#include <QByteArray>
#include <QList>
#include <QPointF>
#include <QString>

#include <optional>

namespace spectrum {

/// How a reader's hand lays a tool's points on the image.
enum class Placement {
    Click,          ///< one click: the point
    Drag,           ///< press, drag, release: the two points
    DragThenClick,  ///< the first arm dragged out, then a click at the second arm's end (three points)
    TwoDrags,       ///< two lines, each dragged (four points)
    ClickToClose,   ///< vertices clicked; the first one clicked again, a double-click or Return closes it
    Trace,          ///< traced with the button held
    None,           ///< never drawn here: only read from other programs' documents
};

/// Whether a tool asks for words when it is placed.
enum class Words { None, Optional, Required };

/// A shape a finding is drawn with and written as, in image coordinates.
struct ToolShape
{
    enum class Type {
        Point,     ///< a marked point (drawn as a small cross)
        Polyline,  ///< a line through the points (closed when the last repeats the first)
        Arrow,     ///< a line with its head at the first point
        Ellipse,   ///< 4 points: the major axis' ends, then the minor axis' (as DICOM's ELLIPSE)
        Anchor,    ///< where the finding's words stand (not drawn; a GSPS text object, an SR point)
    };
    Type type = Type::Polyline;
    QList<QPointF> points;
};

/// One part of a finding in a TID 1500 report.
struct ReportItem
{
    enum class Role {
        Measurement,  ///< a NUM of `quantity`, inferred from the shapes (nothing when the value is missing …)
        Region,       ///< an image region (SCOORD), the finding's values after it
        Comment,      ///< the finding's words (or its kind's name), inferred from the shapes
    };
    Role role = Role::Measurement;
    Quantity quantity = Quantity::Length;
    QList<ToolShape> shapes;  ///< one type in an item
    bool regionWhenUnmeasured = false;  ///< … or, with this, the shapes as an image region
};

/// The image a finding is measured on: its values at `frame` (0-based), only over rows 0…`valueRows`−1 when given
/// (an image still arriving), `noValue` marking pixels that hold no value (one byte a pixel, when given).
struct MeasureInput
{
    const DecodedImage &image;
    int frame = 0;
    int valueRows = -1;
    const QByteArray &noValue;
};

class MeasurementTool
{
public:
    virtual ~MeasurementTool() = default;

    virtual AnnotationKind kind() const = 0;
    /// "Distance", "Cobb angle"… (translated).
    virtual QString name() const = 0;
    /// The Tools menu's entry ("&Distance") and its shortcut ("D", "Shift+A"; empty: none).
    virtual QString menuText() const = 0;
    virtual QString shortcut() const { return QString(); }
    /// How many points: exactly n, or (−n) at least n.
    virtual int pointCount() const = 0;
    virtual Placement placement() const = 0;
    virtual Words words() const { return Words::None; }
    /// Whether it encloses a region (statistics; SR TID 1410).
    virtual bool isRegion() const { return false; }
    /// Whether its points are handles a reader drags one by one (a freehand trace moves whole).
    virtual bool hasHandles() const { return true; }
    /// Whether its handles are drawn (a text's point is grabbed, not shown).
    virtual bool drawsHandles() const { return hasHandles(); }

    /// A region's outline as a closed polygon (an ellipse by `ellipseSteps` points); the points for the others.
    virtual QList<QPointF> outline(const Annotation &a, int ellipseSteps = 64) const;
    /// What it is drawn with; `drafting`: while being placed (a polygon still open).
    virtual QList<ToolShape> shapes(const Annotation &a, bool drafting = false) const = 0;
    /// The points the label stands beside.
    virtual QList<QPointF> labelPoints(const Annotation &a) const { return outline(a, 16); }
    /// Once the hand has placed it: the finding it makes (a bidirectional's short axis added).
    virtual Annotation placed(const Annotation &drawn) const { return drawn; }
    /// `a` with point `index` moved to `to`, as the kind allows.
    virtual Annotation withPointMoved(const Annotation &a, int index, QPointF to) const;

    // What follows takes a well-formed annotation of its kind (isWellFormed(): as many points as it needs).

    /// What it measures (lengths in mm, angles in degrees, modality values; annotation.h's measure()).
    virtual QList<MeasuredValue> measure(const Annotation &a, const MeasureInput &in) const = 0;

    /// How it is written into a TID 1500 report's measurement group.
    virtual QList<ReportItem> reportItems(const Annotation &a) const = 0;
    /// How it is written into a presentation state: its graphics, and Anchor shapes for its words.
    virtual QList<ToolShape> presentationShapes(const Annotation &a) const { return shapes(a); }
};

/// The tool of `kind`.
const MeasurementTool &measurementTool(AnnotationKind kind);
/// Every tool, in SPECTRUM_MEASUREMENT_TOOLS' order (the Tools menu's).
QList<const MeasurementTool *> measurementTools();
/// A kind's stable name, as in SPECTRUM_MEASUREMENT_TOOLS ("Distance", "CobbAngle"): what settings keep.
QString kindId(AnnotationKind kind);
std::optional<AnnotationKind> kindFromId(const QString &id);

} // namespace spectrum
