// SPDX-License-Identifier: Apache-2.0
#pragma once
// TransfersPanel: what is arriving and leaving — one row per study being fetched from an archive, with its
// progress bar, images and bytes, rate, fetches at once, time left and failures, pause/resume and retry; and one
// row per derived series being sent to an archive, with its progress, cancel, and the archive's answer until
// dismissed. The totals go to the status bar (totalsChanged). Study rows go when their study is closed.

#include <QElapsedTimer>
#include <QList>
#include <QPointer>
#include <QTimer>
#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;
class QScrollArea;
class QVBoxLayout;

namespace spectrum {

class StudyStreamer;
class Job;
struct ExportSummary;
template <typename T>
class ResultJob;

class TransfersPanel : public QWidget
{
    Q_OBJECT
public:
    explicit TransfersPanel(QWidget *parent = nullptr);

    /// "about 40 s left", "about 3 min left", "about 2 h left"; empty for no estimate (negative or NaN).
    static QString timeLeftText(double seconds);

    /// Follows a study arriving from a store, under `title`.
    void addStudy(StudyStreamer *streamer, const QString &title);
    /// Follows images being sent to an archive (StoreRegistry::exportDerivedSeries), under `title`: Cancel
    /// stops it; once done, the row shows what the archive stored and refused until dismissed.
    void addSend(ResultJob<ExportSummary> *job, const QString &title);
    /// Cancels row `row`'s send (what its Cancel button does); false when it is not a send under way.
    bool cancelSend(int row);
    /// Cancels row `row`'s study fetch (its Cancel button): what is cached stays; false when there is none.
    bool cancelFetch(int row);
    /// Rows shown (transfers still there, finished or not).
    int count() const { return int(m_rows.size()); }
    /// Removes the rows that ended (studies all here or cancelled, sends finished); how many went.
    int clearFinished();
    /// "2 transfers · 14.2 MB/s · about 20 s left", or empty when nothing is arriving.
    QString totals() const;
    /// A row's detail line ("120 of 300 images · 60 MB · 12.3 MB/s · 3 at once · about 15 s left").
    QString details(int row) const;
    /// A row's title ("DEMO, HEAD PHANTOM — … from pacs").
    QString title(int row) const;

Q_SIGNALS:
    void totalsChanged(const QString &text);

private:
    struct Row
    {
        QPointer<StudyStreamer> streamer;
        QWidget *widget = nullptr;
        QLabel *title = nullptr;
        QProgressBar *bar = nullptr;
        QLabel *details = nullptr;
        QPushButton *pause = nullptr;
        QPushButton *retry = nullptr;
        QPushButton *cancel = nullptr;
        bool cancelled = false;  ///< a study fetch the user cancelled: what is here stays, nothing more comes
        // A send instead of a study: its job until it finishes, then what came of it.
        bool isSend = false;
        QPointer<Job> send;
        QString sendTitle;
        qint64 sent = 0, sendTotal = 0;
        QString outcome;
        bool sendOk = false;
        qint64 lastBytes = 0;
        double rate = 0;  ///< bytes per second, smoothed
        double secondsLeft = -1;
    };
    void update();
    /// The row's widgets: title, progress bar, details line and `buttons`, added to the panel.
    void layOut(Row &row, const QString &title, const QList<QPushButton *> &buttons);
    void refreshRow(Row &row);
    void refreshSendRow(Row &row);

    QVBoxLayout *m_layout;  ///< the rows, inside m_scroll
    QLabel *m_empty;
    QScrollArea *m_scroll = nullptr;
    QPushButton *m_clear = nullptr;
    QList<Row> m_rows;
    QTimer m_tick;
    QElapsedTimer m_clock;
};

} // namespace spectrum
