// SPDX-License-Identifier: Apache-2.0
// Reference lines and the crosshair: an axial stack and coronal images of the same frame of reference side by
// side — the axial slice in view is drawn as a line across the coronal image at its height, and a point picked
// with the crosshair on the coronal takes the axial pane to the slice through it, marked where it lies.
#include "guisupport.h"
#include "demosuite.h"
#include "browser/priorspanel.h"
#include "viewer/seriespane.h"

#include "spectrum/imaging/volumes/planegeometry.h"

using namespace spectrum;
using namespace spectrum::test;

class tst_ReferenceLines : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void theAxialSliceIsALineOnTheCoronal();
    void theCrosshairTakesThePanesToAPoint();
    void theAxialSliceIsALineOnTheDemoLocalizer();

private:
    int seriesNamed(const QString &description) const
    {
        for (int i = 0; i < m_viewer->study().series.size(); ++i)
            if (m_viewer->study().series[i].description == description)
                return i;
        return -1;
    }

private:
    QTemporaryDir m_dir;
    std::unique_ptr<Workstation> m_ws;
    std::unique_ptr<MainWindow> m_window;
    StudyViewer *m_viewer = nullptr;
    const double m_spacing = 250.0 / 512;  ///< the demo's pixel spacing
    const double m_top = 100.0;            ///< z of the coronal images' first row
};

void tst_ReferenceLines::initTestCase()
{
    qRegisterMetaType<spectrum::StudyViewer *>();
    Workstation::Options options;
    options.cacheDirectory = m_dir.filePath(QStringLiteral("cache"));
    options.demo.studies = {DemoStudy::HeadCt};
    options.demo.ctSlices = 40;
    options.demo.ctLocalizer = true;  // the lateral scout, as `make run` has it
    m_ws = std::make_unique<Workstation>(options);
    QSignalSpy seeded(m_ws.get(), &Workstation::seedingFinished);
    m_ws->start();
    QVERIFY(seeded.wait(120000));
    // Three coronal images (y = −20, 0, +20) in the CT's study and frame of reference: demo slices given
    // another place (what a reformat or a coronal acquisition carries).
    DemoOptions one;
    one.studies = {DemoStudy::HeadCt};
    one.ctSlices = 3;
    QList<QByteArray> slices;
    QVERIFY(!DemoArchive::generate(one, [&](DemoInstance &&i) { slices << i.bytes; return Error(); }).isError());
    const StudySummary *ct = m_ws->findStudy(QStringLiteral("demo-ct"));
    QVERIFY(ct);
    for (int k = 0; k < 3; ++k) {
        const QString path = m_dir.filePath(QStringLiteral("coronal%1.dcm").arg(k));
        QVERIFY(writeFile(path, slices[k]));
        const double y = -20.0 + 20.0 * k;
        const QStringList edits{QStringLiteral("(0020,000E)=2.25.5150000000000000000000000000000001"), QStringLiteral("(0020,0011)=7"),
                                QStringLiteral("(0008,103E)=Coronal"), QStringLiteral("(0020,0013)=%1").arg(k + 1),
                                QStringLiteral("(0008,0018)=2.25.51500000000000000000000000000001%1").arg(k),
                                QStringLiteral("(0020,0037)=1\\0\\0\\0\\0\\-1"),
                                QStringLiteral("(0020,0032)=%1\\%2\\%3").arg(-125 + m_spacing / 2, 0, 'g', 10).arg(y).arg(m_top)};
        QStringList args{QStringLiteral("-nb")};
        for (const QString &e : edits)
            args << QStringLiteral("-m") << e;
        const ProcessResult r = run(QStringLiteral(DCMODIFY_EXECUTABLE), args << path);
        QVERIFY2(r.ok(), r.err.constData());
        QVERIFY(runSync(m_ws->cache()->importFile(QStringLiteral("coronal-%1").arg(k), path)).isOk());
    }
    QTRY_VERIFY(m_ws->findStudy(QStringLiteral("demo-ct"))->series.size() == 3);
    m_window = std::make_unique<MainWindow>(m_ws.get());
    m_window->hangingProtocols()->setProtocols(ProtocolSet());
    m_window->show();
}

void tst_ReferenceLines::cleanupTestCase()
{
    m_window.reset();
    m_ws.reset();
}

void tst_ReferenceLines::theAxialSliceIsALineOnTheCoronal()
{
    m_viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
    QVERIFY(m_viewer);
    m_viewer->setGrid(1, 2);
    const int coronal = seriesNamed(QStringLiteral("Coronal")), axial = seriesNamed(QStringLiteral("Axial 6.25 mm"));
    QVERIFY(coronal >= 0 && axial >= 0);
    QVERIFY(m_viewer->showSeriesOf(m_viewer->pane(1), PriorsPanel::studyKey(m_viewer->study().identity), coronal));
    SeriesPane *axialPane = m_viewer->pane(0), *coronalPane = m_viewer->pane(1);
    m_viewer->setActivePane(axialPane);
    m_viewer->showSeries(axial);
    for (int slice : {5, 22, 31}) {
        m_viewer->showSlice(slice);
        QTRY_VERIFY(axialPane->viewport()->hasImage() && coronalPane->viewport()->hasImage()
                    && axialPane->viewport()->image().info.identity.instanceNumber == slice + 1);
        const double z = axialPane->viewport()->image().info.imagePosition[2];
        QTRY_COMPARE(coronalPane->viewport()->layers()->referenceLines().size(), 1);
        const QLineF line = coronalPane->viewport()->layers()->referenceLines().first();
        const double expected = (m_top - z) / m_spacing + 0.5;
        QVERIFY2(std::abs(line.y1() - expected) < 1e-6 && std::abs(line.y2() - expected) < 1e-6,
                 qPrintable(QStringLiteral("slice %1 at z %2: line at %3, expected %4").arg(slice).arg(z).arg(line.y1()).arg(expected)));
        QVERIFY(std::abs(std::abs(line.dx()) - 512) < 1e-6);  // across the whole image
        QVERIFY(axialPane->viewport()->layers()->referenceLines().isEmpty());  // the active pane shows none of its own
    }
    // Off: none.
    m_viewer->links()->setReferenceLinesVisible(false);
    QVERIFY(coronalPane->viewport()->layers()->referenceLines().isEmpty());
    m_viewer->links()->setReferenceLinesVisible(true);
    QCOMPARE(coronalPane->viewport()->layers()->referenceLines().size(), 1);
}

void tst_ReferenceLines::theCrosshairTakesThePanesToAPoint()
{
    QVERIFY(m_viewer);
    SeriesPane *axialPane = m_viewer->pane(0), *coronalPane = m_viewer->pane(1);
    ImageViewport *vp = coronalPane->viewport();
    vp->setTool(ViewportTool::crosshair());
    // A click on the coronal image: at column 300, at the row of z = −40.
    const double z = -40;
    const QPointF imagePoint(300.5, (m_top - z) / m_spacing + 0.5);
    const QPointF widgetPoint = vp->view().imageToWidget().map(imagePoint);
    sendMouse(vp, QEvent::MouseButtonPress, widgetPoint.toPoint(), Qt::LeftButton, Qt::LeftButton);
    sendMouse(vp, QEvent::MouseButtonRelease, widgetPoint.toPoint(), Qt::LeftButton, Qt::NoButton);
    QCOMPARE(m_viewer->activePane(), coronalPane);
    QVERIFY(m_viewer->links()->crosshairPoint());
    const PatientPoint picked = *m_viewer->links()->crosshairPoint();
    QVERIFY(std::abs(picked[2] - z) < m_spacing);  // a widget pixel is about an image pixel here
    // The axial pane goes to the slice through that height, and marks the point on it.
    QTRY_VERIFY2(axialPane->viewport()->hasImage() && std::abs(axialPane->viewport()->image().info.imagePosition[2] - picked[2])
                                                          <= axialPane->viewport()->image().info.sliceThickness / 2 + 1e-6,
                 qPrintable(QString::number(axialPane->viewport()->image().info.imagePosition[2])));
    QTRY_VERIFY(axialPane->viewport()->layers()->crosshair().has_value());
    const QPointF mark = *axialPane->viewport()->layers()->crosshair();
    const std::optional<QPointF> expected = imagePointOf(axialPane->viewport()->image().info, picked);
    QVERIFY(std::abs(mark.x() - expected->x()) < 1e-6 && std::abs(mark.y() - expected->y()) < 1e-6);
    // The coronal image at y = 0 holds the point: marked there too, where it was clicked.
    QVERIFY(vp->layers()->crosshair().has_value());
    QVERIFY(std::abs(vp->layers()->crosshair()->y() - imagePoint.y()) < 1.0);
    // Scrolled away from the point, the axial pane no longer marks it.
    m_viewer->setActivePane(axialPane);
    m_viewer->stepSlice(10);
    QTRY_VERIFY(!axialPane->viewport()->layers()->crosshair().has_value());
    vp->setTool(ViewportTool::pan());
}

// The demo CT's lateral scout (a sagittal projection, 256² over the same 250 mm, in the CT's frame of reference):
// the axial slice in view is a horizontal line across it at its height — what `make run` shows.
void tst_ReferenceLines::theAxialSliceIsALineOnTheDemoLocalizer()
{
    QVERIFY(m_viewer);
    const int scout = seriesNamed(QStringLiteral("Localizer lateral")), axial = seriesNamed(QStringLiteral("Axial 6.25 mm"));
    QVERIFY(scout >= 0 && axial >= 0);
    QCOMPARE(m_viewer->study().series[scout].instances.size(), 1);
    QCOMPARE(m_viewer->study().series[scout].plane, QStringLiteral("Sagittal"));
    QVERIFY(m_viewer->showSeriesOf(m_viewer->pane(1), PriorsPanel::studyKey(m_viewer->study().identity), scout));
    SeriesPane *axialPane = m_viewer->pane(0), *scoutPane = m_viewer->pane(1);
    m_viewer->setActivePane(axialPane);
    m_viewer->showSeries(axial);
    const double scoutSpacing = 250.0 / 256, scoutTop = 125.0 - scoutSpacing / 2;
    for (int slice : {3, 20, 36}) {
        m_viewer->showSlice(slice);
        QTRY_VERIFY(axialPane->viewport()->hasImage() && scoutPane->viewport()->hasImage()
                    && axialPane->viewport()->image().info.identity.instanceNumber == slice + 1);
        QCOMPARE(scoutPane->viewport()->image().info.identity.seriesDescription, QStringLiteral("Localizer lateral"));
        const double z = axialPane->viewport()->image().info.imagePosition[2];
        QTRY_COMPARE(scoutPane->viewport()->layers()->referenceLines().size(), 1);
        const QLineF line = scoutPane->viewport()->layers()->referenceLines().first();
        const double expected = (scoutTop - z) / scoutSpacing + 0.5;
        QVERIFY2(std::abs(line.y1() - expected) < 1e-6 && std::abs(line.y2() - expected) < 1e-6,
                 qPrintable(QStringLiteral("slice %1 at z %2: line at %3, expected %4").arg(slice).arg(z).arg(line.y1()).arg(expected)));
        QVERIFY(std::abs(std::abs(line.dx()) - 256) < 1e-6);  // across the whole scout
    }
    const DecodedImage &image = scoutPane->viewport()->image();
    QVERIFY(image.info.columns == 256 && image.info.rows == 256);
    QVERIFY2(!scoutPane->viewport()->layers()->overlay().bottomLeft.contains(QStringLiteral("Thk")), "a projection has no slice thickness to show");
}

QTEST_MAIN(tst_ReferenceLines)
#include "tst_referencelines.moc"
