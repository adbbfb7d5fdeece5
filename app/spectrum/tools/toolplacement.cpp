// SPDX-License-Identifier: Apache-2.0
#include "tools/toolplacement.h"

#include "spectrum/imaging/tools/measurements.h"

namespace spectrum {

namespace {

constexpr double kCloseRadius = 7;  ///< screen pixels within which a click on the first vertex closes a polygon
constexpr double kLeastDrag = 3;    ///< screen pixels a drag must cover to draw anything

} // namespace

ToolPlacement::Step ToolPlacement::begin(const MeasurementTool &tool, QPointF at)
{
    cancel();
    m_tool = &tool;
    Annotation a;
    a.kind = tool.kind();
    switch (tool.placement()) {
    case Placement::None:
        m_tool = nullptr;
        return Step::Ignored;
    case Placement::Click:
        a.points = {at};
        m_draft = a;
        return Step::Placed;
    case Placement::DragThenClick:
        a.points = {at, at, at};
        m_dragged = 1;  // the vertex, dragged out from the first end
        break;
    case Placement::Trace:
        a.points = {at};
        m_dragged = 0;
        break;
    case Placement::Drag:
    case Placement::TwoDrags:
    case Placement::ClickToClose:  // the second point follows the drag
        a.points = {at, at};
        m_dragged = 1;
        break;
    }
    m_draft = a;
    return Step::Drawing;
}

ToolPlacement::Step ToolPlacement::press(QPointF at, const QTransform &toWidget)
{
    if (!m_draft)
        return Step::Ignored;
    QList<QPointF> &p = m_draft->points;
    switch (m_tool->placement()) {
    case Placement::DragThenClick:  // the second arm's end
        p[2] = at;
        return Step::Placed;
    case Placement::TwoDrags:  // the second line begins
        p << at << at;
        m_dragged = 3;
        break;
    case Placement::ClickToClose:
        // A click on the first vertex closes it; any other adds a vertex.
        if (p.size() >= 4 && distancePixels(toWidget.map(p.first()), toWidget.map(at)) <= kCloseRadius) {
            p.removeLast();  // the vertex following the cursor
            return Step::Placed;
        }
        p.last() = at;
        p << at;
        break;
    default:
        break;
    }
    return Step::Drawing;
}

void ToolPlacement::move(QPointF at, bool leftHeld, const QTransform &toWidget)
{
    if (!m_draft)
        return;
    QList<QPointF> &p = m_draft->points;
    const Placement placement = m_tool->placement();
    if (leftHeld && placement == Placement::Trace) {
        if (distancePixels(toWidget.map(p.last()), toWidget.map(at)) >= kLeastDrag)
            p << at;
    } else if (leftHeld && m_dragged >= 0 && m_dragged < p.size()) {
        p[m_dragged] = at;
    } else if (!leftHeld && placement == Placement::DragThenClick && m_stage == 1) {
        p[2] = at;  // the second arm follows the cursor until the click
    } else if (placement == Placement::ClickToClose && m_stage == 1) {
        p.last() = at;  // the next vertex follows the cursor
    }
}

ToolPlacement::Step ToolPlacement::release(QPointF at, const QTransform &toWidget)
{
    if (!m_draft)
        return Step::Ignored;
    QList<QPointF> &p = m_draft->points;
    auto tooSmall = [&](QPointF a, QPointF b) { return distancePixels(toWidget.map(a), toWidget.map(b)) < kLeastDrag; };
    switch (m_tool->placement()) {
    case Placement::DragThenClick:
        if (m_stage == 0) {
            if (tooSmall(p[0], p[1]))
                return cancel(), Step::Cancelled;  // a click without a drag draws nothing
            p[2] = at;
            m_stage = 1;
            m_dragged = -1;
        }
        return Step::Drawing;
    case Placement::TwoDrags:
        if (p.size() == 2) {
            if (tooSmall(p[0], p[1]))
                return cancel(), Step::Cancelled;
            m_dragged = -1;
            return Step::Drawing;
        }
        if (tooSmall(p[2], p[3])) {
            p.resize(2);  // the second line again
            m_dragged = -1;
            return Step::Drawing;
        }
        return Step::Placed;
    case Placement::ClickToClose:
        if (m_stage == 0) {
            // The first press began it; a drag made the first edge, a click leaves the next vertex to follow.
            m_stage = 1;
            m_dragged = -1;
            if (!tooSmall(p[0], p[1]))
                p << at;
        }
        return Step::Drawing;
    case Placement::Trace:
        if (p.size() >= 3)
            return Step::Placed;
        return cancel(), Step::Cancelled;
    case Placement::Drag:
        if (tooSmall(p[0], p[1]))
            return cancel(), Step::Cancelled;
        return Step::Placed;
    case Placement::Click:
    case Placement::None:
        break;
    }
    return Step::Placed;
}

ToolPlacement::Step ToolPlacement::close()
{
    if (!m_draft || m_tool->placement() != Placement::ClickToClose)
        return Step::Ignored;
    // The vertex following the cursor (or the one a double-click's first press added) goes.
    if (m_draft->points.size() >= 2)
        m_draft->points.removeLast();
    if (m_draft->points.size() >= 3)
        return Step::Placed;
    cancel();
    return Step::Cancelled;
}

void ToolPlacement::cancel()
{
    m_draft.reset();
    m_stage = 0;
    m_dragged = -1;
}

Annotation ToolPlacement::take()
{
    Annotation a = m_tool && m_draft ? m_tool->placed(*m_draft) : Annotation();
    cancel();
    return a;
}

} // namespace spectrum
