// SPDX-License-Identifier: Apache-2.0
#include "spectrum/transfer/rangeset.h"

#include <algorithm>
#include <iterator>

namespace spectrum {

void RangeSet::add(qint64 b, qint64 e)
{
    if (b >= e)
        return;
    auto it = m_map.upper_bound(b);
    if (it != m_map.begin() && std::prev(it)->second >= b) {
        --it;
        b = it->first;
        e = std::max(e, it->second);
        it = m_map.erase(it);
    }
    while (it != m_map.end() && it->first <= e) {
        e = std::max(e, it->second);
        it = m_map.erase(it);
    }
    m_map.emplace(b, e);
}

void RangeSet::remove(qint64 b, qint64 e)
{
    if (b >= e)
        return;
    auto it = m_map.upper_bound(b);
    if (it != m_map.begin())
        --it;
    while (it != m_map.end() && it->first < e) {
        const qint64 rb = it->first, re = it->second;
        if (re <= b) {
            ++it;
            continue;
        }
        it = m_map.erase(it);
        if (rb < b)
            m_map.emplace(rb, b);
        if (re > e) {
            m_map.emplace(e, re);
            break;
        }
    }
}

bool RangeSet::covers(qint64 b, qint64 e) const
{
    auto it = m_map.upper_bound(b);
    if (it == m_map.begin())
        return false;
    --it;
    return it->first <= b && it->second >= e;
}

qint64 RangeSet::prefixEnd(qint64 from) const
{
    auto it = m_map.find(from);
    return it == m_map.end() ? from : it->second;
}

qint64 RangeSet::covered() const
{
    qint64 n = 0;
    for (const auto &[b, e] : m_map)
        n += e - b;
    return n;
}

std::vector<RangeSet::Range> RangeSet::gaps(qint64 b, qint64 e) const
{
    std::vector<Range> out;
    qint64 at = b;
    auto it = m_map.upper_bound(b);
    if (it != m_map.begin())
        --it;
    for (; it != m_map.end() && it->first < e; ++it) {
        if (it->second <= at)
            continue;
        if (it->first > at)
            out.push_back({at, std::min(e, it->first)});
        at = std::max(at, it->second);
    }
    if (at < e)
        out.push_back({at, e});
    return out;
}

std::vector<RangeSet::Range> RangeSet::ranges() const
{
    std::vector<Range> out;
    for (const auto &[b, e] : m_map)
        out.push_back({b, e});
    return out;
}

} // namespace spectrum
