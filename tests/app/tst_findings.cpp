// SPDX-License-Identifier: Apache-2.0
// Findings that last, through a real archive: drawn on a study opened from Orthanc (DICOMweb), saved with File ▸
// Save findings as a Structured Report into the study there, and seen by another workstation with a cache of its
// own: the same findings on the same images, at the same places, with the same values — read from the report, and
// measured again on its own copy of the images.

#include "findings/findingspanel.h"
#include "readingroomsuite.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTreeWidget>

#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/documents/keyobjects.h"
#include "spectrum/imaging/documents/measurementreport.h"

using namespace spectrum;
using namespace spectrum::test;

namespace {

/// The key image series a study viewer lists (-1: none).
int keySeriesOf(StudyViewer *v)
{
    for (int i = 0; i < v->study().series.size(); ++i)
        if (isKeyImageSeries(v->study(), i))
            return i;
    return -1;
}

/// Searches `window`'s browser for the demo studies and opens `studyUid` from the archive; its viewer, or null.
StudyViewer *openFromArchive(MainWindow *window, const QString &studyUid)
{
    StudyBrowser *b = window->browser();
    QSignalSpy finished(b, &StudyBrowser::searchFinished);
    b->patientNameField()->setText(QStringLiteral("DEMO*"));
    b->search();
    if (!finished.wait(20000))
        return nullptr;
    for (int r = 0; r < b->table()->model()->rowCount(); ++r) {
        if (b->studyAtRow(r)->identity.studyInstanceUid != studyUid)
            continue;
        QSignalSpy opened(window, &MainWindow::studyOpened);
        window->openFound(*b->studyAtRow(r));
        if (!opened.wait(20000))
            return nullptr;
        return opened.first().first().value<StudyViewer *>();
    }
    return nullptr;
}

/// A second workstation, a cache of its own, the same archive, its main window shown.
struct AnotherWorkstation
{
    explicit AnotherWorkstation(const QString &archiveUrl) : ws(workstationWithArchive(dir, QStringLiteral("pacs"), archiveUrl))
    {
        if (ws) {
            window = std::make_unique<MainWindow>(ws.get());
            window->show();
        }
    }
    QTemporaryDir dir;
    std::unique_ptr<Workstation> ws;
    std::unique_ptr<MainWindow> window;
};

Annotation drawn(AnnotationKind kind, QList<QPointF> points, QString text = QString())
{
    return Annotation{kind, std::move(points), std::move(text), QString()};
}

} // namespace

class tst_Findings : public ReadingRoomSuite
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { ReadingRoomSuite::initTestCase(); }
    void cleanupTestCase() { ReadingRoomSuite::cleanupTestCase(); }

    void savedToTheArchiveAndSeenByAnotherWorkstation()
    {
        StudyViewer *viewer = openFromArchive(m_window.get(), m_ctUid);
        QVERIFY(viewer);
        QTRY_VERIFY_WITH_TIMEOUT(!viewer->study().series.isEmpty() && viewer->study().series[0].instances.size() == 24, 20000);  // listed whole
        // Findings on two slices of the CT.
        const QList<QList<Annotation>> bySlice = {
            {drawn(AnnotationKind::Distance, {{100.5, 300.25}, {400.75, 310.5}}),
             drawn(AnnotationKind::Ellipse, {{200, 180}, {300, 260}}),
             drawn(AnnotationKind::Arrow, {{256, 200}, {330, 120}}, QStringLiteral("hyperdense focus"))},
            {drawn(AnnotationKind::Angle, {{100, 100}, {150, 200}, {250, 120}}),
             drawn(AnnotationKind::Polygon, {{220, 220}, {300, 230}, {290, 300}, {230, 290}}),
             drawn(AnnotationKind::Point, {{256.5, 256.5}}),
             drawn(AnnotationKind::Bidirectional, {{150, 350}, {250, 350}, {200, 330}, {200, 370}})},
        };
        const QList<int> slices = {5, 12};
        QHash<QString, QStringList> textsBySop;  // what the first workstation shows
        for (int s = 0; s < slices.size(); ++s) {
            viewer->showSlice(slices[s]);
            const QString sop = viewer->study().series[0].instances[slices[s]].sopInstanceUid;
            QTRY_VERIFY(viewer->viewport()->layers()->completeness() >= 1.0 && viewer->viewport()->image().info.identity.sopInstanceUid == sop);
            for (const Annotation &a : bySlice[s])
                viewer->viewport()->findingsLayer()->addMeasurement(a);
            for (const Annotation &a : viewer->viewport()->findingsLayer()->measurements())
                textsBySop[sop] << viewer->viewport()->findingsLayer()->measurementText(a);
        }
        QCOMPARE(viewer->findings()->unsavedCount(), 7);
        // The view kept with them: a brain window, a quarter turn, magnified.
        viewer->viewport()->setWindow(VoiWindow{40, 80});
        viewer->viewport()->setView(viewer->viewport()->view().rotated(1));
        viewer->viewport()->setView(viewer->viewport()->view().withZoom(2.0));
        const PresentationView savedView = viewer->viewport()->presentationView();

        const int seriesBefore = int(viewer->study().series.size());
        QSignalSpy saved(m_window.get(), &MainWindow::findingsSaved);
        m_window->saveFindings();
        QVERIFY(saved.wait(30000));
        QCOMPARE(saved.first().at(0).toInt(), 2);  // the report and the view
        QVERIFY2(!saved.first().at(1).value<Error>().isError(), qPrintable(saved.first().at(1).value<Error>().toString()));
        QCOMPARE(viewer->findings()->unsavedCount(), 0);
        // The report and the view join the open study as series of their own — and do not double what is drawn.
        QTRY_COMPARE(int(viewer->study().series.size()), seriesBefore + 2);
        QStringList modalities;
        for (const SeriesSummary &s : viewer->study().series)
            modalities << s.modality;
        QVERIFY(modalities.contains(QStringLiteral("SR")) && modalities.contains(QStringLiteral("PR")));
        QTRY_COMPARE(viewer->findingsLoader()->reports().size(), 1);
        QCOMPARE(viewer->findings()->count(), 7);

        // The archive has it, in the study.
        Result<StudySummary> listed = runSync(m_ws->registry()->listStudy(QStringLiteral("pacs"), m_ctUid));
        QVERIFY(listed.isOk());
        const auto sr = std::find_if(listed.value().series.begin(), listed.value().series.end(), [](const SeriesSummary &s) { return s.modality == QLatin1String("SR"); });
        QVERIFY(sr != listed.value().series.end());
        QCOMPARE(sr->instances.size(), 1);

        // Another workstation, its own empty cache, the same archive.
        AnotherWorkstation another(m_orthanc.dicomWebUrl());
        QVERIFY(another.ws);
        MainWindow &otherWindow = *another.window;
        StudyViewer *seen = openFromArchive(&otherWindow, m_ctUid);
        QVERIFY(seen);
        QTRY_VERIFY_WITH_TIMEOUT(!seen->study().series.isEmpty() && seen->study().series[0].instances.size() == 24, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(seen->findings()->count() == 7, 30000);
        QCOMPARE(seen->findingsLoader()->notShown(), QStringList());
        for (int s = 0; s < slices.size(); ++s) {
            seen->showSlice(slices[s]);
            const QString sop = seen->study().series[0].instances[slices[s]].sopInstanceUid;
            QTRY_VERIFY(seen->viewport()->layers()->completeness() >= 1.0 && seen->viewport()->image().info.identity.sopInstanceUid == sop);
            const QList<Finding> findings = seen->viewport()->findingsLayer()->findingsInView();
            QCOMPARE(findings.size(), bySlice[s].size());
            QStringList texts;
            for (int i = 0; i < findings.size(); ++i) {
                const Finding &f = findings[i];
                QVERIFY(f.fromReport());
                QVERIFY2(f.origin.contains(otherWindow.observerName().isEmpty() ? QStringLiteral("SR") : DicomIdentity::displayName(m_window->observerName())),
                         qPrintable(f.origin));
                QCOMPARE(f.annotation.kind, bySlice[s][i].kind);
                QCOMPARE(f.annotation.text, bySlice[s][i].text);
                QCOMPARE(f.annotation.points.size(), bySlice[s][i].points.size());
                for (int p = 0; p < f.annotation.points.size(); ++p) {
                    const QPointF d = f.annotation.points[p] - bySlice[s][i].points[p];
                    QVERIFY2(std::abs(d.x()) < 0.5 && std::abs(d.y()) < 0.5, qPrintable(kindName(f.annotation.kind)));
                }
                // The report's values are what this workstation measures on its own copy of the image.
                const QList<MeasuredValue> now = seen->viewport()->findingsLayer()->valuesOf(f.annotation);
                QCOMPARE(f.reportedValues.size(), now.size());
                for (int v = 0; v < now.size(); ++v)
                    QVERIFY(std::abs(f.reportedValues[v].value - now[v].value) <= 1e-6 * std::max(1.0, std::abs(now[v].value)));
                texts << seen->viewport()->findingsLayer()->measurementText(f.annotation);
            }
            QCOMPARE(texts, textsBySop.value(sop));  // shown as the first workstation showed them
        }
        // Listed in the findings panel under the report they came from; a double-click goes to a finding's image.
        const QStringList lines = otherWindow.findingsPanel()->lines();
        QCOMPARE(lines.size(), 1 + 7 + 2);  // the report and its findings, then the presentation state
        QVERIFY2(lines.first().startsWith(QStringLiteral("SR ")), qPrintable(lines.first()));
        QCOMPARE(lines[8], QStringLiteral("Presentation states (double-click to apply)"));
        QVERIFY2(lines[9].startsWith(QStringLiteral("  PR ")) && lines[9].contains(QStringLiteral("(24 image(s))")) && lines[9].contains(QStringLiteral("turned 90°")),
                 qPrintable(lines[9]));
        for (int i = 1; i < 8; ++i)
            QVERIFY2(lines[i].endsWith(QStringLiteral("· report")) && lines[i].contains(QStringLiteral("Series 1, image")), qPrintable(lines[i]));
        QVERIFY2(lines[1].startsWith(QStringLiteral("  Distance — ")) && lines[1].contains(QStringLiteral(" mm | Series 1, image 6 ")), qPrintable(lines[1]));
        QTreeWidget *tree = otherWindow.findingsPanel()->tree();
        Q_EMIT tree->itemActivated(tree->topLevelItem(0)->child(0), 0);
        const QString sixth = seen->study().series[0].instances[5].sopInstanceUid;
        QTRY_COMPARE(seen->viewport()->image().info.identity.sopInstanceUid, sixth);

        // A finding read back and edited is the same finding: saved again, under its tracking UID.
        const Finding first = seen->viewport()->findingsLayer()->findingsInView().first();
        seen->viewport()->findingsLayer()->model()->setAnnotation(seen->viewport()->findingsLayer()->findingsKey(), 0, translated(first.annotation, QPointF(2, 0)));
        QCOMPARE(seen->findings()->unsavedCount(), 1);
        QSignalSpy savedAgain(&otherWindow, &MainWindow::findingsSaved);
        otherWindow.saveFindings();
        QVERIFY(savedAgain.wait(30000));
        QCOMPARE(savedAgain.first().at(0).toInt(), 2);
        QTRY_COMPARE(seen->findingsLoader()->reports().size(), 2);
        QCOMPARE(seen->findings()->count(), 7);

        // The first workstation's view, listed and applied on request: its window, turn and area, its graphics.
        QTRY_VERIFY(!seen->findings()->presentationStates().isEmpty());
        const PresentationEntry *state = nullptr;
        for (const PresentationEntry &p : seen->findings()->presentationStates())
            if (p.state.view.rotation == 90)
                state = &p;
        QVERIFY(state);
        QCOMPARE(state->state.images.size(), 24);
        seen->showSlice(0);
        QTRY_COMPARE(seen->viewport()->image().info.identity.sopInstanceUid, seen->study().series[0].instances[0].sopInstanceUid);
        QVERIFY(seen->applyPresentationState(state->uid));
        QCOMPARE(seen->viewport()->window(), (VoiWindow{40, 80}));
        QCOMPARE(seen->viewport()->view().rotation(), 90);
        QVERIFY(!seen->viewport()->view().isFlippedHorizontally() && !seen->viewport()->view().isFlippedVertically());
        const QPointF centre = seen->viewport()->view().imageToWidget().map(savedView.displayedArea->center());
        QVERIFY(std::abs(centre.x() - seen->viewport()->width() / 2.0) < 1.5 && std::abs(centre.y() - seen->viewport()->height() / 2.0) < 1.5);
        QVERIFY(seen->findings()->count() > 7);  // its graphics, from the presentation state
    }

    /// Key images marked with K are saved as a Key Object Selection: in the study from then on, here and on
    /// another workstation, as a series of their own, each marked on screen.
    void keyImagesSavedAndShownAsASeries()
    {
        StudyViewer *viewer = m_window->currentViewer();
        QVERIFY(viewer && viewer->study().identity.studyInstanceUid == m_ctUid);
        QStringList keys;
        for (int slice : {3, 8}) {
            viewer->showSlice(slice);
            keys << viewer->study().series[0].instances[slice].sopInstanceUid;
            QTRY_VERIFY(viewer->viewport()->layers()->completeness() >= 1.0 && viewer->viewport()->image().info.identity.sopInstanceUid == keys.last());
            QVERIFY(!viewer->viewport()->findingsLayer()->isKeyImage());
            viewer->viewport()->findingsLayer()->setKeyImage(true);
            QVERIFY(viewer->viewport()->findingsLayer()->isKeyImage());
        }
        viewer->findings()->setKeyNote(QStringLiteral("compare with the prior"));
        QVERIFY(viewer->findings()->keyImagesChanged());
        QSignalSpy saved(m_window.get(), &MainWindow::findingsSaved);
        m_window->saveFindings();
        QVERIFY(saved.wait(30000));
        QCOMPARE(saved.first().at(0).toInt(), 2);  // the selection and the view: the findings were saved before
        QVERIFY(!viewer->findings()->keyImagesChanged());

        // Here: the selection read back from the study, a series of its own of those two images.
        QTRY_VERIFY(keySeriesOf(viewer) >= 0);
        const SeriesSummary keySeries = viewer->study().series[keySeriesOf(viewer)];
        QCOMPARE(keySeries.instances.size(), 2);
        QCOMPARE(keySeries.instances[0].sopInstanceUid, keys[0]);
        QCOMPARE(keySeries.instances[1].sopInstanceUid, keys[1]);
        QCOMPARE(keySeries.description, QStringLiteral("Key images: Of Interest — compare with the prior"));

        // Another workstation: the same series, and each of its images marked as a key image.
        AnotherWorkstation another(m_orthanc.dicomWebUrl());
        QVERIFY(another.ws);
        MainWindow &otherWindow = *another.window;
        StudyViewer *seen = openFromArchive(&otherWindow, m_ctUid);
        QVERIFY(seen);
        QTRY_VERIFY_WITH_TIMEOUT(keySeriesOf(seen) >= 0, 30000);
        QCOMPARE(seen->study().series[keySeriesOf(seen)].instances.size(), 2);
        seen->showSeries(keySeriesOf(seen));
        for (int i : {0, 1}) {
            seen->showSlice(i);
            auto where = [&] {  // what is on screen instead, when it is not that key image
                const SeriesPane *pane = seen->activePane();
                return QStringLiteral("pane on series %1 (key series %2) slice %3 of a %4 study; shows %5; says '%6'")
                    .arg(pane->seriesIndex()).arg(keySeriesOf(seen)).arg(pane->sliceIndex())
                    .arg(seen->study().partial ? QStringLiteral("partial") : QStringLiteral("listed"),
                         seen->viewport()->hasImage() ? seen->viewport()->image().info.identity.sopInstanceUid : QStringLiteral("nothing"),
                         seen->viewport()->message());
            };
            QTRY_VERIFY2(seen->viewport()->hasImage() && seen->viewport()->image().info.identity.sopInstanceUid == keys[i], qPrintable(where()));
            QVERIFY(seen->viewport()->findingsLayer()->isKeyImage());
        }
        const QStringList lines = otherWindow.findingsPanel()->lines();
        QVERIFY2(lines.contains(QStringLiteral("  Series 1, image 4")) && lines.contains(QStringLiteral("  Series 1, image 9")), qPrintable(lines.join(QLatin1Char('\n'))));
    }

    /// K on a key image of the saved selection unmarks it; Save findings replaces the selection: a new one without
    /// it, and a rejection note (IHE IOCM) withdrawing the old — so on another workstation, whose archive keeps both,
    /// the image is no longer a key image either, and the old selection is listed as withdrawn.
    void unmarkingAKeyImageReplacesTheSelection()
    {
        StudyViewer *viewer = m_window->currentViewer();
        QVERIFY(viewer && viewer->study().identity.studyInstanceUid == m_ctUid);
        const int keySeries = keySeriesOf(viewer);
        QVERIFY(keySeries >= 0);
        const QString oldSelection = viewer->study().series[keySeries].seriesInstanceUid.mid(4);
        const QString kept = viewer->study().series[keySeries].instances[0].sopInstanceUid;
        const QString unmarked = viewer->study().series[keySeries].instances[1].sopInstanceUid;
        viewer->showSeries(keySeries);
        viewer->showSlice(1);
        QTRY_VERIFY(viewer->viewport()->hasImage() && viewer->viewport()->image().info.identity.sopInstanceUid == unmarked);
        QVERIFY(viewer->viewport()->findingsLayer()->isKeyImage());
        // Another reader may not unmark it: only the selection's own reader edits it.
        viewer->findings()->setReaderName(QStringLiteral("Another^Reader"));
        QVERIFY(!viewer->findings()->canUnmarkKeyImage(viewer->viewport()->findingsLayer()->imageRef()));
        viewer->findings()->setReaderName(m_window->observerName());
        QVERIFY(viewer->findings()->canUnmarkKeyImage(viewer->viewport()->findingsLayer()->imageRef()));
        viewer->viewport()->findingsLayer()->setKeyImage(false);
        QVERIFY(!viewer->viewport()->findingsLayer()->isKeyImage());
        QVERIFY(viewer->findings()->keyImagesChanged());
        QCOMPARE(viewer->findings()->replacedKeySelections().size(), 1);
        QSignalSpy saved(m_window.get(), &MainWindow::findingsSaved);
        m_window->saveFindings();
        QVERIFY(saved.wait(30000));
        QVERIFY(saved.first().at(0).toInt() >= 2);  // the new selection and the rejection note (and the view)
        QVERIFY(!saved.first().at(1).value<Error>().isError());
        QVERIFY(viewer->findings()->withdrawnDocuments().contains(oldSelection));
        auto oneKeyImage = [&](StudyViewer *v) {
            const int k = keySeriesOf(v);
            return k >= 0 && v->study().series[k].instances.size() == 1 && v->study().series[k].instances[0].sopInstanceUid == kept;
        };
        QTRY_VERIFY(oneKeyImage(viewer));
        // The pane that showed it in the replaced series still shows it (in the series that still has it).
        QTRY_VERIFY(viewer->viewport()->hasImage() && viewer->viewport()->image().info.identity.sopInstanceUid == unmarked);
        QVERIFY(!isKeyImageSeries(viewer->study(), viewer->seriesIndex()));

        AnotherWorkstation another(m_orthanc.dicomWebUrl());
        QVERIFY(another.ws);
        StudyViewer *seen = openFromArchive(another.window.get(), m_ctUid);
        QVERIFY(seen);
        QTRY_VERIFY_WITH_TIMEOUT(oneKeyImage(seen) && seen->findings()->withdrawnDocuments().contains(oldSelection), 30000);
        const SeriesSummary &ct = seen->study().series[0];
        const int slice = int(std::find_if(ct.instances.begin(), ct.instances.end(), [&](const InstanceRef &i) { return i.sopInstanceUid == unmarked; }) - ct.instances.begin());
        QVERIFY(slice < ct.instances.size());
        seen->showSeries(0);
        seen->showSlice(slice);
        QTRY_VERIFY(seen->viewport()->hasImage() && seen->viewport()->image().info.identity.sopInstanceUid == unmarked);
        QVERIFY(!seen->viewport()->findingsLayer()->isKeyImage());
        const QStringList lines = another.window->findingsPanel()->lines();
        QVERIFY2(std::any_of(lines.begin(), lines.end(), [&](const QString &l) { return l.contains(oldSelection) && l.contains(QStringLiteral("withdrawn")); }),
                 qPrintable(lines.join(QLatin1Char('\n'))));
    }

    /// File > Export de-identified copy: the study in view with its report, key images and views, into a folder;
    /// no one named, the report still on its images.
    void deidentifiedCopyOfTheStudyInView()
    {
        StudyViewer *viewer = m_window->currentViewer();
        QVERIFY(viewer);
        QTemporaryDir out;
        m_window->setQuietDialogs(true);
        QSignalSpy exported(m_window.get(), &MainWindow::deidentifiedExported);
        // The study as listed when the export starts (documents saved just before may be listed a moment later).
        int instances = 0;
        for (const SeriesSummary &s : viewer->study().series)
            if (!isKeyImageSeries(s))
                instances += int(s.instances.size());
        m_window->exportDeidentifiedTo(out.path(), DeidentifyOptions());
        QVERIFY(exported.wait(60000));
        QCOMPARE(exported.first().at(0).toInt(), instances);
        const QStringList files = QDir(out.path()).entryList({QStringLiteral("*.dcm")});
        QCOMPARE(int(files.size()), instances);
        QSet<QString> sops;
        QList<ReadReport> reports;
        for (const QString &f : files) {
            const QByteArray bytes = readFile(QDir(out.path()).filePath(f));
            Result<DicomIdentity> id = readDicomIdentity(ByteView(bytes));
            QVERIFY(id.isOk());
            QCOMPARE(id.value().patientName, QStringLiteral("ANONYMOUS"));
            QVERIFY(id.value().studyInstanceUid != m_ctUid);
            sops.insert(id.value().sopInstanceUid);
            if (id.value().modality == QLatin1String("SR")) {
                Result<ReadReport> r = readStructuredReport(ByteView(bytes));
                QVERIFY(r.isOk());
                reports << r.value();
            }
        }
        QVERIFY(!reports.isEmpty());
        for (const ReadReport &r : reports)
            for (const ReportedFinding &f : r.findings)
                QVERIFY2(sops.contains(f.image.sopInstanceUid), "a finding of the copied report lies on an image not in the copy");

        // To a store instead: the archive holds the copy as a study of its own, of no one.
        exported.clear();
        instances = 0;  // as listed now (the documents saved before may have been listed since)
        for (const SeriesSummary &s : viewer->study().series)
            if (!isKeyImageSeries(s))
                instances += int(s.instances.size());
        m_window->exportDeidentifiedTo(QString(), DeidentifyOptions(), QStringLiteral("pacs"));
        QVERIFY(exported.wait(60000));
        QCOMPARE(exported.first().at(0).toInt(), instances);
        int status = 0;
        const QByteArray found = m_orthanc.rest("POST", QStringLiteral("/tools/find"), R"({"Level":"Study","Query":{"PatientName":"ANONYMOUS"}})", &status);
        QCOMPARE(status, 200);
        QCOMPARE(QJsonDocument::fromJson(found).array().size(), 1);
    }

    /// File > Export images: the image in view with the overlay (as shown) and without (its own pixels, windowed);
    /// the series as JPEG files; the series as an MP4 cine that ffprobe (software we did not write) reads as one
    /// frame per slice at the size of the images.
    void imagesExportedAsPicturesAndACine()
    {
        StudyViewer *viewer = m_window->currentViewer();
        QVERIFY(viewer);
        viewer->showSeries(0);
        viewer->showSlice(10);
        QTRY_VERIFY(viewer->viewport()->layers()->completeness() >= 1.0 && viewer->viewport()->image().info.identity.sopInstanceUid
                                                                     == viewer->study().series[0].instances[10].sopInstanceUid);
        QTemporaryDir out;
        QSignalSpy exported(m_window.get(), &MainWindow::imagesExported);
        auto run = [&](ImageExportOptions o) {
            exported.clear();
            m_window->exportImagesTo(o);
            return exported.count() > 0 || exported.wait(60000);
        };
        ImageExportOptions o;
        o.target = out.filePath(QStringLiteral("shown.png"));
        QVERIFY(run(o));
        QCOMPARE(exported.first().at(0).toInt(), 1);
        QCOMPARE(QImage(o.target).size(), viewer->viewport()->size());

        o.withOverlay = false;
        o.target = out.filePath(QStringLiteral("pixels.png"));
        QVERIFY(run(o));
        const QImage pixels(o.target);
        QCOMPARE(pixels.size(), QSize(512, 512));
        QCOMPARE(pixels.convertToFormat(QImage::Format_Grayscale8), viewer->viewport()->renderedImage().convertToFormat(QImage::Format_Grayscale8));

        o.what = ImageExportOptions::What::Series;
        o.format = ImageExportOptions::Format::Jpeg;
        o.target = out.filePath(QStringLiteral("series"));
        QVERIFY(run(o));
        QCOMPARE(exported.first().at(0).toInt(), 24);
        QCOMPARE(QDir(o.target).entryList({QStringLiteral("*.jpg")}).size(), 24);
        QCOMPARE(QImage(QDir(o.target).filePath(QStringLiteral("IMAGE-0001.jpg"))).size(), QSize(512, 512));

        o.format = ImageExportOptions::Format::Mp4;
        o.framesPerSecond = 12;
        o.target = out.filePath(QStringLiteral("cine.mp4"));
        QVERIFY(run(o));
        QVERIFY2(!exported.first().at(1).value<Error>().isError(), qPrintable(exported.first().at(1).value<Error>().toString()));
        const ProcessResult probe = test::run(QStringLiteral(FFPROBE_EXECUTABLE), {QStringLiteral("-v"), QStringLiteral("error"), QStringLiteral("-count_frames"),
                                                                             QStringLiteral("-select_streams"), QStringLiteral("v:0"), QStringLiteral("-show_entries"),
                                                                             QStringLiteral("stream=codec_name,width,height,nb_read_frames,avg_frame_rate"),
                                                                             QStringLiteral("-of"), QStringLiteral("default=noprint_wrappers=1"), o.target});
        QVERIFY2(probe.ok(), probe.err.constData());
        for (const char *line : {"codec_name=h264", "width=512", "height=512", "nb_read_frames=24", "avg_frame_rate=12/1"})
            QVERIFY2(probe.out.contains(line), probe.out.constData());

        // With the overlay: each slice as the pane shows it.
        o.format = ImageExportOptions::Format::Png;
        o.withOverlay = true;
        o.target = out.filePath(QStringLiteral("shown-series"));
        QVERIFY(run(o));
        QCOMPARE(exported.first().at(0).toInt(), 24);
        QCOMPARE(QImage(QDir(o.target).filePath(QStringLiteral("IMAGE-0024.png"))).size(), viewer->viewport()->size());
    }

    /// The same documents over DIMSE: Save findings to a DIMSE archive (C-STORE), and the archive lists them (C-FIND).
    void documentsSentOverDimseToo()
    {
        StudyViewer *viewer = m_window->currentViewer();
        QVERIFY(viewer);
        StoreConfigFile config = m_ws->registry()->config();
        QVERIFY(!config.add(dimseStore(QStringLiteral("pacs-dimse"), m_orthanc.dicomPort(), m_orthanc.aeTitle())).isError());
        m_ws->registry()->setConfig(config);
        // Orthanc answers C-FIND only to AE titles it knows: ours, made known as a PACS's administrator would.
        int status = 0;
        m_orthanc.rest("PUT", QStringLiteral("/modalities/spectrum"),
                       QStringLiteral(R"({"AET":"%1","Host":"127.0.0.1","Port":104})").arg(config.workstation.aeTitle).toUtf8(), &status);
        QCOMPARE(status, 200);
        auto reportsListed = [this] {
            Result<StudySummary> listed = runSync(m_ws->registry()->listStudy(QStringLiteral("pacs-dimse"), m_ctUid));
            int reports = 0;
            if (listed.isOk())
                for (const SeriesSummary &s : listed.value().series)
                    if (s.modality == QLatin1String("SR"))
                        reports += int(s.instances.size());
            return listed.isOk() ? reports : -1;
        };
        const int before = reportsListed();
        QVERIFY2(before >= 1, qPrintable(QString::number(before)));  // those sent over DICOMweb, seen over DIMSE
        viewer->showSlice(2);
        QTRY_VERIFY(viewer->viewport()->layers()->completeness() >= 1.0 && viewer->viewport()->image().info.identity.sopInstanceUid
                                                                    == viewer->study().series[0].instances[2].sopInstanceUid);
        viewer->viewport()->findingsLayer()->addMeasurement(drawn(AnnotationKind::Distance, {{50, 50}, {150, 60}}));
        QSignalSpy saved(m_window.get(), &MainWindow::findingsSaved);
        m_window->saveFindingsTo(QStringLiteral("pacs-dimse"));
        QVERIFY(saved.wait(30000));
        QVERIFY2(!saved.first().at(1).value<Error>().isError(), qPrintable(saved.first().at(1).value<Error>().toString()));
        QCOMPARE(saved.first().at(0).toInt(), 2);  // the report and the view
        QCOMPARE(reportsListed(), before + 1);
    }

    /// A rejection note in the archive (IHE IOCM, "Rejected for Patient Safety Reasons": an image of another
    /// patient, say): another workstation opening the study leaves that image out of its series, lists why, and the
    /// image is never a key image.
    void rejectedImagesAreNotShown()
    {
        StudyViewer *viewer = m_window->currentViewer();
        QVERIFY(viewer && viewer->study().identity.studyInstanceUid == m_ctUid);
        const SeriesSummary ct = viewer->study().series[0];
        const InstanceRef rejected = ct.instances[5];
        Result<ByteView> cached = runSync(m_ws->cache()->read(rejected.key));
        QVERIFY(cached.isOk());
        Result<DecodedImage> image = decodeDicom(cached.value());
        QVERIFY(image.isOk());
        KeyObjectRequest note;
        note.study = viewer->study().identity;
        note.title = KeyObjectTitle::RejectedForQualityReasons;
        note.images = {ImageRef::of(image.value().info)};
        Result<QByteArray> bytes = writeKeyObjectSelection(note);
        QVERIFY(bytes.isOk());
        int status = 0;
        m_orthanc.rest("POST", QStringLiteral("/instances"), bytes.value(), &status);
        QCOMPARE(status, 200);

        AnotherWorkstation another(m_orthanc.dicomWebUrl());
        QVERIFY(another.ws);
        StudyViewer *seen = openFromArchive(another.window.get(), m_ctUid);
        QVERIFY(seen);
        QTRY_VERIFY_WITH_TIMEOUT(seen->findings()->rejectedImages().contains(rejected.sopInstanceUid), 30000);
        QTRY_VERIFY(seen->study().series[0].instances.size() == ct.instances.size() - 1);
        for (const InstanceRef &i : seen->study().series[0].instances)
            QVERIFY(i.sopInstanceUid != rejected.sopInstanceUid);
        const QStringList lines = another.window->findingsPanel()->lines();
        QVERIFY2(std::any_of(lines.begin(), lines.end(), [](const QString &l) { return l.contains(QStringLiteral("rejected")) && l.contains(QStringLiteral("not shown")); }),
                 qPrintable(lines.join(QLatin1Char('\n'))));
        QVERIFY(!seen->findings()->isKeyImage(ImageRef::of(image.value().info)));
    }
};

QTEST_MAIN(tst_Findings)
#include "tst_findings.moc"
