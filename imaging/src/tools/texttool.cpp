// SPDX-License-Identifier: Apache-2.0
// Text: words placed by a click where they stand; measures nothing.
#include "tools/toolkit.h"

namespace spectrum::tools {
namespace {

class TextTool final : public MeasurementTool
{
public:
    AnnotationKind kind() const override { return AnnotationKind::Text; }
    QString name() const override { return tr("Text"); }
    QString menuText() const override { return tr("&Text"); }
    QString shortcut() const override { return QStringLiteral("Shift+T"); }
    int pointCount() const override { return 1; }
    Placement placement() const override { return Placement::Click; }
    Words words() const override { return Words::Required; }
    bool drawsHandles() const override { return false; }
    QList<ToolShape> shapes(const Annotation &a, bool) const override { return one(ToolShape::Type::Anchor, a.points); }
    QList<MeasuredValue> measure(const Annotation &, const MeasureInput &) const override { return {}; }
    QList<ReportItem> reportItems(const Annotation &a) const override
    {
        return {ReportItem{ReportItem::Role::Comment, Quantity::Length, one(ToolShape::Type::Point, a.points), false}};
    }
};

} // namespace
} // namespace spectrum::tools

const spectrum::MeasurementTool &makeTextTool()
{
    static const spectrum::tools::TextTool tool;
    return tool;
}
