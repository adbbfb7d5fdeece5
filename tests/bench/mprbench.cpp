// SPDX-License-Identifier: Apache-2.0
// Reformatting benchmark, Spectrum's side (tests/bench/mpr.sh runs VTK's side on the same volume and prints the
// ratios): a volume read from a raw file of 16-bit signed voxels (slot after slot, row after row), then, each
// repeated and timed:
//   oblique   a double-oblique thin plane through the centre, trilinear, one thread
//   mip20     a 20 mm MIP slab, coronal, one thread
//   coronal   a thin coronal plane, one thread (what a crosshair drag redraws)
//   oblique-pool, mip20-pool: the same on the compute pool (every core)
// Prints one line per case: "case best_ms median_ms", and the planes' geometry as `plane` lines the VTK peer reads.

#include "spectrum/imaging/volumes/reformat.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QThread>
#include <QThreadPool>

#include <algorithm>
#include <cstdio>
#include <cstring>

using namespace spectrum;

namespace {

struct Stats
{
    double best, median;
};

template <typename F>
Stats timeIt(int repeats, const F &f)
{
    QList<double> ms;
    for (int i = 0; i < repeats; ++i) {
        QElapsedTimer t;
        t.start();
        f();
        ms << t.nsecsElapsed() / 1e6;
    }
    std::sort(ms.begin(), ms.end());
    return {ms.first(), ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2};
}

void printPlane(const char *name, const ReformatPlane &p)
{
    std::printf("plane %s %.9g %.9g %.9g  %.9g %.9g %.9g  %.9g %.9g %.9g  %.9g %.9g %d %d %.9g\n", name, p.origin[0], p.origin[1], p.origin[2],
                p.rowDirection[0], p.rowDirection[1], p.rowDirection[2], p.columnDirection[0], p.columnDirection[1], p.columnDirection[2],
                p.columnSpacing, p.rowSpacing, p.columns, p.rows, p.slabThickness);
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() < 8) {
        std::fprintf(stderr, "usage: spectrum-mprbench RAW COLUMNS ROWS SLOTS COLUMN_MM ROW_MM SLOT_MM [REPEATS]\n");
        return 2;
    }
    const int nx = args[2].toInt(), ny = args[3].toInt(), nz = args[4].toInt();
    const double sx = args[5].toDouble(), sy = args[6].toDouble(), sz = args[7].toDouble();
    const int repeats = args.size() > 8 ? args[8].toInt() : 7;
    QFile raw(args[1]);
    if (!raw.open(QIODevice::ReadOnly) || raw.size() != qint64(nx) * ny * nz * 2) {
        std::fprintf(stderr, "%s: not %d × %d × %d 16-bit voxels\n", qPrintable(args[1]), nx, ny, nz);
        return 1;
    }
    const uchar *voxels = raw.map(0, raw.size());
    QList<VolumeSlice> slices;
    for (int z = 0; z < nz; ++z) {
        VolumeSlice s;
        s.key = QString::number(z);
        ImageInfo &i = s.info;
        i.columns = nx, i.rows = ny;
        i.columnSpacing = sx, i.rowSpacing = sy;
        i.hasPosition = true;
        i.imagePosition = {0, 0, z * sz};
        i.imageOrientation = {1, 0, 0, 0, 1, 0};
        i.bitsAllocated = 16, i.bitsStored = 16, i.highBit = 15;
        i.isSigned = true;
        slices << s;
    }
    const VolumeGeometry g = volumeGeometry(slices);
    Result<std::shared_ptr<Volume>> made = Volume::create(g, slices);
    if (!made.isOk()) {
        std::fprintf(stderr, "%s\n", qPrintable(made.error().toString()));
        return 1;
    }
    Volume &v = *made.value();
    for (int z = 0; z < nz; ++z) {
        PixelBuffer slice(PixelFormat::Gray16Signed, nx, ny, 1);
        std::memcpy(slice.frameData(0), voxels + qsizetype(z) * nx * ny * 2, size_t(nx) * ny * 2);
        v.fill(z, slice);
    }
    {
        // Whether the system gave the volume huge pages (transparent, on request): planes across the slots run
        // about twice as fast with them.
        QFile rollup(QStringLiteral("/proc/self/smaps_rollup"));
        if (rollup.open(QIODevice::ReadOnly))
            for (const QByteArray &line : rollup.readAll().split('\n'))
                if (line.startsWith("AnonHugePages:"))
                    std::printf("present huge pages %s\n", line.mid(14).trimmed().constData());
    }
    const Vector3 centre = g.patientPoint((nx - 1) / 2.0, (ny - 1) / 2.0, (nz - 1) / 2.0);
    ReformatPlane oblique = planeThrough(g, centre, {1, 0.3, 0.2}, {0.1, 1, -0.4});
    // The same size as the acquired slices, centred: a reader's view, not the whole bounding plane.
    oblique.origin = {centre[0] - (nx / 2.0) * sx * oblique.rowDirection[0] - (ny / 2.0) * sy * oblique.columnDirection[0],
                      centre[1] - (nx / 2.0) * sx * oblique.rowDirection[1] - (ny / 2.0) * sy * oblique.columnDirection[1],
                      centre[2] - (nx / 2.0) * sx * oblique.rowDirection[2] - (ny / 2.0) * sy * oblique.columnDirection[2]};
    oblique.columns = nx, oblique.rows = ny, oblique.columnSpacing = sx, oblique.rowSpacing = sy;
    ReformatPlane mip = standardPlane(g, PlaneOrientation::Coronal, centre);
    mip.slabThickness = 20;
    const ReformatPlane coronal = standardPlane(g, PlaneOrientation::Coronal, centre);
    printPlane("oblique", oblique);
    printPlane("mip20", mip);
    printPlane("coronal", coronal);

    QThreadPool pool;
    pool.setMaxThreadCount(QThread::idealThreadCount());
    const ReformattedImage check = reformat(v, oblique);
    std::printf("present oblique %d of %d\n", check.absentPixels[0], oblique.columns * oblique.rows);
    const struct
    {
        const char *name;
        const ReformatPlane &plane;
        QThreadPool *pool;
    } cases[] = {{"oblique", oblique, nullptr}, {"mip20", mip, nullptr}, {"coronal", coronal, nullptr}, {"oblique-pool", oblique, &pool}, {"mip20-pool", mip, &pool}};
    // MPRBENCH_ONLY=oblique (a case's name) runs that case alone: for a profiler.
    const QByteArray only = qgetenv("MPRBENCH_ONLY");
    for (const auto &c : cases) {
        if (!only.isEmpty() && only != c.name)
            continue;
        const Stats s = timeIt(repeats, [&] { reformat(v, c.plane, c.pool); });
        std::printf("%s %.3f %.3f\n", c.name, s.best, s.median);
        std::fflush(stdout);
    }
    return 0;
}
