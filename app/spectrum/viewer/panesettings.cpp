// SPDX-License-Identifier: Apache-2.0
#include "viewer/panesettings.h"
#include "viewer/studyviewer.h"

namespace spectrum {

PaneSettings::PaneSettings(StudyViewer *viewer) : QObject(viewer), m_viewer(viewer) {}

void PaneSettings::applyTo(SeriesPane *pane) const
{
    pane->setFilters(m_chain, m_chainDescription);
    pane->viewport()->setSmoothMagnification(m_smoothMagnify);
    pane->viewport()->setTool(m_tool);
}

void PaneSettings::setFilters(const FilterChain &chain, const QString &description)
{
    if (description == m_chainDescription && chain.isEmpty() == m_chain.isEmpty())
        return;  // the same chain (its description names it): nothing to redo
    m_chain = chain;
    m_chainDescription = description;
    ++m_chainGeneration;
    for (SeriesPane *p : m_viewer->panes())
        p->setFilters(chain, description);
}

void PaneSettings::setSegmentationsVisible(bool visible)
{
    m_segmentationsVisible = visible;
    for (SeriesPane *p : m_viewer->panes())
        p->viewport()->layers()->setMasksVisible(visible);
}

void PaneSettings::setSmoothMagnification(bool smooth)
{
    m_smoothMagnify = smooth;
    for (SeriesPane *p : m_viewer->panes())
        p->viewport()->setSmoothMagnification(smooth);
}

void PaneSettings::setTool(ViewportTool tool)
{
    m_tool = tool;
    for (SeriesPane *p : m_viewer->panes())
        p->viewport()->setTool(tool);
    if (m_viewer->isMprShown())
        m_viewer->toolViewport()->setTool(tool);
}

} // namespace spectrum
