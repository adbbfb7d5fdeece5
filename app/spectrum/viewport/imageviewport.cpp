// SPDX-License-Identifier: Apache-2.0
#include "viewport/imageviewport.h"
#include "viewport/displayimage.h"

#include <QApplication>

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QTextOption>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace spectrum {

ImageViewport::ImageViewport(QWidget *parent) : QWidget(parent)
{
    setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::StrongFocus);
    setMinimumSize(256, 256);
    setMouseTracking(true);  // the pixel value under the cursor
    m_layers = new ViewportLayers(this);
    connect(m_layers, &ViewportLayers::changed, this, qOverload<>(&QWidget::update));
    m_findingsLayer = new FindingsLayer(this);
}

void ImageViewport::setImage(const DecodedImage &image, bool keepWindow, const QString &key)
{
    setImage(image, image, QString(), keepWindow, key);
}

void ImageViewport::setImage(const DecodedImage &image, const DecodedImage &shown, const QString &filterNote, bool keepWindow,
                             const QString &key, int valueRows)
{
    const bool firstImage = !m_windowSet;
    m_windowSet = true;
    m_frame = std::clamp(m_frame, 0, std::max(0, image.info.frames - 1));
    if (key != m_key) {
        m_frame = 0;
        m_layers->setMasks({});  // another image: its own masks come from whoever knows them (never the last one's)
    }
    m_image = DecodedImage{image.info.frame(m_frame), image.pixels};
    m_shown = shown.pixels.isNull() ? image : shown;
    m_noValue.clear();
    m_noValueHatch = QImage();
    m_filterNote = filterNote;
    m_valueRows = valueRows < 0 ? image.info.rows : std::min(valueRows, image.info.rows);
    m_findingsLayer->imageChanged(key != m_key);
    m_key = key;
    m_message.clear();
    m_overlayWithoutImage = false;
    const std::optional<VoiWindow> given = std::exchange(m_nextWindow, std::nullopt);
    if (given)
        m_window = withUsableWidth(*given);
    else if (!keepWindow || firstImage)
        m_window = defaultWindow(m_image, m_frame);
    const VoiWindow before = m_window;
    if (m_presentation)
        applyPresentationToImage();  // a presentation state in use: this image's window, area, shutter, overlays
    rerender(std::exchange(m_nextRendered, std::nullopt));
    if (given || !(m_window == before))
        Q_EMIT windowChanged(m_window);
}

void ImageViewport::setFrame(int frame)
{
    if (!hasImage())
        return;
    frame = std::clamp(frame, 0, frameCount() - 1);
    if (frame == m_frame)
        return;
    m_frame = frame;
    m_image.info = m_image.info.frame(frame);  // its position, spacing, rescale and windows
    m_layers->setMasks({});
    m_findingsLayer->imageChanged(true);
    const VoiWindow before = m_window;
    if (m_presentation)
        applyPresentationToImage();
    rerender();
    if (!(m_window == before))
        Q_EMIT windowChanged(m_window);
    Q_EMIT frameChanged(frame);
}

void ImageViewport::setSmoothMagnification(bool smooth)
{
    if (smooth == m_smoothMagnify)
        return;
    m_smoothMagnify = smooth;
    update();
    Q_EMIT viewChanged();
}

void ImageViewport::clear(const QString &message, bool keepOverlay)
{
    m_overlayWithoutImage = keepOverlay;
    if (!keepOverlay)
        m_layers->setOverlay(ViewportOverlay());
    m_image = DecodedImage();
    m_shown = DecodedImage();
    m_frame = 0;
    m_layers->setMasks({});
    m_noValue.clear();
    m_noValueHatch = QImage();
    m_filterNote.clear();
    m_valueRows = 0;
    m_rendered = QImage();
    m_shrunk = QImage();
    m_paintable = QImage();
    m_message = message;
    m_findingsLayer->imageChanged(true);
    update();
}

VoiWindow ImageViewport::withUsableWidth(VoiWindow w) const
{
    // Integer samples: a width of at least 1 (PS3.3 C.11.2.1.2); real values may need a narrower one.
    w.width = std::max(m_image.pixels.format() == PixelFormat::Float64 ? 1e-9 : 1.0, w.width);
    return w;
}

void ImageViewport::setWindow(const VoiWindow &window)
{
    const VoiWindow w = withUsableWidth(window);
    if (w == m_window)
        return;
    m_window = w;
    rerender();
    Q_EMIT windowChanged(m_window);
}

void ImageViewport::applyPreset(int index)
{
    const QList<WindowPreset> &presets = ctWindowPresets();
    if (index >= 0 && index < presets.size() && hasImage())
        setWindow(VoiWindow{presets[index].center, presets[index].width});
}

void ImageViewport::autoWindowLevel()
{
    if (hasImage())
        setWindow(autoWindow(m_image, m_frame));
}

ViewGeometry ImageViewport::view() const
{
    ViewGeometry g = m_view;
    if (m_rendered.isNull())
        g.setExtent(0, 0, 1.0, size());
    else
        g.setExtent(m_image.info.columns, m_image.info.rows, m_image.info.pixelAspect(), size());
    return g;
}

void ImageViewport::setView(const ViewGeometry &view)
{
    m_view = view;
    update();
    Q_EMIT viewChanged();
}

void ImageViewport::setInverted(bool inverted)
{
    if (inverted == m_inverted)
        return;
    m_inverted = inverted;
    rerender();
    Q_EMIT viewChanged();
}

void ImageViewport::resetView()
{
    m_presentation.reset();  // the reader's own view from here
    m_presentationOverlays.clear();
    m_view = m_view.reset();
    const bool wasInverted = m_inverted;
    m_inverted = false;
    if (hasImage()) {
        const VoiWindow before = m_window;
        setWindow(defaultWindow(m_image, m_frame));
        if (wasInverted && before == m_window)
            rerender();
    }
    update();
    Q_EMIT viewChanged();
}

QString ImageViewport::pixelReadout() const
{
    if (!m_hover)
        return QString();
    const std::optional<QPoint> px = view().pixelUnder(*m_hover);
    if (!px)
        return QString();
    if (!valueKnown(px->y()))
        return tr("x %1 y %2  (not here yet)").arg(px->x()).arg(px->y());
    if (hasNoValue(*px))
        return tr("x %1 y %2  no value: %3").arg(px->x()).arg(px->y()).arg(m_noValueWhy);
    if (m_image.pixels.format() == PixelFormat::Rgb24) {  // colour: the three samples as stored
        const uchar *rgb = m_image.pixels.frameData(m_frame) + 3 * (qsizetype(px->y()) * m_image.pixels.width() + px->x());
        return tr("x %1 y %2  = R %3 G %4 B %5").arg(px->x()).arg(px->y()).arg(rgb[0]).arg(rgb[1]).arg(rgb[2]);
    }
    const double value = modalityValueAt(m_image, m_frame, *px);
    const QString unit = m_image.info.valueUnit();
    if (!std::isfinite(value))
        return tr("x %1 y %2  = no value (%3)").arg(px->x()).arg(px->y()).arg(std::isnan(value) ? QStringLiteral("NaN") : QStringLiteral("infinite"));
    // Whole values as such; others (dose, parametric maps, rescaled PET) to six significant digits.
    const QString shown = std::fabs(value - std::round(value)) < 1e-9 && std::fabs(value) < 1e15 ? QString::number(value, 'f', 0) : QString::number(value, 'g', 6);
    return tr("x %1 y %2  = %3%4").arg(px->x()).arg(px->y()).arg(shown)
        .arg(unit.isEmpty() ? QString() : QLatin1Char(' ') + unit);
}

void ImageViewport::setNoValue(const QByteArray &mask, const QString &why)
{
    const int w = m_image.info.columns, h = m_image.info.rows;
    m_noValue = mask.size() == qsizetype(w) * h ? mask : QByteArray();
    m_noValueWhy = why;
    m_noValueHatch = QImage();
    if (!m_noValue.isEmpty()) {
        // Dark amber stripes on black: unlike any anatomy in any window.
        m_noValueHatch = QImage(w, h, QImage::Format_ARGB32_Premultiplied);
        for (int y = 0; y < h; ++y) {
            auto *row = reinterpret_cast<QRgb *>(m_noValueHatch.scanLine(y));
            for (int x = 0; x < w; ++x)
                row[x] = m_noValue[qsizetype(y) * w + x] == 0 ? 0u : ((x + y) / 2) % 2 ? qRgb(96, 64, 0) : qRgb(0, 0, 0);
        }
    }
    m_findingsLayer->imageChanged(false);
    update();
}

bool ImageViewport::hasNoValue(QPoint pixel) const
{
    return !m_noValue.isEmpty() && pixel.x() >= 0 && pixel.y() >= 0 && pixel.x() < m_image.info.columns && pixel.y() < m_image.info.rows
        && m_noValue[qsizetype(pixel.y()) * m_image.info.columns + pixel.x()] != 0;
}

void ImageViewport::rerender(std::optional<PrerenderedFrame> ready)
{
    m_shrunk = QImage();
    m_paintable = QImage();
    // Rendered already off the GUI thread: taken only if it is exactly what would be rendered here — from these
    // very pixels, their first frame, unfiltered, not inverted, under the window it is shown with.
    const bool unfiltered = std::as_const(m_shown.pixels).frameData(0) == std::as_const(m_image.pixels).frameData(0);
    if (ready && hasImage() && ready->key == m_key && !m_key.isEmpty() && m_frame == 0 && unfiltered && !m_inverted
        && std::as_const(ready->source).frameData(0) == std::as_const(m_image.pixels).frameData(0)
        && ready->window == m_window && !ready->rendered.isNull()) {
        m_rendered = ready->rendered;
        m_paintable = ready->paintable;
        m_shrunk = ready->shrunk;  // used if it is the size painted (imageAsPainted), made again otherwise
        update();
        return;
    }
    // Shown with the image's rescale: the filters work on stored values, so the window in modality units
    // applies to what they make as it does to the original.
    m_rendered = hasImage() ? toQImage(renderFrame(DecodedImage{m_image.info, m_shown.pixels}, std::min(m_frame, m_shown.pixels.frames() - 1), m_window))
                            : QImage();
    m_framesRenderedHere += hasImage() ? 1 : 0;
    if (m_inverted && !m_rendered.isNull())
        m_rendered.invertPixels();
    update();
}

QString ImageViewport::windowText() const
{
    if (m_image.pixels.format() == PixelFormat::Float64 || m_window.width < 10)
        return tr("W %1  L %2").arg(QString::number(m_window.width, 'g', 4), QString::number(m_window.center, 'g', 4));
    return tr("W %1  L %2").arg(m_window.width, 0, 'f', 0).arg(m_window.center, 0, 'f', 0);
}

QImage ImageViewport::imageAsPainted() const
{
    if (m_rendered.isNull())
        return m_rendered;
    // Picking pixels to shrink would drop whole rows and columns — a wire, a fracture line —; each screen pixel gets
    // the mean of the area it covers, along each axis that shrinks. An axis that is magnified (the slice direction
    // of a plane with thick slices) keeps its pixels and is stretched when painted.
    const QSize onScreen = view().sizeOnScreen();
    const QSize averaged = averagedSize(m_rendered.size(), onScreen);
    if (averaged == m_rendered.size())
        return m_rendered;
    if (m_shrunk.size() != averaged)
        m_shrunk = shrinkByAreaAverage(m_rendered, averaged);
    // Still magnified along one axis: scaled when painted, from the scaler's own format, converted once.
    if (averaged != onScreen && m_shrunk.format() != QImage::Format_RGB32)
        m_shrunk = m_shrunk.convertToFormat(QImage::Format_RGB32);
    return m_shrunk;
}

void ImageViewport::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), Qt::black);
    if (!m_rendered.isNull()) {
        const QImage painted = imageAsPainted();
        const ViewGeometry g = view();
        const QTransform t = g.imageToWidget();
        p.save();
        if (painted.size() != m_rendered.size()) {
            // Shrunk along one axis or both: averaged to its size on screen there already, so copied 1:1 on whole
            // screen pixels — any resampling on the way (a half-pixel offset) would spread a thin line thinner
            // again. An axis still magnified is stretched to its size on screen as any magnified image is.
            const QRectF extent = t.mapRect(QRectF(0, 0, m_image.info.columns, m_image.info.rows));
            const bool turned = g.quarterTurns() % 2;
            const QSize target = g.sizeOnScreen();
            const double w = target.width(), h = target.height();
            QTransform u;
            u.translate(std::round(extent.left()) + (turned ? h : w) / 2.0, std::round(extent.top()) + (turned ? w : h) / 2.0);
            u.scale(g.isFlippedHorizontally() ? -1 : 1, g.isFlippedVertically() ? -1 : 1);
            u.rotate(g.rotation());
            u.translate(-w / 2.0, -h / 2.0);
            p.setTransform(u);
            if (painted.size() == target) {
                p.drawImage(QPointF(0, 0), painted);
            } else {
                p.setRenderHint(QPainter::SmoothPixmapTransform, m_smoothMagnify);
                p.drawImage(QRectF(0, 0, w, h), painted);
            }
        } else {
            // Magnified (or 1:1): smooth or pixel-exact, as the reader chose.
            p.setTransform(t);
            p.setRenderHint(QPainter::SmoothPixmapTransform, m_smoothMagnify);
            if (m_paintable.isNull())
                m_paintable = painted.convertToFormat(QImage::Format_RGB32);  // the same values, in the scaler's own format
            p.drawImage(QRectF(0, 0, m_image.info.columns, m_image.info.rows), m_paintable);
        }
        p.restore();
        if (m_layers->masksVisible() && !m_layers->masks().isEmpty()) {  // segmentations, pixel for pixel over the image
            p.save();
            p.setTransform(t);
            for (const ViewportMask &m : m_layers->masks())
                p.drawImage(QRectF(0, 0, m_image.info.columns, m_image.info.rows), m.image);
            p.restore();
        }
        if (!m_noValueHatch.isNull()) {  // pixels without a value, never shown as if they had one
            p.save();
            p.setTransform(t);
            p.drawImage(QRectF(0, 0, m_image.info.columns, m_image.info.rows), m_noValueHatch);
            p.restore();
        }
        paintPresentation(p, t);
        m_findingsLayer->paint(p);
        m_layers->paintReferences(p, t);
    }
    paintOverlay(p);
}

void ImageViewport::mousePressEvent(QMouseEvent *event)
{
    m_dragButton = event->button();
    m_dragStart = event->position().toPoint();
    m_dragStartWindow = m_window;
    m_dragStartPan = m_view.pan();
    if (m_dragButton == Qt::LeftButton && hasImage()) {
        bool invertible = false;
        const QPointF at = view().imageToWidget().inverted(&invertible).map(event->position());
        if (!invertible)
            return;
        if (m_findingsLayer->press(event->position(), at))
            return;
        if (m_tool.movesCrosshair()) {
            m_pickingCrosshair = true;
            Q_EMIT crosshairPicked(at);
            return;
        }
    }
    if (m_dragButton == Qt::RightButton)
        setCursor(Qt::SizeAllCursor);
    else if (m_dragButton == Qt::LeftButton || m_dragButton == Qt::MiddleButton)
        setCursor(Qt::ClosedHandCursor);
}

void ImageViewport::mouseMoveEvent(QMouseEvent *event)
{
    m_hover = event->position();
    const QPoint d = event->position().toPoint() - m_dragStart;
    if (m_pickingCrosshair && (event->buttons() & Qt::LeftButton)) {
        bool invertible = false;
        const QPointF at = view().imageToWidget().inverted(&invertible).map(event->position());
        if (invertible)
            Q_EMIT crosshairPicked(at);
    } else if (hasImage() && (m_dragButton == Qt::LeftButton || m_dragButton == Qt::NoButton)
               && m_findingsLayer->move(view().imageToWidget().inverted().map(event->position()), event->buttons() & Qt::LeftButton)) {
        update();
    } else if (m_dragButton == Qt::RightButton && hasImage()) {
        // Sensitivity follows the window: fine control on narrow windows, fast on wide ones.
        const double perPixel = m_image.pixels.format() == PixelFormat::Float64 ? m_dragStartWindow.width / 256.0
                                                                                : std::max(0.5, m_dragStartWindow.width / 256.0);
        setWindow(VoiWindow{m_dragStartWindow.center + d.y() * perPixel, m_dragStartWindow.width + d.x() * perPixel});
    } else if (m_dragButton == Qt::LeftButton || m_dragButton == Qt::MiddleButton) {
        m_view = m_view.withPan(m_dragStartPan + d);
        update();
    } else {
        update();  // the readout follows the cursor
    }
}

void ImageViewport::mouseReleaseEvent(QMouseEvent *event)
{
    m_pickingCrosshair = false;
    if (m_dragButton == Qt::LeftButton && hasImage() && m_findingsLayer->release(view().imageToWidget().inverted().map(event->position()))) {
        m_dragButton = Qt::NoButton;
        return;
    }
    if (m_dragButton == Qt::LeftButton || m_dragButton == Qt::MiddleButton)
        Q_EMIT viewChanged();
    const bool rightClick = m_dragButton == Qt::RightButton && event->button() == Qt::RightButton
                         && (event->position().toPoint() - m_dragStart).manhattanLength() < QApplication::startDragDistance();
    m_dragButton = Qt::NoButton;
    setCursor(m_tool.pans() ? Qt::ArrowCursor : Qt::CrossCursor);
    if (rightClick) {
        if (hasImage() && !(m_window == m_dragStartWindow))
            setWindow(m_dragStartWindow);  // a click is no window change
        Q_EMIT menuRequested(event->globalPosition().toPoint());
    }
}

void ImageViewport::mouseDoubleClickEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton || !hasImage())
        return QWidget::mouseDoubleClickEvent(event);
    if (!m_findingsLayer->doubleClick(event->position()))
        Q_EMIT doubleClicked();
}

void ImageViewport::keyPressEvent(QKeyEvent *event)
{
    if (!m_findingsLayer->keyPress(event))
        QWidget::keyPressEvent(event);
}

void ImageViewport::setTool(ViewportTool tool)
{
    m_tool = tool;
    m_findingsLayer->cancelDrawing();
    setCursor(tool.pans() ? Qt::ArrowCursor : Qt::CrossCursor);
}

void ImageViewport::leaveEvent(QEvent *event)
{
    m_hover.reset();
    update();
    QWidget::leaveEvent(event);
}

void ImageViewport::wheelEvent(QWheelEvent *event)
{
    // Some platforms turn a modified wheel sideways: either axis steps.
    const int delta = event->angleDelta().y() != 0 ? event->angleDelta().y() : event->angleDelta().x();
    if (event->modifiers() & Qt::ControlModifier) {
        setView(m_view.withZoom(m_view.zoom() * std::pow(1.0015, delta)));
    } else {
        // One notch (120) is one slice; high-resolution wheels accumulate.
        m_wheelRemainder += delta;
        const int steps = m_wheelRemainder / 120;
        m_wheelRemainder -= steps * 120;
        if (steps != 0)
            Q_EMIT sliceStepRequested(-steps, event->modifiers() & Qt::ShiftModifier);  // wheel away from you: towards the next slice below
    }
    event->accept();
}

} // namespace spectrum
