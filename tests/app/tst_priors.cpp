// SPDX-License-Identifier: Apache-2.0
// Reading against priors from the workstation's cache: the patient's other studies listed by date beside the
// study, the most recent comparable one opened beside it (labelled PRIOR, in its own colour), linked scrolling
// across the two studies by patient position and with the reader's offset, linked window/level and zoom,
// layouts up to 4 × 4 with a prior's series in any pane — and never a study of another patient.
#include "guisupport.h"
#include "demosuite.h"
#include "browser/priorspanel.h"
#include "viewer/seriespane.h"

#include "spectrum/stores/reading/priorsearch.h"

using namespace spectrum;
using namespace spectrum::test;

class tst_Priors : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void theOtherStudiesAreListedByDate();
    void theMostRecentComparableOpensBesideAsPrior();
    void linkedScrollingAcrossStudiesWithTheReadersOffset();
    void windowAndZoomLinked();
    void layoutsUpToFourByFourWithAPriorInAnyPane();
    void neverAnotherPatientsStudy();
    void aListingNamingAnotherPatientClosesThePrior();

private:
    /// Position along the slice normal of the image a pane shows (mm).
    static double position(SeriesPane *p) { return p->viewport()->image().info.slicePositionAlongNormal(); }
    static double thickness(SeriesPane *p) { return p->viewport()->image().info.sliceThickness; }

    QTemporaryDir m_dir;
    std::unique_ptr<Workstation> m_ws;
    std::unique_ptr<MainWindow> m_window;
    StudyViewer *m_viewer = nullptr;
    const QString m_priorUid = DemoArchive::studyUid(DemoStudy::HeadCtPrior);
};

void tst_Priors::initTestCase()
{
    qRegisterMetaType<spectrum::StudyViewer *>();
    Workstation::Options options;
    options.cacheDirectory = m_dir.filePath(QStringLiteral("cache"));
    options.demo.ctSlices = 100;  // 2.5 mm; the prior 50 slices of 5 mm
    options.demo.mrSlices = 4;
    m_ws = std::make_unique<Workstation>(options);
    QSignalSpy seeded(m_ws.get(), &Workstation::seedingFinished);
    m_ws->start();
    QVERIFY(seeded.wait(120000));
    QCOMPARE(m_ws->studies().size(), 5);
    m_window = std::make_unique<MainWindow>(m_ws.get());
    m_window->hangingProtocols()->setProtocols(ProtocolSet());  // opened plainly: the prior is opened here by hand (tst_protocols: by protocol)
    m_window->resize(1400, 900);
    m_window->show();
}

void tst_Priors::cleanupTestCase()
{
    m_window.reset();
    m_ws.reset();
}

void tst_Priors::theOtherStudiesAreListedByDate()
{
    m_viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
    QVERIFY(m_viewer);
    PriorsPanel *panel = m_viewer->priorsPanel();
    QTRY_COMPARE(panel->priors().studies.size(), 2);  // the head MR and the CT a year earlier; not the chest patient's
    const QList<PriorStudy> &studies = panel->priors().studies;
    QCOMPARE(studies[0].identity.studyInstanceUid, DemoArchive::studyUid(DemoStudy::HeadMr));  // newest first
    QCOMPARE(studies[1].identity.studyInstanceUid, m_priorUid);
    QVERIFY(!studies[0].comparable);  // MR against CT
    QVERIFY(studies[1].comparable);   // CT HEAD against CT HEAD
    QVERIFY(studies[1].isCached());
    QCOMPARE(panel->priors().mostRecentComparable(m_viewer->study().identity), 1);
    QCOMPARE(panel->tree()->topLevelItemCount(), 2);
    const QString row = panel->tree()->topLevelItem(1)->text(0);
    QVERIFY2(row.contains(QStringLiteral("2023-01-03")) && row.contains(QStringLiteral("★")) && row.contains(QStringLiteral("here")), qPrintable(row));
    QVERIFY(panel->priors().withheld.isEmpty());
}

void tst_Priors::theMostRecentComparableOpensBesideAsPrior()
{
    QVERIFY(m_viewer);
    QTRY_VERIFY(m_viewer->viewport()->hasImage());
    m_window->activateWindow();
    m_viewer->setFocus();
    QSignalSpy opened(m_viewer->comparison(), &StudyComparison::opened);
    QTest::keySequence(m_window.get(), QKeySequence(QStringLiteral("Shift+P")));
    QCOMPARE(opened.count(), 1);
    QCOMPARE(m_viewer->paneCount(), 2);
    SeriesPane *prior = m_viewer->pane(1);
    QCOMPARE(prior->study()->identity.studyInstanceUid, m_priorUid);
    QTRY_VERIFY(prior->viewport()->hasImage());
    QCOMPARE(prior->viewport()->image().info.identity.studyInstanceUid, m_priorUid);
    // Told apart at a glance: the label and date in the corner, the frame's colour.
    QVERIFY2(prior->viewport()->layers()->overlay().comparison.startsWith(QStringLiteral("PRIOR  2023-01-03 (1 year earlier)")),
             qPrintable(prior->viewport()->layers()->overlay().comparison));
    QVERIFY2(m_viewer->pane(0)->viewport()->layers()->overlay().comparison.startsWith(QStringLiteral("CURRENT  2024-01-02")),
             qPrintable(m_viewer->pane(0)->viewport()->layers()->overlay().comparison));
    QVERIFY(prior->viewport()->layers()->overlay().prior);
    QVERIFY(!m_viewer->pane(0)->viewport()->layers()->overlay().prior);
    QVERIFY(prior->styleSheet().contains(QStringLiteral("#8a6a1c")) || m_viewer->activePane() == prior);
    // Its series listed under it, to drag onto any pane.
    QTRY_COMPARE(m_viewer->priorsPanel()->tree()->topLevelItem(1)->childCount(), 1);
    QVERIFY(m_viewer->priorsPanel()->tree()->topLevelItem(1)->child(0)->text(0).contains(QStringLiteral("Axial 5 mm")));
    // Asked again: still one comparison, where it was; the reader's pane of the current study stays.
    m_window->openMostRecentComparable();
    QCOMPARE(m_viewer->comparison()->count(), 1);
    QCOMPARE(m_viewer->paneCount(), 2);
    QCOMPARE(m_viewer->pane(0)->study(), &m_viewer->study());
    QCOMPARE(m_viewer->pane(1), prior);
    QCOMPARE(m_viewer->activePane(), prior);
}

void tst_Priors::linkedScrollingAcrossStudiesWithTheReadersOffset()
{
    QVERIFY(m_viewer && m_viewer->comparison()->count() == 1);
    SeriesPane *current = m_viewer->pane(0), *prior = m_viewer->pane(1);
    m_viewer->setActivePane(current);
    m_viewer->links()->setSynchronized(true);
    // By patient position: the prior's slice at the current's position, within half the prior's thickness.
    for (int slice : {20, 50, 71}) {
        m_viewer->showSlice(slice);
        QTRY_VERIFY(current->viewport()->hasImage() && current->sliceIndex() == slice
                    && current->viewport()->image().info.identity.sopInstanceUid == m_viewer->study().series[0].instances[slice].sopInstanceUid);
        QTRY_VERIFY2(std::abs(position(prior) - position(current)) <= thickness(prior) / 2 + 1e-6,
                     qPrintable(QStringLiteral("slice %1: current at %2 mm, prior at %3 mm").arg(slice).arg(position(current)).arg(position(prior))));
    }
    QVERIFY2(current->viewport()->layers()->modeText().contains(QStringLiteral("Linked")), qPrintable(current->viewport()->layers()->modeText()));

    // The patient lay 12 mm further in a year ago: Shift+wheel scrolls the prior alone, and the distance
    // between the two becomes the offset the prior follows at from now on.
    const double before = position(prior);
    const QString currentSop = current->viewport()->image().info.identity.sopInstanceUid;
    QSignalSpy priorShown(prior, &SeriesPane::imageShown);
    sendWheel(prior->viewport(), -240, Qt::ShiftModifier);  // two notches: two slices of 5 mm
    QCOMPARE(m_viewer->activePane(), prior);
    QTRY_VERIFY(priorShown.count() >= 1 && std::abs(position(prior) - before) > 9);
    QCOMPARE(current->viewport()->image().info.identity.sopInstanceUid, currentSop);  // stayed
    const QString key = PriorsPanel::studyKey(prior->study()->identity);
    const double offset = m_viewer->links()->offsetMm(key);
    QVERIFY2(std::abs(offset - (position(prior) - position(current))) < 1e-6, qPrintable(QString::number(offset)));
    QVERIFY2(prior->viewport()->layers()->modeText().contains(QStringLiteral("offset")), qPrintable(prior->viewport()->layers()->modeText()));

    m_viewer->setActivePane(current);
    for (int slice : {30, 62}) {
        m_viewer->showSlice(slice);
        QTRY_VERIFY(current->sliceIndex() == slice && current->viewport()->image().info.identity.sopInstanceUid == m_viewer->study().series[0].instances[slice].sopInstanceUid);
        QTRY_VERIFY2(std::abs(position(prior) - (position(current) + offset)) <= thickness(prior) / 2 + 1e-6,
                     qPrintable(QStringLiteral("slice %1: current at %2 mm, prior at %3 mm, offset %4").arg(slice).arg(position(current)).arg(position(prior)).arg(offset)));
    }
    // The prior scrolled (not alone) leads the current the same way.
    m_viewer->setActivePane(prior);
    m_viewer->stepSlice(3);
    QTRY_VERIFY2(std::abs(position(current) - (position(prior) - offset)) <= thickness(current) / 2 + 1e-6,
                 qPrintable(QStringLiteral("prior at %1 mm, current at %2 mm").arg(position(prior)).arg(position(current))));
    // Unlinked: each on its own.
    m_viewer->links()->setSynchronized(false);
    const int still = current->sliceIndex();
    m_viewer->stepSlice(4);
    QTRY_VERIFY(prior->viewport()->hasImage());
    QTest::qWait(0);
    QCOMPARE(current->sliceIndex(), still);
    m_viewer->links()->setOffsetMm(key, 0);
    QCOMPARE(m_viewer->links()->offsetMm(key), 0.0);
}

void tst_Priors::windowAndZoomLinked()
{
    QVERIFY(m_viewer && m_viewer->paneCount() == 2);
    SeriesPane *current = m_viewer->pane(0), *prior = m_viewer->pane(1);
    m_viewer->setActivePane(current);
    m_viewer->links()->setWindowLinked(true);
    current->viewport()->setWindow(VoiWindow{400, 1800});
    QCOMPARE(prior->viewport()->window().center, 400.0);
    QCOMPARE(prior->viewport()->window().width, 1800.0);
    m_viewer->links()->setZoomLinked(true);
    current->viewport()->setView(current->viewport()->view().withZoom(2.0));
    QCOMPARE(prior->viewport()->view().zoom(), 2.0);
    QVERIFY(current->viewport()->layers()->modeText().contains(QStringLiteral("W/L linked")));
    m_viewer->links()->setWindowLinked(false);
    m_viewer->links()->setZoomLinked(false);
    current->viewport()->setWindow(VoiWindow{40, 80});
    QCOMPARE(prior->viewport()->window().center, 400.0);  // no longer follows
    current->viewport()->setView(current->viewport()->view().fitted());
    prior->viewport()->setView(prior->viewport()->view().fitted());
}

void tst_Priors::layoutsUpToFourByFourWithAPriorInAnyPane()
{
    QVERIFY(m_viewer);
    m_window->activateWindow();
    m_viewer->setFocus();
    QTest::keySequence(m_window.get(), QKeySequence(QStringLiteral("Ctrl+Alt+0")));
    QCOMPARE(m_viewer->paneCount(), 16);
    QCOMPARE(m_viewer->gridRows(), 4);
    QCOMPARE(m_viewer->gridColumns(), 4);
    m_viewer->setGrid(2, 3);
    QCOMPARE(m_viewer->paneCount(), 6);
    QTRY_VERIFY(m_viewer->pane(5)->isVisible());
    QCOMPARE(m_viewer->pane(1)->study()->identity.studyInstanceUid, m_priorUid);  // kept where it was
    // The prior's series dragged from the list onto the last pane.
    QMimeData data;
    data.setData(otherStudySeriesMimeType(), (PriorsPanel::studyKey(m_viewer->comparison()->study(0).identity) + QStringLiteral("\n0")).toUtf8());
    const QPointF at(10, 10);
    QDragEnterEvent enter(at.toPoint(), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(m_viewer->pane(5), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(at, Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(m_viewer->pane(5), &drop);
    SeriesPane *dropped = m_viewer->pane(5);
    QCOMPARE(dropped->study()->identity.studyInstanceUid, m_priorUid);
    QCOMPARE(m_viewer->activePane(), dropped);
    QTRY_VERIFY(dropped->viewport()->hasImage());
    QVERIFY(dropped->viewport()->layers()->overlay().comparison.startsWith(QStringLiteral("PRIOR")));
    QCOMPARE(&m_viewer->activeStudy(), dropped->study());
    // A series of the current study chosen in the series list: the active pane shows the current study again.
    m_viewer->showSeries(0);
    QCOMPARE(m_viewer->pane(5)->study(), &m_viewer->study());
    QTRY_VERIFY(m_viewer->pane(5)->viewport()->hasImage());
    m_viewer->setGrid(9, 9);  // at most 4 × 4
    QCOMPARE(m_viewer->paneCount(), 16);
    m_viewer->setGrid(1, 2);
    QCOMPARE(m_viewer->paneCount(), 2);
    // The active pane is framed in blue, as painted; a click moves the frame, and scrolling there (each wheel notch
    // asks for the frame again) keeps it.
    const QColor blue(0x3d, 0x7f, 0xd6);
    auto frameOf = [](SeriesPane *pane) { return pane->grab().toImage().pixelColor(0, pane->height() / 2); };
    for (int i : {0, 1, 0}) {
        SeriesPane *pane = m_viewer->pane(i), *other = m_viewer->pane(1 - i);
        QTest::mouseClick(pane->viewport(), Qt::LeftButton, Qt::NoModifier, pane->viewport()->rect().center());
        QTRY_COMPARE(m_viewer->activePane(), pane);
        QCOMPARE(frameOf(pane), blue);
        QVERIFY(frameOf(other) != blue);
        for (int notch = 0; notch < 3; ++notch) {
            QWheelEvent wheel(QPointF(pane->viewport()->rect().center()), pane->viewport()->mapToGlobal(pane->viewport()->rect().center()), QPoint(),
                              QPoint(0, -120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
            QApplication::sendEvent(pane->viewport(), &wheel);
        }
        QCOMPARE(frameOf(pane), blue);
        QVERIFY(frameOf(other) != blue);
    }
}

void tst_Priors::neverAnotherPatientsStudy()
{
    QVERIFY(m_viewer);
    // The chest patient's study is refused beside the head patient's, with why.
    QSignalSpy errors(m_viewer, &StudyViewer::errorOccurred);
    const StudySummary *chest = m_ws->findStudy(QStringLiteral("demo-cr"));
    QVERIFY(chest);
    QVERIFY(!m_viewer->comparison()->openBeside(*chest));
    QCOMPARE(errors.count(), 1);
    QVERIFY(errors.first().first().value<Error>().message().contains(QStringLiteral("DEMO-CHEST-002")));
    QCOMPARE(m_viewer->comparison()->count(), 1);

    // A study under the same Patient ID but another name arrives, and one with the prior's Study Instance UID
    // under another Patient ID: the first is not offered (and said), and the prior is no longer offered either.
    const QString dir = m_dir.filePath(QStringLiteral("intruders"));
    QVERIFY(QDir().mkpath(dir));
    QByteArray mr;
    DemoOptions options;
    options.studies = {DemoStudy::HeadMr, DemoStudy::HeadCtPrior};
    options.ctSlices = 2;
    options.mrSlices = 1;
    QByteArray prior;
    QVERIFY(!DemoArchive::generate(options, [&](DemoInstance &&i) {
                 (i.identity.modality == QLatin1String("MR") ? mr : prior) = i.bytes;
                 return Error();
             }).isError());
    const QString renamed = dir + QStringLiteral("/renamed.dcm"), claimed = dir + QStringLiteral("/claimed.dcm");
    QVERIFY(writeFile(renamed, mr));
    QVERIFY(writeFile(claimed, prior));
    for (const auto &[file, edits] : {std::pair{renamed, QStringList{QStringLiteral("(0010,0010)=OTHER^PERSON"), QStringLiteral("(0020,000D)=1.2.826.0.1.3680043.2.1125.77.1"),
                                                                     QStringLiteral("(0008,0018)=1.2.826.0.1.3680043.2.1125.77.2")}},
                                      std::pair{claimed, QStringList{QStringLiteral("(0010,0020)=SOMEONE-ELSE"), QStringLiteral("(0008,0018)=1.2.826.0.1.3680043.2.1125.77.3")}}}) {
        QStringList args{QStringLiteral("-nb")};
        for (const QString &e : edits)
            args << QStringLiteral("-m") << e;
        const ProcessResult r = run(QStringLiteral(DCMODIFY_EXECUTABLE), args << file);
        QVERIFY2(r.ok(), r.err.constData());
    }
    QSignalSpy imported(m_ws.get(), &Workstation::importFinished);
    QVERIFY(m_ws->importFiles({dir}));
    QVERIFY(imported.wait(30000));
    PriorsPanel *panel = m_viewer->priorsPanel();
    QTRY_COMPARE(panel->priors().withheld.size(), 2);
    QCOMPARE(panel->priors().studies.size(), 1);  // the MR alone
    QCOMPARE(panel->priors().studies.first().identity.studyInstanceUid, DemoArchive::studyUid(DemoStudy::HeadMr));
    const QString withheld = panel->priors().withheld.join(QLatin1Char('\n'));
    QVERIFY2(withheld.contains(QStringLiteral("another patient name (OTHER, PERSON)")), qPrintable(withheld));
    QVERIFY2(withheld.contains(QStringLiteral("belongs to another patient")), qPrintable(withheld));
    QVERIFY2(panel->statusText().contains(QStringLiteral("Not offered")), qPrintable(panel->statusText()));
    QCOMPARE(panel->priors().mostRecentComparable(m_viewer->study().identity), -1);
    m_window->activateWindow();
    m_viewer->setFocus();
    QCOMPARE(m_window->openMostRecentComparable(), false);
}

// A prior opened on its first look whose whole listing names another patient: closed again — its panes show the
// study being read, nothing of it stays offered, and the reader is told.
void tst_Priors::aListingNamingAnotherPatientClosesThePrior()
{
    QVERIFY(m_viewer && m_viewer->comparison()->count() == 1);
    QVERIFY(std::any_of(m_viewer->panes().begin(), m_viewer->panes().end(), [this](SeriesPane *p) { return p->study() != &m_viewer->study(); }));
    StudySummary listed = m_viewer->comparison()->study(0);
    listed.identity.patientName = QStringLiteral("OTHER^PERSON");
    QSignalSpy errors(m_viewer, &StudyViewer::errorOccurred);
    QVERIFY(!m_viewer->comparison()->update(listed));
    QCOMPARE(errors.count(), 1);
    QVERIFY(errors.first().first().value<Error>().message().contains(QStringLiteral("another patient name (OTHER, PERSON)")));
    QCOMPARE(m_viewer->comparison()->count(), 0);
    for (SeriesPane *p : m_viewer->panes()) {
        QCOMPARE(p->study(), &m_viewer->study());
        QVERIFY(p->viewport()->layers()->overlay().comparison.isEmpty());  // one study open: no labels
    }
    QTRY_VERIFY(std::all_of(m_viewer->panes().begin(), m_viewer->panes().end(), [](SeriesPane *p) { return p->viewport()->hasImage(); }));
    for (int i = 0; i < m_viewer->priorsPanel()->tree()->topLevelItemCount(); ++i)
        QCOMPARE(m_viewer->priorsPanel()->tree()->topLevelItem(i)->childCount(), 0);  // no series of it to drag
}

QTEST_MAIN(tst_Priors)
#include "tst_priors.moc"
