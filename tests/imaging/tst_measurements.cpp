// SPDX-License-Identifier: Apache-2.0
// Measurements in the units a radiologist reads: mm from Pixel Spacing (rows and columns spaced differently),
// region statistics in HU, the CT presets, and the auto window that ignores a few extreme pixels.

#include "spectrum/imaging/tools/measurements.h"
#include "spectrum/imaging/tools/measurementtool.h"
#include "rampimage.h"

#include <QPainterPath>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace spectrum;

namespace {
/// A CT-like image: stored value 1024 + x + 10·y, rescale intercept −1024, so pixel (x, y) is x + 10·y HU.
DecodedImage ramp(int width, int height, double rowSpacing = 0.8, double columnSpacing = 0.5)
{
    return test::rampCt(width, height, rowSpacing, columnSpacing);  // pixel (x, y) is x + 10·y HU
}
} // namespace

class tst_Measurements : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void distancesUseEachAxisSpacing()
    {
        const DecodedImage image = ramp(20, 20);
        QCOMPARE(distancePixels(QPointF(0, 0), QPointF(3, 4)), 5.0);
        // 3 columns of 0.5 mm and 4 rows of 0.8 mm.
        QVERIFY(std::fabs(distanceMm(image.info, QPointF(0, 0), QPointF(3, 4)) - std::hypot(1.5, 3.2)) < 1e-12);
        ImageInfo noSpacing = image.info;
        noSpacing.rowSpacing = noSpacing.columnSpacing = 0;
        QCOMPARE(distanceMm(noSpacing, QPointF(0, 0), QPointF(3, 4)), -1.0);
    }

    void pixelsAndValuesUnderAPosition()
    {
        const DecodedImage image = ramp(20, 10);
        QCOMPARE(pixelAt(image.info, QPointF(3.99, 4.0)), std::optional<QPoint>(QPoint(3, 4)));
        QCOMPARE(pixelAt(image.info, QPointF(19.5, 9.5)), std::optional<QPoint>(QPoint(19, 9)));
        QVERIFY(!pixelAt(image.info, QPointF(-0.01, 2)));
        QVERIFY(!pixelAt(image.info, QPointF(20, 2)));
        QVERIFY(!pixelAt(image.info, QPointF(2, 10)));
        QCOMPARE(modalityValueAt(image, 0, QPoint(3, 4)), 43.0);  // HU, after the rescale
    }

    void rectangleStatistics()
    {
        const DecodedImage image = ramp(20, 20);
        // Pixel centres inside [2, 5) × [3, 5): x 2…4, y 3…4 → 32 33 34 42 43 44 HU.
        const RegionStatistics s = regionStatistics(image, 0, RegionShape::Rectangle, QRectF(QPointF(5, 5), QPointF(2, 3)));
        QCOMPARE(s.pixels, 6);
        QCOMPARE(s.mean, 38.0);
        QCOMPARE(s.minimum, 32.0);
        QCOMPARE(s.maximum, 44.0);
        QVERIFY(std::fabs(s.standardDeviation - std::sqrt(154.0 / 6)) < 1e-12);  // deviations ±4 ±5 ±6
        QCOMPARE(s.areaPixels, 6.0);
        QVERIFY(std::fabs(s.areaMm2 - 6 * 0.8 * 0.5) < 1e-12);
    }

    void ellipseCountsThePixelCentresInside()
    {
        const DecodedImage image = ramp(40, 40);
        const QRectF bounds(QPointF(3.2, 5.7), QPointF(31.9, 22.4));
        // An independent count: Qt's own ellipse path, asked about every pixel centre.
        QPainterPath path;
        path.addEllipse(bounds);
        qint64 inside = 0;
        double sum = 0;
        for (int y = 0; y < 40; ++y)
            for (int x = 0; x < 40; ++x)
                if (path.contains(QPointF(x + 0.5, y + 0.5))) {
                    ++inside;
                    sum += x + 10 * y;
                }
        const RegionStatistics s = regionStatistics(image, 0, RegionShape::Ellipse, bounds);
        QVERIFY(std::abs(s.pixels - inside) <= 2);  // the path is a Bézier approximation of the ellipse
        QVERIFY(std::fabs(s.mean - sum / double(inside)) < 0.5);
        QVERIFY(std::fabs(s.areaPixels - M_PI * bounds.width() / 2 * bounds.height() / 2) < 1e-9);
        QVERIFY(s.pixels < regionStatistics(image, 0, RegionShape::Rectangle, bounds).pixels);
    }

    void regionsAreClippedToTheImage()
    {
        const DecodedImage image = ramp(10, 10);
        const RegionStatistics s = regionStatistics(image, 0, RegionShape::Rectangle, QRectF(-5, -5, 7, 7));  // covers x, y 0…1
        QCOMPARE(s.pixels, 4);
        QCOMPARE(s.minimum, 0.0);
        QCOMPARE(s.maximum, 11.0);
        QCOMPARE(s.areaPixels, 49.0);  // the drawn shape's area
        const RegionStatistics outside = regionStatistics(image, 0, RegionShape::Ellipse, QRectF(30, 30, 5, 5));
        QCOMPARE(outside.pixels, 0);
        const RegionStatistics empty = regionStatistics(image, 0, RegionShape::Rectangle, QRectF(2.2, 2.2, 0.1, 0.1));
        QCOMPARE(empty.pixels, 0);
    }

    void ctPresetsInOrder()
    {
        const QList<WindowPreset> &p = ctWindowPresets();
        QCOMPARE(p.size(), 5);
        QCOMPARE(p[0].name, QStringLiteral("Brain"));
        QCOMPARE(p[1].name, QStringLiteral("Lung"));
        QVERIFY(p[1].center < -400 && p[1].width >= 1000);  // air-filled lung
        QCOMPARE(p[2].name, QStringLiteral("Bone"));
        QVERIFY(p[2].center > 200);
        QCOMPARE(p[3].name, QStringLiteral("Abdomen"));
        QCOMPARE(p[4].name, QStringLiteral("Mediastinum"));
        QVERIFY(p[0].width < p[3].width);  // brain is the narrowest soft-tissue window
    }

    void autoWindowIgnoresAFewExtremePixels()
    {
        DecodedImage image = ramp(100, 100);  // 0 … 1089 HU
        auto *p = reinterpret_cast<quint16 *>(image.pixels.frameData(0));
        p[0] = 60000;  // two pixels of metal
        p[1] = 60000;
        const VoiWindow all = minMaxWindow(image);
        const VoiWindow automatic = autoWindow(image);
        QVERIFY(all.upper() > 50000);
        // The 0.5th and 99.5th percentiles, from a plain sort.
        std::vector<double> values;
        for (int y = 0; y < 100; ++y)
            for (int x = 0; x < 100; ++x)
                values.push_back(modalityValueAt(image, 0, QPoint(x, y)));
        std::sort(values.begin(), values.end());
        const double lo = values[size_t(0.005 * double(values.size() - 1))];
        const double hi = values[size_t(0.995 * double(values.size() - 1))];
        QVERIFY(hi < 1100);
        QCOMPARE(automatic.lower(), lo);
        QCOMPARE(automatic.upper(), hi);
    }

    /// The registry: one tool for each kind, at its kind's place, each named and measuring what its points allow
    /// (the viewer's Tools menu and the document writers take every tool from it).
    void everyKindHasItsTool()
    {
        const QList<const MeasurementTool *> tools = measurementTools();
#define SPECTRUM_ONE_MORE(kind) +1
        QCOMPARE(tools.size(), 0 SPECTRUM_MEASUREMENT_TOOLS(SPECTRUM_ONE_MORE));
#undef SPECTRUM_ONE_MORE
        const DecodedImage image = ramp(20, 20);
        const QByteArray none;
        for (int i = 0; i < tools.size(); ++i) {
            const MeasurementTool &tool = *tools[i];
            QCOMPARE(int(tool.kind()), i);
            QCOMPARE(&measurementTool(tool.kind()), &tool);
            QVERIFY(!tool.name().isEmpty() && !tool.menuText().isEmpty());
            QCOMPARE(kindFromId(kindId(tool.kind())), std::optional<AnnotationKind>(tool.kind()));
            // Its points: as many as it takes, inside the image; something drawn and something written.
            Annotation a;
            a.kind = tool.kind();
            const int n = std::abs(tool.pointCount());
            for (int k = 0; k < n; ++k)
                a.points << QPointF(3 + 3 * k, 4 + 2 * (k % 2) + k);
            a = tool.placed(a);
            QVERIFY2(isWellFormed(a), qPrintable(tool.name()));
            QVERIFY2(!tool.shapes(a).isEmpty() && !tool.reportItems(a).isEmpty() && !tool.presentationShapes(a).isEmpty(), qPrintable(tool.name()));
            const QList<MeasuredValue> values = tool.measure(a, MeasureInput{image, 0, -1, none});
            QCOMPARE(values.isEmpty(), tool.words() != Words::None);  // words say; everything else measures
        }
        QVERIFY(!kindFromId(QStringLiteral("Protractor")));
    }
};

QTEST_GUILESS_MAIN(tst_Measurements)
#include "tst_measurements.moc"
