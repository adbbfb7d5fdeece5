#include "studyviewer.h"

#include "studylistmodel.h"

#include "spectrum/imaging/progressiveimage.h"
#include "spectrum/stores/imageloader.h"
#include "spectrum/stores/studystreamer.h"

#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QtConcurrent>
#include <QKeyEvent>
#include <QIcon>
#include <QListWidget>
#include <QPixmap>

namespace spectrum {

struct StudyViewer::Arriving
{
    QString key;
    std::shared_ptr<const QByteArray> bytes;    ///< destroyed after the decoder below, which reads it
    std::unique_ptr<ProgressiveImage> decoder;
};

namespace {
constexpr int kPrefetchRadius = 12;
constexpr int kMaxLoadsInFlight = 4;
} // namespace

StudyViewer::StudyViewer(BlobStore *store, const StudySummary &study, StudyStreamer *streamer, QWidget *parent)
    : QWidget(parent), m_store(store), m_streamer(streamer), m_study(study), m_seriesList(new QListWidget), m_viewport(new ImageViewport)
{
    if (m_streamer) {
        m_streamer->setParent(this);  // it fetches for this viewer, and stops with it
        connect(m_streamer, &StudyStreamer::instanceCached, this, &StudyViewer::onInstanceCached);
        connect(m_streamer, &StudyStreamer::instanceArriving, this,
                [this](const QString &key, std::shared_ptr<const QByteArray> bytes, qint64 end, qint64) { onInstanceArriving(key, std::move(bytes), end); });
        connect(m_streamer, &StudyStreamer::instanceFailed, this, [this](const QString &key, const Error &e) {
            if (m_series >= 0 && m_slice >= 0 && m_study.series[m_series].instances[m_slice].key == key)
                m_viewport->clear(tr("Image %1 could not be fetched: %2").arg(m_slice + 1).arg(e.toString()));
            Q_EMIT errorOccurred(e);
        });
        connect(m_streamer, &StudyStreamer::progress, this, [this] {
            if (m_slice >= 0 && !m_viewport->hasImage() && !m_inFlight.contains(m_slice)
                && !m_streamer->isCached(m_study.series[m_series].instances[m_slice].key))
                showWaiting(m_slice);  // how much of the study is here, kept current
        });
    }
    m_cache.setMaxCost(768 * 1024);  // KiB of decoded pixels kept per open study
    m_filtered.setMaxCost(128 * 1024);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_seriesList->setFixedWidth(220);
    m_seriesList->setIconSize(QSize(96, 96));
    m_seriesList->setObjectName(QStringLiteral("seriesList"));
    for (const SeriesSummary &s : m_study.series) {
        m_seriesList->addItem(tr("%1 %2\n%3 image(s)")
                                  .arg(s.modality, s.description.isEmpty() ? tr("Series %1").arg(s.seriesNumber) : s.description)
                                  .arg(s.instances.size()));
    }
    layout->addWidget(m_seriesList);
    layout->addWidget(m_viewport, 1);
    setFocusProxy(m_viewport);

    connect(m_seriesList, &QListWidget::currentRowChanged, this, &StudyViewer::showSeries);
    connect(m_viewport, &ImageViewport::sliceStepRequested, this, &StudyViewer::stepSlice);
    connect(m_viewport, &ImageViewport::windowChanged, this, [this] { m_windowFromUser = true; });
    m_cine.setInterval(1000 / m_cineRate);
    connect(&m_cine, &QTimer::timeout, this, [this] {
        // The next slice once the one in view is on screen; a slow load holds the cine back, never skips.
        if (sliceCount() > 1 && m_viewport->hasImage() && !m_inFlight.contains(m_slice))
            showSlice(m_slice + 1 < sliceCount() ? m_slice + 1 : 0);
    });
    // Thumbnails: each series' middle image, as soon as one of its images is here.
    for (int i = 0; i < m_study.series.size(); ++i) {
        const QList<InstanceRef> &in = m_study.series[i].instances;
        if (in.isEmpty())
            continue;
        if (!m_streamer || m_streamer->isCached(in[in.size() / 2].key)) {
            requestThumbnail(i, in[in.size() / 2].key);
        } else {
            for (const InstanceRef &r : in) {
                if (m_streamer->isCached(r.key)) {
                    requestThumbnail(i, r.key);
                    break;
                }
            }
        }
    }
    if (!m_study.series.isEmpty())
        m_seriesList->setCurrentRow(0);
    else
        m_viewport->clear(tr("This study has no images."));
}

StudyViewer::~StudyViewer()
{
    ++m_generation;  // results that still arrive belong to nobody
    const QList<Job *> jobs = m_jobs;  // cancelling reports back, which edits m_jobs
    for (Job *job : jobs)
        job->cancel();
}

int StudyViewer::sliceCount() const
{
    return m_series >= 0 ? int(m_study.series[m_series].instances.size()) : 0;
}

void StudyViewer::showSeries(int seriesIndex)
{
    if (seriesIndex < 0 || seriesIndex >= m_study.series.size() || seriesIndex == m_series)
        return;
    ++m_generation;
    const QList<Job *> jobs = m_jobs;  // cancelling reports back, which edits m_jobs
    for (Job *job : jobs)
        job->cancel();
    m_jobs.clear();
    m_inFlight.clear();
    m_cache.clear();
    m_filtered.clear();
    m_series = seriesIndex;
    m_slice = -1;
    m_windowFromUser = false;
    if (m_seriesList->currentRow() != seriesIndex)
        m_seriesList->setCurrentRow(seriesIndex);
    m_viewport->clear(tr("Loading…"));
    // Open a stack in its middle, where the anatomy is; a single image is its own middle.
    showSlice(sliceCount() / 2);
}

void StudyViewer::showSlice(int index)
{
    if (sliceCount() == 0)
        return;
    index = std::clamp(index, 0, sliceCount() - 1);
    if (index == m_slice && m_viewport->hasImage())
        return;
    m_slice = index;
    if (m_arriving && m_arriving->key != m_study.series[m_series].instances[index].key)
        m_arriving.reset();  // its decode is no longer wanted on screen
    if (m_streamer)
        m_streamer->setFocus(m_series, index);  // fetched next, then its neighbours
    if (DecodedImage *cached = m_cache.object(index))
        display(index, *cached);
    else
        requestLoad(index);
    prefetchAround(index);
}

void StudyViewer::requestLoad(int index)
{
    if (m_inFlight.contains(index) || m_cache.contains(index))
        return;
    const InstanceRef &ref = m_study.series[m_series].instances[index];
    if (m_streamer && !m_streamer->isCached(ref.key)) {
        if (index == m_slice)
            showWaiting(index);
        return;  // loaded when it is cached (onInstanceCached)
    }
    auto *job = loadImage(m_store, ref.key);
    m_inFlight.insert(index);
    m_jobs << job;
    const quint64 generation = m_generation;
    connect(job, &Job::finished, this, [this, job, index, generation] {
        m_jobs.removeOne(job);
        if (generation != m_generation)
            return;  // an earlier series
        m_inFlight.remove(index);
        if (job->hasError()) {
            if (job->error().code() != ErrorCode::Cancelled) {
                if (index == m_slice)
                    m_viewport->clear(job->error().toString());
                Q_EMIT errorOccurred(job->error());
            }
            return;
        }
        auto *image = new DecodedImage(job->result().value());
        const int costKiB = int(std::max<qint64>(1, image->pixels.frameBytes() * image->pixels.frames() / 1024));
        const bool isCurrent = index == m_slice;
        if (isCurrent)
            display(index, *image);
        m_cache.insert(index, image, costKiB);
        if (isCurrent)
            prefetchAround(index);
    });
    job->start(ExecutionPolicy::Async);
}

void StudyViewer::prefetchAround(int index)
{
    // Nearest first, alternating below and above, a few at a time so the slice in view never waits long.
    for (int d = 1; d <= kPrefetchRadius && m_inFlight.size() < kMaxLoadsInFlight; ++d) {
        for (int candidate : {index + d, index - d}) {
            if (candidate >= 0 && candidate < sliceCount() && m_inFlight.size() < kMaxLoadsInFlight)
                requestLoad(candidate);
        }
    }
}

void StudyViewer::showWaiting(int index)
{
    const int cached = m_streamer ? m_streamer->cachedCount() : 0, total = m_streamer ? m_streamer->total() : 0;
    m_viewport->clear(tr("Fetching image %1 of %2 from %3…\n%4 of %5 images of the study are here")
                          .arg(index + 1).arg(sliceCount()).arg(m_streamer ? m_streamer->storeName() : QString())
                          .arg(cached).arg(total));
}

void StudyViewer::onInstanceArriving(const QString &key, std::shared_ptr<const QByteArray> bytes, qint64 end)
{
    if (m_series < 0 || m_slice < 0 || m_cache.contains(m_slice) || m_study.series[m_series].instances[m_slice].key != key)
        return;  // only the slice in view is shown while it arrives
    if (!m_arriving || m_arriving->key != key) {
        m_arriving = std::make_unique<Arriving>();
        m_arriving->key = key;
        m_arriving->bytes = bytes;
        m_arriving->decoder = std::make_unique<ProgressiveImage>(m_chain);  // filtered while it arrives
        m_arriving->decoder->enablePreviews(40);
        connect(m_arriving->decoder.get(), &ProgressiveImage::previewReady, this,
                [this, key](const DecodedImage &image, int rows) { onPreview(key, image, rows); });
    }
    if (m_arriving->bytes == bytes)
        m_arriving->decoder->bytesAvailable(bytes->constData(), end);
}

void StudyViewer::onPreview(const QString &key, const DecodedImage &image, int rows)
{
    if (m_series < 0 || m_slice < 0 || m_cache.contains(m_slice) || m_study.series[m_series].instances[m_slice].key != key)
        return;  // scrolled on, or the whole image is here already
    if (image.info.identity.sopInstanceUid != m_study.series[m_series].instances[m_slice].sopInstanceUid)
        return;  // never another instance under this slice's number
    const double fraction = image.info.rows > 0 ? double(rows) / image.info.rows : 0;
    m_viewport->setImage(image, m_windowFromUser || m_viewport->hasImage(), key);
    m_viewport->setCompleteness(std::min(fraction, 0.99));  // complete once checked and cached
    updateOverlay(image.info);
    Q_EMIT previewShown(m_slice, fraction);
}

void StudyViewer::requestThumbnail(int series, const QString &key)
{
    if (m_thumbnailsAsked.contains(series))
        return;
    m_thumbnailsAsked.insert(series);
    auto *watcher = new QFutureWatcher<QImage>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, series] {
        watcher->deleteLater();
        const QImage thumb = watcher->result();
        if (thumb.isNull()) {
            m_thumbnailsAsked.remove(series);  // another image of it may do
            return;
        }
        m_thumbnails.insert(series, thumb);
        if (QListWidgetItem *item = m_seriesList->item(series))
            item->setIcon(QIcon(QPixmap::fromImage(thumb)));
        Q_EMIT thumbnailReady(series);
    });
    // On the blocking pool, which the workstation drains before its store goes.
    watcher->setFuture(QtConcurrent::run(blockingPool(), [store = m_store, key]() -> QImage {
        Result<DecodedImage> image = runSync(loadImage(store, key));
        if (!image.isOk())
            return QImage();
        return renderFrame(image.value(), 0, defaultWindow(image.value())).scaled(96, 96, Qt::KeepAspectRatio, Qt::SmoothTransformation);
    }));
}

void StudyViewer::onInstanceCached(const QString &key)
{
    for (int s = 0; s < m_study.series.size(); ++s) {  // the first image of a series to arrive gives its thumbnail
        if (m_thumbnailsAsked.contains(s))
            continue;
        for (const InstanceRef &r : m_study.series[s].instances) {
            if (r.key == key) {
                requestThumbnail(s, key);
                break;
            }
        }
    }
    if (m_series < 0)
        return;
    const QList<InstanceRef> &instances = m_study.series[m_series].instances;
    for (int i = 0; i < instances.size(); ++i) {
        if (instances[i].key != key)
            continue;
        if (i == m_slice)
            requestLoad(i);  // the slice in view: shown as soon as it is decoded
        else if (std::abs(i - m_slice) <= kPrefetchRadius)
            requestLoad(i);
        return;
    }
}

void StudyViewer::setFilters(const FilterChain &chain, const QString &description)
{
    m_chain = chain;
    m_chainDescription = description;
    ++m_chainGeneration;
    m_filtered.clear();
    m_arriving.reset();  // its decode ran the old chain
    if (m_series >= 0 && m_slice >= 0) {
        if (DecodedImage *original = m_cache.object(m_slice))
            display(m_slice, *original);
    }
}

void StudyViewer::display(int index, const DecodedImage &image)
{
    if (m_chain.isEmpty())
        return present(index, image);
    if (DecodedImage *filtered = m_filtered.object(index))
        return present(index, *filtered);
    // Filtered on the pool; the slice shows once it is done (a few milliseconds for a CT slice).
    auto *watcher = new QFutureWatcher<Result<PixelBuffer>>(this);
    const quint64 generation = m_generation, chainGeneration = m_chainGeneration;
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, index, image, generation, chainGeneration] {
        watcher->deleteLater();
        if (generation != m_generation || chainGeneration != m_chainGeneration)
            return;  // another series, or other filters, meanwhile
        const Result<PixelBuffer> pixels = watcher->result();
        if (!pixels.isOk()) {
            Q_EMIT errorOccurred(pixels.error());
            return present(index, image);
        }
        DecodedImage filtered{image.info, pixels.value()};
        filtered.info.columns = filtered.pixels.width();
        filtered.info.rows = filtered.pixels.height();
        m_filtered.insert(index, new DecodedImage(filtered), int(std::max<qint64>(1, filtered.pixels.frameBytes() / 1024)));
        if (index == m_slice)
            present(index, filtered);
    });
    watcher->setFuture(QtConcurrent::run(blockingPool(), [chain = m_chain, image] { return applyFilters(chain, image.pixels, image.info, nullptr); }));
}

void StudyViewer::present(int index, const DecodedImage &image)
{
    if (m_arriving && m_arriving->key == m_study.series[m_series].instances[index].key)
        m_arriving.reset();  // whole now
    m_viewport->setCompleteness(1.0);
    m_viewport->setImage(image, m_windowFromUser || m_viewport->hasImage(), m_study.series[m_series].instances[index].key);
    updateOverlay(image.info);
    Q_EMIT imageShown(index);
}

void StudyViewer::updateOverlay(const ImageInfo &info)
{
    const DicomIdentity &id = m_study.identity;
    const SeriesSummary &series = m_study.series[m_series];
    ViewportOverlay o;
    o.topLeft = tr("%1\nID %2\n%3  %4")
                    .arg(DicomIdentity::displayName(id.patientName), id.patientId,
                         StudyListModel::formatDate(id.patientBirthDate), id.patientSex);
    o.topRight = tr("%1\n%2\n%3 %4")
                     .arg(id.studyDescription, StudyListModel::formatDate(id.studyDate), series.modality,
                          series.description);
    QString position;
    if (info.hasPosition)
        position = tr("\nPos %1 mm  Thk %2 mm").arg(info.slicePositionAlongNormal(), 0, 'f', 1).arg(info.sliceThickness, 0, 'f', 2);
    o.bottomLeft = tr("Im %1/%2%3\n%4 × %5")
                       .arg(m_slice + 1).arg(sliceCount()).arg(position).arg(info.columns).arg(info.rows);
    if (!m_chain.isEmpty())
        o.bottomLeft += tr("\nFiltered: %1").arg(m_chainDescription);
    m_viewport->setOverlay(o);
}

void StudyViewer::setCinePlaying(bool playing)
{
    if (playing == m_cine.isActive())
        return;
    if (playing)
        m_cine.start();
    else
        m_cine.stop();
    Q_EMIT cineChanged(playing, m_cineRate);
}

void StudyViewer::setCineRate(int framesPerSecond)
{
    m_cineRate = std::clamp(framesPerSecond, 1, 60);
    m_cine.setInterval(1000 / m_cineRate);
    Q_EMIT cineChanged(m_cine.isActive(), m_cineRate);
}

void StudyViewer::resetView()
{
    m_windowFromUser = false;
    m_viewport->resetView();
}

void StudyViewer::keyPressEvent(QKeyEvent *event)
{
    switch (event->key()) {
    case Qt::Key_Up:
    case Qt::Key_Left: stepSlice(-1); break;
    case Qt::Key_Down:
    case Qt::Key_Right: stepSlice(1); break;
    case Qt::Key_PageUp: stepSlice(-10); break;
    case Qt::Key_PageDown: stepSlice(10); break;
    case Qt::Key_Home: showSlice(0); break;
    case Qt::Key_End: showSlice(sliceCount() - 1); break;
    default: QWidget::keyPressEvent(event); return;
    }
    event->accept();
}

} // namespace spectrum
