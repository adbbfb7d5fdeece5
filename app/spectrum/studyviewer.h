#pragma once
// StudyViewer: one open study — its series on the left, a viewport on the right. Slices are loaded from the
// store as jobs (read + decode on the pool); the slice in view first, then its neighbours, nearest first.

#include "imageviewport.h"

#include "spectrum/imaging/bandprocessor.h"
#include "spectrum/stores/studycatalog.h"

#include <memory>

#include <QCache>
#include <QHash>
#include <QImage>
#include <QSet>
#include <QTimer>
#include <QWidget>

class QListWidget;

namespace spectrum {

class StudyStreamer;

class StudyViewer : public QWidget
{
    Q_OBJECT
public:
    /// `streamer`: the study is still arriving from a remote store (the viewer tells it where the user looks,
    /// and shows each slice once it is in the cache); null for a study already in `store`.
    StudyViewer(BlobStore *store, const StudySummary &study, StudyStreamer *streamer = nullptr, QWidget *parent = nullptr);
    ~StudyViewer() override;

    const StudySummary &study() const { return m_study; }
    int seriesIndex() const { return m_series; }
    int sliceIndex() const { return m_slice; }
    int sliceCount() const;
    ImageViewport *viewport() const { return m_viewport; }
    /// The series' thumbnail (its middle image, once here); null until then.
    QImage thumbnail(int series) const { return m_thumbnails.value(series); }
    StudyStreamer *streamer() const { return m_streamer; }

    void showSeries(int seriesIndex);
    /// Shows slice `index` (0-based, clamped) of the current series as soon as it is decoded.
    void showSlice(int index);
    void stepSlice(int step) { showSlice(m_slice + step); }
    /// Fit, centre, and the image's own window again.
    void resetView();

    /// Filters the images in view (and those arriving) through `chain`; empty: the originals. `description`
    /// names it in the overlay.
    void setFilters(const FilterChain &chain, const QString &description);
    bool isFiltering() const { return !m_chain.isEmpty(); }

    /// Cine: steps through the series at `framesPerSecond`, round and round, until stopped.
    void setCinePlaying(bool playing);
    bool isCinePlaying() const { return m_cine.isActive(); }
    void setCineRate(int framesPerSecond);  ///< 1…60
    int cineRate() const { return m_cineRate; }

Q_SIGNALS:
    /// Slice `index` of the current series is on screen (decoded and rendered).
    void imageShown(int index);
    void cineChanged(bool playing, int framesPerSecond);
    void thumbnailReady(int series);
    /// Slice `index` is on screen while it still arrives: `fraction` of its rows are in (the rest black).
    void previewShown(int index, double fraction);
    void errorOccurred(const spectrum::Error &error);

protected:
    void keyPressEvent(QKeyEvent *event) override;

private:
    void requestLoad(int index);
    void prefetchAround(int index);
    void display(int index, const DecodedImage &image);
    void updateOverlay(const ImageInfo &info);
    /// Shows `image` (slice `index`, whole) — through the filters when they are on, computed on the pool.
    void present(int index, const DecodedImage &image);
    /// The slice in view is not in the cache yet: say so, never show another slice's pixels under its number.
    void showWaiting(int index);
    void onInstanceCached(const QString &key);
    /// Makes series `series`' thumbnail from cached instance `key` (decoded and rendered on the pool).
    void requestThumbnail(int series, const QString &key);
    /// Bytes of an instance arriving from the streamer: decoded as they come when it is the slice in view.
    void onInstanceArriving(const QString &key, std::shared_ptr<const QByteArray> bytes, qint64 end);
    void onPreview(const QString &key, const DecodedImage &image, int rows);

    BlobStore *m_store;
    StudyStreamer *m_streamer = nullptr;
    StudySummary m_study;
    QListWidget *m_seriesList;
    ImageViewport *m_viewport;
    int m_series = -1;
    int m_slice = -1;
    bool m_windowFromUser = false;
    quint64 m_generation = 0;         // bumps on series change: late results of the old series are dropped
    QCache<int, DecodedImage> m_cache; // decoded slices of the current series; cost in KiB
    QCache<int, DecodedImage> m_filtered; // the same through the current filters
    FilterChain m_chain;
    QString m_chainDescription;
    quint64 m_chainGeneration = 0;     // bumps when the filters change: late results of the old chain are dropped
    QSet<int> m_inFlight;
    QList<Job *> m_jobs;
    /// The slice in view while it streams in: its bytes (kept alive for the decoder) and its progressive decode.
    struct Arriving;
    std::unique_ptr<Arriving> m_arriving;
    QHash<int, QImage> m_thumbnails;
    QSet<int> m_thumbnailsAsked;
    QTimer m_cine;
    int m_cineRate = 15;
};

} // namespace spectrum
