// SPDX-License-Identifier: Apache-2.0
// StudyViewer's series thumbnails: each series' middle image (or the first of it here), decoded on the pool and kept
// in the shared image cache, then scaled on the pool; set on the series list when ready.

#include "viewer/studyviewer.h"
#include "viewport/displayimage.h"

#include "spectrum/stores/reading/imageloader.h"
#include "spectrum/stores/reading/studystreamer.h"

#include <QIcon>
#include <QListWidget>
#include <QPixmap>

namespace spectrum {

void StudyViewer::startThumbnails()
{
    if (!m_thumbnailsWaiting)
        return;
    m_thumbnailsWaiting = false;
    requestThumbnails();
}

void StudyViewer::requestThumbnails()
{
    // Each series' middle image, as soon as one of its images is here.
    for (int i = 0; i < m_study.series.size(); ++i) {
        const QList<InstanceRef> &in = m_study.series[i].instances;
        if (in.isEmpty() || isDocumentSeries(m_study.series[i]))
            continue;  // a document has no picture to show
        const QString middle = in[in.size() / 2].key;
        if (!m_streamer || !m_streamer->isAwaited(middle)) {  // here, or the cache's own (a series made here)
            requestThumbnail(i, in[in.size() / 2].key);
        } else {
            for (const InstanceRef &r : in) {
                if (m_streamer->isHere(r.key)) {
                    requestThumbnail(i, r.key);
                    break;
                }
            }
        }
    }
}

void StudyViewer::requestThumbnail(int series, const QString &key)
{
    if (m_thumbnailsAsked.contains(series))
        return;
    m_thumbnailsAsked.insert(series);
    m_thumbnailWaiting.insert(key, series);
    // Decoded by the study's decoder, and kept: the pane that shows it later finds it decoded. Made once it is
    // (ready()), or another image of the series tried when it cannot be (decodeFailed()).
    if (decoderFor(m_streamer)->load(this, key) == StudyDecoder::Load::Here)
        makeThumbnail(key);
}

void StudyViewer::makeThumbnail(const QString &key)
{
    const auto waiting = m_thumbnailWaiting.find(key);
    if (waiting == m_thumbnailWaiting.end())
        return;
    const int series = waiting.value();
    m_thumbnailWaiting.erase(waiting);
    const std::shared_ptr<const DecodedImage> image = m_images->peek(key);
    if (!image)
        return void(m_thumbnailsAsked.remove(series));  // another image of it may do
    runOnPool<QImage>(blockingPool(), this, [image] {
        // Drawn as on the patient: pixels taller than wide (or wider) keep their shape, as in the pane.
        const QSize shape = squarePixelSize(image->info.columns, image->info.rows, image->info.pixelAspect());
        return resampledTo(toQImage(renderFrame(*image, 0, defaultWindow(*image))), shape.scaled(96, 96, Qt::KeepAspectRatio));
    }, [this, series, uid = m_study.series.value(series).seriesInstanceUid, generation = m_studyGeneration](QImage &&thumb) {
        if (generation != m_studyGeneration)
            return;  // made for the study's first look; asked again for the whole list
        if (series >= m_study.series.size() || m_study.series[series].seriesInstanceUid != uid)
            return;  // the list changed under it (a key image series replaced): asked again where it is now
        m_thumbnails.insert(series, thumb);
        showThumbnailOnRow(series);
        Q_EMIT thumbnailReady(series);
    });
}

} // namespace spectrum
