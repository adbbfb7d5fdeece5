// SPDX-License-Identifier: Apache-2.0
#pragma once
// ImageMemoryCache: the decoded images the workstation holds in memory — slices on screen, prefetched around
// them, and their filtered versions — under one budget for every pane of every open study. The least recently
// used go first when it is full. Panes showing the same series share its decoded slices. GUI thread only.

#include "spectrum/imaging/codecs/dicomdecoder.h"

#include <QHash>
#include <QSet>
#include <QObject>
#include <QString>

#include <list>
#include <memory>

namespace spectrum {

class ImageMemoryCache : public QObject
{
    Q_OBJECT
public:
    explicit ImageMemoryCache(qint64 budgetBytes, QObject *parent = nullptr);

    /// The image under `key` (made most recently used), or null.
    std::shared_ptr<const DecodedImage> object(const QString &key);
    /// The same without making it recently used.
    std::shared_ptr<const DecodedImage> peek(const QString &key) const { return m_entries.value(key).image; }
    bool contains(const QString &key) const { return m_entries.contains(key); }
    /// Keeps `image` under `key`, then drops the least recently used until the cache fits its budget. An image
    /// larger than the whole budget is not kept.
    void insert(const QString &key, std::shared_ptr<const DecodedImage> image);
    /// An image being decoded for `key` (while it arrives, from bytes just fetched, for a thumbnail): whoever
    /// else wants it waits for inserted(key) instead of decoding it again. insert() ends it; so does
    /// setPending(key, false) when the decode gave up (then pendingDropped(key)).
    void setPending(const QString &key, bool pending);
    bool isPending(const QString &key) const { return m_pending.contains(key); }
    void clear();
    /// Drops the images of these instances (keys) and their filtered versions: a study closed gives its memory back.
    /// Those being decoded stay pending (their decode ends as it would).
    void forget(const QSet<QString> &keys);

    void setBudget(qint64 bytes);
    qint64 budget() const { return m_budget; }
    qint64 usage() const { return m_usage; }
    int count() const { return int(m_entries.size()); }
    /// The keys kept, most recently used first (what a benchmark or a test looks at).
    QStringList keys() const { return QStringList(m_lru.cbegin(), m_lru.cend()); }
    /// The memory an image's pixels take.
    static qint64 costOf(const DecodedImage &image);

    /// The key of `blobKey`'s image through the filters `chainDescription` describes.
    static QString filteredKey(const QString &blobKey, const QString &chainDescription)
    {
        return blobKey + QLatin1Char('\n') + chainDescription;
    }

Q_SIGNALS:
    void usageChanged();
    /// An image was kept under `key` (a blob key, or a filtered key). Not for one too big to keep.
    void inserted(const QString &key);
    /// The decode that was pending for `key` gave up: whoever waited decodes it (or says why not).
    void pendingDropped(const QString &key);
    /// `image` was decoded for `key` but is larger than the whole budget: not kept (its pending mark ended). Whoever
    /// waited for it shows it as it is, rather than decoding it again.
    void notKept(const QString &key, const std::shared_ptr<const spectrum::DecodedImage> &image);

private:
    void evictToFit(qint64 budget);

    struct Entry
    {
        std::shared_ptr<const DecodedImage> image;
        qint64 cost = 0;
        std::list<QString>::iterator lru;
    };
    QHash<QString, Entry> m_entries;
    std::list<QString> m_lru;  ///< most recently used first
    QSet<QString> m_pending;
    qint64 m_budget;
    qint64 m_usage = 0;
};

} // namespace spectrum
