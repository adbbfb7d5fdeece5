// SPDX-License-Identifier: Apache-2.0
#pragma once
// SegmentationOverlay: a study's Segmentations shown over the images they were drawn on. It loads the study's SEG
// instances from the cache (as soon as each is there) and gives, for an image on screen, the masks that lie on it:
// by the source instance (and frame) each SEG frame names, or, where it names none, by the same place in the same
// frame of reference. Each mask is the segment's colour, translucent, over the image's own pixels.

#include "findings/cachedreads.h"
#include "viewport/imageviewport.h"

#include "spectrum/stores/reading/studycatalog.h"

#include <QHash>
#include <QObject>
#include <QSet>

namespace spectrum {

class BlobStore;

class SegmentationOverlay : public QObject
{
    Q_OBJECT
public:
    /// `store` (the cache) must outlive the overlay.
    explicit SegmentationOverlay(BlobStore *store, QObject *parent = nullptr);

    /// The study's Segmentations (modality SEG) are loaded once each is in the cache.
    void setStudy(const StudySummary &study);
    /// An instance of the study is in the cache now (it may be a Segmentation).
    void instanceCached(const QString &key);
    /// The masks on the image `shown` describes (its instance and frame, its place): empty when none.
    QList<ViewportMask> masksFor(const ImageInfo &shown) const;
    int loadedCount() const { return int(m_loaded.size()); }

Q_SIGNALS:
    /// A Segmentation was loaded: the masks on screen may change.
    void changed();

private:
    void load(const QString &key);
    void read(const QString &key);

    BlobStore *m_store;
    QSet<QString> m_segKeys;      ///< the study's SEG instances
    CachedReads m_reads;
    QHash<QString, DecodedImage> m_loaded;
    quint64 m_generation = 0;
};

} // namespace spectrum
