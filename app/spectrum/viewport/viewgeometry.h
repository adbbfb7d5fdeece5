// SPDX-License-Identifier: Apache-2.0
#pragma once
// ViewGeometry: how an image lies in a pane — the reader's zoom, pan, quarter turns and flips over the image's
// extent (columns by rows, rows stretched by the pixel aspect) in a pane of a given size. A value, as QTransform
// is: ImageViewport::view() gives the one on screen, setView() shows another (`vp->setView(vp->view().rotated(1))`).
// Everything that maps between the image and the screen (painting, the cursor's pixel, findings, the scale bar)
// asks it, so the view has one definition.

#include <QPointF>
#include <QRectF>
#include <QSize>
#include <QTransform>

#include <optional>

namespace spectrum {

class ViewGeometry
{
public:
    /// The image's extent (none: no image) and the pane it is shown in: set by the viewport.
    void setExtent(int columns, int rows, double pixelAspect, QSizeF pane);
    bool hasExtent() const { return m_columns > 0 && m_rows > 0; }
    int columns() const { return m_columns; }
    int rows() const { return m_rows; }
    /// Row spacing over column spacing: the image's height is stretched by it.
    double aspect() const { return m_aspect; }
    QSizeF paneSize() const { return m_pane; }

    /// Zoom on top of fit-to-pane (1: the image fills the pane along its tighter side), 0.05…64.
    double zoom() const { return m_zoom; }
    ViewGeometry withZoom(double zoom) const;
    /// The image's centre's offset from the pane's centre, in screen pixels.
    QPointF pan() const { return m_pan; }
    ViewGeometry withPan(QPointF pan) const;
    /// 0, 90, 180 or 270: clockwise.
    int rotation() const { return m_quarterTurns * 90; }
    int quarterTurns() const { return m_quarterTurns; }
    bool isFlippedHorizontally() const { return m_flipH; }
    bool isFlippedVertically() const { return m_flipV; }

    /// Turned by `quarterTurns` more (clockwise for positive turns).
    ViewGeometry rotated(int quarterTurns) const;
    ViewGeometry flippedHorizontally() const;
    ViewGeometry flippedVertically() const;
    /// Zoom 1, centred (turns and flips kept).
    ViewGeometry fitted() const;
    /// One image pixel per screen pixel, centred.
    ViewGeometry atActualSize() const;
    /// Unrotated, unflipped, fitted, centred.
    ViewGeometry reset() const;
    /// A presentation state's orientation: flipped horizontally or not, then turned `quarterTurns` (never flipped
    /// vertically: a vertical flip is a horizontal one and a half turn).
    ViewGeometry oriented(int quarterTurns, bool flipHorizontally) const;
    /// `area` (image coordinates) scaled to fit the pane and centred, as a presentation state's SCALE TO FIT;
    /// none or empty: fitted().
    ViewGeometry fittingArea(const std::optional<QRectF> &area) const;

    /// Screen pixels per image column at zoom 1; 1 without an extent.
    double fitScale() const;
    /// Screen pixels per image column.
    double displayScale() const { return fitScale() * m_zoom; }
    /// Image coordinates → pane coordinates, as painted; the identity without an extent.
    QTransform imageToWidget() const;
    /// The pixel under a pane position, if any.
    std::optional<QPoint> pixelUnder(QPointF widgetPosition) const;
    /// The image's size on screen before the quarter turns: columns × scale by rows × scale × aspect.
    QSize sizeOnScreen() const;

private:
    int m_columns = 0;
    int m_rows = 0;
    double m_aspect = 1.0;
    QSizeF m_pane;
    double m_zoom = 1.0;
    QPointF m_pan;
    int m_quarterTurns = 0;  ///< 0…3, clockwise
    bool m_flipH = false;
    bool m_flipV = false;
};

} // namespace spectrum
