// SPDX-License-Identifier: Apache-2.0
#pragma once
// PaneSettings: what every pane of a study viewer shows its images with, set by the reader for the whole study —
// the filters (and the filter panel's state for this study, so a chain set on one patient's images never follows
// the reader to another's), segmentations shown or hidden, smooth or pixel-exact magnification, and what the left
// button does. Panes made later get them too. `viewer->settings()->setTool(ViewportTool::pan())`.

#include "tools/viewporttool.h"

#include "spectrum/imaging/filters/bandprocessor.h"

#include <QObject>
#include <QString>
#include <QStringList>

namespace spectrum {

class SeriesPane;
class StudyViewer;

class PaneSettings : public QObject
{
    Q_OBJECT
public:
    explicit PaneSettings(StudyViewer *viewer);

    /// Filters the images in every pane (and those arriving) through `chain`; empty: the originals.
    void setFilters(const FilterChain &chain, const QString &description);
    bool isFiltering() const { return !m_chain.isEmpty(); }
    QString filterDescription() const { return m_chainDescription; }
    const FilterChain &filters() const { return m_chain; }
    /// The filter panel's state for this study (its chain, whether on, the preset it came from).
    struct FilterState
    {
        QStringList specs;
        bool applied = true;
        QString preset;
    };
    FilterState filterState() const { return m_filterState; }
    void setFilterState(const FilterState &state) { m_filterState = state; }
    /// Segmentations over the images they lie on (on by default), in every pane.
    void setSegmentationsVisible(bool visible);
    bool segmentationsVisible() const { return m_segmentationsVisible; }
    /// Magnified images smooth or pixel-exact, in every pane.
    void setSmoothMagnification(bool smooth);
    /// The tool the mouse's left button uses, in every pane (new ones too); in MPR, in its active plane as well
    /// (its planes keep the crosshair otherwise).
    void setTool(ViewportTool tool);
    ViewportTool tool() const { return m_tool; }

private:
    friend class StudyViewer;
    /// A new pane, with them all.
    void applyTo(SeriesPane *pane) const;
    /// Bumps with every new chain: a decode begun under an older one is not kept as filtered.
    quint64 filtersGeneration() const { return m_chainGeneration; }

    StudyViewer *m_viewer;
    FilterChain m_chain;
    QString m_chainDescription;
    quint64 m_chainGeneration = 0;
    FilterState m_filterState;
    bool m_segmentationsVisible = true;
    bool m_smoothMagnify = true;
    ViewportTool m_tool = ViewportTool::pan();
};

} // namespace spectrum
