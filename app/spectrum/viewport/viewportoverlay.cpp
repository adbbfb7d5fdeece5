// SPDX-License-Identifier: Apache-2.0
#include "viewport/imageviewport.h"
#include "viewport/outlinedtext.h"
#include "viewport/overlaylayout.h"

// The viewport's annotations, drawn over the image: the overlay's corner texts, the badge and the filter banner,
// the orientation letters at the image's edges and the scale bar, reference lines and the crosshair (the findings
// are drawn by viewportannotations.cpp). All text is outlined, legible on bright images as on dark ones.

#include <QPainter>
#include <QTextOption>

#include <algorithm>
#include <cmath>

namespace spectrum {

namespace {
const QColor kOverlayText(235, 225, 140);
} // namespace

QString patientDirectionLabel(const std::array<double, 3> &v)
{
    // L, P, H along +x, +y, +z of the patient coordinate system (LPS); the strongest component first, and any
    // other that counts (obliques read "LA", "HFP"…).
    const char positive[3] = {'L', 'P', 'H'}, negative[3] = {'R', 'A', 'F'};
    std::array<int, 3> order{0, 1, 2};
    std::sort(order.begin(), order.end(), [&v](int a, int b) { return std::abs(v[size_t(a)]) > std::abs(v[size_t(b)]); });
    QString label;
    const double strongest = std::abs(v[size_t(order[0])]);
    for (int axis : order) {
        const double c = v[size_t(axis)];
        if (strongest > 0 && std::abs(c) >= 0.25 * strongest && std::abs(c) > 1e-3)
            label += QLatin1Char(c > 0 ? positive[axis] : negative[axis]);
    }
    return label;
}

ImageViewport::ScreenDirections ImageViewport::screenDirections() const
{
    ScreenDirections d;
    const ImageInfo &info = m_image.info;
    if (!hasImage() || !info.hasPosition)
        return d;
    bool invertible = false;
    const QTransform back = view().imageToWidget().inverted(&invertible);
    if (!invertible)
        return d;
    // A step right (and down) on screen in image columns and rows, then in the patient: rows run along the row
    // direction cosines, columns along the column ones.
    auto patient = [&](QPointF screenStep) {
        const QPointF step = back.map(screenStep) - back.map(QPointF(0, 0));
        std::array<double, 3> v{};
        for (int i = 0; i < 3; ++i)
            v[size_t(i)] = step.x() * info.imageOrientation[size_t(i)] * std::max(info.columnSpacing, 1e-6)
                         + step.y() * info.imageOrientation[size_t(i) + 3] * std::max(info.rowSpacing, 1e-6);
        return v;
    };
    const std::array<double, 3> right = patient(QPointF(1, 0)), down = patient(QPointF(0, 1));
    d.right = patientDirectionLabel(right);
    d.down = patientDirectionLabel(down);
    d.left = patientDirectionLabel({-right[0], -right[1], -right[2]});
    d.up = patientDirectionLabel({-down[0], -down[1], -down[2]});
    return d;
}

std::optional<std::pair<double, double>> ImageViewport::scaleBar() const
{
    const ImageInfo &info = m_image.info;
    if (!hasImage() || !(info.rowSpacing > 0 && info.columnSpacing > 0))
        return std::nullopt;
    bool invertible = false;
    const QTransform back = view().imageToWidget().inverted(&invertible);
    if (!invertible)
        return std::nullopt;
    const QPointF step = back.map(QPointF(1, 0)) - back.map(QPointF(0, 0));
    const double mmPerPixel = std::hypot(step.x() * info.columnSpacing, step.y() * info.rowSpacing);
    if (!(mmPerPixel > 0))
        return std::nullopt;
    // The longest round length (1, 2, 5 × 10^n mm) that fits in 120 screen pixels.
    double best = 0;
    for (double decade = 0.01; decade <= 1000; decade *= 10)
        for (double m : {1.0, 2.0, 5.0})
            if (m * decade / mmPerPixel <= 120)
                best = m * decade;
    if (best <= 0)
        return std::nullopt;
    return std::make_pair(best, best / mmPerPixel);
}

void ImageViewport::paintOverlay(QPainter &p)
{
    p.setRenderHint(QPainter::TextAntialiasing);
    QFont font = p.font();
    font.setPointSizeF(std::max(8.0, font.pointSizeF()));
    p.setFont(font);
    const QRect area = rect().adjusted(8, 6, -8, -6);
    auto text = [&](const QRect &r, int flags, const QString &s, const QColor &colour = kOverlayText) { drawOutlined(p, r, flags, s, colour); };
    if (!hasImage()) {
        // Wrapped at word boundaries, or anywhere in a word too long for a line (a UID in an error).
        QTextOption wrap(Qt::AlignCenter);
        wrap.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
        const QRectF box = QRectF(area).adjusted(area.width() * 0.05, 0, -area.width() * 0.05, 0);
        p.setPen(QColor(0, 0, 0, 220));
        for (const QPointF d : {QPointF(-1, -1), QPointF(1, -1), QPointF(-1, 1), QPointF(1, 1)})
            p.drawText(box.translated(d), m_message, wrap);
        p.setPen(kOverlayText);
        p.drawText(box, m_message, wrap);
        if (m_overlayWithoutImage) {
            text(area, Qt::AlignLeft | Qt::AlignTop, m_overlay.topLeft);
            text(area, Qt::AlignRight | Qt::AlignTop, m_overlay.topRight);
            text(area, Qt::AlignLeft | Qt::AlignBottom, m_overlay.bottomLeft);
        }
        return;
    }
    // Every text in a place of its own (overlaylayout.h): nothing is drawn over anything else at any pane size.
    OverlayContent c;
    c.topLeft = m_overlay.topLeft.split(QLatin1Char('\n'));
    if (!m_overlay.comparison.isEmpty())
        c.comparison = OverlayText{{m_overlay.comparison}, m_overlay.prior ? QColor(240, 190, 80) : kOverlayText};
    c.topRight = m_overlay.topRight.split(QLatin1Char('\n'));
    const bool complete = m_completeness >= 1.0;
    c.badge = OverlayText{{complete ? tr("● Complete") : tr("◌ Arriving %1%").arg(int(m_completeness * 100))},
                          complete ? QColor(120, 210, 120) : QColor(255, 170, 60)};
    // Rejected by a rejection note of the study (IHE IOCM): said above all else; then a filtered view, plainly.
    if (const QString rejected = m_findings->rejectionOf(imageRef()); !rejected.isEmpty())
        c.banners << OverlayText{{tr("REJECTED: %1").arg(rejected)}, QColor(255, 90, 90)};
    if (!m_filterNote.isEmpty())
        c.banners << OverlayText{{tr("FILTERED VIEW: %1").arg(m_filterNote), tr("values and measurements"), tr("from the original image")}, QColor(255, 150, 90)};
    c.bottomLeft = m_overlay.bottomLeft.split(QLatin1Char('\n'));
    const ViewGeometry g = this->view();
    QStringList view{windowText(), tr("Zoom %1%").arg(std::lround(g.displayScale() * 100))};
    if (g.displayScale() > 1.0 && !m_smoothMagnify)
        view.last() += tr(" (pixel-exact)");
    if (g.rotation() || g.isFlippedHorizontally() || g.isFlippedVertically() || m_inverted) {
        QStringList how;
        if (g.rotation())
            how << tr("%1°").arg(g.rotation());
        if (g.isFlippedHorizontally())
            how << tr("flipped ↔");
        if (g.isFlippedVertically())
            how << tr("flipped ↕");
        if (m_inverted)
            how << tr("inverted");
        view << how.join(QStringLiteral(", "));
    }
    if (!m_modeText.isEmpty())
        view.prepend(m_modeText);
    if (!m_masks.isEmpty()) {
        QStringList labels;
        for (const ViewportMask &m : m_masks)
            if (!labels.contains(m.label))
                labels << m.label;
        view.prepend(m_masksVisible ? tr("Segments: %1").arg(labels.join(QStringLiteral(", "))) : tr("Segments hidden (G)"));
    }
    if (isKeyImage())
        view.prepend(tr("★ Key image"));
    if (presentationApplies())
        view.prepend(m_presentation->shutter ? tr("Presentation: %1 (shutter)").arg(m_presentationName) : tr("Presentation: %1").arg(m_presentationName));
    const QString readout = pixelReadout();
    if (!readout.isEmpty())
        view.prepend(readout);
    c.bottomRight = view;
    const ScreenDirections d = screenDirections();
    if (!d.up.isEmpty()) {
        c.up = d.up;
        c.down = d.down;
        c.left = d.left;
        c.right = d.right;
    }
    if (const auto bar = scaleBar()) {
        c.scaleBarPixels = int(std::lround(bar->second));
        c.scaleBarLabel = bar->first >= 10 ? tr("%1 cm").arg(bar->first / 10) : tr("%1 mm").arg(bar->first);
    }
    m_overlayPlacement = layOutOverlay(c, area, p.fontMetrics());
    for (const PlacedText &t : std::as_const(m_overlayPlacement.texts))
        text(t.rect, t.flags, t.text, t.colour);
    if (const std::optional<QRect> bar = m_overlayPlacement.scaleBar) {
        const QColor colour(235, 235, 235);
        const QPoint from(bar->left(), bar->bottom() - 2);
        const int length = bar->width();
        p.save();
        for (const auto &[pen, width] : {std::pair{QColor(0, 0, 0, 220), 4}, std::pair{colour, 2}}) {
            p.setPen(QPen(pen, width));
            p.drawLine(from, from + QPoint(length, 0));
            p.drawLine(from, from - QPoint(0, 5));
            p.drawLine(from + QPoint(length, 0), from + QPoint(length, -5));
        }
        p.restore();
    }
}

void ImageViewport::setReferenceLines(const QList<QLineF> &lines)
{
    if (lines == m_referenceLines)
        return;
    m_referenceLines = lines;
    update();
}

void ImageViewport::setCrosshair(const std::optional<QPointF> &at)
{
    if (at == m_crosshair)
        return;
    m_crosshair = at;
    update();
}

void ImageViewport::paintReferences(QPainter &p)
{
    if (m_referenceLines.isEmpty() && !m_crosshair)
        return;
    const QTransform t = view().imageToWidget();
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
