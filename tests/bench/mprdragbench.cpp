// spectrum-mprdragbench: the crosshair dragged across the MPR layout in the real GUI (offscreen). The demo head CT
// (its thin series: 512 × 512 × N slices, N from --ct-slices) in MPR; the crosshair point is moved every 16 ms (a
// mouse drag's rate) for --seconds, sweeping the volume diagonally, by the same call a click or drag in a pane
// makes. Prints each pane's planes redrawn per second and the event loop's longest stall and 99th percentile while
// dragging (goals, issue 22: ≥ 30 planes/s per pane, longest stall ≤ 16 ms).

#include "heartbeat.h"
#include "mainwindow.h"
#include "mprview.h"
#include "mprvolume.h"
#include "studyviewer.h"
#include "workstation.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTimer>

#include <cstdio>

using namespace spectrum;

int main(int argc, char **argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCommandLineParser p;
    p.addOptions({{QStringLiteral("ct-slices"), QStringLiteral("Slices of the demo CT's thin series."), QStringLiteral("N"), QStringLiteral("300")},
                  {QStringLiteral("seconds"), QStringLiteral("How long to drag."), QStringLiteral("S"), QStringLiteral("3")},
                  {QStringLiteral("cache"), QStringLiteral("Cache folder (the demo is seeded there once)."), QStringLiteral("DIR")}});
    p.process(app);
    QTemporaryDir tmp;
    Workstation::Options o;
    o.cacheDirectory = p.isSet(QStringLiteral("cache")) ? p.value(QStringLiteral("cache")) : tmp.filePath(QStringLiteral("cache"));
    o.demo.studies = {DemoStudy::HeadCt};
    o.demo.ctSlices = p.value(QStringLiteral("ct-slices")).toInt();
    o.prefetchPriors = false;
    Workstation ws(o);
    MainWindow window(&ws);
    window.setProtocols(ProtocolSet());
    window.resize(1600, 900);
    window.show();
    bench::Heartbeat heart;
    QTimer drag;
    drag.setTimerType(Qt::PreciseTimer);
    drag.setInterval(16);
    QElapsedTimer clock;
    const double seconds = p.value(QStringLiteral("seconds")).toDouble();
    int shown[MprView::kPanes] = {0, 0, 0};
    int moves = 0;
    MprView *mpr = nullptr;
    double readyMs = -1;

    auto go = [&] {
        if (mpr || !ws.isStarted() || ws.isSeeding() || !ws.findStudy(QStringLiteral("demo-ct")))
            return;
        StudyViewer *v = window.openStudy(QStringLiteral("demo-ct"));
        int thin = 0;
        for (int i = 0; i < v->study().series.size(); ++i)
            if (v->study().series[i].instances.size() > v->study().series[thin].instances.size())
                thin = i;
        v->showSeries(thin);
        clock.start();
        v->setMprShown(true);
        mpr = v->mprView();
        QObject::connect(mpr, &MprView::planeShown, &app, [&](int pane) {
            if (drag.isActive())
                ++shown[pane];
        });
        // Once the volume is in and the three planes are on screen: drag.
        auto *wait = new QTimer(&app);
        QObject::connect(wait, &QTimer::timeout, &app, [&, wait] {
            if (!mpr->mprVolume()->isComplete() || mpr->cutsPending() > 0)
                return;
            wait->stop();
            readyMs = clock.nsecsElapsed() / 1e6;
            const VolumeGeometry &g = mpr->mprVolume()->volume()->geometry();
            const int steps = int(seconds * 1000 / 16);
            QObject::connect(&drag, &QTimer::timeout, &app, [&, steps] {
                const double t = double(moves % steps) / steps;  // corner to corner, through the volume
                mpr->setPoint(g.patientPoint(t * (g.columns - 1), t * (g.rows - 1), t * (g.slotCount - 1)));
                if (++moves >= steps) {
                    drag.stop();
                    heart.stop();
                    QTimer::singleShot(0, &app, &QCoreApplication::quit);
                }
            });
            clock.restart();
            heart.start();
            drag.start();
        });
        wait->start(20);
    };
    QObject::connect(&ws, &Workstation::studiesChanged, &app, go);
    QObject::connect(&ws, &Workstation::seedingFinished, &app, go);
    ws.start();
    app.exec();
    const double elapsed = clock.nsecsElapsed() / 1e9;
    if (!mpr || readyMs < 0) {
        std::fprintf(stderr, "spectrum-mprdragbench: MPR never came up\n");
        return 1;
    }
    const std::shared_ptr<Volume> v = mpr->mprVolume()->volume();
    std::printf("volume %d x %d x %d ready and cut in %.0f ms\n", v->columns(), v->rows(), v->slotCount(), readyMs);
    std::printf("drag %d moves in %.2f s: planes/s axial %.1f coronal %.1f sagittal %.1f; stall max %.1f ms p99 %.1f ms\n", moves, elapsed,
                shown[0] / elapsed, shown[1] / elapsed, shown[2] / elapsed, heart.worstMs(), heart.percentileMs(0.99));
    return 0;
}
