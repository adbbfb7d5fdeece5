// SPDX-License-Identifier: Apache-2.0
// spectrum: the workstation. Wiring only — the Workstation, the windows and the libraries do the work.

#include "viewer/filterpanel.h"
#include "shell/mainwindow.h"
#include "volumes/mprview.h"
#include "viewer/studyviewer.h"
#include "shell/theme.h"
#include "shell/workstation.h"

#include "spectrum/core/heaptrim.h"
#include "spectrum/stores/reading/savedsearch.h"

#include "spectrum/core/audit/auditevents.h"
#include "spectrum/core/programlog.h"
#include "spectrum/core/settings.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/transfer/audit/audittrail.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QScreen>
#include <QMouseEvent>
#include <QSettings>
#include <QAction>
#include <QTimer>

#include <optional>

#include <cstdio>

using namespace spectrum;

namespace {

bool hasDisplay()
{
    return !qEnvironmentVariableIsEmpty("DISPLAY") || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")
        || !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

// --screenshot: waits until what was asked for is on screen, saves the window, and quits.
class ScreenshotTaker : public QObject
{
public:
    ScreenshotTaker(MainWindow *window, Workstation *ws, QString file, QString study, int slice, QString keys, bool measure,
                    std::optional<QString> saveFindings)
        : m_window(window), m_workstation(ws), m_file(std::move(file)), m_study(std::move(study)), m_slice(slice),
          m_keys(std::move(keys)), m_measure(measure), m_saveFindings(std::move(saveFindings))
    {
        connect(ws, &Workstation::studiesChanged, this, &ScreenshotTaker::check);
        connect(ws, &Workstation::seedingFinished, this, &ScreenshotTaker::check);
        QTimer::singleShot(120000, this, [this] { finish(tr("timed out waiting for the image")); });
        QTimer::singleShot(0, this, &ScreenshotTaker::check);
    }

private:
    void check()
    {
        if (m_opened || m_workstation->studies().isEmpty())
            return;
        if (m_study.isEmpty()) {
            if (!m_workstation->isSeeding())
                QTimer::singleShot(200, this, [this] { save(); });  // let the table lay out
            return;
        }
        if (!m_workstation->findStudy(m_study)) {
            if (!m_workstation->isSeeding())
                finish(tr("no study '%1' in the local store").arg(m_study));
            return;
        }
        if (m_workstation->isSeeding())
            return;  // open it once it is complete
        m_opened = true;
        // The viewer comes once the study's instances are read from the cache (at once when it is open already).
        connect(m_window, &MainWindow::studyOpened, this, &ScreenshotTaker::watch);
        if (StudyViewer *open = m_window->openStudy(m_study))
            watch(open);
    }

    void watch(StudyViewer *viewer)
    {
        if (m_watched)
            return;
        m_watched = true;
        connect(viewer, &StudyViewer::imageShown, this, [this, viewer](int index) {
            const int wanted = m_slice > 0 ? std::min(m_slice, viewer->sliceCount()) - 1 : index;
            if (index == wanted && !m_prepared) {
                m_prepared = true;  // the slice may be shown again (refined as it arrives): prepared once
                QTimer::singleShot(100, this, [this, viewer] {
                    prepare(viewer);
                    if (m_saveFindings) {
                        // As File ▸ Save findings does; the picture once the store has them.
                        connect(m_window, &MainWindow::findingsSaved, this, [this](int reports, const Error &e) {
                            if (e.isError())
                                return finish(tr("findings not saved: %1").arg(e.toString()));
                            std::fprintf(stderr, "spectrum: findings saved: %d document(s)\n", reports);
                            QTimer::singleShot(400, this, [this] { save(); });
                        });
                        m_window->saveFindingsTo(*m_saveFindings == QLatin1String("local") ? QString() : *m_saveFindings);
                        return;
                    }
                    QTimer::singleShot(400, this, [this, viewer] { saveWhenReady(viewer); });  // new panes lay out and load
                });
            } else if (index != wanted) {
                viewer->showSlice(wanted);
            }
        });
    }

    /// What the user would have done before looking: keys pressed, and with --measure a distance across the
    /// image, an ellipse ROI in its middle, an angle and an arrow with a note.
    void prepare(StudyViewer *viewer)
    {
        const QList<QAction *> actions = m_window->findChildren<QAction *>();
        for (const QString &key : m_keys.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
            const auto it = std::find_if(actions.begin(), actions.end(), [&](QAction *a) { return a->shortcut() == QKeySequence(key); });
            if (it != actions.end())
                (*it)->trigger();
            else
                std::fprintf(stderr, "spectrum: no action on key %s\n", qPrintable(key));
        }
        ImageViewport *vp = viewer->viewport();
        if (m_measure && vp->hasImage()) {
            const double w = vp->image().info.columns, h = vp->image().info.rows;
            vp->findingsLayer()->addMeasurement(Annotation{AnnotationKind::Distance, {QPointF(w * 0.2, h * 0.75), QPointF(w * 0.8, h * 0.75)}, QString(), QString()});
            vp->findingsLayer()->addMeasurement(Annotation{AnnotationKind::Ellipse, {QPointF(w * 0.42, h * 0.4), QPointF(w * 0.58, h * 0.52)}, QString(), QString()});
            vp->findingsLayer()->addMeasurement(Annotation{AnnotationKind::Angle, {QPointF(w * 0.15, h * 0.2), QPointF(w * 0.25, h * 0.35), QPointF(w * 0.35, h * 0.2)}, QString(), QString()});
            vp->findingsLayer()->addMeasurement(Annotation{AnnotationKind::Arrow, {QPointF(w * 0.6, h * 0.3), QPointF(w * 0.75, h * 0.15)}, tr("lesion, compare with prior"), QString()});
        }
        vp->setFocus();
        QMouseEvent move(QEvent::MouseMove, QPointF(vp->width() * 0.55, vp->height() * 0.45), vp->mapToGlobal(QPointF(vp->width() * 0.55, vp->height() * 0.45)),
                         Qt::NoButton, Qt::NoButton, Qt::NoModifier);
        QCoreApplication::sendEvent(vp, &move);  // a pixel value read out, as under a real cursor
    }

    /// Saves once an MPR view (when shown) has its volume in and every plane cut.
    void saveWhenReady(StudyViewer *viewer)
    {
        MprView *mpr = viewer->mprView();
        if (mpr && (!mpr->mprVolume()->isComplete() || mpr->cutsPending() > 0) && mpr->mprVolume()->refusal().isEmpty()) {
            QTimer::singleShot(100, this, [this, viewer] { saveWhenReady(viewer); });
            return;
        }
        QTimer::singleShot(mpr ? 200 : 0, this, [this] { save(); });
    }

    void save()
    {
        if (m_done)
            return;
        const QPixmap shot = m_window->grab();
        finish(shot.save(m_file) ? QString() : tr("cannot write %1").arg(m_file));
    }

    void finish(const QString &error)
    {
        if (m_done)
            return;
        m_done = true;
        if (!error.isEmpty())
            std::fprintf(stderr, "spectrum: screenshot failed: %s\n", qPrintable(error));
        else
            std::printf("%s\n", qPrintable(m_file));
        QCoreApplication::exit(error.isEmpty() ? 0 : 1);
    }

    MainWindow *m_window;
    Workstation *m_workstation;
    QString m_file, m_study;
    int m_slice;
    QString m_keys;
    bool m_measure;
    std::optional<QString> m_saveFindings;
    bool m_opened = false;
    bool m_watched = false;
    bool m_prepared = false;
    bool m_done = false;
};

} // namespace

int main(int argc, char **argv)
{
    keepHeapReturnable();  // before the heap grows: a study closed gives its memory back (heaptrim.h)
    // A screenshot, --help and --version need no screen.
    const bool wantsScreenshot = [&] {
        for (int i = 1; i < argc; ++i) {
            for (const char *headless : {"--screenshot", "--help", "-h", "--help-all", "--version", "-v"}) {
                if (qstrcmp(argv[i], headless) == 0)
                    return true;
            }
        }
        return false;
    }();
    if (!hasDisplay()) {
        if (!wantsScreenshot) {
            std::fprintf(stderr,
                         "spectrum: no display found (DISPLAY and WAYLAND_DISPLAY are unset).\n"
                         "Run it headless instead:\n"
                         "  QT_QPA_PLATFORM=offscreen %s --screenshot spectrum.png [--open demo-ct]\n"
                         "or in a virtual display:\n"
                         "  xvfb-run -a %s\n", argv[0], argv[0]);
            return 2;
        }
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Spectrum"));  // settings in ~/.config/Spectrum/Spectrum.conf
    QApplication::setApplicationName(QStringLiteral("Spectrum"));
    QApplication::setApplicationVersion(QStringLiteral(SPECTRUM_VERSION));
    QGuiApplication::setDesktopFileName(QStringLiteral("org.spectrum.Spectrum"));  // its window is matched to its desktop entry
    applyReadingRoomTheme(app);

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Spectrum, a diagnostic workstation: finds studies in the hospital's archives (DICOMweb, DIMSE, blob servers, "
        "folders), streams them in while showing them, keeps a local disk cache, filters images while they arrive, and "
        "sends derived images back. Stores are configured in ~/.config/Spectrum/stores.json (spectrum-cli stores, or "
        "File > Stores in the window)."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOption({QStringLiteral("screenshot"), QStringLiteral("Render the main window to FILE (PNG) and exit."), QStringLiteral("FILE")});
    parser.addOption({QStringLiteral("open"), QStringLiteral("Open this study: a Study Instance UID or demo-ct, demo-cr, demo-mr."), QStringLiteral("STUDY")});
    parser.addOption({QStringLiteral("slice"), QStringLiteral("With --open: show this slice (1-based)."), QStringLiteral("N")});
    parser.addOption({QStringLiteral("keys"), QStringLiteral("With --screenshot and --open: press these keys first, e.g. \"2 ]\" (lung window, rotated)."), QStringLiteral("KEYS")});
    parser.addOption({QStringLiteral("measure"), QStringLiteral("With --screenshot and --open: show a distance and an ellipse ROI on the image.")});
    parser.addOption({QStringLiteral("save-findings"), QStringLiteral("With --screenshot and --measure: save what was drawn as File > Save findings does, to this store (\"local\": the cache alone)."), QStringLiteral("STORE")});
    parser.addOption({QStringLiteral("filter"), QStringLiteral("Start with this filter on the images, e.g. gaussian:sigma=2 (repeat for a chain)."), QStringLiteral("SPEC")});
    parser.addOption({QStringLiteral("cache-dir"), QStringLiteral("The local cache folder (default: $SPECTRUM_CACHE_DIR or the user's data folder)."), QStringLiteral("DIR")});
    parser.addOption({QStringLiteral("no-demo"), QStringLiteral("Do not seed the demo studies into an empty cache.")});
    parser.addOption({QStringLiteral("no-listen"), QStringLiteral("Do not start the Storage SCP even when the store configuration names one.")});
    addProgramLogOptions(parser);
    parser.process(app);
    {
        Result<ProgramLogOptions> log = programLogOptions(parser, QStringLiteral("spectrum"));
        if (!log.isOk()) {
            std::fprintf(stderr, "spectrum: %s\n", qPrintable(log.error().message()));
            return 2;
        }
        installProgramLog(log.value());  // a log file that cannot be written is said on stderr; the program runs
    }

    Workstation::Options options;
    options.cacheDirectory = parser.isSet(QStringLiteral("cache-dir")) ? parser.value(QStringLiteral("cache-dir"))
                                                                       : WorkstationPaths::cacheDirectory();
    options.diskBudgetBytes = WorkstationPaths::diskBudgetBytes();
    options.seedDemoWhenEmpty = !parser.isSet(QStringLiteral("no-demo"));
    options.demo.ctSlabSlices = 4;
    options.demo.ctLocalizer = true;  // and the lateral scout it was planned on: the reference lines' image  // the CT in thin (1.25 mm) and thick (5 mm) slices, as scanners reconstruct it
    // A workstation its IT has configured (a store configuration exists) listens for pushed studies.
    const QString configPath = StoreConfigFile::defaultPath();
    {
        Result<StoreConfigFile> config = StoreConfigFile::load(configPath);  // a missing file: no store yet
        if (config.isOk()) {
            options.stores = config.value();
            // Configured: by the user's file, or by the hospital's for every workstation.
            const bool configured = QFile::exists(configPath) || !config.value().systemFile().isEmpty();
            if (configured && !parser.isSet(QStringLiteral("no-listen")) && !parser.isSet(QStringLiteral("screenshot"))) {
                options.storageAeTitle = config.value().workstation.aeTitle;
                options.storagePort = quint16(config.value().workstation.storagePort);
            }
            // Follows the file: a store added from the command line appears; the Storage SCP starts once a
            // configuration exists and follows its AE title and port.
            options.storesFile = configPath;
            options.listenWhenConfigured = !parser.isSet(QStringLiteral("no-listen")) && !parser.isSet(QStringLiteral("screenshot"));
        } else {
            std::fprintf(stderr, "spectrum: %s\n", qPrintable(config.error().toString()));
            // The hospital's sign-in policy holds even when the user's file cannot be read.
            if (Result<StoreConfigFile> hospital = StoreConfigFile::load(StoreConfigFile::systemPath()); hospital.isOk())
                options.stores.signIn = hospital.value().signIn;
        }
    }
    // The hospital's audit trail (the configuration's "audit"): nothing of a patient's is read unaudited — a trail
    // that is configured and cannot keep its messages stops the program here.
    Result<AuditConfig> auditConfig = auditConfigToFollow(configPath);
    Result<std::unique_ptr<AuditTrail>> auditTrail = auditConfig.isOk() ? startAuditTrail(auditConfig.value(), QStringLiteral("spectrum"), 1)
                                                                        : Result<std::unique_ptr<AuditTrail>>(auditConfig.error());
    if (!auditTrail.isOk()) {
        std::fprintf(stderr, "spectrum: the audit trail cannot be kept, so nothing is opened: %s\n", qPrintable(auditTrail.error().message()));
        return 1;
    }
    audit(auditevents::applicationActivity(true));
    // Saved searches beside the settings (~/.config/Spectrum/saved-searches.json); none until one is saved.
    options.searchesFile = SavedSearches::defaultPath();
    if (Result<SavedSearches> searches = SavedSearches::load(options.searchesFile); searches.isOk()) {
        options.searches = searches.value();
    } else {
        options.searchesFileError = searches.error();
        std::fprintf(stderr, "spectrum: %s (no saved searches until it is mended)\n", qPrintable(searches.error().message()));
    }
    if (parser.isSet(QStringLiteral("screenshot")))
        options.searches = SavedSearches();  // a picture runs nothing in the background
    Workstation workstation(options);
    QObject::connect(&workstation, &Workstation::startFailed, &app, [](const Error &e) {
        std::fprintf(stderr, "spectrum: cannot open the local cache: %s\n", qPrintable(e.toString()));
        QCoreApplication::exit(1);
    });
    workstation.start();

    MainWindow window(&workstation);
    QSettings settings;  // ~/.config/Spectrum/Spectrum.conf: the window, the filters, the tool — as last left
    // Hanging protocols beside it (~/.config/Spectrum/hanging-protocols.json); the built-in ones until saved.
    if (Error e = window.hangingProtocols()->loadFile(QFileInfo(settings.fileName()).dir().filePath(QStringLiteral("hanging-protocols.json"))); e.isError())
        std::fprintf(stderr, "spectrum: %s (the built-in hanging protocols are used)\n", qPrintable(e.message()));
    if (!parser.isSet(QStringLiteral("screenshot")))
        window.restoreSettings(settings);
    if (!parser.isSet(QStringLiteral("screenshot")))
        QObject::connect(window.filterPanel(), &FilterPanel::presetsChanged, &window, [&window, &settings] {
            window.savePresets(settings);
            settings.sync();
        });
    if (parser.isSet(QStringLiteral("filter"))) {
        window.setStartFilters(parser.values(QStringLiteral("filter")));
        if (!window.filterPanel()->problem().isEmpty()) {
            std::fprintf(stderr, "spectrum: %s\n", qPrintable(window.filterPanel()->problem()));
            return 2;
        }
        window.showFilterPanel();
    }
    std::unique_ptr<ScreenshotTaker> screenshot;
    if (parser.isSet(QStringLiteral("screenshot"))) {
        window.resize(1400, 900);
        window.show();
        screenshot = std::make_unique<ScreenshotTaker>(&window, &workstation, parser.value(QStringLiteral("screenshot")),
                                                       parser.value(QStringLiteral("open")),
                                                       parser.value(QStringLiteral("slice")).toInt(), parser.value(QStringLiteral("keys")),
                                                       parser.isSet(QStringLiteral("measure")),
                                                       parser.isSet(QStringLiteral("save-findings")) ? std::optional<QString>(parser.value(QStringLiteral("save-findings")))
                                                                                                     : std::nullopt);
    } else {
        window.show();
        if (parser.isSet(QStringLiteral("open"))) {
            // Opens the study the first time the list holds it complete.
            const QString study = parser.value(QStringLiteral("open"));
            auto opened = std::make_shared<bool>(false);
            QObject::connect(&workstation, &Workstation::studiesChanged, &window, [&window, &workstation, study, opened] {
                if (!*opened && !workstation.isSeeding() && workstation.findStudy(study)) {
                    *opened = true;
                    window.openStudy(study);  // the viewer comes once its instances are read
                }
            });
        }
    }
    const int status = app.exec();
    if (!parser.isSet(QStringLiteral("screenshot")))
        window.saveSettings(settings);
    audit(auditevents::applicationActivity(false));
    if (auditTrail.value())
        auditTrail.value()->flush(3000);  // what the repository has not taken yet stays in the spool, for the next start
    return status;
}
