// SPDX-License-Identifier: Apache-2.0
#pragma once
// Text over images: a dark outline on all four sides keeps it legible on bright images as on dark ones.

#include <QPainter>

namespace spectrum {

inline void drawOutlined(QPainter &p, const QRect &r, int flags, const QString &s, const QColor &colour)
{
    p.setPen(QColor(0, 0, 0, 220));
    for (const QPoint d : {QPoint(-1, -1), QPoint(1, -1), QPoint(-1, 1), QPoint(1, 1)})
        p.drawText(r.translated(d), flags, s);
    p.setPen(colour);
    p.drawText(r, flags, s);
}

} // namespace spectrum
