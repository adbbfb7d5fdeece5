// SPDX-License-Identifier: Apache-2.0
// Point value: one click; the modality value of the pixel there (HU for CT), none where the image holds no value.
#include "tools/toolkit.h"

namespace spectrum::tools {
namespace {

class PointTool final : public MeasurementTool
{
public:
    AnnotationKind kind() const override { return AnnotationKind::Point; }
    QString name() const override { return tr("Point"); }
    QString menuText() const override { return tr("Point &value"); }
    QString shortcut() const override { return QStringLiteral("Q"); }
    int pointCount() const override { return 1; }
    Placement placement() const override { return Placement::Click; }
    QList<ToolShape> shapes(const Annotation &a, bool) const override { return one(ToolShape::Type::Point, a.points); }
    QList<MeasuredValue> measure(const Annotation &a, const MeasureInput &in) const override
    {
        const DecodedImage &image = in.image;
        const std::optional<QPoint> pixel = pixelAt(image.info, a.points[0]);
        if (!pixel || image.pixels.isNull() || (in.valueRows >= 0 && pixel->y() >= in.valueRows))
            return {};
        if (in.noValue.size() == qsizetype(image.info.columns) * image.info.rows
            && in.noValue[qsizetype(pixel->y()) * image.info.columns + pixel->x()] != 0)
            return {};
        const auto [ucum, shown] = valueUnit(image.info);
        return {MeasuredValue{Quantity::Value, modalityValueAt(image, in.frame, *pixel), ucum, shown, 1}};
    }
    QList<ReportItem> reportItems(const Annotation &a) const override
    {
        return {ReportItem{ReportItem::Role::Measurement, Quantity::Value, shapes(a, false), true}};
    }
};

} // namespace
} // namespace spectrum::tools

const spectrum::MeasurementTool &makePointTool()
{
    static const spectrum::tools::PointTool tool;
    return tool;
}
