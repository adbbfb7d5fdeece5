// SPDX-License-Identifier: Apache-2.0
// A pane's images while they arrive: the stream's progress and failures, the slice in view decoded (and filtered)
// as its bytes come and committed once the instance is checked and cached, previews, and cached instances shown.

#include "viewer/seriespane.h"
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

namespace spectrum {

void SeriesPane::onStreamProgress()
{
    if (m_series >= 0 && m_slice >= 0 && !m_viewport->hasImage() && !m_inFlight.contains(m_slice)
        && (!m_streamer->isListed() || m_streamer->isListed(keyOf(m_slice))) && !m_streamer->isCached(keyOf(m_slice)))
        showMissing(m_slice);  // how much of the study is here, or why the slice is not, kept current
}

void SeriesPane::onInstanceFailed(const QString &key, const Error &)
{
    if (m_series >= 0 && m_slice >= 0 && keyOf(m_slice) == key) {
        dropArriving();  // what arrived of it is not shown as if it were the image
        showFailure(m_slice);
    }
}

void SeriesPane::onInstanceArriving(const QString &key, const Arrival &arrival)
{
    if (m_series < 0 || m_slice < 0 || isDecoded(m_slice) || keyOf(m_slice) != key)
        return;  // only the slice in view is shown while it arrives
    if (m_arriving && m_arriving->key == key && m_arriving->buffer != arrival.buffer)
        dropArriving();  // another request for it (fetched again): its own bytes, its own decoder
    if (!m_arriving || m_arriving->key != key) {
        if (m_images->isPending(key))
            return;  // another pane decodes it while it arrives
        dropArriving();
        m_arriving = std::make_unique<Arriving>();
        m_arriving->key = key;
        m_arriving->serial = ++m_arrivalSerial;
        m_arriving->buffer = arrival.buffer;
        m_arriving->chainGeneration = m_chainGeneration;
        m_arriving->decoder = std::make_unique<ProgressiveImage>(m_chain);  // filtered while it arrives
        m_arriving->decoder->enablePreviews(40);
        m_images->setPending(key, true);
        ProgressiveImage *decoder = m_arriving->decoder.get();
        const quint64 serial = m_arriving->serial;
        // Queued signals of a decoder already dropped still arrive: only this arrival's count.
        auto current = [this, serial] { return m_arriving && m_arriving->serial == serial; };
        connect(decoder, &ProgressiveImage::previewReady, this,
                [this, key, current](const DecodedImage &image, int rows, const DecodedImage &original, int originalRows) {
                    if (current() && m_arriving->chainGeneration == m_chainGeneration)  // never under other filters' name
                        onPreview(key, image, rows, original, originalRows);
                });
        connect(decoder, &ProgressiveImage::finished, this, [this, current](const DecodedImage &original, const DecodedImage &filtered) {
            if (!current())
                return;
            m_arriving->original = std::make_shared<const DecodedImage>(original);
            m_arriving->filtered = std::make_shared<const DecodedImage>(filtered);
            m_arriving->ready = true;
            commitArriving();
        });
        connect(decoder, &ProgressiveImage::failed, this, [this, key, current](const Error &) {
            if (!current())
                return;
            // Not decodable while it arrives (real values under filters, say): read from the cache once there.
            const bool cached = m_arriving->cached;
            dropArriving();
            if (cached)
                onInstanceCached(key);
        });
    }
    if (m_arriving->finishing)
        return;
    m_arriving->decoder->bytesAvailable(arrival);
    if (arrival.isComplete()) {
        m_arriving->finishing = true;
        m_arriving->decoder->finishAsync();
    }
}

bool SeriesPane::wants(const QString &key) const
{
    if (m_series < 0 || m_slice < 0)
        return false;
    const QList<InstanceRef> &instances = m_study->series[m_series].instances;
    for (int d = 0; d <= kPrefetchRadius; ++d) {
        for (int i : {m_slice + d, m_slice - d}) {
            if (i >= 0 && i < instances.size() && instances[i].key == key)
                return true;
        }
    }
    return false;
}

void SeriesPane::dropArriving()
{
    if (!m_arriving)
        return;
    const QString key = m_arriving->key;
    const bool kept = m_images->contains(key);
    m_arriving.reset();
    if (!kept)
        m_images->setPending(key, false);  // whoever waited for it decodes it
}

void SeriesPane::commitArriving()
{
    if (!m_arriving || !m_arriving->ready || !m_arriving->cached)
        return;  // shown as whole only once it is checked and kept, and decoded
    const QString key = m_arriving->key;
    const std::shared_ptr<const DecodedImage> original = m_arriving->original, filtered = m_arriving->filtered;
    // Filtered with the chain in use, unless other filters were chosen while it finished: then only its original.
    const bool filteredMade = m_arriving->chainGeneration == m_chainGeneration && !m_chain.isEmpty() && isFilterable(original->pixels.format());
    int index = -1;
    if (m_series >= 0) {
        const QList<InstanceRef> &instances = m_study->series[m_series].instances;
        for (int i = 0; i < instances.size() && index < 0; ++i)
            index = instances[i].key == key ? i : -1;
    }
    if (index >= 0 && original->info.identity.sopInstanceUid != m_study->series[m_series].instances[index].sopInstanceUid) {
        // What arrived on this request is not the instance it was asked for: never shown under its number; the
        // cache holds the checked one.
        dropArriving();
        return requestLoad(index);
    }
    m_arriving.reset();
    if (index == m_slice && ImageMemoryCache::costOf(*original) > m_images->budget())
        filteredMade ? present(index, *original, *filtered) : display(index, *original);  // too big to keep: shown all the same
    // The filtered version first: the pane that sees the original inserted finds it, and filters nothing.
    if (filteredMade)
        m_images->insert(ImageMemoryCache::filteredKey(key, m_chainDescription), filtered);
    m_images->insert(key, original);  // onImageReady shows it
}

void SeriesPane::onImageReady(const QString &key)
{
    if (m_series < 0 || m_slice < 0)
        return;
    if (key.contains(QLatin1Char('\n'))) {
        // A filtered image another pane made (or gave up making): the slice in view shown with it, or filtered here.
        if (m_chain.isEmpty() || key != ImageMemoryCache::filteredKey(keyOf(m_slice), m_chainDescription))
            return;
        const bool showing = m_viewport->hasImage() && m_viewport->layers()->completeness() >= 1.0 && m_viewport->isFiltered()
                             && m_viewport->image().info.identity.sopInstanceUid == m_study->series[m_series].instances[m_slice].sopInstanceUid;
        if (showing)
            return;
        if (const std::shared_ptr<const DecodedImage> original = m_images->peek(keyOf(m_slice)))
            display(m_slice, *original);
        else
            requestLoad(m_slice);  // the original went from memory meanwhile: read again, then filtered
        return;
    }
    const QList<InstanceRef> &instances = m_study->series[m_series].instances;
    for (int i = 0; i < instances.size(); ++i) {
        if (instances[i].key != key)
            continue;
        const bool showing = i == m_slice && m_viewport->hasImage() && m_viewport->layers()->completeness() >= 1.0
                             && m_viewport->image().info.identity.sopInstanceUid == instances[i].sopInstanceUid;
        if (const std::shared_ptr<const DecodedImage> image = m_images->peek(key)) {
            learnGeometry(i, image->info);
            if (i == m_slice && !showing)
                display(i, *m_images->object(key));
        } else if (!showing && (i == m_slice || std::abs(i - m_slice) <= kPrefetchRadius)) {
            requestLoad(i);  // its decode gave up (or it was too big to keep): from the cache
        }
        return;
    }
}

void SeriesPane::onPreview(const QString &key, const DecodedImage &image, int rows, const DecodedImage &original, int originalRows)
{
    if (m_series < 0 || m_slice < 0 || isDecoded(m_slice) || keyOf(m_slice) != key)
        return;  // scrolled on, or the whole image is here already
    if (image.info.identity.sopInstanceUid != m_study->series[m_series].instances[m_slice].sopInstanceUid)
        return;  // never another instance under this slice's number
    const double fraction = image.info.rows > 0 ? double(rows) / image.info.rows : 0;
    // The values (and the geometry) are the decoded rows', never the filtered ones'.
    m_viewport->setImage(original, image, m_chain.isEmpty() ? QString() : m_chainDescription,
                         m_windowFromUser || m_viewport->hasImage(), key, originalRows);
    applyInitialWindow();
    m_viewport->layers()->setCompleteness(std::min(fraction, 0.99));  // complete once checked and cached
    m_retryButton->hide();
    updateOverlay(original.info);
    Q_EMIT previewShown(m_slice, fraction);
}

void SeriesPane::onInstanceCached(const QString &key)
{
    if (m_series < 0)
        return;
    if (m_arriving && m_arriving->key == key) {
        m_arriving->cached = true;
        if (m_arriving->finishing)
            return commitArriving();  // now, or once the decoder is done
        dropArriving();  // its last bytes never reached the decoder: read from the cache below
    }
    const QList<InstanceRef> &instances = m_study->series[m_series].instances;
    for (int i = 0; i < instances.size(); ++i) {
        if (instances[i].key != key)
            continue;
        if (i == m_slice || std::abs(i - m_slice) <= kPrefetchRadius)
            requestLoad(i);  // the slice in view is shown as soon as it is decoded
        return;
    }
}

} // namespace spectrum
