// SPDX-License-Identifier: Apache-2.0
#pragma once
// StudyViewer: one open study — its series (with thumbnails) on the left, above the patient's other studies
// (PriorsPanel); on the right a grid of panes (any rows × columns up to 4 × 4), each showing a series of the
// study or of a prior opened beside it; drag a series onto a pane to show it there. The keys, the menus and this
// class's slice calls act on the active pane (the one last clicked or scrolled); with linked scrolling on, the
// other panes follow it through their stacks — in the same frame of reference by place, across studies by
// patient position in the same plane plus an offset the reader sets (Shift+wheel). Window/level and zoom can be
// linked too. When a study streams in from an archive, its streamer is told where the reader looks, and every
// pane shows its slices as they arrive.

#include "findings/findingsloader.h"
#include "findings/findingsmodel.h"
#include "viewport/segmentationoverlay.h"
#include "viewer/cineplayer.h"
#include "viewer/panelinks.h"
#include "viewer/panesettings.h"
#include "viewer/studycomparison.h"
#include "viewer/seriespane.h"

#include "spectrum/imaging/filters/bandprocessor.h"
#include "spectrum/stores/reading/hangingprotocol.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QHash>
#include <QImage>
#include <QPointer>
#include <QSet>
#include <QTimer>
#include <QWidget>

#include <memory>

class QGridLayout;
class QListWidget;
class QStackedWidget;

namespace spectrum {

/// A key image series: the images a Key Object Selection names, shown as a series of their own.
inline bool isKeyImageSeries(const SeriesSummary &s)
{
    return s.seriesInstanceUid.startsWith(QLatin1String("key:"));
}

/// Whether series `index` of `study` is a key image series (a selection's images, after the study's own).
inline bool isKeyImageSeries(const StudySummary &study, int index)
{
    return index >= 0 && index < study.series.size() && isKeyImageSeries(study.series[index]);
}

class MprView;
class MprVolume;
class PriorsPanel;
class StudyStreamer;

class StudyViewer : public QWidget
{
    Q_OBJECT
public:
    /// `streamer`: the study is still arriving from a remote store (the viewer tells it where the user looks,
    /// and shows each slice once it is in the cache); null for a study already in `store`.
    /// `images`: the workstation's decoded images in memory, shared by every pane (it outlives the viewer).
    StudyViewer(BlobStore *store, ImageMemoryCache *images, const StudySummary &study, StudyStreamer *streamer = nullptr, QWidget *parent = nullptr);
    ~StudyViewer() override;

    /// The study the viewer was opened on (the one being read).
    const StudySummary &study() const { return m_study; }
    /// The study the active pane shows a series of: study(), or a prior opened beside it.
    const StudySummary &activeStudy() const;
    /// The whole study, replacing the first look the viewer opened with (StudyStreamer::firstLook): each pane
    /// keeps the image it shows, at its place in the whole list. Refused (false, errorOccurred, nothing shown)
    /// when it names another study or another patient.
    bool setStudy(const StudySummary &study);
    /// The active pane and what it shows.
    SeriesPane *activePane() const { return m_active; }
    int seriesIndex() const { return m_active->seriesIndex(); }
    int sliceIndex() const { return m_active->sliceIndex(); }
    int sliceCount() const { return m_active->sliceCount(); }
    ImageViewport *viewport() const { return m_active->viewport(); }
    /// The viewport the view keys and the drawing tools act on: viewport(), or in MPR the active plane's (whose
    /// images no instance holds: findings, key images and exports stay with viewport()).
    ImageViewport *toolViewport() const;
    /// What every pane shows its images with: filters, segmentations, magnification, the tool (panesettings.h).
    PaneSettings *settings() const { return m_settings; }
    /// The series' thumbnail (its middle image, once here); null until then.
    QImage thumbnail(int series) const { return m_thumbnails.value(series); }
    StudyStreamer *streamer() const { return m_streamer; }
    /// Its tab closes: its decoders (the study's and the priors' beside it) load nothing more, and keep nothing of
    /// `forgotten` (what the memory cache forgets now: StudyDecoder::retire). The viewer is deleted after.
    void retire(const QSet<QString> &forgotten);

    /// Layout: `rows` × `columns` panes, each 1…4. New panes show the series not yet on screen, in order; panes
    /// beyond the new grid go.
    void setGrid(int rows, int columns);
    int gridRows() const { return m_rows; }
    int gridColumns() const { return m_columns; }

    // ---- The patient's other studies and the layout (studycomparison.cpp, studyviewerlayout.cpp) ----
    /// The list of the patient's other studies beside the series (filled by whoever searches for them).
    PriorsPanel *priorsPanel() const { return m_priors; }
    /// The patient's other studies open beside the one being read (studycomparison.h).
    StudyComparison *comparison() const { return m_comparison; }
    /// Shows series `series` of the open study `studyKey` (PriorsPanel::studyKey; the current study's too) in `pane`.
    bool showSeriesOf(SeriesPane *pane, const QString &studyKey, int series);
    /// Lays the viewer out as a hanging protocol's plan says: the grid, each pane's series — of the current
    /// study or of `prior` (opened beside it; `priorStreamer` while it arrives) — its window, and the links.
    void applyPlan(const HangingPlan &plan, const StudySummary *prior = nullptr, StudyStreamer *priorStreamer = nullptr);
    /// The protocol the layout came from (empty: none, or the reader changed it since).
    const HangingPlan &plan() const { return m_plan; }

    // ---- Multiplanar reformatting (studyviewermpr.cpp) ----
    /// MPR of the active pane's series in place of the grid: axial, coronal and sagittal panes cut from its
    /// volume, filled as its slices come (MprView). False (errorOccurred) when the active pane shows no series of
    /// images of this study. Off: the grid again, as it was. `byReader` false: a hanging protocol asked for it.
    /// Opened while the study is still being listed (on its first look), the volume is laid out from the slices as
    /// they come, and for good once the listing is here (setStudy).
    bool setMprShown(bool on, bool byReader = true);
    bool isMprShown() const { return m_mpr != nullptr; }
    /// Shown because the reader asked for it (M), not a protocol: a protocol applied later keeps it.
    bool isMprByReader() const { return m_mpr && m_mprByReader; }
    MprView *mprView() const { return m_mpr; }

    // ---- How the panes follow one another: linked scrolling, window and zoom, reference lines, the crosshair ----
    PaneLinks *links() const { return m_links; }

    int paneCount() const { return int(m_panes.size()); }
    /// Still as it opened: one pane, never moved off the image it opened on, nothing opened beside it, no MPR the
    /// reader asked for. (A study read as it streams in is listed later: its hanging protocol is applied then only
    /// to a viewer the reader has not laid out or moved in meanwhile — never taking the reader's place away.)
    bool isAsOpened() const;
    SeriesPane *pane(int i) const { return m_panes.value(i); }
    /// One pane over the whole grid (a double-click on it), or back to the layout (nullptr, or a double-click
    /// again). The other panes keep what they show.
    void setMaximised(SeriesPane *pane);
    SeriesPane *maximisedPane() const { return m_maximised; }
    const QList<SeriesPane *> &panes() const { return m_panes; }
    void setActivePane(SeriesPane *pane);
    void showSeries(int seriesIndex);
    /// Shows slice `index` (0-based, clamped) of the active pane's series as soon as it is decoded.
    void showSlice(int index);
    /// Shows the image `sopInstanceUid` of the study (its series in the active pane, at it; `frame` 1-based for a
    /// multi-frame image, 0: its first). False when the study lists no such image.
    bool showInstance(const QString &sopInstanceUid, int frame = 0);
    /// Applies presentation state `uid` of the study (findings()->presentationStates()) to the active pane: its
    /// window, area, rotation, flip and inversion on an image it applies to (the one in view, or its first), and
    /// its graphics as findings from it. False when there is no such state or none of its images is listed.
    bool applyPresentationState(const QString &uid);
    /// Steps the active pane through its images: the frames of a multi-frame image, then on to the next instance.
    void stepSlice(int step);
    /// The first (instance and frame) of the active pane's stack, or its last.
    void showStackEnd(bool last);

    const SegmentationOverlay *segmentations() const { return m_segmentations; }
    /// The findings on the study's images (and its priors' in other panes), drawn here and read from reports.
    FindingsModel *findings() const { return m_findings; }
    const FindingsLoader *findingsLoader() const { return m_findingsLoader; }

    /// Cine on the active pane (cineplayer.h).
    CinePlayer *cine() const { return m_cine; }

Q_SIGNALS:
    /// The reader chose a series that is not images (reports, key objects, presentation states): what it holds
    /// is shown over the images and listed in the findings.
    void findingsRequested();
    /// Slice `index` of the active pane's series is on screen (decoded and rendered).
    void imageShown(int index);
    void thumbnailReady(int series);
    /// Slice `index` is on screen in the active pane while it still arrives: `fraction` of its rows are in.
    void previewShown(int index, double fraction);
    void errorOccurred(const spectrum::Error &error);
    void activePaneChanged(spectrum::SeriesPane *pane);
    /// The right button clicked on a pane (now the active one): its menu, at `globalPosition`.
    void paneMenuRequested(QPoint globalPosition);

protected:
    void keyPressEvent(QKeyEvent *event) override;

private:
    SeriesPane *addPane(int seriesIndex);
    /// A pane on `study` (the current one or an OpenStudy's), wired to the viewer, not yet in the grid.
    SeriesPane *makePane(const StudySummary *study, StudyStreamer *streamer);
    /// The panes into the grid, row-major.
    void layoutPanes();
    /// setGrid(); new panes show the series not on screen yet when `fill`, nothing (yet) otherwise.
    void resizeGrid(int rows, int columns, bool fill);
    void wireStreamer(StudyStreamer *streamer);
    QString keyOf(const StudySummary *study) const;
    void requestThumbnail(int series, const QString &key);
    void requestThumbnails();
    /// The thumbnails, once: when the panes show their first images (or after half a second).
    void startThumbnails();
    bool m_thumbnailsWaiting = true;
    void fillSeriesList();
    void showThumbnailOnRow(int row);  ///< the row's icon as m_thumbnails has it
    /// The series list's choices and drags, to the panes (serieslist.cpp).
    void wireSeriesList();
    void onInstanceCached(const QString &key);
    void makeThumbnail(const QString &key);
    /// The decoder of the study `streamer` brings (null: of the studies in the cache), made the first time.
    StudyDecoder *decoderFor(StudyStreamer *streamer);
    QHash<const QObject *, StudyDecoder *> m_decoders;  ///< of each study's stream (while it lives); children of this
    StudyDecoder *m_cacheDecoder = nullptr;                          ///< of studies in the cache
    BlobStore *m_store;
    ImageMemoryCache *m_images;
    StudyStreamer *m_streamer = nullptr;
    StudySummary m_study;
    QListWidget *m_seriesList;
    QGridLayout *m_grid;
    QStackedWidget *m_stack;    ///< the grid, or the MPR view
    MprVolume *m_mprVolume = nullptr;
    MprView *m_mpr = nullptr;
    bool m_mprByReader = false;
    std::pair<QString, QString> m_openedAt;  ///< the first pane's place when the viewer opened (series UID, key)
    bool m_movedOff = false;                 ///< a pane has been somewhere else since (isAsOpened())
    bool m_relocating = false;               ///< the panes follow a new layout (relocatePanes()): not the reader's moves
    PriorsPanel *m_priors;
    int m_rows = 1;
    int m_columns = 1;
    QList<SeriesPane *> m_panes;
    StudyComparison *m_comparison = nullptr;
    friend class StudyComparison;  ///< places the other studies' series in panes, labels them
    bool m_placing = false;  ///< panes made meanwhile hold their loads until placed (laid out, then followed)
    SeriesPane *m_maximised = nullptr;  ///< the pane shown alone over the grid (setMaximised)
    PaneSettings *m_settings = nullptr;
    HangingPlan m_plan;
    PaneLinks *m_links = nullptr;
    friend class PaneLinks;  ///< reads the panes, the active one, the study keys; says the modes
    SeriesPane *m_active = nullptr;
    SegmentationOverlay *m_segmentations;
    FindingsModel *m_findings;
    FindingsLoader *m_findingsLoader;
    /// The key image series (one per key object selection read) after the study's own series, anew.
    void applyKeySeries();
    /// Where each pane is: its series' UID and its image's key (empty: a prior's pane, or nothing shown).
    QList<std::pair<QString, QString>> panePlaces() const;
    /// After the series list changed: each pane back to its image (`shown`, from panePlaces() before the change);
    /// `always`: even a pane whose place has the same numbers (a new listing: its places learnt again).
    void relocatePanes(const QList<std::pair<QString, QString>> &shown, bool always);
    /// The masks on what `pane` shows now.
    void updateMasks(SeriesPane *pane);
    QHash<int, QImage> m_thumbnails;
    QSet<int> m_thumbnailsAsked;
    int m_rejectedShown = 0;  ///< rejected images the series list and its thumbnails leave out
    QHash<QString, int> m_thumbnailWaiting;  ///< key of the image a series' thumbnail is made from → series
    quint64 m_studyGeneration = 0;
    CinePlayer *m_cine = nullptr;
    friend class CinePlayer;  ///< says the modes
    /// The viewports' mode line: synchronised scrolling, cine and its rate.
    void updateModeText();
};

} // namespace spectrum
