// SPDX-License-Identifier: Apache-2.0
#include "blobclient/streamsteps.h"

#include <algorithm>

namespace spectrum::blobwire {

int StreamSteps::first(int maxStreams, double roundTripMs)
{
    return std::max(1, std::min(roundTripMs >= kWidePathMs ? 4 : 2, maxStreams));
}

int StreamSteps::next(int streams, double rate)
{
    if (m_done)
        return 0;
    // The first step from the streams the path started with is the boldest: on a wide path each of them is held to
    // its window, and four times as many usually still add up.
    int wanted = streams * (m_steps == 0 && m_roundTripMs >= kWidePathMs ? 4 : 2);
    if (m_steps > 0) {
        const double streamGrowth = double(streams) / std::max(1, m_streamsBefore);
        const bool grew = rate >= m_rateBefore * (1 + 0.5 * (streamGrowth - 1));
        wanted = grew ? streams * 2 : 0;
    }
    m_rateBefore = rate;
    m_streamsBefore = streams;
    ++m_steps;
    wanted = std::min(wanted, m_max);
    if (wanted <= streams) {
        m_done = true;
        return 0;
    }
    return wanted;
}

int StreamSteps::settleMs() const
{
    return int(std::clamp(m_roundTripMs, 1.0, 500.0));
}

int StreamSteps::measureMs() const
{
    return int(std::clamp(2 * m_roundTripMs, 30.0, 1000.0));
}

} // namespace spectrum::blobwire
