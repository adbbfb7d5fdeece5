// SPDX-License-Identifier: Apache-2.0
// Every drawing tool as a radiologist uses it, with the mouse and keys, offscreen, on a synthetic CT whose every
// pixel is known (pixel (x, y) is x + 10·y HU, 0.5 mm pixels): what each gesture draws, the values it shows, and
// editing — points dragged, a finding moved by its outline, a bidirectional kept perpendicular, text edited,
// drawings cancelled; findings shared between two panes showing the same image.

#include "guisupport.h"
#include "viewport/imageviewport.h"
#include "rampimage.h"

#include <QApplication>
#include <QSignalSpy>
#include <QTest>

#include <cmath>

using namespace spectrum;
using spectrum::test::drag;
using spectrum::test::click;

namespace {

bool near(QPointF a, QPointF b)
{
    return std::abs(a.x() - b.x()) < 1e-6 && std::abs(a.y() - b.y()) < 1e-6;
}

} // namespace

class tst_AnnotationTools : public QObject
{
    Q_OBJECT

    /// Where image point `p` (image coordinates) is on screen: the image is 40 × 40 pixels, 10 screen pixels each.
    QPoint at(double x, double y) const { return m_vp->view().imageToWidget().map(QPointF(x, y)).toPoint(); }

private Q_SLOTS:
    void init()
    {
        m_vp = std::make_unique<ImageViewport>();
        m_vp->resize(400, 400);
        m_vp->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_vp.get()));
        DecodedImage image = test::rampCt(40, 40, 0.5, 0.5);
        image.info.identity.sopInstanceUid = QStringLiteral("2.25.77");
        m_vp->setImage(image, false, QStringLiteral("key-1"));
        m_vp->findingsLayer()->setTextPrompt([this](const QString &current) -> std::optional<QString> {
            m_prompted << current;
            return m_answer;
        });
        m_prompted.clear();
        m_answer = QStringLiteral("nodule");
    }
    void cleanup() { m_vp.reset(); }

    void angleIsADragThenAClick()
    {
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Angle));
        drag(m_vp.get(), at(30, 10), at(10, 10));  // first arm: end (30, 10) to the vertex (10, 10)
        QVERIFY(m_vp->findingsLayer()->isDrawing());
        QVERIFY(m_vp->findingsLayer()->measurements().isEmpty());
        test::sendMouse(m_vp.get(), QEvent::MouseMove, at(10, 30), Qt::NoButton, Qt::NoButton);
        click(m_vp.get(), at(10, 30));  // the other arm's end
        QVERIFY(!m_vp->findingsLayer()->isDrawing());
        QCOMPARE(m_vp->findingsLayer()->measurements().size(), 1);
        const Annotation a = m_vp->findingsLayer()->measurements().first();
        QCOMPARE(a.kind, AnnotationKind::Angle);
        QVERIFY(near(a.points[1], QPointF(10, 10)));
        QCOMPARE(m_vp->findingsLayer()->measurementText(a), QStringLiteral("90.0°"));
    }

    void cobbAngleIsTwoLines()
    {
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::CobbAngle));
        drag(m_vp.get(), at(5, 5), at(25, 5));  // level
        QVERIFY(m_vp->findingsLayer()->isDrawing());
        drag(m_vp.get(), at(5, 20), at(25, 40));  // 45° down
        QVERIFY(!m_vp->findingsLayer()->isDrawing());
        const Annotation a = m_vp->findingsLayer()->measurements().first();
        QCOMPARE(a.kind, AnnotationKind::CobbAngle);
        QCOMPARE(a.points.size(), 4);
        QCOMPARE(m_vp->findingsLayer()->measurementText(a), QStringLiteral("Cobb angle 45.0°"));
    }

    void bidirectionalKeepsItsAxesPerpendicular()
    {
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Bidirectional));
        drag(m_vp.get(), at(10, 20), at(30, 20));  // the long axis: 20 pixels, 10 mm
        Annotation a = m_vp->findingsLayer()->measurements().first();
        QCOMPARE(a.kind, AnnotationKind::Bidirectional);
        QVERIFY(near(a.points[2], QPointF(20, 15)) && near(a.points[3], QPointF(20, 25)));
        QCOMPARE(m_vp->findingsLayer()->measurementText(a), QStringLiteral("Long axis 10.0 mm\nShort axis 5.0 mm"));
        // The long axis turned by dragging its end: the short one turns with it.
        drag(m_vp.get(), at(30, 20), at(20, 30));
        a = m_vp->findingsLayer()->measurements().first();
        const QPointF longAxis = a.points[1] - a.points[0], shortAxis = a.points[3] - a.points[2];
        QVERIFY(std::abs(longAxis.x() * shortAxis.x() + longAxis.y() * shortAxis.y()) < 1e-6);
        // A short-axis end slides along its line.
        const QPointF before = a.points[3];
        drag(m_vp.get(), at(before.x(), before.y()), at(before.x() + 3, before.y() + 1));
        a = m_vp->findingsLayer()->measurements().first();
        const QPointF shortAfter = a.points[3] - a.points[2];
        QVERIFY(std::abs(longAxis.x() * shortAfter.x() + longAxis.y() * shortAfter.y()) < 1e-3);
    }

    void polygonByClicksClosedOnItsFirstVertex()
    {
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Polygon));
        click(m_vp.get(), at(4, 4));
        click(m_vp.get(), at(12, 4));
        click(m_vp.get(), at(12, 10));
        click(m_vp.get(), at(4, 10));
        QVERIFY(m_vp->findingsLayer()->isDrawing());
        click(m_vp.get(), at(4, 4));  // back on the first: closed
        QVERIFY(!m_vp->findingsLayer()->isDrawing());
        const Annotation a = m_vp->findingsLayer()->measurements().first();
        QCOMPARE(a.kind, AnnotationKind::Polygon);
        QCOMPARE(a.points.size(), 4);
        // The same pixels as the rectangle (4, 4)–(12, 10): x 4…11, y 4…9.
        const QString text = m_vp->findingsLayer()->measurementText(a);
        QVERIFY2(text.startsWith(QStringLiteral("Mean 72.5 SD 17.2 HU\nMin 44 Max 101\nArea 12.0 mm²")), qPrintable(text));

        // Enter closes too; Esc cancels.
        click(m_vp.get(), at(20, 20));
        click(m_vp.get(), at(30, 20));
        click(m_vp.get(), at(30, 30));
        QTest::keyClick(m_vp.get(), Qt::Key_Return);
        QCOMPARE(m_vp->findingsLayer()->measurements().size(), 2);
        QCOMPARE(m_vp->findingsLayer()->measurements().last().points.size(), 3);
        click(m_vp.get(), at(20, 20));
        click(m_vp.get(), at(30, 20));
        QTest::keyClick(m_vp.get(), Qt::Key_Escape);
        QVERIFY(!m_vp->findingsLayer()->isDrawing());
        QCOMPARE(m_vp->findingsLayer()->measurements().size(), 2);
    }

    void freehandIsTraced()
    {
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Freehand));
        test::sendMouse(m_vp.get(), QEvent::MouseButtonPress, at(20, 10), Qt::LeftButton, Qt::LeftButton);
        for (int i = 1; i <= 36; ++i) {
            const double t = 2 * M_PI * i / 36;
            test::sendMouse(m_vp.get(), QEvent::MouseMove, at(20 + 10 * std::sin(t), 20 - 10 * std::cos(t)), Qt::NoButton, Qt::LeftButton);
        }
        test::sendMouse(m_vp.get(), QEvent::MouseButtonRelease, at(20, 10), Qt::LeftButton, Qt::NoButton);
        const Annotation a = m_vp->findingsLayer()->measurements().first();
        QCOMPARE(a.kind, AnnotationKind::Freehand);
        QVERIFY(a.points.size() > 30);
        const QString text = m_vp->findingsLayer()->measurementText(a);
        QVERIFY2(text.contains(QStringLiteral("Area 7")), qPrintable(text));  // π · 5² ≈ 78 mm², the polygon a little less
    }

    void arrowTextAndPointValue()
    {
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Arrow));
        drag(m_vp.get(), at(10, 10), at(20, 5));
        QCOMPARE(m_prompted, QStringList{QString()});
        Annotation a = m_vp->findingsLayer()->measurements().first();
        QCOMPARE(a.kind, AnnotationKind::Arrow);
        QCOMPARE(a.text, QStringLiteral("nodule"));
        QVERIFY(near(a.points[0], QPointF(10, 10)));  // the tip is where the drag began
        QCOMPARE(m_vp->findingsLayer()->measurementText(a), QStringLiteral("nodule"));

        // A double-click on it edits the words.
        m_answer = QStringLiteral("nodule, 4 mm");
        QTest::mouseDClick(m_vp.get(), Qt::LeftButton, Qt::NoModifier, at(15, 7.5));
        QCOMPARE(m_prompted.last(), QStringLiteral("nodule"));
        QCOMPARE(m_vp->findingsLayer()->measurements().first().text, QStringLiteral("nodule, 4 mm"));

        // A text needs words: none, nothing drawn.
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Text));
        m_answer = std::nullopt;
        click(m_vp.get(), at(30, 30));
        QCOMPARE(m_vp->findingsLayer()->measurements().size(), 1);
        m_answer = QStringLiteral("motion");
        click(m_vp.get(), at(30, 30));
        QCOMPARE(m_vp->findingsLayer()->measurements().size(), 2);
        QCOMPARE(m_vp->findingsLayer()->measurements().last().kind, AnnotationKind::Text);

        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Point));
        click(m_vp.get(), at(7.5, 3.5));
        QCOMPARE(m_vp->findingsLayer()->measurements().last().kind, AnnotationKind::Point);
        QCOMPARE(m_vp->findingsLayer()->measurementText(m_vp->findingsLayer()->measurements().last()), QStringLiteral("37.0 HU"));  // 7 + 10·3
    }

    void movedWholeByItsOutline()
    {
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Rectangle));
        drag(m_vp.get(), at(4, 4), at(12, 10));
        m_vp->setTool(ViewportTool::pan());
        drag(m_vp.get(), at(8, 4), at(18, 14));  // grabbed by its top edge, moved 10 right and 10 down
        const Annotation a = m_vp->findingsLayer()->measurements().first();
        QVERIFY(near(a.points[0], QPointF(14, 14)) && near(a.points[1], QPointF(22, 20)));
        QVERIFY2(m_vp->findingsLayer()->measurementText(a).startsWith(QStringLiteral("Mean 182.5 ")), qPrintable(m_vp->findingsLayer()->measurementText(a)));  // 72.5, plus 10 + 10 · 10
    }

    /// Two panes on the same image share its findings: drawn in one, shown and editable in the other.
    void panesShareTheFindingsOfAnImage()
    {
        FindingsModel model;
        ImageViewport other;
        other.resize(400, 400);
        m_vp->findingsLayer()->setModel(&model);
        other.findingsLayer()->setModel(&model);
        other.setImage(m_vp->image(), false, QStringLiteral("key-1"));
        QSignalSpy changed(other.findingsLayer(), &FindingsLayer::measurementsChanged);
        m_vp->setTool(ViewportTool::measuring(AnnotationKind::Distance));
        drag(m_vp.get(), at(2, 2), at(12, 2));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(other.findingsLayer()->measurements().size(), 1);
        QCOMPARE(model.unsavedCount(), 1);
        QCOMPARE(model.all().first().image.sopInstanceUid, QStringLiteral("2.25.77"));
        other.findingsLayer()->deleteSelectedMeasurement();
        QVERIFY(m_vp->findingsLayer()->measurements().isEmpty());
        m_vp->findingsLayer()->setModel(new FindingsModel(m_vp.get()));  // before `model` goes
    }

private:
    std::unique_ptr<ImageViewport> m_vp;
    QStringList m_prompted;
    std::optional<QString> m_answer;
};

QTEST_MAIN(tst_AnnotationTools)
#include "tst_annotationtools.moc"
