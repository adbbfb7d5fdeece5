// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/volumes/volumegeometry.h"

#include "spectrum/imaging/volumes/planegeometry.h"

#include <QObject>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace spectrum {

using namespace vec;

namespace {

bool sameOrientation(const std::array<double, 6> &a, const std::array<double, 6> &b)
{
    for (int i = 0; i < 6; ++i)
        if (std::abs(a[i] - b[i]) > 1e-3)
            return false;
    return true;
}

bool sameSpacing(double a, double b)
{
    return std::abs(a - b) <= 1e-4 * std::max(std::abs(a), std::abs(b));
}

QString mm(double v)
{
    return QString::number(v, 'f', std::abs(v) < 10 ? 2 : 1);
}

} // namespace

Vector3 VolumeGeometry::patientPoint(double c, double r, double s) const
{
    Vector3 p = origin;
    for (int i = 0; i < 3; ++i)
        p[i] += c * spacing[0] * rowDirection[i] + r * spacing[1] * columnDirection[i] + s * spacing[2] * normal[i];
    return p;
}

QList<VolumeSlice> volumeSlices(const QString &key, const ImageInfo &info)
{
    QList<VolumeSlice> slices;
    for (int f = 0; f < std::max(1, info.frames); ++f)
        slices << VolumeSlice{key, f, info.frames > 1 ? info.frame(f) : info};
    return slices;
}

VolumeGeometry volumeGeometry(const QList<VolumeSlice> &slices, SlotSpacing slotSpacing)
{
    VolumeGeometry g;
    auto refuse = [&g](const QString &why) {
        g.ok = false;
        g.refusal = why;
        g.slotSlice.clear();
        g.missing.clear();
        return g;
    };
    QList<int> usable;
    for (int i = 0; i < slices.size(); ++i) {
        if (hasPlaneGeometry(slices[i].info))
            usable << i;
        else
            g.notes << QObject::tr("%1 has no position, orientation or pixel spacing: left out of the volume").arg(slices[i].key);
    }
    if (usable.size() < 2)
        return refuse(QObject::tr("fewer than two slices with a position, an orientation and a pixel spacing"));
    const ImageInfo &ref = slices[usable.first()].info;
    g.columns = ref.columns;
    g.rows = ref.rows;
    g.rowDirection = unit({ref.imageOrientation[0], ref.imageOrientation[1], ref.imageOrientation[2]});
    g.columnDirection = unit({ref.imageOrientation[3], ref.imageOrientation[4], ref.imageOrientation[5]});
    g.normal = unit(cross(g.rowDirection, g.columnDirection));
    g.frameOfReferenceUid = ref.frameOfReferenceUid;
    for (int i : std::as_const(usable)) {
        const ImageInfo &s = slices[i].info;
        if (!sameOrientation(s.imageOrientation, ref.imageOrientation))
            return refuse(QObject::tr("its slices lie in more than one orientation (%1 and %2): not one stack").arg(slices[usable.first()].key, slices[i].key));
        if (s.rows != ref.rows || s.columns != ref.columns)
            return refuse(QObject::tr("its slices are of different sizes (%1 × %2 and %3 × %4)").arg(ref.columns).arg(ref.rows).arg(s.columns).arg(s.rows));
        if (!sameSpacing(s.rowSpacing, ref.rowSpacing) || !sameSpacing(s.columnSpacing, ref.columnSpacing))
            return refuse(QObject::tr("its slices have different pixel spacings"));
        if (s.frameOfReferenceUid != ref.frameOfReferenceUid)
            return refuse(QObject::tr("its slices lie in different frames of reference: their positions cannot be compared"));
    }
    // Along the normal, in order.
    auto along = [&](int i) { return dot(slices[i].info.imagePosition, g.normal); };
    std::stable_sort(usable.begin(), usable.end(), [&](int a, int b) { return along(a) < along(b); });
    const Vector3 first = slices[usable.first()].info.imagePosition;
    const double d0 = along(usable.first());
    QList<double> steps;
    for (int k = 1; k < usable.size(); ++k) {
        const double step = along(usable[k]) - along(usable[k - 1]);
        if (step < 0.01)
            return refuse(QObject::tr("two of its slices lie at one place (%1 mm along the normal): the series holds more than one stack "
                                      "(acquisitions, phases or echoes); it is not made into one volume")
                              .arg(mm(along(usable[k]))));
        steps << step;
    }
    // A tilted gantry's stack is sheared: each slice's first pixel moves in the plane as the slices go.
    const double inPlaneTolerance = 0.1 * std::min(ref.rowSpacing, ref.columnSpacing);
    for (int k = 1; k < usable.size(); ++k) {
        const double d = along(usable[k]) - d0;
        const Vector3 offset = minus(minus(slices[usable[k]].info.imagePosition, first), {d * g.normal[0], d * g.normal[1], d * g.normal[2]});
        const double shift = std::sqrt(dot(offset, offset));
        if (shift > inPlaneTolerance) {
            const double degrees = std::atan2(shift, d) * 180.0 / M_PI;
            return refuse(QObject::tr("its slices are sheared — each lies %1 mm further across than the one before it, a gantry tilt of %2° — "
                                      "and tilted stacks are not reformatted here")
                              .arg(mm(shift / std::max(1, k)), QString::number(degrees, 'f', 1)));
        }
    }
    // The spacing: the usual step between neighbours (the lower median: a gap is a longer step, never a shorter
    // one), never Slice Thickness.
    QList<double> sorted = steps;
    std::sort(sorted.begin(), sorted.end());
    const double spacing = slotSpacing == SlotSpacing::Finest ? sorted.first() : sorted[(sorted.size() - 1) / 2];
    g.spacing = {ref.columnSpacing, ref.rowSpacing, spacing};
    g.origin = first;
    int last = 0;
    QList<std::pair<int, int>> placed;  // slot, slice
    for (int i : std::as_const(usable)) {
        const double at = (along(i) - d0) / spacing;
        const int slot = int(std::lround(at));
        if (std::abs(at - slot) > 0.1)
            g.unevenSpacing << QObject::tr("%1 lies %2 mm off its place in the %3 mm spacing (shown in slot %4)")
                                   .arg(slices[i].key, mm((at - slot) * spacing), mm(spacing)).arg(slot + 1);
        if (!placed.isEmpty() && placed.last().first == slot)
            return refuse(QObject::tr("its slices are spaced too unevenly to share one spacing (%1 mm usual)").arg(mm(spacing)));
        placed << std::make_pair(slot, i);
        last = slot;
    }
    g.slotCount = last + 1;
    g.slotSlice = QList<int>(g.slotCount, -1);
    for (const auto &[slot, slice] : std::as_const(placed))
        g.slotSlice[slot] = slice;
    for (int s = 0; s < g.slotCount; ++s)
        if (g.slotSlice[s] < 0)
            g.missing << s;
    g.ok = true;
    return g;
}

} // namespace spectrum
