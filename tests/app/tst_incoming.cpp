// SPDX-License-Identifier: Apache-2.0
// Studies coming into the workstation other than from its archives: pushed by a PACS, imported from a CD or by the
// CLI while it runs; and what they may hold — names in other alphabets, multi-frame images, segmentations.

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
#include "browser/importreport.h"
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

namespace {
/// A workstation without the demo, in `dir`, that received `files` from a "PACS" (DCMTK's storescu) into its
/// cache; null (with the reason logged) when something failed.
std::unique_ptr<Workstation> workstationWith(const QTemporaryDir &dir, const QStringList &files)
{
    Workstation::Options options;
    options.cacheDirectory = dir.filePath(QStringLiteral("cache"));
    options.seedDemoWhenEmpty = false;
    options.storageAeTitle = QStringLiteral("READROOM");
    options.storagePort = freePort();
    options.stores.workstation.callers = {{QStringLiteral("STORESCU"), QStringLiteral("127.0.0.1")}};  // the "PACS", as its admin names it
    auto ws = std::make_unique<Workstation>(options);
    QSignalSpy started(ws.get(), &Workstation::started);
    ws->start();
    if (!started.wait(10000))
        return nullptr;
    for (int i = 0; i < 100 && !ws->isListening(); ++i)
        QTest::qWait(50);
    if (files.isEmpty())
        return ws;
    QSignalSpy received(ws.get(), &Workstation::instanceReceived);
    // -R: storescu proposes the files' own SOP classes (its default list lacks Segmentation, for one).
    const ProcessResult pushed = run(QStringLiteral(STORESCU_EXECUTABLE), QStringList{QStringLiteral("-R"), QStringLiteral("-aec"), QStringLiteral("READROOM"),
                                                                                      QStringLiteral("127.0.0.1"), QString::number(options.storagePort)} + files);
    if (!pushed.ok()) {
        qWarning("storescu: %s", pushed.err.constData());
        return nullptr;
    }
    for (int i = 0; i < 200 && received.count() < files.size(); ++i)
        received.wait(50);
    return received.count() == files.size() ? std::move(ws) : nullptr;
}
} // namespace

class tst_Incoming : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void studiesPushedByAPacsAppearInTheList();
    void namesInOtherAlphabetsEverywhereTheyAreShown();
    void multiFrameImagesStepAndPlayFrameByFrame();
    void aSegmentationIsShownOverItsSource();
    void importingACdWithItsDicomdir();
    void theCliImportsWhileTheWorkstationRuns();
};

void tst_Incoming::studiesPushedByAPacsAppearInTheList()
{
    // An empty workstation (no demo) with its Storage SCP; DCMTK's storescu plays the PACS pushing a study.
    QTemporaryDir dir;
    Workstation::Options options;
    options.cacheDirectory = dir.filePath(QStringLiteral("cache"));
    options.seedDemoWhenEmpty = false;
    options.storageAeTitle = QStringLiteral("READROOM");
    options.storagePort = freePort();
    options.stores.workstation.callers = {{QStringLiteral("STORESCU"), QStringLiteral("127.0.0.1")}};  // the "PACS", as its admin names it
    Workstation ws(options);
    QSignalSpy started(&ws, &Workstation::started);
    ws.start();
    QVERIFY(started.wait(10000));
    QTRY_VERIFY(ws.isListening());
    QVERIFY(ws.studies().isEmpty());
    const ProcessResult made = run(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("demo"), QStringLiteral("--out"), dir.filePath(QStringLiteral("demo")),
                                                                         QStringLiteral("--only"), QStringLiteral("demo-mr")});
    QVERIFY2(made.ok(), made.err.constData());
    QStringList files;
    const QDir mr(dir.filePath(QStringLiteral("demo/demo-mr")));
    for (const QString &f : mr.entryList(QDir::Files, QDir::Name).mid(0, 3))
        files << mr.filePath(f);
    QCOMPARE(files.size(), 3);
    QSignalSpy received(&ws, &Workstation::instanceReceived);
    const ProcessResult pushed = run(QStringLiteral(STORESCU_EXECUTABLE), QStringList{QStringLiteral("-aec"), QStringLiteral("READROOM"), QStringLiteral("127.0.0.1"),
                                                                                      QString::number(options.storagePort)} + files);
    QVERIFY2(pushed.ok(), pushed.err.constData());
    QTRY_COMPARE(received.count(), 3);
    QTRY_COMPARE(ws.studies().size(), 1);  // the list updated itself
    QCOMPARE(ws.studies().first().identity.studyInstanceUid, DemoArchive::studyUid(DemoStudy::HeadMr));
    QVERIFY(ws.findStudy(QStringLiteral("demo-mr")));
}

/// Studies whose names pydicom wrote in Cyrillic (ISO_IR 144) and Japanese (ISO 2022 IR 87), pushed by a "PACS":
/// the study list, a search by the name as typed, the tab and the overlay show them in their own alphabet.
void tst_Incoming::namesInOtherAlphabetsEverywhereTheyAreShown()
{
    QTemporaryDir dir;
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(CHARSET_FILES_SCRIPT), dir.filePath(QStringLiteral("files"))});
    QVERIFY2(made.ok(), made.err.constData());
    std::unique_ptr<Workstation> pushed = workstationWith(dir, {dir.filePath(QStringLiteral("files/cyrillic.dcm")), dir.filePath(QStringLiteral("files/japanese.dcm"))});
    QVERIFY(pushed);
    Workstation &ws = *pushed;
    QTRY_COMPARE(ws.studies().size(), 2);

    MainWindow window(&ws);
    window.show();
    QAbstractItemModel *rows = window.studyTable()->model();
    QTRY_COMPARE(rows->rowCount(), 2);
    QStringList names;
    for (int r = 0; r < 2; ++r)
        names << rows->index(r, 0).data().toString();
    QVERIFY2(names.contains(QStringLiteral("Люкценберг, Иван")), qPrintable(names.join(QStringLiteral(" | "))));
    QVERIFY2(names.contains(QStringLiteral("Yamada, Tarou (山田 太郎)")), qPrintable(names.join(QStringLiteral(" | "))));

    // Searched as typed, in either alphabet.
    window.browser()->patientNameField()->setText(QStringLiteral("люк*"));
    window.browser()->refreshLocal();
    QTRY_COMPARE(rows->rowCount(), 1);
    QCOMPARE(rows->index(0, 0).data().toString(), QStringLiteral("Люкценберг, Иван"));
    window.browser()->patientNameField()->setText(QStringLiteral("山田*"));
    window.browser()->refreshLocal();
    QTRY_COMPARE(rows->rowCount(), 1);
    QCOMPARE(rows->index(0, 0).data().toString(), QStringLiteral("Yamada, Tarou (山田 太郎)"));

    const StudySummary cyrillic = *std::find_if(ws.studies().begin(), ws.studies().end(), [](const StudySummary &s) {
        return s.identity.patientId == QLatin1String("CS-CYRILLIC");
    });
    StudyViewer *viewer = openAndWait(&window, cyrillic.identity.studyInstanceUid);
    QVERIFY(viewer);
    QTRY_VERIFY(viewer->viewport()->hasImage());
    const QTabWidget *tabs = window.findChild<QTabWidget *>();
    QVERIFY(tabs->tabText(tabs->currentIndex()).startsWith(QStringLiteral("Люкценберг, Иван")));
    QVERIFY(viewer->viewport()->layers()->overlay().topLeft.startsWith(QStringLiteral("Люкценберг, Иван")));
    QVERIFY(viewer->viewport()->layers()->overlay().topRight.startsWith(QStringLiteral("КТ головы")));
    QVERIFY(!viewer->viewport()->layers()->overlay().topLeft.contains(QStringLiteral("⚠")));
    // The study listed under another name (an instance of the study that names the patient otherwise): the image
    // says whom it names, and that the list disagrees.
    StudySummary relisted = viewer->study();
    relisted.identity.patientName = QStringLiteral("Другой^Пациент");
    QVERIFY(viewer->setStudy(relisted));
    QTRY_VERIFY2(viewer->viewport()->layers()->overlay().topLeft.contains(QStringLiteral("⚠ the study is listed as Другой, Пациент")),
                 qPrintable(viewer->viewport()->layers()->overlay().topLeft));
    QVERIFY(viewer->viewport()->layers()->overlay().topLeft.startsWith(QStringLiteral("Люкценберг, Иван")));
}

/// A 10-frame MR, an Enhanced CT and an ultrasound loop that pydicom wrote: the wheel steps through frames, the
/// overlay says which, values and positions are each frame's, and cine plays at the rate they were acquired.
void tst_Incoming::multiFrameImagesStepAndPlayFrameByFrame()
{
    QTemporaryDir dir;
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(MULTIFRAME_FILES_SCRIPT), dir.filePath(QStringLiteral("files"))});
    QVERIFY2(made.ok(), made.err.constData());
    std::unique_ptr<Workstation> ws = workstationWith(dir, {dir.filePath(QStringLiteral("files/mr10.dcm")), dir.filePath(QStringLiteral("files/enhanced-ct.dcm")),
                                                          dir.filePath(QStringLiteral("files/us-loop.dcm"))});
    QVERIFY(ws);
    QTRY_COMPARE(ws->studies().size(), 1);
    MainWindow window(ws.get());
    window.resize(1200, 800);
    window.show();
    StudyViewer *viewer = openAndWait(&window, ws->studies().first().identity.studyInstanceUid);
    QVERIFY(viewer);
    QCOMPARE(viewer->study().series.size(), 3);
    ImageViewport *vp = viewer->viewport();

    // The MR: one instance, ten frames; the wheel goes frame by frame, and values are the frame's.
    viewer->showSeries(0);
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.modality == QLatin1String("MR"));
    QCOMPARE(vp->frameCount(), 10);
    QCOMPARE(vp->frame(), 0);
    QVERIFY2(vp->layers()->overlay().bottomLeft.startsWith(QStringLiteral("Im 1/1  Fr 1/10  (40 ms)")), qPrintable(vp->layers()->overlay().bottomLeft));
    const QPoint middle(vp->width() / 2, vp->height() / 2);
    sendMouse(vp, QEvent::MouseMove, middle, Qt::NoButton, Qt::NoButton);
    QVERIFY2(vp->pixelReadout().endsWith(QStringLiteral("= 100")), qPrintable(vp->pixelReadout()));
    vp->setWindow(VoiWindow{150, 100});  // frame 1 (100) black, frame 2 (200) white
    QCOMPARE(qGray(vp->renderedImage().pixel(5, 5)), 0);
    sendWheel(vp, -120);  // towards the next image
    QCOMPARE(vp->frame(), 1);
    QVERIFY(vp->pixelReadout().endsWith(QStringLiteral("= 200")));
    QVERIFY(vp->layers()->overlay().bottomLeft.startsWith(QStringLiteral("Im 1/1  Fr 2/10")));
    QCOMPARE(qGray(vp->renderedImage().pixel(5, 5)), 255);
    QTest::keyClick(viewer, Qt::Key_End);
    QCOMPARE(vp->frame(), 9);
    QTest::keyClick(viewer, Qt::Key_Down);  // past the last frame of the stack's last image: stays
    QCOMPARE(vp->frame(), 9);
    QTest::keyClick(viewer, Qt::Key_Home);
    QCOMPARE(vp->frame(), 0);
    // Measurements belong to their frame.
    vp->findingsLayer()->addMeasurement(Annotation{AnnotationKind::Distance, {QPointF(2, 2), QPointF(12, 2)}, QString(), QString()});
    QCOMPARE(vp->findingsLayer()->measurements().size(), 1);
    viewer->stepSlice(1);
    QVERIFY(vp->findingsLayer()->measurements().isEmpty());
    viewer->stepSlice(-1);
    QCOMPARE(vp->findingsLayer()->measurements().size(), 1);
    // Cine at the acquired rate (Frame Time 40 ms: 25 frames a second), said on the image; it moves the frames.
    bool acquired = false;
    QCOMPARE(viewer->cine()->framesPerSecond(&acquired), 25.0);
    QVERIFY(acquired);
    viewer->cine()->setPlaying(true);
    QVERIFY2(vp->layers()->modeText().contains(QStringLiteral("Cine 25 fps (acquired)")), qPrintable(vp->layers()->modeText()));
    QTRY_VERIFY(vp->frame() >= 3);
    viewer->cine()->setPlaying(false);
    QVERIFY(vp->layers()->modeText().isEmpty());

    // The Enhanced CT: HU, spacing and each frame's position from its functional groups.
    viewer->showSeries(1);
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.modality == QLatin1String("CT"));
    QCOMPARE(vp->frameCount(), 5);
    viewer->stepSlice(2);
    QCOMPARE(vp->frame(), 2);
    sendMouse(vp, QEvent::MouseMove, middle, Qt::NoButton, Qt::NoButton);
    QVERIFY2(vp->pixelReadout().endsWith(QStringLiteral("= 20 HU")), qPrintable(vp->pixelReadout()));
    QVERIFY2(vp->layers()->overlay().bottomLeft.contains(QStringLiteral("Pos 20.0 mm  Thk 10.00 mm")), qPrintable(vp->layers()->overlay().bottomLeft));
    QCOMPARE(vp->window(), (VoiWindow{40, 400}));  // the frame VOI from the shared groups
    const Annotation ruler{AnnotationKind::Distance, {QPointF(0, 0), QPointF(20, 0)}, QString(), QString()};
    QCOMPARE(vp->findingsLayer()->measurementText(ruler), QStringLiteral("10.0 mm"));  // 20 pixels of 0.5 mm

    // The ultrasound loop: a Frame Time Vector of 20 ms.
    viewer->showSeries(2);
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.modality == QLatin1String("US"));
    QCOMPARE(vp->frameCount(), 8);
    QCOMPARE(viewer->cine()->framesPerSecond(&acquired), 50.0);
    QVERIFY(acquired);
}

/// A Segmentation pydicom wrote on two of three CT slices: its mask lies over exactly those slices, in its
/// segment's colour, named in the overlay; G hides it; the SEG series itself shows as an image.
void tst_Incoming::aSegmentationIsShownOverItsSource()
{
    QTemporaryDir dir;
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(SEGMENTATION_FILES_SCRIPT), dir.filePath(QStringLiteral("files"))});
    QVERIFY2(made.ok(), made.err.constData());
    QStringList files;
    for (const QString &f : {QStringLiteral("ct1.dcm"), QStringLiteral("ct2.dcm"), QStringLiteral("ct3.dcm"), QStringLiteral("seg.dcm")})
        files << dir.filePath(QStringLiteral("files/") + f);
    std::unique_ptr<Workstation> ws = workstationWith(dir, files);
    QVERIFY(ws);
    QTRY_COMPARE(ws->studies().size(), 1);
    QTRY_COMPARE(ws->studies().first().instanceCount, 4);
    MainWindow window(ws.get());
    window.resize(1000, 700);
    window.show();
    StudyViewer *viewer = openAndWait(&window, ws->studies().first().identity.studyInstanceUid);
    QVERIFY(viewer);
    int ct = -1;
    for (int s = 0; s < viewer->study().series.size(); ++s)
        if (viewer->study().series[s].modality == QLatin1String("CT"))
            ct = s;
    QVERIFY(ct >= 0);
    viewer->showSeries(ct);
    ImageViewport *vp = viewer->viewport();
    QTRY_COMPARE(viewer->segmentations()->loadedCount(), 1);
    viewer->showSlice(0);
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.sopInstanceUid == viewer->study().series[ct].instances[0].sopInstanceUid);
    QVERIFY(vp->layers()->masks().isEmpty());  // nothing drawn on the first slice
    viewer->showSlice(1);
    QTRY_VERIFY(vp->image().info.identity.sopInstanceUid == viewer->study().series[ct].instances[1].sopInstanceUid && vp->layers()->masks().size() == 1);
    QCOMPARE(vp->layers()->masks().first().label, QStringLiteral("Lesion"));
    QVERIFY(vp->layers()->masks().first().colour.red() > 200 && vp->layers()->masks().first().colour.green() < 100);
    const QImage shot = vp->grab().toImage();
    const QColor inside = shot.pixelColor(vp->view().imageToWidget().map(QPointF(6, 6)).toPoint());
    const QColor outside = shot.pixelColor(vp->view().imageToWidget().map(QPointF(12, 12)).toPoint());
    QVERIFY2(inside.red() > inside.green() + 40, qPrintable(inside.name()));     // red over the gray
    QVERIFY2(std::abs(outside.red() - outside.green()) < 5, qPrintable(outside.name()));  // gray
    QTest::keySequence(&window, QKeySequence(Qt::Key_G));
    QVERIFY(!vp->layers()->masksVisible());
    const QColor hidden = vp->grab().toImage().pixelColor(vp->view().imageToWidget().map(QPointF(6, 6)).toPoint());
    QVERIFY(std::abs(hidden.red() - hidden.green()) < 5);
    QTest::keySequence(&window, QKeySequence(Qt::Key_G));
    QVERIFY(vp->layers()->masksVisible());
}

namespace {
/// A CD as a hospital hands it over: DICOM/IM0001… (no suffixes), a DICOMDIR made by DCMTK's dcmmkdir, a readme.
QString makeCd(const QTemporaryDir &dir, int images)
{
    const ProcessResult demo = run(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("demo"), QStringLiteral("--out"), dir.filePath(QStringLiteral("demo")),
                                                                          QStringLiteral("--only"), QStringLiteral("demo-mr")});
    if (!demo.ok())
        return QString();
    const QString cd = dir.filePath(QStringLiteral("cd"));
    QDir().mkpath(cd + QStringLiteral("/DICOM"));
    const QDir mr(dir.filePath(QStringLiteral("demo/demo-mr")));
    const QStringList files = mr.entryList(QDir::Files, QDir::Name).mid(0, images);
    for (int i = 0; i < files.size(); ++i)
        QFile::copy(mr.filePath(files[i]), cd + QStringLiteral("/DICOM/IM%1").arg(i + 1, 4, 10, QLatin1Char('0')));
    writeFile(cd + QStringLiteral("/README.TXT"), "Viewer on this disc: run SETUP.EXE\n");
    const ProcessResult dicomdir = run(QStringLiteral(DCMMKDIR_EXECUTABLE), {QStringLiteral("--recurse"), QStringLiteral("+id"), cd,
                                                                             QStringLiteral("--output-file"), cd + QStringLiteral("/DICOMDIR"), QStringLiteral("DICOM")});
    return dicomdir.ok() ? cd : QString();
}
} // namespace

/// File ▸ Import of a CD's DICOMDIR: every image it holds comes into the cache, the DICOMDIR and the readme are
/// named as not DICOM, and the one study brought in opens.
void tst_Incoming::importingACdWithItsDicomdir()
{
    QTemporaryDir dir;
    const QString cd = makeCd(dir, 3);
    QVERIFY(!cd.isEmpty());
    std::unique_ptr<Workstation> ws = workstationWith(dir, {});
    QVERIFY(ws);
    MainWindow window(ws.get());
    window.show();
    QSignalSpy imported(&window, &MainWindow::importFinished);
    window.importFiles({cd + QStringLiteral("/DICOMDIR")});
    QVERIFY(imported.wait(20000));
    const ImportSummary summary = imported.first().first().value<ImportSummary>();
    QCOMPARE(summary.imported, 3);
    QCOMPARE(summary.studies.size(), 1);
    QCOMPARE(summary.notDicom.size(), 2);  // the DICOMDIR and the readme
    QVERIFY(summary.failed.isEmpty());
    QTRY_VERIFY(window.currentViewer());  // the study opened by itself
    QCOMPARE(window.currentViewer()->study().identity.studyInstanceUid, *summary.studies.begin());
    QCOMPARE(window.currentViewer()->study().instanceCount, 3);
    QTRY_VERIFY(window.currentViewer()->viewport()->hasImage());

    // Importing the same files again changes nothing and fails nothing; a file that cannot be read (here: gone
    // between choosing and importing) is named with the reason.
    const QString gone = dir.filePath(QStringLiteral("gone.dcm"));
    imported.clear();
    window.importFiles({cd, gone});
    QVERIFY(imported.wait(20000));
    const ImportSummary again = imported.first().first().value<ImportSummary>();
    QCOMPARE(again.imported, 3);
    QCOMPARE(again.failed.size(), 1);
    QCOMPARE(again.failed.first().first, QFileInfo(gone).absoluteFilePath());
    QVERIFY(!again.failed.first().second.isEmpty());
    QVERIFY(Workstation::importSummaryText(again).contains(QStringLiteral("1 file(s) could not be imported (see the import report)")));
    // The report names it, with why.
    ImportReport *report = nullptr;
    QTRY_COMPARE(window.findChildren<ImportReport *>().size(), 2);  // one for each import: the readme was left out each time
    report = window.findChildren<ImportReport *>().last();
    QCOMPARE(report->rows().size(), 3);  // the DICOMDIR, the readme, the file gone
    QVERIFY(report->rows().contains(qMakePair(QFileInfo(gone).absoluteFilePath(), ImportReport::inWords(again.failed.first().second))));
    const QList<QPair<QString, QString>> reported = report->rows();  // one copy: begin() and end() of the same list
    QStringList rows;
    for (const auto &[file, why] : reported)
        rows << file + QStringLiteral(": ") + why;
    QVERIFY2(std::any_of(reported.begin(), reported.end(), [](const auto &r) { return r.second.startsWith(QStringLiteral("the disc's index")); }),
             qPrintable(rows.join(QStringLiteral(" | "))));
    QCOMPARE(ws->studies().size(), 1);
}

/// `spectrum-cli import` while the workstation holds the cache: handed over, imported by the workstation, which
/// lists the study at once; the CLI prints the outcome and succeeds.
void tst_Incoming::theCliImportsWhileTheWorkstationRuns()
{
    QTemporaryDir dir;
    const QString cd = makeCd(dir, 2);
    QVERIFY(!cd.isEmpty());
    std::unique_ptr<Workstation> ws = workstationWith(dir, {});
    QVERIFY(ws);
    QVERIFY(ws->studies().isEmpty());
    QProcess cli;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_CACHE_DIR"), dir.filePath(QStringLiteral("cache")));
    cli.setProcessEnvironment(env);
    QSignalSpy done(&cli, &QProcess::finished);
    cli.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("import"), cd});
    QVERIFY(done.wait(30000));  // the workstation serves it meanwhile, on this event loop
    const QByteArray output = cli.readAllStandardOutput(), errors = cli.readAllStandardError();
    QVERIFY2(cli.exitCode() == 0, errors.constData());
    QVERIFY2(errors.contains("imported by the running workstation"), errors.constData());
    QVERIFY2(output.contains("2 imported (1 studies), 2 not DICOM, 0 failed"), output.constData());
    QTRY_COMPARE(ws->studies().size(), 1);
    QCOMPARE(ws->studies().first().instanceCount, 2);
}

QTEST_MAIN(tst_Incoming)
#include "tst_incoming.moc"
