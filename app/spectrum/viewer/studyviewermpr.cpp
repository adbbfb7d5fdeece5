// SPDX-License-Identifier: Apache-2.0
// StudyViewer's MPR: the active pane's series made into a volume and shown as axial, coronal and sagittal planes in
// place of the grid, until the reader goes back to the grid.
#include "viewer/studyviewer.h"
#include "volumes/mprview.h"
#include "volumes/mprvolume.h"

#include "spectrum/core/settings.h"
#include "spectrum/stores/reading/studystreamer.h"

#include <QStackedWidget>

namespace spectrum {

ImageViewport *StudyViewer::toolViewport() const
{
    return m_mpr ? m_mpr->viewport(m_mpr->activePane()) : m_active->viewport();
}

bool StudyViewer::setMprShown(bool on, bool byReader)
{
    if (!on) {
        if (!m_mpr)
            return true;
        m_stack->setCurrentIndex(0);
        m_stack->removeWidget(m_mpr);
        delete std::exchange(m_mpr, nullptr);
        delete std::exchange(m_mprVolume, nullptr);
        return true;
    }
    if (m_mpr)
        return true;
    m_mprByReader = byReader;
    if (!m_active || m_active->study() != &m_study || m_active->seriesIndex() < 0 || m_active->seriesIndex() >= m_study.series.size()
        || isDocumentSeries(m_study.series[m_active->seriesIndex()]) || isKeyImageSeries(m_study.series[m_active->seriesIndex()])) {
        Q_EMIT errorOccurred(Error(ErrorCode::InvalidArgument, tr("MPR: choose a series of images of this study in the active pane first")));
        return false;
    }
    // The volume may take the memory the decoded images may; a larger one is kept in the cache folder.
    m_mprVolume = new MprVolume(m_store, m_images, m_study.series[m_active->seriesIndex()], m_images->budget(), WorkstationPaths::cacheDirectory(), this);
    m_mpr = new MprView(m_mprVolume);
    m_mpr->setSexDisagreement(m_study.sexDisagreement);
    connect(m_mpr, &MprView::refused, this, [this](const QString &why) {
        Q_EMIT errorOccurred(Error(ErrorCode::Unsupported, tr("MPR of this series: %1").arg(why)));
    });
    m_stack->addWidget(m_mpr);
    m_stack->setCurrentWidget(m_mpr);
    const SeriesSummary &series = m_study.series[m_active->seriesIndex()];
    if (const int k = m_active->sliceIndex(); k >= 0 && k < series.instances.size())
        m_mprVolume->setFocus(series.instances[k].key);  // MPR opens at the slice the pane shows
    if (m_streamer && !m_streamer->isListed())
        m_mprVolume->startArriving(m_study.identity);  // the study still being listed: laid out as its slices come
    else
        m_mprVolume->start();
    return true;
}

} // namespace spectrum
