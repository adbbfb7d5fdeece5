// A volume laid out while its series arrives (ArrivingVolume), before any listing: each slice goes where its own
// header puts it; in Instance Number order the first layout already reaches the whole series (every later slice is
// placed, never laid out again); in any other order every voxel still lands where its header says, and what came is
// carried over through the layouts (its modality values exact, also when the new layout's rescale differs); places
// not come yet are arriving, never gaps; two slices at one place lay nothing out; only the series, study and patient
// expected go in.

#include "spectrum/imaging/arrivingvolume.h"
#include "spectrum/imaging/reformat.h"

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
        if (!s.volume)
            continue;
        // After every step: each slice in the volume where its header says (one a layout could not take yet waits).
        QList<int> in;
        for (int c : std::as_const(come))
            if (s.placed.value(keyOf(c)).value(0, -1) >= 0)
                in << c;
        QVERIFY(holds(*s.volume, in));
        QVERIFY(s.volume->geometry().awaiting);
    }
    const ArrivingVolume::Snapshot s = a.snapshot();
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
    // No numbers: 4, 6, 8 lay out at twice the spacing; 5 lies between (laid out again, 4, 6 and 8 copied over); 1
    // comes with another intercept and is the new first slice, whose rescale the volume takes: the others' values
    // are carried over exactly.
    ArrivingVolume a(expect(-1));
    for (int z : {4, 6, 8})
        a.add(keyOf(z), sliceAt(z, 0));
    const std::shared_ptr<Volume> coarse = a.snapshot().volume;
    QVERIFY(coarse);
    QCOMPARE(coarse->geometry().spacing[2], 2 * kSpacing);
    QCOMPARE(a.add(keyOf(5), sliceAt(5, 0)).outcome, ArrivingVolume::Outcome::LaidOut);
    QCOMPARE(a.snapshot().volume->geometry().spacing[2], kSpacing);
    QVERIFY(holds(*a.snapshot().volume, {4, 5, 6, 8}));
    a.add(keyOf(12), sliceAt(12, 0));  // past the layout's reach, perhaps: wherever it lands, it holds
    a.add(keyOf(-6), sliceAt(-6, 0, -1000));
    const std::shared_ptr<Volume> v = a.snapshot().volume;
    QVERIFY(holds(*v, {-6, 4, 5, 6, 8, 12}));
    QCOMPARE(v->rescaleIntercept(), -1000.0);  // the first slot's slice's
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
    // Two slices 0.05 mm apart and one 60 mm away: a slot every 0.05 mm would be 1,200 of them.
    ArrivingVolume a(expect(-1));
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
    ArrivingVolume a(expect(-1)), b(expect(-1));
    for (int z : {0, 1, 2})
        a.add(keyOf(z), sliceAt(z, 0));
    for (int z : {5, 6, 7})
        b.add(keyOf(z), sliceAt(z, 0));
    const std::shared_ptr<Volume> va = a.snapshot().volume, vb = b.snapshot().volume;
    const int slotOf5 = b.snapshot().placed.value(keyOf(5)).value(0);
    const int awaitedInA = a.snapshot().placed.value(keyOf(2)).value(0) + 1;  // slice 3's place: awaited in a
    QCOMPARE(va->slotState(awaitedInA), SlotState::Arriving);
    QVERIFY(va->copySlot(awaitedInA, *vb, slotOf5).isError());  // slice 5 does not lie at slice 3's place
    QCOMPARE(va->slotState(awaitedInA), SlotState::Refused);
}

QTEST_GUILESS_MAIN(tst_ArrivingVolume)
#include "tst_arrivingvolume.moc"
