#pragma once
// TransfersPanel: what is arriving — one row per study being fetched from an archive, with its progress bar,
// images and bytes, rate, fetches at once, time left and failures; pause/resume and retry. The totals go to the
// status bar (totalsChanged). Rows follow their transfer and go when it does.

#include <QElapsedTimer>
#include <QList>
#include <QPointer>
#include <QTimer>
#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;
class QVBoxLayout;

namespace spectrum {

class StudyStreamer;

class TransfersPanel : public QWidget
{
    Q_OBJECT
public:
    explicit TransfersPanel(QWidget *parent = nullptr);

    /// Follows a study arriving from a store, under `title`.
    void addStudy(StudyStreamer *streamer, const QString &title);
    /// Rows shown (transfers still there, finished or not).
    int count() const { return int(m_rows.size()); }
    /// "2 transfers · 14.2 MB/s · about 20 s left", or empty when nothing is arriving.
    QString totals() const;
    /// A row's detail line ("120 of 300 images · 60 MB · 12.3 MB/s · 3 at once · about 15 s left").
    QString details(int row) const;

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
        qint64 lastBytes = 0;
        double rate = 0;  ///< bytes per second, smoothed
        double secondsLeft = -1;
    };
    void update();
    void refreshRow(Row &row);

    QVBoxLayout *m_layout;
    QLabel *m_empty;
    QList<Row> m_rows;
    QTimer m_tick;
    QElapsedTimer m_clock;
};

} // namespace spectrum
