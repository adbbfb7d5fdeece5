#include "imageviewport.h"

// The view as a presentation state keeps it (presentationstate.h): the window, the part of the image shown, the
// rotation and flip, inversion — taken from the viewport and given back to it.

#include <cmath>

namespace spectrum {

PresentationView ImageViewport::presentationView() const
{
    PresentationView v;
    if (!hasImage())
        return v;
    v.window = std::make_pair(m_window.center, m_window.width);
    v.inverse = m_inverted;
    // Ours: the image turned, then flipped on screen. A presentation state's: flipped (horizontally only), then
    // turned — the same picture with the turn mirrored, a vertical flip being a horizontal one and a half turn.
    const int turn = m_quarterTurns * 90;
    if (!m_flipH && !m_flipV) {
        v.rotation = turn;
    } else if (m_flipH && m_flipV) {
        v.rotation = (turn + 180) % 360;
    } else if (m_flipH) {
        v.flipHorizontally = true;
        v.rotation = (360 - turn) % 360;
    } else {
        v.flipHorizontally = true;
        v.rotation = (360 - (turn + 180) % 360) % 360;
    }
    // The part of the image the pane shows: its corners mapped back onto the image.
    bool invertible = false;
    const QTransform back = imageToWidget().inverted(&invertible);
    if (invertible) {
        const QRectF shown = back.mapRect(QRectF(rect()));
        v.displayedArea = shown;
    }
    return v;
}

void ImageViewport::applyPresentationView(const PresentationView &v)
{
    if (!hasImage())
        return;
    m_flipV = false;
    m_flipH = v.flipHorizontally;
    const int rotation = ((v.rotation % 360) + 360) % 360;
    m_quarterTurns = (m_flipH ? (360 - rotation) % 360 : rotation) / 90;
    m_inverted = v.inverse;
    if (v.window)
        m_window = withUsableWidth(VoiWindow{v.window->first, v.window->second});
    m_zoom = 1.0;
    m_pan = QPointF();
    if (v.displayedArea && !v.displayedArea->isEmpty()) {
        // Scaled to fit: the area fills the pane along its tighter side, centred.
        const QRectF area = *v.displayedArea;
        double w = area.width() * fitScale(), h = area.height() * fitScale() * aspect();
        if (m_quarterTurns % 2)
            std::swap(w, h);
        m_zoom = std::clamp(std::min(width() / w, height() / h), 0.05, 64.0);
        const QPointF centre = imageToWidget().map(area.center());
        m_pan = QPointF(width() / 2.0, height() / 2.0) - centre;
    }
    rerender();
    Q_EMIT windowChanged(m_window);
    Q_EMIT viewChanged();
}

} // namespace spectrum
