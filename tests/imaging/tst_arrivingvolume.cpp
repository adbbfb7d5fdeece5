// SPDX-License-Identifier: Apache-2.0
// A volume laid out while its series arrives (ArrivingVolume), before any listing: each slice goes where its own
// header puts it; in Instance Number order the first layout already reaches the whole series (every later slice is
// placed, never laid out again); in any other order every voxel still lands where its header says, and what came is
// carried over through the layouts (its modality values exact, also when the new layout's rescale differs); places
// not come yet are arriving, never gaps; a spacing the numbers do not confirm is never drawn across (slices without
// numbers wait for the listing, or for every instance counted); two slices at one place, or a number that puts a
// slice elsewhere, lay nothing out; only the series, study and patient expected go in.

#include "spectrum/imaging/volumes/arrivingvolume.h"
#include "spectrum/imaging/volumes/reformat.h"

#include <QtTest>

#include <algorithm>
#include <random>

using namespace spectrum;

namespace {

constexpr int kCols = 6, kRows = 4;
constexpr double kSpacing = 1.5;  // mm between slices

/// Slice `z` of a stack at z = 20 + 1.5·z mm, numbered `number` (0: no number), its stored values distinct.
DecodedImage sliceAt(int z, int number, double intercept = -1024, const QString &series = QStringLiteral("2.25.100"),
                     const QString &patient = QStringLiteral("P1"))
{
    DecodedImage d;
    ImageInfo &i = d.info;
    i.columns = kCols, i.rows = kRows;
    i.columnSpacing = 0.7, i.rowSpacing = 0.9;
    i.hasPosition = true;
    i.imagePosition = {-10, 5, 20 + kSpacing * z};
    i.imageOrientation = {1, 0, 0, 0, 1, 0};
    i.frameOfReferenceUid = QStringLiteral("2.25.7");
    i.bitsAllocated = 16, i.bitsStored = 16, i.highBit = 15;
    i.rescaleIntercept = intercept, i.rescaleSlope = 1;
    i.rescaleType = QStringLiteral("HU");
    i.identity.modality = QStringLiteral("CT");
    i.identity.seriesInstanceUid = series;
    i.identity.studyInstanceUid = QStringLiteral("2.25.1");
    i.identity.patientId = patient;
    i.identity.sopInstanceUid = QStringLiteral("2.25.100.%1").arg(z);
    i.identity.instanceNumber = number;
    d.pixels = PixelBuffer(PixelFormat::Gray16, kCols, kRows, 1);
    for (int y = 0; y < kRows; ++y)
        for (int x = 0; x < kCols; ++x)  // the modality value is 1000 + x + 10 y + 100 z whatever the intercept
            reinterpret_cast<quint16 *>(d.pixels.frameData(0))[y * kCols + x] = quint16(1000 + x + 10 * y + 100 * z - intercept);
    return d;
}

double modalityValue(int x, int y, int z) { return 1000 + x + 10 * y + 100 * z; }

QString keyOf(int z) { return QStringLiteral("k%1").arg(z); }

ArrivingVolume::Expect expect(int instances)
{
    ArrivingVolume::Expect e;
    e.seriesInstanceUid = QStringLiteral("2.25.100");
    e.studyInstanceUid = QStringLiteral("2.25.1");
    e.patientId = QStringLiteral("P1");
    e.instances = instances;
    return e;
}

/// The modality value of voxel (x, y) of the slot where slice z lies in `v`, NAN when that slot is not filled.
double valueIn(const Volume &v, int x, int y, int z)
{
    const VolumeGeometry &g = v.geometry();
    const double at = (20 + kSpacing * z - g.origin[2]) / g.spacing[2];
    const int slot = int(std::lround(at));
    if (std::abs(at - slot) > 1e-6 || slot < 0 || slot >= v.slotCount() || v.slotState(slot) != SlotState::Filled)
        return NAN;
    const quint16 raw = v.slotData(slot)[y * v.columns() + x];
    const double stored = v.isSigned() ? double(qint16(raw)) : double(raw);
    return stored * v.rescaleSlope() + v.rescaleIntercept();
}

/// Every voxel of every slice in `zs` holds its modality value.
bool holds(const Volume &v, const QList<int> &zs)
{
    for (int z : zs)
        for (int y = 0; y < kRows; ++y)
            for (int x = 0; x < kCols; ++x)
                if (valueIn(v, x, y, z) != modalityValue(x, y, z))
                    return false;
    return true;
}

} // namespace

class tst_ArrivingVolume : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void inInstanceOrderTheFirstLayoutIsTheLast_data();
    void inInstanceOrderTheFirstLayoutIsTheLast();
    void inAnyOrderEveryVoxelLandsWhereItsHeaderSays_data();
    void inAnyOrderEveryVoxelLandsWhereItsHeaderSays();
    void placesNotComeYetAreArrivingNeverGaps();
    void whatCameIsCarriedOverUnderANewRescale();
    void aGuessedSpacingIsNeverDrawnAcross();
    void aSliceNumberedElsewhereGivesUp();
    void cancelledTakesNothing();
    void theListedVolumeTakesOverTheVoxels();
    void numbersInAcquisitionOrderGiveUp();
    void numbersFromElsewhereReachNoFurther();
    void twoSlicesAtOnePlaceLayNothingOut();
    void onlyTheSeriesStudyAndPatientGoIn();
    void slicesTooSparseWait();
    void copyingASlotChecksItsPlace();
};

void tst_ArrivingVolume::inInstanceOrderTheFirstLayoutIsTheLast_data()
{
    QTest::addColumn<bool>("descending");
    QTest::newRow("numbers up the stack") << false;
    QTest::newRow("numbers down the stack") << true;
}

void tst_ArrivingVolume::inInstanceOrderTheFirstLayoutIsTheLast()
{
    QFETCH(bool, descending);
    constexpr int n = 30;
    auto number = [&](int z) { return descending ? n - z : z + 1; };
    ArrivingVolume a(expect(n));
    // The first look (the middle instance), then the stream from instance 1.
    QList<int> order{descending ? n - 15 : 14};
    for (int k = 1; k <= n; ++k) {
        const int z = descending ? n - k : k - 1;
        if (!order.contains(z))
            order << z;
    }
    QCOMPARE(a.add(keyOf(order[0]), sliceAt(order[0], number(order[0]))).outcome, ArrivingVolume::Outcome::Waiting);
    QCOMPARE(a.add(keyOf(order[1]), sliceAt(order[1], number(order[1]))).outcome, ArrivingVolume::Outcome::Waiting);
    QVERIFY(!a.snapshot().volume);
    QCOMPARE(a.add(keyOf(order[2]), sliceAt(order[2], number(order[2]))).outcome, ArrivingVolume::Outcome::LaidOut);
    const std::shared_ptr<Volume> first = a.snapshot().volume;
    QVERIFY(first);
    QCOMPARE(first->slotCount(), n);  // the numbers told where the rest lies
    QVERIFY(first->geometry().awaiting);
    for (int k = 3; k < n; ++k)
        QCOMPARE(a.add(keyOf(order[k]), sliceAt(order[k], number(order[k]))).outcome, ArrivingVolume::Outcome::Placed);
    const ArrivingVolume::Snapshot s = a.snapshot();
    QCOMPARE(s.layouts, 1);
    QCOMPARE(s.volume, first);
    QCOMPARE(s.volume->filledSlots(), n);
    QList<int> all;
    for (int z = 0; z < n; ++z)
        all << z;
    QVERIFY(holds(*s.volume, all));
    QCOMPARE(s.placed.size(), n);
    QCOMPARE(s.headers.size(), n);
}

void tst_ArrivingVolume::inAnyOrderEveryVoxelLandsWhereItsHeaderSays_data()
{
    QTest::addColumn<int>("seed");
    QTest::addColumn<bool>("numbered");
    QTest::addColumn<bool>("counted");
    for (int seed = 1; seed <= 4; ++seed) {
        QTest::addRow("shuffled %d, numbered, counted", seed) << seed << true << true;
        QTest::addRow("shuffled %d, no numbers, counted", seed) << seed << false << true;
        QTest::addRow("shuffled %d, no numbers, not counted", seed) << seed << false << false;
    }
}

void tst_ArrivingVolume::inAnyOrderEveryVoxelLandsWhereItsHeaderSays()
{
    QFETCH(int, seed);
    QFETCH(bool, numbered);
    QFETCH(bool, counted);
    constexpr int n = 40;
    QList<int> order;
    for (int z = 0; z < n; ++z)
        order << z;
    std::mt19937 random(seed);
    std::shuffle(order.begin(), order.end(), random);
    ArrivingVolume a(expect(counted ? n : -1));
    QList<int> come;
    for (int z : std::as_const(order)) {
        const ArrivingVolume::Added added = a.add(keyOf(z), sliceAt(z, numbered ? z + 1 : 0));
        QVERIFY2(added.outcome != ArrivingVolume::Outcome::Ignored, qPrintable(added.why));
        come << z;
        const ArrivingVolume::Snapshot s = a.snapshot();
        if (!numbered && come.size() < n) {
            // Without numbers the spacing is not known before every instance is here: nothing laid out.
            QVERIFY(!s.volume);
            continue;
        }
        if (!s.volume)
            continue;
        // Laid out by a confirmed spacing: two slices one number apart lie one slot apart.
        QCOMPARE(s.volume->geometry().spacing[2], kSpacing);
        // After every step: each slice in the volume where its header says (one a layout could not take yet waits).
        QList<int> in;
        for (int c : std::as_const(come))
            if (s.placed.value(keyOf(c)).value(0, -1) >= 0)
                in << c;
        QVERIFY(holds(*s.volume, in));
        QVERIFY(s.volume->geometry().awaiting);
    }
    const ArrivingVolume::Snapshot s = a.snapshot();
    if (!numbered && !counted) {
        QVERIFY(!s.volume);  // the listing will lay it out
        QVERIFY2(s.waiting.contains(QLatin1String("spacing")), qPrintable(s.waiting));
        return;
    }
    QVERIFY2(s.volume && s.waiting.isEmpty(), qPrintable(s.waiting));
    QVERIFY(holds(*s.volume, order));
    QCOMPARE(s.volume->filledSlots(), n);
    QVERIFY2(s.layouts <= 8, qPrintable(QString::number(s.layouts)));  // laid out again a few times, not per slice
}

void tst_ArrivingVolume::placesNotComeYetAreArrivingNeverGaps()
{
    ArrivingVolume a(expect(20));
    for (int z : {10, 0, 1, 2, 3})
        a.add(keyOf(z), sliceAt(z, z + 1));
    const std::shared_ptr<Volume> v = a.snapshot().volume;
    QVERIFY(v);
    QCOMPARE(v->slotCount(), 20);
    for (int slot = 0; slot < 20; ++slot)
        QCOMPARE(v->slotState(slot), slot <= 3 || slot == 10 ? SlotState::Filled : SlotState::Arriving);
    QVERIFY(v->notes().join(QLatin1Char(' ')).contains(QLatin1String("laid out from the slices come so far")));
    QVERIFY(!v->notes().join(QLatin1Char(' ')).contains(QLatin1String("missing")));
    const VolumeGeometry &g = v->geometry();
    const ReformattedImage coronal = reformat(*v, standardPlane(g, PlaneOrientation::Coronal, g.patientPoint(2, 1, 5)));
    QCOMPARE(coronal.absentPixels[int(PixelAbsence::Gap)], 0);
    QCOMPARE(coronal.absentPixels[int(PixelAbsence::Arriving)], 15 * kCols);
}

void tst_ArrivingVolume::whatCameIsCarriedOverUnderANewRescale()
{
    // Numbered, not counted: 4, 5, 6 lay out just those places; 9 lies past them (laid out again, 4, 5 and 6 copied
    // over); -6 comes with another intercept and is the new first slice, whose rescale the volume takes: the
    // others' values are carried over exactly.
    auto number = [](int z) { return z + 11; };
    ArrivingVolume a(expect(-1));
    for (int z : {4, 5, 6})
        a.add(keyOf(z), sliceAt(z, number(z)));
    const std::shared_ptr<Volume> first = a.volume();
    QVERIFY(first);
    QCOMPARE(first->slotCount(), 3);
    QCOMPARE(a.add(keyOf(9), sliceAt(9, number(9))).outcome, ArrivingVolume::Outcome::LaidOut);
    QVERIFY(a.volume() != first);
    QVERIFY(holds(*a.volume(), {4, 5, 6, 9}));
    QCOMPARE(a.add(keyOf(-6), sliceAt(-6, number(-6), -1000)).outcome, ArrivingVolume::Outcome::LaidOut);
    const std::shared_ptr<Volume> v = a.volume();
    QVERIFY(holds(*v, {-6, 4, 5, 6, 9}));
    QCOMPARE(v->rescaleIntercept(), -1000.0);  // the first slot's slice's
    QCOMPARE(a.snapshot().layouts, 4);  // 4–5 (numbers one apart: the spacing), 4–6, 4–9, −6–9: uncounted, no reach
}

void tst_ArrivingVolume::aGuessedSpacingIsNeverDrawnAcross()
{
    // Slices 10, 12 and 14 of a 1.5 mm series: 3 mm apart so far. Their numbers (11, 13, 15) say slices lie between:
    // nothing is laid out (a plane would be drawn across 11 and 13 as if they were not there) until 11 comes.
    ArrivingVolume a(expect(30));
    for (int z : {10, 12, 14})
        QCOMPARE(a.add(keyOf(z), sliceAt(z, z + 1)).outcome, ArrivingVolume::Outcome::Waiting);
    QVERIFY(!a.volume());
    QVERIFY(a.snapshot().waiting.contains(QLatin1String("spacing")));
    QCOMPARE(a.add(keyOf(11), sliceAt(11, 12)).outcome, ArrivingVolume::Outcome::LaidOut);
    QCOMPARE(a.volume()->geometry().spacing[2], kSpacing);
    QCOMPARE(a.volume()->slotCount(), 30);
    QCOMPARE(a.volume()->slotState(13 - 0), SlotState::Arriving);  // slice 13's place: awaited, hatched
    // Without numbers, 3 mm apart could be the series' spacing or not: not laid out before every instance is here.
    ArrivingVolume b(expect(4));
    for (int z : {0, 2, 4})
        QCOMPARE(b.add(keyOf(z), sliceAt(z, 0)).outcome, ArrivingVolume::Outcome::Waiting);
    QVERIFY(!b.volume());
    QCOMPARE(b.add(keyOf(1), sliceAt(1, 0)).outcome, ArrivingVolume::Outcome::LaidOut);  // all four here
    QVERIFY(holds(*b.volume(), {0, 1, 2, 4}));
    QCOMPARE(b.volume()->slotState(3), SlotState::Arriving);  // no slice there as far as is known: the listing says
}

void tst_ArrivingVolume::aSliceNumberedElsewhereGivesUp()
{
    // Laid out by the numbers 1, 2, 3 at slices 0, 1, 2; a slice at slice 5's place numbered 31 (another
    // reconstruction numbered on): not one stack — nothing shown until the listing.
    ArrivingVolume a(expect(40));
    for (int z : {0, 1, 2})
        a.add(keyOf(z), sliceAt(z, z + 1));
    QVERIFY(a.volume());
    DecodedImage other = sliceAt(5, 31);
    const ArrivingVolume::Added added = a.add(QStringLiteral("other"), other);
    QCOMPARE(added.outcome, ArrivingVolume::Outcome::Waiting);
    QVERIFY2(added.why.contains(QLatin1String("Instance Numbers and places disagree")), qPrintable(added.why));
    QVERIFY(!a.volume());
    QCOMPARE(a.add(keyOf(3), sliceAt(3, 4)).outcome, ArrivingVolume::Outcome::Waiting);
}

void tst_ArrivingVolume::cancelledTakesNothing()
{
    ArrivingVolume a(expect(10));
    a.add(keyOf(0), sliceAt(0, 1));
    a.cancel();
    QCOMPARE(a.add(keyOf(1), sliceAt(1, 2)).outcome, ArrivingVolume::Outcome::Ignored);
    QCOMPARE(a.snapshot().headers.size(), 1);
}

void tst_ArrivingVolume::twoSlicesAtOnePlaceLayNothingOut()
{
    ArrivingVolume a(expect(10));
    for (int z : {0, 1, 2})
        a.add(keyOf(z), sliceAt(z, z + 1));
    QVERIFY(a.snapshot().volume);
    DecodedImage other = sliceAt(1, 11);  // a second phase at slice 1's place
    other.info.identity.sopInstanceUid = QStringLiteral("2.25.200.1");
    const ArrivingVolume::Added added = a.add(QStringLiteral("phase2"), other);
    QCOMPARE(added.outcome, ArrivingVolume::Outcome::Waiting);
    QVERIFY(added.why.contains(QLatin1String("two of its slices lie at one place")));
    QVERIFY(!a.snapshot().volume);
    QCOMPARE(a.add(keyOf(3), sliceAt(3, 4)).outcome, ArrivingVolume::Outcome::Waiting);
    QVERIFY(!a.snapshot().volume);
}

void tst_ArrivingVolume::onlyTheSeriesStudyAndPatientGoIn()
{
    ArrivingVolume a(expect(10));
    QCOMPARE(a.add(QStringLiteral("x"), sliceAt(0, 1, -1024, QStringLiteral("2.25.999"))).outcome, ArrivingVolume::Outcome::Ignored);
    QCOMPARE(a.add(QStringLiteral("y"), sliceAt(0, 1, -1024, QStringLiteral("2.25.100"), QStringLiteral("P2"))).outcome,
             ArrivingVolume::Outcome::Ignored);
    for (int z : {0, 1, 2})
        a.add(keyOf(z), sliceAt(z, z + 1));
    QCOMPARE(a.add(keyOf(1), sliceAt(1, 2)).outcome, ArrivingVolume::Outcome::Ignored);  // come already
    QCOMPARE(a.snapshot().headers.size(), 3);
    QCOMPARE(a.snapshot().volume->filledSlots(), 3);
}

void tst_ArrivingVolume::slicesTooSparseWait()
{
    // The whole series (three instances counted): two slices 0.05 mm apart and one 60 mm away — a slot every
    // 0.05 mm would be 1,200 of them.
    ArrivingVolume a(expect(3));
    a.add(keyOf(0), sliceAt(0, 0));
    a.add(keyOf(40), sliceAt(40, 0));
    DecodedImage close = sliceAt(0, 0);
    close.info.imagePosition[2] += 0.05;
    const ArrivingVolume::Added added = a.add(QStringLiteral("close"), close);
    QCOMPARE(added.outcome, ArrivingVolume::Outcome::Waiting);
    QVERIFY2(added.why.contains(QLatin1String("too sparse")), qPrintable(added.why));
    QVERIFY(!a.snapshot().volume);
}

void tst_ArrivingVolume::copyingASlotChecksItsPlace()
{
    ArrivingVolume a(expect(10)), b(expect(10));
    for (int z : {0, 1, 2})
        a.add(keyOf(z), sliceAt(z, z + 1));
    for (int z : {5, 6, 7})
        b.add(keyOf(z), sliceAt(z, z + 1));
    const std::shared_ptr<Volume> va = a.snapshot().volume, vb = b.snapshot().volume;
    const int slotOf5 = b.snapshot().placed.value(keyOf(5)).value(0);
    const int awaitedInA = a.snapshot().placed.value(keyOf(2)).value(0) + 1;  // slice 3's place: awaited in a
    QCOMPARE(va->slotState(awaitedInA), SlotState::Arriving);
    QVERIFY(va->copySlot(awaitedInA, *vb, slotOf5).isError());  // slice 5 does not lie at slice 3's place
    QCOMPARE(va->slotState(awaitedInA), SlotState::Arriving);   // not copied: still for slice 3 to fill
    QVERIFY(!va->copySlot(a.snapshot().placed.value(keyOf(2)).value(0) + 3, *vb, slotOf5).isError());  // slice 5's own place
    QVERIFY(holds(*va, {0, 1, 2, 5}));
}

void tst_ArrivingVolume::theListedVolumeTakesOverTheVoxels()
{
    // Slices 0–11 of 12 came but 9, numbered.
    ArrivingVolume a(expect(12));
    for (int z = 0; z < 12; ++z)
        if (z != 9)
            a.add(keyOf(z), sliceAt(z, z + 1));
    const std::shared_ptr<Volume> arrived = a.volume();
    QVERIFY(arrived);
    a.cancel();
    QList<VolumeSlice> listed;
    for (int z = 0; z < 12; ++z)
        listed << VolumeSlice{keyOf(z), 0, sliceAt(z, z + 1).info};
    const VolumeGeometry g = volumeGeometry(listed);
    auto made = Volume::create(g, listed);
    QVERIFY(made.isOk());
    std::vector<bool> keep(12, true);
    keep[7] = false;
    // Not taken over while the listing puts another instance where one came: those voxels would be overwritten
    // under a volume that still calls them filled (copied slot by slot instead).
    QVERIFY(!made.value()->adoptVoxels(*arrived, keep));
    QCOMPARE(made.value()->filledSlots(), 0);
    keep[7] = true;
    QVERIFY(made.value()->adoptVoxels(*arrived, keep));
    QCOMPARE(made.value()->filledSlots(), 11);  // not 9: it never came
    QCOMPARE(made.value()->slotState(9), SlotState::Arriving);
    QVERIFY(holds(*made.value(), {0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11}));
    QVERIFY(!made.value()->geometry().awaiting);
    // A layout that differs (the listing has a slice further on): copied slot by slot instead, never taken over.
    listed << VolumeSlice{keyOf(12), 0, sliceAt(12, 13).info};
    auto longer = Volume::create(volumeGeometry(listed), listed);
    QVERIFY(longer.isOk());
    QVERIFY(!longer.value()->adoptVoxels(*arrived, std::vector<bool>(13, true)));
    QCOMPARE(longer.value()->filledSlots(), 0);
}

void tst_ArrivingVolume::numbersInAcquisitionOrderGiveUp()
{
    // An interleaved MR: numbers 1, 2, 3 at slices 0, 2, 4 (a line, one slot per number at twice the spacing), then
    // number 4 at slice 1 — between two places of the layout made: it was not the series' spacing.
    ArrivingVolume a(expect(6));
    for (int k = 0; k < 3; ++k)
        a.add(keyOf(2 * k), sliceAt(2 * k, k + 1));
    QVERIFY(a.volume());
    QCOMPARE(a.volume()->geometry().spacing[2], 2 * kSpacing);
    const ArrivingVolume::Added added = a.add(keyOf(1), sliceAt(1, 4));
    QCOMPARE(added.outcome, ArrivingVolume::Outcome::Waiting);
    QVERIFY2(added.why.contains(QLatin1String("disagree")), qPrintable(added.why));
    QVERIFY(!a.volume());
}

void tst_ArrivingVolume::numbersFromElsewhereReachNoFurther()
{
    // Numbered from 1001 in a series of 300: the reach of numbers 1 … 300 is not laid out beside it.
    ArrivingVolume a(expect(300));
    for (int z = 0; z < 3; ++z)
        a.add(keyOf(z), sliceAt(z, 1001 + z));
    QVERIFY(a.volume());
    QCOMPARE(a.volume()->slotCount(), 3);
    QCOMPARE(a.add(keyOf(3), sliceAt(3, 1004)).outcome, ArrivingVolume::Outcome::LaidOut);  // grows as it comes
    QVERIFY(holds(*a.volume(), {0, 1, 2, 3}));
}

QTEST_GUILESS_MAIN(tst_ArrivingVolume)
#include "tst_arrivingvolume.moc"
