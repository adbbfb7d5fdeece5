// SPDX-License-Identifier: Apache-2.0
// MPR in the workstation: the demo head CT's series in three planes. The planes are the volume's voxels (a pixel of
// the coronal plane holds the very HU of the axial slice it comes from, decoded apart); a click with the crosshair
// takes the other planes through the point, the wheel moves a plane one slice along its normal; each plane shows the
// others as reference lines; a slab and an oblique plane say what they are; a slice missing from the series is a
// hatched row with no value (never a value interpolated across it), and a slice not yet in fills in when it comes.
#include "guisupport.h"
#include "demosuite.h"
#include "volumes/mprview.h"
#include "volumes/mprvolume.h"
#include "viewer/protocolsdialog.h"

#include "spectrum/imaging/volumes/planegeometry.h"
#include "spectrum/stores/blobs/memorystore.h"

using namespace spectrum;
using namespace spectrum::test;

class tst_Mpr : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void planesAreTheVoxels();
    void theCrosshairAndTheWheelMoveThePlanes();
    void slabsAndObliquePlanesSayWhatTheyAre();
    void aMissingSliceIsHatchedAndHasNoValue();
    void aSliceNotYetInFillsInWhenItComes();
    void aSeriesStillBeingListedIsLaidOutAsItsSlicesCome();
    void aSliceTheListingDoesNotPlaceJoinsWhenItComes();
    void aSecondStackFoundWhileArrivingShowsNothing();
    void aProtocolCanAskForMpr();

private:
    /// Opens the CT's thin series in MPR and waits until every plane shows the whole volume.
    MprView *openMpr(const QString &study);
    /// Closes the viewer's tab, as its close button does.
    void closeViewer()
    {
        QTabWidget *tabs = m_window->findChild<QTabWidget *>();
        Q_EMIT tabs->tabCloseRequested(tabs->indexOf(m_viewer));
        m_viewer = nullptr;
    }
    /// Each coronal row of `view`: the slice of `thin` at its place, decoded apart, or no value when that slice is
    /// not among `come` (indices into `thin`).
    bool coronalIsTheSlices(MprView &view, const QList<DemoInstance> &thin, const QList<int> &come);
    /// The HU at `point` in the thin series' axial slice through it, decoded on its own (not by the volume).
    double sourceHu(const QString &study, const PatientPoint &point);

    QTemporaryDir m_dir;
    std::unique_ptr<Workstation> m_ws;
    std::unique_ptr<MainWindow> m_window;
    StudyViewer *m_viewer = nullptr;
    QString m_goneKey, m_goneSop;  ///< the slice the gap test takes out of the cache
};

void tst_Mpr::initTestCase()
{
    Workstation::Options options;
    options.cacheDirectory = m_dir.filePath(QStringLiteral("cache"));
    options.demo.studies = {DemoStudy::HeadCt};
    options.demo.ctSlices = 40;
    m_ws = std::make_unique<Workstation>(options);
    QSignalSpy seeded(m_ws.get(), &Workstation::seedingFinished);
    m_ws->start();
    QVERIFY(seeded.wait(120000));
    m_window = std::make_unique<MainWindow>(m_ws.get());
    m_window->hangingProtocols()->setProtocols(ProtocolSet());
    m_window->resize(1400, 800);
    m_window->show();
}

void tst_Mpr::cleanupTestCase()
{
    m_window.reset();
    m_ws.reset();
}

MprView *tst_Mpr::openMpr(const QString &study)
{
    m_viewer = openAndWait(m_window.get(), study);
    if (!m_viewer)
        return nullptr;
    int thin = -1;
    for (int i = 0; i < m_viewer->study().series.size(); ++i)
        if (m_viewer->study().series[i].instances.size() > 10 && thin < 0)
            thin = i;
    m_viewer->showSeries(thin);
    if (!m_viewer->setMprShown(true))
        return nullptr;
    MprView *mpr = m_viewer->mprView();
    if (!QTest::qWaitFor([&] { return mpr->mprVolume()->isComplete() && mpr->cutsPending() == 0 && mpr->viewport(1)->hasImage(); }, 30000))
        return nullptr;
    return mpr;
}

double tst_Mpr::sourceHu(const QString &study, const PatientPoint &point)
{
    const std::optional<StudySummary> s = readStudy(m_ws.get(), *m_ws->findStudy(study));
    if (!s)
        return NAN;
    for (const SeriesSummary &series : s->series)
        for (const InstanceRef &i : series.instances) {
            if (series.instances.size() < 39 || !i.hasPlace || std::abs(i.position[2] - point[2]) > 0.01)  // the thin series (40, or 39 with the gap)
                continue;
            Result<DecodedImage> image = runSync(loadImage(m_ws->cache(), i.key));
            if (!image.isOk())
                return NAN;
            const std::optional<QPointF> at = imagePointOf(image.value().info, point);
            return at ? modalityValueAt(image.value(), 0, QPoint(int(at->x()), int(at->y()))) : NAN;
        }
    return NAN;
}

void tst_Mpr::planesAreTheVoxels()
{
    MprView *mpr = openMpr(QStringLiteral("demo-ct"));
    QVERIFY(mpr);
    QVERIFY(m_viewer->isMprShown());
    const std::shared_ptr<Volume> volume = mpr->mprVolume()->volume();
    QCOMPARE(volume->slotCount(), 40);
    ImageViewport *coronal = mpr->viewport(1), *sagittal = mpr->viewport(2), *axial = mpr->viewport(0);
    QCOMPARE(coronal->image().info.rows, 40);     // one row per slice
    QCOMPARE(coronal->image().info.columns, 512);
    QCOMPARE(sagittal->image().info.columns, 512);
    QVERIFY(coronal->layers()->overlay().topRight.contains(QStringLiteral("coronal · voxels as acquired")));
    // Pixels of the coronal plane: the HU of the axial slice each comes from, decoded apart.
    const ImageInfo &info = coronal->image().info;
    int compared = 0;
    for (const QPoint px : {QPoint(256, 20), QPoint(100, 3), QPoint(300, 37), QPoint(200, 11)}) {
        const std::optional<PatientPoint> p = patientPointAt(info, QPointF(px) + QPointF(0.5, 0.5));
        QVERIFY(p);
        const double expected = sourceHu(QStringLiteral("demo-ct"), *p);
        QVERIFY(std::isfinite(expected));
        QCOMPARE(modalityValueAt(coronal->image(), 0, px), expected);
        ++compared;
    }
    QCOMPARE(compared, 4);
    // Measured in HU and mm as on any image: a point's value, a distance along a row in mm.
    coronal->findingsLayer()->addMeasurement(Annotation{AnnotationKind::Point, {QPointF(256.5, 20.5)}, QString(), QString()});
    const QList<MeasuredValue> v = coronal->findingsLayer()->valuesOf(coronal->findingsLayer()->measurements().last());
    QCOMPARE(v.size(), 1);
    QCOMPARE(v.first().unitMeaning, QStringLiteral("HU"));
    QCOMPARE(v.first().value, modalityValueAt(coronal->image(), 0, QPoint(256, 20)));
    const QList<MeasuredValue> d = coronal->findingsLayer()->valuesOf(Annotation{AnnotationKind::Distance, {QPointF(0, 10), QPointF(0, 30)}, QString(), QString()});
    QVERIFY(std::abs(d.first().value - 20 * volume->geometry().spacing[2]) < 1e-6);  // 20 rows, one slice apart each
    // Each plane shows the two others as lines, and the crosshair.
    for (ImageViewport *vp : {axial, coronal, sagittal}) {
        QCOMPARE(vp->layers()->referenceLines().size(), 2);
        QVERIFY(vp->layers()->crosshair().has_value());
    }
    // One window for the three.
    axial->setWindow(VoiWindow{300, 1500});
    QCOMPARE(coronal->window().center, 300.0);
    QCOMPARE(sagittal->window().width, 1500.0);
    // The menus act on the active plane.
    mpr->setActivePane(2);
    QCOMPARE(m_viewer->toolViewport(), sagittal);
    QVERIFY(m_viewer->viewport() != sagittal);  // findings, key images and exports stay with the acquired slices
}

void tst_Mpr::theCrosshairAndTheWheelMoveThePlanes()
{
    MprView *mpr = m_viewer->mprView();
    QVERIFY(mpr);
    ImageViewport *coronal = mpr->viewport(1), *axial = mpr->viewport(0);
    // A click on the coronal plane, at row 9 (slice 31 from the bottom): the axial plane goes to that slice.
    const QPointF imagePoint(300.5, 9.5);
    const PatientPoint picked = *patientPointAt(coronal->image().info, imagePoint);
    const QPointF widgetPoint = coronal->view().imageToWidget().map(imagePoint);
    QSignalSpy shown(mpr, &MprView::planeShown);
    sendMouse(coronal, QEvent::MouseButtonPress, widgetPoint.toPoint(), Qt::LeftButton, Qt::LeftButton);
    sendMouse(coronal, QEvent::MouseButtonRelease, widgetPoint.toPoint(), Qt::LeftButton, Qt::NoButton);
    QCOMPARE(mpr->activePane(), 1);
    QTRY_VERIFY(mpr->cutsPending() == 0 && std::abs(axial->image().info.imagePosition[2] - picked[2]) < 0.7);
    const double z = axial->image().info.imagePosition[2];
    QVERIFY(axial->layers()->crosshair().has_value());
    // The wheel on the axial plane: one slice on, along its normal.
    QWheelEvent wheel(QPointF(50, 50), axial->mapToGlobal(QPointF(50, 50)), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(axial, &wheel);
    QTRY_VERIFY(mpr->cutsPending() == 0 && std::abs(std::abs(axial->image().info.imagePosition[2] - z) - mpr->mprVolume()->volume()->geometry().spacing[2]) < 1e-6);
    // The coronal plane's line for the axial one moved with it.
    QTRY_COMPARE(coronal->layers()->referenceLines().size(), 2);
}

void tst_Mpr::slabsAndObliquePlanesSayWhatTheyAre()
{
    MprView *mpr = m_viewer->mprView();
    QVERIFY(mpr);
    ImageViewport *coronal = mpr->viewport(1), *sagittal = mpr->viewport(2);
    mpr->setSlab(10, SlabMode::Mip);
    QTRY_VERIFY(mpr->cutsPending() == 0 && coronal->layers()->overlay().topRight.contains(QLatin1String("MIP 10 mm")));
    QCOMPARE(coronal->image().info.sliceThickness, 10.0);
    // A MIP is never below the thin plane at the same place.
    mpr->setSlab(0, SlabMode::Mip);
    QTRY_VERIFY(mpr->cutsPending() == 0 && !coronal->layers()->overlay().topRight.contains(QLatin1String("MIP")));
    const DecodedImage thin = coronal->image();
    mpr->setSlab(10, SlabMode::Mip);
    QTRY_VERIFY(mpr->cutsPending() == 0 && coronal->layers()->overlay().topRight.contains(QLatin1String("MIP")));
    for (int x = 0; x < 512; x += 37)
        QVERIFY(modalityValueAt(coronal->image(), 0, QPoint(x, 20)) >= modalityValueAt(thin, 0, QPoint(x, 20)));
    mpr->setSlab(0, SlabMode::Mip);
    // Turning the crosshair in the axial plane makes the two others oblique.
    mpr->rotate(0, 30);
    QTRY_VERIFY(mpr->cutsPending() == 0 && coronal->layers()->overlay().topRight.contains(QLatin1String("oblique")) && coronal->layers()->overlay().topRight.contains(QLatin1String("trilinear")));
    QVERIFY(sagittal->layers()->overlay().topRight.contains(QLatin1String("oblique")));
    const Vector3 n = mpr->plane(1).normal();
    QVERIFY(std::abs(n[2]) < 1e-9);  // still vertical: turned about the axial normal
    QVERIFY(std::abs(std::abs(n[1]) - std::cos(M_PI / 6)) < 1e-6);
    mpr->resetOrientation();
    QTRY_VERIFY(mpr->cutsPending() == 0 && coronal->layers()->overlay().topRight.contains(QLatin1String("voxels as acquired")));
    QVERIFY(m_viewer->setMprShown(false));
    QVERIFY(!m_viewer->isMprShown());
    QVERIFY(m_viewer->pane(0)->isVisibleTo(m_viewer));
}

void tst_Mpr::aMissingSliceIsHatchedAndHasNoValue()
{
    // Slice 20 of the thin series taken out of the cache: a gap in the volume.
    const std::optional<StudySummary> ct = readStudy(m_ws.get(), *m_ws->findStudy(QStringLiteral("demo-ct")));
    QVERIFY(ct);
    QString gone;
    for (const SeriesSummary &s : ct->series)
        if (s.instances.size() == 40)
            gone = s.instances[20].key, m_goneSop = s.instances[20].sopInstanceUid;
    QVERIFY(!gone.isEmpty());
    m_goneKey = gone;
    closeViewer();
    QVERIFY(runSync(m_ws->cache()->remove(gone)).isOk());
    QTRY_VERIFY(m_ws->findStudy(QStringLiteral("demo-ct"))->series.size() > 0
                && std::none_of(m_ws->findStudy(QStringLiteral("demo-ct"))->series.begin(), m_ws->findStudy(QStringLiteral("demo-ct"))->series.end(),
                                [](const SeriesSummary &s) { return s.listedInstances == 40; }));
    MprView *mpr = openMpr(QStringLiteral("demo-ct"));
    QVERIFY(mpr);
    QCOMPARE(mpr->mprVolume()->volume()->geometry().missing.size(), 1);
    ImageViewport *coronal = mpr->viewport(1);
    const int row = 39 - mpr->mprVolume()->volume()->geometry().missing.first();
    QVERIFY(coronal->hasNoValue(QPoint(100, row)));
    QVERIFY(!coronal->hasNoValue(QPoint(100, row - 1)) && !coronal->hasNoValue(QPoint(100, row + 1)));
    QVERIFY(coronal->layers()->overlay().bottomLeft.contains(QLatin1String("missing slices")));
    QVERIFY(mpr->statusText().contains(QLatin1String("missing")));
    // No value read there, by the cursor or a measurement.
    coronal->findingsLayer()->addMeasurement(Annotation{AnnotationKind::Point, {QPointF(100.5, row + 0.5)}, QString(), QString()});
    QVERIFY(coronal->findingsLayer()->valuesOf(coronal->findingsLayer()->measurements().last()).isEmpty());
    const QList<MeasuredValue> region = coronal->findingsLayer()->valuesOf(Annotation{AnnotationKind::Rectangle, {QPointF(90, row - 3), QPointF(110, row + 3)}, QString(), QString()});
    QCOMPARE(region.size(), 1);  // the area alone: no statistics over the gap
    const QPointF over = coronal->view().imageToWidget().map(QPointF(100.5, row + 0.5));
    QMouseEvent move(QEvent::MouseMove, over, coronal->mapToGlobal(over), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(coronal, &move);
    QVERIFY2(coronal->pixelReadout().contains(QLatin1String("no value: missing slices")), qPrintable(coronal->pixelReadout()));
    m_viewer->setMprShown(false);
}

void tst_Mpr::aSliceNotYetInFillsInWhenItComes()
{
    // The study as listed (40 slices, from the demo generator) while one of them is not in the cache yet: placed
    // where the listing says, shown as arriving, filled in when it comes.
    closeViewer();
    DemoOptions one;
    one.studies = {DemoStudy::HeadCt};
    one.ctSlices = 40;
    QList<QByteArray> slices;
    QVERIFY(!DemoArchive::generate(one, [&](DemoInstance &&i) { slices << i.bytes; return Error(); }).isError());
    int missingIndex = -1;
    const QString missingKey = m_goneKey;
    for (int i = 0; i < slices.size(); ++i) {
        Result<DicomIdentity> id = readDicomIdentity(ByteView(slices[i]));
        QVERIFY(id.isOk());
        if (id.value().sopInstanceUid == m_goneSop)
            missingIndex = i;
    }
    QVERIFY(missingIndex >= 0);
    const QString path = m_dir.filePath(QStringLiteral("late.dcm"));
    QVERIFY(writeFile(path, slices[missingIndex]));
    // The viewer opened on the listing with it; the cache without it.
    QVERIFY(runSync(m_ws->cache()->importFile(missingKey, path)).isOk());
    QVERIFY(writeFile(path, slices[missingIndex]));  // taken by the import: written again for later
    QTRY_VERIFY_WITH_TIMEOUT(std::any_of(m_ws->findStudy(QStringLiteral("demo-ct"))->series.begin(), m_ws->findStudy(QStringLiteral("demo-ct"))->series.end(),
                                         [](const SeriesSummary &s) { return s.listedInstances == 40; }), 30000);
    const std::optional<StudySummary> read = readStudy(m_ws.get(), *m_ws->findStudy(QStringLiteral("demo-ct")));
    QVERIFY(read);
    const StudySummary listed = *read;
    QVERIFY(runSync(m_ws->cache()->remove(missingKey)).isOk());
    m_ws->images()->clear();  // not decoded anywhere either: it has to come
    auto *viewer = new StudyViewer(m_ws->cache(), m_ws->images(), listed);
    viewer->resize(1200, 700);
    viewer->show();
    int thin = -1;
    for (int i = 0; i < listed.series.size(); ++i)
        if (listed.series[i].instances.size() == 40)
            thin = i;
    viewer->showSeries(thin);
    QVERIFY(viewer->setMprShown(true));
    MprView *mpr = viewer->mprView();
    QTRY_VERIFY_WITH_TIMEOUT(mpr->mprVolume()->volume() && mpr->cutsPending() == 0 && mpr->viewport(1)->hasImage()
                                 && mpr->mprVolume()->volume()->filledSlots() == 39, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(mpr->cutsPending() == 0, 30000);
    QVERIFY(!mpr->mprVolume()->isComplete());
    QVERIFY(mpr->statusText().contains(QLatin1String("1 slice(s) arriving")));
    ImageViewport *coronal = mpr->viewport(1);
    QTRY_VERIFY_WITH_TIMEOUT(coronal->layers()->overlay().bottomLeft.contains(QLatin1String("still arriving")), 30000);
    const int row = 39 - 20;
    QVERIFY(coronal->hasNoValue(QPoint(200, row)));
    // It comes.
    QVERIFY(runSync(m_ws->cache()->importFile(missingKey, path)).isOk());
    QSignalSpy filled(mpr->mprVolume(), &MprVolume::filled);
    mpr->mprVolume()->onInstanceCached(missingKey);
    QVERIFY(filled.wait(30000));
    QTRY_VERIFY_WITH_TIMEOUT(mpr->mprVolume()->isComplete() && mpr->cutsPending() == 0 && !coronal->hasNoValue(QPoint(200, row)), 30000);
    // The source slice decoded apart, once the cache lists it again.
    QTRY_VERIFY_WITH_TIMEOUT(std::any_of(m_ws->findStudy(QStringLiteral("demo-ct"))->series.begin(), m_ws->findStudy(QStringLiteral("demo-ct"))->series.end(),
                                         [](const SeriesSummary &s) { return s.listedInstances == 40; }), 30000);
    const std::optional<PatientPoint> p = patientPointAt(coronal->image().info, QPointF(200.5, row + 0.5));
    QCOMPARE(modalityValueAt(coronal->image(), 0, QPoint(200, row)), sourceHu(QStringLiteral("demo-ct"), *p));
    delete viewer;
}

void tst_Mpr::aSeriesStillBeingListedIsLaidOutAsItsSlicesCome()
{
    // The study opened on its first look: one slice of the 40-slice series known, the archive saying there are 40.
    // MPR lays the volume out from the slices as they come, before any listing, each by its own header; places not
    // come yet are arriving (hatched, no value); more slices go into that layout; the study's other series are not
    // taken for its slices; the listing then lays it out for good, keeping what came and the crosshair.
    DemoOptions demo;
    demo.studies = {DemoStudy::HeadCt};
    demo.ctSlices = 40;
    demo.ctSlabSlices = 4;  // and a thick series beside it
    QHash<QString, QList<DemoInstance>> bySeries;
    QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) { bySeries[i.identity.seriesInstanceUid] << i; return Error(); }).isError());
    QList<DemoInstance> thin, other;  // the series of 40, and the study's others
    for (const QList<DemoInstance> &series : std::as_const(bySeries))
        (series.size() == 40 ? thin : other) << series;
    QVERIFY(!other.isEmpty());
    QCOMPARE(thin.size(), 40);
    std::sort(thin.begin(), thin.end(), [](const DemoInstance &a, const DemoInstance &b) { return a.identity.instanceNumber < b.identity.instanceNumber; });
    MemoryStore store(0);
    auto put = [&store](const DemoInstance &i) {
        Result<BlobWriterPtr> w = runSync(store.reserve(i.identity.sopInstanceUid, i.bytes.size()));
        return w.isOk() && runSync(store.write(w.value(), 0, ByteView(i.bytes))).isOk() && runSync(store.commit(w.value())).isOk();
    };
    auto refOf = [](const DemoInstance &i) { return InstanceRef::of(i.identity.sopInstanceUid, i.identity, i.bytes.size()); };
    const DemoInstance &middle = thin[20];
    QVERIFY(put(middle));  // the first look's slice, in the cache before MPR is asked for
    SeriesSummary glimpse;
    glimpse.seriesInstanceUid = middle.identity.seriesInstanceUid;
    glimpse.modality = middle.identity.modality;
    glimpse.listedInstances = 40;
    glimpse.instances = {refOf(middle)};
    ImageMemoryCache images(qint64(256) << 20);
    MprVolume volume(&store, &images, glimpse, qint64(1) << 30, m_dir.path());
    MprView view(&volume);
    view.resize(1200, 500);
    view.show();
    QSignalSpy ready(&volume, &MprVolume::ready);
    volume.setFocus(middle.identity.sopInstanceUid);
    volume.startArriving(middle.identity);
    QVERIFY(volume.isArriving());
    QTRY_VERIFY(volume.waitingFor().contains(QLatin1String("1 slice")));
    QVERIFY(view.viewport(1)->message().contains(QLatin1String("Laying out the volume")));
    // The stream, from instance 1; a slice of another series of the study among them.
    volume.onInstanceBytes(thin[0].identity.sopInstanceUid, ByteView(thin[0].bytes));
    volume.onInstanceBytes(other.first().identity.sopInstanceUid, ByteView(other.first().bytes));
    volume.onInstanceBytes(thin[1].identity.sopInstanceUid, ByteView(thin[1].bytes));
    QVERIFY(ready.wait(10000));
    const std::shared_ptr<Volume> laidOut = volume.volume();
    QCOMPARE(laidOut->slotCount(), 40);  // the whole series' reach, from the first three
    QVERIFY(laidOut->geometry().awaiting);
    QTRY_VERIFY(laidOut->filledSlots() == 3 && view.cutsPending() == 0 && view.viewport(1)->hasImage());
    QTRY_VERIFY(view.viewport(1)->layers()->completeness() < 1.0);
    // The crosshair at the slice the pane showed.
    QVERIFY(refOf(middle).hasPlace);
    QVERIFY(std::abs(view.point()[2] - refOf(middle).position[2]) < 0.01);
    for (int k = 2; k < 12; ++k)
        volume.onInstanceBytes(thin[k].identity.sopInstanceUid, ByteView(thin[k].bytes));
    QTRY_COMPARE(volume.volume()->filledSlots(), 13);
    QCOMPARE(volume.volume(), laidOut);  // placed into the layout made, not laid out again
    QTRY_VERIFY(view.cutsPending() == 0 && view.statusText().contains(QLatin1String("27 slice(s) arriving")));
    QVERIFY(view.statusText().contains(QLatin1String("laid out from the slices come so far")));
    QList<int> come{20};
    for (int k = 0; k < 12; ++k)
        come << k;
    QTRY_VERIFY(coronalIsTheSlices(view, thin, come));  // once the plane is cut again after the last of them
    // The listing: the whole series, laid out for good; what came is kept, the rest read from the cache.
    for (int k = 12; k < 40; ++k)
        if (k != 20)
            QVERIFY(put(thin[k]));
    SeriesSummary listed = glimpse;
    listed.instances.clear();
    for (const DemoInstance &i : std::as_const(thin))
        listed.instances << refOf(i);
    const Vector3 point = view.point();
    volume.relist(listed);
    QVERIFY(ready.wait(10000));
    QTRY_VERIFY_WITH_TIMEOUT(volume.isComplete() && view.cutsPending() == 0, 20000);
    QVERIFY(!volume.isArriving());
    QCOMPARE(volume.volume()->filledSlots(), 40);
    QVERIFY(!volume.volume()->geometry().awaiting);
    QVERIFY(!view.statusText().contains(QLatin1String("come so far")));
    QCOMPARE(view.point(), point);
    QTRY_COMPARE(view.viewport(1)->layers()->completeness(), 1.0);
    QList<int> all;
    for (int k = 0; k < 40; ++k)
        all << k;
    QTRY_VERIFY(coronalIsTheSlices(view, thin, all));
}

void tst_Mpr::aSliceTheListingDoesNotPlaceJoinsWhenItComes()
{
    // An archive whose listing does not say where its instances lie (a C-FIND answer without Image Position): the
    // volume is laid out from the headers of the slices in the cache; those not in yet are left out, and said to
    // be; the volume is laid out again with each when it comes; one that cannot be fetched is said, and the volume
    // complete without it — until it is fetched after all. One slice in is no volume yet, and no refusal while the
    // rest still come; an instance that is no image is left out with why.
    DemoOptions demo;
    demo.studies = {DemoStudy::HeadCt};
    demo.ctSlices = 40;
    QList<DemoInstance> thin;
    QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) { thin << i; return Error(); }).isError());
    QCOMPARE(thin.size(), 40);  // the head CT of 40 slices, nothing beside it
    std::sort(thin.begin(), thin.end(), [](const DemoInstance &a, const DemoInstance &b) { return a.identity.instanceNumber < b.identity.instanceNumber; });
    MemoryStore store(0);
    auto put = [&store](const DemoInstance &i) {
        Result<BlobWriterPtr> w = runSync(store.reserve(i.identity.sopInstanceUid, i.bytes.size()));
        return w.isOk() && runSync(store.write(w.value(), 0, ByteView(i.bytes))).isOk() && runSync(store.commit(w.value())).isOk();
    };
    SeriesSummary listed;
    listed.seriesInstanceUid = thin[0].identity.seriesInstanceUid;
    listed.modality = thin[0].identity.modality;
    listed.listedInstances = 40;
    for (const DemoInstance &i : std::as_const(thin)) {
        DicomIdentity asListed = i.identity;
        asListed.imagePosition.clear();  // not in the archive's answer
        listed.instances << InstanceRef::of(i.identity.sopInstanceUid, asListed, i.bytes.size());
        QVERIFY(!listed.instances.last().hasPlace);
    }
    {
        // One slice in so far: no volume of one slice, but no refusal either while the rest still come.
        QVERIFY(put(thin[5]));
        ImageMemoryCache images(qint64(64) << 20);
        MprVolume early(&store, &images, listed, qint64(1) << 30, m_dir.path());
        QSignalSpy waiting(&early, &MprVolume::waiting), refused(&early, &MprVolume::refused), ready(&early, &MprVolume::ready);
        early.start();
        QVERIFY(waiting.wait(10000));
        QVERIFY2(early.waitingFor().contains(QLatin1String("39 slice(s) still coming")), qPrintable(early.waitingFor()));
        QVERIFY(refused.isEmpty() && early.refusal().isEmpty());
        QVERIFY(put(thin[6]));
        early.onInstanceCached(thin[6].identity.sopInstanceUid);
        QVERIFY(ready.wait(10000));
        QCOMPARE(early.volume()->slotCount(), 2);
        QTRY_COMPARE(early.volume()->filledSlots(), 2);
        QVERIFY(!early.isComplete());  // 38 still coming
        QVERIFY(runSync(store.remove(thin[5].identity.sopInstanceUid)).isOk());
        QVERIFY(runSync(store.remove(thin[6].identity.sopInstanceUid)).isOk());
    }
    const QList<int> late{10, 37, 38, 39};
    const int lost = 25, garbled = 30;
    QList<int> in;
    for (int k = 0; k < 40; ++k)
        if (!late.contains(k) && k != lost && k != garbled) {
            QVERIFY(put(thin[k]));
            in << k;
        }
    {
        // An instance of the series in the cache that is no image: left out, and said why (never a silent gap).
        DemoInstance notAnImage = thin[garbled];
        notAnImage.bytes = QByteArray("not a DICOM file at all");
        QVERIFY(put(notAnImage));
    }
    ImageMemoryCache images(qint64(256) << 20);
    MprVolume volume(&store, &images, listed, qint64(1) << 30, m_dir.path());
    MprView view(&volume);
    view.resize(1200, 500);
    view.show();
    QSignalSpy ready(&volume, &MprVolume::ready);
    volume.start();
    QVERIFY(ready.wait(10000));
    QTRY_VERIFY_WITH_TIMEOUT(volume.volume()->filledSlots() == 34 && view.cutsPending() == 0 && view.viewport(1)->hasImage(), 20000);
    QVERIFY(volume.volume()->slotCount() < 40);  // the last three not in: the volume ends at the last one in
    const QString notes = volume.volume()->notes().join(QLatin1Char(' '));
    QVERIFY2(notes.contains(QLatin1String("5 slice(s) left out: not in the cache yet")), qPrintable(notes));
    QVERIFY2(notes.contains(thin[garbled].identity.sopInstanceUid + QLatin1String(" left out: ")), qPrintable(notes));
    QVERIFY(!volume.isComplete());  // they may come
    // They come, one after another (the next while the volume is laid out again for the one before).
    for (int k : late) {
        QVERIFY(put(thin[k]));
        volume.onInstanceCached(thin[k].identity.sopInstanceUid);
    }
    QTRY_VERIFY_WITH_TIMEOUT(volume.volume()->slotCount() == 40 && volume.volume()->filledSlots() == 38 && view.cutsPending() == 0, 20000);
    QVERIFY(volume.volume()->notes().join(QLatin1Char(' ')).contains(thin[garbled].identity.sopInstanceUid + QLatin1String(" left out: ")));
    QVERIFY(!volume.isComplete());  // one still to come
    in << late;
    QTRY_VERIFY(coronalIsTheSlices(view, thin, in));
    // It cannot be fetched: said, the volume complete without it.
    volume.onInstanceFailed(thin[lost].identity.sopInstanceUid, QStringLiteral("the archive refused it"));
    QTRY_VERIFY(volume.isComplete());
    QVERIFY(volume.volume()->notes().join(QLatin1Char(' ')).contains(QLatin1String("the archive refused it")));
    QCOMPARE(volume.volume()->filledSlots(), 38);
    // Fetched after all (the reader retried): laid out again with it.
    QVERIFY(put(thin[lost]));
    volume.onInstanceCached(thin[lost].identity.sopInstanceUid);
    QTRY_VERIFY_WITH_TIMEOUT(volume.volume()->filledSlots() == 39 && volume.isComplete() && view.cutsPending() == 0, 20000);
    in << lost;
    QTRY_VERIFY(coronalIsTheSlices(view, thin, in));
}

bool tst_Mpr::coronalIsTheSlices(MprView &view, const QList<DemoInstance> &thin, const QList<int> &come)
{
    ImageViewport *coronal = view.viewport(1);
    auto refOf = [](const DemoInstance &i) { return InstanceRef::of(i.identity.sopInstanceUid, i.identity, i.bytes.size()); };
    const ImageInfo &info = coronal->image().info;
    int checked = 0;
    for (int y = 0; y < info.rows; ++y) {
        const std::optional<PatientPoint> p = patientPointAt(info, QPointF(300.5, y + 0.5));
        if (!p)
            return false;
        const auto slice = std::find_if(thin.begin(), thin.end(), [&](const DemoInstance &i) { return std::abs(refOf(i).position[2] - (*p)[2]) < 0.01; });
        if (slice == thin.end()) {
            qWarning("row %d: no slice at z %f", y, (*p)[2]);
            return false;
        }
        if (!come.contains(int(slice - thin.begin()))) {
            if (!coronal->hasNoValue(QPoint(300, y))) {
                qWarning("row %d: slice %d has a value though it has not come", y, int(slice - thin.begin()));
                return false;
            }
            continue;
        }
        Result<DecodedImage> apart = decodeDicom(ByteView(slice->bytes));
        const std::optional<QPointF> px = imagePointOf(apart.value().info, *p);
        if (!px || coronal->hasNoValue(QPoint(300, y))
            || modalityValueAt(coronal->image(), 0, QPoint(300, y)) != modalityValueAt(apart.value(), 0, QPoint(int(px->x()), int(px->y())))) {
            qWarning("row %d: slice %d differs", y, int(slice - thin.begin()));
            return false;
        }
        ++checked;
    }
    if (checked != come.size())
        qWarning("%d rows checked of %d", checked, int(come.size()));
    return checked == come.size();
}

void tst_Mpr::aSecondStackFoundWhileArrivingShowsNothing()
{
    // Laid out from the first slices of a series still being listed; then a slice comes whose Instance Number puts
    // it elsewhere than it lies (a second reconstruction numbered on, made here with DCMTK's dcmodify): the planes
    // are taken away — none cut before is shown after — until the listing says what the series is.
    DemoOptions demo;
    demo.studies = {DemoStudy::HeadCt};
    demo.ctSlices = 40;
    QHash<QString, QList<DemoInstance>> bySeries;
    QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) { bySeries[i.identity.seriesInstanceUid] << i; return Error(); }).isError());
    QList<DemoInstance> thin;
    for (const QList<DemoInstance> &series : std::as_const(bySeries))
        if (series.size() == 40)
            thin = series;
    QCOMPARE(thin.size(), 40);
    std::sort(thin.begin(), thin.end(), [](const DemoInstance &a, const DemoInstance &b) { return a.identity.instanceNumber < b.identity.instanceNumber; });
    const QString path = m_dir.filePath(QStringLiteral("renumbered.dcm"));
    QVERIFY(writeFile(path, thin[5].bytes));
    const ProcessResult modified = run(QStringLiteral(DCMODIFY_EXECUTABLE), {QStringLiteral("-nb"), QStringLiteral("-m"), QStringLiteral("(0020,0013)=41"),
                                                                              QStringLiteral("-m"), QStringLiteral("(0008,0018)=2.25.4141"), path});
    QVERIFY2(modified.ok(), modified.err.constData());
    const QByteArray renumbered = readFile(path);
    MemoryStore store(0);
    SeriesSummary glimpse;
    glimpse.seriesInstanceUid = thin[20].identity.seriesInstanceUid;
    glimpse.listedInstances = 40;
    glimpse.instances = {InstanceRef::of(thin[20].identity.sopInstanceUid, thin[20].identity, 0)};
    ImageMemoryCache images(qint64(64) << 20);
    MprVolume volume(&store, &images, glimpse, qint64(1) << 30, m_dir.path());
    MprView view(&volume);
    view.resize(1000, 400);
    view.show();
    QSignalSpy ready(&volume, &MprVolume::ready), waiting(&volume, &MprVolume::waiting);
    volume.startArriving(thin[20].identity);
    for (int k : {20, 0, 1, 2})
        volume.onInstanceBytes(thin[k].identity.sopInstanceUid, ByteView(thin[k].bytes));
    QVERIFY(ready.wait(10000));
    QTRY_VERIFY(view.viewport(1)->hasImage() && view.cutsPending() == 0);
    waiting.clear();
    volume.onInstanceBytes(QStringLiteral("2.25.4141"), ByteView(renumbered));
    volume.onInstanceBytes(thin[3].identity.sopInstanceUid, ByteView(thin[3].bytes));  // a cut may be under way meanwhile
    QVERIFY(waiting.wait(10000));
    QVERIFY2(waiting.last().first().toString().contains(QLatin1String("Instance Numbers and places disagree")), qPrintable(waiting.last().first().toString()));
    QTRY_VERIFY(view.cutsPending() == 0);
    QVERIFY(!volume.volume());
    for (int k = 0; k < MprView::kPanes; ++k) {
        QVERIFY(!view.viewport(k)->hasImage());
        QVERIFY(view.viewport(k)->message().contains(QLatin1String("Instance Numbers and places disagree")));
    }
    QVERIFY(view.statusText().contains(QLatin1String("laying out the volume")));
}

void tst_Mpr::aProtocolCanAskForMpr()
{
    // In the protocol file, read and written back; applied, the first pane's series opens in MPR.
    const QByteArray json = R"({"format": "spectrum-hanging-protocols/1", "protocols": [{"name": "CT MPR", "match": {"modality": ["CT"]}, "layout": [1, 1], "mpr": true,
                                  "panes": [{"study": "current", "series": {"description": "*1.25*"}}]}]})";
    Result<ProtocolSet> set = ProtocolSet::fromJson(json);
    QVERIFY2(set.isOk(), qPrintable(set.isOk() ? QString() : set.error().toString()));
    QVERIFY(set.value().protocols.first().mpr);
    QVERIFY(ProtocolSet::fromJson(set.value().toJson()).value().protocols.first().mpr);
    m_window->hangingProtocols()->setProtocols(set.value());
    m_viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
    QVERIFY(m_viewer);
    QTRY_VERIFY(m_viewer->isMprShown());
    QVERIFY(m_viewer->plan().mpr);
    MprView *mpr = m_viewer->mprView();
    QTRY_VERIFY_WITH_TIMEOUT(mpr->mprVolume()->isComplete() && mpr->cutsPending() == 0 && mpr->viewport(1)->hasImage(), 30000);
    QCOMPARE(mpr->mprVolume()->series().description, m_viewer->study().series[m_viewer->seriesIndex()].description);
    // Applied again (as the listing of a study opened on its first look does): the same MPR, kept with what came.
    MprVolume *kept = m_viewer->mprView()->mprVolume();
    m_viewer->applyPlan(m_viewer->plan());
    QVERIFY(m_viewer->isMprShown());
    QCOMPARE(m_viewer->mprView()->mprVolume(), kept);
    QVERIFY(!m_viewer->isMprByReader());
    // M goes by what is shown: off first (the protocol opened it), then on again.
    const QList<QAction *> actions = m_window->findChildren<QAction *>();
    const auto m = std::find_if(actions.begin(), actions.end(), [](QAction *a) { return a->shortcut() == QKeySequence(Qt::Key_M); });
    QVERIFY(m != actions.end());
    (*m)->trigger();
    QVERIFY(!m_viewer->isMprShown());
    QVERIFY(!(*m)->isChecked());
    (*m)->trigger();
    QVERIFY(m_viewer->isMprShown());
    QVERIFY((*m)->isChecked());
    // The protocol editor's test says so.
    ProtocolsDialog dialog(set.value(), &m_viewer->study());
    dialog.list()->setCurrentRow(0);
    dialog.testCurrent();
    QVERIFY2(dialog.message().contains(QLatin1String("in MPR")), qPrintable(dialog.message()));
    m_window->hangingProtocols()->setProtocols(ProtocolSet());
}

QTEST_MAIN(tst_Mpr)
#include "tst_mpr.moc"
