// SPDX-License-Identifier: Apache-2.0
// spectrum-mprdragbench: the crosshair dragged across the MPR layout in the real GUI (offscreen). The demo head CT
// (its thin series: 512 × 512 × N slices, N from --ct-slices) in MPR; the crosshair point is moved every 16 ms (a
// mouse drag's rate) for --seconds, sweeping the volume diagonally, by the same call a click or drag in a pane
// makes. Prints each pane's planes redrawn per second and the event loop's longest stall and 99th percentile while
// dragging (goals, issue 22: ≥ 30 planes/s per pane, longest stall ≤ 16 ms).
//
// --store NAME --study UID (stores from $SPECTRUM_CONFIG): the study opened from that archive into an empty cache,
// MPR asked for as soon as the archive has listed it, while its slices still arrive. Prints when the first slice
// was in the cache, when the first coronal plane with a pixel in was on screen, and when the volume was whole
// (goal: first coronal ≤ 250 ms after the first slice).

#include "heartbeat.h"
#include "shell/mainwindow.h"
#include "openwait.h"
#include "volumes/mprview.h"
#include "volumes/mprvolume.h"
#include "viewer/studyviewer.h"
#include "shell/workstation.h"

#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/reading/studystreamer.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QPointer>
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
                  {QStringLiteral("cache"), QStringLiteral("Cache folder (the demo is seeded there once)."), QStringLiteral("DIR")},
                  {QStringLiteral("store"), QStringLiteral("Live: the archive to open the study from."), QStringLiteral("NAME")},
                  {QStringLiteral("study"), QStringLiteral("Live: the study."), QStringLiteral("UID")},
                  {QStringLiteral("shot"), QStringLiteral("Live: screenshots when the first coronal shows and 100, 200, 300 ms later (%1: the delay)."),
                   QStringLiteral("FILE")}});
    p.process(app);
    QTemporaryDir tmp;
    Workstation::Options o;
    o.cacheDirectory = p.isSet(QStringLiteral("cache")) ? p.value(QStringLiteral("cache")) : tmp.filePath(QStringLiteral("cache"));
    o.demo.studies = {DemoStudy::HeadCt};
    o.demo.ctSlices = p.value(QStringLiteral("ct-slices")).toInt();
    o.prefetchPriors = false;
    const bool live = p.isSet(QStringLiteral("store"));
    if (live) {
        Result<StoreConfigFile> config = StoreConfigFile::load(StoreConfigFile::defaultPath());
        if (!config.isOk()) {
            std::fprintf(stderr, "%s\n", qPrintable(config.error().toString()));
            return 1;
        }
        o.stores = config.value();
        o.seedDemoWhenEmpty = false;
    }
    Workstation ws(o);
    MainWindow window(&ws);
    window.hangingProtocols()->setProtocols(ProtocolSet());
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
    QPointer<MprView> mpr;
    double readyMs = -1;

    bool opening = false;
    auto go = [&] {
        if (opening || mpr || !ws.isStarted() || ws.isSeeding() || !ws.findStudy(QStringLiteral("demo-ct")))
            return;
        opening = true;  // the wait below runs the event loop: the list may change meanwhile
        StudyViewer *v = spectrum::bench::openNow(window, QStringLiteral("demo-ct"));
        opening = false;
        if (!v)
            return;
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
    // Live: from the archive, MPR while it arrives.
    double firstSliceMs = -1, listedMs = -1, firstCoronalMs = -1, wholeMs = -1;
    if (live) {
        QObject::connect(&window, &MainWindow::studyOpened, &app, [&](StudyViewer *v) {
            StudyStreamer *streamer = v->streamer();
            if (!streamer)
                return;
            // The first slice: the first instance of the study in the workstation, however it came.
            QObject::connect(streamer, &StudyStreamer::instanceUpdated, &app, [&](const InstanceUpdate &u) {
                if (firstSliceMs < 0 && (u.step == InstanceUpdate::Whole || u.step == InstanceUpdate::Kept))
                    firstSliceMs = clock.nsecsElapsed() / 1e6;
            });
            QObject::connect(streamer, &StudyStreamer::listed, &app, [&] { listedMs = clock.nsecsElapsed() / 1e6; });
            // MPR asked for as the study opens (a hanging protocol's "mpr": true, or M at once): on its first look,
            // the series the first look opens.
            {
                v->setMprShown(true);
                mpr = v->mprView();
                QObject::connect(mpr, &MprView::planeShown, &app, [&](int pane) {
                    ImageViewport *coronal = mpr->viewport(1);
                    if (pane == 1 && firstCoronalMs < 0 && coronal->hasImage()) {
                        const ImageInfo &info = coronal->image().info;
                        for (int y = 0; y < info.rows && firstCoronalMs < 0; ++y)
                            for (int x = 0; x < info.columns; x += 8)
                                if (!coronal->hasNoValue(QPoint(x, y))) {
                                    firstCoronalMs = clock.nsecsElapsed() / 1e6;
                                    if (p.isSet(QStringLiteral("shot")))  // what the reader sees then, and a moment later
                                        for (int ms : {0, 100, 200, 300})
                                            QTimer::singleShot(ms, &app, [&, ms] {
                                                if (mpr) {
                                                    mpr->window()->grab().save(p.value(QStringLiteral("shot")).arg(ms));
                                                    mpr->viewport(1)->grab().save(p.value(QStringLiteral("shot")).arg(QStringLiteral("%1-coronal").arg(ms)));
                                                }
                                            });
                                    break;
                                }
                    }
                    if (wholeMs < 0 && mpr->mprVolume()->isComplete() && mpr->cutsPending() == 0) {
                        wholeMs = clock.nsecsElapsed() / 1e6;
                        QTimer::singleShot(0, &app, &QCoreApplication::quit);
                    }
                });
            }
        });
        QObject::connect(&ws, &Workstation::started, &app, [&] {
            clock.start();
            window.openRemoteStudy(p.value(QStringLiteral("store")), p.value(QStringLiteral("study")));
        });
        QTimer::singleShot(p.isSet(QStringLiteral("seconds")) ? int(seconds * 1000) : 120000, &app, &QCoreApplication::quit);
        ws.start();
        app.exec();
        if (mpr && wholeMs < 0)
            std::fprintf(stderr, "spectrum-mprdragbench: the volume was not whole: %s\n", qPrintable(mpr->statusText()));
        if (firstCoronalMs < 0) {
            std::fprintf(stderr, "spectrum-mprdragbench: no coronal plane came (first slice %.0f ms, listed %.0f ms)\n", firstSliceMs, listedMs);
            return 1;
        }
        std::printf("live: first slice %.1f ms, listed %.1f ms, first coronal %.1f ms (%.1f ms after the first slice), whole volume %.1f ms\n",
                    firstSliceMs, listedMs, firstCoronalMs, firstCoronalMs - firstSliceMs, wholeMs);
        return 0;
    }
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
