// SPDX-License-Identifier: Apache-2.0
// Bidirectional (RECIST): the long axis of a lesion dragged out, the short axis across its middle made
// perpendicular, each end then moved by hand with the axes kept perpendicular; both lengths in mm.
#include "tools/toolkit.h"

#include <cmath>

namespace spectrum {

Annotation bidirectionalFrom(QPointF longA, QPointF longB)
{
    const QPointF mid = (longA + longB) / 2, along = longB - longA;
    const QPointF normal(-along.y() / 4, along.x() / 4);  // a quarter of the long axis each side
    Annotation a;
    a.kind = AnnotationKind::Bidirectional;
    a.points = {longA, longB, mid - normal, mid + normal};
    return a;
}

namespace tools {
namespace {

class BidirectionalTool final : public MeasurementTool
{
public:
    AnnotationKind kind() const override { return AnnotationKind::Bidirectional; }
    QString name() const override { return tr("Bidirectional"); }
    QString menuText() const override { return tr("&Bidirectional (long and short axis)"); }
    QString shortcut() const override { return QStringLiteral("Shift+D"); }
    int pointCount() const override { return 4; }
    Placement placement() const override { return Placement::Drag; }
    QList<ToolShape> shapes(const Annotation &a, bool) const override
    {
        const QList<QPointF> &p = a.points;
        if (p.size() != 4)
            return one(ToolShape::Type::Polyline, p);  // the long axis, while it is dragged
        return {ToolShape{ToolShape::Type::Polyline, {p[0], p[1]}}, ToolShape{ToolShape::Type::Polyline, {p[2], p[3]}}};
    }
    Annotation placed(const Annotation &drawn) const override
    {
        Annotation a = bidirectionalFrom(drawn.points.value(0), drawn.points.value(1));
        a.text = drawn.text;
        return a;
    }
    Annotation withPointMoved(const Annotation &a, int index, QPointF to) const override;
    QList<MeasuredValue> measure(const Annotation &a, const MeasureInput &in) const override
    {
        const QList<QPointF> &p = a.points;
        return {length(Quantity::LongAxis, in.image.info, p[0], p[1]), length(Quantity::ShortAxis, in.image.info, p[2], p[3])};
    }
    QList<ReportItem> reportItems(const Annotation &a) const override
    {
        const QList<QPointF> &p = a.points;
        return {ReportItem{ReportItem::Role::Measurement, Quantity::LongAxis, one(ToolShape::Type::Polyline, {p[0], p[1]}), false},
                ReportItem{ReportItem::Role::Measurement, Quantity::ShortAxis, one(ToolShape::Type::Polyline, {p[2], p[3]}), false}};
    }
};

Annotation BidirectionalTool::withPointMoved(const Annotation &a, int index, QPointF to) const
{
    Annotation moved = a;
    if (index < 0 || index >= a.points.size())
        return moved;
    if (a.points.size() != 4)
        return MeasurementTool::withPointMoved(a, index, to);
    const QPointF p0 = a.points[0], p1 = a.points[1];
    const QPointF axis = p1 - p0;
    const double length = std::hypot(axis.x(), axis.y());
    if (length <= 0)
        return MeasurementTool::withPointMoved(a, index, to);
    const QPointF u = axis / length, n(-u.y(), u.x());
    auto dot = [](QPointF x, QPointF y) { return x.x() * y.x() + x.y() * y.y(); };
    // Where the short axis crosses the long one (as a fraction of it), and how far each short end lies from it.
    const double t = dot(a.points[2] - p0, u) / length;
    const double dc = dot(a.points[2] - p0, n), dd = dot(a.points[3] - p0, n);
    if (index < 2) {
        moved.points[index] = to;
        const QPointF q0 = moved.points[0], q1 = moved.points[1];
        const QPointF axis2 = q1 - q0;
        const double length2 = std::hypot(axis2.x(), axis2.y());
        if (length2 <= 0)
            return moved;
        const QPointF u2 = axis2 / length2, n2(-u2.y(), u2.x());
        const QPointF centre = q0 + axis2 * t;
        moved.points[2] = centre + n2 * dc;
        moved.points[3] = centre + n2 * dd;
    } else {
        // A short-axis end slides along the perpendicular through the crossing.
        const QPointF centre = p0 + axis * t;
        moved.points[index] = centre + n * dot(to - centre, n);
    }
    return moved;
}

} // namespace
} // namespace tools
} // namespace spectrum

const spectrum::MeasurementTool &makeBidirectionalTool()
{
    static const spectrum::tools::BidirectionalTool tool;
    return tool;
}
