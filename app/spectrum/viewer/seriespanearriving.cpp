// SPDX-License-Identifier: Apache-2.0
// A pane's images as they come, as the study's decoder tells of them (StudyDecoder): decoded into the memory cache
// (shown when in view), previews of the slice in view while it arrives, failures to fetch or read, the stream's
// progress. The pane decodes nothing itself: it finds what the decoder kept, and shows it.

#include "viewer/seriespane.h"

#include "spectrum/stores/reading/studystreamer.h"

#include <QPushButton>

namespace spectrum {

QList<int> SeriesPane::indicesOf(const QString &key) const
{
    QList<int> out;
    if (m_series < 0)
        return out;
    const QList<InstanceRef> &instances = m_study->series[m_series].instances;
    for (int i = 0; i < instances.size(); ++i) {
        if (instances[i].key == key)
            out << i;
    }
    return out;
}

void SeriesPane::updateView()
{
    if (m_series < 0 || m_slice < 0)
        return m_decoder->setView(this, QString());
    // Rendered on the pool as it is read, when the viewport would show it as it is: unfiltered, not inverted.
    const bool render = m_chain.isEmpty() && !m_viewport->isInverted();
    if (render)
        noteWindowForNext();
    m_decoder->setView(this, keyOf(m_slice), keysNear(m_slice), render ? m_nextWindow : nullptr);
}

QSet<QString> SeriesPane::keysNear(int index) const
{
    return keysNearIn(m_series, index);
}

QSet<QString> SeriesPane::keysNearIn(int series, int index) const
{
    QSet<QString> near;
    const QList<InstanceRef> &instances = m_study->series[series].instances;
    for (int i = std::max(0, index - kPrefetchRadius); i <= std::min(int(instances.size()) - 1, index + kPrefetchRadius); ++i)
        near.insert(instances[i].key);
    return near;
}

void SeriesPane::onStreamProgress()
{
    StudyStreamer *streamer = m_streamer;
    if (streamer && m_series >= 0 && m_slice >= 0 && !m_viewport->hasImage() && !m_inFlight.contains(keyOf(m_slice))
        && streamer->isAwaited(keyOf(m_slice)))
        showMissing(m_slice);  // how much of the study is here, or why the slice is not, kept current
}

void SeriesPane::onFetchFailed(const QString &key, const Error &)
{
    if (m_series >= 0 && m_slice >= 0 && keyOf(m_slice) == key)
        showFailure(m_slice);  // what arrived of it is not shown as if it were the image
}

void SeriesPane::onDecodeFailed(const QString &key, const Error &error)
{
    if (m_series < 0 || m_slice < 0)
        return;
    if (key.contains(QLatin1Char('\n'))) {
        // The filters failed on the slice in view: said, and the image shown as it is.
        if (m_chain.isEmpty() || key != ImageMemoryCache::filteredKey(keyOf(m_slice), m_chainDescription))
            return;
        Q_EMIT errorOccurred(error);
        if (const std::shared_ptr<const DecodedImage> original = m_images->peek(keyOf(m_slice)))
            present(m_slice, *original);
        return;
    }
    if (error.code() == ErrorCode::Cancelled) {
        m_inFlight.remove(key);  // asked again when it is wanted
        return;
    }
    // A copy damaged in the cache is dropped there, never shown, and fetched again from the study's archive.
    const bool fetchedAgain = error.code() == ErrorCode::Corrupt && m_streamer;
    const bool asked = m_inFlight.remove(key);
    for (int index : indicesOf(key)) {
        if (index == m_slice)
            m_viewport->clear(fetchedAgain ? tr("Image %1 was damaged in the cache; fetching it again…").arg(index + 1) : error.toString());
        if ((asked || index == m_slice) && !fetchedAgain)
            Q_EMIT errorOccurred(error);
    }
}

void SeriesPane::onTooLarge(const QString &key, const std::shared_ptr<const DecodedImage> &original, const std::shared_ptr<const DecodedImage> &filtered,
                            const QString &chainDescription)
{
    m_inFlight.remove(key);
    for (int index : indicesOf(key)) {
        if (index != m_slice)
            continue;
        learnGeometry(index, original->info);
        // Larger than the memory the workstation may use for images: not kept, shown all the same.
        if (filtered && !m_chain.isEmpty() && chainDescription == m_chainDescription)  // never under other filters' name
            present(index, *original, *filtered);
        else
            display(index, original);
    }
}

void SeriesPane::onImageReady(const QString &key)
{
    if (m_series < 0 || m_slice < 0)
        return;
    if (key.contains(QLatin1Char('\n'))) {
        // A filtered image made (or given up): the slice in view shown with it, or filtered again.
        if (m_chain.isEmpty() || key != ImageMemoryCache::filteredKey(keyOf(m_slice), m_chainDescription))
            return;
        const bool showing = m_viewport->hasImage() && m_viewport->layers()->completeness() >= 1.0 && m_viewport->isFiltered()
                             && m_viewport->image().info.identity.sopInstanceUid == m_study->series[m_series].instances[m_slice].sopInstanceUid;
        if (showing)
            return;
        if (const std::shared_ptr<const DecodedImage> original = m_images->peek(keyOf(m_slice)))
            display(m_slice, original);
        else
            requestLoad(m_slice);  // the original went from memory meanwhile: read again, then filtered
        return;
    }
    m_inFlight.remove(key);
    for (int i : indicesOf(key)) {
        const bool showing = i == m_slice && m_viewport->hasImage() && m_viewport->layers()->completeness() >= 1.0
                             && m_viewport->image().info.identity.sopInstanceUid == m_study->series[m_series].instances[i].sopInstanceUid;
        if (const std::shared_ptr<const DecodedImage> image = m_images->peek(key)) {
            learnGeometry(i, image->info);
            if (i == m_slice && !showing) {
                display(i, m_images->object(key));
                // Its neighbours after what already waits in the loop (another pane's first image): not decoded on
                // the two cores while that is being shown.
                QMetaObject::invokeMethod(this, [this, i, generation = m_generation] {
                    if (generation == m_generation && i == m_slice)
                        prefetchAround(i);
                }, Qt::QueuedConnection);
            }
        } else if (!showing && std::abs(i - m_slice) <= kPrefetchRadius) {
            requestLoad(i);  // its decode gave up: asked again (the decoder reads it from the cache)
        }
    }
}

void SeriesPane::onPreview(const QString &key, const DecodedImage &image, int rows, const DecodedImage &original, int originalRows,
                           const QString &chainDescription)
{
    if (m_series < 0 || m_slice < 0 || isDecoded(m_slice) || keyOf(m_slice) != key)
        return;  // scrolled on, or the whole image is here already
    if (image.info.identity.sopInstanceUid != m_study->series[m_series].instances[m_slice].sopInstanceUid)
        return;  // never another instance under this slice's number
    if (chainDescription != (m_chain.isEmpty() ? QString() : m_chainDescription))
        return;  // never under other filters' name
    const double fraction = image.info.rows > 0 ? double(rows) / image.info.rows : 0;
    // The values (and the geometry) are the decoded rows', never the filtered ones'.
    m_viewport->setImage(original, image, chainDescription, m_windowFromUser || m_viewport->hasImage(), key, originalRows);
    applyInitialWindow();
    m_viewport->layers()->setCompleteness(std::min(fraction, 0.99));  // complete once checked and cached
    m_retryButton->hide();
    updateOverlay(original.info);
    Q_EMIT previewShown(m_slice, fraction);
}

} // namespace spectrum
