// SPDX-License-Identifier: Apache-2.0
// Rectangle ROI: two opposite corners dragged out; the area and the statistics of the modality values inside.
#include "tools/toolkit.h"

#include <QRectF>

namespace spectrum::tools {
namespace {

class RectangleTool final : public RegionTool
{
public:
    AnnotationKind kind() const override { return AnnotationKind::Rectangle; }
    QString name() const override { return tr("Rectangle"); }
    QString menuText() const override { return tr("&Rectangle ROI"); }
    QString shortcut() const override { return QStringLiteral("B"); }
    int pointCount() const override { return 2; }
    Placement placement() const override { return Placement::Drag; }
    QList<QPointF> outline(const Annotation &a, int) const override
    {
        if (a.points.size() < 2)
            return a.points;
        const QRectF r = QRectF(a.points[0], a.points[1]).normalized();
        return {r.topLeft(), r.topRight(), r.bottomRight(), r.bottomLeft()};
    }

protected:
    RegionStatistics statistics(const Annotation &a, const DecodedImage &image, int frame) const override
    {
        return regionStatistics(image, frame, RegionShape::Rectangle, QRectF(a.points[0], a.points[1]));
    }
};

} // namespace
} // namespace spectrum::tools

const spectrum::MeasurementTool &makeRectangleTool()
{
    static const spectrum::tools::RectangleTool tool;
    return tool;
}
