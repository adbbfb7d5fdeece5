// SPDX-License-Identifier: Apache-2.0
#pragma once
// LruMap: a hash map that remembers use order, for the stores' eviction under a byte budget. Not thread-safe:
// the owning store guards it with its mutex.

#include <QHash>
#include <QStringList>
#include <QString>

#include <list>
#include <utility>

namespace spectrum {

template <typename V>
class LruMap
{
public:
    /// The value for `key`, or nullptr. Does not change the use order.
    V *find(const QString &key)
    {
        auto it = m_map.find(key);
        return it == m_map.end() ? nullptr : &it->first;
    }
    /// Marks `key` as most recently used. Returns false when absent.
    bool touch(const QString &key)
    {
        auto it = m_map.find(key);
        if (it == m_map.end())
            return false;
        m_order.splice(m_order.end(), m_order, it->second);
        return true;
    }
    /// Inserts or replaces; the key becomes the most recently used.
    void insert(const QString &key, V value)
    {
        auto it = m_map.find(key);
        if (it != m_map.end()) {
            it->first = std::move(value);
            m_order.splice(m_order.end(), m_order, it->second);
            return;
        }
        m_order.push_back(key);
        m_map.insert(key, {std::move(value), std::prev(m_order.end())});
    }
    bool remove(const QString &key)
    {
        auto it = m_map.find(key);
        if (it == m_map.end())
            return false;
        m_order.erase(it->second);
        m_map.erase(it);
        return true;
    }
    /// Keys from least to most recently used.
    const std::list<QString> &order() const { return m_order; }
    qsizetype size() const { return m_map.size(); }
    void clear() { m_map.clear(); m_order.clear(); }

private:
    std::list<QString> m_order;
    QHash<QString, std::pair<V, typename std::list<QString>::iterator>> m_map;
};

/// Drops least recently used entries until `total` fits `budget` (0: no budget), never `keep`.
/// `sizeOf(value)` gives an entry's bytes. Returns the evicted keys, oldest first.
template <typename V, typename SizeOf>
QStringList evictToBudget(LruMap<V> &map, qint64 &total, qint64 budget, const QString &keep, SizeOf sizeOf)
{
    QStringList evicted;
    if (budget <= 0)
        return evicted;
    auto it = map.order().begin();
    while (total > budget && it != map.order().end()) {
        const QString key = *it++;
        if (key == keep)
            continue;
        total -= sizeOf(*map.find(key));
        map.remove(key);
        evicted << key;
    }
    return evicted;
}

} // namespace spectrum
