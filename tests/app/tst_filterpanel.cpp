// SPDX-License-Identifier: Apache-2.0
// Filters on the workstation as a radiologist uses them, offscreen on the demo studies: applied live and toggled,
// never changing a value or a measurement, kept with their study unless a preset says otherwise.

#include "viewport/displayimage.h"
#include "viewport/imageviewport.h"
#include "viewer/filterpanel.h"
#include "shell/mainwindow.h"
#include "browser/studybrowser.h"
#include "stores/storesdialog.h"
#include "viewer/studyviewer.h"
#include "viewer/tagviewer.h"
#include "stores/transferspanel.h"
#include "shell/workstation.h"

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/tools/measurements.h"
#include "spectrum/stores/reading/imageloader.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "guisupport.h"
#include "demosuite.h"
#include "testsupport.h"

#include <QAction>
#include <QApplication>
#include <QListWidget>
#include <QTimer>
#include <QSpinBox>
#include <QPushButton>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSettings>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QDockWidget>
#include <QComboBox>
#include <QTest>
#include <QTreeWidget>

#include <cstring>

using namespace spectrum;
using namespace spectrum::test;

class tst_FilterPanel : public DemoWorkstationSuite
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { DemoWorkstationSuite::initTestCase(); }
    void init() { DemoWorkstationSuite::init(); }
    void filtersApplyLiveAndToggleOff();
    void valuesAndMeasurementsIgnoreTheFilters();
    void filtersStayWithTheirStudyUnlessAPresetSaysSo();
};

void tst_FilterPanel::filtersApplyLiveAndToggleOff()
{
    StudyViewer *viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
    QVERIFY(viewer);
    ImageViewport *vp = viewer->viewport();
    QTRY_VERIFY(vp->hasImage());
    viewer->showSlice(50);
    QTRY_COMPARE(vp->image().info.identity.sopInstanceUid, viewer->study().series[0].instances[50].sopInstanceUid);
    Result<DecodedImage> original = runSync(loadImage(m_ws->localStore(), viewer->study().series[0].instances[50].key));
    QVERIFY(original.isOk());

    FilterPanel *panel = m_window->filterPanel();
    panel->setSpecs({QStringLiteral("gaussian:sigma=2"), QStringLiteral("invert")});
    QVERIFY(panel->problem().isEmpty());
    Result<FilterChain> chain = panel->registry().makeChain(panel->specs());
    QVERIFY(chain.isOk());
    Result<PixelBuffer> expected = applyFilters(chain.value(), original.value().pixels, original.value().info, nullptr);
    QVERIFY(expected.isOk());
    // What is on screen is the original through the chain, in the window in use.
    QTRY_VERIFY(viewer->settings()->isFiltering() && vp->shownImage().pixels.frameBytes() == expected.value().frameBytes()
                && std::memcmp(vp->shownImage().pixels.frameData(0), expected.value().frameData(0), size_t(expected.value().frameBytes())) == 0);
    QCOMPARE(vp->renderedImage(), toQImage(renderFrame(DecodedImage{original.value().info, expected.value()}, 0, vp->window())));

    // Off (T): the original again; on: the filtered image, at once (kept).
    QTest::keySequence(m_window.get(), QKeySequence(Qt::Key_T));
    QVERIFY(!panel->isApplied());
    QTRY_VERIFY(!viewer->settings()->isFiltering());
    QTRY_VERIFY(std::memcmp(vp->shownImage().pixels.frameData(0), original.value().pixels.frameData(0), size_t(expected.value().frameBytes())) == 0);
    QTest::keySequence(m_window.get(), QKeySequence(Qt::Key_T));
    QTRY_VERIFY(std::memcmp(vp->shownImage().pixels.frameData(0), expected.value().frameData(0), size_t(expected.value().frameBytes())) == 0);

    // A mistyped parameter is a clear problem, and the original is shown.
    panel->setSpecs({QStringLiteral("gaussian:sigma=-4")});
    QVERIFY(panel->problem().contains(QStringLiteral("sigma")));
    QTRY_VERIFY(!viewer->settings()->isFiltering());
    panel->setSpecs({});
}

void tst_FilterPanel::valuesAndMeasurementsIgnoreTheFilters()
{
    StudyViewer *viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
    QVERIFY(viewer);
    ImageViewport *vp = viewer->viewport();
    FilterPanel *panel = m_window->filterPanel();
    panel->setSpecs({});
    viewer->showSlice(60);
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.sopInstanceUid == viewer->study().series[0].instances[60].sopInstanceUid);
    QVERIFY(!vp->isFiltered());
    vp->findingsLayer()->clearMeasurements();
    const double w = vp->image().info.columns, h = vp->image().info.rows;
    vp->findingsLayer()->addMeasurement(Annotation{AnnotationKind::Ellipse, {QPointF(w * 0.42, h * 0.4), QPointF(w * 0.58, h * 0.52)}, QString(), QString()});
    vp->findingsLayer()->addMeasurement(Annotation{AnnotationKind::Distance, {QPointF(w * 0.2, h * 0.75), QPointF(w * 0.8, h * 0.75)}, QString(), QString()});
    const QPoint cursor = vp->view().imageToWidget().map(QPointF(w * 0.5 + 0.5, h * 0.45 + 0.5)).toPoint();
    sendMouse(vp, QEvent::MouseMove, cursor, Qt::NoButton, Qt::NoButton);
    const QString readout = vp->pixelReadout();
    QVERIFY2(readout.endsWith(QStringLiteral(" HU")), qPrintable(readout));
    QStringList texts;
    for (const Annotation &m : vp->findingsLayer()->measurements())
        texts << vp->findingsLayer()->measurementText(m);
    QVERIFY2(texts.first().startsWith(QStringLiteral("Mean ")), qPrintable(texts.first()));

    // Sharpen changes what is painted (it overshoots at edges and lifts the noise) and nothing that is read; so
    // does a zoom, which doubles the pixels painted over the same extent.
    for (const QString &spec : {QStringLiteral("sharpen"), QStringLiteral("zoom:factor=2")}) {
        panel->setSpecs({spec});
        QTRY_VERIFY(vp->isFiltered() && vp->shownImage().pixels.frameBytes() > 0
                    && (vp->shownImage().pixels.frameBytes() != vp->image().pixels.frameBytes()
                        || std::memcmp(vp->shownImage().pixels.frameData(0), vp->image().pixels.frameData(0), size_t(vp->image().pixels.frameBytes())) != 0));
        QCOMPARE(vp->image().info.identity.sopInstanceUid, viewer->study().series[0].instances[60].sopInstanceUid);
        sendMouse(vp, QEvent::MouseMove, cursor, Qt::NoButton, Qt::NoButton);
        QCOMPARE(vp->pixelReadout(), readout);
        QStringList now;
        for (const Annotation &m : vp->findingsLayer()->measurements())
            now << vp->findingsLayer()->measurementText(m);
        QCOMPARE(now, texts);
    }
    // The overlay says the view is filtered and where the numbers come from (a banner under the badge).
    const QImage filteredShot = vp->grab().toImage();
    panel->setSpecs({});
    QTRY_VERIFY(!vp->isFiltered());
    vp->setWindow(vp->window());
    const QImage plainShot = vp->grab().toImage();
    const QRect banner(vp->width() / 4, 20, vp->width() / 2, 50);
    QVERIFY(filteredShot.copy(banner) != plainShot.copy(banner));
    vp->findingsLayer()->clearMeasurements();
}

void tst_FilterPanel::filtersStayWithTheirStudyUnlessAPresetSaysSo()
{
    FilterPanel *panel = m_window->filterPanel();
    StudyViewer *ct = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
    QVERIFY(ct);
    panel->setSpecs({QStringLiteral("sharpen")});
    QTRY_VERIFY(ct->settings()->isFiltering());

    // Another patient's study opens as acquired: the chain stays with the CT.
    StudyViewer *mr = openAndWait(m_window.get(), QStringLiteral("demo-mr"));
    QVERIFY(mr && mr != ct);
    QTRY_VERIFY(mr->viewport()->hasImage());
    QVERIFY(!mr->settings()->isFiltering());
    QVERIFY(!mr->viewport()->isFiltered());
    QVERIFY(panel->specs().isEmpty());
    QVERIFY(ct->settings()->isFiltering());
    QCOMPARE(openAndWait(m_window.get(), QStringLiteral("demo-ct")), ct);  // back to the CT: its chain in the panel
    QCOMPARE(panel->specs(), QStringList{QStringLiteral("sharpen")});
    QVERIFY(ct->settings()->isFiltering());

    // A preset saved for MR on purpose opens every MR study through it, named on the image.
    QVERIFY(panel->savePreset({QStringLiteral("MR smooth"), {QStringLiteral("gaussian:sigma=1")}, QStringLiteral("MR")}));
    QVERIFY(!panel->savePreset({QStringLiteral("MR smooth"), {QStringLiteral("sharpen")}, QString()}));  // never silently replaced
    QVERIFY(!panel->savePreset({QStringLiteral("Broken"), {QStringLiteral("gaussian:sigma=-1")}, QString()}));
    QCOMPARE(openAndWait(m_window.get(), QStringLiteral("demo-mr")), mr);
    QTest::keySequence(m_window.get(), QKeySequence::Close);
    QTRY_VERIFY(m_window->currentViewer() != mr);
    mr = openAndWait(m_window.get(), QStringLiteral("demo-mr"));
    QVERIFY(mr);
    QVERIFY(mr->settings()->isFiltering());
    QVERIFY2(mr->settings()->filterDescription().contains(QStringLiteral("MR smooth")), qPrintable(mr->settings()->filterDescription()));
    QTRY_VERIFY(mr->viewport()->isFiltered());
    QCOMPARE(panel->presetName(), QStringLiteral("MR smooth"));
    // The CR (another modality) is not touched by it.
    StudyViewer *cr = openAndWait(m_window.get(), QStringLiteral("demo-cr"));
    QVERIFY(cr && !cr->settings()->isFiltering());

    // Filters that move pixels are refused on screen: values and letters would land on the wrong side.
    openAndWait(m_window.get(), QStringLiteral("demo-ct"));
    panel->setSpecs({QStringLiteral("flip:axis=horizontal")});
    QVERIFY2(panel->problem().contains(QStringLiteral("moves the image's pixels")), qPrintable(panel->problem()));
    QTRY_VERIFY(!ct->settings()->isFiltering());
    panel->setSpecs({});

    panel->removePreset(QStringLiteral("MR smooth"));
    QVERIFY(panel->presets().isEmpty());
    openAndWait(m_window.get(), QStringLiteral("demo-ct"));
    panel->setSpecs({});
    QTRY_VERIFY(!ct->settings()->isFiltering());
}

QTEST_MAIN(tst_FilterPanel)
#include "tst_filterpanel.moc"
