// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the measurement tools share (private to imaging): lengths and angles on the image's geometry, the unit of
// its values, and the base of the region tools.

#include "spectrum/imaging/tools/measurementtool.h"
#include "spectrum/imaging/tools/measurements.h"

#include <QCoreApplication>

#include <utility>

namespace spectrum::tools {

inline QString tr(const char *text)
{
    return QCoreApplication::translate("spectrum::MeasurementTool", text);
}

/// A vector in mm (or pixels without Pixel Spacing), rows and columns each scaled by their spacing.
QPointF physical(const ImageInfo &info, QPointF v);
/// The angle between two vectors, 0–180°.
double angleBetween(QPointF u, QPointF v);
/// The length from `a` to `b` in mm, or in pixels without Pixel Spacing.
MeasuredValue length(Quantity q, const ImageInfo &info, QPointF a, QPointF b);
/// The unit of the modality values: UCUM and what is shown.
std::pair<QString, QString> valueUnit(const ImageInfo &info);
/// `points` with the first repeated at the end.
QList<QPointF> closed(QList<QPointF> points);

/// One shape of `type` through `points`.
inline QList<ToolShape> one(ToolShape::Type type, const QList<QPointF> &points)
{
    return {ToolShape{type, points}};
}

/// A tool enclosing a region: its statistics of the modality values, its outline drawn closed and written as an
/// image region with the values after it.
class RegionTool : public MeasurementTool
{
public:
    bool isRegion() const override { return true; }
    QList<ToolShape> shapes(const Annotation &a, bool drafting) const override;
    QList<MeasuredValue> measure(const Annotation &a, const MeasureInput &in) const override;
    QList<ReportItem> reportItems(const Annotation &a) const override;

protected:
    /// The statistics inside it (by default of its points as a polygon).
    virtual RegionStatistics statistics(const Annotation &a, const DecodedImage &image, int frame) const;
    /// Whether its outline stays open while it is drawn (a polygon or a trace not yet closed).
    virtual bool openWhileDrafted() const { return false; }
};

} // namespace spectrum::tools
