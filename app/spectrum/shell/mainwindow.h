// SPDX-License-Identifier: Apache-2.0
#pragma once
// The main window: the study list in the first tab, one tab per open study.

#include "viewer/imageexport.h"
#include "viewport/imageviewport.h"
#include "shell/hangingprotocols.h"
#include "shell/workstation.h"

#include "spectrum/stores/reading/hangingprotocol.h"

#include "spectrum/imaging/documents/deidentify.h"

#include <QMainWindow>

#include <optional>
#include <QSet>

class QDockWidget;
class QMenu;
class QSettings;
class QLabel;
class QTabWidget;
class QTableView;

namespace spectrum {

class FilterPanel;
class IdleLock;
class FindingsPanel;
class TagViewer;
class TransfersPanel;
class StudyBrowser;
class StudyViewer;
class StudyStreamer;
struct FoundStudy;
struct ExportSummary;
template <typename T>
class ResultJob;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(Workstation *workstation, QWidget *parent = nullptr);

    /// Opens the study with this UID or demo alias from the cache: its instances (and those of its most recent
    /// comparable prior here, for the hanging protocol) are read off the GUI thread, then its viewer comes through
    /// studyOpened(). Returns the viewer when the study is open already (its tab made current), else nullptr —
    /// also when the cache does not list it (problems go to the status bar).
    StudyViewer *openStudy(const QString &uidOrAlias);
    /// Opens a study from a configured store while it arrives: asks the store what it holds, opens a viewer on
    /// it, and fetches into the cache what is in view first (StudyStreamer). The viewer arrives through
    /// studyOpened(); problems go to the status bar.
    /// `fallbacks`: the other stores holding it, nearest first, for when `store` stops answering
    /// (StudyStreamer::setFallbacks()).
    void openRemoteStudy(const QString &store, const QString &studyUid, const QStringList &fallbacks = {}, int expectedInstances = 0);
    /// A study the browser found: from the cache when all of it is there, else from the first store holding it.
    void openFound(const FoundStudy &study);
    /// Fetches studies into the cache for later reading (the batch workflow), each from the first store holding
    /// it, shown in the transfers panel.
    void prefetch(const QList<FoundStudy> &studies);
    /// Cache usage and budget; clearing it.
    void showCacheSettings();
    /// Opens study `index` of the viewer's list of the patient's other studies beside the current one: from the
    /// cache when it is all there, else streamed from the nearest store holding it (mainwindowcompare.cpp).
    void openPrior(StudyViewer *viewer, int index);
    /// The most recent comparable prior of the study in view, beside it (Shift+P); false when there is none yet.
    bool openMostRecentComparable();

    /// The hanging protocols: applied when a study opens, stepped, saved, edited (hangingprotocols.h).
    HangingProtocols *hangingProtocols() const { return m_hangingProtocols; }
    StudyViewer *currentViewer() const;
    StudyBrowser *browser() const { return m_browser; }
    FilterPanel *filterPanel() const { return m_filters; }
    TagViewer *tagViewer() const { return m_tags; }
    /// View ▸ DICOM tags: the dock that lists the elements of the image in view.
    QDockWidget *tagDock() const { return m_tagDock; }
    /// View ▸ Findings: the study in view's findings (FindingsPanel).
    FindingsPanel *findingsPanel() const { return m_findingsPanel; }
    QDockWidget *findingsDock() const { return m_findingsDock; }
    TransfersPanel *transfersPanel() const { return m_transfers; }
    void showFilterPanel();

    /// The window's geometry and docks, the filter chain and whether it is on, the tool, the cine rate.
    /// "Send to archive": the image in view (or its whole series) through the filters in use, as a new derived
    /// series, to `store`. Progress in the status bar; sendFinished() with the outcome.
    void sendToArchive(const QString &store, bool wholeSeries);

    /// File ▸ Save findings: the findings drawn or edited on the study in view (and its priors beside it), measured
    /// on the images as stored, as one Measurement Report (DICOM SR, TID 1500) per study; the key images marked as a
    /// Key Object Selection; the series in view as a presentation state — kept in the cache and sent to the archive
    /// the study came from. findingsSaved() with the outcome.
    void saveFindings();
    /// The same to store `store` (empty or the local store: the cache alone).
    void saveFindingsTo(const QString &store);
    /// File ▸ Save view: the series in view as it is shown (window, zoom and pan, rotation and flip, its findings)
    /// as a presentation state alone. Save findings keeps it too, with the findings.
    void saveView();
    /// Who the reports name as their observer: the reader signed in to the hospital's identity provider, else the
    /// name from the settings, else the login.
    QString observerName() const;
    /// File ▸ Sign in…: the browser opens on the hospital's identity provider of each store that signs in ("auth":
    /// "oidc") and is not signed in yet; the status bar names the reader once they are.
    void signIn();
    /// File ▸ Sign out: every sign-in revoked at its provider and forgotten here.
    void signOut();
    /// "Signed in as Dr. Anna Smith" (empty: no one is), as the status bar shows it.
    QString signedInText() const;
    /// The reading room's lock (the hospital's "signIn": {"idleMinutes": N}): after that long without input every
    /// reader is signed out (revoked, audited) and the window covered; the same reader signing in again finds it as it
    /// was, another reader first closes what the first had open. Null when the policy sets no idle time.
    IdleLock *idleLock() const { return m_idleLock; }

    /// File ▸ Export images: asks what (the image or series in view), as what (PNG, JPEG, MP4) and whether with the
    /// overlay, then exportImagesTo().
    void exportImages();
    /// Exports from the study in view (imageexport.h); imagesExported() with the outcome.
    void exportImagesTo(const ImageExportOptions &options);
    /// File ▸ Export de-identified copy: asks the folder and options, then exportDeidentifiedTo().
    void exportDeidentified();
    /// The study in view (all of it in the cache), de-identified into `folder` (deidentify.h) — or, with `store`, sent
    /// there; what may still identify the patient (burned-in text, free text kept) is said after.
    /// deidentifiedExported() with the outcome.
    void exportDeidentifiedTo(const QString &folder, const DeidentifyOptions &options, const QString &store = QString());
    /// Warnings that would open a dialog go to the status bar only (tests, scripts).
    void setQuietDialogs(bool quiet) { m_quietDialogs = quiet; }

    /// Imports DICOM files, folders or a DICOMDIR's folder into the cache (File ▸ Import, drops on the window);
    /// progress and outcome in the status bar; a single study imported opens.
    void importFiles(const QStringList &paths);

    /// Help ▸ Mouse and keys: the mouse's bindings and every key of every menu, as HTML.
    QString keyBindingsHtml() const;

    void saveSettings(QSettings &settings) const;
    /// The filter presets alone (written as soon as one is saved, not only at exit).
    void savePresets(QSettings &settings) const;
    /// A chain for the studies opened from now on (`--filter` on the command line); the panel's problem() says
    /// when a spec is wrong, and then none is used.
    void setStartFilters(const QStringList &specs);
    void restoreSettings(QSettings &settings);
    QTableView *studyTable() const;

public:
    /// A window the reader saved on a number key (6–9), with the unit of the values it was set on.
    struct ReaderWindow
    {
        QString name;
        double center = 0, width = 1;
        QString unit;
    };
    static std::optional<ReaderWindow> readerWindow(int slot);
    static void saveReaderWindow(int slot, const ReaderWindow &window);

Q_SIGNALS:
    void studyOpened(spectrum::StudyViewer *viewer);
    /// A send to an archive ended: `stored` instances stored, or why not (error set).
    void sendFinished(int stored, int failed, const spectrum::Error &error);
    /// File ▸ Save findings (or Save view) ended: `reports` documents stored, or why not.
    void findingsSaved(int reports, const spectrum::Error &error);
    /// An image export ended: `files` written, or why not.
    void imagesExported(int files, const spectrum::Error &error);
    /// A de-identified export ended: `instances` written, or why not.
    void deidentifiedExported(int instances, const spectrum::Error &error);
    /// An import started here ended.
    void importFinished(const spectrum::ImportSummary &summary);

protected:
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    /// Saves the findings and key images (with `findings`) and the view of the series in view.
    void saveDocuments(const QString &store, bool findings);
    void onStudiesChanged();
    /// The status bar's line on the cache: its size, and whether the reading room shares it.
    void updateCacheLabel();
    /// Opens the study an import brought, once the study list has it.
    void openImportedWhenListed();
    /// Asks which store and what to send, then sends.
    void chooseAndSend();
    void closeTab(int index);
    /// Adds a viewer's tab and wires it up.
    StudyViewer *addViewer(StudyViewer *viewer, const StudySummary &study);
    /// The tag viewer to the image in view, while it is shown.
    void showTagsOfImageInView();
    /// The filter panel to `viewer`'s own chain (none: disabled and empty).
    void showFiltersOf(StudyViewer *viewer);
    /// Looks for the patient's other studies in the cache and every store, for the viewer's priors list.
    void findPriorsFor(StudyViewer *viewer);
    /// The prefetcher told what the reader waits for and what must stay in the cache; its priors shown in the
    /// transfers panel.
    void configurePrefetcher();
    /// A study arriving, or a send, followed by the workstation's job tracker (the transfers panel, the status bar).
    void trackStudy(StudyStreamer *streamer, const QString &title);
    void trackSend(ResultJob<ExportSummary> *job, const QString &title);
    /// The menus and their keys (mainwindowmenus.cpp).
    void buildMenus();
    /// The comparison entries of the View menu (layouts, links, priors).
    void addCompareActions(QMenu *view);
    /// The pane's menu (a right-click): tools, window/level, layout, maximise, reset, export, send.
    void showPaneMenu(QPoint globalPosition);
    /// The protocol entries of the View menu.
    /// openStudy() of a study the cache lists (Workstation::studies()): the open viewer, or nullptr and the
    /// viewer through studyOpened() once the instances are read.
    StudyViewer *openFromCache(const StudySummary &study);
    /// Series that reached the cache since `viewer`'s study was opened join it (read from the cache).
    /// Whether the cache's `listed` holds a series or images `shown` (what a viewer shows) does not.
    static bool hasMoreThan(const StudySummary &listed, const StudySummary &shown);
    /// Adds to `viewer` what the cache's list of its study holds and it does not (addArrivedSeries).
    void followCache(StudyViewer *viewer);
    void addArrivedSeries(StudyViewer *viewer, const StudySummary &listed);
    /// The open viewer of this study and patient, if any.
    StudyViewer *viewerOf(const QString &studyUid, const QString &patientId) const;

    Workstation *m_workstation;
    StudyBrowser *m_browser;
    FilterPanel *m_filters;
    TagViewer *m_tags;
    QDockWidget *m_tagDock = nullptr;
    FindingsPanel *m_findingsPanel = nullptr;
    bool m_quietDialogs = false;
    QSet<QString> m_opening;  ///< "study UID\npatient ID" of the studies whose instances are being read to open
    QDockWidget *m_findingsDock = nullptr;
    TransfersPanel *m_transfers;
    QLabel *m_transferLabel;
    QDockWidget *m_filterDock = nullptr;
    QDockWidget *m_transferDock = nullptr;
    QTabWidget *m_tabs;
    QLabel *m_cacheLabel;
    QLabel *m_signInLabel = nullptr;
    void showSignIn();
    /// The hospital's sign-in policy for this window, once the workstation's stores are known.
    void applySignInPolicy();
    /// The idle time ran out: every reader signed out, the window covered.
    void lockForIdle();
    /// The cover's words and buttons for who is signed in now; uncovered when it is the reader who was.
    void updateLock();
    /// Another reader signed in at the cover: the studies open before closed (their unsaved findings with them, as
    /// the cover said), the window uncovered.
    void closeStudiesAndUnlock();
    /// Every sign-in ended (revoked), counted until they have: the cover decides nothing before.
    void endSignIns();
    /// A new reader goes on: the searches and finished transfers of the one before are cleared.
    void forgetPreviousReader();
    /// Adds whoever holds a sign-in now to the readers of what is open.
    void rememberReaders();
    IdleLock *m_idleLock = nullptr;
    QStringList m_lockedReaders;      ///< the readers of what is open: signed in since the window was last uncovered
    QStringList m_lockedReaderNames;  ///< and their names, for the cover
    int m_lockSignOuts = 0;           ///< sign-outs of the lock still on their way
    int m_signInRound = 0;            ///< a new one at each sign-out: a sign-in sequence of an earlier one stops
    QAction *m_cineAction = nullptr;
    QAction *m_mprAction = nullptr;  ///< View ▸ MPR, checked while the current study shows it
    QAction *m_smoothAction = nullptr;
    ViewportTool m_tool = ViewportTool::pan();  ///< given to every study opened
    int m_cineRate = 15;                                    ///< given to every study opened
    QList<QAction *> m_toolActions;
    QStringList m_startChain;
    QString m_openAfterImport;  ///< the study an import brought, opened once listed
    HangingProtocols *m_hangingProtocols = nullptr;
};

} // namespace spectrum
