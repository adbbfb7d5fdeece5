// SPDX-License-Identifier: Apache-2.0
// spectrum-stallbench: how long the workstation's event loop can be kept from running while a radiologist opens
// a study from a remote store and scrolls through it (issue 18: goal ≤ 16 ms, one frame at 60 Hz).
//
// The real GUI (offscreen): MainWindow opens STUDY from STORE (the configuration in $SPECTRUM_CONFIG) into an
// empty cache, shows its middle slice as soon as it is fetched, then scrolls through the whole stack with the
// wheel, one notch every 30 ms, down and back up, while the rest of the study streams in. A 2 ms timer measures
// the loop: every gap between its ticks beyond 2 ms is time the loop could not run. Prints the longest gap,
// the 99th percentile and how many exceeded 50 ms; exits 1 if the longest exceeds the goal (16 ms: one frame at
// 60 Hz).
// With --then-open UID,UID…: once the study is all here and scrolled, each of those studies is opened in a tab of
// its own (as priors would be), all here and scrolled in turn; then every tab is closed with File ▸ Close study and
// the resident memory is measured: the window idle before anything opened, with all of them open, and after closing
// them (CLOSE_WAIT_MS later, default 3 s: after the second trim; the heap's use and free space then on stderr).
// Usage: spectrum-stallbench --store NAME --study UID [--cache DIR]   (tests/bench/stall.sh sets it all up)

#include "heartbeat.h"
#include "procmemory.h"
#include "viewport/imageviewport.h"
#include "shell/mainwindow.h"
#include "viewer/studyviewer.h"
#include "shell/workstation.h"

#include "spectrum/core/heaptrim.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/reading/studystreamer.h"

#include "viewer/imagememorycache.h"

#include <QAction>
#include <QApplication>
#include <QPointer>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QWheelEvent>

#include <algorithm>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <cstdio>
#include <vector>

using namespace spectrum;

namespace {
/// With SPECTRUM_TRACE_STALLS=ms: every event the GUI thread took longer than that to handle, on stderr
/// (receiver's class and name, event type) — where a stall comes from.
class TracingApplication : public QApplication
{
public:
    using QApplication::QApplication;
    bool notify(QObject *receiver, QEvent *event) override
    {
        if (m_thresholdMs <= 0 || QThread::currentThread() != thread())
            return QApplication::notify(receiver, event);
        const int depth = ++m_depth;
        QElapsedTimer t;
        t.start();
        const int type = event->type();
        // Named before: the event may delete its receiver (a deferred delete, a job that ends).
        const char *className = receiver->metaObject()->className();
        const QString name = receiver->objectName();
        const bool r = QApplication::notify(receiver, event);
        const double ms = t.nsecsElapsed() / 1e6;
        --m_depth;
        if (ms >= m_thresholdMs && depth == 1)
            std::fprintf(stderr, "stall: %.1f ms in %s '%s', event %d, at %lld ms\n", ms, className, qPrintable(name), type, m_clock.elapsed());
        return r;
    }
    double m_thresholdMs = qEnvironmentVariableIntValue("SPECTRUM_TRACE_STALLS");
    QElapsedTimer m_clock = [] { QElapsedTimer c; c.start(); return c; }();
    int m_depth = 0;
};
} // namespace

int main(int argc, char **argv)
{
    keepHeapReturnable();  // as the workstation's main() does
    qputenv("QT_QPA_PLATFORM", "offscreen");
    TracingApplication app(argc, argv);
    QCommandLineParser p;
    p.addOption({QStringLiteral("store"), QStringLiteral("The configured store to open the study from."), QStringLiteral("NAME")});
    p.addOption({QStringLiteral("study"), QStringLiteral("Study Instance UID."), QStringLiteral("UID")});
    p.addOption({QStringLiteral("cache"), QStringLiteral("Cache folder (default: a fresh temporary one)."), QStringLiteral("DIR")});
    p.addOption({QStringLiteral("give-up"), QStringLiteral("Seconds before it gives up (default 300)."), QStringLiteral("S"), QStringLiteral("300")});
    p.addOption({QStringLiteral("notches"), QStringLiteral("Wheel notches before it ends, once the study is all here (default: down and up the whole stack)."), QStringLiteral("N"), QStringLiteral("-1")});
    p.addOption({QStringLiteral("notch-ms"), QStringLiteral("Milliseconds between wheel notches (default 30)."), QStringLiteral("MS"), QStringLiteral("30")});
    p.addOption({QStringLiteral("then-open"), QStringLiteral("Studies to open after it, one after another, each in a tab of its own; then all are closed and the memory measured."), QStringLiteral("UIDS")});
    p.addHelpOption();
    p.process(app);
    if (!p.isSet(QStringLiteral("store")) || !p.isSet(QStringLiteral("study"))) {
        std::fprintf(stderr, "usage: spectrum-stallbench --store NAME --study UID\n");
        return 2;
    }
    Result<StoreConfigFile> config = StoreConfigFile::load(StoreConfigFile::defaultPath());
    if (!config.isOk()) {
        std::fprintf(stderr, "stallbench: %s\n", qPrintable(config.error().toString()));
        return 2;
    }
    QTemporaryDir tmp;
    Workstation::Options o;
    o.cacheDirectory = p.isSet(QStringLiteral("cache")) ? p.value(QStringLiteral("cache")) : tmp.filePath(QStringLiteral("cache"));
    o.seedDemoWhenEmpty = false;
    o.stores = config.value();
    Workstation ws(o);
    MainWindow window(&ws);
    window.resize(1400, 900);
    window.show();

    bench::Heartbeat heart;  // the loop's

    QElapsedTimer clock;
    double firstImageMs = -1, completeMs = -1;
    double stackMs = -1;  // when the reader could first scroll more than one slice (laid out from the stream, or listed)
    int stackSlices = 0;
    int notches = 0, direction = 1, scrolled = 0;
    QPointer<StudyViewer> viewer;  // the study opened last (gone once closed)
    int firstSlices = 0;
    QTimer wheel;
    wheel.setInterval(std::max(1, p.value(QStringLiteral("notch-ms")).toInt()));
    const int wantedNotches = p.value(QStringLiteral("notches")).toInt();
    QStringList thenOpen = p.value(QStringLiteral("then-open")).split(QLatin1Char(','), Qt::SkipEmptyParts);
    const int studies = 1 + int(thenOpen.size());
    qint64 rssBefore = -1, rssAllOpen = -1, rssClosed = -1;
    qint64 anonBefore = -1, anonClosed = -1;  // of which anonymous (the heap; the rest is mapped files)
    auto closeAll = [&] {
        rssAllOpen = bench::memoryOf("VmRSS");
        QAction *close = nullptr;
        for (QAction *a : window.findChildren<QAction *>())
            close = a->text() == QStringLiteral("&Close study") ? a : close;
        if (!close) {
            std::fprintf(stderr, "stallbench: no Close study in the menus\n");
            return QCoreApplication::exit(2);
        }
        for (int i = 0; i < studies; ++i)
            close->trigger();  // the tab in view each time, as the reader closes them
        // Measured once the viewers are gone and what they freed is handed back (a second later).
        QTimer::singleShot(qEnvironmentVariableIntValue("CLOSE_WAIT_MS") > 0 ? qEnvironmentVariableIntValue("CLOSE_WAIT_MS") : 3000, [&] {
            rssClosed = bench::memoryOf("VmRSS");
            anonClosed = bench::memoryOf("RssAnon");
#if defined(__GLIBC__)
            const struct mallinfo2 m = mallinfo2();
            std::fprintf(stderr, "heap after closing: %zu MiB in use, %zu MiB free in the heap, %zu MiB mapped apart\n", m.uordblks >> 20, m.fordblks >> 20, m.hblkhd >> 20);
#endif
            QCoreApplication::quit();
        });
    };
    QObject::connect(&wheel, &QTimer::timeout, [&] {
        bench::wheelNotch(viewer->viewport(), direction);
        ++scrolled;
        // Down to the end and back up, again and again: a study laid out as it arrives grows under the wheel.
        if (viewer->sliceIndex() >= viewer->sliceCount() - 1)
            direction = -1;
        else if (viewer->sliceIndex() <= 0)
            direction = 1;
        if (++notches > (wantedNotches >= 0 ? wantedNotches : 2 * viewer->sliceCount()) && viewer->streamer()->isComplete()) {
            wheel.stop();
            notches = 0;
            if (thenOpen.isEmpty() && studies == 1)
                return QCoreApplication::quit();
            if (thenOpen.isEmpty())
                return closeAll();
            viewer = nullptr;  // the one before no longer starts the wheel
            window.openRemoteStudy(p.value(QStringLiteral("store")), thenOpen.takeFirst());  // scrolled once shown
        }
    });
    QObject::connect(&window, &MainWindow::studyOpened, [&](StudyViewer *v) {
        const bool first = firstSlices == 0 && !viewer;
        viewer = v;
        QObject::connect(v, &StudyViewer::imageShown, [&, v] {
            if (firstImageMs < 0)
                firstImageMs = clock.nsecsElapsed() / 1e6;
            if (v == viewer && !wheel.isActive() && notches == 0)
                wheel.start();  // the study opened last, scrolled from its first image on
        });
        if (!first)
            return;  // what follows is the first study's
        QObject::connect(v->streamer(), &StudyStreamer::finished, [&, v] {
            completeMs = clock.nsecsElapsed() / 1e6;
            firstSlices = v->sliceCount();
        });
        for (auto signal : {&StudyStreamer::laidOut, &StudyStreamer::listed})
            QObject::connect(v->streamer(), signal, [&] {
                if (stackMs < 0 && viewer->sliceCount() > 1) {
                    stackMs = clock.nsecsElapsed() / 1e6;
                    stackSlices = viewer->sliceCount();
                    // STALLBENCH_SHOT=FILE: the window as the reader sees it a second later, mid-stream, to look at.
                    if (const QString shot = qEnvironmentVariable("STALLBENCH_SHOT"); !shot.isEmpty())
                        QTimer::singleShot(1000, &window, [&window, shot] { window.grab().save(shot); });
                }
            });
    });
    QObject::connect(&ws, &Workstation::started, [&] {
        // The window shown and painted, idle: what the workstation holds before any study.
        QTimer::singleShot(1000, [&] {
            rssBefore = bench::memoryOf("VmRSS");
            anonBefore = bench::memoryOf("RssAnon");
            clock.start();
            heart.start();
            window.openRemoteStudy(p.value(QStringLiteral("store")), p.value(QStringLiteral("study")));
        });
    });
    QObject::connect(&ws, &Workstation::startFailed, [](const Error &e) {
        std::fprintf(stderr, "stallbench: %s\n", qPrintable(e.toString()));
        QCoreApplication::exit(2);
    });
    const int giveUpS = std::max(1, p.value(QStringLiteral("give-up")).toInt());
    QTimer::singleShot(giveUpS * 1000, [giveUpS] {
        std::fprintf(stderr, "stallbench: gave up after %d s\n", giveUpS);
        QCoreApplication::exit(2);
    });
    ws.start();
    const int rc = app.exec();
    heart.stop();
    if (rc != 0 || heart.beats() == 0)
        return rc ? rc : 2;
    const double worst = heart.worstMs(), p99 = heart.percentileMs(0.99);
    const long over = heart.over(50);
    std::printf("study of %d images from '%s': first image %.0f ms, all cached %.0f ms, %d wheel notches\n",
                viewer ? viewer->sliceCount() : firstSlices, qPrintable(p.value(QStringLiteral("store"))), firstImageMs, completeMs, scrolled);
    std::printf("stack: more than one slice to scroll at %.0f ms (%d slices then)\n", stackMs, stackSlices);
    std::printf("event loop: %zu heartbeats of %d ms; longest stall %.1f ms, 99th percentile %.1f ms, %ld over 50 ms (goal: longest <= 16 ms)\n",
                heart.beats(), heart.tickMs(), worst, p99, over);
    if (studies == 1) {
        std::printf("memory: peak resident %lld MiB, at the end %lld MiB (study open, every slice scrolled past)\n",
                    bench::memoryOf("VmHWM") / 1048576, bench::memoryOf("VmRSS") / 1048576);
    } else {
        std::printf("memory: %d studies opened one after another, each scrolled: resident before %lld MiB, all open %lld MiB, peak %lld MiB, "
                    "after closing them %lld MiB (%.2f× before; goal ≤ 1.10×; anonymous %lld MiB before, %lld MiB after), decoded-image budget %lld MiB\n",
                    studies, rssBefore / 1048576, rssAllOpen / 1048576, bench::memoryOf("VmHWM") / 1048576, rssClosed / 1048576,
                    double(rssClosed) / double(rssBefore), anonBefore / 1048576, anonClosed / 1048576, ws.images()->budget() / 1048576);
    }
    return worst <= 16 ? 0 : 1;
}
