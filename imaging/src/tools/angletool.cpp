// SPDX-License-Identifier: Apache-2.0
// Angle: the first arm dragged out from its end to the vertex, then a click at the second arm's end; the angle at
// the vertex in degrees, on the image's geometry (its pixels' aspect taken into account).
#include "tools/toolkit.h"

namespace spectrum::tools {
namespace {

class AngleTool final : public MeasurementTool
{
public:
    AnnotationKind kind() const override { return AnnotationKind::Angle; }
    QString name() const override { return tr("Angle"); }
    QString menuText() const override { return tr("&Angle"); }
    QString shortcut() const override { return QStringLiteral("Shift+A"); }
    int pointCount() const override { return 3; }
    Placement placement() const override { return Placement::DragThenClick; }
    QList<ToolShape> shapes(const Annotation &a, bool) const override { return one(ToolShape::Type::Polyline, a.points); }
    QList<MeasuredValue> measure(const Annotation &a, const MeasureInput &in) const override
    {
        const QList<QPointF> &p = a.points;
        const ImageInfo &info = in.image.info;
        return {MeasuredValue{Quantity::Angle, angleBetween(physical(info, p[0] - p[1]), physical(info, p[2] - p[1])), QStringLiteral("deg"),
                              QStringLiteral("°"), 0}};
    }
    QList<ReportItem> reportItems(const Annotation &a) const override
    {
        return {ReportItem{ReportItem::Role::Measurement, Quantity::Angle, shapes(a, false), false}};
    }
};

} // namespace
} // namespace spectrum::tools

const spectrum::MeasurementTool &makeAngleTool()
{
    static const spectrum::tools::AngleTool tool;
    return tool;
}
