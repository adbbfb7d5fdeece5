// SPDX-License-Identifier: Apache-2.0
#include "viewport/imageviewport.h"
#include "viewport/outlinedtext.h"
#include "viewport/overlaylayout.h"
#include "viewport/screenorientation.h"

// The viewport's overlay text, drawn over the image: the corner texts, the badge and the filter banner, the
// orientation letters at the image's edges and the scale bar (the reference lines and the crosshair are drawn by
// viewportlayers.cpp, the findings by viewportannotations.cpp). All text is outlined, legible on bright images as on dark ones.

#include <QPainter>
#include <QTextOption>

#include <algorithm>
#include <cmath>

namespace spectrum {

namespace {
const QColor kOverlayText(235, 225, 140);
} // namespace

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
            // Whose slice is awaited, laid out as over an image: the patient never overprinted by the study.
            OverlayContent c;
            c.topLeft = m_layers->overlay().topLeft.split(QLatin1Char('\n'));
            if (!m_layers->overlay().comparison.isEmpty())
                c.comparison = OverlayText{{m_layers->overlay().comparison}, m_layers->overlay().prior ? QColor(240, 190, 80) : kOverlayText};
            c.topRight = m_layers->overlay().topRight.split(QLatin1Char('\n'));
            c.bottomLeft = m_layers->overlay().bottomLeft.split(QLatin1Char('\n'));
            m_overlayPlacement = layOutOverlay(c, area, p.fontMetrics());
            for (const PlacedText &t : std::as_const(m_overlayPlacement.texts))
                text(t.rect, t.flags, t.text, t.colour);
        }
        return;
    }
    // Every text in a place of its own (overlaylayout.h): nothing is drawn over anything else at any pane size.
    OverlayContent c;
    c.topLeft = m_layers->overlay().topLeft.split(QLatin1Char('\n'));
    if (!m_layers->overlay().comparison.isEmpty())
        c.comparison = OverlayText{{m_layers->overlay().comparison}, m_layers->overlay().prior ? QColor(240, 190, 80) : kOverlayText};
    c.topRight = m_layers->overlay().topRight.split(QLatin1Char('\n'));
    const bool complete = m_layers->completeness() >= 1.0;
    c.badge = OverlayText{{complete ? tr("● Image complete") : tr("◌ Image arriving %1%").arg(int(m_layers->completeness() * 100))},
                          complete ? QColor(120, 210, 120) : QColor(255, 170, 60)};
    // Rejected by a rejection note of the study (IHE IOCM): said above all else; then a filtered view, plainly.
    if (const QString rejected = m_findingsLayer->model()->rejectionOf(m_findingsLayer->imageRef()); !rejected.isEmpty())
        c.banners << OverlayText{{tr("REJECTED: %1").arg(rejected)}, QColor(255, 90, 90)};
    if (!m_filterNote.isEmpty())
        c.banners << OverlayText{{tr("FILTERED VIEW: %1").arg(m_filterNote), tr("values and measurements"), tr("from the original image")}, QColor(255, 150, 90)};
    c.bottomLeft = m_layers->overlay().bottomLeft.split(QLatin1Char('\n'));
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
    if (!m_layers->modeText().isEmpty())
        view.prepend(m_layers->modeText());
    if (!m_layers->masks().isEmpty()) {
        QStringList labels;
        for (const ViewportMask &m : m_layers->masks())
            if (!labels.contains(m.label))
                labels << m.label;
        view.prepend(m_layers->masksVisible() ? tr("Segments: %1").arg(labels.join(QStringLiteral(", "))) : tr("Segments hidden (G)"));
    }
    if (m_findingsLayer->isKeyImage())
        view.prepend(tr("★ Key image"));
    if (presentationApplies())
        view.prepend(m_presentation->shutter ? tr("Presentation: %1 (shutter)").arg(m_presentationName) : tr("Presentation: %1").arg(m_presentationName));
    const QString readout = pixelReadout();
    if (!readout.isEmpty())
        view.prepend(readout);
    c.bottomRight = view;
    const ScreenDirections d = screenDirections(m_image.info, this->view());
    if (!d.up.isEmpty()) {
        c.up = d.up;
        c.down = d.down;
        c.left = d.left;
        c.right = d.right;
    }
    if (const auto bar = scaleBar(m_image.info, this->view())) {
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

} // namespace spectrum
