// SPDX-License-Identifier: Apache-2.0
#pragma once
// PaneLinks: how a study viewer's panes follow one another — linked scrolling (the other panes to the slice
// through the same place in the patient: by frame of reference in one study, across studies by patient position
// in the same plane plus an offset the reader sets or teaches by scrolling one pane alone), linked window/level
// and zoom, the active slice drawn as reference lines on the others, and the crosshair found in every pane.
// `viewer->links()->setSynchronized(true)`.

#include <QHash>
#include <QObject>
#include <QPointF>
#include <QSet>
#include <QString>

#include <array>
#include <optional>

namespace spectrum {

class SeriesPane;
class StudyViewer;

class PaneLinks : public QObject
{
    Q_OBJECT
public:
    explicit PaneLinks(StudyViewer *viewer);

    /// The other panes whose series share the active one's frame of reference (or, across studies, its plane)
    /// follow it: each shows its slice nearest to the same place in the patient (by Image Position / Orientation).
    void setSynchronized(bool on);
    bool isSynchronized() const { return m_sync; }
    /// Window/level set in the active pane is set in every other pane where values mean the same (CT slices in
    /// the same plane).
    void setWindowLinked(bool on);
    bool isWindowLinked() const { return m_linkWindow; }
    /// Zoom set in the active pane is set in every other pane.
    void setZoomLinked(bool on);
    bool isZoomLinked() const { return m_linkZoom; }
    /// How much further (mm, along the active pane's slice normal) the same anatomy lies in `studyKey`'s
    /// coordinates than in the current study's: 0 until the reader scrolls a pane alone (Shift+wheel) while
    /// linked, or sets it. Linked panes of that study show the slice this far from the current one's position.
    double offsetMm(const QString &studyKey) const;
    void setOffsetMm(const QString &studyKey, double mm);
    /// The active pane's slice drawn as a line on the panes of other orientations in its frame of reference.
    void setReferenceLinesVisible(bool on);
    bool referenceLinesVisible() const { return m_referenceLines; }
    /// The crosshair at image point `at` of `pane`: that pane becomes the active one, every pane of its study
    /// (and, linked, of the other studies) goes to the slice through that place in the patient and marks it.
    void crosshairAt(SeriesPane *pane, QPointF at);
    /// The crosshair's place in the patient (in the coordinates of the study it was set in), if set.
    std::optional<std::array<double, 3>> crosshairPoint() const;
    /// Whether `pane` is linked to a level its stack does not reach (said on it).
    bool isBeyond(SeriesPane *pane) const { return m_beyond.contains(pane); }

private:
    friend class StudyViewer;
    friend class StudyComparison;  ///< a study opened or closed: the panes follow, its offset goes
    /// The linked panes to the level of `lead` (the active pane when null).
    void follow(SeriesPane *lead = nullptr);
    /// A pane scrolled alone (Shift+wheel) while linked: the offset of its study against the others' is where it
    /// now is against them.
    void learnOffset(SeriesPane *pane);
    /// The active pane's window or zoom to the other panes, when linked.
    void propagateWindow();
    void propagateZoom();
    /// Reference lines on every pane from the active one's slice; each pane's crosshair mark.
    void updateReferences();
    /// `pane` goes (its offsets stay with its study).
    void forget(SeriesPane *pane);
    /// A study closed: its offset goes.
    void forgetStudy(const QString &studyKey) { m_offsets.remove(studyKey); }
    /// A hanging protocol's links, set as they are (no window spread over the panes it set one by one).
    void setFromPlan(bool sync, bool window);

    StudyViewer *m_viewer;
    bool m_sync = false;
    bool m_linkWindow = false;
    bool m_linkZoom = false;
    bool m_referenceLines = true;
    /// By study key: where the same anatomy lies in that study's coordinates relative to the others (mm, patient
    /// axes); only differences between two studies mean anything.
    QHash<QString, std::array<double, 3>> m_offsets;
    SeriesPane *m_adjusting = nullptr;  ///< stepping alone (Shift+wheel): its next image sets an offset
    QSet<SeriesPane *> m_beyond;        ///< linked panes of another study with no slice at the active one's level
    struct Crosshair
    {
        std::array<double, 3> point{};
        QString studyKey;  ///< whose coordinates the point is in
        QString frameOfReference;  ///< the frame of reference of the image it was picked on
    };
    std::optional<Crosshair> m_crosshair;
};

} // namespace spectrum
