// SPDX-License-Identifier: Apache-2.0
// Arrow: dragged from its tip to its tail, with words (optional) at the tail; measures nothing.
#include "tools/toolkit.h"

namespace spectrum::tools {
namespace {

class ArrowTool final : public MeasurementTool
{
public:
    AnnotationKind kind() const override { return AnnotationKind::Arrow; }
    QString name() const override { return tr("Arrow"); }
    QString menuText() const override { return tr("Arro&w with text"); }
    QString shortcut() const override { return QStringLiteral("W"); }
    int pointCount() const override { return 2; }
    Placement placement() const override { return Placement::Drag; }
    Words words() const override { return Words::Optional; }
    QList<ToolShape> shapes(const Annotation &a, bool) const override { return one(ToolShape::Type::Arrow, a.points); }
    QList<QPointF> labelPoints(const Annotation &a) const override { return {a.points.value(1)}; }
    QList<MeasuredValue> measure(const Annotation &, const MeasureInput &) const override { return {}; }
    QList<ReportItem> reportItems(const Annotation &a) const override
    {
        return {ReportItem{ReportItem::Role::Comment, Quantity::Length, one(ToolShape::Type::Polyline, a.points), false}};
    }
    QList<ToolShape> presentationShapes(const Annotation &a) const override
    {
        // The line to the tip, the words at the tail.
        return {ToolShape{ToolShape::Type::Polyline, a.points}, ToolShape{ToolShape::Type::Anchor, {a.points.value(1)}}};
    }
};

} // namespace
} // namespace spectrum::tools

const spectrum::MeasurementTool &makeArrowTool()
{
    static const spectrum::tools::ArrowTool tool;
    return tool;
}
