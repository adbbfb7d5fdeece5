// SPDX-License-Identifier: Apache-2.0
// Hanging protocols in the workstation: a study opens laid out by its protocol — the demo head CT beside its
// prior, linked, in the brain window, before anything is painted; the chest PA and lateral above their prior's —
// the next and previous protocols are a key away, the layout on screen can be saved as a protocol and is used the
// next time, and the dialog edits, orders and tests them.
#include "guisupport.h"
#include "demosuite.h"
#include "browser/priorspanel.h"
#include "viewer/protocolsdialog.h"
#include "viewer/seriespane.h"

#include "spectrum/stores/reading/imageloader.h"

#include <QListWidget>
#include <QPlainTextEdit>

using namespace spectrum;
using namespace spectrum::test;

class tst_Protocols : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void theHeadCtOpensBesideItsPriorBeforeTheFirstPaint();
    void theChestPaAndLateralAboveTheirPrior();
    void nextAndPreviousProtocolOnKeys();
    void theLayoutOnScreenSavedAsAProtocol();
    void theDialogEditsOrdersAndTests();

private:
    QTemporaryDir m_dir;
    std::unique_ptr<Workstation> m_ws;
    std::unique_ptr<MainWindow> m_window;
};

void tst_Protocols::initTestCase()
{
    qRegisterMetaType<spectrum::StudyViewer *>();
    Workstation::Options options;
    options.cacheDirectory = m_dir.filePath(QStringLiteral("cache"));
    options.demo.ctSlices = 40;
    options.demo.mrSlices = 4;
    m_ws = std::make_unique<Workstation>(options);
    QSignalSpy seeded(m_ws.get(), &Workstation::seedingFinished);
    m_ws->start();
    QVERIFY(seeded.wait(120000));
    m_window = std::make_unique<MainWindow>(m_ws.get());
    QVERIFY(!m_window->hangingProtocols()->loadFile(m_dir.filePath(QStringLiteral("protocols.json"))).isError());  // none yet: the built-ins
    QCOMPARE(m_window->hangingProtocols()->protocols().protocols, ProtocolSet::builtIn().protocols);
    m_window->show();
}

void tst_Protocols::cleanupTestCase()
{
    m_window.reset();
    m_ws.reset();
}

void tst_Protocols::init()
{
    // Each test opens its study afresh.
    auto *tabs = m_window->findChild<QTabWidget *>();
    while (tabs && tabs->count() > 1)
        delete tabs->widget(1);
    m_window->activateWindow();
}

void tst_Protocols::theHeadCtOpensBesideItsPriorBeforeTheFirstPaint()
{
    // What the viewer is when the window first hears of it — before the event loop has painted anything.
    int panes = -1, shown = -1;
    QString priorInPaneTwo;
    const QMetaObject::Connection note = connect(m_window.get(), &MainWindow::studyOpened, this, [&](StudyViewer *v) {
        panes = v->paneCount();
        shown = 0;
        for (int i = 0; i < v->paneCount(); ++i)
            shown += v->pane(i)->viewport()->hasImage() ? 1 : 0;
        priorInPaneTwo = v->paneCount() > 1 ? v->pane(1)->study()->identity.studyInstanceUid : QString();
    });
    const auto forget = qScopeGuard([&] { disconnect(note); });
    StudyViewer *viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
    QVERIFY(viewer);
    QCOMPARE(panes, 2);
    QCOMPARE(shown, 0);  // laid out before a single image was on screen
    QCOMPARE(priorInPaneTwo, DemoArchive::studyUid(DemoStudy::HeadCtPrior));
    QCOMPARE(viewer->plan().name, QStringLiteral("CT head with prior"));
    QVERIFY(viewer->links()->isSynchronized());
    QVERIFY(viewer->links()->isWindowLinked());
    SeriesPane *current = viewer->pane(0), *prior = viewer->pane(1);
    QCOMPARE(current->study(), &viewer->study());
    // Linked from its first image: the prior is placed at the current's level from the slices' headers before
    // anything is decoded — it never shows its own middle first (the patient lay 12 mm further in a year ago:
    // not the same anatomy).
    QSignalSpy priorShown(prior, &SeriesPane::imageShown);
    const int priorMiddle = prior->sliceCount() / 2;
    QVERIFY2(prior->sliceIndex() >= 0 && prior->sliceIndex() != priorMiddle, qPrintable(QStringLiteral("the prior waits at its middle, slice %1").arg(priorMiddle)));
    QTRY_VERIFY(current->viewport()->hasImage() && prior->viewport()->hasImage());
    const double level = current->viewport()->image().info.slicePositionAlongNormal();
    QVERIFY2(std::abs(prior->viewport()->image().info.slicePositionAlongNormal() - level) <= prior->viewport()->image().info.sliceThickness / 2 + 1e-6,
             qPrintable(QStringLiteral("the prior's first image is %1 mm from the current's level")
                            .arg(prior->viewport()->image().info.slicePositionAlongNormal() - level)));
    QCOMPARE(priorShown.count(), 1);  // and nothing before it
    for (SeriesPane *p : {current, prior}) {  // the protocol's window: brain
        QCOMPARE(p->viewport()->window().center, 40.0);
        QCOMPARE(p->viewport()->window().width, 80.0);
        // Exactly these pixels under it, wherever they were windowed.
        Result<DecodedImage> decoded = runSync(loadImage(m_ws->localStore(), p->study()->series[p->seriesIndex()].instances[p->sliceIndex()].key));
        QVERIFY(decoded.isOk());
        QCOMPARE(p->viewport()->renderedImage(), toQImage(renderFrame(decoded.value(), 0, VoiWindow{40, 80})));
    }
    // The prior's first image was windowed on the pool as it was decoded (its pane knew the protocol's window
    // when it asked for it): the GUI thread only painted it.
    QCOMPARE(prior->viewport()->framesRenderedHere(), 0);
    QVERIFY(prior->viewport()->layers()->overlay().comparison.startsWith(QStringLiteral("PRIOR")));
    // Linked from the start: the prior follows the current study by position.
    viewer->setActivePane(current);
    viewer->showSlice(10);
    QTRY_VERIFY(current->viewport()->image().info.identity.sopInstanceUid == viewer->study().series[0].instances[10].sopInstanceUid);
    QTRY_VERIFY(std::abs(prior->viewport()->image().info.slicePositionAlongNormal() - current->viewport()->image().info.slicePositionAlongNormal())
                <= prior->viewport()->image().info.sliceThickness / 2 + 1e-6);
}

void tst_Protocols::theChestPaAndLateralAboveTheirPrior()
{
    StudyViewer *viewer = openAndWait(m_window.get(), QStringLiteral("demo-cr"));
    QVERIFY(viewer);
    QCOMPARE(viewer->plan().name, QStringLiteral("Chest X-ray PA and lateral with prior"));
    QCOMPARE(viewer->paneCount(), 4);
    const QString prior = DemoArchive::studyUid(DemoStudy::ChestCrPrior);
    const QStringList expected{QStringLiteral("PA"), QStringLiteral("LAT"), QStringLiteral("PA"), QStringLiteral("LAT")};
    for (int i = 0; i < 4; ++i) {
        SeriesPane *p = viewer->pane(i);
        QCOMPARE(p->study()->identity.studyInstanceUid, i < 2 ? viewer->study().identity.studyInstanceUid : prior);
        QCOMPARE(p->study()->series[p->seriesIndex()].description, expected[i]);
        QTRY_VERIFY(p->viewport()->hasImage());
        QCOMPARE(p->viewport()->image().info.identity.seriesDescription, expected[i]);
    }
    QVERIFY(!viewer->links()->isSynchronized());  // radiographs do not scroll together
}

void tst_Protocols::nextAndPreviousProtocolOnKeys()
{
    StudyViewer *viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
    QVERIFY(viewer);
    QCOMPARE(viewer->plan().name, QStringLiteral("CT head with prior"));
    viewer->setFocus();
    QTest::keySequence(m_window.get(), QKeySequence(Qt::Key_N));
    QCOMPARE(viewer->plan().name, QStringLiteral("CT head"));  // brain and bone, the current study alone
    QCOMPARE(viewer->paneCount(), 2);
    QTRY_VERIFY(viewer->pane(0)->viewport()->hasImage() && viewer->pane(1)->viewport()->hasImage());
    QCOMPARE(viewer->pane(1)->study(), &viewer->study());
    QCOMPARE(viewer->pane(1)->viewport()->window().width, 1800.0);  // bone
    QTest::keySequence(m_window.get(), QKeySequence(Qt::Key_N));
    QCOMPARE(viewer->plan().name, QStringLiteral("CT head with prior"));  // round again
    QTest::keySequence(m_window.get(), QKeySequence(QStringLiteral("Shift+N")));
    QCOMPARE(viewer->plan().name, QStringLiteral("CT head"));
}

void tst_Protocols::theLayoutOnScreenSavedAsAProtocol()
{
    StudyViewer *viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
    QVERIFY(viewer);
    // The reader's own: three across — the current study, its prior, the current study again in the bone window.
    viewer->setGrid(1, 3);
    QVERIFY(viewer->showSeriesOf(viewer->pane(2), PriorsPanel::studyKey(viewer->study().identity), 0));
    QTRY_VERIFY(viewer->pane(2)->viewport()->hasImage());
    viewer->pane(2)->viewport()->setWindow(VoiWindow{400, 1800});
    QVERIFY(!m_window->hangingProtocols()->saveLayout(QStringLiteral("My head CT")).isError());
    const Result<ProtocolSet> saved = ProtocolSet::load(m_window->hangingProtocols()->file());
    QVERIFY(saved.isOk());
    QCOMPARE(saved.value().protocols.first().name, QStringLiteral("My head CT"));
    QCOMPARE(saved.value().protocols.size(), ProtocolSet::builtIn().protocols.size() + 1);
    const HangingProtocol &mine = saved.value().protocols.first();
    QCOMPARE(mine.columns, 3);
    QCOMPARE(mine.match.priors, ProtocolMatch::Priors::Required);
    QCOMPARE(mine.panes[1].study, SeriesRule::Study::Prior);
    QCOMPARE(mine.panes[2].window, QStringLiteral("400/1800"));

    // Opened again (as after a restart: the file read anew), the study is laid out that way.
    delete viewer;
    QVERIFY(!m_window->hangingProtocols()->loadFile(m_window->hangingProtocols()->file()).isError());
    viewer = openAndWait(m_window.get(), QStringLiteral("demo-ct"));
    QCOMPARE(viewer->plan().name, QStringLiteral("My head CT"));
    QCOMPARE(viewer->paneCount(), 3);
    QCOMPARE(viewer->pane(1)->study()->identity.studyInstanceUid, DemoArchive::studyUid(DemoStudy::HeadCtPrior));
    QTRY_VERIFY(viewer->pane(2)->viewport()->hasImage());
    QCOMPARE(viewer->pane(2)->viewport()->window().center, 400.0);
    // A saved file that is broken keeps the built-ins in use, and says why.
    QVERIFY(writeFile(m_dir.filePath(QStringLiteral("broken.json")), "{\"format\":\"spectrum-hanging-protocols/1\",\"protocols\":[{\"name\":\"X\"}]}"));
    const Error broken = m_window->hangingProtocols()->loadFile(m_dir.filePath(QStringLiteral("broken.json")));
    QVERIFY(broken.message().contains(QStringLiteral("protocol 'X': layout")));
    QCOMPARE(m_window->hangingProtocols()->protocols().protocols, ProtocolSet::builtIn().protocols);
    QVERIFY(!m_window->hangingProtocols()->loadFile(m_window->hangingProtocols()->file().isEmpty() ? QString() : m_dir.filePath(QStringLiteral("protocols.json"))).isError());
}

void tst_Protocols::theDialogEditsOrdersAndTests()
{
    const StudySummary *listed = m_ws->findStudy(QStringLiteral("demo-ct"));
    QVERIFY(listed);
    const std::optional<StudySummary> ct = readStudy(m_ws.get(), *listed);  // as the study in view has them: its instances
    QVERIFY(ct);
    ProtocolsDialog dialog(ProtocolSet::builtIn(), &*ct);
    QCOMPARE(dialog.list()->count(), ProtocolSet::builtIn().protocols.size());
    dialog.list()->setCurrentRow(1);  // "CT head"
    dialog.testCurrent();
    QVERIFY2(dialog.message().contains(QStringLiteral("Without a prior: matches, 1 × 2")), qPrintable(dialog.message()));
    // A wrong edit is refused, saying what is wrong; the protocol stays as it was.
    dialog.editor()->setPlainText(dialog.editor()->toPlainText().replace(QStringLiteral("\"bone\""), QStringLiteral("\"purple\"")));
    QVERIFY(!dialog.applyEdit());
    QVERIFY2(dialog.message().contains(QStringLiteral("window 'purple'")), qPrintable(dialog.message()));
    QCOMPARE(dialog.protocols().protocols[1], ProtocolSet::builtIn().protocols[1]);
    dialog.editor()->setPlainText(dialog.editor()->toPlainText().replace(QStringLiteral("\"purple\""), QStringLiteral("\"lung\"")));
    QVERIFY(dialog.applyEdit());
    QCOMPARE(dialog.protocols().protocols[1].panes[1].window, QStringLiteral("lung"));
    // Ordered: moved up, it is tried first.
    dialog.moveCurrent(-1);
    QCOMPARE(dialog.protocols().protocols[0].name, QStringLiteral("CT head"));
    QCOMPARE(dialog.list()->currentRow(), 0);
    QCOMPARE(dialog.protocols().planFor(*ct, nullptr).name, QStringLiteral("CT head"));
    dialog.duplicateCurrent();
    QCOMPARE(dialog.protocols().protocols[1].name, QStringLiteral("CT head (copy)"));
    dialog.deleteCurrent();
    QCOMPARE(dialog.protocols().protocols.size(), ProtocolSet::builtIn().protocols.size());
    dialog.restoreBuiltIns();
    QCOMPARE(dialog.protocols().protocols, ProtocolSet::builtIn().protocols);
}

QTEST_MAIN(tst_Protocols)
#include "tst_protocols.moc"
