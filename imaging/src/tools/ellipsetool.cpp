// SPDX-License-Identifier: Apache-2.0
// Ellipse ROI: the box it fills dragged out (axis-aligned); the area and the statistics of the modality values
// inside. Written as DICOM's ELLIPSE: the major axis' ends, then the minor axis'.
#include "tools/toolkit.h"

#include <QRectF>

#include <cmath>

namespace spectrum::tools {
namespace {

class EllipseTool final : public RegionTool
{
public:
    AnnotationKind kind() const override { return AnnotationKind::Ellipse; }
    QString name() const override { return tr("Ellipse"); }
    QString menuText() const override { return tr("&Ellipse ROI"); }
    QString shortcut() const override { return QStringLiteral("E"); }
    int pointCount() const override { return 2; }
    Placement placement() const override { return Placement::Drag; }
    QList<QPointF> outline(const Annotation &a, int ellipseSteps) const override
    {
        if (a.points.size() < 2)
            return a.points;
        const QRectF r = QRectF(a.points[0], a.points[1]).normalized();
        QList<QPointF> points;
        for (int i = 0; i < ellipseSteps; ++i) {
            const double t = 2 * M_PI * i / ellipseSteps;
            points << QPointF(r.center().x() + r.width() / 2 * std::cos(t), r.center().y() + r.height() / 2 * std::sin(t));
        }
        return points;
    }
    QList<ToolShape> shapes(const Annotation &a, bool) const override
    {
        if (a.points.size() < 2)
            return {};
        const QRectF r = QRectF(a.points[0], a.points[1]).normalized();
        const QPointF c = r.center();
        return one(ToolShape::Type::Ellipse,
                   r.width() >= r.height() ? QList<QPointF>{{r.left(), c.y()}, {r.right(), c.y()}, {c.x(), r.top()}, {c.x(), r.bottom()}}
                                           : QList<QPointF>{{c.x(), r.top()}, {c.x(), r.bottom()}, {r.left(), c.y()}, {r.right(), c.y()}});
    }

protected:
    RegionStatistics statistics(const Annotation &a, const DecodedImage &image, int frame) const override
    {
        return regionStatistics(image, frame, RegionShape::Ellipse, QRectF(a.points[0], a.points[1]));
    }
};

} // namespace
} // namespace spectrum::tools

const spectrum::MeasurementTool &makeEllipseTool()
{
    static const spectrum::tools::EllipseTool tool;
    return tool;
}
