// SPDX-License-Identifier: Apache-2.0
// Polygon ROI: vertices clicked, closed by clicking the first again, a double-click or Return; the area and the
// statistics of the modality values inside.
#include "tools/toolkit.h"

namespace spectrum::tools {
namespace {

class PolygonTool final : public RegionTool
{
public:
    AnnotationKind kind() const override { return AnnotationKind::Polygon; }
    QString name() const override { return tr("Polygon"); }
    QString menuText() const override { return tr("Po&lygon ROI"); }
    QString shortcut() const override { return QStringLiteral("O"); }
    int pointCount() const override { return -3; }
    Placement placement() const override { return Placement::ClickToClose; }

protected:
    bool openWhileDrafted() const override { return true; }
};

} // namespace
} // namespace spectrum::tools

const spectrum::MeasurementTool &makePolygonTool()
{
    static const spectrum::tools::PolygonTool tool;
    return tool;
}
