// SPDX-License-Identifier: Apache-2.0
#pragma once
// StudyDecoder: where the images of one study on screen are decoded — each once — and kept in the memory cache,
// where the panes find and show them. A viewer has one per study it streams (and one for what it opened from the
// cache). For the panes it alone hears the study's instances on their way in (the streamer's one channel,
// StudyStreamer::instanceUpdated) and decides, for each image a pane or the series list wants:
//   - the slice a pane has in view while it arrives: decoded (and filtered) as its bytes come, with previews
//     (previewReady), and kept once the instance is checked and in the cache — never decoded again;
//   - an image wanted whose bytes arrive whole: decoded from them, not read back from the disk;
//   - an image wanted that is in the cache (or once it is kept there): read and decoded on the pool.
// Panes say which slice they have in view (setView), ask for what they want (load) and hear back from it alone.
// Several decoders (the studies of a comparison, other viewers) share the memory cache; its pending marks keep them
// from decoding one image twice.

#include "viewer/imagememorycache.h"
#include "viewport/displayimage.h"

#include "spectrum/imaging/filters/bandprocessor.h"
#include "spectrum/stores/reading/studystreamer.h"

#include <QHash>
#include <QMutex>
#include <QObject>
#include <QPointer>
#include <QSet>

#include <memory>
#include <optional>

namespace spectrum {

class BlobStore;
class Job;
class ProgressiveImage;

/// The window a pane's slice in view will be shown with, read on the pool to render it there as it is decoded
/// (nullopt: the image's own). Written by the pane, read on the pool: under its lock.
struct NextWindowSlot
{
    QMutex mutex;
    std::optional<VoiWindow> window;
};

class StudyDecoder : public QObject
{
    Q_OBJECT
public:
    /// `images` (the workstation's) must outlive the decoder; `streamer` may be null (a study in the cache).
    StudyDecoder(BlobStore *store, ImageMemoryCache *images, StudyStreamer *streamer, QObject *parent = nullptr);
    ~StudyDecoder() override;

    StudyStreamer *streamer() const { return m_streamer; }

    /// `viewer` (a pane) has `key` in view: decoded while it arrives, and rendered on the pool with `render`'s
    /// window when it is read from the cache (null: not rendered there — filtered, inverted). An empty key: none.
    /// `near`: what it keeps decoded around it — decoded from their bytes as they arrive, read as soon as kept.
    void setView(const QObject *viewer, const QString &key, const QSet<QString> &near = {}, std::shared_ptr<NextWindowSlot> render = {});
    /// Forgets `viewer`: its view, and what it asked for (loads nobody else wants are cancelled).
    void forget(const QObject *viewer);
    /// Its viewer is closing (MainWindow::closeTab, decision 0037): nothing more is loaded, and what decodes and
    /// filters under way still bring of `forgotten` (the instances the memory cache forgot as the study closed: not
    /// those another tab shows) is not kept until the decoder goes with the viewer; their pending marks end, so that
    /// the same study opened again decodes them.
    void retire(const QSet<QString> &forgotten);

    /// The filters images decoded while they arrive, or from their bytes, are run through as they are decoded.
    void setFilters(const FilterChain &chain, const QString &description);

    enum class Load {
        Here,     ///< in memory already
        Coming,   ///< being decoded (arriving, from its bytes, for another), or not in the cache yet: ready() will say
        Started,  ///< read from the cache and decoded now, for this asker: ready(), tooLarge() or decodeFailed()
    };
    /// `viewer` wants `key` in memory.
    Load load(const QObject *viewer, const QString &key);
    /// `viewer` no longer waits for what it asked for, but `keep`. The reads it started go on (still its own: their
    /// images are kept) unless `cancelRunning`; then they stop when nobody else asked for them.
    void release(const QObject *viewer, const QSet<QString> &keep = {}, bool cancelRunning = false);
    /// Whether a read from the cache is under way for `key`.
    bool isLoading(const QString &key) const;

    /// `original` (instance `key`) through `chain`, kept under ImageMemoryCache::filteredKey(key, description):
    /// ready() with that key, or decodeFailed() with it. Once, whoever asks meanwhile.
    void filter(const QString &key, const std::shared_ptr<const DecodedImage> &original, const FilterChain &chain, const QString &description);

Q_SIGNALS:
    /// An image is in memory under `key` (a blob key or a filtered key), or its decode gave up: look there.
    void ready(const QString &key);
    /// Instance `key` was decoded but is larger than the whole memory budget: not kept; shown by whoever has it in
    /// view. `filtered` (null without filters) is made with the chain `chainDescription` names.
    void tooLarge(const QString &key, std::shared_ptr<const DecodedImage> original, std::shared_ptr<const DecodedImage> filtered,
                  const QString &chainDescription);
    /// Instance `key`, about to be ready(), rendered on the pool for the pane that has it in view.
    void prerendered(const QString &key, const spectrum::PrerenderedFrame &frame);
    /// The slice in view while it arrives: its first `rows` rows (of `originalRows` decoded), filtered with the
    /// chain `chainDescription` names (empty: none).
    void previewReady(const QString &key, const spectrum::DecodedImage &image, int rows, const spectrum::DecodedImage &original,
                      int originalRows, const QString &chainDescription);
    /// Instance `key` could not be fetched (the streamer says why, and when it tries again).
    void fetchFailed(const QString &key, const spectrum::Error &error);
    /// Reading `key` from the cache, or filtering it (a filtered key), failed — or the read was cancelled
    /// (ErrorCode::Cancelled: asked again when wanted). A copy damaged in the cache (ErrorCode::Corrupt) is dropped
    /// there, and fetched again when the study streams from an archive.
    void decodeFailed(const QString &key, const spectrum::Error &error);
    /// How much of the study is here changed.
    void progressed();

private:
    struct Arriving;
    struct Wanted
    {
        QSet<const QObject *> by;  ///< who asked (empty: none any more, or its own)
        Job *job = nullptr;        ///< its read from the cache, under way
    };

    void onUpdate(const InstanceUpdate &update);
    void onArriving(const InstanceUpdate &update);
    void onWhole(const QString &key, const ByteView &bytes);
    void onKept(const QString &key);
    /// Reads `key` from the cache and decodes it now, unless it is in memory, decoded elsewhere, or not here yet.
    void startLoad(const QString &key);
    /// The image decoded for `key` (and its filtered version, made with filters generation `chainGeneration`),
    /// kept; too large: shown by whoever has it in view.
    void keep(const QString &key, std::shared_ptr<const DecodedImage> original, std::shared_ptr<const DecodedImage> filtered, quint64 chainGeneration);
    void commitArriving(const QString &key);
    /// Forgets the arriving decode of `key`; whoever waits for it has it decoded otherwise.
    void dropArriving(const QString &key);
    bool inView(const QString &key) const;
    /// Whether someone asked for `key`, has it in view, or keeps it near.
    bool isWanted(const QString &key) const;
    /// The window slot of the view that has `key` in view, for rendering it on the pool (null: none).
    std::shared_ptr<NextWindowSlot> renderSlotFor(const QString &key) const;
    void setPending(const QString &key, bool pending);
    void onPendingDropped(const QString &key);

    BlobStore *m_store;
    ImageMemoryCache *m_images;
    QPointer<StudyStreamer> m_streamer;
    FilterChain m_chain;
    QString m_chainDescription;
    quint64 m_chainGeneration = 0;
    struct View
    {
        QString key;
        QSet<QString> near;
        std::shared_ptr<NextWindowSlot> render;
    };
    QHash<const QObject *, View> m_views;
    QHash<QString, Wanted> m_wanted;                       ///< what is asked for and not in memory yet
    QHash<QString, std::shared_ptr<Arriving>> m_arriving;  ///< slices in view decoded while they arrive
    QSet<QString> m_pendingHere;                           ///< marked pending in the memory cache by this decoder
    /// retire()d: `key`'s image is dropped (its pending mark ended), not kept. False when not retired.
    bool droppedRetired(const QString &key);
    bool m_retired = false;
    QSet<QString> m_forgotten;  ///< retire()'s
    QSet<QString> m_givingUp;                              ///< too large to keep, being let go (not re-asked)
    quint64 m_arrivalSerial = 0;
};

} // namespace spectrum
