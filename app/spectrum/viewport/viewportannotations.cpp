// SPDX-License-Identifier: Apache-2.0
#include "viewport/imageviewport.h"
#include "viewport/outlinedtext.h"
#include "tools/toolpainter.h"

// The viewport's findings: drawn with the tools, grabbed by a point or by the outline, edited, deleted, and painted
// with their values beside them — values read off the image in view (never the filtered one), and where a report
// said otherwise, what it said as well.

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

void ImageViewport::setTool(ViewportTool tool)
{
    m_tool = tool;
    cancelDrawing();
    setCursor(tool.pans() ? Qt::ArrowCursor : Qt::CrossCursor);
}

void ImageViewport::setFindings(FindingsModel *model)
{
    if (!model || model == m_findings)
        return;
    if (m_findings)
        disconnect(m_findings, nullptr, this, nullptr);
    m_findings = model;
    connect(m_findings, &FindingsModel::changed, this, &ImageViewport::onFindingsChanged);
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
    update();
}

void ImageViewport::onFindingsChanged(const QString &imageKey)
{
    if (!imageKey.isEmpty() && imageKey != findingsKey())
        return;
    if (m_selected >= int(findingsInView().size()))
        m_selected = -1;
    ++m_measureVersion;
    update();
    Q_EMIT measurementsChanged();
}

QString ImageViewport::findingsKey() const
{
    // An image without a DICOM identity (a test's, a synthetic one) is kept under the key it was shown with.
    ImageRef ref = imageRef();
    if (ref.sopInstanceUid.isEmpty())
        ref.sopInstanceUid = m_key;
    return FindingsModel::keyFor(ref);
}

ImageRef ImageViewport::imageRef() const
{
    ImageRef r = ImageRef::of(m_image.info);
    r.frame = m_image.info.frames > 1 ? m_frame + 1 : 0;
    return r;
}

QList<Annotation> ImageViewport::measurements() const
{
    QList<Annotation> list;
    for (const Finding &f : findingsInView())
        list << f.annotation;
    return list;
}

QList<MeasuredValue> ImageViewport::valuesOf(const Annotation &a) const
{
    return measure(a, m_image, m_frame, m_valueRows < m_image.info.rows ? m_valueRows : -1, m_noValue);
}

QString ImageViewport::measurementText(const Annotation &a) const
{
    return textFor(a, valuesOf(a));
}

QString ImageViewport::textFor(const Annotation &a, const QList<MeasuredValue> &values) const
{
    if (measurementTool(a.kind).words() != Words::None)
        return a.text;  // an arrow's or a text's words: what it says
    const bool realValued = m_image.pixels.format() == PixelFormat::Float64 || std::fabs(m_image.info.rescaleSlope - std::round(m_image.info.rescaleSlope)) > 1e-9;
    QString text = describeValues(values, realValued);
    if (isRegion(a.kind) && m_valueRows < m_image.info.rows && values.size() == 1)
        text += tr("\n(statistics once the image is here)");  // rows not in yet would read as zeros
    return a.text.isEmpty() ? text : a.text + QLatin1Char('\n') + text;
}

void ImageViewport::addMeasurement(const Annotation &a)
{
    Finding f;
    f.annotation = a;
    f.image = imageRef();
    m_selected = m_findings->add(findingsKey(), f);
    update();
}

void ImageViewport::deleteSelectedMeasurement()
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

void ImageViewport::clearMeasurements()
{
    cancelDrawing();
    m_selected = -1;
    m_findings->clear(findingsKey());
}

void ImageViewport::cancelDrawing()
{
    if (!m_placement.isActive())
        return;
    m_placement.cancel();
    update();
}

std::optional<QString> ImageViewport::askText(const QString &current)
{
    if (m_textPrompt)
        return m_textPrompt(current);
    bool ok = false;
    const QString text = QInputDialog::getText(this, tr("Annotation"), tr("Text:"), QLineEdit::Normal, current, &ok);
    if (!ok)
        return std::nullopt;
    return text;
}

std::pair<int, int> ImageViewport::handleNear(QPointF widgetPosition) const
{
    const QList<Finding> list = findingsInView();
    const QTransform t = view().imageToWidget();
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

int ImageViewport::outlineNear(QPointF widgetPosition) const
{
    const QList<Finding> list = findingsInView();
    const QTransform t = view().imageToWidget();
    for (int i = int(list.size()) - 1; i >= 0; --i)
        if (toolpainter::isNear(list[i].annotation, widgetPosition, t, kOutlineRadius, kHandleRadius * 2))
            return i;
    return -1;
}

bool ImageViewport::annotationPress(QPointF widgetPosition, QPointF at)
{
    // A drawing of several gestures carries on.
    if (m_placement.isActive()) {
        if (m_placement.press(at, view().imageToWidget()) == ToolPlacement::Step::Placed)
            commitDraft();
        update();
        return true;
    }
    if (const auto [finding, point] = handleNear(widgetPosition); finding >= 0) {
        m_selected = finding;
        m_draggedHandle = point;
        update();
        return true;
    }
    if (const int finding = outlineNear(widgetPosition); finding >= 0) {
        m_selected = finding;
        m_movingWhole = true;
        m_moveFrom = at;
        m_moveOrigin = findingsInView()[finding].annotation;
        setCursor(Qt::SizeAllCursor);
        update();
        return true;
    }
    if (!m_tool.measurement())
        return false;
    m_selected = -1;
    const ToolPlacement::Step step = m_placement.begin(*m_tool.measurement(), at);
    if (step == ToolPlacement::Step::Ignored)
        return false;
    if (step == ToolPlacement::Step::Placed)
        commitDraft();
    update();
    return true;
}

bool ImageViewport::annotationMove(QPointF at, bool leftHeld)
{
    if (m_placement.isActive()) {
        m_placement.move(at, leftHeld, view().imageToWidget());
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

bool ImageViewport::annotationRelease(QPointF at)
{
    setCursor(m_tool.pans() ? Qt::ArrowCursor : Qt::CrossCursor);
    if (m_movingWhole || (!m_placement.isActive() && m_draggedHandle >= 0)) {
        m_movingWhole = false;
        m_draggedHandle = -1;
        m_findings->endEdit();  // the drag was one step to undo
        return true;
    }
    if (!m_placement.isActive())
        return false;
    if (m_placement.release(at, view().imageToWidget()) == ToolPlacement::Step::Placed)
        commitDraft();
    update();
    return true;
}

void ImageViewport::commitDraft()
{
    if (!m_placement.isActive())
        return;
    Annotation a = m_placement.take();
    const Words words = measurementTool(a.kind).words();
    if (words != Words::None) {
        const std::optional<QString> text = askText(QString());
        if (!text || (words == Words::Required && text->trimmed().isEmpty())) {
            update();
            return;
        }
        a.text = text->trimmed();
    }
    if (!isWellFormed(a)) {
        update();
        return;
    }
    addMeasurement(a);
}

void ImageViewport::mouseDoubleClickEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton || !hasImage())
        return QWidget::mouseDoubleClickEvent(event);
    // A polygon being drawn closes (the double-click's first press added a vertex where the cursor is: it goes).
    if (const ToolPlacement::Step step = m_placement.close(); step != ToolPlacement::Step::Ignored) {
        if (step == ToolPlacement::Step::Placed)
            commitDraft();
        update();
        return;
    }
    // A double-click on an arrow or a text edits its words; elsewhere, with nothing being drawn, it is the pane's.
    const int finding = outlineNear(event->position());
    if (finding < 0) {
        if (!m_placement.isActive())
            Q_EMIT doubleClicked();
        return;
    }
    Annotation a = findingsInView()[finding].annotation;
    if (measurementTool(a.kind).words() == Words::None)
        return;
    m_movingWhole = false;
    if (const std::optional<QString> text = askText(a.text); text && !text->trimmed().isEmpty()) {
        a.text = text->trimmed();
        m_findings->setAnnotation(findingsKey(), finding, a);
    }
}

void ImageViewport::keyPressEvent(QKeyEvent *event)
{
    if (m_placement.isActive() && event->key() == Qt::Key_Escape) {
        cancelDrawing();
        return;
    }
    if (event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter) {
        // A polygon being drawn closes (the vertex following the cursor goes).
        if (const ToolPlacement::Step step = m_placement.close(); step != ToolPlacement::Step::Ignored) {
            if (step == ToolPlacement::Step::Placed)
                commitDraft();
            update();
            return;
        }
    }
    QWidget::keyPressEvent(event);
}

void ImageViewport::paintMeasurements(QPainter &p)
{
    const QList<Finding> list = findingsInView();
    m_labelBoxes.clear();
    if (list.isEmpty() && !m_placement.isActive())
        return;
    const QTransform t = view().imageToWidget();
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
        const QRect box = toolpainter::labelBox(a, t, size, QSizeF(width(), height())).toAlignedRect();
        drawOutlined(p, box, Qt::AlignLeft | Qt::AlignTop, label, colour);
        m_labelBoxes << box;
    }
    if (m_placement.isActive())
        toolpainter::paint(p, m_placement.draft(), t, kSelectedColour, true);
    p.restore();
}

} // namespace spectrum
