// SPDX-License-Identifier: Apache-2.0
// Where a pane's slices lie: learnt from the listing (the archive's or the cache's places) and from each header as
// it is decoded, along one stack normal; the slice nearest a point, for the viewer's linked scrolling and the
// reference lines of the other panes.

#include "viewer/seriespane.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace spectrum {

namespace {
double dot(const std::array<double, 3> &a, const std::array<double, 3> &b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
} // namespace

void SeriesPane::learnGeometry(int index, const ImageInfo &info)
{
    if (!info.hasPosition || info.frameOfReferenceUid.isEmpty())
        return;
    if (m_placedByHeader.remove(index))
        m_centres.remove(index);  // its centre now, which places it for panes of any orientation
    if (placeSlice(index, info.frameOfReferenceUid, info.sliceNormal(), info.centre(), false))
        Q_EMIT sliceGeometryLearned();
}

bool SeriesPane::placeSlice(int index, const QString &frame, const std::array<double, 3> &normal, const std::array<double, 3> &point, bool fromHeader)
{
    // A point of each slice's plane (its centre once decoded, its first pixel from its header): only where the
    // plane lies along the stack's normal counts — the same for every point of a plane parallel to the stack,
    // which a point from the header must be (0.26° at most: under a millimetre across a 250 mm image).
    if (m_centres.contains(index))
        return false;
    if (m_centres.isEmpty()) {
        m_frameOfReference = frame;
        m_normal = normal;
    } else if (frame != m_frameOfReference || std::abs(dot(normal, m_normal)) < (fromHeader ? 0.99999 : 0.999)) {
        return false;  // not one stack (a localiser among axials): its slices are not placed along one normal
    }
    m_centres.insert(index, point);
    if (fromHeader)
        m_placedByHeader.insert(index);
    return true;
}

std::optional<std::array<double, 3>> SeriesPane::stackNormal() const
{
    if (m_centres.isEmpty())
        return std::nullopt;
    return m_normal;
}

void SeriesPane::learnPlaces(int reference)
{
    if (m_series < 0)
        return;
    const QList<InstanceRef> &instances = m_study->series[m_series].instances;
    // Nothing is said here: the viewer follows once the pane has its slice (a follow() from in here would move a
    // pane that has none yet).
    if (reference >= 0 && reference < instances.size() && instances[reference].hasPlace)
        placeSlice(reference, instances[reference].frameOfReferenceUid, instances[reference].normal, instances[reference].position, true);
    for (int i = 0; i < instances.size(); ++i) {
        if (instances[i].hasPlace)
            placeSlice(i, instances[i].frameOfReferenceUid, instances[i].normal, instances[i].position, true);
    }
}

bool SeriesPane::placeInView(QString *frame, std::array<double, 3> *normal, std::array<double, 3> *point, bool *centre) const
{
    if (m_series < 0 || m_series >= m_study->series.size() || m_slice < 0 || m_slice >= m_study->series[m_series].instances.size())
        return false;
    const InstanceRef &ref = m_study->series[m_series].instances[m_slice];
    if (m_viewport->hasImage() && m_viewport->image().info.identity.sopInstanceUid == ref.sopInstanceUid) {
        const ImageInfo &info = m_viewport->image().info;
        if (!info.hasPosition)
            return false;
        *frame = info.frameOfReferenceUid;
        *normal = info.sliceNormal();
        *point = info.centre();
        *centre = true;
        return true;
    }
    if (!ref.hasPlace)
        return false;
    *frame = ref.frameOfReferenceUid;
    *normal = ref.normal;
    *point = ref.position;
    *centre = false;
    return true;
}

int SeriesPane::sliceNearestInPlane(const std::array<double, 3> &normal, const std::array<double, 3> &point) const
{
    if (m_centres.isEmpty() || std::abs(dot(normal, m_normal)) < 0.99)
        return -1;
    double at = 0;
    const int nearest = sliceNearest(m_frameOfReference, point, &at);
    if (nearest >= 0 && sliceCount() > 1 && (at < -1 || at > sliceCount()))
        return kBeyondStack;  // more than a slice past either end: no slice lies there
    return nearest;
}

int SeriesPane::sliceNearest(const QString &frame, const std::array<double, 3> &point, double *unclamped) const
{
    if (frame.isEmpty() || frame != m_frameOfReference || m_centres.isEmpty())
        return -1;
    if (sliceCount() == 1)
        return 0;
    if (m_centres.size() < 2)
        return -1;
    // Piecewise linear in the slices known so far: between the two known neighbours of the point along the
    // normal, or beyond the outermost pair on the point's side.
    const double d = dot(m_normal, point);
    std::vector<std::pair<int, double>> known;  // slice index, position along the normal; by index
    for (auto it = m_centres.constBegin(); it != m_centres.constEnd(); ++it)
        known.emplace_back(it.key(), dot(m_normal, it.value()));
    size_t pair = std::abs(d - known.front().second) <= std::abs(d - known.back().second) ? 0 : known.size() - 2;
    for (size_t i = 0; i + 1 < known.size(); ++i) {
        if ((d - known[i].second) * (d - known[i + 1].second) <= 0) {
            pair = i;
            break;
        }
    }
    const auto [i0, a0] = known[pair];
    const auto [i1, a1] = known[pair + 1];
    if (std::abs(a1 - a0) < 1e-6)
        return -1;
    const double at = i0 + (d - a0) / (a1 - a0) * (i1 - i0);
    if (unclamped)
        *unclamped = at;
    return int(std::clamp<double>(std::lround(at), 0, sliceCount() - 1));
}

} // namespace spectrum
