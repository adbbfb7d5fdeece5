// SPDX-License-Identifier: Apache-2.0
// What is drawn is true, measured on screen. A geometry phantom written by pydicom (tests/support/phantom_files.py:
// spheres in 0.5 × 0.5 × 2 mm voxels, a disc in pixels twice as tall as wide) is dropped on the main window as a
// user drops files, its CT opened in MPR with M; each pane is zoomed with the wheel below, at and above 100 % and
// grabbed, and the spheres are measured in the grabbed pixels: as tall as wide within two pixels, as big as their
// millimetres at the pane's scale, where the crosshair says; a click on the drawn marker reads its value and takes
// the axial plane to it. The same for an oblique plane and a slab, the 2-D pane's image of non-square pixels, its
// thumbnail and its exported picture and cine.
#include "guisupport.h"
#include "demosuite.h"
#include "viewer/imageexport.h"
#include "volumes/mprview.h"
#include "volumes/mprvolume.h"

#include "spectrum/imaging/volumes/planegeometry.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QScopeGuard>
#include <QStandardItemModel>
#include <QTimer>

#include <functional>
#include <memory>

using namespace spectrum;
using namespace spectrum::test;

namespace {

/// Sphere A of the phantom: the volume's centre, 20 mm; sphere B: the marker, 6 mm, 400 HU.
const PatientPoint kCentreA{63.75, 63.75, 39.0};
const PatientPoint kCentreB{103.75, 63.75, 59.0};
constexpr double kRadiusA = 20, kRadiusB = 6;

/// The box of the grey pixels brighter than mid-grey within `around` of `grabbed` (reference lines and the
/// crosshair are coloured, the overlay's text is far from the image's middle).
QRect brightBox(const QImage &grabbed, const QRect &around, int threshold = 127)
{
    const QImage img = grabbed.convertToFormat(QImage::Format_RGB32);
    int x0 = INT_MAX, y0 = INT_MAX, x1 = INT_MIN, y1 = INT_MIN;
    const QRect r = around.intersected(img.rect());
    for (int y = r.top(); y <= r.bottom(); ++y) {
        const auto *line = reinterpret_cast<const QRgb *>(img.constScanLine(y));
        for (int x = r.left(); x <= r.right(); ++x) {
            const int red = qRed(line[x]), green = qGreen(line[x]), blue = qBlue(line[x]);
            if (red > threshold && green > threshold && blue > threshold && std::max({red, green, blue}) - std::min({red, green, blue}) < 24)
                x0 = std::min(x0, x), y0 = std::min(y0, y), x1 = std::max(x1, x), y1 = std::max(y1, y);
        }
    }
    return x0 > x1 ? QRect() : QRect(QPoint(x0, y0), QPoint(x1, y1));
}

/// A square of half-size `half` about `c`.
QRect around(QPointF c, double half)
{
    return QRect(int(c.x() - half), int(c.y() - half), int(2 * half) + 1, int(2 * half) + 1);
}

/// The wheel turned with Ctrl held on `vp` until it shows its image at `scale` screen pixels per image column.
void zoomWithTheWheel(ImageViewport *vp, double scale)
{
    const int delta = int(std::lround(std::log(scale / vp->view().displayScale()) / std::log(1.0015)));
    sendWheel(vp, delta, Qt::ControlModifier);
}

} // namespace

class tst_DrawnTrue : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void mprPlanesKeepTheirProportionsAtEveryZoom();
    void anObliquePlaneAndASlabKeepThemToo();
    void aClickOnTheDrawnMarkerReadsItAndMovesThePlanes();
    void nonSquarePixelsAreDrawnAsOnThePatient();
    void thumbnailsAndExportsKeepTheShape();

private:
    /// File ▸ Export by its shortcut, the dialog filled in (this image or the whole series, a format by the start of
    /// its name, the overlay on or off, the target typed) and Export pressed; true once the files are written.
    bool exportThroughTheDialog(bool wholeSeries, const QString &format, bool overlay, const QString &target);
    /// Grabs pane `vp` and measures the sphere about `centre` (radius `radiusMm`) where it is drawn: its box on
    /// screen, checked against its size in mm at the pane's scale and against where the pane says it lies.
    void checkSphere(ImageViewport *vp, const PatientPoint &centre, double radiusMm, const QString &what);
    MprView *mpr() const { return m_viewer ? m_viewer->mprView() : nullptr; }
    bool settled() const { return mpr() && mpr()->cutsPending() == 0 && mpr()->mprVolume()->isComplete(); }

    QTemporaryDir m_dir;
    std::unique_ptr<Workstation> m_ws;
    std::unique_ptr<MainWindow> m_window;
    StudyViewer *m_viewer = nullptr;
};

void tst_DrawnTrue::initTestCase()
{
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(PHANTOM_FILES_SCRIPT), m_dir.filePath(QStringLiteral("phantom"))});
    QVERIFY2(made.exitCode == 0, made.err.constData());
    Workstation::Options options;
    options.cacheDirectory = m_dir.filePath(QStringLiteral("cache"));
    options.seedDemoWhenEmpty = false;
    m_ws = std::make_unique<Workstation>(options);
    QSignalSpy started(m_ws.get(), &Workstation::started);
    m_ws->start();
    QVERIFY(started.wait(20000));
    m_window = std::make_unique<MainWindow>(m_ws.get());
    m_window->hangingProtocols()->setProtocols(ProtocolSet());
    m_window->resize(1400, 800);
    m_window->show();
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    // The phantom's folder dropped on the window, as from a file manager: imported, and the one study opens.
    qRegisterMetaType<StudyViewer *>();
    QSignalSpy opened(m_window.get(), &MainWindow::studyOpened);
    QVERIFY(dropFiles(m_window.get(), {QUrl::fromLocalFile(m_dir.filePath(QStringLiteral("phantom")))}));
    QVERIFY(opened.wait(60000));
    m_viewer = opened.first().first().value<StudyViewer *>();
    QVERIFY(m_viewer);
    QTRY_VERIFY(m_viewer->viewport()->hasImage());
    QCOMPARE(m_viewer->viewport()->image().info.identity.seriesDescription, QStringLiteral("PHANTOM CT 0.5x0.5x2"));
    // M, as the reader presses it: the CT in three planes.
    QTest::keySequence(m_window.get(), QKeySequence(Qt::Key_M));
    QVERIFY(mpr());
    QTRY_VERIFY_WITH_TIMEOUT(settled() && mpr()->viewport(1)->hasImage() && mpr()->viewport(2)->hasImage(), 30000);
    QCOMPARE(mpr()->mprVolume()->volume()->slotCount(), 40);
}

void tst_DrawnTrue::cleanupTestCase()
{
    m_window.reset();
    m_ws.reset();
}

void tst_DrawnTrue::checkSphere(ImageViewport *vp, const PatientPoint &centre, double radiusMm, const QString &what)
{
    const ImageInfo &info = vp->image().info;
    double off = 0;
    const std::optional<QPointF> c = imagePointOf(info, centre, &off);
    QVERIFY2(c, qPrintable(what));
    const QPointF onScreen = vp->view().imageToWidget().map(*c);
    // Screen pixels per mm along the image's rows: the scale over the column spacing; down its columns the same
    // (the viewport stretches rows by the pixels' aspect).
    const double perMm = vp->view().displayScale() / info.columnSpacing;
    const double chord = 2 * std::sqrt(std::max(0.0, radiusMm * radiusMm - off * off));
    const QRect box = brightBox(vp->grab().toImage(), around(onScreen, chord * perMm / 2 + 4));
    QVERIFY2(!box.isNull(), qPrintable(what + QStringLiteral(": nothing drawn where the sphere lies")));
    const QString measured = QStringLiteral("%1 (scale %2): drawn %3 × %4 px at (%5, %6), expected %7 px at (%8, %9)")
                                 .arg(what).arg(vp->view().displayScale(), 0, 'f', 3).arg(box.width()).arg(box.height())
                                 .arg(box.center().x()).arg(box.center().y()).arg(chord * perMm, 0, 'f', 1)
                                 .arg(onScreen.x(), 0, 'f', 1).arg(onScreen.y(), 0, 'f', 1);
    // Round, of its true size, where the geometry says (within two pixels: the edges' partial pixels).
    QVERIFY2(std::abs(box.width() - box.height()) <= 2, qPrintable(measured));
    QVERIFY2(std::abs(box.width() - chord * perMm) <= 2.5, qPrintable(measured));
    QVERIFY2(std::abs(box.height() - chord * perMm) <= 2.5, qPrintable(measured));
    const QPointF drawnCentre((box.left() + box.right() + 1) / 2.0, (box.top() + box.bottom() + 1) / 2.0);
    QVERIFY2(std::abs(drawnCentre.x() - onScreen.x()) <= 1.5 && std::abs(drawnCentre.y() - onScreen.y()) <= 1.5, qPrintable(measured));
}

void tst_DrawnTrue::mprPlanesKeepTheirProportionsAtEveryZoom()
{
    // 0.5 and 0.75: columns shrink while the slice direction (4 × the column spacing) is magnified — the path that
    // drew the head half its height.
    for (const double scale : {0.3, 0.5, 0.75, 1.0, 2.0}) {
        for (int pane = 0; pane < MprView::kPanes; ++pane) {
            ImageViewport *vp = mpr()->viewport(pane);
            zoomWithTheWheel(vp, scale);
            QTRY_VERIFY(settled());
            QVERIFY(std::abs(vp->view().displayScale() - scale) < 0.01 * scale);
            checkSphere(vp, kCentreA, kRadiusA, QStringLiteral("sphere A, pane %1").arg(pane));
            if (QTest::currentTestFailed())
                return;
            // The crosshair is drawn where the point it names lies on this plane (the geometry just checked
            // against the drawn sphere).
            QVERIFY(vp->layers()->crosshair());
            const QPointF cross = vp->view().imageToWidget().map(*vp->layers()->crosshair());
            const QPointF centre = vp->view().imageToWidget().map(*imagePointOf(vp->image().info, mpr()->point()));
            QVERIFY2(std::abs(cross.x() - centre.x()) <= 1.5 && std::abs(cross.y() - centre.y()) <= 1.5, qPrintable(QStringLiteral("pane %1 at %2: crosshair at (%3, %4), its point at (%5, %6): %7 %8 %9").arg(pane).arg(scale)
                                                                                                                              .arg(cross.x()).arg(cross.y()).arg(centre.x()).arg(centre.y())
                                                                                                                              .arg(mpr()->point()[0]).arg(mpr()->point()[1]).arg(mpr()->point()[2])));
            // Its right arm drawn there: green on the row through the point, from the gap on.
            const QImage grabbed = vp->grab().toImage().convertToFormat(QImage::Format_RGB32);
            int green = 0;
            for (int x = int(cross.x()) + 7; x <= int(cross.x()) + 22; ++x)
                for (int y = int(cross.y()) - 1; y <= int(cross.y()) + 1; ++y) {
                    const QRgb c = grabbed.pixel(x, y);
                    green += qGreen(c) > 150 && qRed(c) < 170 && qBlue(c) < 190 ? 1 : 0;
                }
            QVERIFY2(green >= 8, qPrintable(QStringLiteral("no crosshair arm drawn at the point in pane %1").arg(pane)));
        }
    }
}

void tst_DrawnTrue::anObliquePlaneAndASlabKeepThemToo()
{
    // The ⟳ button, six times: the crosshair of the active (axial) pane turned 30°, the others oblique.
    mpr()->setActivePane(0);
    QPushButton *turn = nullptr;
    for (QPushButton *b : mpr()->findChildren<QPushButton *>())
        if (b->text() == QStringLiteral("⟳"))
            turn = b;
    QVERIFY(turn);
    for (int i = 0; i < 6; ++i)
        QTest::mouseClick(turn, Qt::LeftButton);
    QTRY_VERIFY(settled() && mpr()->viewport(1)->layers()->overlay().topRight.contains(QLatin1String("oblique")));
    for (const double scale : {0.5, 1.0, 2.0})
        for (int pane : {1, 2}) {
            ImageViewport *vp = mpr()->viewport(pane);
            zoomWithTheWheel(vp, scale);
            QTRY_VERIFY(settled());
            checkSphere(vp, kCentreA, kRadiusA, QStringLiteral("oblique pane %1").arg(pane));
            if (QTest::currentTestFailed())
                return;
        }
    for (QPushButton *b : mpr()->findChildren<QPushButton *>())
        if (b->text() == QStringLiteral("Reset"))
            QTest::mouseClick(b, Qt::LeftButton);
    QTRY_VERIFY(settled() && mpr()->viewport(1)->layers()->overlay().topRight.contains(QLatin1String("voxels as acquired")));
    // A 10 mm MIP slab, chosen in its box: still a 40 mm circle through the sphere's middle.
    auto *mode = mpr()->findChild<QComboBox *>(QStringLiteral("mprSlabMode"));
    QVERIFY(mode);
    mode->setFocus();
    QTest::keyClick(mode, Qt::Key_Down);  // Thin → MIP
    QTRY_VERIFY(settled() && mpr()->viewport(1)->layers()->overlay().topRight.contains(QLatin1String("MIP")));
    for (const double scale : {0.5, 2.0})
        for (int pane = 0; pane < MprView::kPanes; ++pane) {
            ImageViewport *vp = mpr()->viewport(pane);
            zoomWithTheWheel(vp, scale);
            QTRY_VERIFY(settled());
            checkSphere(vp, kCentreA, kRadiusA, QStringLiteral("MIP slab, pane %1").arg(pane));
            if (QTest::currentTestFailed())
                return;
        }
    QTest::keyClick(mode, Qt::Key_Up);  // back to thin
    QTRY_VERIFY(settled() && !mpr()->viewport(1)->layers()->overlay().topRight.contains(QLatin1String("MIP")));
}

void tst_DrawnTrue::aClickOnTheDrawnMarkerReadsItAndMovesThePlanes()
{
    // On the coronal plane shrunk across and magnified down (the broken path): the marker found where it is drawn,
    // clicked there.
    ImageViewport *coronal = mpr()->viewport(1), *axial = mpr()->viewport(0);
    zoomWithTheWheel(coronal, 0.6);
    QTRY_VERIFY(settled());
    const QPointF expected = coronal->view().imageToWidget().map(*imagePointOf(coronal->image().info, kCentreB));
    const QRect box = brightBox(coronal->grab().toImage(), around(expected, 20));
    QVERIFY(!box.isNull());
    const QPoint drawn = box.center();
    click(coronal, drawn);
    QTRY_VERIFY(settled());
    QVERIFY2(coronal->pixelReadout().endsWith(QStringLiteral("= 400 HU")), qPrintable(coronal->pixelReadout()));
    // The crosshair is drawn where the click was, on the marker.
    QVERIFY(coronal->layers()->crosshair());
    const QPointF cross = coronal->view().imageToWidget().map(*coronal->layers()->crosshair());
    QVERIFY2(std::abs(cross.x() - (drawn.x() + 0.5)) <= 1.5 && std::abs(cross.y() - (drawn.y() + 0.5)) <= 1.5,
             qPrintable(QStringLiteral("crosshair at (%1, %2), clicked at (%3, %4)").arg(cross.x()).arg(cross.y()).arg(drawn.x()).arg(drawn.y())));
    // The axial plane went to the marker's height (its nearest slice: 58 or 60 mm), and shows it there.
    QTRY_VERIFY(settled() && std::abs(axial->image().info.imagePosition[2] - kCentreB[2]) <= 1.0 + 1e-6);
    checkSphere(axial, kCentreB, kRadiusB, QStringLiteral("sphere B on the axial plane"));
}

void tst_DrawnTrue::nonSquarePixelsAreDrawnAsOnThePatient()
{
    // Back to the 2-D panes (M again), and the projection image of non-square pixels chosen in the series list
    // with a click.
    QTest::keySequence(m_window.get(), QKeySequence(Qt::Key_M));
    QTRY_VERIFY(!m_viewer->isMprShown());
    auto *list = m_viewer->findChild<QListWidget *>(QStringLiteral("seriesList"));
    QVERIFY(list);
    QCOMPARE(list->count(), 2);
    const QRect item = list->visualItemRect(list->item(1));
    click(list->viewport(), item.center());
    ImageViewport *vp = m_viewer->viewport();
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.seriesDescription == QStringLiteral("PHANTOM DX non-square"));
    click(vp, QPoint(vp->width() / 2, vp->height() / 2));
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Home);  // its first image
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.instanceNumber == 1);
    QCOMPARE(vp->image().info.rowSpacing, 1.0);
    QCOMPARE(vp->image().info.columnSpacing, 0.5);
    // The disc: 240 columns by 120 rows, 120 mm across either way.
    for (const double scale : {0.3, 0.6, 0.75, 1.0, 1.5}) {
        zoomWithTheWheel(vp, scale);
        QTRY_VERIFY(std::abs(vp->view().displayScale() - scale) < 0.01 * scale);
        const QPointF centre = vp->view().imageToWidget().map(QPointF(256, 128));
        const double perMm = scale / 0.5;
        const QRect box = brightBox(vp->grab().toImage(), around(centre, 60 * perMm + 8));
        const QString measured = QStringLiteral("scale %1: %2 × %3 px, expected %4").arg(scale).arg(box.width()).arg(box.height()).arg(120 * perMm);
        QVERIFY2(std::abs(box.width() - 120 * perMm) <= 2.5 && std::abs(box.height() - 120 * perMm) <= 2.5, qPrintable(measured));
    }
    // Its second image records no spacing, only Pixel Aspect Ratio 2 \ 1 (↓ to it): drawn the same shape, the disc
    // as wide as tall at every zoom.
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Down);
    QTRY_VERIFY(vp->hasImage() && vp->image().info.identity.instanceNumber == 2);
    QCOMPARE(vp->image().info.rowSpacing, 0.0);
    QCOMPARE(vp->image().info.pixelAspect(), 2.0);
    for (const double scale : {0.3, 0.75, 1.0, 1.5}) {
        zoomWithTheWheel(vp, scale);
        QTRY_VERIFY(std::abs(vp->view().displayScale() - scale) < 0.01 * scale);
        const QPointF centre = vp->view().imageToWidget().map(QPointF(256, 128));
        const QRect box = brightBox(vp->grab().toImage(), around(centre, 120 * scale + 8));
        const QString measured = QStringLiteral("aspect ratio only, scale %1: %2 × %3 px, expected %4").arg(scale).arg(box.width()).arg(box.height()).arg(240 * scale);
        QVERIFY2(std::abs(box.width() - 240 * scale) <= 2.5 && std::abs(box.height() - 240 * scale) <= 2.5, qPrintable(measured));
    }
}

bool tst_DrawnTrue::exportThroughTheDialog(bool wholeSeries, const QString &format, bool overlay, const QString &target)
{
    // Ctrl+E opens the dialog (modal): it is filled in from a timer, as the reader would, and Export pressed.
    bool filled = false;
    QSignalSpy exported(m_window.get(), &MainWindow::imagesExported);
    m_window->activateWindow();  // the reader's window (the last dialog closed), where the shortcut is
    if (!QTest::qWaitForWindowActive(m_window.get()))
        return false;
    const bool opened = withModalDialog([this] { QTest::keySequence(m_window.get(), QKeySequence(QStringLiteral("Ctrl+E"))); }, [&](QDialog *dialog) {
        const QList<QRadioButton *> what = dialog->findChildren<QRadioButton *>();
        auto *as = dialog->findChild<QComboBox *>();
        auto *withOverlay = dialog->findChild<QCheckBox *>();
        auto *folder = dialog->findChild<QLineEdit *>();
        auto *buttons = dialog->findChild<QDialogButtonBox *>();
        if (what.size() != 2 || !as || !withOverlay || !folder || !buttons)
            return dialog->reject();
        QRadioButton *choice = what[wholeSeries ? 1 : 0];
        QTest::mouseClick(choice, Qt::LeftButton, Qt::NoModifier, QPoint(8, choice->height() / 2));  // on its circle
        as->setFocus();
        while (!as->currentText().startsWith(format) && as->currentIndex() < as->count() - 1)
            QTest::keyClick(as, Qt::Key_Down);
        if (withOverlay->isChecked() != overlay && withOverlay->isEnabled())
            QTest::mouseClick(withOverlay, Qt::LeftButton, Qt::NoModifier, QPoint(8, withOverlay->height() / 2));
        folder->selectAll();
        QTest::keyClicks(folder, target);
        filled = as->currentText().startsWith(format) && folder->text() == target && choice->isChecked()
              && (withOverlay->isChecked() == overlay || !withOverlay->isEnabled());
        if (!filled)
            qWarning() << "the dialog says" << as->currentText() << folder->text() << choice->isChecked() << withOverlay->isChecked();
        QTest::mouseClick(buttons->button(QDialogButtonBox::Ok), Qt::LeftButton);
    });
    if (!opened)
        return false;
    if (!filled)
        return false;
    if (exported.isEmpty() && !exported.wait(30000))
        return false;
    const Error e = exported.first().at(1).value<Error>();
    if (e.isError() || exported.first().at(0).toInt() < 1)
        qWarning() << "exported" << exported.first().at(0).toInt() << e.toString();
    return !e.isError() && exported.first().at(0).toInt() > 0;
}

void tst_DrawnTrue::thumbnailsAndExportsKeepTheShape()
{
    // The series list's thumbnail of the non-square image: the disc round in it.
    QTRY_VERIFY(!m_viewer->thumbnail(1).isNull());
    const QImage thumb = m_viewer->thumbnail(1);
    QCOMPARE(thumb.width(), thumb.height());  // 256 × 256 mm, square on the patient
    const QRect disc = brightBox(thumb, thumb.rect());
    QVERIFY2(std::abs(disc.width() - disc.height()) <= 1, qPrintable(QStringLiteral("%1 × %2").arg(disc.width()).arg(disc.height())));
    // The image exported without the overlay, as a picture and as a cine, through File ▸ Export (Ctrl+E) filled in
    // as a person fills it: its pixels made square (the rows stretched), the disc round.
    const QString png = m_dir.filePath(QStringLiteral("dx-export"));
    QVERIFY(exportThroughTheDialog(false, QStringLiteral("PNG"), false, png));
    const QStringList pictures = QDir(png).entryList({QStringLiteral("*.png")}, QDir::Files);
    QCOMPARE(pictures.size(), 1);
    const QImage exported(png + QLatin1Char('/') + pictures.first());
    QCOMPARE(exported.size(), QSize(512, 512));
    const QRect round = brightBox(exported, exported.rect());
    QVERIFY2(std::abs(round.width() - 240) <= 2 && std::abs(round.height() - 240) <= 2, qPrintable(QStringLiteral("%1 × %2").arg(round.width()).arg(round.height())));
    const QString mp4 = m_dir.filePath(QStringLiteral("dx.mp4"));
    QVERIFY(exportThroughTheDialog(true, QStringLiteral("MP4"), false, mp4));
    QVERIFY(QFileInfo::exists(mp4));
    const ProcessResult probe = run(QStringLiteral(FFPROBE_EXECUTABLE), {QStringLiteral("-v"), QStringLiteral("error"), QStringLiteral("-select_streams"), QStringLiteral("v:0"),
                                                                          QStringLiteral("-show_entries"), QStringLiteral("stream=width,height"), QStringLiteral("-of"), QStringLiteral("csv=p=0"), mp4});
    QCOMPARE(probe.out.trimmed(), QByteArray("512,512"));

    // Cines are made by the ffmpeg program, run not linked. One that dies mid-cine: the export says what it said,
    // and nothing is left that looks like a cine.
    const QString dying = m_dir.filePath(QStringLiteral("dying-ffmpeg"));
    {
        QFile script(dying);
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write("#!/bin/sh\ncase \"$*\" in *-encoders*) echo ' V....D libx264  H.264'; exit 0;; esac\n"
                     "head -c 1000 >/dev/null; echo 'disk quota exceeded' >&2; exit 1\n");
        script.close();
        QVERIFY(script.setPermissions(script.permissions() | QFileDevice::ExeOwner));
    }
    qputenv("SPECTRUM_FFMPEG", dying.toLocal8Bit());
    const QString failed = m_dir.filePath(QStringLiteral("failed.mp4"));
    QSignalSpy cine(m_window.get(), &MainWindow::imagesExported);
    QVERIFY(!exportThroughTheDialog(true, QStringLiteral("MP4"), false, failed));
    QCOMPARE(cine.size(), 1);
    QVERIFY2(cine.first().at(1).value<Error>().message().contains(QLatin1String("disk quota exceeded")), qPrintable(cine.first().at(1).value<Error>().toString()));
    QVERIFY(!QFileInfo::exists(failed));
    QCOMPARE(QDir(m_dir.path()).entryList({QStringLiteral("*failed*")}, QDir::Files | QDir::Hidden), QStringList());
    // No ffmpeg at all: the dialog offers no cine, and says why.
    qputenv("SPECTRUM_FFMPEG", m_dir.filePath(QStringLiteral("no-such-ffmpeg")).toLocal8Bit());
    bool offered = true;
    QString said;
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    QVERIFY(withModalDialog([this] { QTest::keySequence(m_window.get(), QKeySequence(QStringLiteral("Ctrl+E"))); }, [&](QDialog *dialog) {
        auto *as = dialog->findChild<QComboBox *>();
        const auto *items = as ? qobject_cast<QStandardItemModel *>(as->model()) : nullptr;
        if (items) {
            said = as->itemText(2);
            offered = items->item(2)->isEnabled();
        }
        dialog->reject();
    }));
    qunsetenv("SPECTRUM_FFMPEG");
    QVERIFY(!offered);
    QVERIFY2(said.contains(QLatin1String("needs the ffmpeg program")), qPrintable(said));
}

QTEST_MAIN(tst_DrawnTrue)
#include "tst_drawntrue.moc"
