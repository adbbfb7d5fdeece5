// SPDX-License-Identifier: Apache-2.0
#pragma once
// SeriesPane: one viewport of a study on screen and the series it shows — the slice in view first, then its
// neighbours, asked of the study's decoder (StudyDecoder), which decodes each once into the memory cache where the
// pane finds it; filtered when filters are on; shown while it arrives when the study streams in from an archive.
// A study viewer holds one to four of them (layouts).

#include "viewer/imagememorycache.h"
#include "viewer/studydecoder.h"
#include "viewport/imageviewport.h"

#include "spectrum/imaging/filters/bandprocessor.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QFrame>
#include <QPointer>
#include <QMap>
#include <QSet>
#include <QTimer>

#include <array>
#include <optional>
#include <memory>

class QPushButton;
class QScrollBar;

namespace spectrum {

class StudyStreamer;

/// How many slices either side of the one in view a pane loads ahead, and how many loads it keeps in flight.
inline constexpr int kPrefetchRadius = 12;
inline constexpr int kMaxLoadsInFlight = 4;

class SeriesPane : public QFrame
{
    Q_OBJECT
public:
    /// `study` and `decoder` (the study's) must outlive the pane (its viewer owns them), unless it is detach()ed
    /// first, and `images` (the workstation's) the pane.
    SeriesPane(StudyDecoder *decoder, ImageMemoryCache *images, const StudySummary *study, QWidget *parent = nullptr);
    /// Taken off the screen for good (to be deleted later): it gives up what it asked for, hears nothing more, and no
    /// longer needs its decoder.
    void detach();
    ~SeriesPane() override;

    ImageViewport *viewport() const { return m_viewport; }
    int seriesIndex() const { return m_series; }
    int sliceIndex() const { return m_slice; }
    int sliceCount() const;

    void showSeries(int seriesIndex);
    /// While held, the pane takes its series and slice (showSeries(), showSlice()) but neither loads nor shows
    /// them: a pane laid out to follow another is placed first, then loads only the slice it was placed at
    /// (releaseLoads()), not its middle before.
    void holdLoads() { m_holding = true; }
    void releaseLoads();
    /// The study's list changed under the pane (the whole listing after a first look): it now shows slice
    /// `slice` of series `series` — the image it shows already, at its new place — or, with slice −1, the
    /// series from its middle. Loads under way for the old numbering are dropped.
    void relocate(int series, int slice);
    /// Shows slice `index` (0-based, clamped) of the series as soon as it is decoded — at its last frame when
    /// `atLastFrame` (End), else its first.
    void showSlice(int index, bool atLastFrame = false);
    /// Steps `step` images: through the frames of a multi-frame image, on into the next (or previous) instance
    /// past its ends; through the instances otherwise.
    void stepSlice(int step);
    /// Frame `frame` (0-based, clamped) of the image in view.
    void showFrame(int frame);
    int frameIndex() const { return m_viewport->frame(); }
    /// Frames of the image in view (1 for a single-frame image, 0 without one).
    int frameCount() const { return m_viewport->frameCount(); }
    void resetView();
    void setFilters(const FilterChain &chain, const QString &description);
    bool isFiltering() const { return !m_chain.isEmpty(); }
    /// Whether a slice load is under way for the slice in view.
    bool isLoadingSliceInView() const { return m_series >= 0 && m_slice >= 0 && m_inFlight.contains(keyOf(m_slice)); }
    StudyDecoder *decoder() const { return m_decoder; }
    /// The slice of this series nearest to `point` (patient coordinates, millimetres) in the frame of reference
    /// `frame`: interpolated between the slices decoded so far (exact for an evenly spaced stack, refined as more
    /// arrive), clamped to the stack. −1 when the series lies in another frame of reference, has no geometry, or
    /// fewer than two of its slices are known yet.
    /// `unclamped`: the fractional slice index before clamping (below 0 or past the end: beyond the stack).
    int sliceNearest(const QString &frame, const std::array<double, 3> &point, double *unclamped = nullptr) const;
    /// Where the slice in view lies: from its decoded image (`point` its centre), else from its header as the
    /// catalog holds it (`point` its first pixel: *centre false — good for planes parallel to it only); false when
    /// neither says.
    bool placeInView(QString *frame, std::array<double, 3> *normal, std::array<double, 3> *point, bool *centre) const;
    /// The normal of the stack's slices, once one slice's place is known (else nullopt).
    std::optional<std::array<double, 3>> stackNormal() const;
    /// The same for a point of another study (another frame of reference: its coordinates taken as this one's,
    /// as a prior's are): −1 unless this series lies in the plane `normal` describes (parallel within ~8°);
    /// kBeyondStack when the point lies more than a slice beyond either end of the stack.
    int sliceNearestInPlane(const std::array<double, 3> &normal, const std::array<double, 3> &point) const;
    static constexpr int kBeyondStack = -2;
    /// The direction its slices are stacked along (their normal), once one is decoded; zero before.
    std::array<double, 3> sliceNormal() const { return m_normal; }
    /// The study this pane shows a series of.
    const StudySummary *study() const { return m_study; }
    /// Shown in the overlay's corner and the frame's colour when the viewer compares studies: "PRIOR" and its
    /// date for an earlier study, "CURRENT" for the one being read; empty when only one study is open.
    void setComparisonLabel(const QString &label, bool prior);
    /// The window the next image opens with (a hanging protocol's), instead of its own; kept while scrolling.
    void setInitialWindow(const VoiWindow &window);
    /// Drawn with a highlight: the pane the keys and menus act on.
    void setActive(bool active);

Q_SIGNALS:
    void imageShown(int index);
    /// Another frame of the multi-frame image in view is on screen.
    void frameShown(int frame);
    /// The slice in view changed (scrolled here or from the viewer), before it is on screen.
    void sliceChanged(int series, int index);
    void previewShown(int index, double fraction);
    void errorOccurred(const spectrum::Error &error);
    /// Clicked or focused: it becomes the active pane.
    void activated();
    /// A series (its index) was dropped on the pane from the series list.
    void seriesDropped(int seriesIndex);
    /// A series of another open study (`studyKey`: PriorsPanel::studyKey) was dropped on the pane.
    void otherStudySeriesDropped(const QString &studyKey, int seriesIndex);
    /// The wheel with Shift stepped this pane alone — the linked panes stay (the viewer learns an offset from
    /// where it lands); `moved`: whether it went anywhere (not at the stack's end).
    void steppedAlone(bool moved);
    /// Where one more slice of the series lies is known (sliceNearest can answer better).
    void sliceGeometryLearned();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    /// Slice `index` in view; a multi-frame image opens at its first frame, or its last when m_enterAtLastFrame.
    void moveTo(int index);
    void requestLoad(int index);
    /// The window the next image will be shown with, as ImageViewport::setImage() will choose it.
    std::optional<VoiWindow> windowForNext() const;
    void noteWindowForNext();
    void prefetchAround(int index);
    /// Shows `image` as slice `index`, filtered when filters are on (at once when the filtered version is in memory,
    /// else once the decoder made it).
    void display(int index, const std::shared_ptr<const DecodedImage> &image);
    /// Shows `image` (its values, its geometry) as `filtered` when the filters made one.
    void present(int index, const DecodedImage &image, const DecodedImage &filtered = DecodedImage());
    /// The overlay for slice m_slice: who and what always; where and how big when the image (`info`) is here.
    void updateOverlay(const ImageInfo *info);
    void updateOverlay(const ImageInfo &info) { updateOverlay(&info); }
    void showWaiting(int index);
    /// The slice in view could not be fetched: why, when it is tried again, and a button to try now.
    void showFailure(int index);
    /// What the slice in view waits for, when it is not on screen: its fetch, or its failure.
    void showMissing(int index);
    /// What the study's decoder says (StudyDecoder's signals).
    void onPreview(const QString &key, const DecodedImage &image, int rows, const DecodedImage &original, int originalRows, const QString &chainDescription);
    void onFetchFailed(const QString &key, const Error &error);
    void onDecodeFailed(const QString &key, const Error &error);
    void onTooLarge(const QString &key, const std::shared_ptr<const DecodedImage> &original, const std::shared_ptr<const DecodedImage> &filtered,
                    const QString &chainDescription);
    void onStreamProgress();
    /// Tells the decoder the slice in view and those kept near it.
    void updateView();
    void learnGeometry(int index, const ImageInfo &info);
    /// Slice `index` lies in the plane through `point` with `normal` in `frame`; false when it is not of the stack.
    /// A point from the header (not the centre) is taken only for a slice exactly parallel to the stack.
    bool placeSlice(int index, const QString &frame, const std::array<double, 3> &normal, const std::array<double, 3> &point, bool fromHeader);
    /// Where the series' slices lie, from their headers as the catalog holds them (no decoding); slice
    /// `reference`'s plane decides which slices make the stack (a localiser elsewhere in the series does not).
    void learnPlaces(int reference);
    /// An image was decoded into (or its decode dropped from) the memory cache: shown when it is in view.
    void onImageReady(const QString &key);
    /// Gives up what was asked for (the loads under way for it are cancelled).
    void dropLoads();
    /// The keys of slice `index` and the kPrefetchRadius slices either side of it.
    QSet<QString> keysNear(int index) const;
    QSet<QString> keysNearIn(int series, int index) const;  ///< (of series `series`)
    /// The slices (indices) of the series `key` is.
    QList<int> indicesOf(const QString &key) const;
    QString keyOf(int index) const { return m_study->series[m_series].instances[index].key; }
    bool isDecoded(int index) const { return m_images->contains(keyOf(index)); }

    StudyDecoder *m_decoder;
    bool m_detached = false;
    const StudySummary *m_study;
    QPointer<StudyStreamer> m_streamer;  ///< a prior's may go (closed) while its emptied panes stay
    ImageViewport *m_viewport;
    int m_series = -1;
    int m_slice = -1;
    bool m_windowFromUser = false;
    bool m_holding = false;               // placed without loading (holdLoads())
    bool m_enterAtLastFrame = false;      // stepped back into a multi-frame instance: it opens at its last frame
    quint64 m_generation = 0;             // bumps on series change: late results of the old series are dropped
    ImageMemoryCache *m_images;           // decoded slices (by blob key) and their filtered versions
    FilterChain m_chain;
    QString m_chainDescription;
    quint64 m_chainGeneration = 0;
    QSet<QString> m_inFlight;             ///< keys of the slices whose load this pane started (StudyDecoder::Load::Started)
    QSet<int> m_placedByHeader;  ///< slices whose place is their header's (replaced by the centre once decoded)
    QString m_frameOfReference;           // of the series, from its decoded slices
    QMap<int, std::array<double, 3>> m_centres;  // slice index → its centre, for the slices decoded so far
    std::array<double, 3> m_normal{};
    /// The window set before the image came (setInitialWindow), applied when it is shown.
    void applyInitialWindow();
    std::optional<VoiWindow> m_initialWindow;
    std::shared_ptr<NextWindowSlot> m_nextWindow = std::make_shared<NextWindowSlot>();
    std::optional<PrerenderedFrame> m_ready;  ///< the slice in view, rendered on the pool as it was decoded
    QString m_comparisonLabel;
    bool m_comparisonPrior = false;
    bool m_activeFrame = false;
    QScrollBar *m_stackBar;                ///< where the slice in view lies in the stack; dragged to go anywhere
    void updateStackBar();
    QPushButton *m_retryButton;            ///< shown under the image while the slice in view has failed
    QTimer *m_failureTick;                 ///< keeps "trying again in N s" current
};

/// The MIME type a series is dragged with from the series list: its index, as text.
inline QString seriesMimeType() { return QStringLiteral("application/x-spectrum-series"); }
/// The MIME type a series of another open study is dragged with (from the priors list): "study key\nindex".
inline QString otherStudySeriesMimeType() { return QStringLiteral("application/x-spectrum-study-series"); }

} // namespace spectrum
