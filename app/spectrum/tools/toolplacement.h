// SPDX-License-Identifier: Apache-2.0
#pragma once
// ToolPlacement: a finding being laid on the image by hand, gesture by gesture, as its tool's Placement says (a
// drag, a drag and a click, two drags, clicks closed by the first vertex, a trace). The viewport hands it the
// mouse and keys in image coordinates and commits what it makes; it knows no widget.

#include "spectrum/imaging/tools/measurementtool.h"

#include <QTransform>

#include <optional>

namespace spectrum {

class ToolPlacement
{
public:
    /// What a gesture did: nothing here, the drawing goes on, it is placed (take() it), or it came to nothing.
    enum class Step { Ignored, Drawing, Placed, Cancelled };

    bool isActive() const { return m_draft.has_value(); }
    /// The finding as drawn so far (while active).
    const Annotation &draft() const { return *m_draft; }

    /// A press with nothing being drawn: begins `tool`'s drawing at `at` (a one-click tool is placed at once).
    Step begin(const MeasurementTool &tool, QPointF at);
    /// A press while drawing; `toWidget` maps image to widget coordinates (a closing click is near in pixels).
    Step press(QPointF at, const QTransform &toWidget);
    /// The cursor moved to `at`, the left button held or not.
    void move(QPointF at, bool leftHeld, const QTransform &toWidget);
    Step release(QPointF at, const QTransform &toWidget);
    /// A double-click, or Return: closes what closes that way (a polygon).
    Step close();
    void cancel();
    /// The placed finding, as its tool makes it (tool.placed()); the placement is over.
    Annotation take();

private:
    const MeasurementTool *m_tool = nullptr;
    std::optional<Annotation> m_draft;
    int m_stage = 0;     ///< drawings of several gestures: which one is next
    int m_dragged = -1;  ///< the point following the drag
};

} // namespace spectrum
