// SPDX-License-Identifier: Apache-2.0
// A series' slices as one volume, from their headers alone: order along the normal whatever order they come in,
// spacing from positions (not Slice Thickness), missing places shown as missing, uneven spacing said, and the stacks
// that make no volume refused with why — a tilted gantry's sheared stack, two stacks at the same places, mixed
// orientations, other frames of reference.

#include "spectrum/imaging/volumes/volumegeometry.h"

#include <QtTest>

#include <cmath>

using namespace spectrum;

namespace {

const std::array<double, 6> kAxial{1, 0, 0, 0, 1, 0};
const std::array<double, 6> kSagittal{0, 1, 0, 0, 0, -1};

/// A 4 × 3 slice, 0.5 mm between columns and 0.7 mm between rows, its first pixel at `position`.
VolumeSlice slice(const QString &key, std::array<double, 3> position, std::array<double, 6> orientation = kAxial)
{
    VolumeSlice s;
    s.key = key;
    s.info.columns = 4;
    s.info.rows = 3;
    s.info.columnSpacing = 0.5;
    s.info.rowSpacing = 0.7;
    s.info.hasPosition = true;
    s.info.imagePosition = position;
    s.info.imageOrientation = orientation;
    s.info.sliceThickness = 5;  // never the spacing
    s.info.frameOfReferenceUid = QStringLiteral("2.25.7");
    return s;
}

QList<VolumeSlice> axialStack(const QList<double> &zs)
{
    QList<VolumeSlice> slices;
    for (double z : zs)
        slices << slice(QStringLiteral("z%1").arg(z), {-10, -20, z});
    return slices;
}

bool near(const Vector3 &a, const Vector3 &b)
{
    return std::abs(a[0] - b[0]) < 1e-9 && std::abs(a[1] - b[1]) < 1e-9 && std::abs(a[2] - b[2]) < 1e-9;
}

} // namespace

class TestVolumeGeometry : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void slicesInAnyOrderMakeOneVolume()
    {
        const QList<VolumeSlice> slices = axialStack({6, 0, 4.5, 1.5, 3});
        const VolumeGeometry g = volumeGeometry(slices);
        QVERIFY2(g.ok, qPrintable(g.refusal));
        QCOMPARE(g.slotCount, 5);
        QCOMPARE(g.columns, 4);
        QCOMPARE(g.rows, 3);
        QCOMPARE(g.spacing, (Vector3{0.5, 0.7, 1.5}));  // from the positions: not the 5 mm thickness
        QCOMPARE(g.slotSlice, (QList<int>{1, 3, 4, 2, 0}));
        QVERIFY(g.missing.isEmpty() && g.unevenSpacing.isEmpty());
        QCOMPARE(g.origin, (Vector3{-10, -20, 0}));
        QCOMPARE(g.normal, (Vector3{0, 0, 1}));
        // Column 2, row 1 of the fourth slot: 1 mm right, 0.7 mm down, 4.5 mm up.
        QVERIFY(near(g.patientPoint(2, 1, 3), {-9, -19.3, 4.5}));
    }

    void sagittalSlicesToo()
    {
        QList<VolumeSlice> slices;
        for (double x : {3.0, 1.0, 2.0})
            slices << slice(QStringLiteral("x%1").arg(x), {x, -50, 60}, kSagittal);
        const VolumeGeometry g = volumeGeometry(slices);
        QVERIFY2(g.ok, qPrintable(g.refusal));
        QCOMPARE(g.normal, (Vector3{-1, 0, 0}));  // row (0,1,0) × column (0,0,−1): towards the patient's right
        QCOMPARE(g.slotSlice, (QList<int>{0, 2, 1}));  // x 3, 2, 1 along that normal
        QCOMPARE(g.spacing[2], 1.0);
    }

    void aMissingSliceIsShownMissing()
    {
        const VolumeGeometry g = volumeGeometry(axialStack({0, 1, 2, 4, 5}));
        QVERIFY(g.ok);
        QCOMPARE(g.slotCount, 6);
        QCOMPARE(g.missing, QList<int>{3});
        QCOMPARE(g.slotSlice[3], -1);
    }

    void unevenSpacingIsSaid()
    {
        const VolumeGeometry g = volumeGeometry(axialStack({0, 1, 2, 3.3, 4, 5}));
        QVERIFY(g.ok);
        QCOMPARE(g.spacing[2], 1.0);
        QCOMPARE(g.unevenSpacing.size(), 1);
        QVERIFY2(g.unevenSpacing[0].contains(QStringLiteral("z3.3")) && g.unevenSpacing[0].contains(QStringLiteral("0.30 mm")),
                 qPrintable(g.unevenSpacing[0]));
        QCOMPARE(g.slotSlice[3], 3);
    }

    void aTiltedGantrysStackIsRefusedWithItsAngle()
    {
        QList<VolumeSlice> slices;
        for (int k = 0; k < 5; ++k)  // each slice 1 mm up and tan 15° mm further back
            slices << slice(QStringLiteral("t%1").arg(k), {-10, -20 + k * std::tan(15 * M_PI / 180), double(k)});
        const VolumeGeometry g = volumeGeometry(slices);
        QVERIFY(!g.ok);
        QVERIFY2(g.refusal.contains(QStringLiteral("tilt")) && g.refusal.contains(QStringLiteral("15.0°")), qPrintable(g.refusal));
        QVERIFY(g.slotSlice.isEmpty());
    }

    void twoStacksAtTheSamePlacesAreRefused()
    {
        const VolumeGeometry g = volumeGeometry(axialStack({0, 1, 2}) + axialStack({0, 1, 2}));
        QVERIFY(!g.ok);
        QVERIFY2(g.refusal.contains(QStringLiteral("more than one stack")), qPrintable(g.refusal));
    }

    void whatMakesNoVolumeIsRefused()
    {
        QList<VolumeSlice> mixed = axialStack({0, 1, 2});
        mixed << slice(QStringLiteral("sag"), {0, 0, 0}, kSagittal);
        QVERIFY(volumeGeometry(mixed).refusal.contains(QStringLiteral("orientation")));
        QList<VolumeSlice> other = axialStack({0, 1, 2});
        other[1].info.frameOfReferenceUid = QStringLiteral("2.25.8");
        QVERIFY(volumeGeometry(other).refusal.contains(QStringLiteral("frames of reference")));
        QList<VolumeSlice> sizes = axialStack({0, 1, 2});
        sizes[2].info.rows = 5;
        QVERIFY(volumeGeometry(sizes).refusal.contains(QStringLiteral("sizes")));
        QVERIFY(!volumeGeometry(axialStack({0})).ok);
    }

    void aSliceWithoutGeometryIsLeftOutAndSaid()
    {
        QList<VolumeSlice> slices = axialStack({0, 1, 2, 3});
        slices[2].info.hasPosition = false;
        const VolumeGeometry g = volumeGeometry(slices);
        QVERIFY(g.ok);
        QCOMPARE(g.missing, QList<int>{2});  // its place is missing, not filled by a neighbour
        QCOMPARE(g.notes.size(), 1);
        QVERIFY(g.notes[0].contains(QStringLiteral("z2")));
    }
};

QTEST_GUILESS_MAIN(TestVolumeGeometry)
#include "tst_volumegeometry.moc"
