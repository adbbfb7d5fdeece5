// SPDX-License-Identifier: Apache-2.0
#include "viewer/seriespane.h"
#include "viewer/paneoverlaytext.h"

#include "spectrum/stores/reading/studystreamer.h"

#include <QDragEnterEvent>
#include <QHBoxLayout>
#include <QScrollBar>
#include <QDropEvent>
#include <QMimeData>
#include <QPushButton>
#include <QVBoxLayout>

#include <utility>

namespace spectrum {

SeriesPane::SeriesPane(StudyDecoder *decoder, ImageMemoryCache *images, const StudySummary *study, QWidget *parent)
    : QFrame(parent), m_decoder(decoder), m_study(study), m_streamer(decoder->streamer()), m_viewport(new ImageViewport), m_images(images),
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
    // The study's one channel: the decoder says what is decoded, arriving, failed; the pane finds and shows it.
    connect(m_decoder, &StudyDecoder::ready, this, &SeriesPane::onImageReady);
    connect(m_decoder, &StudyDecoder::previewReady, this, &SeriesPane::onPreview);
    connect(m_decoder, &StudyDecoder::prerendered, this, [this](const QString &key, const PrerenderedFrame &frame) {
        if (m_series >= 0 && m_slice >= 0 && keyOf(m_slice) == key)
            m_ready = frame;  // taken by present() if still right then
    });
    connect(m_decoder, &StudyDecoder::tooLarge, this, &SeriesPane::onTooLarge);
    connect(m_decoder, &StudyDecoder::fetchFailed, this, &SeriesPane::onFetchFailed);
    connect(m_decoder, &StudyDecoder::decodeFailed, this, &SeriesPane::onDecodeFailed);
    if (m_streamer)
        connect(m_decoder, &StudyDecoder::progressed, this, &SeriesPane::onStreamProgress);
}

SeriesPane::~SeriesPane()
{
    detach();
}

void SeriesPane::detach()
{
    if (std::exchange(m_detached, true))
        return;
    disconnect(m_decoder, nullptr, this, nullptr);  // its signals must not reach a pane gone, or going
    ++m_generation;  // results that still arrive belong to nobody
    m_inFlight.clear();
    m_decoder->forget(this);  // what only this pane asked for is given up
}

void SeriesPane::setActive(bool active)
{
    m_activeFrame = active;
    // The active pane in blue; a prior's panes in amber, so the two studies are told apart at a glance.
    const QString colour = active ? QStringLiteral("#3d7fd6") : m_comparisonPrior ? QStringLiteral("#8a6a1c") : QStringLiteral("#101010");
    const QString sheet = QStringLiteral("spectrum--SeriesPane { border: 2px solid %1; }").arg(colour);
    if (sheet != styleSheet())
        setStyleSheet(sheet);  // only when it changes: a new style sheet polishes the pane and all it holds again (every wheel notch asks)
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
    m_decoder->release(this, {}, true);
    m_inFlight.clear();
    m_ready.reset();
}

void SeriesPane::relocate(int series, int slice)
{
    // The study laid out again (as it streams in, every half second): the reads and decodes this pane asked for
    // near its image go on — results come by key, found in the new numbering —, the others stop. (Dropping them
    // all would start the slice in view's decode afresh each time: a slow one would never end while the study
    // arrives.)
    ++m_generation;  // a prefetch queued in the old numbering is not made
    const bool near = series >= 0 && series < m_study->series.size() && slice >= 0 && slice < m_study->series[series].instances.size();
    const QSet<QString> keep = near ? keysNearIn(series, slice) : QSet<QString>();
    m_decoder->release(this, keep, true);
    m_inFlight.intersect(keep);
    if (m_ready && !keep.contains(m_ready->key))
        m_ready.reset();
    m_centres.clear();
    m_placedByHeader.clear();
    m_frameOfReference.clear();
    if (series < 0 || series >= m_study->series.size()) {
        m_series = -1;
        m_slice = -1;
        updateView();  // nothing in view
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
    // Still arriving, it stays on screen as it was: its place in the stack said in the new numbering at once.
    if (m_slice >= 0 && m_viewport->hasImage() && m_viewport->image().info.identity.sopInstanceUid == m_study->series[series].instances[m_slice].sopInstanceUid)
        updateOverlay(m_viewport->image().info);
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
    // What was asked for far from the new place is no longer wanted (what is being read goes on, and is kept) —
    // unless nothing was shown yet (a linked pane put at the level of the one it follows): then what was asked for
    // the first place is not wanted before the slice in view, and stops.
    const bool placedElsewhere = !m_viewport->hasImage() && m_slice >= 0 && index != m_slice;
    m_decoder->release(this, keysNear(index), placedElsewhere);
    if (placedElsewhere)
        m_inFlight.intersect(keysNear(index));
    m_slice = index;
    updateView();  // the decode of the slice that was in view while it arrived is no longer wanted on screen
    Q_EMIT sliceChanged(m_series, index);
    if (m_holding)
        return;  // placed; loaded once released
    if (const std::shared_ptr<const DecodedImage> cached = m_images->object(keyOf(index))) {
        learnGeometry(index, cached->info);
        display(index, cached);
    } else {
        requestLoad(index);
        if (m_inFlight.contains(keyOf(index)))
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
    const QString key = keyOf(index);
    if (m_inFlight.contains(key) && m_decoder->isLoading(key))
        return;
    m_inFlight.remove(key);
    if (const std::shared_ptr<const DecodedImage> decoded = m_images->peek(key)) {
        learnGeometry(index, decoded->info);  // decoded for another pane
        return;
    }
    if (index == m_slice)
        noteWindowForNext();  // a read from the cache renders it with the window it will be shown with
    switch (m_decoder->load(this, key)) {
    case StudyDecoder::Load::Here:
        return;
    case StudyDecoder::Load::Started:
        m_inFlight.insert(key);  // shown once it is in memory (onImageReady)
        return;
    case StudyDecoder::Load::Coming:
        // Being decoded (arriving, just fetched, for another pane), or not here yet: shown once it is. Until then the
        // slice in view says what it waits for — unless it is on screen already while it arrives.
        if (index == m_slice && m_streamer && m_streamer->isAwaited(key)
            && !(m_viewport->hasImage() && m_viewport->image().info.identity.sopInstanceUid == m_study->series[m_series].instances[index].sopInstanceUid))
            showMissing(index);
        return;
    }
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
    m_decoder->setFilters(chain, description);  // what it decodes from now on is filtered with them as it goes
    updateView();  // rendered on the pool only without filters
    if (m_series >= 0 && m_slice >= 0) {
        if (const std::shared_ptr<const DecodedImage> original = m_images->object(keyOf(m_slice)))
            display(m_slice, original);
    }
}

void SeriesPane::display(int index, const std::shared_ptr<const DecodedImage> &image)
{
    if (m_chain.isEmpty())
        return present(index, *image);
    const QString filteredKey = ImageMemoryCache::filteredKey(keyOf(index), m_chainDescription);
    if (const std::shared_ptr<const DecodedImage> filtered = m_images->object(filteredKey))
        return present(index, *image, *filtered);
    if (!isFilterable(image->pixels.format()))
        return present(index, *image);  // real values (dose, maps) are shown as they are; the panel's chain does not apply
    // Filtered once by the decoder (whichever pane asks), kept in memory, and shown once it is (onImageReady).
    m_decoder->filter(keyOf(index), image, m_chain, m_chainDescription);
}

void SeriesPane::present(int index, const DecodedImage &image, const DecodedImage &filtered)
{
    m_retryButton->hide();
    m_failureTick->stop();
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
