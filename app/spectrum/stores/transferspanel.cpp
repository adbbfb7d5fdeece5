// SPDX-License-Identifier: Apache-2.0
#include "stores/transferspanel.h"

#include "spectrum/core/jobtracker.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>

namespace spectrum {

TransfersPanel::TransfersPanel(JobTracker *tracker, QWidget *parent)
    : QWidget(parent), m_tracker(tracker), m_layout(new QVBoxLayout), m_empty(new QLabel(tr("Nothing is arriving.")))
{
    // The rows scroll inside the panel: however many transfers there are, the panel never grows the window.
    auto *rows = new QWidget;
    rows->setLayout(m_layout);
    m_layout->addWidget(m_empty);
    m_layout->addStretch();
    m_scroll = new QScrollArea;
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_scroll->setWidget(rows);
    m_clear = new QPushButton(tr("Clear finished"));
    m_clear->setObjectName(QStringLiteral("clearFinished"));
    m_clear->setToolTip(tr("Removes the studies that have all arrived (or were cancelled) and the sends that ended"));
    connect(m_clear, &QPushButton::clicked, this, &TransfersPanel::clearFinished);
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(m_scroll, 1);
    auto *buttons = new QHBoxLayout;
    buttons->addStretch();
    buttons->addWidget(m_clear);
    outer->addLayout(buttons);
    for (Job *job : tracker->jobs())
        add(job);
    connect(tracker, &JobTracker::added, this, &TransfersPanel::add);
    connect(tracker, &JobTracker::updated, this, &TransfersPanel::refreshAll);
}

void TransfersPanel::add(Job *job)
{
    Row row;
    row.job = job;
    row.owned = !job->isAutoDelete();
    row.ended = job->isFinished();
    row.failed = row.ended && job->hasError();
    row.endedAt = row.ended ? ++m_ends : 0;
    row.widget = new QWidget;
    row.title = new QLabel(job->title());
    row.bar = new QProgressBar;
    row.details = new QLabel;
    QList<QPushButton *> buttons;
    if (job->capabilities() & Job::Suspendable)
        buttons << (row.pause = new QPushButton(tr("Pause")));
    if (job->capabilities() & Job::Retryable)
        buttons << (row.retry = new QPushButton(tr("Retry failed")));
    buttons << (row.cancel = new QPushButton(tr("Cancel")));
    auto *buttonRow = new QHBoxLayout;
    for (QPushButton *b : buttons)
        buttonRow->addWidget(b);
    buttonRow->addStretch();
    auto *box = new QVBoxLayout(row.widget);
    box->setContentsMargins(0, 4, 0, 8);
    box->addWidget(row.title);
    box->addWidget(row.bar);
    box->addWidget(row.details);
    box->addLayout(buttonRow);
    m_layout->insertWidget(m_layout->count() - 1, row.widget);
    m_empty->hide();

    const QWidget *widget = row.widget;
    QPointer<Job> j(job);
    if (row.pause) {
        connect(row.pause, &QPushButton::clicked, this, [j] {
            if (j && !j->resume())
                j->suspend();
        });
    }
    if (row.retry) {
        connect(row.retry, &QPushButton::clicked, this, [j] {
            if (j)
                j->retry();
        });
    }
    connect(row.cancel, &QPushButton::clicked, this, [this, widget] {
        Row *r = rowOf(widget);
        if (!r)
            return;
        if (r->ended || !r->job)
            return remove(widget);  // Dismiss
        r->job->cancel();  // finished() follows at once, with Cancelled
    });
    auto follow = [this, widget] {
        if (Row *r = rowOf(widget))
            refresh(*r);
    };
    connect(job, &Job::progress, this, follow);
    connect(job, &Job::changed, this, follow);
    connect(job, &Job::finished, this, [this, widget] {
        if (Row *r = rowOf(widget)) {
            r->ended = true;
            r->failed = r->job && r->job->hasError();
            r->endedAt = ++m_ends;
            refresh(*r);
        }
        keepRecentEnded();
    });
    connect(job, &QObject::destroyed, this, [this, widget] {
        Row *r = rowOf(widget);
        if (r && r->owned)
            remove(widget);  // its study was closed
    });
    m_rows << row;
    refresh(m_rows.last());
    keepRecentEnded();
}

void TransfersPanel::keepRecentEnded()
{
    // By when they ended, not when they were added: a long send that began before twenty short ones shows its end.
    QList<quint64> succeeded, failed;
    for (const Row &r : std::as_const(m_rows)) {
        if (r.ended && !r.owned)
            (r.failed ? failed : succeeded) << r.endedAt;
    }
    auto cutOf = [](QList<quint64> &ends, int kept) {
        if (ends.size() <= kept)
            return quint64(0);
        std::nth_element(ends.begin(), ends.begin() + (ends.size() - kept - 1), ends.end());
        return ends[ends.size() - kept - 1];  // this one and those that ended before it go
    };
    const quint64 succeededCut = cutOf(succeeded, kKeptSucceeded), failedCut = cutOf(failed, kKeptFailed);
    for (int i = int(m_rows.size()) - 1; i >= 0; --i) {
        const Row &r = m_rows[i];
        if (!r.ended || r.owned || r.endedAt > (r.failed ? failedCut : succeededCut))
            continue;
        m_rows[i].widget->hide();
        m_rows[i].widget->deleteLater();  // not its own Dismiss: that is a later row's click or none
        m_rows.removeAt(i);
    }
    m_empty->setVisible(m_rows.isEmpty());
}

TransfersPanel::Row *TransfersPanel::rowOf(const QWidget *widget)
{
    for (Row &r : m_rows) {
        if (r.widget == widget)
            return &r;
    }
    return nullptr;
}

void TransfersPanel::remove(const QWidget *widget)
{
    for (int i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].widget == widget) {
            m_rows[i].widget->hide();
            m_rows[i].widget->deleteLater();  // its Dismiss button may be what is calling
            m_rows.removeAt(i);
            break;
        }
    }
    m_empty->setVisible(m_rows.isEmpty());
}

int TransfersPanel::clearFinished()
{
    int removed = 0;
    for (int i = int(m_rows.size()) - 1; i >= 0; --i) {
        // Ended, gone, or waiting for nobody will come (everything left failed): what Clear finished clears.
        if (!m_rows[i].ended && m_rows[i].job && !m_rows[i].job->isStalled())
            continue;
        delete m_rows[i].widget;
        m_rows.removeAt(i);
        ++removed;
    }
    m_empty->setVisible(m_rows.isEmpty());
    return removed;
}

bool TransfersPanel::cancel(int row)
{
    if (row < 0 || row >= m_rows.size() || m_rows[row].ended || !m_rows[row].job)
        return false;
    m_rows[row].cancel->click();
    return true;
}

void TransfersPanel::refresh(Row &row)
{
    Job *job = row.job;
    if (!job)
        return;  // gone after it ended: its last words stay
    row.title->setText(job->title());
    if (job->totalAmount() > 0) {
        row.bar->setRange(0, int(std::min<qint64>(job->totalAmount(), std::numeric_limits<int>::max())));
        row.bar->setValue(int(std::min<qint64>(job->processedAmount(), row.bar->maximum())));
    } else if (!row.ended) {
        row.bar->setRange(0, 0);  // busy until it knows how much there is
    } else {
        row.bar->setRange(0, 1);
        row.bar->setValue(job->hasError() ? 0 : 1);
    }
    QStringList parts;
    if (!job->statusText().isEmpty())
        parts << job->statusText();
    if (job->isSuspended() && !row.ended) {
        parts << tr("paused");
    } else if (JobTracker::isMoving(job) && job->bytesDone() > 0) {
        parts << tr("%1 MB/s").arg(m_tracker->rate(job) / 1e6, 0, 'f', 1);
        if (const QString left = JobTracker::timeLeftText(m_tracker->secondsLeft(job)); !left.isEmpty())
            parts << left;
    }
    row.details->setText(parts.join(QStringLiteral(" · ")));
    if (row.pause) {
        row.pause->setText(job->isSuspended() ? tr("Resume") : tr("Pause"));
        row.pause->setEnabled(!row.ended && !job->isStalled());
    }
    if (row.retry)
        row.retry->setEnabled(!row.ended && job->canRetry());
    row.cancel->setText(row.ended ? tr("Dismiss") : tr("Cancel"));
}

void TransfersPanel::refreshAll()
{
    for (Row &row : m_rows)
        refresh(row);
}

QString TransfersPanel::details(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows[row].details->text() : QString();
}

QString TransfersPanel::title(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows[row].title->text() : QString();
}

} // namespace spectrum
