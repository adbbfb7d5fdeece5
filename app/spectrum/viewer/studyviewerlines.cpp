// SPDX-License-Identifier: Apache-2.0
// StudyViewer's reference lines and crosshair: where the active pane's slice cuts the other panes' images, and
// a point picked in one pane found in all of them.
#include "viewer/studyviewer.h"
#include "browser/priorspanel.h"

#include "spectrum/imaging/volumes/planegeometry.h"

namespace spectrum {

void StudyViewer::setReferenceLinesVisible(bool on)
{
    m_referenceLines = on;
    updateReferences();
}

std::optional<std::array<double, 3>> StudyViewer::crosshairPoint() const
{
    return m_crosshair ? std::optional<std::array<double, 3>>(m_crosshair->point) : std::nullopt;
}

void StudyViewer::crosshairAt(SeriesPane *pane, QPointF at)
{
    if (!pane->viewport()->hasImage())
        return;
    const ImageInfo &info = pane->viewport()->image().info;
    const std::optional<PatientPoint> point = patientPointAt(info, at);
    if (!point)
        return;
    if (pane != m_active)
        setActivePane(pane);
    m_crosshair = Crosshair{*point, keyOf(pane->study()), info.frameOfReferenceUid};
    const std::array<double, 3> from = m_offsets.value(m_crosshair->studyKey, std::array<double, 3>{0, 0, 0});
    for (SeriesPane *p : std::as_const(m_panes)) {
        if (p == pane || !p->viewport()->hasImage())
            continue;
        int nearest = -1;
        if (p->study() == pane->study()) {
            nearest = p->sliceNearest(info.frameOfReferenceUid, *point);
        } else if (m_sync) {
            // Another study, linked: the same place by patient position and the offset between the two.
            const std::array<double, 3> to = m_offsets.value(keyOf(p->study()), std::array<double, 3>{0, 0, 0});
            const std::array<double, 3> there{(*point)[0] + to[0] - from[0], (*point)[1] + to[1] - from[1], (*point)[2] + to[2] - from[2]};
            nearest = p->sliceNearestInPlane(p->sliceNormal(), there);
        }
        if (nearest >= 0 && nearest != p->sliceIndex())
            p->showSlice(nearest);
    }
    updateReferences();
}

void StudyViewer::updateReferences()
{
    const bool activeShown = m_active && m_active->viewport()->hasImage();
    for (SeriesPane *p : std::as_const(m_panes)) {
        ImageViewport *vp = p->viewport();
        if (!vp->hasImage()) {
            vp->layers()->setReferenceLines({});
            vp->layers()->setCrosshair(std::nullopt);
            continue;
        }
        const ImageInfo &info = vp->image().info;
        QList<QLineF> lines;
        if (m_referenceLines && activeShown && p != m_active) {
            if (const std::optional<QLineF> line = referenceLine(info, m_active->viewport()->image().info))
                lines << *line;
        }
        vp->layers()->setReferenceLines(lines);
        // The crosshair's mark on the slices that hold its point (within half a slice, at least a millimetre).
        std::optional<QPointF> mark;
        if (m_crosshair) {
            const QString key = keyOf(p->study());
            // The same study: only images of the frame of reference it was picked in share its coordinates.
            const bool sameStudy = key == m_crosshair->studyKey;
            if (sameStudy ? info.frameOfReferenceUid == m_crosshair->frameOfReference : m_sync) {
                const std::array<double, 3> from = m_offsets.value(m_crosshair->studyKey, std::array<double, 3>{0, 0, 0});
                const std::array<double, 3> to = m_offsets.value(key, std::array<double, 3>{0, 0, 0});
                const PatientPoint there{m_crosshair->point[0] + to[0] - from[0], m_crosshair->point[1] + to[1] - from[1],
                                         m_crosshair->point[2] + to[2] - from[2]};
                double distance = 0;
                const std::optional<QPointF> at = imagePointOf(info, there, &distance);
                if (at && std::abs(distance) <= std::max(1.0, info.sliceThickness / 2 + 1e-6))
                    mark = at;
            }
        }
        vp->layers()->setCrosshair(mark);
    }
}

} // namespace spectrum
