// SPDX-License-Identifier: Apache-2.0
// spectrum-soakbench: a working day at the workstation (issue 42). The real window (offscreen) opens the studies of
// STUDIES (one "STUDY_UID PATIENT_ID" a line, in the reader's order) from STORE one after another, as a double-click
// in the archive browser does, into a cache with a disk budget; scrolls each down and up its stack once it is all
// here, closes it with File ▸ Close study, lets the window settle and measures what it holds: resident memory, the
// heap in use, file descriptors, threads, widgets, the disk cache's index and the decoded images kept. It also
// checks that every study opened shows the patient asked for.
// After the warm-up (the first WARM_UP studies: the disk cache fills and starts evicting, the pools reach their
// size) each measure must stay flat: the last fifth of the day against the fifth just after the warm-up (medians),
// and the longest stall of each study must not grow. Prints a line per study and the verdict; exits 1 when
// something grew, 3 when a study showed another patient, 2 when it could not run.
// Usage: spectrum-soakbench --store NAME --studies FILE [--cache DIR] [--disk-budget-mib N] [--warm-up N]
//        (tests/bench/soak.sh sets it all up)
// To find what grows: SOAK_KEYS=1 (the decoded images kept after each study), SOAK_SMAPS=1 (the mappings holding
// anonymous memory, at the end), SOAK_MALLOC_INFO=1 (glibc's arenas, at the end), SOAK_TRIM=1 (malloc_trim before
// each measure: what the heap would give back), SOAK_EXIT_AT_END=1 (no clean-up: a heap profiler then reports
// what was live as leaked — run under heaptrack), SOAK_SHOT=FILE (the window when a study gives up).

#include "heartbeat.h"
#include "procmemory.h"
#include "shell/mainwindow.h"
#include "shell/workstation.h"
#include "stores/transferspanel.h"
#include "viewer/imagememorycache.h"
#include "viewer/studyviewer.h"
#include "viewport/imageviewport.h"

#include "spectrum/core/heaptrim.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/reading/studystreamer.h"

#include <QAction>
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QMap>
#include <QPointer>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace spectrum;

namespace {

/// What the workstation holds after a study is closed.
struct Sample
{
    int images = 0;          ///< the study's
    double openMs = 0;       ///< opening to all here
    double worstStallMs = 0; ///< while it was opened, scrolled and closed
    double rssMiB = 0, anonMiB = 0, heapMiB = 0;
    qint64 fds = 0, threads = 0, widgets = 0, viewersLeft = 0;
    qint64 cacheBlobs = 0;
    double cacheMiB = 0, indexMiB = 0, logMiB = 0, decodedMiB = 0;
    qint64 listed = 0;       ///< studies in the workstation's list
};

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// The heap in use, every arena's (mallinfo2 counts only the main one; threads decode in others): what glibc's
/// malloc_info says the arenas hold from the system, less their free chunks, plus the blocks mapped apart. MiB.
double heapInUseMiB()
{
#if defined(__GLIBC__)
    char *text = nullptr;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return -1;
    malloc_info(0, f);
    std::fclose(f);
    const QByteArray xml(text, qsizetype(size));
    std::free(text);
    // The totals over all arenas follow the last </heap>.
    const QByteArray totals = xml.mid(xml.lastIndexOf("</heap>"));
    auto sizeOf = [&totals](const char *element) {
        const qsizetype at = totals.indexOf(element);
        if (at < 0)
            return qint64(0);
        const qsizetype from = totals.indexOf("size=\"", at) + 6;
        return totals.mid(from, totals.indexOf('"', from) - from).toLongLong();
    };
    const qint64 held = sizeOf("<system type=\"current\"");
    const qint64 free = sizeOf("<total type=\"fast\"") + sizeOf("<total type=\"rest\"");
    return double(held - free + sizeOf("<total type=\"mmap\"")) / 1048576.0;
#else
    return -1;
#endif
}

} // namespace

int main(int argc, char **argv)
{
    keepHeapReturnable();  // as the workstation's main() does
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCommandLineParser p;
    p.addOption({QStringLiteral("store"), QStringLiteral("The configured store to open the studies from."), QStringLiteral("NAME")});
    p.addOption({QStringLiteral("studies"), QStringLiteral("File of \"STUDY_UID PATIENT_ID\" lines, in the order to open them."), QStringLiteral("FILE")});
    p.addOption({QStringLiteral("cache"), QStringLiteral("Cache folder (default: a fresh temporary one)."), QStringLiteral("DIR")});
    p.addOption({QStringLiteral("disk-budget-mib"), QStringLiteral("The disk cache's budget (default 1024)."), QStringLiteral("N"), QStringLiteral("1024")});
    p.addOption({QStringLiteral("warm-up"), QStringLiteral("Studies before the measures must be flat (default 50)."), QStringLiteral("N"), QStringLiteral("50")});
    p.addOption({QStringLiteral("notch-ms"), QStringLiteral("Milliseconds between wheel notches (default 15)."), QStringLiteral("MS"), QStringLiteral("15")});
    p.addOption({QStringLiteral("settle-ms"), QStringLiteral("Milliseconds after closing a study before measuring (default 500)."), QStringLiteral("MS"), QStringLiteral("500")});
    p.addOption({QStringLiteral("give-up"), QStringLiteral("Seconds a study may take before it gives up (default 120)."), QStringLiteral("S"), QStringLiteral("120")});
    p.addHelpOption();
    p.process(app);
    if (!p.isSet(QStringLiteral("store")) || !p.isSet(QStringLiteral("studies"))) {
        std::fprintf(stderr, "usage: spectrum-soakbench --store NAME --studies FILE\n");
        return 2;
    }
    QFile list(p.value(QStringLiteral("studies")));
    if (!list.open(QIODevice::ReadOnly)) {
        std::fprintf(stderr, "soakbench: cannot read %s\n", qPrintable(list.fileName()));
        return 2;
    }
    std::vector<std::pair<QString, QString>> studies;  // study, patient
    for (const QByteArray &line : list.readAll().split('\n')) {
        const QList<QByteArray> f = line.simplified().split(' ');
        if (f.size() == 2)
            studies.emplace_back(QString::fromLatin1(f[0]), QString::fromLatin1(f[1]));
    }
    const int warmUp = p.value(QStringLiteral("warm-up")).toInt();
    if (int(studies.size()) < warmUp + 10) {
        std::fprintf(stderr, "soakbench: %zu studies: at least the warm-up and ten more are needed\n", studies.size());
        return 2;
    }
    Result<StoreConfigFile> config = StoreConfigFile::load(StoreConfigFile::defaultPath());
    if (!config.isOk()) {
        std::fprintf(stderr, "soakbench: %s\n", qPrintable(config.error().toString()));
        return 2;
    }
    QTemporaryDir tmp;
    Workstation::Options o;
    o.cacheDirectory = p.isSet(QStringLiteral("cache")) ? p.value(QStringLiteral("cache")) : tmp.filePath(QStringLiteral("cache"));
    o.diskBudgetBytes = p.value(QStringLiteral("disk-budget-mib")).toLongLong() * 1048576;
    o.seedDemoWhenEmpty = false;
    o.stores = config.value();
    Workstation ws(o);
    MainWindow window(&ws);
    window.resize(1400, 900);
    window.show();
    QAction *close = nullptr;
    for (QAction *a : window.findChildren<QAction *>())
        close = a->text() == QStringLiteral("&Close study") ? a : close;
    if (!close) {
        std::fprintf(stderr, "soakbench: no Close study in the menus\n");
        return 2;
    }

    bench::Heartbeat heart;
    QElapsedTimer clock;
    std::vector<Sample> samples;
    size_t next = 0;
    QPointer<StudyViewer> viewer;
    int notches = 0, direction = 1;
    bool done = false;  // the study in hand is closed and waits to be measured
    QTimer wheel, giveUp;
    wheel.setInterval(std::max(1, p.value(QStringLiteral("notch-ms")).toInt()));
    giveUp.setSingleShot(true);
    giveUp.setInterval(std::max(1, p.value(QStringLiteral("give-up")).toInt()) * 1000);
    const int settleMs = std::max(0, p.value(QStringLiteral("settle-ms")).toInt());
    const QString store = p.value(QStringLiteral("store"));
    const QString indexFile = QDir(o.cacheDirectory).filePath(QStringLiteral("index.sqlite"));

    // Widgets by class at the end of the warm-up, to name those that grew after it.
    QMap<QString, int> widgetsAtWarmUp;
    auto widgetsByClass = [] {
        QMap<QString, int> m;
        for (QWidget *w : QApplication::allWidgets())
            ++m[QString::fromLatin1(w->metaObject()->className())];
        return m;
    };
    std::printf("study\timages\topen ms\tstall ms\tRSS MiB\tanon MiB\theap MiB\tfds\tthreads\twidgets\tcache blobs\tcache MiB\tindex MiB\tlog MiB\tdecoded MiB\tlisted\n");
    std::function<void()> openNext = [&] {
        if (next == studies.size())
            return QCoreApplication::quit();
        heart.reset();
        clock.start();
        notches = 0;
        direction = 1;
        done = false;
        giveUp.start();
        window.openRemoteStudy(store, studies[next].first);
    };
    auto measure = [&] {
        Sample s = samples.back();
#if defined(__GLIBC__)
        if (qEnvironmentVariableIsSet("SOAK_TRIM"))
            malloc_trim(0);  // diagnosis: what the heap would give back now
#endif
        s.worstStallMs = heart.worstMs();
        s.rssMiB = bench::memoryOf("VmRSS") / 1048576.0;
        s.anonMiB = bench::memoryOf("RssAnon") / 1048576.0;
        s.heapMiB = heapInUseMiB();
        s.fds = qint64(QDir(QStringLiteral("/proc/self/fd")).entryList(QDir::Files | QDir::System | QDir::NoDotAndDotDot).size());
        s.threads = bench::statusOf("Threads");
        s.widgets = qint64(QApplication::allWidgets().size());
        s.viewersLeft = qint64(window.findChildren<StudyViewer *>().size());
        const StoreUsage u = ws.cache()->usage();
        s.cacheBlobs = u.blobs;
        s.cacheMiB = u.bytes / 1048576.0;
        s.indexMiB = QFileInfo(indexFile).size() / 1048576.0;
        s.logMiB = QFileInfo(indexFile + QStringLiteral("-wal")).size() / 1048576.0;
        s.decodedMiB = ws.images()->usage() / 1048576.0;
        s.listed = ws.studies().size();
        samples.back() = s;
        if (samples.size() == size_t(warmUp))
            widgetsAtWarmUp = widgetsByClass();
        std::printf("%zu\t%d\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f\t%lld\t%lld\t%lld\t%lld\t%.0f\t%.2f\t%.2f\t%.1f\t%lld\n", samples.size(), s.images,
                    s.openMs, s.worstStallMs, s.rssMiB, s.anonMiB, s.heapMiB, s.fds, s.threads, s.widgets, s.cacheBlobs, s.cacheMiB,
                    s.indexMiB, s.logMiB, s.decodedMiB, s.listed);
        std::fflush(stdout);
        if (qEnvironmentVariableIsSet("SOAK_KEYS") && ws.images()->count() > 0)
            std::fprintf(stderr, "after study %zu: decoded images kept: %s\n", samples.size(), qPrintable(ws.images()->keys().join(QLatin1Char(' '))));
        if (s.viewersLeft > 0) {
            std::fprintf(stderr, "soakbench: %lld viewer(s) still there %d ms after closing study %zu\n", s.viewersLeft, settleMs, samples.size());
            return QCoreApplication::exit(1);
        }
        ++next;
        openNext();
    };
    QObject::connect(&giveUp, &QTimer::timeout, [&] {
        std::fprintf(stderr, "soakbench: study %zu (%s) not all here and scrolled after %d s\n", next + 1, qPrintable(studies[next].first),
                     giveUp.interval() / 1000);
        if (const QString shot = qEnvironmentVariable("SOAK_SHOT"); !shot.isEmpty())
            window.grab().save(shot);  // the window as it was left
        if (!viewer)
            std::fprintf(stderr, "soakbench: no viewer opened for it\n");
        else
            std::fprintf(stderr, "soakbench: viewer of '%s' at slice %d of %d, %d notches; streamer %s, %s, %d of %d here, %d failed for good\n",
                         qPrintable(viewer->study().identity.studyInstanceUid), viewer->sliceIndex(), viewer->sliceCount(), notches,
                         viewer->streamer()->isListed() ? "listed" : "not listed", viewer->streamer()->isStopped() ? "stopped" : "running",
                         viewer->streamer()->cachedCount(), viewer->streamer()->total(), viewer->streamer()->failedForGood());
        QCoreApplication::exit(2);
    });
    QObject::connect(&wheel, &QTimer::timeout, [&] {
        if (!viewer)
            return wheel.stop();
        bench::wheelNotch(viewer->viewport(), direction);
        if (viewer->sliceIndex() >= viewer->sliceCount() - 1)
            direction = -1;
        else if (viewer->sliceIndex() <= 0)
            direction = 1;
        if (++notches < 2 * viewer->sliceCount() || !viewer->streamer()->isComplete())
            return;
        // All here and scrolled down and up: closed as the reader does, measured once the window has settled.
        wheel.stop();
        giveUp.stop();
        Sample s;
        s.images = viewer->study().instanceCount;
        s.openMs = clock.nsecsElapsed() / 1e6;
        samples.push_back(s);
        done = true;
        close->trigger();
        QTimer::singleShot(settleMs, measure);
    });
    QObject::connect(&window, &MainWindow::studyOpened, [&](StudyViewer *v) {
        if (done || next >= studies.size() || v->study().identity.studyInstanceUid != studies[next].first)
            return;
        if (v->study().identity.patientId != studies[next].second) {
            std::fprintf(stderr, "soakbench: study %s shows patient '%s', not '%s'\n", qPrintable(studies[next].first),
                         qPrintable(v->study().identity.patientId), qPrintable(studies[next].second));
            return QCoreApplication::exit(3);
        }
        viewer = v;
        QObject::connect(v, &StudyViewer::imageShown, &wheel, [&, v] {
            if (v == viewer && !wheel.isActive() && !done)
                wheel.start();  // scrolled from its first image on
        });
    });
    QObject::connect(&ws, &Workstation::started, [&] { QTimer::singleShot(1000, [&] { heart.start(); openNext(); }); });
    QObject::connect(&ws, &Workstation::startFailed, [](const Error &e) {
        std::fprintf(stderr, "soakbench: %s\n", qPrintable(e.toString()));
        QCoreApplication::exit(2);
    });
    ws.start();
    const int rc = app.exec();
    heart.stop();
    if (qEnvironmentVariableIsSet("SOAK_EXIT_AT_END")) {
        std::fflush(stdout);
        std::_Exit(rc);  // diagnosis: what is still allocated now is what a heap profiler reports as not freed
    }
    if (rc != 0)
        return rc;

    // The verdict: the fifth of the day just after the warm-up against the last fifth (medians; threads, file
    // descriptors and widgets by their largest), and how much of the heap each study left behind (least squares).
    const size_t n = samples.size(), w = size_t(warmUp), k = std::max<size_t>(5, (n - w) / 5);
    auto column = [&](size_t from, size_t to, auto field) {
        std::vector<double> v;
        for (size_t i = from; i < to; ++i)
            v.push_back(double(field(samples[i])));
        return v;
    };
    auto early = [&](auto field) { return column(w, w + k, field); };
    auto late = [&](auto field) { return column(n - k, n, field); };
    auto maxOf = [](const std::vector<double> &v) { return *std::max_element(v.begin(), v.end()); };
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = w; i < n; ++i) {
        const double x = double(i), y = samples[i].heapMiB;
        sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    const double m = double(n - w), slopeKiB = (m * sxy - sx * sy) / (m * sxx - sx * sx) * 1024.0;
    int grew = 0;
    auto check = [&](const char *what, double before, double after, double allowed, const char *unit) {
        const bool ok = after <= before + allowed;
        grew += ok ? 0 : 1;
        std::printf("%-40s %9.1f -> %9.1f %s (allowed +%.1f) %s\n", what, before, after, unit, allowed, ok ? "flat" : "GREW");
    };
    std::printf("\n%zu studies, %zu after a warm-up of %zu; the %zu after it against the last %zu:\n", n, n - w, w, k, k);
    const double rss = median(early([](const Sample &s) { return s.rssMiB; }));
    check("resident memory (median)", rss, median(late([](const Sample &s) { return s.rssMiB; })), 0.1 * rss, "MiB");
    check("heap in use (median)", median(early([](const Sample &s) { return s.heapMiB; })), median(late([](const Sample &s) { return s.heapMiB; })), 4,
          "MiB");
    check("file descriptors (largest)", maxOf(early([](const Sample &s) { return s.fds; })), maxOf(late([](const Sample &s) { return s.fds; })), 2, "");
    check("threads (largest)", maxOf(early([](const Sample &s) { return s.threads; })), maxOf(late([](const Sample &s) { return s.threads; })), 2, "");
    check("widgets (largest)", maxOf(early([](const Sample &s) { return s.widgets; })), maxOf(late([](const Sample &s) { return s.widgets; })), 0, "");
    const double index = maxOf(early([](const Sample &s) { return s.indexMiB; }));
    check("cache index on disk (largest)", index, maxOf(late([](const Sample &s) { return s.indexMiB; })), std::max(0.5, 0.1 * index), "MiB");
    // The index's write-ahead log grows to the checkpoint's threshold (16 MiB) and is written again from its start.
    check("cache index's log (largest, bounded)", 16, maxOf(late([](const Sample &s) { return s.logMiB; })), 1, "MiB");
    // The cache's blobs vary with which studies the budget holds (a radiograph is 10 MiB, an MR slice 0.1 MiB); its
    // bytes stay within the budget.
    const double blobs = maxOf(early([](const Sample &s) { return s.cacheBlobs; }));
    check("cache blobs (largest)", blobs, maxOf(late([](const Sample &s) { return s.cacheBlobs; })), 0.25 * blobs, "");
    check("cache on disk (largest, within its budget)", p.value(QStringLiteral("disk-budget-mib")).toDouble(),
          maxOf(late([](const Sample &s) { return s.cacheMiB; })), 0, "MiB");
    const double stall = median(early([](const Sample &s) { return s.worstStallMs; }));
    check("a study's longest stall (median)", stall, median(late([](const Sample &s) { return s.worstStallMs; })), 0.25 * stall + 2, "ms");
    const QMap<QString, int> widgetsNow = widgetsByClass();
    for (auto it = widgetsNow.begin(); it != widgetsNow.end(); ++it) {
        if (it.value() > widgetsAtWarmUp.value(it.key()))
            std::printf("  widgets of class %s: %d after the warm-up, %d at the end\n", qPrintable(it.key()), widgetsAtWarmUp.value(it.key()), it.value());
    }
    if (qEnvironmentVariableIsSet("SOAK_SMAPS")) {  // diagnosis: the mappings that hold anonymous memory
        QFile smaps(QStringLiteral("/proc/self/smaps"));
        if (smaps.open(QIODevice::ReadOnly)) {
            QByteArray head;
            for (const QByteArray &line : smaps.readAll().split('\n')) {
                if (!line.isEmpty() && !line.contains(':'))
                    continue;
                if (line.contains('-') && !line.startsWith("Anonymous") && line.indexOf(' ') > line.indexOf('-'))
                    head = line;
                else if (line.startsWith("Anonymous:") && line.mid(10).trimmed().split(' ').value(0).toLongLong() >= 1024)
                    std::fprintf(stderr, "anon %s: %s\n", line.mid(10).trimmed().constData(), head.constData());
            }
        }
    }
#if defined(__GLIBC__)
    if (qEnvironmentVariableIsSet("SOAK_MALLOC_INFO"))
        malloc_info(0, stderr);  // every arena, as glibc sees it
#endif
    if (auto *transfers = window.findChild<TransfersPanel *>()) {
        std::printf("transfers panel: %d rows at the end\n", transfers->count());
        for (int i = 0; i < transfers->count(); ++i)
            std::fprintf(stderr, "transfer row %d: %s — %s\n", i, qPrintable(transfers->title(i)), qPrintable(transfers->details(i)));
    }
    std::printf("heap left behind per study after the warm-up (least squares): %.1f KiB\n", slopeKiB);
    std::printf("%s\n", grew ? "something grew over the day" : "flat over the day: no leak, no stall growing");
    return grew ? 1 : 0;
}
