#pragma once
// ImageViewport: one image on screen, with the radiologist's mouse: right-drag window/level, Ctrl+wheel zoom,
// left- or middle-drag pan, wheel to step through slices (reported, not handled here), and an overlay.

#include "spectrum/imaging/windowlevel.h"

#include <QWidget>

namespace spectrum {

struct ViewportOverlay
{
    QString topLeft;
    QString topRight;
    QString bottomLeft;
};

class ImageViewport : public QWidget
{
    Q_OBJECT
public:
    explicit ImageViewport(QWidget *parent = nullptr);

    /// Shows `image`. Keeps the current window if `keepWindow` (scrolling a stack), else uses its default.
    void setImage(const DecodedImage &image, bool keepWindow);
    void clear(const QString &message = QString());
    bool hasImage() const { return !m_image.pixels.isNull(); }

    VoiWindow window() const { return m_window; }
    void setWindow(const VoiWindow &window);
    double zoom() const { return m_zoom; }
    void setZoom(double zoom);
    void resetView();  ///< fit to the viewport, centred, the image's default window

    void setOverlay(const ViewportOverlay &overlay);
    /// The image as rendered with the current window, before scaling to the screen.
    QImage renderedImage() const { return m_rendered; }

Q_SIGNALS:
    /// The wheel asked for the next (+1) or previous (−1) slice.
    void sliceStepRequested(int step);
    void windowChanged(const spectrum::VoiWindow &window);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;

private:
    void rerender();
    double fitScale() const;
    QString windowText() const;

    DecodedImage m_image;
    QImage m_rendered;
    VoiWindow m_window;
    double m_zoom = 1.0;     ///< on top of fit-to-viewport
    QPointF m_pan;           ///< in screen pixels
    QPoint m_dragStart;
    Qt::MouseButton m_dragButton = Qt::NoButton;
    VoiWindow m_dragStartWindow;
    QPointF m_dragStartPan;
    int m_wheelRemainder = 0;
    ViewportOverlay m_overlay;
    QString m_message;
};

} // namespace spectrum
