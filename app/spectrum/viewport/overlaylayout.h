// SPDX-License-Identifier: Apache-2.0
#pragma once
// OverlayLayout: where the texts over an image go, so that none is drawn over another at any pane size — the four
// corner blocks, the badge and the banners at the top centre, the orientation letters at the edges, the scale bar
// at the bottom centre. Items are placed in order of importance (who the patient is first, never shortened; then
// which study, the badge, what was done to the image, where the slice lies, the window, the letters, the scale);
// each takes the first free place among those it may have, its lines shortened with "…" (never overprinted) when a
// pane is narrow, and its least important lines left out when it is short. What could not be placed is named in
// `dropped`, for the pane's tooltip.

#include <QColor>
#include <QFontMetrics>
#include <QList>
#include <QRect>
#include <QString>
#include <QStringList>

#include <optional>

namespace spectrum {

struct OverlayText
{
    QStringList lines;
    QColor colour;
};

struct OverlayContent
{
    QStringList topLeft;       ///< who the patient is: never shortened (unless wider than the pane)
    OverlayText comparison;    ///< "PRIOR …": the first line on the right, whole
    QStringList topRight;      ///< the study and series; lines shortened to the room left by the top left
    OverlayText badge;         ///< "● Image complete" (the image in view, not the study)
    QList<OverlayText> banners;  ///< REJECTED, FILTERED VIEW…: under the badge, most important first
    QStringList bottomLeft;    ///< where the slice lies, its size, the decoder's notes (first lines most important)
    QStringList bottomRight;   ///< the readout, modes, the window and zoom (last lines most important)
    QString up, down, left, right;  ///< orientation letters
    /// The scale bar's length on screen (0: none) and its label.
    int scaleBarPixels = 0;
    QString scaleBarLabel;
};

struct PlacedText
{
    QRect rect;
    QString text;   ///< as drawn: lines joined by '\n', shortened where needed
    QColor colour;
    int flags = 0;  ///< Qt alignment within rect
};

struct OverlayPlacement
{
    QList<PlacedText> texts;
    /// Where the scale bar's line is drawn (its label is among the texts); none when it did not fit.
    std::optional<QRect> scaleBar;
    QStringList dropped;  ///< what found no place at this size
};

/// Lays `content` out in `area` with `fm`'s font. No two rects of the result intersect.
OverlayPlacement layOutOverlay(const OverlayContent &content, const QRect &area, const QFontMetrics &fm);

} // namespace spectrum
