// SPDX-License-Identifier: Apache-2.0
#include "viewer/seriespane.h"
#include "viewer/paneoverlaytext.h"

#include <QPointer>
#include <QHBoxLayout>
#include <QScrollBar>
#include "viewer/seriespanearriving.h"

#include "spectrum/imaging/codecs/progressiveimage.h"
#include "spectrum/stores/reading/imageloader.h"
#include "spectrum/stores/reading/studystreamer.h"

#include "spectrum/imaging/codecs/decodecounts.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QPushButton>
#include <QVBoxLayout>

#include <utility>

namespace spectrum {


SeriesPane::SeriesPane(BlobStore *store, ImageMemoryCache *images, const StudySummary *study, StudyStreamer *streamer, QWidget *parent)
    : QFrame(parent), m_store(store), m_study(study), m_streamer(streamer), m_viewport(new ImageViewport), m_images(images),
      m_stackBar(new QScrollBar(Qt::Vertical)), m_retryButton(new QPushButton(tr("Retry now"))), m_failureTick(new QTimer(this))
{
    setFrameShape(QFrame::NoFrame);
    setActive(false);
    setAcceptDrops(true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    // The stack's scroll bar beside the image: where the slice in view lies in the series, dragged to go anywhere.
    auto *row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(0);
    row->addWidget(m_viewport, 1);
    m_stackBar->setObjectName(QStringLiteral("stackBar"));
    m_stackBar->setFocusPolicy(Qt::NoFocus);
    m_stackBar->setFixedWidth(12);
    m_stackBar->setToolTip(tr("Drag to go through the stack"));
    m_stackBar->hide();
    row->addWidget(m_stackBar);
    layout->addLayout(row, 1);
    connect(m_stackBar, &QScrollBar::valueChanged, this, [this](int value) {
        if (value != m_slice)
            showSlice(value);
    });
    connect(this, &SeriesPane::sliceChanged, this, [this] { updateStackBar(); });
    connect(this, &SeriesPane::imageShown, this, [this] { updateStackBar(); });  // the series may have grown
    m_retryButton->setObjectName(QStringLiteral("retryButton"));
    m_retryButton->hide();
    layout->addWidget(m_retryButton, 0, Qt::AlignHCenter);
    connect(m_retryButton, &QPushButton::clicked, this, [this] {
        if (m_streamer)
            m_streamer->retryFailed();
        if (m_series >= 0 && m_slice >= 0)
            showMissing(m_slice);
    });
    m_failureTick->setInterval(1000);
    connect(m_failureTick, &QTimer::timeout, this, [this] {
        if (m_series >= 0 && m_slice >= 0 && !m_viewport->hasImage())
            showMissing(m_slice);
        else
            m_failureTick->stop();
    });
    setFocusProxy(m_viewport);
    m_viewport->installEventFilter(this);
    connect(m_viewport, &ImageViewport::sliceStepRequested, this, [this](int step, bool alone) {
        if (!alone)
            return stepSlice(step);
        const int slice = m_slice, frame = m_viewport->frame();
        Q_EMIT steppedAlone(true);  // before: the step's image may be shown at once
        stepSlice(step);
        if (m_slice == slice && m_viewport->frame() == frame)
            Q_EMIT steppedAlone(false);  // at the end: nothing moved, nothing to learn
    });
    connect(m_viewport, &ImageViewport::windowChanged, this, [this] { m_windowFromUser = true; });
    connect(m_images, &ImageMemoryCache::inserted, this, &SeriesPane::onImageReady);
    connect(m_images, &ImageMemoryCache::pendingDropped, this, &SeriesPane::onImageReady);
}

SeriesPane::~SeriesPane()
{
    disconnect(m_images, nullptr, this, nullptr);  // its signals must not reach a pane half gone
    dropArriving();
    ++m_generation;  // results that still arrive belong to nobody
    const QList<Job *> jobs = m_jobs;  // cancelling reports back, which edits m_jobs
    for (Job *job : jobs)
        job->cancel();
    releasePendingLoads();
}

void SeriesPane::releasePendingLoads()
{
    for (const QString &key : std::exchange(m_pendingLoads, {}))
        if (!m_images->contains(key))
            m_images->setPending(key, false);  // whoever waited for this pane's decode makes its own
}

void SeriesPane::setActive(bool active)
{
    m_activeFrame = active;
    // The active pane in blue; a prior's panes in amber, so the two studies are told apart at a glance.
    const QString colour = active ? QStringLiteral("#3d7fd6") : m_comparisonPrior ? QStringLiteral("#8a6a1c") : QStringLiteral("#101010");
    setStyleSheet(QStringLiteral("SeriesPane { border: 2px solid %1; }").arg(colour));
}

void SeriesPane::setInitialWindow(const VoiWindow &window)
{
    m_initialWindow = window;
    noteWindowForNext();  // a load on its way renders with it
    if (m_viewport->hasImage())
        applyInitialWindow();
}

void SeriesPane::applyInitialWindow()
{
    if (!m_initialWindow || !m_viewport->hasImage())
        return;
    m_viewport->setWindow(*m_initialWindow);
    m_initialWindow.reset();
    m_windowFromUser = true;  // kept while scrolling, as if the reader had set it
}

void SeriesPane::setComparisonLabel(const QString &label, bool prior)
{
    if (label == m_comparisonLabel && prior == m_comparisonPrior)
        return;
    m_comparisonLabel = label;
    m_comparisonPrior = prior;
    setActive(m_activeFrame);
    if (m_series >= 0 && m_slice >= 0)
        updateOverlay(m_viewport->hasImage() ? &m_viewport->image().info : nullptr);
}

bool SeriesPane::eventFilter(QObject *watched, QEvent *event)
{
    // The pane clicked, focused or scrolled is the one the reader works in.
    if (watched == m_viewport && (event->type() == QEvent::MouseButtonPress || event->type() == QEvent::FocusIn || event->type() == QEvent::Wheel))
        Q_EMIT activated();
    return QFrame::eventFilter(watched, event);
}

void SeriesPane::dragEnterEvent(QDragEnterEvent *event)
{
    if (event->mimeData()->hasFormat(seriesMimeType()) || event->mimeData()->hasFormat(otherStudySeriesMimeType()))
        event->acceptProposedAction();
}

void SeriesPane::dropEvent(QDropEvent *event)
{
    if (event->mimeData()->hasFormat(otherStudySeriesMimeType())) {
        const QStringList parts = QString::fromUtf8(event->mimeData()->data(otherStudySeriesMimeType())).split(QLatin1Char('\n'));
        bool ok = false;
        const int series = parts.value(1).toInt(&ok);
        if (parts.size() != 2 || !ok)
            return;
        event->acceptProposedAction();
        Q_EMIT activated();
        Q_EMIT otherStudySeriesDropped(parts.first(), series);
        return;
    }
    bool ok = false;
    const int series = QString::fromLatin1(event->mimeData()->data(seriesMimeType())).toInt(&ok);
    if (!ok)
        return;
    event->acceptProposedAction();
    Q_EMIT activated();
    Q_EMIT seriesDropped(series);
}

void SeriesPane::updateStackBar()
{
    const int count = sliceCount();
    const QSignalBlocker block(m_stackBar);
    m_stackBar->setVisible(count > 1);
    m_stackBar->setRange(0, std::max(0, count - 1));
    m_stackBar->setPageStep(std::max(1, count / 10));
    m_stackBar->setValue(std::max(0, m_slice));
}

int SeriesPane::sliceCount() const
{
    return m_series >= 0 ? int(m_study->series[m_series].instances.size()) : 0;
}

void SeriesPane::showSeries(int seriesIndex)
{
    if (seriesIndex < 0 || seriesIndex >= m_study->series.size() || seriesIndex == m_series)
        return;
    dropLoads();
    dropArriving();
    m_centres.clear();
    m_placedByHeader.clear();
    m_frameOfReference.clear();
    m_series = seriesIndex;
    m_slice = -1;
    m_windowFromUser = false;
    m_viewport->clear(tr("Loading…"));
    learnPlaces(sliceCount() / 2);
    // Open a stack in its middle, where the anatomy is; a single image is its own middle.
    showSlice(sliceCount() / 2);
}

void SeriesPane::dropLoads()
{
    ++m_generation;  // late results of what was asked before are dropped
    const QList<Job *> jobs = m_jobs;  // cancelling reports back, which edits m_jobs
    for (Job *job : jobs)
        job->cancel();
    m_jobs.clear();
    m_loadOf.clear();
    m_inFlight.clear();
    m_ready.reset();
    releasePendingLoads();
}

void SeriesPane::relocate(int series, int slice)
{
    dropLoads();  // results on their way carry old indices
    m_centres.clear();
    m_placedByHeader.clear();
    m_frameOfReference.clear();
    if (series < 0 || series >= m_study->series.size()) {
        m_series = -1;
        m_slice = -1;
        m_retryButton->hide();
        m_viewport->clear(tr("This study has no images."));
        return;
    }
    if (slice < 0) {
        m_series = -1;
        return showSeries(series);
    }
    m_series = series;
    m_slice = -1;  // shown again (from memory, without a flicker) and its neighbours prefetched
    learnPlaces(slice);
    showSlice(slice);
}

void SeriesPane::showSlice(int index, bool atLastFrame)
{
    m_enterAtLastFrame = atLastFrame;
    const int before = m_slice;
    moveTo(index);
    // Already on screen (the same slice): its last frame now; otherwise once it is (present()).
    if (atLastFrame && m_slice == before && m_viewport->hasImage()) {
        m_enterAtLastFrame = false;
        showFrame(m_viewport->frameCount() - 1);
    }
}

void SeriesPane::moveTo(int index)
{
    if (sliceCount() == 0)
        return;
    index = std::clamp(index, 0, sliceCount() - 1);
    if (index == m_slice && m_viewport->hasImage())
        return;
    if (!m_viewport->hasImage() && m_slice >= 0 && index != m_slice) {
        // Placed elsewhere before anything was shown (a linked pane put at the level of the one it follows):
        // what was asked for the first place is not wanted before the slice in view.
        const QList<int> asked = m_loadOf.keys();
        for (int i : asked) {
            if (std::abs(i - index) > kPrefetchRadius)
                m_loadOf.value(i)->cancel();
        }
    }
    m_slice = index;
    if (m_arriving && m_arriving->key != m_study->series[m_series].instances[index].key)
        dropArriving();  // its decode is no longer wanted on screen
    Q_EMIT sliceChanged(m_series, index);
    if (m_holding)
        return;  // placed; loaded once released
    if (const std::shared_ptr<const DecodedImage> cached = m_images->object(keyOf(index))) {
        learnGeometry(index, cached->info);
        display(index, *cached);
    } else {
        requestLoad(index);
        if (m_inFlight.contains(index))
            return;  // the slice in view first, before any pane's neighbours: they are asked for once it is decoded
    }
    prefetchAround(index);
}

void SeriesPane::releaseLoads()
{
    if (!std::exchange(m_holding, false) || m_series < 0 || m_slice < 0)
        return;
    moveTo(std::exchange(m_slice, -1));  // where it was placed, now loaded
}

void SeriesPane::stepSlice(int step)
{
    const int frames = m_viewport->hasImage() && m_series >= 0 && m_slice >= 0 && m_viewport->image().info.identity.sopInstanceUid == m_study->series[m_series].instances[m_slice].sopInstanceUid
                           ? m_viewport->frameCount() : 1;
    if (frames > 1) {
        const int to = m_viewport->frame() + step;
        if ((to >= 0 && to < frames) || sliceCount() == 1)
            return showFrame(to);
        if ((to < 0 && m_slice == 0) || (to >= frames && m_slice == sliceCount() - 1))
            return showFrame(to);  // the stack's ends: the first or last frame
        m_enterAtLastFrame = to < 0;
        return moveTo(m_slice + (to < 0 ? -1 : 1));
    }
    m_enterAtLastFrame = step < 0;
    moveTo(m_slice + step);
}

void SeriesPane::showFrame(int frame)
{
    if (!m_viewport->hasImage())
        return;
    const int before = m_viewport->frame();
    m_viewport->setFrame(frame);
    if (m_viewport->frame() == before)
        return;
    updateOverlay(m_viewport->image().info);
    Q_EMIT frameShown(m_viewport->frame());
}

namespace {

struct PaneLoad
{
    DecodedImage image;
    std::optional<PrerenderedFrame> frame;
};

PaneLoad loaded(DecodedImage image, const QString &key, bool render, NextWindowSlot &next)
{
    PaneLoad out{std::move(image), std::nullopt};
    if (render) {
        std::optional<VoiWindow> window;
        {
            QMutexLocker lock(&next.mutex);
            window = next.window;
        }
        out.frame = prerenderFirstFrame(out.image, key, window);
    }
    return out;
}

} // namespace

std::optional<VoiWindow> SeriesPane::windowForNext() const
{
    if (m_initialWindow)
        return *m_initialWindow;
    if (m_viewport->hasImage() || m_windowFromUser)
        return m_viewport->window();
    return std::nullopt;
}

void SeriesPane::noteWindowForNext()
{
    QMutexLocker lock(&m_nextWindow->mutex);
    m_nextWindow->window = windowForNext();
}

void SeriesPane::requestLoad(int index)
{
    if (m_inFlight.contains(index))
        return;
    if (const std::shared_ptr<const DecodedImage> decoded = m_images->peek(keyOf(index))) {
        learnGeometry(index, decoded->info);  // decoded for another pane
        return;
    }
    if (m_images->isPending(keyOf(index)))
        return;  // being decoded (arriving, just fetched, another pane's): shown once inserted (onImageReady)
    const InstanceRef &ref = m_study->series[m_series].instances[index];
    // The streamer's instance (before its listing, every one is: only the first look is known) until it is cached.
    if (m_streamer && (!m_streamer->isListed() || m_streamer->isListed(ref.key)) && !m_streamer->isCached(ref.key)) {
        if (index == m_slice && !(m_arriving && m_arriving->key == ref.key))
            showMissing(index);  // unless it is on screen already while it arrives
        return;  // loaded when it is cached (onInstanceCached)
    }
    // The slice to be shown is windowed on the pool too, as it is decoded (the GUI thread then only paints it),
    // when the viewport would show it as it is: unfiltered, not inverted.
    const bool render = index == m_slice && m_chain.isEmpty() && !m_viewport->isInverted();
    if (render)
        noteWindowForNext();
    ResultJob<PaneLoad> *job = nullptr;
    if (m_store->readsOnAnyThread()) {
        job = makeJob<PaneLoad>([store = m_store, key = ref.key, render, next = m_nextWindow](const CancelToken &) -> Result<PaneLoad> {
            Result<DecodedImage> image = runSync(loadImage(store, key));
            if (!image.isOk())
                return image.error();
            return loaded(std::move(image.value()), key, render, *next);
        });
    } else {
        job = chainJob<PaneLoad>(loadImage(m_store, ref.key), [key = ref.key, render, next = m_nextWindow](const DecodedImage &image, const CancelToken &) {
            return Result<PaneLoad>(loaded(image, key, render, *next));
        });
    }
    m_inFlight.insert(index);
    m_jobs << job;
    m_loadOf.insert(index, job);
    // Decoded here: another pane that wants it (a neighbour of its slice) waits for it rather than decoding it too.
    m_images->setPending(ref.key, true);
    m_pendingLoads.insert(ref.key);
    const quint64 generation = m_generation;
    connect(job, &Job::finished, this, [this, job, index, generation, key = ref.key] {
        m_jobs.removeOne(job);
        if (m_pendingLoads.remove(key) && (job->hasError() || generation != m_generation))
            m_images->setPending(key, false);  // given up: whoever waited decodes it
        if (generation != m_generation)
            return;  // an earlier series
        m_inFlight.remove(index);
        if (m_loadOf.value(index) == job)
            m_loadOf.remove(index);
        if (job->hasError()) {
            if (job->error().code() == ErrorCode::Corrupt && m_streamer) {
                // Damaged in the cache (and dropped there): never shown; fetched again from the archive.
                m_streamer->refetch(keyOf(index));
                if (index == m_slice)
                    m_viewport->clear(tr("Image %1 was damaged in the cache; fetching it again…").arg(index + 1));
                return;
            }
            if (job->error().code() != ErrorCode::Cancelled) {
                if (index == m_slice)
                    m_viewport->clear(job->error().toString());
                Q_EMIT errorOccurred(job->error());
            }
            return;
        }
        auto image = std::make_shared<const DecodedImage>(job->result().value().image);
        if (index == m_slice && job->result().value().frame)
            m_ready = job->result().value().frame;  // taken by present() if still right then
        learnGeometry(index, image->info);
        m_images->insert(keyOf(index), image);  // shown by onImageReady when it is in view and kept
        if (index == m_slice) {
            if (!m_images->contains(keyOf(index)))
                display(index, *image);  // too big to keep: shown all the same
            // Its neighbours after what already waits in the loop (another pane's first image): not decoded
            // on the two cores while that is being shown.
            QMetaObject::invokeMethod(this, [this, index, generation] {
                if (generation == m_generation && index == m_slice)
                    prefetchAround(index);
            }, Qt::QueuedConnection);
        }
    });
    job->start(ExecutionPolicy::Async);
}

void SeriesPane::prefetchAround(int index)
{
    // Nearest first, alternating below and above, a few at a time so the slice in view never waits long.
    for (int d = 1; d <= kPrefetchRadius && m_inFlight.size() < kMaxLoadsInFlight; ++d) {
        for (int candidate : {index + d, index - d}) {
            if (candidate >= 0 && candidate < sliceCount() && m_inFlight.size() < kMaxLoadsInFlight)
                requestLoad(candidate);
        }
    }
}

void SeriesPane::showWaiting(int index)
{
    const int cached = m_streamer ? m_streamer->cachedCount() : 0, total = m_streamer ? m_streamer->total() : 0;
    m_retryButton->hide();
    m_viewport->clear(tr("Fetching image %1 of %2 from %3…\n%4 of %5 images of the study are here")
                          .arg(index + 1).arg(sliceCount()).arg(m_streamer ? m_streamer->storeName() : QString())
                          .arg(cached).arg(total), true);
    updateOverlay(nullptr);
}

void SeriesPane::showFailure(int index)
{
    const QString key = keyOf(index);
    const Error why = m_streamer->failure(key);
    const int inMs = m_streamer->retryInMs();
    const bool again = StudyStreamer::isTransient(why) && m_streamer->failedForGood() < m_streamer->failedCount();
    const QString next = again && inMs >= 0
                             ? tr("Trying again in %1 s by itself.").arg(std::max(1, (inMs + 999) / 1000))
                         : again ? tr("Trying again…")
                                                           : tr("Not tried again by itself: Retry when the cause is fixed.");
    m_viewport->clear(tr("⚠ Image %1 of %2 could not be fetched from %3:\n%4\n%5")
                          .arg(index + 1).arg(sliceCount()).arg(m_streamer->storeName(), why.toString(), next), true);
    updateOverlay(nullptr);
    m_retryButton->show();
    if (!m_failureTick->isActive())
        m_failureTick->start();
}

void SeriesPane::showMissing(int index)
{
    if (m_streamer && m_streamer->isFailed(keyOf(index)))
        showFailure(index);
    else
        showWaiting(index);
}

void SeriesPane::setFilters(const FilterChain &chain, const QString &description)
{
    m_chain = chain;
    m_chainDescription = description;
    ++m_chainGeneration;
    // A decode still reading the arriving bytes ran the old chain: dropped, made again from the bytes with the new
    // one. One that has every byte is let finish: its original is kept (never decoded again), filtered anew.
    if (!(m_arriving && (m_arriving->finishing || m_arriving->ready)))
        dropArriving();
    if (m_series >= 0 && m_slice >= 0) {
        if (const std::shared_ptr<const DecodedImage> original = m_images->object(keyOf(m_slice)))
            display(m_slice, *original);
    }
}

void SeriesPane::display(int index, const DecodedImage &image)
{
    if (m_chain.isEmpty())
        return present(index, image);
    const QString filteredKey = ImageMemoryCache::filteredKey(keyOf(index), m_chainDescription);
    if (const std::shared_ptr<const DecodedImage> filtered = m_images->object(filteredKey))
        return present(index, image, *filtered);
    if (!isFilterable(image.pixels.format()))
        return present(index, image);  // real values (dose, maps) are shown as they are; the panel's chain does not apply
    if (m_images->isPending(filteredKey))
        return;  // another pane filters it: shown once it is kept (onImageReady)
    // Filtered on the blocking pool (drained before the store goes); shown once done. Marked pending meanwhile, so
    // that a pane showing the same image waits for it instead of filtering it again. The result is kept in the
    // memory cache even if this pane has gone meanwhile (a layout made again): the pane that replaces it finds it
    // there rather than filtering the image once more.
    m_images->setPending(filteredKey, true);
    const QPointer<SeriesPane> pane(this);
    ImageMemoryCache *images = m_images;
    const quint64 generation = m_generation, chainGeneration = m_chainGeneration;
    runOnPool<Result<PixelBuffer>>(blockingPool(), m_images, [chain = m_chain, image] {
        noteFiltered(image.info.identity.sopInstanceUid);
        return applyFilters(chain, image.pixels, image.info, nullptr);
    }, [pane, images, index, image, generation, chainGeneration, filteredKey](Result<PixelBuffer> &&pixels) {
        std::shared_ptr<DecodedImage> filtered;
        if (pixels.isOk()) {
            filtered = std::make_shared<DecodedImage>(DecodedImage{image.info, pixels.value()});
            filtered->info.columns = filtered->pixels.width();
            filtered->info.rows = filtered->pixels.height();
            images->insert(filteredKey, filtered);  // what it is made of is in its key: right whoever asked
        } else {
            images->setPending(filteredKey, false);  // given up: whoever waited filters it
        }
        if (!pane || generation != pane->m_generation || chainGeneration != pane->m_chainGeneration)
            return;  // gone, another series, or other filters, meanwhile
        if (!pixels.isOk()) {
            Q_EMIT pane->errorOccurred(pixels.error());
            if (index == pane->m_slice)  // never another slice under this one's number
                pane->present(index, image);
            return;
        }
        if (index == pane->m_slice)
            pane->present(index, image, *filtered);
    });
}

void SeriesPane::present(int index, const DecodedImage &image, const DecodedImage &filtered)
{
    m_retryButton->hide();
    m_failureTick->stop();
    if (m_arriving && m_arriving->key == m_study->series[m_series].instances[index].key)
        dropArriving();  // whole now
    m_viewport->layers()->setCompleteness(1.0);
    const QString key = m_study->series[m_series].instances[index].key;
    if (m_ready) {
        if (m_ready->key == key && filtered.pixels.isNull())
            m_viewport->showNextRendered(std::move(*m_ready));  // used if it is still what would be rendered
        m_ready.reset();
    }
    if (m_initialWindow) {
        m_viewport->showNextWith(*m_initialWindow);  // rendered once, with the protocol's preset
        m_initialWindow.reset();
        m_windowFromUser = true;  // kept while scrolling, as if the reader had set it
    }
    m_viewport->setImage(image, filtered, filtered.pixels.isNull() ? QString() : m_chainDescription,
                         m_windowFromUser || m_viewport->hasImage(), key);
    applyInitialWindow();
    // Stepped back into it (or End): its last frame — also when its preview was on screen already.
    if (m_enterAtLastFrame)
        m_viewport->setFrame(m_viewport->frameCount() - 1);
    m_enterAtLastFrame = false;
    updateOverlay(m_viewport->image().info);
    Q_EMIT imageShown(index);
}

void SeriesPane::updateOverlay(const ImageInfo *info)
{
    m_viewport->layers()->setOverlay(paneOverlayText(*m_study, PanePlace{m_series, m_slice, sliceCount(), m_comparisonLabel, m_comparisonPrior}, info));
}

void SeriesPane::resetView()
{
    m_windowFromUser = false;
    m_viewport->resetView();
}

} // namespace spectrum
