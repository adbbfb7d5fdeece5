// SPDX-License-Identifier: Apache-2.0
// Filters: what each computes, that band-by-band and multi-threaded processing give exactly the whole-image
// result for every filter, the registry's parsing and errors, and a filter loaded from a plugin at run time.

#include "filtersupport.h"
#include "spectrum/imaging/filters/bandprocessor.h"
#include "spectrum/imaging/filters/filterregistry.h"

#include "filters/kernels.h"  // private: to run the baseline and the wide versions side by side

#include <QDir>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

using namespace spectrum;
using namespace spectrum::test;

Q_DECLARE_METATYPE(PlaneFormat)

class tst_Filters : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void bandsAndThreadsGiveTheWholeImageResult_data();
    void bandsAndThreadsGiveTheWholeImageResult();
    void wideAndBaselineVersionsAgree_data() { bandsAndThreadsGiveTheWholeImageResult_data(); }
    void wideAndBaselineVersionsAgree();
    void despeckleIsTheMedianOfNine();
    void outputRowsFollowTheInputRows();
    void invertUsesTheStoredRange();
    void blurAndGaussianKeepFlatAreasAndSpreadAnImpulse();
    void despeckleRemovesASpeck();
    void edgeFindsAStep();
    void embossIsMidGrayOnFlatAreas();
    void sharpenExaggeratesContrast();
    void unsharpWithoutAmountIsTheIdentity();
    void oilPaintTakesTheMostFrequentValue();
    void pixelizeAveragesBlocks();
    void spreadTakesNearbyPixels();
    void flipsAndRotationsMoveEveryPixel();
    void zoomInterpolates();
    void resultsClampToTheStoredRange();
    void wholeImagesThroughApplyFilters();
    void outputsWrittenAroundTheCachesAreTheSame();
};

void tst_Filters::bandsAndThreadsGiveTheWholeImageResult_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<PlaneFormat>("fmt");
    const QStringList specs{QStringLiteral("blur"), QStringLiteral("gaussian:sigma=1.7"), QStringLiteral("unsharp:amount=1.5,radius=2"),
                            QStringLiteral("sharpen:p=0.6"), QStringLiteral("despeckle"), QStringLiteral("edge"), QStringLiteral("emboss"),
                            QStringLiteral("oilpaint"), QStringLiteral("pixelize:size=5"), QStringLiteral("spread:radius=2,seed=7"),
                            QStringLiteral("invert"), QStringLiteral("flip:axis=horizontal"), QStringLiteral("flip:axis=vertical"),
                            QStringLiteral("rotate:angle=90"), QStringLiteral("rotate:angle=180"), QStringLiteral("rotate:angle=270"),
                            QStringLiteral("zoom:factor=1.7,method=bilinear"), QStringLiteral("zoom:factor=0.45,method=bicubic"),
                            QStringLiteral("zoom:factor=3,method=bicubic")};
    const QList<QPair<QString, PlaneFormat>> formats{
        {QStringLiteral("u16 12-bit"), format(SampleType::U16, 1, 67, 53, 0, 4095)},
        {QStringLiteral("s16"), format(SampleType::S16, 1, 41, 61, -32768, 32767)},
        {QStringLiteral("u8 rgb"), format(SampleType::U8, 3, 29, 37, 0, 255)},
        {QStringLiteral("s8"), format(SampleType::S8, 1, 33, 30, -128, 127)},
    };
    for (const QString &spec : specs)
        for (const auto &[name, f] : formats)
            QTest::newRow(qPrintable(spec + QLatin1Char(' ') + name)) << spec << f;
    QTest::newRow("chain blur, unsharp, edge u16") << QStringLiteral("blur|unsharp:amount=2,radius=1.2|edge") << formats[0].second;
    QTest::newRow("chain zoom, rotate, despeckle rgb") << QStringLiteral("zoom:factor=1.3|rotate:angle=90|despeckle") << formats[2].second;
    QTest::newRow("chain flip, pixelize, gaussian s16") << QStringLiteral("flip:axis=vertical|pixelize:size=3|gaussian:sigma=0.8") << formats[1].second;
}

void tst_Filters::bandsAndThreadsGiveTheWholeImageResult()
{
    QFETCH(QString, spec);
    QFETCH(PlaneFormat, fmt);
    const FilterChain chain = chainOf(spec.split(QLatin1Char('|')));
    const Plane in = randomPlane(fmt, 42);
    const Plane whole = run(chain, in, nullptr);
    QCOMPARE(whole.format.height * whole.format.rowBytes(), whole.bytes.size());

    QThreadPool pool;
    pool.setMaxThreadCount(4);
    QRandomGenerator g(qHash(spec));
    for (int round = 0; round < 12; ++round) {
        QList<int> arrivals;  // rows arriving in random steps: single rows, or many at once
        for (int rows = 0; rows < fmt.height;) {
            rows = std::min(fmt.height, rows + 1 + int(g.bounded(round % 2 ? 3 : 20)));
            arrivals << rows;
        }
        const Plane banded = run(chain, in, round % 3 == 0 ? nullptr : &pool, arrivals);
        QVERIFY2(banded.bytes == whole.bytes, qPrintable(QStringLiteral("round %1 differs").arg(round)));
    }
    // A large image runs on several threads in several bands at once: still the same.
    PlaneFormat big = fmt;
    big.width = 700;
    big.height = 300;
    const Plane large = randomPlane(big, 3);
    QVERIFY(run(chain, large, &pool).bytes == run(chain, large, nullptr).bytes);
}

void tst_Filters::wideAndBaselineVersionsAgree()
{
    QFETCH(QString, spec);
    QFETCH(PlaneFormat, fmt);
    filters::setWideVectors(true);
    if (!filters::useWideVectors())
        QSKIP("this processor has no x86-64-v3 instructions: only the baseline version runs here");
    const FilterChain chain = chainOf(spec.split(QLatin1Char('|')));
    PlaneFormat big = fmt;
    big.width = 301;  // not a multiple of any vector width: the loops' tails count too
    big.height = 47;
    const Plane in = randomPlane(big, 11);
    const Plane wide = run(chain, in, nullptr);
    filters::setWideVectors(false);
    const Plane baseline = run(chain, in, nullptr);
    filters::setWideVectors(true);
    QVERIFY(wide.bytes == baseline.bytes);
}

void tst_Filters::despeckleIsTheMedianOfNine()
{
    const Plane in = randomPlane(format(SampleType::S16, 1, 23, 19, -32768, 32767), 4);
    const Plane out = run(chainOf({QStringLiteral("despeckle")}), in, nullptr);
    for (int y = 0; y < 19; ++y) {
        for (int x = 0; x < 23; ++x) {
            std::array<int, 9> v{};
            for (int k = 0; k < 9; ++k)
                v[size_t(k)] = in.at<qint16>(std::clamp(x + k % 3 - 1, 0, 22), std::clamp(y + k / 3 - 1, 0, 18));
            std::sort(v.begin(), v.end());
            QCOMPARE(int(out.at<qint16>(x, y)), v[4]);
        }
    }
}

void tst_Filters::outputRowsFollowTheInputRows()
{
    const PlaneFormat f = format(SampleType::U16, 1, 64, 100, 0, 4095);
    const Plane in = randomPlane(f, 1);
    BandProcessor bp(chainOf({QStringLiteral("blur"), QStringLiteral("gaussian:sigma=1")}), f, [&in](int y) -> const void * { return in.row(y); }, nullptr);
    QCOMPARE(bp.inputArrived(0), 0);
    // Rows 0..49 in: blur can give rows 0..48 (row 49 needs row 50), the Gaussian (radius 3) rows 0..45.
    QCOMPARE(bp.inputArrived(50), 46);
    QCOMPARE(bp.inputArrived(51), 47);
    QCOMPARE(bp.inputArrived(100), 100);

    BandProcessor flip(chainOf({QStringLiteral("flip:axis=vertical")}), f, [&in](int y) -> const void * { return in.row(y); }, nullptr);
    QCOMPARE(flip.inputArrived(99), 0);  // its first row is the input's last
    QCOMPARE(flip.inputArrived(100), 100);
}

void tst_Filters::invertUsesTheStoredRange()
{
    Plane in{format(SampleType::U16, 1, 3, 1, 0, 4095), QByteArray()};
    const quint16 v[3] = {0, 1000, 4095};
    in.bytes = QByteArray(reinterpret_cast<const char *>(v), 6);
    const Plane out = run(chainOf({QStringLiteral("invert")}), in, nullptr);
    QCOMPARE(out.at<quint16>(0, 0), quint16(4095));
    QCOMPARE(out.at<quint16>(1, 0), quint16(3095));
    QCOMPARE(out.at<quint16>(2, 0), quint16(0));
    Plane s{format(SampleType::S16, 1, 2, 1, -2048, 2047), QByteArray()};
    const qint16 sv[2] = {-2048, 100};
    s.bytes = QByteArray(reinterpret_cast<const char *>(sv), 4);
    const Plane so = run(chainOf({QStringLiteral("invert")}), s, nullptr);
    QCOMPARE(so.at<qint16>(0, 0), qint16(2047));
    QCOMPARE(so.at<qint16>(1, 0), qint16(-101));
}

namespace {
Plane flat(SampleType type, int w, int h, int value, int minValue = 0, int maxValue = 65535)
{
    Plane p{format(type, 1, w, h, minValue, maxValue), QByteArray()};
    p.bytes = QByteArray(p.format.rowBytes() * h, '\0');
    withSampleType(type, [&](auto t) {
        using T = decltype(t);
        T *d = reinterpret_cast<T *>(p.bytes.data());
        for (int i = 0; i < w * h; ++i)
            d[i] = T(value);
    });
    return p;
}
template <typename T>
void set(Plane &p, int x, int y, int v) { reinterpret_cast<T *>(p.bytes.data())[y * p.format.width + x] = T(v); }
} // namespace

void tst_Filters::blurAndGaussianKeepFlatAreasAndSpreadAnImpulse()
{
    Plane p = flat(SampleType::U16, 9, 9, 1000);
    for (const QString &spec : {QStringLiteral("blur"), QStringLiteral("gaussian:sigma=2"), QStringLiteral("unsharp")}) {
        const Plane out = run(chainOf({spec}), p, nullptr);
        QVERIFY2(out.bytes == p.bytes, qPrintable(spec));  // a flat image stays flat, edges included
    }
    set<quint16>(p, 4, 4, 1900);
    const Plane box = run(chainOf({QStringLiteral("blur")}), p, nullptr);
    QCOMPARE(box.at<quint16>(4, 4), quint16(1100));  // (8·1000 + 1900) / 9
    QCOMPARE(box.at<quint16>(3, 3), quint16(1100));
    QCOMPARE(box.at<quint16>(2, 2), quint16(1000));
    const Plane g = run(chainOf({QStringLiteral("gaussian:sigma=1")}), p, nullptr);
    QVERIFY(g.at<quint16>(4, 4) > g.at<quint16>(3, 4));
    QVERIFY(g.at<quint16>(3, 4) > g.at<quint16>(2, 4));
    QCOMPARE(g.at<quint16>(4, 4), quint16(std::lround(1000 + 900 * std::pow(1 / (1 + 2 * std::exp(-0.5) + 2 * std::exp(-2.0) + 2 * std::exp(-4.5)), 2))));
}

void tst_Filters::despeckleRemovesASpeck()
{
    Plane p = flat(SampleType::S16, 5, 5, -100, -32768, 32767);
    set<qint16>(p, 2, 2, 30000);
    const Plane out = run(chainOf({QStringLiteral("despeckle")}), p, nullptr);
    QCOMPARE(out.at<qint16>(2, 2), qint16(-100));
    // A median keeps an edge where it is.
    Plane step = flat(SampleType::U8, 6, 4, 10, 0, 255);
    for (int y = 0; y < 4; ++y)
        for (int x = 3; x < 6; ++x)
            set<quint8>(step, x, y, 200);
    QVERIFY(run(chainOf({QStringLiteral("despeckle")}), step, nullptr).bytes == step.bytes);
}

void tst_Filters::edgeFindsAStep()
{
    Plane step = flat(SampleType::U16, 6, 4, 100, 0, 4095);
    for (int y = 0; y < 4; ++y)
        for (int x = 3; x < 6; ++x)
            set<quint16>(step, x, y, 300);
    const Plane out = run(chainOf({QStringLiteral("edge")}), step, nullptr);
    QCOMPARE(out.at<quint16>(0, 1), quint16(0));
    QCOMPARE(out.at<quint16>(2, 1), quint16(800));  // gx = 4 · (300 − 100)
    QCOMPARE(out.at<quint16>(3, 1), quint16(800));
    QCOMPARE(out.at<quint16>(5, 1), quint16(0));
}

void tst_Filters::embossIsMidGrayOnFlatAreas()
{
    const Plane p = flat(SampleType::U16, 5, 5, 3000, 0, 4095);
    const Plane out = run(chainOf({QStringLiteral("emboss")}), p, nullptr);
    for (int i = 0; i < 25; ++i)
        QCOMPARE(out.at<quint16>(i % 5, i / 5), quint16(2048));
}

void tst_Filters::sharpenExaggeratesContrast()
{
    Plane p = flat(SampleType::U16, 5, 5, 1000, 0, 4095);
    set<quint16>(p, 2, 2, 1090);
    QVERIFY(run(chainOf({QStringLiteral("sharpen:p=0")}), p, nullptr).bytes == p.bytes);
    const Plane out = run(chainOf({QStringLiteral("sharpen:p=0.5")}), p, nullptr);
    QCOMPARE(out.at<quint16>(2, 2), quint16(1170));  // (1090 − 0.5 · 1010) / 0.5
    QCOMPARE(out.at<quint16>(1, 2), quint16(990));   // (1000 − 0.5 · 1010) / 0.5
    QCOMPARE(out.at<quint16>(0, 0), quint16(1000));
}

void tst_Filters::unsharpWithoutAmountIsTheIdentity()
{
    const Plane p = randomPlane(format(SampleType::U16, 1, 30, 20, 0, 65535), 5);
    QVERIFY(run(chainOf({QStringLiteral("unsharp:amount=0")}), p, nullptr).bytes == p.bytes);
    QVERIFY(run(chainOf({QStringLiteral("unsharp:amount=1")}), p, nullptr).bytes != p.bytes);
}

void tst_Filters::oilPaintTakesTheMostFrequentValue()
{
    Plane p = flat(SampleType::U8, 3, 3, 0, 0, 255);
    const int v[9] = {5, 7, 7, 9, 7, 5, 1, 2, 3};
    for (int i = 0; i < 9; ++i)
        set<quint8>(p, i % 3, i / 3, v[i]);
    QCOMPARE(run(chainOf({QStringLiteral("oilpaint")}), p, nullptr).at<quint8>(1, 1), quint8(7));
    // 16 bits, 12 stored: bins of 16 values; the bin with most members wins, and gives their mean.
    Plane q = flat(SampleType::U16, 3, 3, 0, 0, 4095);
    const int w[9] = {100, 101, 102, 900, 500, 3000, 103, 2000, 1};
    for (int i = 0; i < 9; ++i)
        set<quint16>(q, i % 3, i / 3, w[i]);
    QCOMPARE(run(chainOf({QStringLiteral("oilpaint")}), q, nullptr).at<quint16>(1, 1), quint16(102));  // 96..111: 100..103
}

void tst_Filters::pixelizeAveragesBlocks()
{
    Plane p = flat(SampleType::U16, 5, 3, 0, 0, 65535);
    for (int i = 0; i < 15; ++i)
        set<quint16>(p, i % 5, i / 5, i * 10);
    const Plane out = run(chainOf({QStringLiteral("pixelize:size=2")}), p, nullptr);
    QCOMPARE(out.at<quint16>(0, 0), quint16(30));   // 0, 10, 50, 60
    QCOMPARE(out.at<quint16>(1, 1), quint16(30));
    QCOMPARE(out.at<quint16>(4, 0), quint16(65));   // 40, 90: the edge block is one column wide
    QCOMPARE(out.at<quint16>(2, 2), quint16(125));  // 120, 130: and one row high at the bottom
}

void tst_Filters::spreadTakesNearbyPixels()
{
    const PlaneFormat f = format(SampleType::U16, 1, 40, 30, 0, 65535);
    Plane p{f, QByteArray(f.rowBytes() * f.height, '\0')};
    for (int y = 0; y < 30; ++y)
        for (int x = 0; x < 40; ++x)
            set<quint16>(p, x, y, y * 100 + x);  // each value names its pixel
    const Plane out = run(chainOf({QStringLiteral("spread:radius=2,seed=9")}), p, nullptr);
    int moved = 0;
    for (int y = 0; y < 30; ++y) {
        for (int x = 0; x < 40; ++x) {
            const int v = out.at<quint16>(x, y);
            QVERIFY(std::abs(v / 100 - y) <= 2 && std::abs(v % 100 - x) <= 2);
            moved += v != y * 100 + x;
        }
    }
    QVERIFY(moved > 1000);
    QVERIFY(run(chainOf({QStringLiteral("spread:radius=2,seed=10")}), p, nullptr).bytes != out.bytes);  // the seed matters
}

void tst_Filters::flipsAndRotationsMoveEveryPixel()
{
    const PlaneFormat f = format(SampleType::U8, 3, 4, 3, 0, 255);
    Plane p{f, QByteArray(f.rowBytes() * f.height, '\0')};
    for (int i = 0; i < p.bytes.size(); ++i)
        p.bytes[i] = char(i);
    const Plane cw = run(chainOf({QStringLiteral("rotate:angle=90")}), p, nullptr);
    QCOMPARE(cw.format.width, 3);
    QCOMPARE(cw.format.height, 4);
    for (int k = 0; k < 3; ++k) {
        QCOMPARE(cw.at<quint8>(0, 0, k), p.at<quint8>(0, 2, k));  // the bottom-left corner comes to the top left
        QCOMPARE(cw.at<quint8>(2, 0, k), p.at<quint8>(0, 0, k));
        QCOMPARE(cw.at<quint8>(2, 3, k), p.at<quint8>(3, 0, k));
    }
    const Plane ccw = run(chainOf({QStringLiteral("rotate:angle=270")}), p, nullptr);
    QCOMPARE(ccw.at<quint8>(0, 0, 1), p.at<quint8>(3, 0, 1));
    QVERIFY(run(chainOf({QStringLiteral("rotate:angle=90"), QStringLiteral("rotate:angle=270")}), p, nullptr).bytes == p.bytes);
    QVERIFY(run(chainOf({QStringLiteral("rotate:angle=90"), QStringLiteral("rotate:angle=90")}), p, nullptr).bytes
            == run(chainOf({QStringLiteral("rotate:angle=180")}), p, nullptr).bytes);
    QVERIFY(run(chainOf({QStringLiteral("flip:axis=horizontal"), QStringLiteral("flip:axis=vertical")}), p, nullptr).bytes
            == run(chainOf({QStringLiteral("rotate:angle=180")}), p, nullptr).bytes);
    const Plane h = run(chainOf({QStringLiteral("flip")}), p, nullptr);
    QCOMPARE(h.at<quint8>(0, 1, 2), p.at<quint8>(3, 1, 2));

    // 16-bit gray goes through register transposes (16 × 8 and 8 × 8 blocks): every pixel, with both instruction
    // sets, edges that are not multiples of 8 and tiles that end in an 8-row block included.
    for (const bool wide : {false, true}) {
        filters::setWideVectors(wide);
        for (const auto &[w, hgt] : {std::pair{37, 21}, std::pair{90, 70}}) {
            const Plane g = randomPlane(format(SampleType::U16, 1, w, hgt, 0, 65535), 6);
            const Plane g90 = run(chainOf({QStringLiteral("rotate:angle=90")}), g, nullptr);
            const Plane g270 = run(chainOf({QStringLiteral("rotate:angle=270")}), g, nullptr);
            for (int y = 0; y < w; ++y) {
                for (int x = 0; x < hgt; ++x) {
                    QCOMPARE(g90.at<quint16>(x, y), g.at<quint16>(y, hgt - 1 - x));
                    QCOMPARE(g270.at<quint16>(x, y), g.at<quint16>(w - 1 - y, x));
                }
            }
        }
    }
    filters::setWideVectors(true);
}

void tst_Filters::zoomInterpolates()
{
    const Plane p = randomPlane(format(SampleType::U16, 1, 20, 10, 0, 4095), 8);
    for (const QString &method : {QStringLiteral("bilinear"), QStringLiteral("bicubic")}) {
        const Plane same = run(chainOf({QStringLiteral("zoom:factor=1,method=") + method}), p, nullptr);
        QVERIFY2(same.bytes == p.bytes, qPrintable(method));  // factor 1 samples the pixels themselves
    }
    // Doubling a two-pixel ramp 0, 400 bilinearly: 0, 100, 300, 400 (pixel centres aligned, edges replicated).
    Plane ramp{format(SampleType::U16, 1, 2, 1, 0, 4095), QByteArray()};
    const quint16 v[2] = {0, 400};
    ramp.bytes = QByteArray(reinterpret_cast<const char *>(v), 4);
    const Plane z = run(chainOf({QStringLiteral("zoom:factor=2")}), ramp, nullptr);
    QCOMPARE(z.format.width, 4);
    QCOMPARE(z.format.height, 2);
    QCOMPARE(z.at<quint16>(0, 0), quint16(0));
    QCOMPARE(z.at<quint16>(1, 0), quint16(100));
    QCOMPARE(z.at<quint16>(2, 1), quint16(300));
    QCOMPARE(z.at<quint16>(3, 1), quint16(400));
}

void tst_Filters::resultsClampToTheStoredRange()
{
    Plane p = flat(SampleType::U16, 5, 5, 4000, 0, 4095);
    set<quint16>(p, 2, 2, 0);
    for (const QString &spec : {QStringLiteral("sharpen:p=0.9"), QStringLiteral("unsharp:amount=5"), QStringLiteral("edge"), QStringLiteral("emboss"),
                                QStringLiteral("zoom:factor=3,method=bicubic")}) {
        const Plane out = run(chainOf({spec}), p, nullptr);
        const quint16 *d = reinterpret_cast<const quint16 *>(out.bytes.constData());
        for (qsizetype i = 0; i < out.bytes.size() / 2; ++i)
            QVERIFY2(d[i] <= 4095, qPrintable(spec));  // 12-bit data stays 12-bit
    }
}

void tst_Filters::wholeImagesThroughApplyFilters()
{
    PixelBuffer px(PixelFormat::Gray16Signed, 16, 8, 2);
    for (int f = 0; f < 2; ++f)
        for (int i = 0; i < 16 * 8; ++i)
            reinterpret_cast<qint16 *>(px.frameData(f))[i] = qint16(i * (f ? -3 : 5));
    ImageInfo info;
    info.bitsStored = 12;
    const Result<PixelBuffer> out = applyFilters(chainOf({QStringLiteral("rotate:angle=90"), QStringLiteral("invert")}), px, info, QThreadPool::globalInstance());
    QVERIFY(out.isOk());
    QCOMPARE(out.value().width(), 8);
    QCOMPARE(out.value().height(), 16);
    QCOMPARE(out.value().frames(), 2);
    QCOMPARE(out.value().format(), PixelFormat::Gray16Signed);
    // Frame 1, output (0, 0) is input (0, 7) = 7·16·(−3) = −336; inverted in [−2048, 2047]: 335.
    QCOMPARE(reinterpret_cast<const qint16 *>(out.value().frameData(1))[0], qint16(335));
    const Result<PixelBuffer> huge = applyFilters(chainOf({QStringLiteral("zoom:factor=16")}), PixelBuffer(PixelFormat::Gray16, 8000, 8000, 1), info, nullptr);
    QVERIFY(!huge.isOk());
    QVERIFY(huge.error().message().contains(QStringLiteral("too large")));
}

void tst_Filters::outputsWrittenAroundTheCachesAreTheSame()
{
    // Large planes (a PixelBuffer's frame) are written with non-temporal stores by invert and flip: the same
    // pixels as ordinary stores and as the baseline version, for both signednesses, a range that does not start
    // at 0, rows that do not start on a vector boundary (odd width) and bands on several threads.
    filters::setWideVectors(true);
    if (!filters::useWideVectors())
        QSKIP("this processor has no x86-64-v3 instructions: only the baseline version runs here");
    QThreadPool pool;
    pool.setMaxThreadCount(3);
    const struct { PixelFormat px; int bitsStored; int lo, hi; } cases[] = {
        {PixelFormat::Gray16, 12, 0, 4095}, {PixelFormat::Gray16Signed, 16, -32768, 32767}, {PixelFormat::Gray16Signed, 12, -2048, 2047}};
    for (const auto &c : cases) {
        PixelBuffer px(c.px, 1031, 67, 2);
        const Plane r = randomPlane(format(c.px == PixelFormat::Gray16 ? SampleType::U16 : SampleType::S16, 1, 1031, 67 * 2, -32768 * (c.lo < 0), c.lo < 0 ? 32767 : 65535), 9);
        std::memcpy(px.frameData(0), r.bytes.constData(), size_t(px.frameBytes()) * 2);  // values outside the stored range included
        ImageInfo info;
        info.bitsStored = c.bitsStored;
        for (const QString &spec : {QStringLiteral("invert"), QStringLiteral("flip:axis=horizontal")}) {
            const FilterChain chain = chainOf({spec});
            const qint64 before = filters::setCacheBypassLimit(0);
            const Result<PixelBuffer> around = applyFilters(chain, px, info, &pool);
            const Result<PixelBuffer> aroundOneThread = applyFilters(chain, px, info, nullptr);
            filters::setCacheBypassLimit(std::numeric_limits<qint64>::max());
            const Result<PixelBuffer> through = applyFilters(chain, px, info, &pool);
            filters::setWideVectors(false);
            const Result<PixelBuffer> baseline = applyFilters(chain, px, info, nullptr);
            filters::setWideVectors(true);
            filters::setCacheBypassLimit(before);
            QVERIFY(around.isOk() && aroundOneThread.isOk() && through.isOk() && baseline.isOk());
            for (int f = 0; f < 2; ++f) {
                const auto bytes = [f](const Result<PixelBuffer> &b) {
                    return QByteArray(reinterpret_cast<const char *>(b.value().frameData(f)), b.value().frameBytes());
                };
                QVERIFY2(bytes(around) == bytes(through), qPrintable(spec));
                QVERIFY2(bytes(aroundOneThread) == bytes(through), qPrintable(spec));
                QVERIFY2(bytes(baseline) == bytes(through), qPrintable(spec));
            }
            // And the values themselves, at a row's start, middle and end.
            const auto *in = reinterpret_cast<const qint16 *>(px.frameData(1));
            const auto *out = reinterpret_cast<const qint16 *>(around.value().frameData(1));
            for (const int i : {0, 1, 515, 1030, 1031 * 66 + 1030}) {
                const int v = c.px == PixelFormat::Gray16 ? int(quint16(in[i])) : int(in[i]);
                const int o = c.px == PixelFormat::Gray16 ? int(quint16(out[i])) : int(out[i]);
                if (spec == QLatin1String("invert")) {
                    QCOMPARE(o, c.lo + c.hi - std::clamp(v, c.lo, c.hi));
                } else {
                    const int x = i % 1031, mirrored = i - x + (1030 - x);
                    QCOMPARE(o, c.px == PixelFormat::Gray16 ? int(quint16(in[mirrored])) : int(in[mirrored]));
                }
            }
        }
    }
}

QTEST_GUILESS_MAIN(tst_Filters)
#include "tst_filters.moc"
