// SPDX-License-Identifier: Apache-2.0
#include "tools/toolkit.h"

#include <algorithm>
#include <cmath>

namespace spectrum {

QList<QPointF> MeasurementTool::outline(const Annotation &a, int) const
{
    return a.points;
}

Annotation MeasurementTool::withPointMoved(const Annotation &a, int index, QPointF to) const
{
    Annotation moved = a;
    if (index >= 0 && index < a.points.size())
        moved.points[index] = to;
    return moved;
}

namespace tools {

QPointF physical(const ImageInfo &info, QPointF v)
{
    if (info.rowSpacing > 0 && info.columnSpacing > 0)
        return QPointF(v.x() * info.columnSpacing, v.y() * info.rowSpacing);
    return v;
}

double angleBetween(QPointF u, QPointF v)
{
    const double nu = std::hypot(u.x(), u.y()), nv = std::hypot(v.x(), v.y());
    if (nu <= 0 || nv <= 0)
        return 0;
    const double c = std::clamp((u.x() * v.x() + u.y() * v.y()) / (nu * nv), -1.0, 1.0);
    return std::acos(c) * 180.0 / M_PI;
}

MeasuredValue length(Quantity q, const ImageInfo &info, QPointF a, QPointF b)
{
    const double mm = distanceMm(info, a, b);
    if (mm >= 0)
        return MeasuredValue{q, mm, QStringLiteral("mm"), QStringLiteral("mm"), 0};
    return MeasuredValue{q, distancePixels(a, b), QStringLiteral("{pixels}"), QStringLiteral("px"), 0};
}

std::pair<QString, QString> valueUnit(const ImageInfo &info)
{
    const QString shown = info.valueUnit();
    if (shown == QLatin1String("HU"))
        return {QStringLiteral("[hnsf'U]"), QStringLiteral("HU")};
    return {QStringLiteral("1"), shown};
}

QList<QPointF> closed(QList<QPointF> points)
{
    if (!points.isEmpty())
        points << points.first();
    return points;
}

QList<ToolShape> RegionTool::shapes(const Annotation &a, bool drafting) const
{
    const QList<QPointF> o = outline(a);
    return one(ToolShape::Type::Polyline, drafting && openWhileDrafted() ? o : closed(o));
}

QList<MeasuredValue> RegionTool::measure(const Annotation &a, const MeasureInput &in) const
{
    const DecodedImage &image = in.image;
    const int w = image.info.columns, h = image.info.rows;
    const bool masked = in.noValue.size() == qsizetype(w) * h;
    const QList<QPointF> o = outline(a);
    // Whether every pixel of the box around the outline holds a value (the statistics need them all).
    auto allValued = [&] {
        if (!masked)
            return true;
        double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
        for (const QPointF &q : o)
            x0 = std::min(x0, q.x()), y0 = std::min(y0, q.y()), x1 = std::max(x1, q.x()), y1 = std::max(y1, q.y());
        for (int y = std::max(0, int(std::floor(y0))); y <= std::min(h - 1, int(std::ceil(y1))); ++y)
            for (int x = std::max(0, int(std::floor(x0))); x <= std::min(w - 1, int(std::ceil(x1))); ++x)
                if (in.noValue[qsizetype(y) * w + x] != 0)
                    return false;
        return true;
    };
    const RegionStatistics s = statistics(a, image, in.frame);
    QList<MeasuredValue> values;
    values << (s.areaMm2 >= 0 ? MeasuredValue{Quantity::Area, s.areaMm2, QStringLiteral("mm2"), QStringLiteral("mm²"), 0}
                              : MeasuredValue{Quantity::Area, s.areaPixels, QStringLiteral("{pixels}"), QStringLiteral("px²"), 0});
    double bottom = 0;
    for (const QPointF &q : o)
        bottom = std::max(bottom, q.y());
    if (s.pixels == 0 || (in.valueRows >= 0 && bottom > in.valueRows) || !allValued())
        return values;  // no pixel inside, rows not in yet (they read as zeros) or pixels without a value: the area alone
    const auto [ucum, shown] = valueUnit(image.info);
    values << MeasuredValue{Quantity::Mean, s.mean, ucum, shown, s.pixels}
           << MeasuredValue{Quantity::StandardDeviation, s.standardDeviation, ucum, shown, s.pixels}
           << MeasuredValue{Quantity::Minimum, s.minimum, ucum, shown, s.pixels}
           << MeasuredValue{Quantity::Maximum, s.maximum, ucum, shown, s.pixels};
    return values;
}

RegionStatistics RegionTool::statistics(const Annotation &a, const DecodedImage &image, int frame) const
{
    return regionStatistics(image, frame, a.points);
}

QList<ReportItem> RegionTool::reportItems(const Annotation &a) const
{
    return {ReportItem{ReportItem::Role::Region, Quantity::Area, presentationShapes(a), false}};
}

} // namespace tools
} // namespace spectrum
