// SPDX-License-Identifier: Apache-2.0
// Window/level matches DCMTK's own rendering (dcm2pnm with the same window) within one grey level.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/windowlevel.h"
#include "testsupport.h"

#include <QImage>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;
using namespace spectrum::test;

class tst_WindowLevel : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void linearFunctionFollowsTheStandard();
    void matchesDcm2pnm_data();
    void matchesDcm2pnm();
    void monochrome1IsInverted();
    void defaultWindowIsTheFirstPreset();

private:
    QTemporaryDir m_dir;
    QMap<QString, QString> m_files;  // alias → file
};

void tst_WindowLevel::initTestCase()
{
    DemoOptions options;
    options.ctSlices = 3;
    options.mrSlices = 2;
    const Error e = DemoArchive::generate(options, [&](DemoInstance &&inst) -> Error {
        const QString alias = inst.relativePath.section(QLatin1Char('/'), 0, 0);
        const QString path = m_dir.filePath(inst.relativePath.replace(QLatin1Char('/'), QLatin1Char('_')));
        m_files.insert(alias, path);  // keeps the last instance of each study
        return writeFile(path, inst.bytes) ? Error() : Error(ErrorCode::Io, path);
    });
    QVERIFY2(!e.isError(), qPrintable(e.toString()));
}

void tst_WindowLevel::linearFunctionFollowsTheStandard()
{
    // PS3.3 C.11.2.1.2.1 with c = 40, w = 80: x ≤ 0 → 0, x > 79 → 255, linear between.
    const VoiWindow brain{40, 80};
    QCOMPARE(applyWindow(-1000, brain), quint8(0));
    QCOMPARE(applyWindow(0, brain), quint8(0));
    QCOMPARE(applyWindow(80, brain), quint8(255));
    QCOMPARE(applyWindow(3000, brain), quint8(255));
    QVERIFY(qAbs(int(applyWindow(40, brain)) - 128) <= 1);
    QVERIFY(applyWindow(30, brain) < applyWindow(50, brain));
    // Width 1 is a threshold at the centre.
    QCOMPARE(applyWindow(99, VoiWindow{100, 1}), quint8(0));
    QCOMPARE(applyWindow(100, VoiWindow{100, 1}), quint8(255));
}

void tst_WindowLevel::matchesDcm2pnm_data()
{
    QTest::addColumn<QString>("alias");
    QTest::addColumn<double>("center");
    QTest::addColumn<double>("width");
    QTest::newRow("CT brain") << QStringLiteral("demo-ct") << 40.0 << 80.0;
    QTest::newRow("CT bone") << QStringLiteral("demo-ct") << 500.0 << 2000.0;
    QTest::newRow("CT lung") << QStringLiteral("demo-ct") << -600.0 << 1500.0;
    QTest::newRow("CT odd width") << QStringLiteral("demo-ct") << 37.5 << 101.0;
    QTest::newRow("CR monochrome1") << QStringLiteral("demo-cr") << 2300.0 << 3400.0;
    QTest::newRow("MR") << QStringLiteral("demo-mr") << 900.0 << 1200.0;
}

void tst_WindowLevel::matchesDcm2pnm()
{
    QFETCH(QString, alias);
    QFETCH(double, center);
    QFETCH(double, width);
    const QString file = m_files.value(alias);
    const QString pgm = m_dir.filePath(QStringLiteral("%1-%2-%3.pgm").arg(alias).arg(center).arg(width));
    const ProcessResult r = run(QStringLiteral(DCM2PNM_EXECUTABLE),
                                {QStringLiteral("+Ww"), QString::number(center), QString::number(width), file, pgm});
    QVERIFY2(r.ok(), r.err.constData());
    const QImage theirs = QImage(pgm).convertToFormat(QImage::Format_Grayscale8);
    QVERIFY(!theirs.isNull());

    Result<DecodedImage> image = decodeDicomFile(file);
    QVERIFY2(image.isOk(), qPrintable(image.error().toString()));
    const PixelBuffer ours = renderFrame(image.value(), 0, VoiWindow{center, width});
    QCOMPARE(ours.format(), PixelFormat::Gray8);
    QCOMPARE(QSize(ours.width(), ours.height()), theirs.size());
    int worst = 0;
    qint64 differing = 0;
    for (int y = 0; y < ours.height(); ++y) {
        const uchar *a = ours.frameData(0) + qsizetype(y) * ours.width(), *b = theirs.constScanLine(y);
        for (int x = 0; x < ours.width(); ++x) {
            const int d = std::abs(int(a[x]) - int(b[x]));
            worst = std::max(worst, d);
            differing += d != 0;
        }
    }
    qInfo() << alias << center << width << "max difference" << worst << "pixels differing" << differing;
    QVERIFY2(worst <= 1, qPrintable(QStringLiteral("max difference %1").arg(worst)));
}

void tst_WindowLevel::monochrome1IsInverted()
{
    Result<DecodedImage> cr = decodeDicomFile(m_files.value(QStringLiteral("demo-cr")));
    QVERIFY(cr.isOk());
    const DecodedImage &img = cr.value();
    // Outside the body the plate saw the most radiation: the highest values, shown black on MONOCHROME1.
    const int corner = img.pixels.valueAt(5, 5);
    int lo = 0, hi = 0;
    img.pixels.minMax(0, &lo, &hi);
    QVERIFY(corner > (lo + hi) / 2);
    auto at55 = [](const PixelBuffer &shown) { return int(shown.frameData(0)[5 * qsizetype(shown.width()) + 5]); };
    QVERIFY(at55(renderFrame(img, 0, minMaxWindow(img))) < 40);
    DecodedImage asMono2 = img;
    asMono2.info.photometric = Photometric::Monochrome2;
    QVERIFY(at55(renderFrame(asMono2, 0, minMaxWindow(img))) > 215);
}

void tst_WindowLevel::defaultWindowIsTheFirstPreset()
{
    Result<DecodedImage> ct = decodeDicomFile(m_files.value(QStringLiteral("demo-ct")));
    QVERIFY(ct.isOk());
    QCOMPARE(defaultWindow(ct.value()), (VoiWindow{40, 80}));
    DecodedImage noPresets = ct.value();
    noPresets.info.windows.clear();
    const VoiWindow mm = defaultWindow(noPresets);
    QVERIFY(mm.lower() <= -1000 && mm.upper() >= 700);  // spans air to bone
}

QTEST_GUILESS_MAIN(tst_WindowLevel)
#include "tst_windowlevel.moc"
