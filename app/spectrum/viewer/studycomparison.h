// SPDX-License-Identifier: Apache-2.0
#pragma once
// StudyComparison: the patient's other studies open in a study viewer beside the one being read — opened (never
// another patient's: refused and said), shown beside it in the pane after the reader's with the series most like
// the reader's, listed whole once their first look is replaced, closed when an archive's answers about them
// disagree; each pane labelled CURRENT, PRIOR (with how much earlier) or LATER while one is open. The streams
// that fetch them belong to the viewer. `viewer->comparison()->openBeside(prior)`.

#include "spectrum/stores/reading/studycatalog.h"

#include <QObject>
#include <QString>

#include <memory>
#include <vector>

namespace spectrum {

class SeriesPane;
class StudyStreamer;
class StudyViewer;

class StudyComparison : public QObject
{
    Q_OBJECT
public:
    explicit StudyComparison(StudyViewer *viewer);
    ~StudyComparison() override;

    /// Opens `study` — another study of the same patient — in the viewer: its series can be shown in any pane.
    /// Refused (false, the viewer's errorOccurred, nothing shown) when it is another patient's (Patient ID, issuer,
    /// name or birth date differ). `streamer`: the study still arrives from an archive; the viewer owns it from now.
    bool add(const StudySummary &study, StudyStreamer *streamer = nullptr);
    /// add(), then shows it beside the current study: at least two panes, the pane after the active one (or the
    /// second) showing the series most like the active one's — the same description, else the same modality with
    /// the most images, else the first.
    bool openBeside(const StudySummary &study, StudyStreamer *streamer = nullptr);
    /// A study opened beside on its first look, now listed whole: its panes keep the image they show, at its place
    /// in the whole list. Refused (false, its panes cleared, errorOccurred) when the listing names another patient.
    bool update(const StudySummary &whole);
    /// Closes a study opened beside (its listing named another patient, or it could not be listed): its panes show
    /// the current study again, its stream stops and goes, its series leave the list, `why` on its row.
    void close(const QString &studyUid, const QString &why);
    int count() const { return int(m_open.size()); }
    const StudySummary &study(int i) const;

Q_SIGNALS:
    /// Another study of the patient is open in the viewer (add).
    void opened(const spectrum::StudySummary &study);

private:
    friend class StudyViewer;
    struct OpenStudy
    {
        StudySummary study;
        StudyStreamer *streamer = nullptr;
    };
    /// The open study (and its stream) under `studyKey` (PriorsPanel::studyKey); false: none.
    bool find(const QString &studyKey, const StudySummary **study, StudyStreamer **streamer) const;
    /// The stream `pane`'s study arrives by, if it still does.
    StudyStreamer *streamerOf(const SeriesPane *pane) const;
    /// "PRIOR 2023-01-03 (1 year earlier)" / "CURRENT …" on every pane while another study is open.
    void updateLabels();

    StudyViewer *m_viewer;
    std::vector<std::unique_ptr<OpenStudy>> m_open;
    std::vector<std::unique_ptr<OpenStudy>> m_closed;  ///< kept while the viewer lives: panes being deleted still point at them
};

} // namespace spectrum
