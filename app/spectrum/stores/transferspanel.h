// SPDX-License-Identifier: Apache-2.0
#pragma once
// TransfersPanel: what is arriving and leaving, as the JobTracker follows it — one row per job: its title, a
// progress bar, its status in its own words (Job::statusText) with the rate and time left the tracker keeps, and
// buttons for what the job can do: Pause/Resume (Suspendable), Retry failed (Retryable), Cancel — Dismiss once it
// ended. A row whose job belongs to something else (a study's arrival, to its open study) goes with it; a row of a
// job that deletes itself (a send) stays with its outcome until dismissed or cleared — the kKeptSucceeded that ended
// last of those that went well and the kKeptFailed of those that did not, so that a working day does not grow the
// panel without end (those that ended longer ago leave by themselves; a prior prefetched goes with its stream, which
// the prefetcher keeps a while: PriorPrefetcher::kKeptDone). The status bar reads the
// tracker's summary, not this panel.

#include <QList>
#include <QPointer>
#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;
class QScrollArea;
class QVBoxLayout;

namespace spectrum {

class Job;
class JobTracker;

class TransfersPanel : public QWidget
{
    Q_OBJECT
public:
    /// Shows the jobs `tracker` follows now and those it is told of later.
    explicit TransfersPanel(JobTracker *tracker, QWidget *parent = nullptr);

    /// Ended rows of jobs that deleted themselves kept at most, the newest: those that went well, those that did not.
    static constexpr int kKeptSucceeded = 20;
    static constexpr int kKeptFailed = 50;

    /// Rows shown (jobs still there, ended or not).
    int count() const { return int(m_rows.size()); }
    /// Removes the rows whose job ended (a study all here or cancelled, a send done); how many went.
    int clearFinished();
    /// Cancels row `row`'s job (what its Cancel button does): false when it has ended (or there is no such row).
    bool cancel(int row);
    /// A row's detail line ("120 of 300 images · 60 MB · 3 at once · 12.3 MB/s · about 15 s left").
    QString details(int row) const;
    /// A row's title ("DEMO, HEAD PHANTOM — … from pacs").
    QString title(int row) const;

private:
    struct Row
    {
        QPointer<Job> job;
        bool owned = false;  ///< the job belongs to something else: the row goes when the job does
        bool ended = false;
        bool failed = false;  ///< ended with an error (or cancelled)
        quint64 endedAt = 0;  ///< when it ended, in the order rows end (m_ends)
        QWidget *widget = nullptr;
        QLabel *title = nullptr;
        QProgressBar *bar = nullptr;
        QLabel *details = nullptr;
        QPushButton *pause = nullptr;
        QPushButton *retry = nullptr;
        QPushButton *cancel = nullptr;
    };
    void add(Job *job);
    Row *rowOf(const QWidget *widget);
    void remove(const QWidget *widget);
    /// Drops the rows that ended longest ago beyond kKeptSucceeded and kKeptFailed (not those that go with their owner).
    void keepRecentEnded();
    void refresh(Row &row);
    void refreshAll();

    JobTracker *m_tracker;
    QVBoxLayout *m_layout;  ///< the rows, inside m_scroll
    QLabel *m_empty;
    QScrollArea *m_scroll = nullptr;
    QPushButton *m_clear = nullptr;
    QList<Row> m_rows;
    quint64 m_ends = 0;
};

} // namespace spectrum
