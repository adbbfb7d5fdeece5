// SPDX-License-Identifier: Apache-2.0
// spectrum-priorsbench: reading against priors, timed in the real GUI (offscreen). One measurement per run;
// tests/bench/priors.sh runs them interleaved, several rounds, and prints best, median and ratios.
//
//   open --cache DIR --alone|--with-prior   the demo head CT from the cache, opened alone (one pane) or with its
//                                           prior by the built-in protocol (two panes); prints the time until every
//                                           pane has painted its image (on screen, not only decoded and windowed).
//   protocols --cache DIR                   50 protocols (the built-ins last): the time to match and plan, and to
//                                           match, plan and lay out an open viewer, each the best of 200.
//   remote --store NAME --study UID         the CT from an archive into an empty cache, then its comparable prior
//                                           (not prefetched) beside it: each one's first image after it was asked for.
//   scroll --cache DIR                      the CT and its prior linked, 600 wheel notches through the CT: the
//                                           longest time the event loop could not run.
// Usage: see tests/bench/priors.sh.

#include "heartbeat.h"
#include "viewport/imageviewport.h"
#include "shell/mainwindow.h"
#include "openwait.h"
#include "browser/priorspanel.h"
#include "viewer/seriespane.h"
#include "viewer/studyviewer.h"
#include "viewer/panelinks.h"
#include "shell/workstation.h"

#include "spectrum/imaging/demostudies.h"
#include "spectrum/stores/archives/storeconfig.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTimer>
#include <QWheelEvent>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace spectrum;

namespace {

/// 44 protocols a site might have that do not match a head CT, then the built-ins.
ProtocolSet fiftyProtocols()
{
    ProtocolSet set;
    const QStringList modalities{QStringLiteral("MR"), QStringLiteral("US"), QStringLiteral("CR"), QStringLiteral("MG")};
    for (int i = 0; i < 44; ++i) {
        HangingProtocol p;
        p.name = QStringLiteral("Site protocol %1").arg(i);
        p.match.modalities = {modalities[i % modalities.size()]};
        p.match.description = QStringLiteral("*SPINE*|*KNEE %1*").arg(i);
        p.match.requiredSeries = {QStringLiteral("*SAG*")};
        p.rows = 2;
        p.columns = 2;
        for (int k = 0; k < 4; ++k) {
            SeriesRule r;
            r.description = QStringLiteral("*T%1*").arg(k + 1);
            p.panes << r;
        }
        set.protocols << p;
    }
    set.protocols += ProtocolSet::builtIn().protocols;
    return set;
}

/// Which image each watched widget last painted: the widget's own paint runs inside the filter, so what is
/// recorded (and `painted` called) is after the pixels were drawn.
class PaintWatch : public QObject
{
public:
    std::function<void()> painted;
    QString paintedUid(QObject *viewport) const { return m_uid.value(viewport); }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() != QEvent::Paint || m_inside)
            return false;
        m_inside = true;
        watched->event(event);
        m_inside = false;
        auto *viewport = static_cast<ImageViewport *>(watched);
        m_uid.insert(watched, viewport->hasImage() ? viewport->image().info.identity.sopInstanceUid : QString());
        if (painted)
            painted();
        return true;
    }

private:
    QHash<QObject *, QString> m_uid;
    bool m_inside = false;
};

int fail(const QString &why)
{
    std::fprintf(stderr, "priorsbench: %s\n", qPrintable(why));
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("mode"), QStringLiteral("open, protocols, remote or scroll"));
    p.addOptions({{QStringLiteral("cache"), QStringLiteral("Cache folder."), QStringLiteral("DIR")},
                  {QStringLiteral("alone"), QStringLiteral("open: the CT alone.")},
                  {QStringLiteral("with-prior"), QStringLiteral("open: the CT with its prior, by protocol.")},
                  {QStringLiteral("store"), QStringLiteral("remote: the store."), QStringLiteral("NAME")},
                  {QStringLiteral("study"), QStringLiteral("remote: the study."), QStringLiteral("UID")}});
    p.process(app);
    const QString mode = p.positionalArguments().value(0);
    QTemporaryDir tmp;
    Workstation::Options o;
    o.cacheDirectory = p.isSet(QStringLiteral("cache")) ? p.value(QStringLiteral("cache")) : tmp.filePath(QStringLiteral("cache"));
    o.seedDemoWhenEmpty = mode != QLatin1String("remote");
    o.prefetchPriors = false;  // what is measured is asked for; nothing arrives unasked
    if (mode == QLatin1String("remote")) {
        Result<StoreConfigFile> config = StoreConfigFile::load(StoreConfigFile::defaultPath());
        if (!config.isOk())
            return fail(config.error().toString());
        o.stores = config.value();
    }
    Workstation ws(o);
    MainWindow window(&ws);
    window.resize(1400, 900);
    window.show();
    QElapsedTimer clock;
    int rc = 0;
    // scroll: the loop's heartbeat, and the wheel (here: they must outlive the branch that sets them up).
    bench::Heartbeat heart;
    QTimer wheel;
    wheel.setInterval(16);
    int notches = 0, direction = 1;
    StudyViewer *viewer = nullptr;
    double currentMs = -1;  // remote
    PaintWatch paints;      // open

    // Every pane shows its image — a linked prior the one at the current's level, not any slice of it.
    auto allShown = [](StudyViewer *v) {
        for (int i = 0; i < v->paneCount(); ++i)
            if (!v->pane(i)->viewport()->hasImage())
                return false;
        const ImageInfo &current = v->pane(0)->viewport()->image().info;
        for (int i = 1; i < v->paneCount(); ++i) {
            const ImageInfo &other = v->pane(i)->viewport()->image().info;
            if (v->links()->isSynchronized() && std::abs(other.slicePositionAlongNormal() - current.slicePositionAlongNormal()) > other.sliceThickness / 2 + 1e-6)
                return false;
        }
        return true;
    };
    // Once the cache is open, the demo in it (seeded the first time) and listed: `run`, once.
    auto whenReady = [&](std::function<void()> run) {
        auto once = std::make_shared<bool>(false);
        auto go = [&ws, run, once] {
            if (*once || !ws.isStarted() || ws.isSeeding() || !ws.findStudy(QStringLiteral("demo-ct")) || !ws.findStudy(QStringLiteral("demo-ct-prior")))
                return;
            *once = true;
            run();
        };
        QObject::connect(&ws, &Workstation::studiesChanged, &app, go);
        QObject::connect(&ws, &Workstation::seedingFinished, &app, go);
    };

    if (mode == QLatin1String("open")) {
        const bool withPrior = p.isSet(QStringLiteral("with-prior"));
        if (!withPrior)
            window.hangingProtocols()->setProtocols(ProtocolSet());  // one pane, the CT
        whenReady([&] {
            clock.start();
            StudyViewer *v = spectrum::bench::openNow(window, QStringLiteral("demo-ct"));
            // Done when every pane shows its image and has painted it.
            auto check = [&, v, done = false]() mutable {
                if (done || !allShown(v))
                    return;
                for (int i = 0; i < v->paneCount(); ++i) {
                    if (paints.paintedUid(v->pane(i)->viewport()) != v->pane(i)->viewport()->image().info.identity.sopInstanceUid)
                        return;
                }
                done = true;
                std::printf("open %s: %d pane(s) painted in %.1f ms\n", withPrior ? "with prior" : "alone", v->paneCount(), clock.nsecsElapsed() / 1e6);
                QCoreApplication::quit();
            };
            paints.painted = check;
            for (int i = 0; i < v->paneCount(); ++i)
                v->pane(i)->viewport()->installEventFilter(&paints);
        });
    } else if (mode == QLatin1String("protocols")) {
        whenReady([&] {
            const ProtocolSet set = fiftyProtocols();
            const StudySummary ct = spectrum::bench::loadNow(ws, *ws.findStudy(QStringLiteral("demo-ct")));
            const StudySummary prior = spectrum::bench::loadNow(ws, *ws.findStudy(QStringLiteral("demo-ct-prior")));
            double bestPlan = 1e9;
            HangingPlan plan;
            for (int i = 0; i < 200; ++i) {
                QElapsedTimer t;
                t.start();
                plan = set.planFor(ct, &prior);
                bestPlan = std::min(bestPlan, t.nsecsElapsed() / 1e6);
            }
            window.hangingProtocols()->setProtocols(set);
            StudyViewer *v = spectrum::bench::openNow(window, QStringLiteral("demo-ct"));
            double bestApply = 1e9;
            for (int i = 0; i < 200; ++i) {
                QElapsedTimer t;
                t.start();
                window.hangingProtocols()->apply(v);
                bestApply = std::min(bestApply, t.nsecsElapsed() / 1e6);
                QCoreApplication::processEvents();
            }
            std::printf("protocols: %lld protocols, '%s' chosen; matched and planned in %.3f ms; matched, planned and laid out in %.3f ms (goal <= 5 ms)\n",
                        qlonglong(set.protocols.size()), qPrintable(plan.name), bestPlan, bestApply);
            rc = bestApply <= 5 ? 0 : 1;
            QCoreApplication::quit();
        });
    } else if (mode == QLatin1String("remote")) {
        window.hangingProtocols()->setProtocols(ProtocolSet());
        QObject::connect(&window, &MainWindow::studyOpened, &app, [&](StudyViewer *v) {
            QObject::connect(v, &StudyViewer::imageShown, &app, [&, v] {
                if (currentMs >= 0)
                    return;
                currentMs = clock.nsecsElapsed() / 1e6;
                // Then the prior, once the archive has said which it is.
                auto askPrior = [&, v] {
                    const int index = v->priorsPanel()->priors().mostRecentComparable(v->study().identity);
                    if (index < 0)
                        return false;
                    clock.restart();
                    // Its pane is placed right after it is opened: looked for then.
                    QObject::connect(v->comparison(), &StudyComparison::opened, &app, [&, v] {
                        QTimer::singleShot(0, &app, [&, v] {
                            auto report = [&] {
                                const double priorMs = clock.nsecsElapsed() / 1e6;
                                std::printf("remote: current's first image %.1f ms, prior's first image %.1f ms after it was asked for (%.2fx; goal <= 2x)\n",
                                            currentMs, priorMs, priorMs / currentMs);
                                rc = priorMs <= 2 * currentMs ? 0 : 1;
                                QCoreApplication::quit();
                            };
                            for (int i = 0; i < v->paneCount(); ++i) {
                                SeriesPane *pane = v->pane(i);
                                if (pane->study() == &v->study())
                                    continue;
                                if (pane->viewport()->hasImage())
                                    return report();
                                QObject::connect(pane, &SeriesPane::imageShown, &app, report);
                            }
                        });
                    });
                    window.openPrior(v, index);
                    return true;
                };
                if (!askPrior()) {
                    auto *poll = new QTimer(v);
                    QObject::connect(poll, &QTimer::timeout, &app, [askPrior, poll] {
                        if (askPrior())
                            poll->stop();
                    });
                    poll->start(5);
                }
            });
        });
        QObject::connect(&ws, &Workstation::started, &app, [&] {
            clock.start();
            window.openRemoteStudy(p.value(QStringLiteral("store")), p.value(QStringLiteral("study")));
        });
    } else if (mode == QLatin1String("scroll")) {
        QObject::connect(&wheel, &QTimer::timeout, [&] {
            bench::wheelNotch(viewer->pane(0)->viewport(), direction);
            if (viewer->pane(0)->sliceIndex() >= viewer->pane(0)->sliceCount() - 1)
                direction = -1;
            else if (viewer->pane(0)->sliceIndex() <= 0)
                direction = 1;
            if (++notches >= 600) {
                heart.stop();
                wheel.stop();
                const double worst = heart.worstMs(), p99 = heart.percentileMs(0.99);
                std::printf("scroll: 600 notches through the CT with its prior linked (prior at slice %d of %d); longest stall %.1f ms, 99th percentile %.1f ms (goal <= 16 ms)\n",
                            viewer->pane(1)->sliceIndex() + 1, viewer->pane(1)->sliceCount(), worst, p99);
                rc = worst <= 16 ? 0 : 1;
                QCoreApplication::quit();
            }
        });
        whenReady([&] {
            viewer = spectrum::bench::openNow(window, QStringLiteral("demo-ct"));  // the built-in protocol: the prior beside it, linked
            if (viewer->paneCount() < 2 || !viewer->links()->isSynchronized()) {
                rc = fail(QStringLiteral("the CT did not open beside its prior"));
                QCoreApplication::quit();
                return;
            }
            QObject::connect(viewer->pane(0), &SeriesPane::imageShown, &app, [&] {
                if (!wheel.isActive() && notches == 0) {
                    heart.start();
                    wheel.start();
                }
            });
        });
    } else {
        return fail(QStringLiteral("mode: open, protocols, remote or scroll"));
    }
    QObject::connect(&ws, &Workstation::startFailed, [](const Error &e) {
        std::fprintf(stderr, "priorsbench: %s\n", qPrintable(e.toString()));
        QCoreApplication::exit(2);
    });
    QTimer::singleShot(300000, [] {
        std::fprintf(stderr, "priorsbench: gave up after 5 minutes\n");
        QCoreApplication::exit(2);
    });
    ws.start();
    const int code = app.exec();
    return code ? code : rc;
}
