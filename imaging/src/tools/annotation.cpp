// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/tools/annotation.h"

#include "spectrum/imaging/tools/measurements.h"

#include <QCoreApplication>
#include <QRectF>

#include <cmath>

namespace spectrum {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("spectrum::Annotation", text);
}

/// A vector in mm (or pixels without Pixel Spacing), rows and columns each scaled by their spacing.
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

/// The unit of modality values: UCUM and what is shown.
std::pair<QString, QString> valueUnit(const ImageInfo &info)
{
    const QString shown = info.valueUnit();
    if (shown == QLatin1String("HU"))
        return {QStringLiteral("[hnsf'U]"), QStringLiteral("HU")};
    return {QStringLiteral("1"), shown};
}

} // namespace

ImageRef ImageRef::of(const ImageInfo &info)
{
    ImageRef r;
    r.studyInstanceUid = info.identity.studyInstanceUid;
    r.seriesInstanceUid = info.identity.seriesInstanceUid;
    r.sopClassUid = info.identity.sopClassUid;
    r.sopInstanceUid = info.identity.sopInstanceUid;
    r.frame = info.frames > 1 ? info.frameIndex + 1 : 0;
    return r;
}

int pointCount(AnnotationKind kind)
{
    switch (kind) {
    case AnnotationKind::Distance:
    case AnnotationKind::Rectangle:
    case AnnotationKind::Ellipse:
    case AnnotationKind::Arrow:
        return 2;
    case AnnotationKind::Angle:
        return 3;
    case AnnotationKind::CobbAngle:
    case AnnotationKind::Bidirectional:
        return 4;
    case AnnotationKind::Text:
    case AnnotationKind::Point:
        return 1;
    case AnnotationKind::Polygon:
    case AnnotationKind::Freehand:
        return -3;
    case AnnotationKind::Polyline:
        return -2;
    }
    return 0;
}

bool isWellFormed(const Annotation &a)
{
    const int n = pointCount(a.kind);
    if (n > 0 ? a.points.size() != n : a.points.size() < -n)
        return false;
    for (const QPointF &p : a.points)
        if (!std::isfinite(p.x()) || !std::isfinite(p.y()))
            return false;
    return true;
}

bool isRegion(AnnotationKind kind)
{
    return kind == AnnotationKind::Rectangle || kind == AnnotationKind::Ellipse || kind == AnnotationKind::Polygon
        || kind == AnnotationKind::Freehand;
}

QString kindName(AnnotationKind kind)
{
    switch (kind) {
    case AnnotationKind::Distance: return tr("Distance");
    case AnnotationKind::Rectangle: return tr("Rectangle");
    case AnnotationKind::Ellipse: return tr("Ellipse");
    case AnnotationKind::Angle: return tr("Angle");
    case AnnotationKind::CobbAngle: return tr("Cobb angle");
    case AnnotationKind::Bidirectional: return tr("Bidirectional");
    case AnnotationKind::Arrow: return tr("Arrow");
    case AnnotationKind::Text: return tr("Text");
    case AnnotationKind::Polygon: return tr("Polygon");
    case AnnotationKind::Freehand: return tr("Freehand");
    case AnnotationKind::Point: return tr("Point");
    case AnnotationKind::Polyline: return tr("Polyline");
    }
    return QString();
}

QString quantityName(Quantity q)
{
    switch (q) {
    case Quantity::Length: return tr("Length");
    case Quantity::LongAxis: return tr("Long axis");
    case Quantity::ShortAxis: return tr("Short axis");
    case Quantity::Angle: return tr("Angle");
    case Quantity::CobbAngle: return tr("Cobb angle");
    case Quantity::Area: return tr("Area");
    case Quantity::Mean: return tr("Mean");
    case Quantity::StandardDeviation: return tr("SD");
    case Quantity::Minimum: return tr("Min");
    case Quantity::Maximum: return tr("Max");
    case Quantity::Value: return tr("Value");
    }
    return QString();
}

QList<QPointF> outline(const Annotation &a, int ellipseSteps)
{
    if (a.points.size() < 2 || !isRegion(a.kind))
        return a.points;
    if (a.kind == AnnotationKind::Rectangle) {
        const QRectF r = QRectF(a.points[0], a.points[1]).normalized();
        return {r.topLeft(), r.topRight(), r.bottomRight(), r.bottomLeft()};
    }
    if (a.kind == AnnotationKind::Ellipse) {
        const QRectF r = QRectF(a.points[0], a.points[1]).normalized();
        QList<QPointF> points;
        for (int i = 0; i < ellipseSteps; ++i) {
            const double t = 2 * M_PI * i / ellipseSteps;
            points << QPointF(r.center().x() + r.width() / 2 * std::cos(t), r.center().y() + r.height() / 2 * std::sin(t));
        }
        return points;
    }
    return a.points;
}

Annotation bidirectionalFrom(QPointF longA, QPointF longB)
{
    const QPointF mid = (longA + longB) / 2, along = longB - longA;
    const QPointF normal(-along.y() / 4, along.x() / 4);  // a quarter of the long axis each side
    Annotation a;
    a.kind = AnnotationKind::Bidirectional;
    a.points = {longA, longB, mid - normal, mid + normal};
    return a;
}

Annotation withPointMoved(const Annotation &a, int index, QPointF to)
{
    Annotation moved = a;
    if (index < 0 || index >= a.points.size())
        return moved;
    if (a.kind != AnnotationKind::Bidirectional || a.points.size() != 4) {
        moved.points[index] = to;
        return moved;
    }
    const QPointF p0 = a.points[0], p1 = a.points[1];
    const QPointF axis = p1 - p0;
    const double length = std::hypot(axis.x(), axis.y());
    if (length <= 0) {
        moved.points[index] = to;
        return moved;
    }
    const QPointF u = axis / length, n(-u.y(), u.x());
    auto dot = [](QPointF x, QPointF y) { return x.x() * y.x() + x.y() * y.y(); };
    // Where the short axis crosses the long one (as a fraction of it), and how far each short end lies from it.
    const double t = dot(a.points[2] - p0, u) / length;
    const double dc = dot(a.points[2] - p0, n), dd = dot(a.points[3] - p0, n);
    if (index < 2) {
        moved.points[index] = to;
        const QPointF q0 = moved.points[0], q1 = moved.points[1];
        const QPointF axis2 = q1 - q0;
        const double length2 = std::hypot(axis2.x(), axis2.y());
        if (length2 <= 0)
            return moved;
        const QPointF u2 = axis2 / length2, n2(-u2.y(), u2.x());
        const QPointF centre = q0 + axis2 * t;
        moved.points[2] = centre + n2 * dc;
        moved.points[3] = centre + n2 * dd;
    } else {
        // A short-axis end slides along the perpendicular through the crossing.
        const QPointF centre = p0 + axis * t;
        moved.points[index] = centre + n * dot(to - centre, n);
    }
    return moved;
}

Annotation translated(const Annotation &a, QPointF delta)
{
    Annotation moved = a;
    for (QPointF &p : moved.points)
        p += delta;
    return moved;
}

QList<MeasuredValue> measure(const Annotation &a, const DecodedImage &image, int frame, int valueRows, const QByteArray &noValue)
{
    const int w = image.info.columns, h = image.info.rows;
    const bool masked = noValue.size() == qsizetype(w) * h;
    auto hasValue = [&](int x, int y) { return !masked || noValue[qsizetype(y) * w + x] == 0; };
    /// Whether every pixel of the box around `outline` holds a value (a region's statistics need them all).
    auto allValued = [&](const QList<QPointF> &outline) {
        if (!masked)
            return true;
        double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
        for (const QPointF &q : outline)
            x0 = std::min(x0, q.x()), y0 = std::min(y0, q.y()), x1 = std::max(x1, q.x()), y1 = std::max(y1, q.y());
        for (int y = std::max(0, int(std::floor(y0))); y <= std::min(h - 1, int(std::ceil(y1))); ++y)
            for (int x = std::max(0, int(std::floor(x0))); x <= std::min(w - 1, int(std::ceil(x1))); ++x)
                if (!hasValue(x, y))
                    return false;
        return true;
    };
    QList<MeasuredValue> values;
    if (!isWellFormed(a))
        return values;
    const ImageInfo &info = image.info;
    const QList<QPointF> &p = a.points;
    switch (a.kind) {
    case AnnotationKind::Distance:
        values << length(Quantity::Length, info, p[0], p[1]);
        break;
    case AnnotationKind::Polyline: {
        MeasuredValue total = length(Quantity::Length, info, p[0], p[1]);
        for (int i = 2; i < p.size(); ++i)
            total.value += length(Quantity::Length, info, p[i - 1], p[i]).value;
        values << total;
        break;
    }
    case AnnotationKind::Bidirectional:
        values << length(Quantity::LongAxis, info, p[0], p[1]) << length(Quantity::ShortAxis, info, p[2], p[3]);
        break;
    case AnnotationKind::Angle:
        values << MeasuredValue{Quantity::Angle, angleBetween(physical(info, p[0] - p[1]), physical(info, p[2] - p[1])), QStringLiteral("deg"),
                                QStringLiteral("°"), 0};
        break;
    case AnnotationKind::CobbAngle: {
        // The angle between the two lines, whichever way each was drawn: 0–90°.
        double angle = angleBetween(physical(info, p[1] - p[0]), physical(info, p[3] - p[2]));
        if (angle > 90)
            angle = 180 - angle;
        values << MeasuredValue{Quantity::CobbAngle, angle, QStringLiteral("deg"), QStringLiteral("°"), 0};
        break;
    }
    case AnnotationKind::Point: {
        const std::optional<QPoint> pixel = pixelAt(info, p[0]);
        if (pixel && !image.pixels.isNull() && (valueRows < 0 || pixel->y() < valueRows) && hasValue(pixel->x(), pixel->y())) {
            const auto [ucum, shown] = valueUnit(info);
            values << MeasuredValue{Quantity::Value, modalityValueAt(image, frame, *pixel), ucum, shown, 1};
        }
        break;
    }
    case AnnotationKind::Rectangle:
    case AnnotationKind::Ellipse:
    case AnnotationKind::Polygon:
    case AnnotationKind::Freehand: {
        RegionStatistics s;
        if (a.kind == AnnotationKind::Rectangle || a.kind == AnnotationKind::Ellipse)
            s = regionStatistics(image, frame, a.kind == AnnotationKind::Ellipse ? RegionShape::Ellipse : RegionShape::Rectangle, QRectF(p[0], p[1]));
        else
            s = regionStatistics(image, frame, p);
        values << (s.areaMm2 >= 0 ? MeasuredValue{Quantity::Area, s.areaMm2, QStringLiteral("mm2"), QStringLiteral("mm²"), 0}
                                  : MeasuredValue{Quantity::Area, s.areaPixels, QStringLiteral("{pixels}"), QStringLiteral("px²"), 0});
        double bottom = 0;
        for (const QPointF &q : outline(a))
            bottom = std::max(bottom, q.y());
        if (s.pixels == 0 || (valueRows >= 0 && bottom > valueRows) || !allValued(outline(a)))
            break;  // no pixel inside, rows not in yet (they read as zeros) or pixels without a value: the area alone
        const auto [ucum, shown] = valueUnit(info);
        values << MeasuredValue{Quantity::Mean, s.mean, ucum, shown, s.pixels}
               << MeasuredValue{Quantity::StandardDeviation, s.standardDeviation, ucum, shown, s.pixels}
               << MeasuredValue{Quantity::Minimum, s.minimum, ucum, shown, s.pixels}
               << MeasuredValue{Quantity::Maximum, s.maximum, ucum, shown, s.pixels};
        break;
    }
    case AnnotationKind::Arrow:
    case AnnotationKind::Text:
        break;
    }
    return values;
}

QString describeValues(const QList<MeasuredValue> &values, bool realValued)
{
    auto number = [realValued](const MeasuredValue &v, int decimals) {
        return realValued && v.unit != QLatin1String("mm") && v.unit != QLatin1String("mm2") && v.unit != QLatin1String("deg")
                   ? QString::number(v.value, 'g', 5)
                   : QString::number(v.value, 'f', decimals);
    };
    auto unit = [](const MeasuredValue &v) {
        return v.unitMeaning.isEmpty() ? QString() : (v.unitMeaning == QStringLiteral("°") ? v.unitMeaning : QLatin1Char(' ') + v.unitMeaning);
    };
    const MeasuredValue *mean = nullptr, *sd = nullptr, *mn = nullptr, *mx = nullptr, *area = nullptr;
    QStringList lines;
    for (const MeasuredValue &v : values) {
        switch (v.quantity) {
        case Quantity::Mean: mean = &v; break;
        case Quantity::StandardDeviation: sd = &v; break;
        case Quantity::Minimum: mn = &v; break;
        case Quantity::Maximum: mx = &v; break;
        case Quantity::Area: area = &v; break;
        case Quantity::Length:
            lines << number(v, 1) + unit(v);
            break;
        case Quantity::LongAxis:
        case Quantity::ShortAxis:
            lines << quantityName(v.quantity) + QLatin1Char(' ') + number(v, 1) + unit(v);
            break;
        case Quantity::Angle:
        case Quantity::CobbAngle:
            lines << (v.quantity == Quantity::CobbAngle ? quantityName(v.quantity) + QLatin1Char(' ') : QString()) + number(v, 1) + unit(v);
            break;
        case Quantity::Value:
            lines << number(v, 1) + unit(v);
            break;
        }
    }
    // Whatever a report gave of the statistics is shown, in the usual pairs where both are there.
    if (mean && sd)
        lines << tr("Mean %1 SD %2%3").arg(number(*mean, 1), number(*sd, 1), unit(*mean));
    else if (mean)
        lines << tr("Mean %1%2").arg(number(*mean, 1), unit(*mean));
    else if (sd)
        lines << tr("SD %1%2").arg(number(*sd, 1), unit(*sd));
    if (mn && mx)
        lines << tr("Min %1 Max %2").arg(number(*mn, 0), number(*mx, 0));
    else if (mn)
        lines << tr("Min %1").arg(number(*mn, 0));
    else if (mx)
        lines << tr("Max %1").arg(number(*mx, 0));
    if (area)
        lines << tr("Area %1").arg(number(*area, area->unit == QLatin1String("mm2") ? 1 : 0) + unit(*area));
    return lines.join(QLatin1Char('\n'));
}

} // namespace spectrum
