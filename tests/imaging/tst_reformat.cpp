// SPDX-License-Identifier: Apache-2.0
// Reformatting (MPR): planes and slabs cut through a volume filled as slices come. The standard planes are the
// voxels themselves; oblique planes interpolate (checked where trilinear interpolation is exact: a volume whose
// values are a linear function of position); a missing slice is never interpolated across and a slice still
// arriving is shown as such; rescales are held exactly or refused; a volume larger than its memory lives on disk;
// both instruction-set versions agree. Against software that is not ours: `spectrum-cli reformat` on a pydicom
// series, checked by numpy (standard planes and slabs, exactly; every pixel's point on a voxel centre within
// 0.1 mm) and by VTK's vtkImageReslice (oblique planes, within one grey level) — tests/support/mpr_check.py.

#include "spectrum/imaging/volumes/reformat.h"

#include "filters/kernels.h"  // private: to run the baseline and the wide versions side by side
#include "testsupport.h"

#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>
#include <QtTest>

#include <cmath>

using namespace spectrum;

namespace {

constexpr int kCols = 7, kRows = 5;
constexpr double kColSpacing = 0.5, kRowSpacing = 0.8;

/// An axial slice of the test volume at slot `slot` (z = 10 + 2·slot mm).
VolumeSlice slice(int slot, double intercept = -1024, double slope = 1, bool isSigned = false)
{
    VolumeSlice s;
    s.key = QStringLiteral("slot%1").arg(slot);
    ImageInfo &i = s.info;
    i.columns = kCols, i.rows = kRows;
    i.columnSpacing = kColSpacing, i.rowSpacing = kRowSpacing;
    i.hasPosition = true;
    i.imagePosition = {-5, 7, 10 + 2.0 * slot};
    i.imageOrientation = {1, 0, 0, 0, 1, 0};
    i.frameOfReferenceUid = QStringLiteral("2.25.9");
    i.bitsAllocated = 16, i.bitsStored = 12, i.highBit = 11;
    i.isSigned = isSigned;
    i.rescaleIntercept = intercept, i.rescaleSlope = slope;
    i.rescaleType = QStringLiteral("HU");
    i.identity.modality = QStringLiteral("CT");
    return s;
}

/// The stored value at (x, y) of slot z: distinct everywhere.
int valueAt(int x, int y, int z) { return 1000 + x + 10 * y + 100 * z; }

PixelBuffer pixelsOf(int z, const std::function<int(int, int, int)> &f = valueAt, PixelFormat format = PixelFormat::Gray16)
{
    PixelBuffer p(format, kCols, kRows, 1);
    for (int y = 0; y < kRows; ++y)
        for (int x = 0; x < kCols; ++x) {
            const int v = f(x, y, z);
            if (format == PixelFormat::Gray16Signed)
                reinterpret_cast<qint16 *>(p.frameData(0))[y * kCols + x] = qint16(v);
            else
                reinterpret_cast<quint16 *>(p.frameData(0))[y * kCols + x] = quint16(v);
        }
    return p;
}

struct Made
{
    QList<VolumeSlice> slices;
    std::shared_ptr<Volume> volume;
};

/// A volume of the slots given (others missing), filled unless `fill` is false.
Made makeVolume(const QList<int> &places, bool fill = true, qint64 memoryLimit = qint64(1) << 40, const QString &spill = QString())
{
    Made m;
    for (int z : places)
        m.slices << slice(z);
    const VolumeGeometry g = volumeGeometry(m.slices);
    if (!g.ok)
        qFatal("%s", qPrintable(g.refusal));
    Result<std::shared_ptr<Volume>> v = Volume::create(g, m.slices, memoryLimit, spill);
    if (!v.isOk())
        qFatal("%s", qPrintable(v.error().toString()));
    m.volume = v.value();
    if (fill)
        for (int i = 0; i < m.slices.size(); ++i)
            if (Error e = m.volume->fill(i, pixelsOf(places[i])); e.isError())
                qFatal("%s", qPrintable(e.toString()));
    return m;
}

int pixel(const ReformattedImage &r, int x, int y)
{
    return r.pixels.valueAt(x, y);
}

double dotv(const Vector3 &a, const Vector3 &b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

QString cli() { return QStringLiteral(SPECTRUM_CLI_EXECUTABLE); }

/// Runs a program; its output on failure.
bool run(const QString &program, const QStringList &args, QString *output = nullptr, int timeoutMs = 120000)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
    }
    const QString out = QString::fromUtf8(p.readAll());
    if (output)
        *output = out;
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        qWarning("%s %s:\n%s", qPrintable(program), qPrintable(args.join(QLatin1Char(' '))), qPrintable(out));
        return false;
    }
    return true;
}

QString mprCheck() { return QStringLiteral(MPR_CHECK_SCRIPT); }

} // namespace

class TestReformat : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void standardPlanesAreTheVoxels()
    {
        const Made m = makeVolume({0, 1, 2, 3, 4, 5});
        const VolumeGeometry &g = m.volume->geometry();
        // Through the voxel (x 3, y 2, slot 4), given a little off its centre.
        Vector3 at = g.patientPoint(3.2, 1.9, 4.1);

        const ReformatPlane coronal = standardPlane(g, PlaneOrientation::Coronal, at);
        QCOMPARE(coronal.columns, kCols);
        QCOMPARE(coronal.rows, 6);
        QCOMPARE(coronal.columnSpacing, kColSpacing);
        QCOMPARE(coronal.rowSpacing, 2.0);
        QCOMPARE(coronal.columnDirection[2], -1.0);  // head at the top: slots from the last down
        const ReformattedImage c = reformat(*m.volume, coronal);
        QVERIFY(c.absence.isEmpty());
        for (int r = 0; r < 6; ++r)
            for (int x = 0; x < kCols; ++x)
                QCOMPARE(pixel(c, x, r), valueAt(x, 2, 5 - r));
        QCOMPARE(c.info.imagePosition[1], 7 + 2 * kRowSpacing);
        QCOMPARE(c.info.imagePosition[2], 20.0);
        QCOMPARE(c.info.rescaleIntercept, -1024.0);
        QVERIFY(c.info.identity.sopInstanceUid.isEmpty());
        QVERIFY2(c.description.contains(QLatin1String("voxels as acquired")), qPrintable(c.description));

        const ReformattedImage s = reformat(*m.volume, standardPlane(g, PlaneOrientation::Sagittal, at));
        QCOMPARE(s.pixels.width(), kRows);
        QCOMPARE(s.pixels.height(), 6);
        for (int r = 0; r < 6; ++r)
            for (int y = 0; y < kRows; ++y)
                QCOMPARE(pixel(s, y, r), valueAt(3, y, 5 - r));

        const ReformattedImage a = reformat(*m.volume, standardPlane(g, PlaneOrientation::Axial, at));
        QCOMPARE(a.pixels.width(), kCols);
        QCOMPARE(a.pixels.height(), kRows);
        for (int y = 0; y < kRows; ++y)
            for (int x = 0; x < kCols; ++x)
                QCOMPARE(pixel(a, x, y), valueAt(x, y, 4));
        QCOMPARE(a.info.imagePosition[2], 18.0);

        // Every pixel's point is its voxel's.
        for (int r = 0; r < 6; ++r) {
            const Vector3 p = coronal.pointAt(4, r), q = g.patientPoint(4, 2, 5 - r);
            QVERIFY(std::abs(p[0] - q[0]) + std::abs(p[1] - q[1]) + std::abs(p[2] - q[2]) < 1e-9);
        }
    }

    void slabsProjectTheVoxelsAcrossThem()
    {
        const Made m = makeVolume({0, 1, 2, 3, 4, 5, 6, 7});
        const VolumeGeometry &g = m.volume->geometry();
        // An axial slab 4 mm thick at slot 3: slots 2, 3, 4 (2 mm apart).
        ReformatPlane p = standardPlane(g, PlaneOrientation::Axial, g.patientPoint(0, 0, 3));
        p.slabThickness = 4;
        for (SlabMode mode : {SlabMode::Mip, SlabMode::MinIp, SlabMode::Average}) {
            p.slabMode = mode;
            const ReformattedImage r = reformat(*m.volume, p);
            QVERIFY(r.absence.isEmpty());
            QCOMPARE(r.info.sliceThickness, 4.0);
            QVERIFY2(r.description.contains(slabModeName(mode) + QLatin1String(" 4 mm")), qPrintable(r.description));
            for (int y = 0; y < kRows; ++y)
                for (int x = 0; x < kCols; ++x) {
                    const int expected = mode == SlabMode::Mip ? valueAt(x, y, 4) : mode == SlabMode::MinIp ? valueAt(x, y, 2) : valueAt(x, y, 3);
                    QCOMPARE(pixel(r, x, y), expected);
                }
        }
        // A coronal slab 1.6 mm thick: rows y 1, 2, 3 (0.8 mm apart) of every slot; the mean of 1, 2 and 3 rows
        // away is exact; at the volume's edge the slab holds what lies inside.
        ReformatPlane c = standardPlane(g, PlaneOrientation::Coronal, g.patientPoint(0, 0, 0));
        c.slabThickness = 1.6;
        c.slabMode = SlabMode::Average;
        const ReformattedImage edge = reformat(*m.volume, c);
        for (int x = 0; x < kCols; ++x)
            QCOMPARE(pixel(edge, x, 7), (valueAt(x, 0, 0) + valueAt(x, 1, 0)) / 2);  // rows 0 and 1 only (their mean is whole)
    }

    void aMissingSliceIsNeverInterpolatedAcross()
    {
        const Made m = makeVolume({0, 1, 2, 4, 5});  // slot 3 missing
        const VolumeGeometry &g = m.volume->geometry();
        QCOMPARE(g.missing, QList<int>{3});
        QCOMPARE(m.volume->slotState(3), SlotState::Missing);
        const ReformattedImage c = reformat(*m.volume, standardPlane(g, PlaneOrientation::Coronal, g.patientPoint(2, 2, 2)));
        QCOMPARE(c.absentPixels[int(PixelAbsence::Gap)], kCols);
        for (int x = 0; x < kCols; ++x) {
            QVERIFY(!c.isPresent(x, 2));  // row 2 from the top is slot 3
            QCOMPARE(pixel(c, x, 2), c.paddingValue);
            QVERIFY(c.isPresent(x, 1) && c.isPresent(x, 3));
        }
        QVERIFY(c.paddingValue != valueAt(0, 2, 2));
        QVERIFY(c.info.notes.join(QLatin1Char(' ')).contains(QLatin1String("missing")));

        // An oblique plane: every pixel that would mix slot 3 in is absent, the others are interpolated.
        const Vector3 centre = g.patientPoint(3, 2, 2.5);
        ReformatPlane o = planeThrough(g, centre, {0.2, 0, 1}, {0, 1, 0});  // across the slots
        const ReformattedImage ob = reformat(*m.volume, o);
        int checked = 0, interpolated = 0;
        for (int r = 0; r < o.rows; ++r)
            for (int col = 0; col < o.columns; ++col) {
                const Vector3 p = o.pointAt(col, r);
                const double ix = (p[0] + 5) / kColSpacing, iy = (p[1] - 7) / kRowSpacing, slot = (p[2] - 10) / 2;
                const bool inside = ix > 1e-3 && ix < kCols - 1 - 1e-3 && iy > 1e-3 && iy < kRows - 1 - 1e-3 && slot > 1e-3 && slot < 5 - 1e-3;
                if (!inside)
                    continue;
                if (slot > 2 + 1e-3 && slot < 4 - 1e-3) {
                    QCOMPARE(ob.absence[r * o.columns + col], char(PixelAbsence::Gap));
                    ++checked;
                } else if (slot < 2 - 1e-3 || slot > 4 + 1e-3) {
                    QVERIFY(ob.isPresent(col, r));
                    ++interpolated;
                }
            }
        QVERIFY(interpolated > 0);
        QVERIFY(checked > 0);

        // A slab across the gap hides nothing: its pixels are absent too.
        ReformatPlane slab = standardPlane(g, PlaneOrientation::Axial, g.patientPoint(0, 0, 2));
        slab.slabThickness = 4;
        QCOMPARE(reformat(*m.volume, slab).absentPixels[int(PixelAbsence::Gap)], kCols * kRows);
    }

    void slicesStillArrivingAreShownAsSuch()
    {
        Made m = makeVolume({0, 1, 2, 3, 4, 5}, false);
        const VolumeGeometry &g = m.volume->geometry();
        const ReformatPlane coronal = standardPlane(g, PlaneOrientation::Coronal, g.patientPoint(1, 1, 1));
        ReformattedImage c = reformat(*m.volume, coronal);
        QCOMPARE(c.absentPixels[int(PixelAbsence::Arriving)], kCols * 6);
        QVERIFY(c.info.notes.join(QLatin1Char(' ')).contains(QLatin1String("arriving")));
        // Slices come in any order, filled from other threads while planes are cut.
        QThreadPool pool;
        pool.setMaxThreadCount(2);
        QList<QFuture<Error>> fills;
        for (int i : {4, 0, 2}) {
            fills << QtConcurrent::run(&pool, [&m, i] { return m.volume->fill(i, pixelsOf(i)); });
            reformat(*m.volume, coronal, &pool);  // while they fill: reads only slots already in
        }
        for (QFuture<Error> &f : fills)
            QVERIFY(!f.result().isError());
        QCOMPARE(m.volume->filledSlots(), 3);
        c = reformat(*m.volume, coronal);
        for (int r = 0; r < 6; ++r) {
            const int slot = 5 - r;
            const bool in = slot == 0 || slot == 2 || slot == 4;
            for (int x = 0; x < kCols; ++x) {
                QCOMPARE(c.isPresent(x, r), in);
                if (in)
                    QCOMPARE(pixel(c, x, r), valueAt(x, 1, slot));
                else
                    QCOMPARE(c.absence[r * kCols + x], char(PixelAbsence::Arriving));
            }
        }
        // A slice that cannot be decoded leaves its slot a gap, said.
        m.volume->refuse(1, QStringLiteral("its JPEG is broken"));
        QCOMPARE(m.volume->slotState(1), SlotState::Refused);
        QVERIFY(m.volume->notes().join(QLatin1Char(' ')).contains(QLatin1String("its JPEG is broken")));
        c = reformat(*m.volume, coronal);
        QCOMPARE(c.absence[4 * kCols], char(PixelAbsence::Gap));
        // Pixels that do not match the header are refused, not put in.
        QVERIFY(m.volume->fill(3, PixelBuffer(PixelFormat::Gray16, kCols + 1, kRows, 1)).isError());
        QCOMPARE(m.volume->slotState(3), SlotState::Refused);
    }

    void obliquePlanesInterpolateTrilinearly()
    {
        // Values linear in position: trilinear interpolation gives them exactly, anywhere inside.
        auto linear = [](int x, int y, int z) { return 2000 + 7 * x - 5 * y + 11 * z; };
        QList<VolumeSlice> slices;
        for (int z = 0; z < 6; ++z)
            slices << slice(z);
        const VolumeGeometry g = volumeGeometry(slices);
        std::shared_ptr<Volume> v = Volume::create(g, slices).value();
        for (int z = 0; z < 6; ++z)
            QVERIFY(!v->fill(z, pixelsOf(z, linear)).isError());
        const Vector3 centre = g.patientPoint(3, 2, 2.5);
        for (const auto &[row, column] : {std::pair<Vector3, Vector3>{{1, 0.2, 0.4}, {0, 1, -0.3}}, {{0.6, 0.8, 0}, {0, 0, -1}}, {{1, 1, 1}, {-1, 1, 0}}}) {
            const ReformatPlane o = planeThrough(g, centre, row, column);
            QVERIFY(std::abs(dotv(o.rowDirection, o.columnDirection)) < 1e-12);
            const ReformattedImage r = reformat(*v, o);
            QVERIFY(r.description.contains(QLatin1String("trilinear")));
            int inside = 0;
            for (int y = 0; y < o.rows; ++y)
                for (int x = 0; x < o.columns; ++x) {
                    const Vector3 p = o.pointAt(x, y);
                    const double ix = (p[0] + 5) / kColSpacing, iy = (p[1] - 7) / kRowSpacing, iz = (p[2] - 10) / 2;
                    const bool in = ix >= 0 && ix <= kCols - 1 && iy >= 0 && iy <= kRows - 1 && iz >= 0 && iz <= 5;
                    const bool clearlyIn = ix > 1e-3 && ix < kCols - 1 - 1e-3 && iy > 1e-3 && iy < kRows - 1 - 1e-3 && iz > 1e-3 && iz < 5 - 1e-3;
                    if (clearlyIn) {
                        ++inside;
                        QVERIFY(r.isPresent(x, y));
                        QVERIFY2(std::abs(pixel(r, x, y) - (2000 + 7 * ix - 5 * iy + 11 * iz)) <= 0.5 + 1e-3,
                                 qPrintable(QStringLiteral("(%1, %2): %3, expected %4").arg(x).arg(y).arg(pixel(r, x, y)).arg(2000 + 7 * ix - 5 * iy + 11 * iz)));
                    } else if (!in && (ix < -1e-3 || ix > kCols - 1 + 1e-3 || iy < -1e-3 || iy > kRows - 1 + 1e-3 || iz < -1e-3 || iz > 5 + 1e-3)) {
                        QCOMPARE(r.absence[y * o.columns + x], char(PixelAbsence::Outside));
                    }
                }
            QVERIFY(inside > 10);
            // Nearest on request: the voxel nearest to each pixel's point (points halfway between two are skipped).
            ReformatPlane n = o;
            n.interpolation = Interpolation::Nearest;
            const ReformattedImage nr = reformat(*v, n);
            int nearestChecked = 0;
            for (int y = 0; y < o.rows; ++y)
                for (int x = 0; x < o.columns; ++x) {
                    const Vector3 p = o.pointAt(x, y);
                    const double ix = (p[0] + 5) / kColSpacing, iy = (p[1] - 7) / kRowSpacing, iz = (p[2] - 10) / 2;
                    auto tie = [](double c) { return std::abs(c - std::floor(c) - 0.5) < 1e-3; };
                    const bool inside = ix > -0.5 && ix < kCols - 0.5 && iy > -0.5 && iy < kRows - 0.5 && iz > -0.5 && iz < 5.5;
                    if (!nr.isPresent(x, y) || tie(ix) || tie(iy) || tie(iz) || !inside)
                        continue;
                    const int cx = std::clamp(int(std::lround(ix)), 0, kCols - 1), cy = std::clamp(int(std::lround(iy)), 0, kRows - 1),
                              cz = std::clamp(int(std::lround(iz)), 0, 5);
                    QCOMPARE(pixel(nr, x, y), linear(cx, cy, cz));
                    ++nearestChecked;
                }
            QVERIFY(nearestChecked > 10);
        }
    }

    void rescalesAreHeldExactlyOrRefused()
    {
        // Intercepts that differ by whole steps: one volume, each value its own modality value.
        QList<VolumeSlice> slices{slice(0, -1024), slice(1, -1000), slice(2, -1024)};
        VolumeGeometry g = volumeGeometry(slices);
        std::shared_ptr<Volume> v = Volume::create(g, slices).value();
        for (int z = 0; z < 3; ++z)
            QVERIFY(!v->fill(z, pixelsOf(z)).isError());
        const ReformattedImage c = reformat(*v, standardPlane(g, PlaneOrientation::Coronal, g.patientPoint(0, 0, 0)));
        for (int r = 0; r < 3; ++r) {
            const int slot = 2 - r;
            const double hu = pixel(c, 0, r) * c.info.rescaleSlope + c.info.rescaleIntercept;
            QCOMPARE(hu, valueAt(0, 0, slot) + (slot == 1 ? -1000.0 : -1024.0));
        }
        // Slopes that differ cannot share 16 bits exactly: refused, with why.
        slices = {slice(0, 0, 1), slice(1, 0, 2.5)};
        Result<std::shared_ptr<Volume>> refused = Volume::create(volumeGeometry(slices), slices);
        QVERIFY(!refused.isOk());
        QVERIFY2(refused.error().message().contains(QLatin1String("rescaled differently")), qPrintable(refused.error().message()));
        // Signed slices stay signed.
        slices = {slice(0, 0, 1, true), slice(1, 0, 1, true)};
        g = volumeGeometry(slices);
        v = Volume::create(g, slices).value();
        auto negative = [](int x, int y, int z) { return -500 + x - y + z; };
        for (int z = 0; z < 2; ++z)
            QVERIFY(!v->fill(z, pixelsOf(z, negative, PixelFormat::Gray16Signed)).isError());
        const ReformattedImage s = reformat(*v, standardPlane(g, PlaneOrientation::Sagittal, g.patientPoint(2, 0, 0)));
        QCOMPARE(s.pixels.format(), PixelFormat::Gray16Signed);
        QCOMPARE(pixel(s, 3, 0), negative(2, 3, 1));
        // Colour is not a volume.
        slices = {slice(0), slice(1)};
        slices[1].info.photometric = Photometric::Rgb;
        slices[1].info.samplesPerPixel = 3;
        QVERIFY(!Volume::create(volumeGeometry(slices), slices).isOk());
    }

    void aVolumeLargerThanItsMemoryLivesOnDisk()
    {
        QTemporaryDir spill;
        const Made m = makeVolume({0, 1, 2, 3}, true, 100, spill.path());
        QVERIFY(m.volume->isSpilled());
        QVERIFY(m.volume->notes().join(QLatin1Char(' ')).contains(QLatin1String("kept on disk")));
        QVERIFY(QDir(spill.path()).entryList(QDir::Files).isEmpty());  // unlinked: nothing left behind
        const VolumeGeometry &g = m.volume->geometry();
        const ReformattedImage c = reformat(*m.volume, standardPlane(g, PlaneOrientation::Coronal, g.patientPoint(0, 4, 0)));
        for (int r = 0; r < 4; ++r)
            QCOMPARE(pixel(c, 6, r), valueAt(6, 4, 3 - r));
        // A folder that cannot take it: a clear error, not a crash later.
        QList<VolumeSlice> slices{slice(0), slice(1)};
        Result<std::shared_ptr<Volume>> nowhere = Volume::create(volumeGeometry(slices), slices, 100, QStringLiteral("/nonexistent/folder"));
        QVERIFY(!nowhere.isOk());
        QVERIFY2(nowhere.error().message().contains(QLatin1String("/nonexistent/folder")), qPrintable(nowhere.error().message()));
    }

    void bothInstructionSetsGiveTheSamePlanes()
    {
        if (!filters::useWideVectors())
            QSKIP("this processor has no x86-64-v3 instructions: only the baseline version runs here");
        // Large enough that rows hold many blocks of samples (the wide version's step), signed and unsigned, with a
        // gap, a slot still arriving, and voxels holding the format's lowest value (the padding must then move):
        // every path of both versions, their pixels, absences and tallies.
        constexpr int nx = 96, ny = 80, nz = 24;
        for (const bool isSigned : {true, false}) {
            QList<VolumeSlice> slices;
            for (int z = 0; z < nz; ++z) {
                VolumeSlice s = slice(z, 0, 1, isSigned);
                s.info.columns = nx, s.info.rows = ny, s.info.bitsStored = 16, s.info.highBit = 15;
                if (z != 9)
                    slices << s;
            }
            const VolumeGeometry g = volumeGeometry(slices);
            std::shared_ptr<Volume> v = Volume::create(g, slices).value();
            const int lowest = isSigned ? -32768 : 0;
            for (int i = 0; i < slices.size(); ++i) {
                if (i == 15)
                    continue;  // arriving
                PixelBuffer p(isSigned ? PixelFormat::Gray16Signed : PixelFormat::Gray16, nx, ny, 1);
                auto *d = reinterpret_cast<quint16 *>(p.frameData(0));
                for (int k = 0; k < nx * ny; ++k)
                    d[k] = quint16(k % 97 == 0 ? lowest : (k * 7919 + i * 1299709) % 60001 - (isSigned ? 30000 : 0));
                QVERIFY(!v->fill(i, p).isError());
            }
            const Vector3 centre = g.patientPoint(nx / 2.0, ny / 2.0, nz / 2.0);
            int gaps = 0, arriving = 0, moved = 0;
            QList<ReformatPlane> planes;
            for (const auto &[row, column] : {std::pair<Vector3, Vector3>{{1, 0.3, 0.2}, {0.1, 1, -0.4}}, {{1, 0, 0.15}, {0, 1, 0}}, {{0.2, 0.1, 1}, {0, 1, 0}}})
                planes << planeThrough(g, centre, row, column);
            planes << standardPlane(g, PlaneOrientation::Coronal, centre) << standardPlane(g, PlaneOrientation::Sagittal, centre);
            QThreadPool pool;
            pool.setMaxThreadCount(3);
            for (ReformatPlane o : planes) {
                QVERIFY(o.columns >= 64);
                for (const auto &[slab, interpolation] : {std::pair{0.0, Interpolation::Trilinear}, std::pair{3.0, Interpolation::Trilinear},
                                                          std::pair{0.0, Interpolation::Nearest}}) {
                    o.slabThickness = slab;
                    o.interpolation = interpolation;
                    filters::setWideVectors(false);
                    const ReformattedImage base = reformat(*v, o);
                    filters::setWideVectors(true);
                    const ReformattedImage wide = reformat(*v, o, &pool);  // in bands on the pool, each its own tally
                    QVERIFY(base.absentPixels[0] > 500);
                    gaps += base.absentPixels[int(PixelAbsence::Gap)];
                    arriving += base.absentPixels[int(PixelAbsence::Arriving)];
                    moved += base.paddingValue != lowest;
                    QCOMPARE(QByteArray(reinterpret_cast<const char *>(wide.pixels.frameData(0)), wide.pixels.frameBytes()),
                             QByteArray(reinterpret_cast<const char *>(base.pixels.frameData(0)), base.pixels.frameBytes()));
                    QCOMPARE(wide.absence, base.absence);
                    for (int kind = 0; kind < 4; ++kind)
                        QCOMPARE(wide.absentPixels[kind], base.absentPixels[kind]);
                    QCOMPARE(wide.paddingValue, base.paddingValue);
                    QCOMPARE(wide.paddingUnique, base.paddingUnique);
                    // The tally is the image's: counted apart here. A padding said to be unique is no present
                    // pixel's value; one not moved from the lowest is none either.
                    int counted[4] = {};
                    bool paddingPresent = false;
                    for (int y = 0; y < o.rows; ++y)
                        for (int x = 0; x < o.columns; ++x) {
                            const int kind = base.absence.isEmpty() ? 0 : int(base.absence[y * o.columns + x]);
                            ++counted[kind];
                            paddingPresent = paddingPresent || (kind == 0 && pixel(base, x, y) == base.paddingValue);
                        }
                    for (int kind = 0; kind < 4; ++kind)
                        QCOMPARE(base.absentPixels[kind], counted[kind]);
                    if (counted[0] < o.rows * o.columns && (base.paddingUnique || base.paddingValue == lowest))
                        QVERIFY(!paddingPresent);
                }
            }
            QVERIFY(gaps > 0 && arriving > 0);  // the planes crossed both
            QVERIFY(moved > 0);                 // and a present pixel held the lowest value
        }
    }

    void aLateSliceMustMatchTheListing()
    {
        // A slice laid out from a listing's position: its own header, when it comes, must agree.
        Made m = makeVolume({0, 1, 2}, false);
        ImageInfo moved = m.slices[1].info;
        moved.imagePosition[2] += 0.5;  // a quarter of the spacing off
        QVERIFY(m.volume->fill(1, pixelsOf(1), 0, &moved).isError());
        QCOMPARE(m.volume->slotState(1), SlotState::Refused);
        ImageInfo rescaled = m.slices[0].info;
        rescaled.rescaleIntercept = -1000;
        QVERIFY(m.volume->fill(0, pixelsOf(0), 0, &rescaled).isError());
        QVERIFY(!m.volume->fill(2, pixelsOf(2), 0, &m.slices[2].info).isError());
        QCOMPARE(m.volume->slotState(2), SlotState::Filled);
        // A refusal never takes back a slot that is in.
        m.volume->refuse(2, QStringLiteral("late failure of another copy"));
        QCOMPARE(m.volume->slotState(2), SlotState::Filled);
    }

    void paddingNeverPosesAsAValue()
    {
        // A coronal plane whose present pixels hold every 16-bit value, and a gap: no value is free to mark the gap,
        // and the image says so (the CLI then refuses to write it as DICOM).
        constexpr int nx = 512, ny = 2, nz = 260;
        QList<VolumeSlice> slices;
        for (int z = 0; z < nz; ++z) {
            VolumeSlice s = slice(z, 0, 1, false);
            s.info.columns = nx, s.info.rows = ny, s.info.bitsStored = 16, s.info.highBit = 15;
            if (z != 100)
                slices << s;
        }
        const VolumeGeometry g = volumeGeometry(slices);
        std::shared_ptr<Volume> v = Volume::create(g, slices).value();
        for (int i = 0; i < slices.size(); ++i) {
            const int z = i < 100 ? i : i + 1;
            PixelBuffer p(PixelFormat::Gray16, nx, ny, 1);
            auto *d = reinterpret_cast<quint16 *>(p.frameData(0));
            for (int k = 0; k < nx * ny; ++k)
                d[k] = quint16((k % nx + nx * z) % 65536);
            QVERIFY(!v->fill(i, p).isError());
        }
        const ReformattedImage full = reformat(*v, standardPlane(g, PlaneOrientation::Coronal, g.patientPoint(0, 0, 0)));
        QCOMPARE(full.absentPixels[int(PixelAbsence::Gap)], nx);
        QVERIFY(!full.paddingUnique);
        // The axial plane at the gap: no pixel present, every value free to mark it.
        ReformatPlane slab = standardPlane(g, PlaneOrientation::Axial, g.patientPoint(0, 0, 100));
        const ReformattedImage gap = reformat(*v, slab);
        QCOMPARE(gap.absentPixels[int(PixelAbsence::Gap)], nx * ny);
        QVERIFY(gap.paddingUnique);
    }

    void aSlabThinnerThanOneStepIsSaidToBeThePlane()
    {
        const Made m = makeVolume({0, 1, 2, 3});
        ReformatPlane p = standardPlane(m.volume->geometry(), PlaneOrientation::Axial, m.volume->geometry().patientPoint(0, 0, 1));
        p.slabThickness = 3;  // the slots are 2 mm apart: one sample
        const ReformattedImage r = reformat(*m.volume, p);
        QCOMPARE(r.slabSamples, 1);
        QCOMPARE(r.info.sliceThickness, 0.0);
        QVERIFY2(r.description.contains(QLatin1String("the plane alone")), qPrintable(r.description));
    }

    void anEnhancedMultiFrameCtIsAVolume()
    {
        // pydicom's Enhanced CT (multiframe_files.py): five frames, each placed only in its per-frame groups (z = 10·f),
        // the rescale only in the shared ones; frame f holds 10·f HU. Its coronal plane: one row per frame, top down.
        QTemporaryDir dir, one;
        QVERIFY(run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(MULTIFRAME_FILES_SCRIPT), dir.path()}));
        QVERIFY(QFile::copy(dir.filePath(QStringLiteral("enhanced-ct.dcm")), one.filePath(QStringLiteral("enhanced-ct.dcm"))));
        const QString out = one.filePath(QStringLiteral("coronal.dcm"));
        QString said;
        QVERIFY(run(cli(), {QStringLiteral("reformat"), one.filePath(QStringLiteral("enhanced-ct.dcm")), out, QStringLiteral("--plane"), QStringLiteral("coronal")}, &said));
        Result<DecodedImage> plane = decodeDicomFile(out);
        QVERIFY2(plane.isOk(), qPrintable(said));
        const ImageInfo &info = plane.value().info;
        QCOMPARE(info.rows, 5);
        QCOMPARE(info.columns, 32);
        // What it is, in the default repertoire (no Specific Character Set is written).
        QVERIFY2(info.identity.seriesDescription.endsWith(QLatin1String("(coronal, voxels as acquired)")), qPrintable(info.identity.seriesDescription));
        QCOMPARE(info.rowSpacing, 10.0);
        QCOMPARE(info.imagePosition[2], 40.0);  // the top row is the last frame
        for (int r = 0; r < 5; ++r)
            QCOMPARE(info.toModalityValue(plane.value().pixels.valueAt(7, r)), 10.0 * (4 - r));
    }

    void cliPlanesMatchNumpyAndVtk()
    {
        QTemporaryDir dir;
        const QString series = dir.filePath(QStringLiteral("series")), gapped = dir.filePath(QStringLiteral("gapped"));
        const QString python = QStringLiteral(PYTHON3_EXECUTABLE);
        QVERIFY(run(python, {mprCheck(), QStringLiteral("series"), series, QStringLiteral("--shuffle")}));
        QVERIFY(run(python, {mprCheck(), QStringLiteral("series"), gapped, QStringLiteral("--gap"), QStringLiteral("17")}));
        struct Case
        {
            QString folder;
            QStringList options;
            QStringList check;
        };
        const QString at = QStringLiteral("-3.1,-2.2,52.4");  // off voxel centres: the planes move onto the nearest
        const QList<Case> cases{
            {series, {QStringLiteral("--plane"), QStringLiteral("coronal"), QStringLiteral("--at"), at}, {}},
            {series, {QStringLiteral("--plane"), QStringLiteral("sagittal"), QStringLiteral("--at"), at}, {}},
            {series, {QStringLiteral("--plane"), QStringLiteral("axial"), QStringLiteral("--at"), at}, {}},
            {series, {QStringLiteral("--plane"), QStringLiteral("coronal"), QStringLiteral("--slab"), QStringLiteral("6"), QStringLiteral("--mode"), QStringLiteral("mip")},
             {QStringLiteral("--slab"), QStringLiteral("6"), QStringLiteral("--mode"), QStringLiteral("mip")}},
            {series, {QStringLiteral("--plane"), QStringLiteral("sagittal"), QStringLiteral("--slab"), QStringLiteral("5"), QStringLiteral("--mode"), QStringLiteral("minip")},
             {QStringLiteral("--slab"), QStringLiteral("5"), QStringLiteral("--mode"), QStringLiteral("minip")}},
            {series, {QStringLiteral("--plane"), QStringLiteral("axial"), QStringLiteral("--slab"), QStringLiteral("10"), QStringLiteral("--mode"), QStringLiteral("average")},
             {QStringLiteral("--slab"), QStringLiteral("10"), QStringLiteral("--mode"), QStringLiteral("average")}},
            {gapped, {QStringLiteral("--plane"), QStringLiteral("coronal")}, {}},
            {gapped, {QStringLiteral("--plane"), QStringLiteral("axial"), QStringLiteral("--at"), QStringLiteral("0,0,51.25"), QStringLiteral("--slab"), QStringLiteral("5")},
             {QStringLiteral("--slab"), QStringLiteral("5"), QStringLiteral("--mode"), QStringLiteral("mip")}},
        };
        int n = 0;
        for (const Case &c : cases) {
            const QString out = dir.filePath(QStringLiteral("plane%1.dcm").arg(n++));
            QString said;
            QVERIFY(run(cli(), QStringList{QStringLiteral("reformat"), c.folder, out} + c.options, &said));
            QString checked;
            QVERIFY2(run(python, QStringList{mprCheck(), QStringLiteral("check"), c.folder, out} + c.check, &checked), qPrintable(said));
            qInfo("%s", qPrintable(checked.trimmed()));
        }
        // The gap is said, and the coronal plane's row at slice 18 is absent.
        QString said;
        QVERIFY(run(cli(), {QStringLiteral("reformat"), gapped, dir.filePath(QStringLiteral("g.png")), QStringLiteral("--plane"), QStringLiteral("coronal")}, &said));
        QVERIFY2(said.contains(QLatin1String("missing")), qPrintable(said));
        const QImage png(dir.filePath(QStringLiteral("g.png")));
        QCOMPARE(png.width(), 64);
        QCOMPARE(png.height(), 40);  // 40 slots, slot 17 empty but kept

        // Oblique planes, against VTK.
        for (const QStringList &dirs : {QStringList{QStringLiteral("1,0.3,0.2"), QStringLiteral("0,0.4,-1")},
                                        QStringList{QStringLiteral("0.8,0.6,0"), QStringLiteral("0,0,-1")}}) {
            const QString out = dir.filePath(QStringLiteral("oblique%1.dcm").arg(n++));
            QVERIFY(run(cli(), {QStringLiteral("reformat"), series, out, QStringLiteral("--row-direction"), dirs[0], QStringLiteral("--column-direction"), dirs[1]}));
            QString checked;
            QVERIFY(run(python, {mprCheck(), QStringLiteral("vtk"), series, out}, &checked));
            qInfo("%s", qPrintable(checked.trimmed()));
        }
        // What cannot be a volume is refused with why.
        QTemporaryDir one;
        QVERIFY(QFile::copy(QDir(series).filePath(QStringLiteral("file000.dcm")), one.filePath(QStringLiteral("a.dcm"))));
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(cli(), {QStringLiteral("reformat"), one.path(), dir.filePath(QStringLiteral("x.dcm"))});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY2(QString::fromUtf8(p.readAll()).contains(QLatin1String("fewer than two slices")), "one slice is no volume");
    }
};

QTEST_GUILESS_MAIN(TestReformat)
#include "tst_reformat.moc"
