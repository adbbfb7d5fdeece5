// SPDX-License-Identifier: Apache-2.0
#include "viewport/findingslayer.h"
#include "viewport/imageviewport.h"
#include "viewport/outlinedtext.h"
#include "tools/toolpainter.h"

// Where a report said otherwise than the image in view measures, what it said is painted as well.

#include "spectrum/imaging/tools/measurements.h"

#include <QInputDialog>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace spectrum {

namespace {

constexpr double kHandleRadius = 7;   ///< screen pixels within which a finding's point is grabbed
constexpr double kOutlineRadius = 5;  ///< … and its outline
const QColor kMeasureColour(120, 220, 255);
const QColor kReportColour(170, 235, 140);  ///< findings read from a report
const QColor kSelectedColour(255, 170, 60);

} // namespace

FindingsLayer::FindingsLayer(ImageViewport *viewport) : QObject(viewport), m_viewport(viewport)
{
    m_ownFindings = new FindingsModel(this);
    setModel(m_ownFindings);
}

void FindingsLayer::restoreCursor()
{
    m_viewport->setCursor(m_viewport->tool().pans() ? Qt::ArrowCursor : Qt::CrossCursor);
}

void FindingsLayer::imageChanged(bool another)
{
    if (another) {
        m_selected = -1;
        m_placement.cancel();
    }
    ++m_measureVersion;
}

void FindingsLayer::setModel(FindingsModel *model)
{
    if (!model || model == m_findings)
        return;
    if (m_findings)
        disconnect(m_findings, nullptr, this, nullptr);
    m_findings = model;
    connect(m_findings, &FindingsModel::changed, this, &FindingsLayer::onFindingsChanged);
    connect(m_findings, &FindingsModel::restored, this, [this](const QString &imageKey) {
        // Put back by an undo or redo: the selected index and a drag under way may name another finding now.
        if (imageKey != findingsKey())
            return;
        m_selected = -1;
        m_movingWhole = false;
        m_draggedHandle = -1;
    });
    m_selected = -1;
    ++m_measureVersion;
    m_viewport->update();
}

void FindingsLayer::onFindingsChanged(const QString &imageKey)
{
    if (!imageKey.isEmpty() && imageKey != findingsKey())
        return;
    if (m_selected >= int(findingsInView().size()))
        m_selected = -1;
    ++m_measureVersion;
    m_viewport->update();
    Q_EMIT measurementsChanged();
}

QString FindingsLayer::findingsKey() const
{
    // An image without a DICOM identity (a test's, a synthetic one) is kept under the key it was shown with.
    ImageRef ref = imageRef();
    if (ref.sopInstanceUid.isEmpty())
        ref.sopInstanceUid = m_viewport->m_key;
    return FindingsModel::keyFor(ref);
}

ImageRef FindingsLayer::imageRef() const
{
    ImageRef r = ImageRef::of(m_viewport->m_image.info);
    r.frame = m_viewport->m_image.info.frames > 1 ? m_viewport->m_frame + 1 : 0;
    return r;
}

QList<Annotation> FindingsLayer::measurements() const
{
    QList<Annotation> list;
    for (const Finding &f : findingsInView())
        list << f.annotation;
    return list;
}

QList<MeasuredValue> FindingsLayer::valuesOf(const Annotation &a) const
{
    return measure(a, m_viewport->m_image, m_viewport->m_frame, m_viewport->m_valueRows < m_viewport->m_image.info.rows ? m_viewport->m_valueRows : -1, m_viewport->m_noValue);
}

QString FindingsLayer::measurementText(const Annotation &a) const
{
    return textFor(a, valuesOf(a));
}

QString FindingsLayer::textFor(const Annotation &a, const QList<MeasuredValue> &values) const
{
    if (measurementTool(a.kind).words() != Words::None)
        return a.text;  // an arrow's or a text's words: what it says
    const bool realValued = m_viewport->m_image.pixels.format() == PixelFormat::Float64 || std::fabs(m_viewport->m_image.info.rescaleSlope - std::round(m_viewport->m_image.info.rescaleSlope)) > 1e-9;
    QString text = describeValues(values, realValued);
    if (isRegion(a.kind) && m_viewport->m_valueRows < m_viewport->m_image.info.rows && values.size() == 1)
        text += tr("\n(statistics once the image is here)");  // rows not in yet would read as zeros
    return a.text.isEmpty() ? text : a.text + QLatin1Char('\n') + text;
}

void FindingsLayer::addMeasurement(const Annotation &a)
{
    Finding f;
    f.annotation = a;
    f.image = imageRef();
    m_selected = m_findings->add(findingsKey(), f);
    m_viewport->update();
}

bool FindingsLayer::isKeyImage() const
{
    return m_viewport->hasImage() && m_findings->isKeyImage(imageRef());
}

void FindingsLayer::setKeyImage(bool key)
{
    if (m_viewport->hasImage())
        m_findings->setKeyImage(imageRef(), key);
    m_viewport->update();
}

void FindingsLayer::deleteSelectedMeasurement()
{
    if (m_placement.isActive()) {
        cancelDrawing();
        return;
    }
    const QList<Finding> list = findingsInView();
    if (list.isEmpty())
        return;
    const int index = m_selected >= 0 && m_selected < list.size() ? m_selected : int(list.size()) - 1;
    m_selected = -1;
    m_findings->remove(findingsKey(), index);
}

void FindingsLayer::clearMeasurements()
{
    cancelDrawing();
    m_selected = -1;
    m_findings->clear(findingsKey());
}

void FindingsLayer::cancelDrawing()
{
    if (!m_placement.isActive())
        return;
    m_placement.cancel();
    m_viewport->update();
}

std::optional<QString> FindingsLayer::askText(const QString &current)
{
    if (m_textPrompt)
        return m_textPrompt(current);
    bool ok = false;
    const QString text = QInputDialog::getText(m_viewport, tr("Annotation"), tr("Text:"), QLineEdit::Normal, current, &ok);
    if (!ok)
        return std::nullopt;
    return text;
}

std::pair<int, int> FindingsLayer::handleNear(QPointF widgetPosition) const
{
    const QList<Finding> list = findingsInView();
    const QTransform t = m_viewport->view().imageToWidget();
    // The selected finding first (its handles may lie over another's), then the latest drawn.
    QList<int> order;
    if (m_selected >= 0 && m_selected < list.size())
        order << m_selected;
    for (int i = int(list.size()) - 1; i >= 0; --i)
        if (i != m_selected)
            order << i;
    for (int i : order) {
        const Annotation &a = list[i].annotation;
        if (!measurementTool(a.kind).hasHandles())
            continue;  // a trace: moved whole, not point by point
        for (int k = int(a.points.size()) - 1; k >= 0; --k)
            if (distancePixels(t.map(a.points[k]), widgetPosition) <= kHandleRadius)
                return {i, k};
    }
    return {-1, -1};
}

int FindingsLayer::outlineNear(QPointF widgetPosition) const
{
    const QList<Finding> list = findingsInView();
    const QTransform t = m_viewport->view().imageToWidget();
    for (int i = int(list.size()) - 1; i >= 0; --i)
        if (toolpainter::isNear(list[i].annotation, widgetPosition, t, kOutlineRadius, kHandleRadius * 2))
            return i;
    return -1;
}

bool FindingsLayer::press(QPointF widgetPosition, QPointF at)
{
    // A drawing of several gestures carries on.
    if (m_placement.isActive()) {
        if (m_placement.press(at, m_viewport->view().imageToWidget()) == ToolPlacement::Step::Placed)
            commitDraft();
        m_viewport->update();
        return true;
    }
    if (const auto [finding, point] = handleNear(widgetPosition); finding >= 0) {
        m_selected = finding;
        m_draggedHandle = point;
        m_viewport->update();
        return true;
    }
    if (const int finding = outlineNear(widgetPosition); finding >= 0) {
        m_selected = finding;
        m_movingWhole = true;
        m_moveFrom = at;
        m_moveOrigin = findingsInView()[finding].annotation;
        m_viewport->setCursor(Qt::SizeAllCursor);
        m_viewport->update();
        return true;
    }
    if (!m_viewport->tool().measurement())
        return false;
    m_selected = -1;
    const ToolPlacement::Step step = m_placement.begin(*m_viewport->tool().measurement(), at);
    if (step == ToolPlacement::Step::Ignored)
        return false;
    if (step == ToolPlacement::Step::Placed)
        commitDraft();
    m_viewport->update();
    return true;
}

bool FindingsLayer::move(QPointF at, bool leftHeld)
{
    if (m_placement.isActive()) {
        m_placement.move(at, leftHeld, m_viewport->view().imageToWidget());
        ++m_measureVersion;
        return true;  // while drawing, the left button draws (never pans)
    }
    if (!leftHeld || m_selected < 0)
        return false;
    const QList<Finding> list = findingsInView();
    if (m_selected >= list.size())
        return false;
    if (m_movingWhole) {
        m_findings->setAnnotation(findingsKey(), m_selected, translated(m_moveOrigin, at - m_moveFrom));
        return true;
    }
    if (m_draggedHandle >= 0) {
        m_findings->setAnnotation(findingsKey(), m_selected, withPointMoved(list[m_selected].annotation, m_draggedHandle, at));
        return true;
    }
    return false;
}

bool FindingsLayer::release(QPointF at)
{
    restoreCursor();
    if (m_movingWhole || (!m_placement.isActive() && m_draggedHandle >= 0)) {
        m_movingWhole = false;
        m_draggedHandle = -1;
        m_findings->endEdit();  // the drag was one step to undo
        return true;
    }
    if (!m_placement.isActive())
        return false;
    if (m_placement.release(at, m_viewport->view().imageToWidget()) == ToolPlacement::Step::Placed)
        commitDraft();
    m_viewport->update();
    return true;
}

void FindingsLayer::commitDraft()
{
    if (!m_placement.isActive())
        return;
    Annotation a = m_placement.take();
    const Words words = measurementTool(a.kind).words();
    if (words != Words::None) {
        const std::optional<QString> text = askText(QString());
        if (!text || (words == Words::Required && text->trimmed().isEmpty())) {
            m_viewport->update();
            return;
        }
        a.text = text->trimmed();
    }
    if (!isWellFormed(a)) {
        m_viewport->update();
        return;
    }
    addMeasurement(a);
}

bool FindingsLayer::doubleClick(QPointF widgetPosition)
{
    // A polygon being drawn closes (the double-click's first press added a vertex where the cursor is: it goes).
    if (const ToolPlacement::Step step = m_placement.close(); step != ToolPlacement::Step::Ignored) {
        if (step == ToolPlacement::Step::Placed)
            commitDraft();
        m_viewport->update();
        return true;
    }
    // A double-click on an arrow or a text edits its words; elsewhere, with nothing being drawn, it is the pane's.
    const int finding = outlineNear(widgetPosition);
    if (finding < 0)
        return m_placement.isActive();
    Annotation a = findingsInView()[finding].annotation;
    if (measurementTool(a.kind).words() == Words::None)
        return true;
    m_movingWhole = false;
    if (const std::optional<QString> text = askText(a.text); text && !text->trimmed().isEmpty()) {
        a.text = text->trimmed();
        m_findings->setAnnotation(findingsKey(), finding, a);
    }
    return true;
}

bool FindingsLayer::keyPress(QKeyEvent *event)
{
    if (m_placement.isActive() && event->key() == Qt::Key_Escape) {
        cancelDrawing();
        return true;
    }
    if (event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter) {
        // A polygon being drawn closes (the vertex following the cursor goes).
        if (const ToolPlacement::Step step = m_placement.close(); step != ToolPlacement::Step::Ignored) {
            if (step == ToolPlacement::Step::Placed)
                commitDraft();
            m_viewport->update();
            return true;
        }
    }
    return false;
}

void FindingsLayer::paint(QPainter &p)
{
    const QList<Finding> list = findingsInView();
    m_labelBoxes.clear();
    if (list.isEmpty() && !m_placement.isActive())
        return;
    const QTransform t = m_viewport->view().imageToWidget();
    if (m_labelsVersion != m_measureVersion) {
        m_labels.clear();
        for (int i = 0; i < list.size(); ++i) {
            const Finding &f = list[i];
            const QList<MeasuredValue> now = valuesOf(f.annotation);
            m_findings->setMeasured(findingsKey(), i, now);
            QString label = textFor(f.annotation, now);
            // What a report said, when the image in view measures otherwise: both are shown, never one silently.
            if (!f.reportedValues.isEmpty()) {
                bool differs = false;
                for (const MeasuredValue &r : f.reportedValues)
                    for (const MeasuredValue &v : now)
                        if (v.quantity == r.quantity && std::abs(v.value - r.value) > std::max(0.05, 1e-3 * std::abs(r.value)))
                            differs = true;
                if (differs)
                    label += tr("\nthe report says: %1").arg(describeValues(f.reportedValues).replace(QLatin1Char('\n'), QStringLiteral("; ")));
            }
            m_labels << label;
        }
        m_labelsVersion = m_measureVersion;
    }
    p.save();
    p.setRenderHint(QPainter::Antialiasing);
    for (int i = 0; i < list.size(); ++i) {
        const Annotation &a = list[i].annotation;
        const QColor colour = i == m_selected ? kSelectedColour : list[i].fromReport() ? kReportColour : kMeasureColour;
        toolpainter::paint(p, a, t, colour, false);
        // The label: beside the shape on its right — or its left when that runs off the pane —, a text at its
        // point, an arrow's at its tail; always inside the pane.
        const QString &label = m_labels.value(i);
        if (label.isEmpty())
            continue;
        const QSizeF size = p.fontMetrics().boundingRect(QRect(0, 0, 400, 200), Qt::AlignLeft | Qt::AlignTop, label).size();
        const QRect box = toolpainter::labelBox(a, t, size, QSizeF(m_viewport->size())).toAlignedRect();
        drawOutlined(p, box, Qt::AlignLeft | Qt::AlignTop, label, colour);
        m_labelBoxes << box;
    }
    if (m_placement.isActive())
        toolpainter::paint(p, m_placement.draft(), t, kSelectedColour, true);
    p.restore();
}

} // namespace spectrum
