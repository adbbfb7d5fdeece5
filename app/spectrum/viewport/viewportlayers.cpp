// SPDX-License-Identifier: Apache-2.0
#include "viewport/viewportlayers.h"

#include <QPainter>
#include <QPen>
#include <QTransform>

#include <algorithm>
#include <cmath>

namespace spectrum {

void ViewportLayers::setOverlay(const ViewportOverlay &overlay)
{
    m_overlay = overlay;
    Q_EMIT changed();
}

void ViewportLayers::setModeText(const QString &text)
{
    if (text == m_modeText)
        return;
    m_modeText = text;
    Q_EMIT changed();
}

void ViewportLayers::setMasks(const QList<ViewportMask> &masks)
{
    if (masks.isEmpty() && m_masks.isEmpty())
        return;
    m_masks = masks;
    Q_EMIT changed();
}

void ViewportLayers::setMasksVisible(bool visible)
{
    m_masksVisible = visible;
    Q_EMIT changed();
}

void ViewportLayers::setReferenceLines(const QList<QLineF> &lines)
{
    if (lines == m_referenceLines)
        return;
    m_referenceLines = lines;
    Q_EMIT changed();
}

void ViewportLayers::setCrosshair(const std::optional<QPointF> &at)
{
    if (at == m_crosshair)
        return;
    m_crosshair = at;
    Q_EMIT changed();
}

void ViewportLayers::setCompleteness(double fraction)
{
    m_completeness = std::clamp(fraction, 0.0, 1.0);
    Q_EMIT changed();
}

void ViewportLayers::paintReferences(QPainter &p, const QTransform &t) const
{
    if (m_referenceLines.isEmpty() && !m_crosshair)
        return;
    p.save();
    p.setRenderHint(QPainter::Antialiasing);
    for (const QLineF &l : std::as_const(m_referenceLines)) {
        const QLineF on = t.map(l);
        p.setPen(QPen(QColor(0, 0, 0, 180), 3));
        p.drawLine(on);
        p.setPen(QPen(QColor(230, 200, 70), 1));
        p.drawLine(on);
    }
    if (m_crosshair) {
        // Four arms with a gap in the middle: the point itself stays visible.
        // On a screen pixel's centre: a one-pixel line between two pixels would be drawn as two faint ones.
        const QPointF exact = t.map(*m_crosshair);
        const QPointF c(std::floor(exact.x()) + 0.5, std::floor(exact.y()) + 0.5);
        const double gap = 6, arm = 18;
        for (const auto &[pen, width] : {std::pair{QColor(0, 0, 0, 200), 3}, std::pair{QColor(90, 230, 120), 1}}) {
            p.setPen(QPen(pen, width));
            p.drawLine(QPointF(c.x() - gap - arm, c.y()), QPointF(c.x() - gap, c.y()));
            p.drawLine(QPointF(c.x() + gap, c.y()), QPointF(c.x() + gap + arm, c.y()));
            p.drawLine(QPointF(c.x(), c.y() - gap - arm), QPointF(c.x(), c.y() - gap));
            p.drawLine(QPointF(c.x(), c.y() + gap), QPointF(c.x(), c.y() + gap + arm));
        }
    }
    p.restore();
}

} // namespace spectrum
