// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/volumes/reformat.h"

#include "volumes/reformatkernels.h"

#include <QObject>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentMap>

#include <algorithm>
#include <bitset>
#include <cmath>
#include <memory>
#include <numeric>
#include <type_traits>

namespace spectrum {

using namespace vec;

namespace {

/// The volume's axes (row, column, normal) with their spacings.
struct Axes
{
    Vector3 axis[3];
    double spacing[3];
};

Axes axesOf(const VolumeGeometry &g)
{
    return {{g.rowDirection, g.columnDirection, g.normal}, {g.spacing[0], g.spacing[1], g.spacing[2]}};
}

/// Index coordinates (column, row, slot) of a patient point, and of a direction (no origin).
Vector3 toIndex(const VolumeGeometry &g, const Vector3 &p)
{
    const Vector3 d = minus(p, g.origin);
    return {dot(d, g.rowDirection) / g.spacing[0], dot(d, g.columnDirection) / g.spacing[1], dot(d, g.normal) / g.spacing[2]};
}
Vector3 toIndexStep(const VolumeGeometry &g, const Vector3 &d)
{
    return {dot(d, g.rowDirection) / g.spacing[0], dot(d, g.columnDirection) / g.spacing[1], dot(d, g.normal) / g.spacing[2]};
}

/// The plane with `origin` at `point`, extended (in whole steps) to cover the volume's voxel centres.
ReformatPlane covering(const VolumeGeometry &g, const Vector3 &point, const Vector3 &u, const Vector3 &v, double su, double sv)
{
    double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
    for (int corner = 0; corner < 8; ++corner) {
        const Vector3 c = g.patientPoint(corner & 1 ? g.columns - 1 : 0, corner & 2 ? g.rows - 1 : 0, corner & 4 ? g.slotCount - 1 : 0);
        const Vector3 d = minus(c, point);
        const double a = dot(d, u) / su, b = dot(d, v) / sv;
        lo[0] = std::min(lo[0], a), hi[0] = std::max(hi[0], a);
        lo[1] = std::min(lo[1], b), hi[1] = std::max(hi[1], b);
    }
    const double i0 = std::ceil(lo[0] - 1e-4), i1 = std::floor(hi[0] + 1e-4), j0 = std::ceil(lo[1] - 1e-4), j1 = std::floor(hi[1] + 1e-4);
    ReformatPlane p;
    p.rowDirection = u;
    p.columnDirection = v;
    p.columnSpacing = su;
    p.rowSpacing = sv;
    p.columns = std::max(1, int(i1 - i0) + 1);
    p.rows = std::max(1, int(j1 - j0) + 1);
    p.origin = plus(point, plus(scaled(u, i0 * su), scaled(v, j0 * sv)));
    return p;
}

QString mm(double v) { return QString::number(v, 'f', std::abs(v - std::round(v)) < 0.05 ? 0 : 1); }

} // namespace

Vector3 ReformatPlane::normal() const { return unit(cross(rowDirection, columnDirection)); }

Vector3 ReformatPlane::pointAt(double c, double r) const
{
    return plus(origin, plus(scaled(rowDirection, c * columnSpacing), scaled(columnDirection, r * rowSpacing)));
}

QString slabModeName(SlabMode mode)
{
    switch (mode) {
    case SlabMode::Mip: return QStringLiteral("MIP");
    case SlabMode::MinIp: return QStringLiteral("MinIP");
    case SlabMode::Average: return QStringLiteral("average");
    }
    return {};
}

ReformatPlane standardPlane(const VolumeGeometry &g, PlaneOrientation orientation, const Vector3 &point)
{
    // The volume axis nearest to a patient direction, turned to point along it.
    const Axes axes = axesOf(g);
    auto nearest = [&](const Vector3 &want, int *which) {
        int best = 0;
        for (int k = 1; k < 3; ++k)
            if (std::abs(dot(axes.axis[k], want)) > std::abs(dot(axes.axis[best], want)))
                best = k;
        *which = best;
        return dot(axes.axis[best], want) < 0 ? scaled(axes.axis[best], -1) : axes.axis[best];
    };
    static const Vector3 left{1, 0, 0}, posterior{0, 1, 0}, inferior{0, 0, -1};
    Vector3 want[2] = {left, posterior};
    switch (orientation) {
    case PlaneOrientation::Axial: want[0] = left, want[1] = posterior; break;
    case PlaneOrientation::Coronal: want[0] = left, want[1] = inferior; break;
    case PlaneOrientation::Sagittal: want[0] = posterior, want[1] = inferior; break;
    }
    int a = 0, b = 0;
    const Vector3 u = nearest(want[0], &a);
    Vector3 v = nearest(want[1], &b);
    if (b == a) {
        // A volume turned so that one of its axes is nearest to both: take the nearest of the two others.
        const Vector3 rest[2] = {axes.axis[(a + 1) % 3], axes.axis[(a + 2) % 3]};
        const int k = std::abs(dot(rest[0], want[1])) >= std::abs(dot(rest[1], want[1])) ? 0 : 1;
        b = (a + 1 + k) % 3;
        v = dot(rest[k], want[1]) < 0 ? scaled(rest[k], -1) : rest[k];
    }
    // The point moved to the nearest voxel centre: the plane's pixels are then voxels.
    Vector3 index = toIndex(g, point);
    index = {std::clamp(std::round(index[0]), 0.0, double(g.columns - 1)), std::clamp(std::round(index[1]), 0.0, double(g.rows - 1)),
             std::clamp(std::round(index[2]), 0.0, double(g.slotCount - 1))};
    ReformatPlane p = covering(g, g.patientPoint(index[0], index[1], index[2]), u, v, axes.spacing[a], axes.spacing[b]);
    p.name = orientation == PlaneOrientation::Axial ? QObject::tr("axial") : orientation == PlaneOrientation::Coronal ? QObject::tr("coronal") : QObject::tr("sagittal");
    return p;
}

ReformatPlane planeThrough(const VolumeGeometry &g, const Vector3 &point, const Vector3 &rowDirection, const Vector3 &columnDirection)
{
    const Vector3 u = unit(rowDirection);
    // Gram–Schmidt: the column direction made perpendicular to the row direction.
    const Vector3 v = unit(minus(columnDirection, scaled(u, dot(columnDirection, u))));
    const double s = std::min({g.spacing[0], g.spacing[1], g.spacing[2]});
    ReformatPlane p = covering(g, point, u, v, s, s);
    p.name = QObject::tr("oblique");
    return p;
}

ReformattedImage reformat(const Volume &volume, const ReformatPlane &plane, QThreadPool *pool)
{
    constexpr int kMaxSlabSamples = 2001;  // a 1 m slab at 0.5 mm: more than any request the GUI or CLI allows
    const VolumeGeometry &g = volume.geometry();
    ReformattedImage out;
    const int w = std::max(0, plane.columns), h = std::max(0, plane.rows);
    out.pixels = PixelBuffer(volume.isSigned() ? PixelFormat::Gray16Signed : PixelFormat::Gray16, w, h, 1);
    out.absence = QByteArray(qsizetype(w) * h, '\0');

    // What may be read: the slots in at this moment.
    const std::vector<SlotState> states = volume.slotStates();
    std::vector<quint8> slotAbsence(states.size());
    bool allIn = true;
    for (size_t s = 0; s < states.size(); ++s) {
        slotAbsence[s] = states[s] == SlotState::Filled ? 0
            : states[s] == SlotState::Arriving        ? quint8(PixelAbsence::Arriving)
                                                      : quint8(PixelAbsence::Gap);
        allIn = allIn && slotAbsence[s] == 0;
    }

    // The slab: samples along the normal, as far apart as the volume's spacing along it (one voxel step where the
    // normal is one of its axes), centred on the plane.
    const Vector3 normal = plane.normal();
    const Vector3 normalIndex = toIndexStep(g, normal);
    const double perMm = std::sqrt(dot(normalIndex, normalIndex));  // index units per mm along the normal
    int samples = 1;
    double sampleMm = 0;
    if (plane.slabThickness > 0 && perMm > 0) {
        sampleMm = 1 / std::max({std::abs(normalIndex[0]), std::abs(normalIndex[1]), std::abs(normalIndex[2])});
        samples = std::clamp(2 * int(std::floor(plane.slabThickness / 2 / sampleMm + 1e-6)) + 1, 1, kMaxSlabSamples);
    }
    reformatting::CutJob job;
    job.voxels = volume.slotData(0);
    job.isSigned = volume.isSigned();
    job.nx = g.columns, job.ny = g.rows, job.nz = g.slotCount;
    job.slotAbsence = slotAbsence.data();
    job.allSlotsIn = allIn;
    job.width = w;
    const Vector3 first = plus(plane.origin, scaled(normal, -(samples - 1) / 2.0 * sampleMm));
    const Vector3 o = toIndex(g, first), cs = toIndexStep(g, scaled(plane.rowDirection, plane.columnSpacing)),
                  rs = toIndexStep(g, scaled(plane.columnDirection, plane.rowSpacing)), ss = toIndexStep(g, scaled(normal, sampleMm));
    for (int k = 0; k < 3; ++k) {
        job.origin[k] = o[k], job.columnStep[k] = cs[k], job.rowStep[k] = rs[k], job.sampleStep[k] = ss[k];
    }
    job.samples = samples;
    job.mode = plane.slabMode;
    job.interpolation = plane.interpolation;
    job.padding = volume.isSigned() ? -32768 : 0;  // the format's lowest: absent pixels keep it when no present one has it

    const int bandRows = 16, bands = (h + bandRows - 1) / bandRows;
    std::vector<reformatting::CutTally> tallies(size_t(std::max(bands, 0)));
    auto cutBand = [&](int band) {
        const int r0 = band * bandRows, r1 = std::min(h, r0 + bandRows);
        if (r0 < r1)
            reformatting::cutRows(job, r0, r1, reinterpret_cast<quint16 *>(out.pixels.frameData(0)) + qsizetype(r0) * w,
                                  reinterpret_cast<quint8 *>(out.absence.data()) + qsizetype(r0) * w, &tallies[size_t(band)]);
    };
    if (w > 0 && h > 0) {
        out.pixels.frameData(0);  // detach now, not from the workers
        if (pool && bands > 1) {
            QList<int> list(bands);
            std::iota(list.begin(), list.end(), 0);
            QtConcurrent::blockingMap(pool, list, cutBand);
        } else {
            for (int b = 0; b < bands; ++b)
                cutBand(b);
        }
    }

    // Absent pixels: counted (by the kernels, row by row), and given a value no present pixel has — the format's
    // lowest, which the kernels wrote there, when no present pixel holds it, else the highest when free, else the
    // first value unused.
    reformatting::CutTally tally;
    for (const reformatting::CutTally &t : tallies)
        tally.add(t);
    const quint8 *ab = reinterpret_cast<const quint8 *>(out.absence.constData());
    const qsizetype n = qsizetype(w) * h;
    for (int kind = 0; kind < 4; ++kind)
        out.absentPixels[kind] = int(tally.pixels[kind]);
    if (out.absentPixels[0] < n) {
        auto pad = [&](auto *px, int lowest, int highest) {
            using T = std::remove_pointer_t<decltype(px)>;
            if (!tally.paddingUsed) {
                out.paddingValue = lowest;  // already written
                return;
            }
            int hi = lowest;
            for (qsizetype i = 0; i < n; ++i)
                hi = std::max(hi, ab[i] == 0 ? int(px[i]) : hi);
            int free = highest;
            if (hi >= highest) {
                std::unique_ptr<std::bitset<65536>> used(new std::bitset<65536>);
                for (qsizetype i = 0; i < n; ++i)
                    if (ab[i] == 0)
                        used->set(size_t(int(px[i]) - lowest));
                free = 0;
                while (free < 65535 && used->test(size_t(free)))
                    ++free;
                out.paddingUnique = !used->test(size_t(free));
                free += lowest;
            }
            out.paddingValue = free;
            for (qsizetype i = 0; i < n; ++i)
                px[i] = ab[i] != 0 ? T(free) : px[i];
        };
        if (volume.isSigned())
            pad(reinterpret_cast<qint16 *>(out.pixels.frameData(0)), -32768, 32767);
        else
            pad(reinterpret_cast<quint16 *>(out.pixels.frameData(0)), 0, 65535);
    } else {
        out.absence.clear();
    }

    // What the image is.
    ImageInfo &info = out.info;
    info = volume.valueInfo();
    info.identity.sopInstanceUid.clear();
    info.columns = w;
    info.rows = h;
    info.frames = 1;
    info.rowSpacing = plane.rowSpacing;
    info.columnSpacing = plane.columnSpacing;
    info.hasPosition = true;
    info.imagePosition = plane.origin;
    info.imageOrientation = {plane.rowDirection[0], plane.rowDirection[1], plane.rowDirection[2],
                             plane.columnDirection[0], plane.columnDirection[1], plane.columnDirection[2]};
    // What the slab is: as asked, unless it had to be capped or is thinner than one step (then the plane alone).
    out.slabSamples = samples;
    const double slabMm = samples > 1 ? std::min(plane.slabThickness, samples * sampleMm) : 0;
    info.sliceThickness = slabMm;
    info.frameOfReferenceUid = g.frameOfReferenceUid;
    QStringList what{plane.name.isEmpty() ? QObject::tr("plane") : plane.name};
    if (samples > 1)
        what << QObject::tr("%1 %2 mm").arg(slabModeName(plane.slabMode), mm(slabMm));
    else if (plane.slabThickness > 0)
        what << QObject::tr("slab thinner than one voxel (%1 mm): the plane alone").arg(mm(plane.slabThickness));
    const bool onGrid = [&] {
        for (int k = 0; k < 3; ++k)
            if (std::abs(cs[k] - std::round(cs[k])) > 1e-4 || std::abs(rs[k] - std::round(rs[k])) > 1e-4 || std::abs(o[k] - std::round(o[k])) > 1e-4)
                return false;
        return true;
    }();
    what << (onGrid ? QObject::tr("voxels as acquired") : plane.interpolation == Interpolation::Trilinear ? QObject::tr("trilinear") : QObject::tr("nearest"));
    out.description = what.join(QStringLiteral(" · "));
    info.notes = volume.notes();
    if (out.absentPixels[int(PixelAbsence::Gap)] > 0)
        info.notes << QObject::tr("parts of this plane need missing slices: left blank, not interpolated across");
    if (out.absentPixels[int(PixelAbsence::Arriving)] > 0)
        info.notes << QObject::tr("parts of this plane need slices still arriving");
    return out;
}

} // namespace spectrum
