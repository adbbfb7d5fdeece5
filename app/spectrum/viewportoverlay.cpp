#include "imageviewport.h"
#include "outlinedtext.h"

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
    const QTransform back = imageToWidget().inverted(&invertible);
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
    const QTransform back = imageToWidget().inverted(&invertible);
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

void ImageViewport::paintOrientationAndScale(QPainter &p, const QRect &area)
{
    if (!hasImage())
        return;
    const ScreenDirections d = screenDirections();
    const QColor colour(235, 235, 235);
    const int line = p.fontMetrics().height();
    // The top edge's letter goes under the badge (and the filter banner, when there is one).
    const int topLines = m_filterNote.isEmpty() ? 1 : 3;
    if (!d.up.isEmpty()) {
        drawOutlined(p, area.adjusted(0, topLines * line + 4, 0, 0), Qt::AlignHCenter | Qt::AlignTop, d.up, colour);
        drawOutlined(p, area.adjusted(0, 0, 0, -line - 14), Qt::AlignHCenter | Qt::AlignBottom, d.down, colour);
        drawOutlined(p, area, Qt::AlignLeft | Qt::AlignVCenter, d.left, colour);
        drawOutlined(p, area, Qt::AlignRight | Qt::AlignVCenter, d.right, colour);
    }
    if (const auto bar = scaleBar()) {
        const double mm = bar->first;
        const int length = int(std::lround(bar->second));
        const QPoint from(area.center().x() - length / 2, area.bottom() - 4);
        p.save();
        for (const auto &[pen, width] : {std::pair{QColor(0, 0, 0, 220), 4}, std::pair{colour, 2}}) {
            p.setPen(QPen(pen, width));
            p.drawLine(from, from + QPoint(length, 0));
            p.drawLine(from, from - QPoint(0, 5));
            p.drawLine(from + QPoint(length, 0), from + QPoint(length, -5));
        }
        p.restore();
        const QString label = mm >= 10 ? tr("%1 cm").arg(mm / 10) : tr("%1 mm").arg(mm);
        drawOutlined(p, QRect(from.x(), from.y() - 6 - line, length, line), Qt::AlignHCenter | Qt::AlignBottom, label, colour);
    }
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
    // The top corners and the badge between them. Who the patient is (top left) is never shortened; when the
    // pane is narrow the badge joins the right block, and the right block's lines give way, visibly elided ("…").
    const QFontMetrics fm = p.fontMetrics();
    const bool complete = m_completeness >= 1.0;
    const QString badge = complete ? tr("● Complete") : tr("◌ Arriving %1%").arg(int(m_completeness * 100));
    const QColor badgeColour = complete ? QColor(120, 210, 120) : QColor(255, 170, 60);
    int leftWidth = 0, rightWidth = fm.horizontalAdvance(m_overlay.comparison);
    for (const QString &l : m_overlay.topLeft.split(QLatin1Char('\n')))
        leftWidth = std::max(leftWidth, fm.horizontalAdvance(l));
    for (const QString &l : m_overlay.topRight.split(QLatin1Char('\n')))
        rightWidth = std::max(rightWidth, fm.horizontalAdvance(l));
    const int badgeHalf = fm.horizontalAdvance(badge) / 2 + 8;
    const bool badgeCentred = leftWidth < area.width() / 2 - badgeHalf && rightWidth < area.width() / 2 - badgeHalf;
    QStringList right;
    const int rightRoom = std::max(fm.horizontalAdvance(QStringLiteral("MMMM…")), area.width() - leftWidth - 16);
    for (const QString &l : m_overlay.topRight.split(QLatin1Char('\n')))
        right << fm.elidedText(l, Qt::ElideRight, rightRoom);
    text(area, Qt::AlignLeft | Qt::AlignTop, m_overlay.topLeft);
    QRect rightArea = area;
    if (badgeCentred) {
        text(area, Qt::AlignHCenter | Qt::AlignTop, badge, badgeColour);
    } else {
        text(area, Qt::AlignRight | Qt::AlignTop, badge, badgeColour);
        rightArea.adjust(0, fm.height(), 0, 0);
    }
    // Which study this is, when several are open: whole, whatever the width, and in its colour for a prior.
    if (!m_overlay.comparison.isEmpty()) {
        text(rightArea, Qt::AlignRight | Qt::AlignTop, m_overlay.comparison, m_overlay.prior ? QColor(240, 190, 80) : kOverlayText);
        rightArea.adjust(0, fm.height(), 0, 0);
    }
    text(rightArea, Qt::AlignRight | Qt::AlignTop, right.join(QLatin1Char('\n')));
    text(area, Qt::AlignLeft | Qt::AlignBottom, m_overlay.bottomLeft);
    QStringList view{windowText(), tr("Zoom %1%").arg(std::lround(displayScale() * 100))};
    if (displayScale() > 1.0 && !m_smoothMagnify)
        view.last() += tr(" (pixel-exact)");
    if (m_quarterTurns || m_flipH || m_flipV || m_inverted) {
        QStringList how;
        if (m_quarterTurns)
            how << tr("%1°").arg(m_quarterTurns * 90);
        if (m_flipH)
            how << tr("flipped ↔");
        if (m_flipV)
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
    text(area, Qt::AlignRight | Qt::AlignBottom, view.join(QLatin1Char('\n')));
    // Rejected by a rejection note of the study (IHE IOCM): said above all else.
    if (hasImage()) {
        const QString rejected = m_findings->rejectionOf(imageRef());
        if (!rejected.isEmpty())
            text(area.adjusted(0, 2 * p.fontMetrics().height() + 4, 0, 0), Qt::AlignHCenter | Qt::AlignTop,
                 tr("REJECTED: %1").arg(rejected), QColor(255, 90, 90));
    }
    // Filtered: said plainly, under the badge, with where the numbers come from.
    if (!m_filterNote.isEmpty()) {
        const QRect below = area.adjusted(0, p.fontMetrics().height() + 2, 0, 0);
        text(below, Qt::AlignHCenter | Qt::AlignTop,
             tr("FILTERED VIEW: %1\nvalues and measurements from the original image").arg(m_filterNote), QColor(255, 150, 90));
    }
    paintOrientationAndScale(p, area);
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
    const QTransform t = imageToWidget();
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
        const QPointF c = t.map(*m_crosshair);
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
