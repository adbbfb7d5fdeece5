// SPDX-License-Identifier: Apache-2.0
// Freehand ROI: traced with the button held, closed on release; the area and the statistics of the modality values
// inside. Moved whole, never point by point.
#include "tools/toolkit.h"

namespace spectrum::tools {
namespace {

class FreehandTool final : public RegionTool
{
public:
    AnnotationKind kind() const override { return AnnotationKind::Freehand; }
    QString name() const override { return tr("Freehand"); }
    QString menuText() const override { return tr("&Freehand ROI"); }
    QString shortcut() const override { return QStringLiteral("Shift+O"); }
    int pointCount() const override { return -3; }
    Placement placement() const override { return Placement::Trace; }
    bool hasHandles() const override { return false; }

protected:
    bool openWhileDrafted() const override { return true; }
};

} // namespace
} // namespace spectrum::tools

const spectrum::MeasurementTool &makeFreehandTool()
{
    static const spectrum::tools::FreehandTool tool;
    return tool;
}
