// SPDX-License-Identifier: Apache-2.0
// Cobb angle: two lines, each dragged (along two vertebral end plates); the angle between them, 0–90°, whichever
// way each was drawn.
#include "tools/toolkit.h"

namespace spectrum::tools {
namespace {

class CobbAngleTool final : public MeasurementTool
{
public:
    AnnotationKind kind() const override { return AnnotationKind::CobbAngle; }
    QString name() const override { return tr("Cobb angle"); }
    QString menuText() const override { return tr("C&obb angle"); }
    QString shortcut() const override { return QStringLiteral("Shift+C"); }
    int pointCount() const override { return 4; }
    Placement placement() const override { return Placement::TwoDrags; }
    QList<ToolShape> shapes(const Annotation &a, bool) const override
    {
        const QList<QPointF> &p = a.points;
        if (p.size() != 4)
            return one(ToolShape::Type::Polyline, p);  // the first line, while the second is to come
        return {ToolShape{ToolShape::Type::Polyline, {p[0], p[1]}}, ToolShape{ToolShape::Type::Polyline, {p[2], p[3]}}};
    }
    QList<MeasuredValue> measure(const Annotation &a, const MeasureInput &in) const override
    {
        const QList<QPointF> &p = a.points;
        double angle = angleBetween(physical(in.image.info, p[1] - p[0]), physical(in.image.info, p[3] - p[2]));
        if (angle > 90)
            angle = 180 - angle;
        return {MeasuredValue{Quantity::CobbAngle, angle, QStringLiteral("deg"), QStringLiteral("°"), 0}};
    }
    QList<ReportItem> reportItems(const Annotation &a) const override
    {
        return {ReportItem{ReportItem::Role::Measurement, Quantity::CobbAngle, shapes(a, false), false}};
    }
};

} // namespace
} // namespace spectrum::tools

const spectrum::MeasurementTool &makeCobbAngleTool()
{
    static const spectrum::tools::CobbAngleTool tool;
    return tool;
}
