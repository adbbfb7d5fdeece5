// SPDX-License-Identifier: Apache-2.0
// The image viewport as a radiologist drives it, offscreen, on a synthetic CT whose every pixel is known
// (pixel (x, y) is x + 10·y HU): what is on screen under a point, after fitting, 1:1, rotating, flipping and
// inverting; the value read out under the cursor; presets; distances and ROIs drawn with the mouse.

#include "viewport/displayimage.h"
#include "guisupport.h"
#include "viewport/imageviewport.h"
#include "viewport/screenorientation.h"
#include "viewport/viewportlayers.h"
#include "rampimage.h"

#include <QApplication>
#include <QSignalSpy>
#include <QTest>

#include <cmath>

using namespace spectrum;
using spectrum::test::drag;

namespace {
DecodedImage ramp(int width, int height)
{
    return test::rampCt(width, height, 0.5, 0.5);  // pixel (x, y) is x + 10·y HU
}

/// Where the centre of image pixel `pixel` is on screen.
QPoint onScreen(const ImageViewport &vp, QPoint pixel)
{
    return vp.view().imageToWidget().map(QPointF(pixel.x() + 0.5, pixel.y() + 0.5)).toPoint();
}

int screenGrey(ImageViewport &vp, QPoint at)
{
    return qGray(vp.grab().toImage().pixel(at));
}

} // namespace

class tst_Viewport : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init()
    {
        m_vp = std::make_unique<ImageViewport>();
        m_vp->resize(400, 400);
        m_vp->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_vp.get()));
        m_vp->setImage(m_image, false, QStringLiteral("slice-1"));
        m_vp->setWindow(VoiWindow{200, 400});  // 0 … 399 HU: every pixel of the ramp below row 40 is distinct
    }
    void cleanup() { m_vp.reset(); }

    /// The view as a presentation state keeps it: every turn and flip given as DICOM orders them (a horizontal
    /// flip, then a clockwise turn) shows the image's axes the same way on screen; the area shown and the window
    /// come back.
    void presentationViewKeepsTheOrientationAndArea()
    {
        for (int turns = 0; turns < 4; ++turns) {
            for (int flips = 0; flips < 4; ++flips) {
                m_vp->resetView();
                m_vp->setView(m_vp->view().rotated(turns));
                if (flips & 1)
                    m_vp->setView(m_vp->view().flippedHorizontally());
                if (flips & 2)
                    m_vp->setView(m_vp->view().flippedVertically());
                m_vp->setView(m_vp->view().withZoom(2.5));
                const PresentationView v = m_vp->presentationView();
                // The image's axes on screen, as the state says: flip (x → −x), then turn clockwise (y down).
                auto expected = [&v](QPointF axis) {
                    if (v.flipHorizontally)
                        axis.setX(-axis.x());
                    const double a = v.rotation * M_PI / 180;
                    return QPointF(std::round(axis.x() * std::cos(a) - axis.y() * std::sin(a)), std::round(axis.x() * std::sin(a) + axis.y() * std::cos(a)));
                };
                const QTransform t = m_vp->view().imageToWidget();
                auto onScreen = [&t](QPointF axis) {
                    const QPointF d = t.map(QPointF(20, 20) + axis) - t.map(QPointF(20, 20));
                    const double n = std::hypot(d.x(), d.y());
                    return QPointF(std::round(d.x() / n), std::round(d.y() / n));
                };
                const QString what = QStringLiteral("turns %1 flips %2").arg(turns).arg(flips);
                QVERIFY2(onScreen({1, 0}) == expected({1, 0}) && onScreen({0, 1}) == expected({0, 1}), qPrintable(what));
                // Given back to another viewport of the same size: the same picture.
                ImageViewport other;
                other.resize(m_vp->size());
                other.setImage(m_image, false, QStringLiteral("slice-1"));
                other.applyPresentationView(v);
                for (const QPointF p : {QPointF(3, 4), QPointF(20, 20), QPointF(33, 7)}) {
                    const QPointF d = other.view().imageToWidget().map(p) - t.map(p);
                    QVERIFY2(std::hypot(d.x(), d.y()) < 0.5, qPrintable(what));
                }
                QCOMPARE(other.window(), m_vp->window());
            }
        }
    }

    /// A presentation state in use shows each of its images as it says as the image comes into view: its own
    /// window and displayed area, its shutter (outside it: the shutter's grey) and its overlay; the reader's own view
    /// again after Reset.
    void presentationStateFollowsEachImage()
    {
        DecodedImage a = m_image, b = m_image;
        a.info.identity.sopInstanceUid = QStringLiteral("2.25.501");
        b.info.identity.sopInstanceUid = QStringLiteral("2.25.502");
        const ImageRef ra{QString(), QString(), QString(), a.info.identity.sopInstanceUid, 0};
        const ImageRef rb{QString(), QString(), QString(), b.info.identity.sopInstanceUid, 0};
        m_vp->setImage(a, false, QStringLiteral("a"));
        auto ps = std::make_shared<PresentationState>();
        ps->images = {ra, rb};
        ps->windows = {PresentationWindow{{ra}, {165, 100}}, PresentationWindow{{rb}, {250, 60}}};
        ps->areas = {PresentationArea{{ra}, QRectF(0, 0, 20, 20)}};
        PresentationShutter shutter;
        shutter.rectangle = QRectF(10, 10, 10, 10);  // pixels 10…19 shown
        shutter.circle = std::make_pair(QPointF(14, 13), 5.0);  // and within 5 pixels of (14, 13)
        shutter.grey = 1.0;
        ps->shutter = shutter;
        PresentationOverlay overlay;
        overlay.rows = overlay.columns = 2;
        overlay.origin = QPointF(12, 12);
        overlay.bits = QByteArray(4, 1);
        overlay.grey = 1.0;
        ps->overlays = {overlay};
        QSignalSpy windows(m_vp.get(), &ImageViewport::windowChanged);
        m_vp->setPresentationState(ps, QStringLiteral("TEST"));
        QVERIFY(m_vp->presentationApplies());
        QCOMPARE(m_vp->window(), (VoiWindow{165, 100}));
        QVERIFY(!windows.isEmpty());
        // Its area: pixels 0…19 fill the pane.
        QVERIFY((m_vp->view().imageToWidget().map(QPointF(0, 0)) - QPointF(0, 0)).manhattanLength() < 1);
        QVERIFY((m_vp->view().imageToWidget().map(QPointF(20, 20)) - QPointF(400, 400)).manhattanLength() < 1);
        QCOMPARE(screenGrey(*m_vp, onScreen(*m_vp, QPoint(5, 5))), 255);     // 55 HU, black in this window: the shutter's white
        const int inside = screenGrey(*m_vp, onScreen(*m_vp, QPoint(16, 16)));  // 176 HU: the image, in its window
        QVERIFY2(inside > 130 && inside < 170, qPrintable(QString::number(inside)));
        QCOMPARE(screenGrey(*m_vp, onScreen(*m_vp, QPoint(12, 13))), 255);   // the overlay, over 142 HU
        QVERIFY(screenGrey(*m_vp, onScreen(*m_vp, QPoint(14, 14))) < 200);   // beside it: 154 HU in the window (~100)
        QVERIFY(screenGrey(*m_vp, onScreen(*m_vp, QPoint(17, 16))) < 255);   // (17.5, 16.5): 4.9 from the circle's centre
        QCOMPARE(screenGrey(*m_vp, onScreen(*m_vp, QPoint(18, 10))), 255);   // (18.5, 10.5): in the rectangle, 5.1 from it: the shutter
        QCOMPARE(screenGrey(*m_vp, onScreen(*m_vp, QPoint(10, 17))), 255);   // (10.5, 17.5): 5.7 from it (rows for columns: 4.3)

        // The next image: its own window, and the whole image (it has no area of its own).
        m_vp->setImage(b, true, QStringLiteral("b"));
        QCOMPARE(m_vp->window(), (VoiWindow{250, 60}));
        QVERIFY((m_vp->view().imageToWidget().map(QPointF(40, 40)) - m_vp->view().imageToWidget().map(QPointF(0, 0))).x() < 401);
        // An image the state is not for: nothing of it shown, the window kept.
        DecodedImage other = m_image;
        other.info.identity.sopInstanceUid = QStringLiteral("2.25.503");
        m_vp->setImage(other, true, QStringLiteral("other"));
        QVERIFY(!m_vp->presentationApplies());
        QCOMPARE(m_vp->window(), (VoiWindow{250, 60}));
        QVERIFY(screenGrey(*m_vp, onScreen(*m_vp, QPoint(5, 5))) < 255);
        // Back on one of its images, then Reset: the reader's view, no shutter.
        m_vp->setImage(a, true, QStringLiteral("a"));
        QVERIFY(m_vp->presentationApplies());
        m_vp->resetView();
        QVERIFY(!m_vp->presentationApplies() && !m_vp->presentationState());
        QVERIFY(screenGrey(*m_vp, onScreen(*m_vp, QPoint(5, 5))) < 255);
    }

    void fitsAndShowsEachPixelWhereItSays()
    {
        QCOMPARE(m_vp->view().displayScale(), 10.0);  // 40 × 40 pixels in 400 × 400
        QCOMPARE(onScreen(*m_vp, QPoint(0, 0)), QPoint(5, 5));
        for (const QPoint p : {QPoint(0, 0), QPoint(7, 3), QPoint(39, 20), QPoint(12, 30)}) {
            QCOMPARE(m_vp->view().pixelUnder(onScreen(*m_vp, p)), std::optional<QPoint>(p));
            QCOMPARE(screenGrey(*m_vp, onScreen(*m_vp, p)), int(applyWindow(p.x() + 10 * p.y(), m_vp->window())));
        }
        m_vp->setView(m_vp->view().atActualSize());
        QCOMPARE(m_vp->view().displayScale(), 1.0);
        QCOMPARE(m_vp->view().pixelUnder(QPoint(200, 200)), std::optional<QPoint>(QPoint(20, 20)));
        QVERIFY(!m_vp->view().pixelUnder(QPoint(10, 10)));  // off the image
        m_vp->setView(m_vp->view().fitted());
        QCOMPARE(m_vp->view().displayScale(), 10.0);
        // A tiny image (4 × 4 in 400 × 400: fitted at 100×) is shown 1:1 too, beyond the zoom's usual bounds.
        ImageViewport tiny;
        tiny.resize(m_vp->size());
        tiny.setImage(ramp(4, 4), false, QStringLiteral("tiny"));
        tiny.setView(tiny.view().atActualSize());
        QCOMPARE(tiny.view().displayScale(), 1.0);
    }

    void rotatesFlipsAndInvertsOnScreen()
    {
        m_vp->setSmoothMagnification(false);  // each screen point shows exactly one image pixel
        m_vp->setView(m_vp->view().rotated(1));  // clockwise: the image's top-left corner goes to the top right
        QCOMPARE(m_vp->view().rotation(), 90);
        QCOMPARE(m_vp->view().pixelUnder(QPoint(395, 5)), std::optional<QPoint>(QPoint(0, 0)));
        QCOMPARE(m_vp->view().pixelUnder(QPoint(5, 5)), std::optional<QPoint>(QPoint(0, 39)));
        QCOMPARE(screenGrey(*m_vp, QPoint(5, 5)), int(applyWindow(0 + 10 * 39, m_vp->window())));
        m_vp->setView(m_vp->view().rotated(-1));
        m_vp->setView(m_vp->view().flippedHorizontally());  // mirror left and right
        QCOMPARE(m_vp->view().pixelUnder(QPoint(5, 5)), std::optional<QPoint>(QPoint(39, 0)));
        m_vp->setView(m_vp->view().flippedVertically());
        QCOMPARE(m_vp->view().pixelUnder(QPoint(5, 5)), std::optional<QPoint>(QPoint(39, 39)));
        const int grey = screenGrey(*m_vp, QPoint(5, 5));
        m_vp->setInverted(true);
        QCOMPARE(screenGrey(*m_vp, QPoint(5, 5)), 255 - grey);
        m_vp->resetView();
        QCOMPARE(m_vp->view().rotation(), 0);
        QVERIFY(!m_vp->isInverted() && !m_vp->view().isFlippedHorizontally() && !m_vp->view().isFlippedVertically());
        QCOMPARE(m_vp->view().pixelUnder(QPoint(5, 5)), std::optional<QPoint>(QPoint(0, 0)));
    }

    void readsOutTheValueUnderTheCursor()
    {
        const QPoint at = onScreen(*m_vp, QPoint(3, 4));
        test::sendMouse(m_vp.get(), QEvent::MouseMove, at, Qt::NoButton, Qt::NoButton);
        QCOMPARE(m_vp->pixelReadout(), QStringLiteral("x 3 y 4  = 43 HU"));
        m_vp->setView(m_vp->view().rotated(2));  // the same screen point now shows another pixel, and says so
        QCOMPARE(m_vp->pixelReadout(), QStringLiteral("x 36 y 35  = 386 HU"));
        QEvent leave(QEvent::Leave);
        QApplication::sendEvent(m_vp.get(), &leave);
        QVERIFY(m_vp->pixelReadout().isEmpty());
    }

    void presetsAndAutoWindow()
    {
        QSignalSpy changed(m_vp.get(), &ImageViewport::windowChanged);
        m_vp->applyPreset(1);  // lung
        QCOMPARE(m_vp->window(), (VoiWindow{ctWindowPresets()[1].center, ctWindowPresets()[1].width}));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(m_vp->renderedImage(), toQImage(renderFrame(m_image, 0, m_vp->window())));
        m_vp->autoWindowLevel();
        QCOMPARE(m_vp->window(), autoWindow(m_image));
    }

    void distanceDrawnWithTheMouse()
    {
        QSignalSpy changed(m_vp->findingsLayer(), &FindingsLayer::measurementsChanged);
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Distance));
        drag(m_vp.get(), onScreen(*m_vp, QPoint(2, 2)), onScreen(*m_vp, QPoint(5, 6)));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(m_vp->findingsLayer()->measurements().size(), 1);
        const Annotation m = m_vp->findingsLayer()->measurements().first();
        QCOMPARE(m.kind, AnnotationKind::Distance);
        QCOMPARE(m.points[0], QPointF(2.5, 2.5));
        QCOMPARE(m.points[1], QPointF(5.5, 6.5));
        QCOMPARE(m_vp->findingsLayer()->measurementText(m), QStringLiteral("2.5 mm"));  // 5 pixels of 0.5 mm

        // Its end point can be dragged again, with any tool.
        m_vp->setTool(ViewportTool::pan());
        drag(m_vp.get(), onScreen(*m_vp, QPoint(5, 6)), onScreen(*m_vp, QPoint(8, 10)));
        QCOMPARE(m_vp->findingsLayer()->measurements().size(), 1);
        QCOMPARE(m_vp->findingsLayer()->measurements().first().points[1], QPointF(8.5, 10.5));
        QCOMPARE(m_vp->findingsLayer()->measurementText(m_vp->findingsLayer()->measurements().first()), QStringLiteral("5.0 mm"));  // 6 across, 8 down

        // A click without a drag draws nothing.
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Distance));
        drag(m_vp.get(), onScreen(*m_vp, QPoint(20, 20)), onScreen(*m_vp, QPoint(20, 20)));
        QCOMPARE(m_vp->findingsLayer()->measurements().size(), 1);
    }

    void regionsOfInterestWithStatistics()
    {
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Rectangle));
        // From the corner of pixel (2, 3) to the corner of pixel (5, 5): pixels x 2…4, y 3…4.
        const QTransform t = m_vp->view().imageToWidget();
        drag(m_vp.get(), t.map(QPointF(2, 3)).toPoint(), t.map(QPointF(5, 5)).toPoint());
        QCOMPARE(m_vp->findingsLayer()->measurements().size(), 1);
        const QString text = m_vp->findingsLayer()->measurementText(m_vp->findingsLayer()->measurements().first());
        QVERIFY2(text.startsWith(QStringLiteral("Mean 38.0 SD 5.1 HU\nMin 32 Max 44\nArea 1.5 mm²")), qPrintable(text));

        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Ellipse));
        drag(m_vp.get(), t.map(QPointF(10, 10)).toPoint(), t.map(QPointF(30, 30)).toPoint());
        QCOMPARE(m_vp->findingsLayer()->measurements().size(), 2);
        QCOMPARE(m_vp->findingsLayer()->measurements().last().kind, AnnotationKind::Ellipse);
        // Symmetric around the corner (20, 20), between pixels 19 and 20: the mean is 19.5 + 10 × 19.5 HU.
        const QString ellipse = m_vp->findingsLayer()->measurementText(m_vp->findingsLayer()->measurements().last());
        QVERIFY2(ellipse.startsWith(QStringLiteral("Mean 214.5 ")), qPrintable(ellipse));

        // Measurements stay with their image; the selected one (the last drawn) is deleted first.
        m_vp->setImage(m_image, true, QStringLiteral("slice-2"));
        QVERIFY(m_vp->findingsLayer()->measurements().isEmpty());
        m_vp->setImage(m_image, true, QStringLiteral("slice-1"));
        QCOMPARE(m_vp->findingsLayer()->measurements().size(), 2);
        m_vp->findingsLayer()->deleteSelectedMeasurement();
        QCOMPARE(m_vp->findingsLayer()->measurements().size(), 1);
        QCOMPARE(m_vp->findingsLayer()->measurements().first().kind, AnnotationKind::Rectangle);
        m_vp->findingsLayer()->clearMeasurements();
        QVERIFY(m_vp->findingsLayer()->measurements().isEmpty());
    }

    void measurementsAreDrawnOnScreen()
    {
        m_vp->setWindow(VoiWindow{-5000, 10});  // a window far below every value: the image is all white
        const QImage plain = m_vp->grab().toImage();
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Distance));
        drag(m_vp.get(), onScreen(*m_vp, QPoint(5, 20)), onScreen(*m_vp, QPoint(35, 20)));
        const QImage drawn = m_vp->grab().toImage();
        const QPoint middle = onScreen(*m_vp, QPoint(20, 20));
        QVERIFY(plain.pixel(middle) != drawn.pixel(middle));  // the line crosses the middle
        QCOMPARE(qGray(plain.pixel(middle)), 255);
    }

    /// Shrunk to 40 %, a line one pixel wide stays on screen wherever it falls between the screen's pixels: each
    /// screen pixel is the mean of the area it covers (picking pixels dropped whole rows and columns).
    void aThinLineSurvivesShrinking()
    {
        DecodedImage big = test::rampCt(5000, 6000, 0.1, 0.1);
        auto *p = reinterpret_cast<quint16 *>(big.pixels.frameData(0));
        std::fill(p, p + 5000 * 6000, quint16(1024));  // 0 HU everywhere
        const QList<int> lines{2000, 2251, 2502, 2753, 3004};  // on screen, five phases against its 2.5-pixel grid
        for (int x : lines)
            for (int y = 0; y < 6000; ++y)
                p[y * 5000 + x] = quint16(1024 + 1000);  // a wire: 1000 HU
        m_vp->resize(500, 600);
        m_vp->setImage(big, false, QStringLiteral("big"));
        m_vp->setWindow(VoiWindow{500, 1000});  // 0 HU black, 1000 HU white
        m_vp->setView(m_vp->view().withZoom(4));                        // fit is 10 %
        QCOMPARE(m_vp->view().displayScale(), 0.4);
        const QImage shot = m_vp->grab().toImage();
        for (int x : lines) {
            const QPoint centre = m_vp->view().imageToWidget().map(QPointF(x + 0.5, 3000)).toPoint();
            int brightest = 0;
            for (int dx = -2; dx <= 2; ++dx)
                brightest = std::max(brightest, qGray(shot.pixel(centre + QPoint(dx, 0))));
            // 1000 HU over 0.4 of a screen pixel, or 0.2 of each of two: at least a fifth of white.
            QVERIFY2(brightest >= 45, qPrintable(QStringLiteral("the line at x %1 is %2 on screen").arg(x).arg(brightest)));
        }
        QCOMPARE(m_vp->imageAsPainted().size(), QSize(2000, 2400));  // averaged down to its size on screen
        // And the background stays black between the lines.
        QCOMPARE(qGray(shot.pixel(m_vp->view().imageToWidget().map(QPointF(2125, 3000)).toPoint())), 0);
    }

    /// Shrinking by less than half too (where Qt's smooth scaling interpolates instead of averaging): each output
    /// pixel is the mean of the area it covers, so a line's brightness is kept in sum, whatever its phase.
    void areaAveragingKeepsEveryLinesShare()
    {
        QImage lines(1000, 8, QImage::Format_Grayscale8);
        lines.fill(0);
        const QList<int> xs{500, 517, 533, 551, 570};
        for (int x : xs)
            for (int y = 0; y < 8; ++y)
                lines.setPixel(x, y, qRgb(255, 255, 255));
        const QImage shrunk = shrinkByAreaAverage(lines, QSize(600, 4));
        QCOMPARE(shrunk.size(), QSize(600, 4));
        for (int x : xs) {
            int sum = 0;
            const int centre = int(x * 0.6);
            for (int dx = -2; dx <= 2; ++dx)
                sum += qGray(shrunk.pixel(centre + dx, 2));
            QVERIFY2(std::abs(sum - 153) <= 2, qPrintable(QStringLiteral("line at %1: %2 on screen in all, 153 expected").arg(x).arg(sum)));
        }
        QCOMPARE(qGray(shrunk.pixel(100, 2)), 0);
    }

    /// Magnified, the reader chooses: smooth (bilinear) or pixel-exact squares.
    void magnificationIsSmoothOrPixelExact()
    {
        DecodedImage checker = test::rampCt(4, 4, 1, 1);
        auto *p = reinterpret_cast<quint16 *>(checker.pixels.frameData(0));
        for (int y = 0; y < 4; ++y)
            for (int x = 0; x < 4; ++x)
                p[y * 4 + x] = quint16(1024 + ((x + y) % 2) * 1000);
        m_vp->setImage(checker, false, QStringLiteral("checker"));
        m_vp->setWindow(VoiWindow{500, 1000});
        QCOMPARE(m_vp->view().displayScale(), 100.0);
        QVERIFY(m_vp->smoothMagnification());
        // A third of the way into pixel (1, 1) from its left edge: bilinear mixes in pixel (0, 1).
        const QPoint at = m_vp->view().imageToWidget().map(QPointF(1.3, 1.5)).toPoint();
        const int smooth = screenGrey(*m_vp, at);
        QVERIFY2(smooth > 20 && smooth < 235, qPrintable(QString::number(smooth)));
        m_vp->setSmoothMagnification(false);
        QCOMPARE(screenGrey(*m_vp, at), 0);  // pixel (1, 1) is 0 HU, sharp
        QCOMPARE(screenGrey(*m_vp, m_vp->view().imageToWidget().map(QPointF(0.9, 1.5)).toPoint()), 255);  // pixel (0, 1)
    }

    /// Whatever filters paint, the numbers a reader takes — the value under the cursor, a region's statistics, a
    /// distance — are the original image's; a filter that changes the size changes none of them.
    void valuesComeFromTheOriginalWhateverIsShown()
    {
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Rectangle));
        const QTransform t = m_vp->view().imageToWidget();
        drag(m_vp.get(), t.map(QPointF(2, 3)).toPoint(), t.map(QPointF(5, 5)).toPoint());
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Distance));
        drag(m_vp.get(), onScreen(*m_vp, QPoint(2, 2)), onScreen(*m_vp, QPoint(5, 6)));
        const QPoint at = onScreen(*m_vp, QPoint(3, 4));
        test::sendMouse(m_vp.get(), QEvent::MouseMove, at, Qt::NoButton, Qt::NoButton);
        const QString readout = m_vp->pixelReadout();
        QCOMPARE(readout, QStringLiteral("x 3 y 4  = 43 HU"));
        QStringList texts;
        for (const Annotation &m : m_vp->findingsLayer()->measurements())
            texts << m_vp->findingsLayer()->measurementText(m);

        // Shown: every value moved by 500 (a stand-in for sharpen's overshoot), then twice the size (zoom 2).
        for (int factor : {1, 2}) {
            DecodedImage shown = test::rampCt(40 * factor, 40 * factor, 0.5 / factor, 0.5 / factor);
            auto *s = reinterpret_cast<quint16 *>(shown.pixels.frameData(0));
            for (int i = 0; i < 40 * factor * 40 * factor; ++i)
                s[i] = quint16(s[i] + 500);
            m_vp->setImage(m_image, shown, QStringLiteral("test filter"), true, QStringLiteral("slice-1"));
            QVERIFY(m_vp->isFiltered());
            QCOMPARE(m_vp->renderedImage().size(), QSize(40 * factor, 40 * factor));  // what is painted is the filtered
            QCOMPARE(m_vp->view().displayScale(), 10.0);                                       // over the original's extent
            QCOMPARE(m_vp->view().pixelUnder(at), std::optional<QPoint>(QPoint(3, 4)));
            QCOMPARE(m_vp->pixelReadout(), readout);
            QStringList now;
            for (const Annotation &m : m_vp->findingsLayer()->measurements())
                now << m_vp->findingsLayer()->measurementText(m);
            QCOMPARE(now, texts);
        }

        // While an image arrives, no value is read from a row that is not in yet.
        m_vp->setImage(m_image, m_image, QString(), true, QStringLiteral("slice-1"), 4);
        QCOMPARE(m_vp->pixelReadout(), QStringLiteral("x 3 y 4  (not here yet)"));
        QVERIFY(m_vp->findingsLayer()->measurementText(m_vp->findingsLayer()->measurements().first()).contains(QStringLiteral("statistics once the image is here")));
        m_vp->setImage(m_image, m_image, QString(), true, QStringLiteral("slice-1"), 5);
        QCOMPARE(m_vp->pixelReadout(), readout);
    }

    /// The patient's directions at the image's edges follow rotation and flips; the scale bar's length is true.
    void orientationLettersAndScaleBar()
    {
        QCOMPARE(screenDirections(m_vp->image().info, m_vp->view()).right, QString());  // no Image Orientation: no letters, rather than guesses
        DecodedImage axial = m_image;
        axial.info.hasPosition = true;
        axial.info.imageOrientation = {1, 0, 0, 0, 1, 0};
        m_vp->setImage(axial, true, QStringLiteral("slice-1"));
        ScreenDirections d = screenDirections(m_vp->image().info, m_vp->view());
        QCOMPARE(d.right, QStringLiteral("L"));
        QCOMPARE(d.left, QStringLiteral("R"));
        QCOMPARE(d.up, QStringLiteral("A"));
        QCOMPARE(d.down, QStringLiteral("P"));
        m_vp->setView(m_vp->view().rotated(1));  // clockwise: the anterior edge goes to the right
        QCOMPARE(screenDirections(m_vp->image().info, m_vp->view()).right, QStringLiteral("A"));
        QCOMPARE(screenDirections(m_vp->image().info, m_vp->view()).up, QStringLiteral("R"));
        m_vp->setView(m_vp->view().rotated(-1));
        m_vp->setView(m_vp->view().flippedHorizontally());
        QCOMPARE(screenDirections(m_vp->image().info, m_vp->view()).right, QStringLiteral("R"));
        m_vp->setView(m_vp->view().flippedHorizontally());
        axial.info.imageOrientation = {1, 0, 0, 0, 0.6, -0.8};  // an oblique: posterior and feet
        m_vp->setImage(axial, true, QStringLiteral("slice-1"));
        QCOMPARE(screenDirections(m_vp->image().info, m_vp->view()).down, QStringLiteral("FP"));
        QCOMPARE(patientDirectionLabel({0, 0, 1}), QStringLiteral("H"));

        // 40 pixels of 0.5 mm shown at 10 screen pixels each: 20 pixels a mm, so 5 mm is 100 pixels.
        const auto bar = scaleBar(m_vp->image().info, m_vp->view());
        QVERIFY(bar);
        QCOMPARE(bar->first, 5.0);
        QCOMPARE(bar->second, 100.0);
        m_vp->setView(m_vp->view().withZoom(0.5));
        QCOMPARE(scaleBar(m_vp->image().info, m_vp->view())->first, 10.0);
    }

    /// Colour images read out their three samples; a measurement's label stays inside the pane.
    void colourReadoutAndLabelsInsideThePane()
    {
        DecodedImage colour;
        colour.info.rows = colour.info.columns = 4;
        colour.info.samplesPerPixel = 3;
        colour.info.photometric = Photometric::Rgb;
        colour.pixels = PixelBuffer(PixelFormat::Rgb24, 4, 4, 1);
        uchar *p = colour.pixels.frameData(0);
        for (int i = 0; i < 16; ++i) {
            p[3 * i] = uchar(10 * i);
            p[3 * i + 1] = 200;
            p[3 * i + 2] = 7;
        }
        m_vp->setImage(colour, false, QStringLiteral("colour"));
        test::sendMouse(m_vp.get(), QEvent::MouseMove, m_vp->view().imageToWidget().map(QPointF(1.5, 2.5)).toPoint(), Qt::NoButton, Qt::NoButton);
        QCOMPARE(m_vp->pixelReadout(), QStringLiteral("x 1 y 2  = R 90 G 200 B 7"));

        m_vp->setImage(m_image, false, QStringLiteral("slice-1"));
        m_vp->findingsLayer()->addMeasurement(Annotation{AnnotationKind::Rectangle, {QPointF(30, 1), QPointF(39.5, 8)}, QString(), QString()});  // at the pane's right edge
        m_vp->grab();
        QCOMPARE(m_vp->findingsLayer()->measurementLabelBoxes().size(), 1);
        QVERIFY2(m_vp->rect().contains(m_vp->findingsLayer()->measurementLabelBoxes().first()), qPrintable(QStringLiteral("%1 %2").arg(m_vp->findingsLayer()->measurementLabelBoxes().first().x()).arg(m_vp->findingsLayer()->measurementLabelBoxes().first().right())));
    }

    /// A narrow pane waiting for its slice (fetching, or failed) keeps whose slice it is on screen, laid out as over an
    /// image: the patient's name whole, the study shortened beside it, never drawn over each other (it once was).
    void aWaitingPaneNeverOverprintsWhoseSliceItIs()
    {
        m_vp->resize(360, 400);
        ViewportOverlay overlay;
        overlay.topLeft = QStringLiteral("DEMO, HEAD PHANTOM\nID DEMO-HEAD-001\n1970-01-01  O");
        overlay.topRight = QStringLiteral("DEMO CT HEAD (Shepp-Logan phantom)\n2024-01-02\nCT Axial 10.41666667 mm (invert, 2026-11-30 01:08)");
        overlay.bottomLeft = QStringLiteral("Im 1/1");
        m_vp->layers()->setOverlay(overlay);
        m_vp->clear(QStringLiteral("Fetching image 1 of 1 from archive…"), true);
        QVERIFY(!m_vp->hasImage());
        m_vp->grab();  // paints: the placement is made
        const OverlayPlacement &placed = m_vp->overlayPlacement();
        QVERIFY(placed.texts.size() >= 3);
        for (int a = 0; a < placed.texts.size(); ++a) {
            QVERIFY2(m_vp->rect().contains(placed.texts[a].rect), qPrintable(placed.texts[a].text));
            for (int b = a + 1; b < placed.texts.size(); ++b)
                QVERIFY2(!placed.texts[a].rect.intersects(placed.texts[b].rect), qPrintable(QStringLiteral("'%1' over '%2'").arg(placed.texts[a].text, placed.texts[b].text)));
        }
        QVERIFY(placed.texts.first().text.startsWith(QStringLiteral("DEMO, HEAD PHANTOM\nID DEMO-HEAD-001")));
    }

private:
    DecodedImage m_image = ramp(40, 40);
    std::unique_ptr<ImageViewport> m_vp;
};

QTEST_MAIN(tst_Viewport)
#include "tst_viewport.moc"
