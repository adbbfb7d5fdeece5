// SPDX-License-Identifier: Apache-2.0
#pragma once
// FindingsLayer: the findings on the image a viewport shows — drawn with the measurement tools, grabbed by a point
// or by the outline, moved, edited, deleted, and painted with their values beside them, values read off the image
// in view (never the filtered one, never from rows not yet in or pixels without a value). The findings themselves
// live in a FindingsModel a study's panes share; this layer is one viewport's hands and eyes on them
// (`pane->viewport()->findingsLayer()->addMeasurement(a)`). The viewport hands it its mouse and keys first.

#include "findings/findingsmodel.h"
#include "tools/toolplacement.h"

#include "spectrum/imaging/tools/measurements.h"

#include <QObject>
#include <QRect>
#include <QStringList>

#include <functional>
#include <optional>
#include <utility>

class QKeyEvent;
class QPainter;

namespace spectrum {

class ImageViewport;

class FindingsLayer : public QObject
{
    Q_OBJECT
public:
    explicit FindingsLayer(ImageViewport *viewport);

    /// The findings shown: those of `model` on the image in view (the viewport's own model until one is given;
    /// `model` must outlive the viewport or be replaced first).
    void setModel(FindingsModel *model);
    FindingsModel *model() const { return m_findings; }
    /// The key the image in view's findings are kept under (FindingsModel::keyFor).
    QString findingsKey() const;
    /// The image (and frame) in view, as a finding on it names it.
    ImageRef imageRef() const;
    /// Findings on the image in view, in the order drawn.
    QList<Finding> findingsInView() const { return m_findings->on(findingsKey()); }
    QList<Annotation> measurements() const;
    /// What a finding measures on the image in view (annotation.h: measure()), only from rows already in.
    QList<MeasuredValue> valuesOf(const Annotation &a) const;
    /// A finding's text as shown beside it: "42.1 mm", mean, SD, min, max and area of a region, an arrow's words.
    QString measurementText(const Annotation &a) const;
    /// Adds a finding to the image in view (as if drawn) and selects it.
    void addMeasurement(const Annotation &a);
    int selectedMeasurement() const { return m_selected; }
    void deleteSelectedMeasurement();
    void clearMeasurements();
    /// Whether the image (and frame) in view is a key image: marked here or named by a selection of the study.
    bool isKeyImage() const;
    /// Marks or unmarks it (Tools ▸ Key image, K).
    void setKeyImage(bool key);
    /// Whether a finding is being drawn (an angle's second arm, a polygon's next vertex…).
    bool isDrawing() const { return m_placement.isActive(); }
    void cancelDrawing();
    /// How the words of an arrow or a text are asked for (default: a dialog); nothing: the drawing is cancelled.
    void setTextPrompt(std::function<std::optional<QString>(const QString &current)> prompt) { m_textPrompt = std::move(prompt); }
    /// Where measurement labels were last drawn (widget coordinates): inside the pane.
    QList<QRect> measurementLabelBoxes() const { return m_labelBoxes; }

Q_SIGNALS:
    /// The findings on the image in view changed (drawn, moved, edited, removed, put back).
    void measurementsChanged();

private:
    friend class ImageViewport;
    /// The image in view changed: values are measured again; `another` (not just its rows or pixels without a
    /// value): nothing stays selected or half drawn.
    void imageChanged(bool another);
    /// The left button on the image: a finding's point or outline grabbed, or a drawing begun or carried on.
    /// False when the press is not the findings' (pan, crosshair).
    bool press(QPointF widgetPosition, QPointF imagePosition);
    bool move(QPointF imagePosition, bool leftHeld);
    bool release(QPointF imagePosition);
    /// A double-click closes a polygon being drawn or edits an arrow's or a text's words; false: not the findings'.
    bool doubleClick(QPointF widgetPosition);
    /// Esc cancels a drawing, Enter closes a polygon; false: not the findings'.
    bool keyPress(QKeyEvent *event);
    void paint(QPainter &p);

    /// The point of a finding near `widgetPosition`: (finding, point), or (−1, −1).
    std::pair<int, int> handleNear(QPointF widgetPosition) const;
    /// The finding whose outline passes near `widgetPosition`, or −1.
    int outlineNear(QPointF widgetPosition) const;
    void commitDraft();
    std::optional<QString> askText(const QString &current);
    QString textFor(const Annotation &a, const QList<MeasuredValue> &values) const;
    void onFindingsChanged(const QString &imageKey);
    void restoreCursor();

    ImageViewport *m_viewport;
    FindingsModel *m_findings = nullptr;
    FindingsModel *m_ownFindings = nullptr;
    ToolPlacement m_placement;  ///< the finding being drawn
    std::function<std::optional<QString>(const QString &)> m_textPrompt;
    bool m_movingWhole = false;         ///< a finding dragged by its outline
    QPointF m_moveFrom;                 ///< image coordinates where that drag began
    Annotation m_moveOrigin;
    /// Bumps whenever the measurements or the image change: the labels (ROI statistics) are computed once per
    /// version, not on every repaint (hovering repaints on every mouse move).
    quint64 m_measureVersion = 0;
    quint64 m_labelsVersion = ~quint64(0);
    QStringList m_labels;
    QList<QRect> m_labelBoxes;
    int m_selected = -1;
    int m_draggedHandle = -1;  ///< the point of the selected finding being dragged
};

} // namespace spectrum
