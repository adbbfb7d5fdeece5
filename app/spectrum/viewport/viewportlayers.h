// SPDX-License-Identifier: Apache-2.0
#pragma once
// ViewportLayers: what the study viewer lays over a viewport's image — the overlay's corner texts (whose study,
// which series and slice), the modes in force, segmentation masks, other panes' reference lines, the crosshair,
// and how much of the image is in. The viewport paints them (and repaints when they change); whoever knows them
// sets them: `pane->viewport()->layers()->setCrosshair(at)`.

#include <QColor>
#include <QImage>
#include <QLineF>
#include <QList>
#include <QObject>
#include <QString>

#include <optional>

class QPainter;
class QTransform;

namespace spectrum {

struct ViewportOverlay
{
    QString topLeft;
    QString topRight;
    QString bottomLeft;
    /// "PRIOR  2023-01-03 (1 year earlier)": the first line on the right, never shortened; amber when `prior`.
    QString comparison;
    bool prior = false;
};

/// A segmentation's mask over the image: `image` (ARGB, the image's size) drawn translucent, named in the overlay.
struct ViewportMask
{
    QImage image;
    QString label;
    QColor colour;
};

class ViewportLayers : public QObject
{
    Q_OBJECT
public:
    explicit ViewportLayers(QObject *parent = nullptr) : QObject(parent) {}

    /// The corner texts.
    void setOverlay(const ViewportOverlay &overlay);
    const ViewportOverlay &overlay() const { return m_overlay; }
    /// The modes in force, shown above the window and zoom (synchronised scrolling, cine and its rate).
    void setModeText(const QString &text);
    QString modeText() const { return m_modeText; }
    /// Segmentations over the image (SegmentationOverlay), drawn while masksVisible(). Another image or frame in
    /// the viewport ends them: its own come from whoever knows them, never the last one's.
    void setMasks(const QList<ViewportMask> &masks);
    const QList<ViewportMask> &masks() const { return m_masks; }
    void setMasksVisible(bool visible);
    bool masksVisible() const { return m_masksVisible; }
    /// Where other panes' slices cut this image (image coordinates), drawn over it.
    void setReferenceLines(const QList<QLineF> &lines);
    const QList<QLineF> &referenceLines() const { return m_referenceLines; }
    /// The crosshair's point on this image (image coordinates); none: not drawn.
    void setCrosshair(const std::optional<QPointF> &at);
    std::optional<QPointF> crosshair() const { return m_crosshair; }
    /// How much of the image is in: 1 complete; below 1 the overlay says it is still arriving.
    void setCompleteness(double fraction);
    double completeness() const { return m_completeness; }

    /// The reference lines and the crosshair, over the image (image coordinates through `imageToWidget`).
    void paintReferences(QPainter &p, const QTransform &imageToWidget) const;

Q_SIGNALS:
    void changed();

private:
    ViewportOverlay m_overlay;
    QString m_modeText;
    QList<ViewportMask> m_masks;
    bool m_masksVisible = true;
    QList<QLineF> m_referenceLines;
    std::optional<QPointF> m_crosshair;
    double m_completeness = 1.0;
};

} // namespace spectrum
