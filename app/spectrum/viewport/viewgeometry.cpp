// SPDX-License-Identifier: Apache-2.0
#include "viewport/viewgeometry.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace spectrum {

void ViewGeometry::setExtent(int columns, int rows, double pixelAspect, QSizeF pane)
{
    m_columns = std::max(0, columns);
    m_rows = std::max(0, rows);
    m_aspect = pixelAspect > 0 && std::isfinite(pixelAspect) ? pixelAspect : 1.0;
    m_pane = pane;
}

ViewGeometry ViewGeometry::withZoom(double zoom) const
{
    ViewGeometry g = *this;
    g.m_zoom = std::clamp(zoom, 0.05, 64.0);
    return g;
}

ViewGeometry ViewGeometry::withPan(QPointF pan) const
{
    ViewGeometry g = *this;
    g.m_pan = pan;
    return g;
}

ViewGeometry ViewGeometry::rotated(int quarterTurns) const
{
    ViewGeometry g = *this;
    g.m_quarterTurns = ((m_quarterTurns + quarterTurns) % 4 + 4) % 4;
    return g;
}

ViewGeometry ViewGeometry::flippedHorizontally() const
{
    ViewGeometry g = *this;
    g.m_flipH = !m_flipH;
    return g;
}

ViewGeometry ViewGeometry::flippedVertically() const
{
    ViewGeometry g = *this;
    g.m_flipV = !m_flipV;
    return g;
}

ViewGeometry ViewGeometry::fitted() const
{
    ViewGeometry g = *this;
    g.m_zoom = 1.0;
    g.m_pan = QPointF();
    return g;
}

ViewGeometry ViewGeometry::atActualSize() const
{
    ViewGeometry g = fitted();
    g.m_zoom = 1.0 / fitScale();  // exactly 1:1, beyond the zoom's usual bounds if it must be
    return g;
}

ViewGeometry ViewGeometry::reset() const
{
    ViewGeometry g = fitted();
    g.m_quarterTurns = 0;
    g.m_flipH = g.m_flipV = false;
    return g;
}

ViewGeometry ViewGeometry::oriented(int quarterTurns, bool flipHorizontally) const
{
    ViewGeometry g = *this;
    g.m_quarterTurns = ((quarterTurns % 4) + 4) % 4;
    g.m_flipH = flipHorizontally;
    g.m_flipV = false;
    return g;
}

ViewGeometry ViewGeometry::fittingArea(const std::optional<QRectF> &area) const
{
    ViewGeometry g = fitted();
    if (!area || area->isEmpty())
        return g;
    // Scaled to fit: the area fills the pane along its tighter side, centred.
    double w = area->width() * fitScale(), h = area->height() * fitScale() * m_aspect;
    if (m_quarterTurns % 2)
        std::swap(w, h);
    g.m_zoom = std::clamp(std::min(m_pane.width() / w, m_pane.height() / h), 0.05, 64.0);
    const QPointF centre = g.imageToWidget().map(area->center());
    g.m_pan = QPointF(m_pane.width() / 2.0, m_pane.height() / 2.0) - centre;
    return g;
}

double ViewGeometry::fitScale() const
{
    if (!hasExtent())
        return 1.0;
    // The image's extent on screen at scale 1: columns × (rows × aspect), swapped by a quarter turn.
    double w = m_columns, h = m_rows * m_aspect;
    if (m_quarterTurns % 2)
        std::swap(w, h);
    return std::min(m_pane.width() / w, m_pane.height() / h);
}

QTransform ViewGeometry::imageToWidget() const
{
    if (!hasExtent())
        return QTransform();
    // Read from the last call up: centre the image on the origin, scale it (rows stretched by the aspect),
    // turn it, flip it on screen, and move it to the pane's centre plus the pan.
    const double s = displayScale();
    QTransform t;
    t.translate(m_pane.width() / 2.0 + m_pan.x(), m_pane.height() / 2.0 + m_pan.y());
    t.scale(m_flipH ? -1 : 1, m_flipV ? -1 : 1);
    t.rotate(90.0 * m_quarterTurns);
    t.scale(s, s * m_aspect);
    t.translate(-m_columns / 2.0, -m_rows / 2.0);
    return t;
}

std::optional<QPoint> ViewGeometry::pixelUnder(QPointF widgetPosition) const
{
    if (!hasExtent())
        return std::nullopt;
    bool invertible = false;
    const QTransform back = imageToWidget().inverted(&invertible);
    if (!invertible)
        return std::nullopt;
    const QPointF at = back.map(widgetPosition);
    const double x = std::floor(at.x()), y = std::floor(at.y());
    if (!(x >= 0 && y >= 0 && x < m_columns && y < m_rows))
        return std::nullopt;
    return QPoint(int(x), int(y));
}

QSize ViewGeometry::sizeOnScreen() const
{
    // Before the quarter turns (which keep it): columns × scale wide, rows × scale × aspect tall.
    const double s = displayScale();
    return QSize(std::max(1, int(std::lround(m_columns * s))), std::max(1, int(std::lround(m_rows * s * m_aspect))));
}

} // namespace spectrum
