// SPDX-License-Identifier: Apache-2.0
#include "viewer/panelinks.h"
#include "viewer/studyviewer.h"

#include "spectrum/imaging/volumes/planegeometry.h"

#include <cmath>

namespace spectrum {

namespace {

using Vec = std::array<double, 3>;

Vec minus(const Vec &a, const Vec &b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec plus(const Vec &a, const Vec &b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
Vec scaled(const Vec &a, double k) { return {a[0] * k, a[1] * k, a[2] * k}; }
double dotOf(const Vec &a, const Vec &b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

} // namespace

PaneLinks::PaneLinks(StudyViewer *viewer) : QObject(viewer), m_viewer(viewer) {}

void PaneLinks::forget(SeriesPane *pane)
{
    if (m_adjusting == pane)
        m_adjusting = nullptr;
    m_beyond.remove(pane);
}

void PaneLinks::setFromPlan(bool sync, bool window)
{
    m_sync = sync;
    m_linkWindow = window;
    if (!sync)
        m_beyond.clear();
}

void PaneLinks::setSynchronized(bool on)
{
    m_sync = on;
    if (!on)
        m_beyond.clear();
    m_viewer->updateModeText();
    follow();
}

void PaneLinks::follow(SeriesPane *lead)
{
    if (!lead)
        lead = m_viewer->m_active;
    if (!m_sync || m_viewer->m_panes.size() < 2 || !lead)
        return;
    // The slice through the same place of the patient: in the same study by frame of reference; in another
    // study by patient position in the same plane, shifted by the offset between the two studies. Series
    // elsewhere (another plane, no geometry) stay where they are. Where the slice in view lies is known from
    // its header before it is decoded: the panes it leads open at their level, not somewhere first.
    QString frame;
    Vec normal{}, here{};
    bool centre = false;
    if (!lead->placeInView(&frame, &normal, &here, &centre))
        return;
    const Vec from = m_offsets.value(m_viewer->keyOf(lead->study()), Vec{0, 0, 0});
    for (SeriesPane *p : std::as_const(m_viewer->m_panes)) {
        if (p == lead || p == m_adjusting)
            continue;
        if (!centre) {
            // Only the header's corner of the slice in view is known yet: it places panes parallel to it; the
            // others follow once it is decoded (its centre).
            const std::optional<Vec> n = p->stackNormal();
            if (!n || std::abs((*n)[0] * normal[0] + (*n)[1] * normal[1] + (*n)[2] * normal[2]) < 0.99999)
                continue;
        }
        int nearest = -1;
        if (p->study() == lead->study()) {
            nearest = frame.isEmpty() ? -1 : p->sliceNearest(frame, here);
        } else {
            const Vec to = m_offsets.value(m_viewer->keyOf(p->study()), Vec{0, 0, 0});
            nearest = p->sliceNearestInPlane(normal, plus(here, minus(to, from)));
            // No slice of it at this level: it stays, and says so, rather than stand at its edge as if it matched.
            const bool beyond = nearest == SeriesPane::kBeyondStack;
            if (beyond != m_beyond.contains(p)) {
                beyond ? void(m_beyond.insert(p)) : void(m_beyond.remove(p));
                m_viewer->updateModeText();
            }
        }
        if (nearest >= 0 && nearest != p->sliceIndex())
            p->showSlice(nearest);
    }
}

void PaneLinks::learnOffset(SeriesPane *pane)
{
    if (!m_sync || !pane->viewport()->hasImage() || !pane->viewport()->image().info.hasPosition)
        return;
    const ImageInfo &info = pane->viewport()->image().info;
    const Vec n = info.sliceNormal();
    for (SeriesPane *r : std::as_const(m_viewer->m_panes)) {
        if (r == pane || r->study() == pane->study() || !r->viewport()->hasImage() || !r->viewport()->image().info.hasPosition)
            continue;
        const ImageInfo &other = r->viewport()->image().info;
        if (std::abs(dotOf(other.sliceNormal(), n)) < 0.99)
            continue;
        // The pane's place and the other's are the same anatomy: what lies at `other`'s position there lies at
        // this pane's position here.
        const Vec base = m_offsets.value(m_viewer->keyOf(r->study()), Vec{0, 0, 0});
        m_offsets.insert(m_viewer->keyOf(pane->study()), plus(base, scaled(n, dotOf(n, minus(info.centre(), other.centre())))));
        m_viewer->updateModeText();
        return;
    }
}

double PaneLinks::offsetMm(const QString &studyKey) const
{
    Vec n{0, 0, 1};
    if (m_viewer->m_active && m_viewer->m_active->viewport()->hasImage() && m_viewer->m_active->viewport()->image().info.hasPosition)
        n = m_viewer->m_active->viewport()->image().info.sliceNormal();
    const Vec d = minus(m_offsets.value(studyKey, Vec{0, 0, 0}), m_offsets.value(m_viewer->keyOf(&m_viewer->m_study), Vec{0, 0, 0}));
    return dotOf(n, d);
}

void PaneLinks::setOffsetMm(const QString &studyKey, double mm)
{
    Vec n{0, 0, 1};
    if (m_viewer->m_active && m_viewer->m_active->viewport()->hasImage() && m_viewer->m_active->viewport()->image().info.hasPosition)
        n = m_viewer->m_active->viewport()->image().info.sliceNormal();
    m_offsets.insert(studyKey, plus(m_offsets.value(m_viewer->keyOf(&m_viewer->m_study), Vec{0, 0, 0}), scaled(n, mm)));
    m_viewer->updateModeText();
    follow();
}

void PaneLinks::setWindowLinked(bool on)
{
    m_linkWindow = on;
    m_viewer->updateModeText();
    propagateWindow();
}

void PaneLinks::setZoomLinked(bool on)
{
    m_linkZoom = on;
    m_viewer->updateModeText();
    propagateZoom();
}

void PaneLinks::propagateWindow()
{
    if (!m_linkWindow || !m_viewer->m_active || !m_viewer->m_active->viewport()->hasImage() || m_viewer->m_active->seriesIndex() < 0)
        return;
    // Only where values mean the same in every image and are read alike: slices in Hounsfield units cut the same
    // way as the active pane's (axial beside axial). An MR's or a radiograph's values depend on the acquisition; a
    // CT's scout is a projection whose values are sums along a ray — another image's window would show either
    // misleadingly bright or dark (a brain window turns a localizer black).
    const ImageInfo &lead = m_viewer->m_active->viewport()->image().info;
    auto linkable = [&lead](SeriesPane *p) {
        const ImageInfo &i = p->viewport()->image().info;
        if (!p->viewport()->hasImage() || i.isProjection() || !(i.rescaleType == QLatin1String("HU") || i.identity.modality == QLatin1String("CT")))
            return false;
        if (!i.hasPosition || !lead.hasPosition)
            return true;
        const std::array<double, 3> a = i.sliceNormal(), b = lead.sliceNormal();
        return std::abs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) > 0.8;  // the same plane, give or take a tilt
    };
    if (!linkable(m_viewer->m_active))
        return;
    const VoiWindow w = m_viewer->m_active->viewport()->window();
    for (SeriesPane *p : std::as_const(m_viewer->m_panes)) {
        if (p == m_viewer->m_active || !linkable(p))
            continue;
        const VoiWindow mine = p->viewport()->window();
        if (mine.center != w.center || mine.width != w.width)
            p->viewport()->setWindow(w);
    }
}

void PaneLinks::propagateZoom()
{
    if (!m_linkZoom || !m_viewer->m_active)
        return;
    const double zoom = m_viewer->m_active->viewport()->view().zoom();
    for (SeriesPane *p : std::as_const(m_viewer->m_panes)) {
        if (p != m_viewer->m_active && std::abs(p->viewport()->view().zoom() - zoom) > 1e-9)
            p->viewport()->setView(p->viewport()->view().withZoom(zoom));
    }
}

void PaneLinks::setReferenceLinesVisible(bool on)
{
    m_referenceLines = on;
    updateReferences();
}

std::optional<std::array<double, 3>> PaneLinks::crosshairPoint() const
{
    return m_crosshair ? std::optional<std::array<double, 3>>(m_crosshair->point) : std::nullopt;
}

void PaneLinks::crosshairAt(SeriesPane *pane, QPointF at)
{
    if (!pane->viewport()->hasImage())
        return;
    const ImageInfo &info = pane->viewport()->image().info;
    const std::optional<PatientPoint> point = patientPointAt(info, at);
    if (!point)
        return;
    if (pane != m_viewer->m_active)
        m_viewer->setActivePane(pane);
    m_crosshair = Crosshair{*point, m_viewer->keyOf(pane->study()), info.frameOfReferenceUid};
    const std::array<double, 3> from = m_offsets.value(m_crosshair->studyKey, std::array<double, 3>{0, 0, 0});
    for (SeriesPane *p : std::as_const(m_viewer->m_panes)) {
        if (p == pane || !p->viewport()->hasImage())
            continue;
        int nearest = -1;
        if (p->study() == pane->study()) {
            nearest = p->sliceNearest(info.frameOfReferenceUid, *point);
        } else if (m_sync) {
            // Another study, linked: the same place by patient position and the offset between the two.
            const std::array<double, 3> to = m_offsets.value(m_viewer->keyOf(p->study()), std::array<double, 3>{0, 0, 0});
            const std::array<double, 3> there{(*point)[0] + to[0] - from[0], (*point)[1] + to[1] - from[1], (*point)[2] + to[2] - from[2]};
            nearest = p->sliceNearestInPlane(p->sliceNormal(), there);
        }
        if (nearest >= 0 && nearest != p->sliceIndex())
            p->showSlice(nearest);
    }
    updateReferences();
}

void PaneLinks::updateReferences()
{
    const bool activeShown = m_viewer->m_active && m_viewer->m_active->viewport()->hasImage();
    for (SeriesPane *p : std::as_const(m_viewer->m_panes)) {
        ImageViewport *vp = p->viewport();
        if (!vp->hasImage()) {
            vp->layers()->setReferenceLines({});
            vp->layers()->setCrosshair(std::nullopt);
            continue;
        }
        const ImageInfo &info = vp->image().info;
        QList<QLineF> lines;
        if (m_referenceLines && activeShown && p != m_viewer->m_active) {
            if (const std::optional<QLineF> line = referenceLine(info, m_viewer->m_active->viewport()->image().info))
                lines << *line;
        }
        vp->layers()->setReferenceLines(lines);
        // The crosshair's mark on the slices that hold its point (within half a slice, at least a millimetre).
        std::optional<QPointF> mark;
        if (m_crosshair) {
            const QString key = m_viewer->keyOf(p->study());
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
