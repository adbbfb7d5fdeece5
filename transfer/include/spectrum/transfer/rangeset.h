// SPDX-License-Identifier: Apache-2.0
#pragma once
// RangeSet: disjoint half-open byte ranges [begin, end), merged as they are added — which parts of a blob
// are here. Not thread-safe.

#include <QtGlobal>

#include <map>
#include <vector>

namespace spectrum {

class RangeSet
{
public:
    struct Range
    {
        qint64 begin;
        qint64 end;
    };

    void add(qint64 begin, qint64 end);
    /// Takes [begin, end) out: what was covered there no longer is.
    void remove(qint64 begin, qint64 end);
    bool isEmpty() const { return m_map.empty(); }
    void clear() { m_map.clear(); }
    /// Whether [begin, end) lies inside one stored range.
    bool covers(qint64 begin, qint64 end) const;
    /// The end of the range that starts at `from`, or `from` if none does: the contiguous prefix.
    qint64 prefixEnd(qint64 from) const;
    /// Total bytes covered.
    qint64 covered() const;
    /// The parts of [begin, end) not covered, in order.
    std::vector<Range> gaps(qint64 begin, qint64 end) const;
    std::vector<Range> ranges() const;

private:
    std::map<qint64, qint64> m_map;  // begin → end
};

} // namespace spectrum
