// SPDX-License-Identifier: Apache-2.0
#include "viewer/cineplayer.h"
#include "viewer/studyviewer.h"

#include <cmath>

namespace spectrum {

CinePlayer::CinePlayer(StudyViewer *viewer) : QObject(viewer), m_viewer(viewer)
{
    m_timer.setInterval(1000 / m_rate);
    connect(&m_timer, &QTimer::timeout, this, &CinePlayer::step);
}

double CinePlayer::framesPerSecond(bool *acquired) const
{
    if (acquired)
        *acquired = false;
    const ImageViewport *vp = m_viewer->activePane() ? m_viewer->activePane()->viewport() : nullptr;
    if (!m_rateChosen && vp && vp->frameCount() > 1) {
        if (const double ms = vp->image().info.frameDurationMs(vp->frame()); ms > 0) {
            if (acquired)
                *acquired = true;
            return 1000.0 / ms;
        }
    }
    return m_rate;
}

void CinePlayer::step()
{
    // The next image once the one in view is on screen; a slow load holds the cine back, never skips.
    ImageViewport *vp = m_viewer->activePane()->viewport();
    if (!vp->hasImage() || m_viewer->activePane()->isLoadingSliceInView())
        return;
    if (vp->frameCount() > 1)
        m_viewer->activePane()->showFrame(vp->frame() + 1 < vp->frameCount() ? vp->frame() + 1 : 0);
    else if (m_viewer->sliceCount() > 1)
        m_viewer->showSlice(m_viewer->sliceIndex() + 1 < m_viewer->sliceCount() ? m_viewer->sliceIndex() + 1 : 0);
    m_timer.setInterval(std::max(1, int(std::lround(1000.0 / std::clamp(framesPerSecond(), 0.5, 120.0)))));
    m_viewer->updateModeText();
}

void CinePlayer::setPlaying(bool playing)
{
    if (playing == m_timer.isActive())
        return;
    if (playing) {
        m_timer.setInterval(std::max(1, int(std::lround(1000.0 / std::clamp(framesPerSecond(), 0.5, 120.0)))));
        m_timer.start();
    } else {
        m_timer.stop();
    }
    m_viewer->updateModeText();
    Q_EMIT changed(playing, int(std::lround(framesPerSecond())));
}

void CinePlayer::setRate(int perSecond, bool chosen)
{
    m_rate = std::clamp(perSecond, 1, 60);
    m_rateChosen = m_rateChosen || chosen;
    m_timer.setInterval(std::max(1, int(std::lround(1000.0 / framesPerSecond()))));
    m_viewer->updateModeText();
    Q_EMIT changed(m_timer.isActive(), int(std::lround(framesPerSecond())));
}

} // namespace spectrum
