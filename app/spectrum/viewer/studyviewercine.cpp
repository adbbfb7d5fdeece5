// SPDX-License-Identifier: Apache-2.0
// StudyViewer's cine: through the frames of a multi-frame image at the rate it was acquired, or through the
// series' instances, round and round.
#include "viewer/studyviewer.h"

#include <cmath>

namespace spectrum {

double StudyViewer::cineFramesPerSecond(bool *acquired) const
{
    if (acquired)
        *acquired = false;
    const ImageViewport *vp = m_active ? m_active->viewport() : nullptr;
    if (!m_cineRateChosen && vp && vp->frameCount() > 1) {
        if (const double ms = vp->image().info.frameDurationMs(vp->frame()); ms > 0) {
            if (acquired)
                *acquired = true;
            return 1000.0 / ms;
        }
    }
    return m_cineRate;
}

void StudyViewer::cineStep()
{
    // The next image once the one in view is on screen; a slow load holds the cine back, never skips.
    ImageViewport *vp = m_active->viewport();
    if (!vp->hasImage() || m_active->isLoadingSliceInView())
        return;
    if (vp->frameCount() > 1)
        m_active->showFrame(vp->frame() + 1 < vp->frameCount() ? vp->frame() + 1 : 0);
    else if (sliceCount() > 1)
        showSlice(sliceIndex() + 1 < sliceCount() ? sliceIndex() + 1 : 0);
    m_cine.setInterval(std::max(1, int(std::lround(1000.0 / std::clamp(cineFramesPerSecond(), 0.5, 120.0)))));
    updateModeText();
}

void StudyViewer::setCinePlaying(bool playing)
{
    if (playing == m_cine.isActive())
        return;
    if (playing) {
        m_cine.setInterval(std::max(1, int(std::lround(1000.0 / std::clamp(cineFramesPerSecond(), 0.5, 120.0)))));
        m_cine.start();
    } else {
        m_cine.stop();
    }
    updateModeText();
    Q_EMIT cineChanged(playing, int(std::lround(cineFramesPerSecond())));
}

void StudyViewer::setCineRate(int framesPerSecond, bool chosen)
{
    m_cineRate = std::clamp(framesPerSecond, 1, 60);
    m_cineRateChosen = m_cineRateChosen || chosen;
    m_cine.setInterval(std::max(1, int(std::lround(1000.0 / cineFramesPerSecond()))));
    updateModeText();
    Q_EMIT cineChanged(m_cine.isActive(), int(std::lround(cineFramesPerSecond())));
}

} // namespace spectrum
