// SPDX-License-Identifier: Apache-2.0
#include "viewer/imagememorycache.h"

namespace spectrum {

ImageMemoryCache::ImageMemoryCache(qint64 budgetBytes, QObject *parent) : QObject(parent), m_budget(std::max<qint64>(0, budgetBytes)) {}

qint64 ImageMemoryCache::costOf(const DecodedImage &image)
{
    return std::max<qint64>(1, image.pixels.frameBytes() * image.pixels.frames());
}

std::shared_ptr<const DecodedImage> ImageMemoryCache::object(const QString &key)
{
    auto it = m_entries.find(key);
    if (it == m_entries.end())
        return nullptr;
    m_lru.splice(m_lru.begin(), m_lru, it->lru);
    return it->image;
}

void ImageMemoryCache::insert(const QString &key, std::shared_ptr<const DecodedImage> image)
{
    if (!image)
        return;
    const qint64 cost = costOf(*image);
    auto it = m_entries.find(key);
    if (it != m_entries.end()) {
        m_usage -= it->cost;
        m_lru.erase(it->lru);
        m_entries.erase(it);
    }
    const bool kept = cost <= m_budget;
    if (kept) {
        evictToFit(m_budget - cost);
        m_lru.push_front(key);
        m_entries.insert(key, Entry{std::move(image), cost, m_lru.begin()});
        m_usage += cost;
    }
    m_pending.remove(key);
    Q_EMIT usageChanged();
    if (kept)
        Q_EMIT inserted(key);
    else
        Q_EMIT notKept(key, image);  // too big to keep: whoever waited shows it as it is
}

void ImageMemoryCache::setPending(const QString &key, bool pending)
{
    if (pending)
        m_pending.insert(key);
    else if (m_pending.remove(key))
        Q_EMIT pendingDropped(key);
}

void ImageMemoryCache::evictToFit(qint64 budget)
{
    while (m_usage > budget && !m_lru.empty()) {
        auto it = m_entries.find(m_lru.back());
        m_usage -= it->cost;
        m_entries.erase(it);
        m_lru.pop_back();
    }
}

void ImageMemoryCache::clear()
{
    m_entries.clear();
    m_lru.clear();
    m_usage = 0;
    Q_EMIT usageChanged();
}

void ImageMemoryCache::forget(const QSet<QString> &keys)
{
    if (keys.isEmpty())
        return;
    bool dropped = false;
    for (auto it = m_lru.begin(); it != m_lru.end();) {
        const qsizetype newline = it->indexOf(QLatin1Char('\n'));  // a filtered version: "key\nfilters"
        if (!keys.contains(newline < 0 ? *it : it->left(newline))) {
            ++it;
            continue;
        }
        const auto entry = m_entries.find(*it);
        m_usage -= entry->cost;
        m_entries.erase(entry);
        it = m_lru.erase(it);
        dropped = true;
    }
    if (dropped)
        Q_EMIT usageChanged();
}

void ImageMemoryCache::setBudget(qint64 bytes)
{
    m_budget = std::max<qint64>(0, bytes);
    evictToFit(m_budget);
    Q_EMIT usageChanged();
}

} // namespace spectrum
