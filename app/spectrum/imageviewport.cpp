#include "imageviewport.h"

#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace spectrum {

ImageViewport::ImageViewport(QWidget *parent) : QWidget(parent)
{
    setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::StrongFocus);
    setMinimumSize(256, 256);
    setMouseTracking(false);
}

void ImageViewport::setImage(const DecodedImage &image, bool keepWindow)
{
    const bool firstImage = m_image.pixels.isNull();
    m_image = image;
    m_message.clear();
    if (!keepWindow || firstImage)
        m_window = defaultWindow(m_image);
    rerender();
}

void ImageViewport::clear(const QString &message)
{
    m_image = DecodedImage();
    m_rendered = QImage();
    m_message = message;
    update();
}

void ImageViewport::setWindow(const VoiWindow &window)
{
    VoiWindow w = window;
    w.width = std::max(1.0, w.width);
    if (w == m_window)
        return;
    m_window = w;
    rerender();
    Q_EMIT windowChanged(m_window);
}

void ImageViewport::setZoom(double zoom)
{
    m_zoom = std::clamp(zoom, 0.1, 32.0);
    update();
}

void ImageViewport::resetView()
{
    m_zoom = 1.0;
    m_pan = QPointF();
    if (hasImage())
        setWindow(defaultWindow(m_image));
    update();
}

void ImageViewport::setOverlay(const ViewportOverlay &overlay)
{
    m_overlay = overlay;
    update();
}

void ImageViewport::rerender()
{
    m_rendered = hasImage() ? renderFrame(m_image, 0, m_window) : QImage();
    update();
}

double ImageViewport::fitScale() const
{
    if (m_rendered.isNull())
        return 1.0;
    // Physical aspect: columns are columnSpacing apart, rows rowSpacing apart.
    const ImageInfo &info = m_image.info;
    const double aspect = info.rowSpacing > 0 && info.columnSpacing > 0 ? info.rowSpacing / info.columnSpacing : 1.0;
    return std::min(width() / double(m_rendered.width()), height() / (m_rendered.height() * aspect));
}

QString ImageViewport::windowText() const
{
    return tr("W %1  L %2").arg(m_window.width, 0, 'f', 0).arg(m_window.center, 0, 'f', 0);
}

void ImageViewport::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), Qt::black);
    if (!m_rendered.isNull()) {
        const ImageInfo &info = m_image.info;
        const double aspect = info.rowSpacing > 0 && info.columnSpacing > 0 ? info.rowSpacing / info.columnSpacing : 1.0;
        const double scale = fitScale() * m_zoom;
        const QSizeF size(m_rendered.width() * scale, m_rendered.height() * scale * aspect);
        const QRectF target(QPointF((width() - size.width()) / 2 + m_pan.x(), (height() - size.height()) / 2 + m_pan.y()), size);
        p.setRenderHint(QPainter::SmoothPixmapTransform, scale < 4);
        p.drawImage(target, m_rendered);
    }
    p.setRenderHint(QPainter::TextAntialiasing);
    QFont font = p.font();
    font.setPointSizeF(std::max(8.0, font.pointSizeF()));
    p.setFont(font);
    const QRect area = rect().adjusted(8, 6, -8, -6);
    auto text = [&](int flags, const QString &s) {
        p.setPen(QColor(0, 0, 0, 200));
        p.drawText(area.translated(1, 1), flags, s);
        p.setPen(QColor(235, 225, 140));
        p.drawText(area, flags, s);
    };
    if (!m_message.isEmpty() && !hasImage()) {
        text(Qt::AlignCenter, m_message);
        return;
    }
    if (!hasImage())
        return;
    text(Qt::AlignLeft | Qt::AlignTop, m_overlay.topLeft);
    text(Qt::AlignRight | Qt::AlignTop, m_overlay.topRight);
    text(Qt::AlignLeft | Qt::AlignBottom, m_overlay.bottomLeft);
    text(Qt::AlignRight | Qt::AlignBottom, windowText() + tr("\nZoom %1%").arg(std::lround(fitScale() * m_zoom * 100)));
}

void ImageViewport::mousePressEvent(QMouseEvent *event)
{
    m_dragButton = event->button();
    m_dragStart = event->position().toPoint();
    m_dragStartWindow = m_window;
    m_dragStartPan = m_pan;
    if (m_dragButton == Qt::RightButton)
        setCursor(Qt::SizeAllCursor);
    else if (m_dragButton == Qt::LeftButton || m_dragButton == Qt::MiddleButton)
        setCursor(Qt::ClosedHandCursor);
}

void ImageViewport::mouseMoveEvent(QMouseEvent *event)
{
    const QPoint d = event->position().toPoint() - m_dragStart;
    if (m_dragButton == Qt::RightButton && hasImage()) {
        // Sensitivity follows the window: fine control on narrow windows, fast on wide ones.
        const double perPixel = std::max(0.5, m_dragStartWindow.width / 256.0);
        setWindow(VoiWindow{m_dragStartWindow.center + d.y() * perPixel, m_dragStartWindow.width + d.x() * perPixel});
    } else if (m_dragButton == Qt::LeftButton || m_dragButton == Qt::MiddleButton) {
        m_pan = m_dragStartPan + d;
        update();
    }
}

void ImageViewport::mouseReleaseEvent(QMouseEvent *)
{
    m_dragButton = Qt::NoButton;
    unsetCursor();
}

void ImageViewport::wheelEvent(QWheelEvent *event)
{
    const int delta = event->angleDelta().y();
    if (event->modifiers() & Qt::ControlModifier) {
        setZoom(m_zoom * std::pow(1.0015, delta));
    } else {
        // One notch (120) is one slice; high-resolution wheels accumulate.
        m_wheelRemainder += delta;
        const int steps = m_wheelRemainder / 120;
        m_wheelRemainder -= steps * 120;
        if (steps != 0)
            Q_EMIT sliceStepRequested(-steps);  // wheel away from you: towards the next slice below
    }
    event->accept();
}

} // namespace spectrum
