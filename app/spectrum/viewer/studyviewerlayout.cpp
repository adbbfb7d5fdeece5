// SPDX-License-Identifier: Apache-2.0
// StudyViewer's layout: which open study and series each pane shows (a series of the current study or of one
// opened beside it: studycomparison.cpp), and a hanging protocol's plan.
#include "viewer/studyviewer.h"
#include "viewer/panelinks.h"
#include "viewer/studycomparison.h"
#include "volumes/mprvolume.h"
#include "browser/priorspanel.h"

#include "spectrum/stores/reading/priorsearch.h"
#include "spectrum/stores/reading/studystreamer.h"

#include <QDate>
#include <QGridLayout>

namespace spectrum {

const StudySummary &StudyViewer::activeStudy() const
{
    return m_active ? *m_active->study() : m_study;
}

QString StudyViewer::keyOf(const StudySummary *study) const
{
    return PriorsPanel::studyKey(study->identity);
}

bool StudyViewer::showSeriesOf(SeriesPane *pane, const QString &studyKey, int series)
{
    const int index = int(m_panes.indexOf(pane));
    if (index < 0)
        return false;
    const StudySummary *study = nullptr;
    StudyStreamer *streamer = nullptr;
    if (studyKey == keyOf(&m_study)) {
        study = &m_study;
        streamer = m_streamer;
    }
    m_comparison->find(studyKey, &study, &streamer);
    if (!study || series < 0 || series >= study->series.size())
        return false;
    if (pane->study() == study) {
        setActivePane(pane);
        pane->showSeries(series);
        if (study == &m_study)
            showSeries(series);  // the series list follows
        return true;
    }
    // Another study in this place: a new pane on it, where the old one was.
    SeriesPane *fresh = makePane(study, streamer);
    m_panes[index] = fresh;
    if (m_active == pane)
        m_active = fresh;
    m_links->forget(pane);
    m_grid->removeWidget(pane);
    disconnect(pane, nullptr, this, nullptr);
    pane->detach();  // it asks for nothing more, and hears nothing more, while it waits to be deleted
    pane->hide();
    pane->deleteLater();  // it may be the one a drop is being delivered to
    layoutPanes();
    fresh->showSeries(series);
    m_comparison->updateLabels();
    setActivePane(fresh);
    return true;
}

void StudyViewer::applyPlan(const HangingPlan &plan, const StudySummary *prior, StudyStreamer *priorStreamer)
{
    QString priorKey;
    if (prior && plan.usesPrior() && m_comparison->add(*prior, priorStreamer))
        priorKey = PriorsPanel::studyKey(prior->identity);
    else if (priorStreamer && (!prior || !plan.usesPrior()))
        priorStreamer->deleteLater();
    // New panes are placed before they load: each gets the plan's series, then the level of the pane it follows
    // (nothing loaded in vain, no slice shown before the linked one).
    m_placing = true;
    resizeGrid(plan.rows, plan.columns, false);
    for (int i = 0; i < m_panes.size(); ++i) {
        const PanePlacement placed = plan.panes.value(i);
        if (placed.study < 0) {
            if (m_panes[i]->seriesIndex() < 0 && !m_study.series.isEmpty())
                m_panes[i]->showSeries(0);  // nothing planned for it: the study's first series rather than a blank
            continue;
        }
        const QString key = placed.study == 1 && !priorKey.isEmpty() ? priorKey : keyOf(&m_study);
        if (placed.study == 1 && priorKey.isEmpty())
            continue;
        showSeriesOf(m_panes[i], key, placed.series);
        if (const auto w = protocolWindow(placed.window))
            m_panes[i]->setInitialWindow(VoiWindow{w->first, w->second});
    }
    m_placing = false;
    setActivePane(m_panes.first());
    m_links->setFromPlan(plan.linkScroll && m_panes.size() > 1, plan.linkWindow && m_panes.size() > 1);
    m_plan = plan;
    m_comparison->updateLabels();
    m_links->follow();
    for (SeriesPane *p : std::as_const(m_panes))
        p->releaseLoads();
    // The first pane's series in three planes; an MPR of it open already (asked for on the study's first look) is
    // kept as it is, with what has come.
    const bool sameSeries = m_mpr && m_active && m_active->study() == &m_study && m_active->seriesIndex() >= 0
                            && m_active->seriesIndex() < m_study.series.size()
                            && m_mprVolume->series().seriesInstanceUid == m_study.series[m_active->seriesIndex()].seriesInstanceUid;
    if (!plan.mpr || !sameSeries)
        setMprShown(false);
    if (plan.mpr)
        setMprShown(true, false);
}

} // namespace spectrum
