// SPDX-License-Identifier: Apache-2.0
// Distance: two points dragged out; its length in mm.
#include "tools/toolkit.h"

namespace spectrum::tools {
namespace {

class DistanceTool final : public MeasurementTool
{
public:
    AnnotationKind kind() const override { return AnnotationKind::Distance; }
    QString name() const override { return tr("Distance"); }
    QString menuText() const override { return tr("&Distance"); }
    QString shortcut() const override { return QStringLiteral("D"); }
    int pointCount() const override { return 2; }
    Placement placement() const override { return Placement::Drag; }
    QList<ToolShape> shapes(const Annotation &a, bool) const override { return one(ToolShape::Type::Polyline, a.points); }
    QList<MeasuredValue> measure(const Annotation &a, const MeasureInput &in) const override
    {
        return {length(Quantity::Length, in.image.info, a.points[0], a.points[1])};
    }
    QList<ReportItem> reportItems(const Annotation &a) const override
    {
        return {ReportItem{ReportItem::Role::Measurement, Quantity::Length, shapes(a, false), true}};
    }
};

} // namespace
} // namespace spectrum::tools

const spectrum::MeasurementTool &makeDistanceTool()
{
    static const spectrum::tools::DistanceTool tool;
    return tool;
}
