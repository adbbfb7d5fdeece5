// SPDX-License-Identifier: Apache-2.0
#include "viewport/imageviewport.h"

// The view as a presentation state keeps it (presentationstate.h): the window, the part of the image shown, the
// rotation and flip, inversion — taken from the viewport and given back to it.

#include <QPainter>
#include <QPainterPath>

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
    const ViewGeometry g = view();
    const int turn = g.rotation();
    if (!g.isFlippedHorizontally() && !g.isFlippedVertically()) {
        v.rotation = turn;
    } else if (g.isFlippedHorizontally() && g.isFlippedVertically()) {
        v.rotation = (turn + 180) % 360;
    } else if (g.isFlippedHorizontally()) {
        v.flipHorizontally = true;
        v.rotation = (360 - turn) % 360;
    } else {
        v.flipHorizontally = true;
        v.rotation = (360 - (turn + 180) % 360) % 360;
    }
    // The part of the image the pane shows: its corners mapped back onto the image.
    bool invertible = false;
    const QTransform back = g.imageToWidget().inverted(&invertible);
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
    const int rotation = ((v.rotation % 360) + 360) % 360;
    const ViewGeometry oriented = view().oriented((v.flipHorizontally ? (360 - rotation) % 360 : rotation) / 90, v.flipHorizontally);
    m_inverted = v.inverse;
    if (v.window)
        m_window = withUsableWidth(VoiWindow{v.window->first, v.window->second});
    m_view = oriented.fittingArea(v.displayedArea);
    rerender();
    Q_EMIT windowChanged(m_window);
    Q_EMIT viewChanged();
}

void ImageViewport::setPresentationState(std::shared_ptr<const PresentationState> state, const QString &name)
{
    m_presentation = std::move(state);
    m_presentationName = name;
    m_presentationApplied = PresentationView();
    m_presentationOverlays.clear();
    m_overlayPictures.clear();
    for (const PresentationOverlay &o : m_presentation ? m_presentation->overlays : QList<PresentationOverlay>()) {
        // One bit a pixel, in the plane's grey where set, clear elsewhere.
        QImage picture(o.columns, o.rows, QImage::Format_MonoLSB);
        const int grey = int(std::lround(std::clamp(o.grey, 0.0, 1.0) * 255));
        picture.setColorTable({qRgba(0, 0, 0, 0), qRgba(grey, grey, grey, 255)});
        for (int y = 0; y < o.rows; ++y) {
            uchar *line = picture.scanLine(y);
            std::fill(line, line + picture.bytesPerLine(), uchar(0));
            for (int x = 0; x < o.columns; ++x)
                if (o.bits[y * o.columns + x])
                    line[x >> 3] |= uchar(1 << (x & 7));
        }
        m_overlayPictures << picture;
    }
    if (m_presentation && hasImage() && presentationApplies()) {
        const PresentationView v = m_presentation->viewFor(m_image.info.identity.sopInstanceUid, frameCount() > 1 ? m_frame + 1 : 0);
        applyPresentationView(v);  // the whole view: rotation, flip and inversion too
        m_presentationApplied = v;
        applyPresentationToImage();
    }
    update();
}

bool ImageViewport::presentationApplies() const
{
    return m_presentation && hasImage() && m_presentation->appliesTo(m_image.info.identity.sopInstanceUid, frameCount() > 1 ? m_frame + 1 : 0);
}

void ImageViewport::applyPresentationToImage()
{
    m_presentationOverlays.clear();
    if (!presentationApplies())
        return;
    const QString sop = m_image.info.identity.sopInstanceUid;
    const int frame = frameCount() > 1 ? m_frame + 1 : 0;
    const PresentationView v = m_presentation->viewFor(sop, frame);
    // This image's own window and area, when the state gives it another than the last image's: what the reader
    // set by hand stays while the state says nothing new.
    if (v.window && v.window != m_presentationApplied.window)
        m_window = withUsableWidth(VoiWindow{v.window->first, v.window->second});
    if (v.displayedArea != m_presentationApplied.displayedArea)
        m_view = view().fittingArea(v.displayedArea);
    m_presentationApplied = v;
    // Its overlays on this image, made into pictures once per state (setPresentationState).
    for (int i = 0; i < m_presentation->overlays.size() && i < m_overlayPictures.size(); ++i) {
        const PresentationOverlay &o = m_presentation->overlays[i];
        if (o.images.isEmpty() || std::any_of(o.images.begin(), o.images.end(), [&](const ImageRef &r) { return r.sopInstanceUid == sop && (r.frame == 0 || r.frame == frame); }))
            m_presentationOverlays << std::make_pair(QRectF(o.origin, QSizeF(o.columns, o.rows)), m_overlayPictures[i]);
    }
}

void ImageViewport::paintPresentation(QPainter &p, const QTransform &t)
{
    if (!presentationApplies())
        return;
    p.save();
    p.setTransform(t);
    for (const auto &[where, picture] : m_presentationOverlays)
        p.drawImage(where, picture);
    if (const std::optional<PresentationShutter> &shutter = m_presentation->shutter) {
        // Everything outside the shapes, in the shutter's grey (the pane around the image too: it is outside).
        const QRectF image(0, 0, m_image.info.columns, m_image.info.rows);
        QPainterPath shown;
        shown.addRect(shutter->rectangle ? shutter->rectangle->intersected(image) : image);
        if (shutter->circle) {
            QPainterPath circle;
            circle.addEllipse(shutter->circle->first, shutter->circle->second, shutter->circle->second);
            shown = shown.intersected(circle);
        }
        if (shutter->polygon.size() >= 3) {
            QPainterPath polygon;
            polygon.addPolygon(QPolygonF(QVector<QPointF>(shutter->polygon.begin(), shutter->polygon.end())));
            polygon.closeSubpath();
            shown = shown.intersected(polygon);
        }
        QPainterPath covered;
        covered.addRect(t.inverted().mapRect(QRectF(rect())).united(image));
        const int grey = int(std::lround(std::clamp(shutter->grey, 0.0, 1.0) * 255));
        p.fillPath(covered.subtracted(shown), QColor(grey, grey, grey));
    }
    p.restore();
}

} // namespace spectrum
