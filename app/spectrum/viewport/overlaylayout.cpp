// SPDX-License-Identifier: Apache-2.0
#include "viewport/overlaylayout.h"

#include <algorithm>

namespace spectrum {

namespace {

constexpr int kGap = 4;  ///< between two items (the outline takes a pixel on each side)

enum class Anchor { TopLeft, TopRight, TopCentre, BottomLeft, BottomRight, BottomCentre, MiddleLeft, MiddleRight };

class Placer
{
public:
    Placer(const QRect &area, const QFontMetrics &fm) : m_area(area), m_fm(fm) {}

    int widthOf(const QStringList &lines) const
    {
        int w = 0;
        for (const QString &l : lines)
            w = std::max(w, m_fm.horizontalAdvance(l));
        return w;
    }

    QStringList elided(const QStringList &lines, int width) const
    {
        QStringList out;
        for (const QString &l : lines)
            out << (m_fm.horizontalAdvance(l) <= width ? l : m_fm.elidedText(l, Qt::ElideRight, width));
        return out;
    }

    bool isFree(const QRect &r) const
    {
        if (!m_area.contains(r))
            return false;
        const QRect padded = r.adjusted(-kGap / 2, -kGap / 2, kGap / 2, kGap / 2);
        return std::none_of(m_taken.begin(), m_taken.end(), [&](const QRect &t) { return t.intersects(padded); });
    }

    /// The first free rect of `size` at `anchor`, moving away from its edge (towards the pane's middle).
    std::optional<QRect> find(QSize size, Anchor anchor) const
    {
        const int w = size.width(), h = size.height();
        auto xFor = [&] {
            switch (anchor) {
            case Anchor::TopLeft: case Anchor::BottomLeft: case Anchor::MiddleLeft: return m_area.left();
            case Anchor::TopRight: case Anchor::BottomRight: case Anchor::MiddleRight: return m_area.right() - w + 1;
            default: return m_area.left() + (m_area.width() - w) / 2;
            }
        };
        const int x = xFor();
        const bool top = anchor == Anchor::TopLeft || anchor == Anchor::TopRight || anchor == Anchor::TopCentre;
        const bool middle = anchor == Anchor::MiddleLeft || anchor == Anchor::MiddleRight;
        if (middle) {
            const int y0 = m_area.top() + (m_area.height() - h) / 2;
            for (int d = 0; d <= m_area.height() / 2; d += 2)
                for (const int y : {y0 - d, y0 + d})
                    if (const QRect r(x, y, w, h); isFree(r))
                        return r;
            return std::nullopt;
        }
        // From the edge to a little past the middle: a corner's block may reach down (or up) that far.
        const int reach = m_area.height() * 3 / 4;
        for (int d = 0; d + h <= reach || d == 0; d += 2) {
            const QRect r(x, top ? m_area.top() + d : m_area.bottom() - h + 1 - d, w, h);
            if (isFree(r))
                return r;
        }
        return std::nullopt;
    }

    /// Places `lines` at `anchor`, at most `maxWidth` wide: shortened along, and when there is no room, without its
    /// least important lines (the last ones, or for `dropFirst` the first ones). False when nothing of it fits.
    /// `whole`: lines that hold numbers (a value, a position, a window) are first tried whole anywhere they may go,
    /// and shortened to `maxWidth` only when that finds no room — a value cut to "-1…" would be read wrong.
    /// `pad`: room kept free on each side (an orientation letter is not to read as part of a text beside it).
    bool place(QStringList lines, const QColor &colour, Anchor anchor, int maxWidth, bool dropFirst, const QString &what, bool whole = false, int pad = 0)
    {
        lines.removeAll(QString());
        if (lines.isEmpty())
            return true;
        const int total = int(lines.size());
        while (!lines.isEmpty()) {
            std::optional<QRect> r;
            QStringList shown;
            // Whole lines are shortened only past the pane's width; short of room, they give way a line at a time.
            for (const int width : {whole ? m_area.width() : 0, whole ? 0 : std::max(1, std::min(maxWidth, m_area.width()))}) {
                if (width <= 0)
                    continue;
                shown = elided(lines, width);
                if ((r = find(QSize(widthOf(shown) + 2 + 2 * pad, int(shown.size()) * m_fm.height()), anchor)))
                    break;
            }
            if (r) {
                const bool left = anchor == Anchor::TopLeft || anchor == Anchor::BottomLeft || anchor == Anchor::MiddleLeft;
                const bool right = anchor == Anchor::TopRight || anchor == Anchor::BottomRight || anchor == Anchor::MiddleRight;
                take(*r, shown.join(QLatin1Char('\n')), colour, (left ? Qt::AlignLeft : right ? Qt::AlignRight : Qt::AlignHCenter) | Qt::AlignTop);
                if (int(lines.size()) < total)
                    m_out.dropped << QStringLiteral("%1: %2 of %3 lines").arg(what).arg(total - lines.size()).arg(total);
                return true;
            }
            if (dropFirst)
                lines.removeFirst();
            else
                lines.removeLast();
        }
        m_out.dropped << what;
        return false;
    }

    void take(const QRect &r, const QString &text, const QColor &colour, int flags)
    {
        m_taken << r;
        m_out.texts << PlacedText{r, text, colour, flags};
    }
    void reserve(const QRect &r) { m_taken << r; }
    OverlayPlacement &out() { return m_out; }

private:
    QRect m_area;
    const QFontMetrics &m_fm;
    QList<QRect> m_taken;
    OverlayPlacement m_out;
};

} // namespace

OverlayPlacement layOutOverlay(const OverlayContent &c, const QRect &area, const QFontMetrics &fm)
{
    Placer p(area, fm);
    const QColor text(235, 225, 140), letters(235, 235, 235);
    const int w = area.width();
    // Who the patient is: whole (shortened only past the pane's width), lines kept as long as there is height.
    p.place(c.topLeft, text, Anchor::TopLeft, w, false, QStringLiteral("patient"));
    int leftWidth = 0;
    for (const PlacedText &t : p.out().texts)
        leftWidth = std::max(leftWidth, t.rect.width());
    const int besideLeft = std::max(fm.horizontalAdvance(QStringLiteral("MMMM…")), w - leftWidth - 3 * kGap);
    // What was done to the image (REJECTED, FILTERED VIEW) next: it may not give way to anything but the patient.
    for (const OverlayText &b : c.banners)
        p.place(b.lines, b.colour, Anchor::TopCentre, w, false, b.lines.value(0).section(QLatin1Char(':'), 0, 0), true);
    // Which study: whole when it fits beside the patient, under it otherwise.
    p.place(c.comparison.lines, c.comparison.colour, Anchor::TopRight, w, false, QStringLiteral("comparison"));
    p.place(c.topRight, text, Anchor::TopRight, besideLeft, false, QStringLiteral("study and series"));
    // The badge at the top centre, as near the top as the texts above leave room.
    p.place(c.badge.lines, c.badge.colour, Anchor::TopCentre, w, false, QStringLiteral("badge"));
    // The bottom corners: the window and zoom (its last lines) before where the slice lies; each at most half the
    // width when both have something to say.
    const bool both = !c.bottomLeft.isEmpty() && !c.bottomRight.isEmpty();
    const int half = (w - 3 * kGap) / 2;
    const qsizetype before = p.out().texts.size();
    p.place(c.bottomRight, text, Anchor::BottomRight, both ? std::max(half, w - p.widthOf(c.bottomLeft) - 3 * kGap) : w, true, QStringLiteral("view"), true);
    const int viewWidth = p.out().texts.size() > before ? p.out().texts.last().rect.width() : 0;
    p.place(c.bottomLeft, text, Anchor::BottomLeft, w - viewWidth - 3 * kGap, false, QStringLiteral("slice"), true);
    // The orientation letters at the middle of each edge, or as near to it as is free.
    const int letterPad = fm.horizontalAdvance(QStringLiteral("MM"));
    p.place({c.up}, letters, Anchor::TopCentre, w, false, QStringLiteral("orientation (top)"), false, letterPad);
    p.place({c.left}, letters, Anchor::MiddleLeft, w, false, QStringLiteral("orientation (left)"), false, letterPad);
    p.place({c.right}, letters, Anchor::MiddleRight, w, false, QStringLiteral("orientation (right)"), false, letterPad);
    // The scale bar above the bottom letter, both at the bottom centre.
    p.place({c.down}, letters, Anchor::BottomCentre, w, false, QStringLiteral("orientation (bottom)"), false, letterPad);
    if (c.scaleBarPixels > 0) {
        const int barHeight = 8;
        const QSize size(std::max(c.scaleBarPixels, fm.horizontalAdvance(c.scaleBarLabel)) + 2, fm.height() + barHeight);
        if (const std::optional<QRect> r = p.find(size, Anchor::BottomCentre)) {
            const QRect label(r->left(), r->top(), r->width(), fm.height());
            p.take(label, c.scaleBarLabel, letters, Qt::AlignHCenter | Qt::AlignTop);
            const QRect bar(r->left() + (r->width() - c.scaleBarPixels) / 2, r->bottom() - barHeight + 1, c.scaleBarPixels, barHeight);
            p.reserve(bar.adjusted(-3, 0, 3, 0));  // the pen's caps reach past the line's ends
            p.out().scaleBar = bar;
        } else {
            p.out().dropped << QStringLiteral("scale bar");
        }
    }
    return p.out();
}

} // namespace spectrum
