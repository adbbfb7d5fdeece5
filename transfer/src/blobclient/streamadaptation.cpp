// SPDX-License-Identifier: Apache-2.0
#include "blobclient/streamadaptation.h"

#include "spectrum/core/logging.h"

#include <QTimer>

#include <algorithm>

namespace spectrum::blobwire {

void StreamAdaptation::start(int maxStreams, double roundTripMs, int streams)
{
    m_steps.emplace(maxStreams, roundTripMs);
    m_target = streams;
    m_measuring = false;
    m_clock.start();
}

void StreamAdaptation::stop()
{
    if (m_steps)
        m_steps->stop();
}

void StreamAdaptation::attached()
{
    if (!m_steps || m_steps->done() || m_measuring || m_job.attachedStreams() < m_target)
        return;
    m_measuring = true;
    QTimer::singleShot(m_steps->settleMs(), this, [this] {
        if (m_job.finished() || m_steps->done())
            return;
        m_startBytes = m_job.bytesReceived();
        m_startNs = m_clock.nsecsElapsed();
        QTimer::singleShot(m_steps->measureMs(), this, [this] { measured(); });
    });
}

void StreamAdaptation::measured()
{
    if (m_job.finished() || m_steps->done())
        return;
    const double seconds = (m_clock.nsecsElapsed() - m_startNs) / 1e9;
    const double rate = (m_job.bytesReceived() - m_startBytes) / std::max(seconds, 1e-6);
    const int streams = m_job.attachedStreams();
    const int next = m_steps->next(streams, rate);
    qCDebug(lcTransfer) << "adaptive streams:" << streams << "streams," << rate / 1e6 << "MB/s over" << seconds << "s; next" << next;
    if (next == 0 || !m_job.wantsMore()) {
        m_steps->stop();
        return;
    }
    m_target = next;
    m_measuring = false;
    m_job.growTo(next);
}

} // namespace spectrum::blobwire
