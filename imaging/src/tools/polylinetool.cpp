// SPDX-License-Identifier: Apache-2.0
// Polyline: an open line through two or more points, read from other programs' reports (no hand draws it here);
// its length along the line.
#include "tools/toolkit.h"

namespace spectrum::tools {
namespace {

class PolylineTool final : public MeasurementTool
{
public:
    AnnotationKind kind() const override { return AnnotationKind::Polyline; }
    QString name() const override { return tr("Polyline"); }
    QString menuText() const override { return tr("Poly&line"); }
    int pointCount() const override { return -2; }
    Placement placement() const override { return Placement::None; }
    QList<ToolShape> shapes(const Annotation &a, bool) const override { return one(ToolShape::Type::Polyline, a.points); }
    QList<MeasuredValue> measure(const Annotation &a, const MeasureInput &in) const override
    {
        const QList<QPointF> &p = a.points;
        MeasuredValue total = length(Quantity::Length, in.image.info, p[0], p[1]);
        for (int i = 2; i < p.size(); ++i)
            total.value += length(Quantity::Length, in.image.info, p[i - 1], p[i]).value;
        return {total};
    }
    QList<ReportItem> reportItems(const Annotation &a) const override
    {
        return {ReportItem{ReportItem::Role::Measurement, Quantity::Length, shapes(a, false), true}};
    }
};

} // namespace
} // namespace spectrum::tools

const spectrum::MeasurementTool &makePolylineTool()
{
    static const spectrum::tools::PolylineTool tool;
    return tool;
}
