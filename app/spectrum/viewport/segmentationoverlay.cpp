// SPDX-License-Identifier: Apache-2.0
#include "viewport/segmentationoverlay.h"

#include "spectrum/core/resultjob.h"
#include "spectrum/stores/reading/imageloader.h"

#include <QColor>

#include <algorithm>
#include <cmath>

namespace spectrum {

SegmentationOverlay::SegmentationOverlay(BlobStore *store, QObject *parent) : QObject(parent), m_store(store) {}

void SegmentationOverlay::setStudy(const StudySummary &study)
{
    QSet<QString> keys;
    for (const SeriesSummary &s : study.series) {
        if (s.modality != QLatin1String("SEG"))
            continue;
        for (const InstanceRef &i : s.instances)
            keys.insert(i.key);
    }
    if (keys == m_segKeys)
        return;
    // Only more Segmentations (a study laid out again as it streams in): the reads under way are still the study's.
    // Otherwise their answers are dropped, and what they were reading is read again.
    if (!std::all_of(m_segKeys.cbegin(), m_segKeys.cend(), [&](const QString &k) { return keys.contains(k); })) {
        ++m_generation;
        m_reads.dropOut();
    }
    m_segKeys = keys;
    for (auto it = m_loaded.begin(); it != m_loaded.end();)
        it = keys.contains(it.key()) ? std::next(it) : m_loaded.erase(it);
    for (const QString &key : keys)
        load(key);
}

void SegmentationOverlay::instanceCached(const QString &key)
{
    if (m_segKeys.contains(key) && !m_loaded.contains(key) && m_reads.landed(key))
        read(key);
}

void SegmentationOverlay::load(const QString &key)
{
    if (m_reads.ask(key))
        read(key);
}

void SegmentationOverlay::read(const QString &key)
{
    whenDone(loadImage(m_store, key), this, [this, key, generation = m_generation](const Result<DecodedImage> &r) {
        if (generation != m_generation)
            return;
        const bool ok = r.isOk() && r.value().info.isSegmentation() && r.value().pixels.format() == PixelFormat::Gray8;
        // Not here yet: read again once cached, or now if it came while this read was out. Not a mask we can show:
        // read once.
        if (m_reads.ended(key, r.isOk() || !readAgainWhenItLands(r.error())))
            return load(key);
        if (!ok)
            return;
        m_loaded.insert(key, r.value());
        Q_EMIT changed();
    });
}

QList<ViewportMask> SegmentationOverlay::masksFor(const ImageInfo &shown) const
{
    QList<ViewportMask> masks;
    if (shown.isSegmentation())
        return masks;
    for (const DecodedImage &seg : m_loaded) {
        const ImageInfo &info = seg.info;
        if (info.columns != shown.columns || info.rows != shown.rows)
            continue;  // a mask must cover the image pixel for pixel
        for (int f = 0; f < info.segmentFrames.size() && f < seg.pixels.frames(); ++f) {
            const SegmentFrame &sf = info.segmentFrames[f];
            bool on = false;
            // A frame of the source named without its frame number lies on a single-frame source only; on a
            // multi-frame one it is placed by position like a frame that names no source.
            const bool named = !sf.sourceSopInstanceUid.isEmpty() && (sf.sourceFrame > 0 || shown.frames <= 1);
            if (named) {
                on = sf.sourceSopInstanceUid == shown.identity.sopInstanceUid && (sf.sourceFrame == 0 || sf.sourceFrame == shown.frameIndex + 1);
            } else {
                // No source named: the same place in the same frame of reference, the same plane.
                const ImageInfo at = info.frame(f);
                if (at.hasPosition && shown.hasPosition && !info.frameOfReferenceUid.isEmpty() && info.frameOfReferenceUid == shown.frameOfReferenceUid) {
                    double d = 0, o = 0;
                    for (int i = 0; i < 3; ++i)
                        d += std::pow(at.imagePosition[size_t(i)] - shown.imagePosition[size_t(i)], 2);
                    for (int i = 0; i < 6; ++i)
                        o += std::abs(at.imageOrientation[size_t(i)] - shown.imageOrientation[size_t(i)]);
                    on = std::sqrt(d) < 0.01 && o < 1e-3;
                }
            }
            if (!on)
                continue;
            const Segment *segment = nullptr;
            for (const Segment &s : info.segments)
                if (s.number == sf.segment)
                    segment = &s;
            const QColor colour = segment ? QColor(segment->colour[0], segment->colour[1], segment->colour[2]) : QColor(255, 64, 64);
            QImage mask(info.columns, info.rows, QImage::Format_ARGB32_Premultiplied);
            mask.fill(Qt::transparent);
            const uchar *bits = seg.pixels.frameData(f);
            // BINARY: 1 is in; FRACTIONAL: at least half of the maximum fraction.
            const int threshold = info.segmentationMaxFraction > 0 ? (info.segmentationMaxFraction + 1) / 2 : 1;
            const QRgb fill = qPremultiply(qRgba(colour.red(), colour.green(), colour.blue(), 110));
            for (int y = 0; y < info.rows; ++y) {
                auto *line = reinterpret_cast<QRgb *>(mask.scanLine(y));
                for (int x = 0; x < info.columns; ++x)
                    if (bits[qsizetype(y) * info.columns + x] >= threshold)
                        line[x] = fill;
            }
            masks << ViewportMask{mask, segment && !segment->label.isEmpty() ? segment->label : QObject::tr("segment %1").arg(sf.segment), colour};
        }
    }
    return masks;
}

} // namespace spectrum
