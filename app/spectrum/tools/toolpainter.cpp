// SPDX-License-Identifier: Apache-2.0
#include "tools/toolpainter.h"

#include "spectrum/imaging/tools/measurements.h"

#include <QPainter>
#include <QPen>
#include <QPolygonF>

#include <algorithm>
#include <cmath>

namespace spectrum::toolpainter {

namespace {

double segmentDistance(QPointF p, QPointF a, QPointF b)
{
    const QPointF d = b - a;
    const double l2 = d.x() * d.x() + d.y() * d.y();
    const double t = l2 > 0 ? std::clamp(((p.x() - a.x()) * d.x() + (p.y() - a.y()) * d.y()) / l2, 0.0, 1.0) : 0.0;
    return distancePixels(p, a + d * t);
}

/// The box an ELLIPSE's axis ends span (the ellipse is axis-aligned in the image).
QRectF ellipseBox(const QList<QPointF> &axes)
{
    double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
    for (const QPointF &q : axes)
        x0 = std::min(x0, q.x()), y0 = std::min(y0, q.y()), x1 = std::max(x1, q.x()), y1 = std::max(y1, q.y());
    return QRectF(QPointF(x0, y0), QPointF(x1, y1));
}

bool hasAnchor(const QList<ToolShape> &shapes)
{
    return std::any_of(shapes.begin(), shapes.end(), [](const ToolShape &s) { return s.type == ToolShape::Type::Anchor; });
}

} // namespace

void paint(QPainter &p, const Annotation &a, const QTransform &t, const QColor &colour, bool drafting)
{
    const MeasurementTool &tool = measurementTool(a.kind);
    QPen pen(colour);
    pen.setCosmetic(true);
    pen.setWidthF(1.5);
    p.setPen(pen);
    p.setBrush(Qt::NoBrush);
    for (const ToolShape &s : tool.shapes(a, drafting)) {
        switch (s.type) {
        case ToolShape::Type::Ellipse:
            // In image coordinates, so it turns and flips with the image.
            p.save();
            p.setTransform(t, true);
            p.drawEllipse(ellipseBox(s.points));
            p.restore();
            break;
        case ToolShape::Type::Point:
            for (const QPointF &q : s.points) {
                const QPointF c = t.map(q);
                p.drawLine(c - QPointF(6, 0), c + QPointF(6, 0));
                p.drawLine(c - QPointF(0, 6), c + QPointF(0, 6));
            }
            break;
        case ToolShape::Type::Polyline:
        case ToolShape::Type::Arrow: {
            QPolygonF line;
            for (const QPointF &q : s.points)
                line << t.map(q);
            p.drawPolyline(line);
            if (s.type == ToolShape::Type::Arrow && s.points.size() >= 2) {
                const QPointF tip = line[0], next = line[1];
                const double angle = std::atan2(next.y() - tip.y(), next.x() - tip.x());
                for (double side : {-0.45, 0.45})
                    p.drawLine(tip, tip + QPointF(std::cos(angle + side), std::sin(angle + side)) * 12);
            }
            break;
        }
        case ToolShape::Type::Anchor:
            break;  // the words stand there (the label)
        }
    }
    if (tool.drawsHandles())
        for (const QPointF &q : a.points)
            p.drawEllipse(t.map(q), 3.0, 3.0);
}

bool isNear(const Annotation &a, QPointF w, const QTransform &t, double lineRadius, double pointRadius)
{
    const MeasurementTool &tool = measurementTool(a.kind);
    for (const ToolShape &s : tool.shapes(a, false)) {
        QList<QPointF> line = s.points;
        switch (s.type) {
        case ToolShape::Type::Point:
        case ToolShape::Type::Anchor:
            if (!s.points.isEmpty() && distancePixels(t.map(s.points.first()), w) <= pointRadius)
                return true;
            continue;
        case ToolShape::Type::Ellipse:
            line = tool.outline(a);
            line << line.value(0);
            break;
        case ToolShape::Type::Polyline:
        case ToolShape::Type::Arrow:
            break;
        }
        for (int k = 1; k < line.size(); ++k)
            if (segmentDistance(w, t.map(line[k - 1]), t.map(line[k])) <= lineRadius)
                return true;
    }
    return false;
}

QRectF labelBox(const Annotation &a, const QTransform &t, QSizeF size, QSizeF widgetSize)
{
    const MeasurementTool &tool = measurementTool(a.kind);
    QRectF bounds;
    for (const QPointF &q : tool.labelPoints(a))
        bounds = bounds.isNull() ? QRectF(t.map(q), QSizeF(0.001, 0.001)) : bounds.united(QRectF(t.map(q), QSizeF(0.001, 0.001)));
    QPointF anchor = hasAnchor(tool.shapes(a, false)) ? bounds.topLeft() + QPointF(4, -size.height() / 2) : QPointF(bounds.right() + 8, bounds.top());
    if (anchor.x() + size.width() > widgetSize.width() - 4)
        anchor.setX(bounds.left() - 8 - size.width());
    anchor.setX(std::clamp(anchor.x(), 4.0, std::max(4.0, widgetSize.width() - 4 - size.width())));
    anchor.setY(std::clamp(anchor.y(), 4.0, std::max(4.0, widgetSize.height() - 4 - size.height())));
    return QRectF(anchor, size);
}

} // namespace spectrum::toolpainter
