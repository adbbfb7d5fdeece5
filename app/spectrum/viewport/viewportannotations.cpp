// SPDX-License-Identifier: Apache-2.0
#include "viewport/imageviewport.h"
#include "viewport/outlinedtext.h"

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

AnnotationKind kindOf(ImageViewport::Tool tool)
{
    switch (tool) {
    case ImageViewport::Tool::Distance: return AnnotationKind::Distance;
    case ImageViewport::Tool::Rectangle: return AnnotationKind::Rectangle;
    case ImageViewport::Tool::Ellipse: return AnnotationKind::Ellipse;
    case ImageViewport::Tool::Angle: return AnnotationKind::Angle;
    case ImageViewport::Tool::CobbAngle: return AnnotationKind::CobbAngle;
    case ImageViewport::Tool::Bidirectional: return AnnotationKind::Bidirectional;
    case ImageViewport::Tool::Arrow: return AnnotationKind::Arrow;
    case ImageViewport::Tool::Text: return AnnotationKind::Text;
    case ImageViewport::Tool::Polygon: return AnnotationKind::Polygon;
    case ImageViewport::Tool::Freehand: return AnnotationKind::Freehand;
    case ImageViewport::Tool::Point: return AnnotationKind::Point;
    case ImageViewport::Tool::Pan:
    case ImageViewport::Tool::Crosshair: break;
    }
    return AnnotationKind::Distance;
}

bool draws(ImageViewport::Tool tool)
{
    return tool != ImageViewport::Tool::Pan && tool != ImageViewport::Tool::Crosshair;
}

double segmentDistance(QPointF p, QPointF a, QPointF b)
{
    const QPointF d = b - a;
    const double l2 = d.x() * d.x() + d.y() * d.y();
    const double t = l2 > 0 ? std::clamp(((p.x() - a.x()) * d.x() + (p.y() - a.y()) * d.y()) / l2, 0.0, 1.0) : 0.0;
    return distancePixels(p, a + d * t);
}

/// The lines a finding is drawn with, in image coordinates (regions closed, an angle's two arms…).
QList<QList<QPointF>> strokes(const Annotation &a, bool drafting)
{
    const QList<QPointF> &p = a.points;
    switch (a.kind) {
    case AnnotationKind::CobbAngle:
    case AnnotationKind::Bidirectional:
        return p.size() == 4 ? QList<QList<QPointF>>{{p[0], p[1]}, {p[2], p[3]}} : QList<QList<QPointF>>{p};
    case AnnotationKind::Rectangle:
    case AnnotationKind::Ellipse:
    case AnnotationKind::Polygon:
    case AnnotationKind::Freehand: {
        QList<QPointF> o = outline(a);
        if (!o.isEmpty() && !(drafting && (a.kind == AnnotationKind::Polygon || a.kind == AnnotationKind::Freehand)))
            o << o.first();
        return {o};
    }
    case AnnotationKind::Text:
    case AnnotationKind::Point:
        return {};
    default:
        return {p};
    }
}

} // namespace

void ImageViewport::setTool(Tool tool)
{
    m_tool = tool;
    cancelDrawing();
    setCursor(tool == Tool::Pan ? Qt::ArrowCursor : Qt::CrossCursor);
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
    if (a.kind == AnnotationKind::Arrow || a.kind == AnnotationKind::Text)
        return a.text;
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
    if (m_draft) {
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
    if (!m_draft)
        return;
    m_draft.reset();
    m_draftStage = 0;
    m_draggedHandle = -1;
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
    const QTransform t = imageToWidget();
    // The selected finding first (its handles may lie over another's), then the latest drawn.
    QList<int> order;
    if (m_selected >= 0 && m_selected < list.size())
        order << m_selected;
    for (int i = int(list.size()) - 1; i >= 0; --i)
        if (i != m_selected)
            order << i;
    for (int i : order) {
        const Annotation &a = list[i].annotation;
        if (a.kind == AnnotationKind::Freehand)
            continue;  // traced: moved whole, not point by point
        for (int k = int(a.points.size()) - 1; k >= 0; --k)
            if (distancePixels(t.map(a.points[k]), widgetPosition) <= kHandleRadius)
                return {i, k};
    }
    return {-1, -1};
}

int ImageViewport::outlineNear(QPointF widgetPosition) const
{
    const QList<Finding> list = findingsInView();
    const QTransform t = imageToWidget();
    for (int i = int(list.size()) - 1; i >= 0; --i) {
        const Annotation &a = list[i].annotation;
        if (a.kind == AnnotationKind::Text || a.kind == AnnotationKind::Point) {
            if (distancePixels(t.map(a.points.value(0)), widgetPosition) <= kHandleRadius * 2)
                return i;
            continue;
        }
        for (const QList<QPointF> &stroke : strokes(a, false))
            for (int k = 1; k < stroke.size(); ++k)
                if (segmentDistance(widgetPosition, t.map(stroke[k - 1]), t.map(stroke[k])) <= kOutlineRadius)
                    return i;
    }
    return -1;
}

bool ImageViewport::annotationPress(QPointF widgetPosition, QPointF at)
{
    // A drawing of several gestures carries on.
    if (m_draft) {
        Annotation &d = *m_draft;
        if (d.kind == AnnotationKind::Angle) {  // the second arm's end
            d.points[2] = at;
            commitDraft();
        } else if (d.kind == AnnotationKind::CobbAngle) {  // the second line begins
            d.points << at << at;
            m_draggedHandle = 3;
        } else if (d.kind == AnnotationKind::Polygon) {
            // A click on the first vertex closes it; any other adds a vertex.
            if (d.points.size() >= 4 && distancePixels(imageToWidget().map(d.points.first()), widgetPosition) <= kHandleRadius) {
                d.points.removeLast();  // the vertex following the cursor
                commitDraft();
            } else {
                d.points.last() = at;
                d.points << at;
            }
        }
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
    if (!draws(m_tool))
        return false;
    Annotation a;
    a.kind = kindOf(m_tool);
    m_selected = -1;
    switch (a.kind) {
    case AnnotationKind::Text:
    case AnnotationKind::Point:
        a.points = {at};
        m_draft = a;
        commitDraft();
        return true;
    case AnnotationKind::Angle:
        a.points = {at, at, at};
        m_draggedHandle = 1;  // the vertex, dragged out from the first end
        break;
    case AnnotationKind::Freehand:
        a.points = {at};
        m_draggedHandle = 0;
        break;
    default:  // two points: the second follows the drag
        a.points = {at, at};
        m_draggedHandle = 1;
        break;
    }
    m_draft = a;
    m_draftStage = 0;
    update();
    return true;
}

bool ImageViewport::annotationMove(QPointF at, bool leftHeld)
{
    if (m_draft) {
        Annotation &d = *m_draft;
        if (leftHeld && d.kind == AnnotationKind::Freehand) {
            if (distancePixels(imageToWidget().map(d.points.last()), imageToWidget().map(at)) >= 3)
                d.points << at;
        } else if (leftHeld && m_draggedHandle >= 0 && m_draggedHandle < d.points.size()) {
            d.points[m_draggedHandle] = at;
        } else if (!leftHeld && d.kind == AnnotationKind::Angle && m_draftStage == 1) {
            d.points[2] = at;  // the second arm follows the cursor until the click
        } else if (d.kind == AnnotationKind::Polygon && m_draftStage == 1) {
            d.points.last() = at;  // the next vertex follows the cursor
        }
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
    setCursor(m_tool == Tool::Pan ? Qt::ArrowCursor : Qt::CrossCursor);
    if (m_movingWhole || (!m_draft && m_draggedHandle >= 0)) {
        m_movingWhole = false;
        m_draggedHandle = -1;
        m_findings->endEdit();  // the drag was one step to undo
        return true;
    }
    if (!m_draft)
        return false;
    Annotation &d = *m_draft;
    const QTransform t = imageToWidget();
    auto tooSmall = [&](QPointF a, QPointF b) { return distancePixels(t.map(a), t.map(b)) < 3; };
    switch (d.kind) {
    case AnnotationKind::Angle:
        if (m_draftStage == 0) {
            if (tooSmall(d.points[0], d.points[1])) {
                cancelDrawing();  // a click without a drag draws nothing
            } else {
                d.points[2] = at;
                m_draftStage = 1;
                m_draggedHandle = -1;
            }
        }
        break;
    case AnnotationKind::CobbAngle:
        if (d.points.size() == 2) {
            if (tooSmall(d.points[0], d.points[1]))
                cancelDrawing();
            m_draggedHandle = -1;
        } else if (tooSmall(d.points[2], d.points[3])) {
            d.points.resize(2);  // the second line again
            m_draggedHandle = -1;
        } else {
            commitDraft();
        }
        break;
    case AnnotationKind::Polygon:
        if (m_draftStage == 0) {
            // The first press began it; a drag made the first edge, a click leaves the next vertex to follow.
            m_draftStage = 1;
            m_draggedHandle = -1;
            if (!tooSmall(d.points[0], d.points[1]))
                d.points << at;
        }
        break;
    case AnnotationKind::Freehand:
        if (d.points.size() >= 3)
            commitDraft();
        else
            cancelDrawing();
        break;
    default:
        if (tooSmall(d.points[0], d.points[1])) {
            cancelDrawing();
        } else {
            if (d.kind == AnnotationKind::Bidirectional)
                d = bidirectionalFrom(d.points[0], d.points[1]);
            commitDraft();
        }
        break;
    }
    update();
    return true;
}

void ImageViewport::commitDraft()
{
    if (!m_draft)
        return;
    Annotation a = *m_draft;
    m_draft.reset();
    m_draftStage = 0;
    m_draggedHandle = -1;
    if (a.kind == AnnotationKind::Arrow || a.kind == AnnotationKind::Text) {
        const std::optional<QString> text = askText(QString());
        if (!text || (a.kind == AnnotationKind::Text && text->trimmed().isEmpty())) {
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
    if (m_draft && m_draft->kind == AnnotationKind::Polygon) {
        // The double-click's first press added a vertex where the cursor is: it is the last one.
        if (m_draft->points.size() >= 2)
            m_draft->points.removeLast();
        if (m_draft->points.size() >= 3)
            commitDraft();
        else
            cancelDrawing();
        return;
    }
    // A double-click on an arrow or a text edits its words; elsewhere, with nothing being drawn, it is the pane's.
    const int finding = outlineNear(event->position());
    if (finding < 0) {
        if (!m_draft)
            Q_EMIT doubleClicked();
        return;
    }
    Annotation a = findingsInView()[finding].annotation;
    if (a.kind != AnnotationKind::Arrow && a.kind != AnnotationKind::Text)
        return;
    m_movingWhole = false;
    if (const std::optional<QString> text = askText(a.text); text && !text->trimmed().isEmpty()) {
        a.text = text->trimmed();
        m_findings->setAnnotation(findingsKey(), finding, a);
    }
}

void ImageViewport::keyPressEvent(QKeyEvent *event)
{
    if (m_draft && event->key() == Qt::Key_Escape) {
        cancelDrawing();
        return;
    }
    if (m_draft && m_draft->kind == AnnotationKind::Polygon && (event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter)) {
        m_draft->points.removeLast();  // the vertex following the cursor
        if (m_draft->points.size() >= 3)
            commitDraft();
        else
            cancelDrawing();
        return;
    }
    QWidget::keyPressEvent(event);
}

void ImageViewport::paintMeasurements(QPainter &p)
{
    const QList<Finding> list = findingsInView();
    m_labelBoxes.clear();
    if (list.isEmpty() && !m_draft)
        return;
    const QTransform t = imageToWidget();
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
    auto draw = [&](const Annotation &a, const QColor &colour, bool drafting) {
        QPen pen(colour);
        pen.setCosmetic(true);
        pen.setWidthF(1.5);
        p.setPen(pen);
        p.setBrush(Qt::NoBrush);
        if (a.kind == AnnotationKind::Ellipse && a.points.size() == 2) {
            // In image coordinates, so it turns and flips with the image.
            p.save();
            p.setTransform(t, true);
            p.drawEllipse(QRectF(a.points[0], a.points[1]).normalized());
            p.restore();
        } else {
            for (const QList<QPointF> &stroke : strokes(a, drafting)) {
                QPolygonF line;
                for (const QPointF &q : stroke)
                    line << t.map(q);
                p.drawPolyline(line);
            }
        }
        if (a.kind == AnnotationKind::Arrow && a.points.size() == 2) {
            const QPointF tip = t.map(a.points[0]), tail = t.map(a.points[1]);
            const double angle = std::atan2(tail.y() - tip.y(), tail.x() - tip.x());
            for (double side : {-0.45, 0.45})
                p.drawLine(tip, tip + QPointF(std::cos(angle + side), std::sin(angle + side)) * 12);
        }
        if (a.kind == AnnotationKind::Point && !a.points.isEmpty()) {
            const QPointF c = t.map(a.points[0]);
            p.drawLine(c - QPointF(6, 0), c + QPointF(6, 0));
            p.drawLine(c - QPointF(0, 6), c + QPointF(0, 6));
        }
        if (a.kind != AnnotationKind::Freehand && a.kind != AnnotationKind::Text)
            for (const QPointF &q : a.points)
                p.drawEllipse(t.map(q), 3.0, 3.0);
    };
    for (int i = 0; i < list.size(); ++i) {
        const Annotation &a = list[i].annotation;
        const QColor colour = i == m_selected ? kSelectedColour : list[i].fromReport() ? kReportColour : kMeasureColour;
        draw(a, colour, false);
        // The label: beside the shape on its right — or its left when that runs off the pane —, a text at its
        // point, an arrow's at its tail; always inside the pane.
        const QString &label = m_labels.value(i);
        if (label.isEmpty())
            continue;
        QRectF bounds;
        const QList<QPointF> anchorPoints = a.kind == AnnotationKind::Arrow ? QList<QPointF>{a.points.value(1)} : outline(a, 16);
        for (const QPointF &q : anchorPoints)
            bounds = bounds.isNull() ? QRectF(t.map(q), QSizeF(0.001, 0.001)) : bounds.united(QRectF(t.map(q), QSizeF(0.001, 0.001)));
        const QSizeF size = p.fontMetrics().boundingRect(QRect(0, 0, 400, 200), Qt::AlignLeft | Qt::AlignTop, label).size();
        QPointF anchor = a.kind == AnnotationKind::Text ? bounds.topLeft() + QPointF(4, -size.height() / 2) : QPointF(bounds.right() + 8, bounds.top());
        if (anchor.x() + size.width() > width() - 4)
            anchor.setX(bounds.left() - 8 - size.width());
        anchor.setX(std::clamp(anchor.x(), 4.0, std::max(4.0, width() - 4 - size.width())));
        anchor.setY(std::clamp(anchor.y(), 4.0, std::max(4.0, height() - 4 - size.height())));
        const QRect box = QRectF(anchor, size).toAlignedRect();
        drawOutlined(p, box, Qt::AlignLeft | Qt::AlignTop, label, colour);
        m_labelBoxes << box;
    }
    if (m_draft)
        draw(*m_draft, kSelectedColour, true);
    p.restore();
}

} // namespace spectrum
