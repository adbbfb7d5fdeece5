// SPDX-License-Identifier: Apache-2.0
#pragma once
// A finding on screen, from its tool's shapes (measurementtool.h): drawn, hit by the pointer, its label placed.
// Any tool draws here without code of its own.

#include "spectrum/imaging/tools/measurementtool.h"

#include <QColor>
#include <QRectF>
#include <QTransform>

class QPainter;

namespace spectrum::toolpainter {

/// Draws `a` through `toWidget` in `colour`, with its handles when its tool has them; `drafting`: being placed.
void paint(QPainter &p, const Annotation &a, const QTransform &toWidget, const QColor &colour, bool drafting);
/// Whether `widgetPosition` lies within `lineRadius` of one of `a`'s lines or `pointRadius` of one of its points.
bool isNear(const Annotation &a, QPointF widgetPosition, const QTransform &toWidget, double lineRadius, double pointRadius);
/// Where `a`'s label of `size` stands in a widget of `widgetSize`: beside it on its right — or its left when that
/// runs off —, at its words' anchor for a text; always inside.
QRectF labelBox(const Annotation &a, const QTransform &toWidget, QSizeF size, QSizeF widgetSize);

} // namespace spectrum::toolpainter
