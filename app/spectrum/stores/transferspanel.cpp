// SPDX-License-Identifier: Apache-2.0
#include "stores/transferspanel.h"

#include <cmath>

#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/reading/studystreamer.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

namespace spectrum {

namespace {
QString megabytes(qint64 bytes)
{
    return QObject::tr("%1 MB").arg(bytes / 1e6, 0, 'f', bytes < 10'000'000 ? 1 : 0);
}

} // namespace

QString TransfersPanel::timeLeftText(double seconds)
{
    if (std::isnan(seconds) || seconds < 0)
        return QString();
    if (seconds < 90)
        return tr("about %1 s left").arg(std::max(1, int(seconds + 0.5)));
    if (seconds < 90 * 60)
        return tr("about %1 min left").arg(int(seconds / 60 + 0.5));
    if (seconds < 48 * 3600)
        return tr("about %1 h left").arg(int(seconds / 3600 + 0.5));
    return tr("more than two days left at this rate");  // (and an infinite or absurd estimate never overflows)
}

TransfersPanel::TransfersPanel(QWidget *parent) : QWidget(parent), m_layout(new QVBoxLayout), m_empty(new QLabel(tr("Nothing is arriving.")))
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
    m_tick.setInterval(1000);
    connect(&m_tick, &QTimer::timeout, this, &TransfersPanel::update);
    m_clock.start();
}

void TransfersPanel::layOut(Row &row, const QString &title, const QList<QPushButton *> &buttons)
{
    row.widget = new QWidget;
    row.title = new QLabel(title);
    row.bar = new QProgressBar;
    row.details = new QLabel;
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
}

QString TransfersPanel::title(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows[row].title->text() : QString();
}

void TransfersPanel::addStudy(StudyStreamer *streamer, const QString &title)
{
    Row row;
    row.streamer = streamer;
    row.pause = new QPushButton(tr("Pause"));
    row.retry = new QPushButton(tr("Retry failed"));
    row.retry->setEnabled(false);
    row.cancel = new QPushButton(tr("Cancel"));
    layOut(row, title, {row.pause, row.retry, row.cancel});
    QPointer<StudyStreamer> s(streamer);
    connect(row.pause, &QPushButton::clicked, this, [s] {
        if (!s)
            return;
        if (s->isStopped())
            s->resume();
        else
            s->stop();
    });
    connect(row.retry, &QPushButton::clicked, this, [s] {
        if (s)
            s->retryFailed();
    });
    QWidget *widget = row.widget;
    connect(row.cancel, &QPushButton::clicked, this, [this, s, widget] {
        for (Row &r : m_rows) {
            if (r.widget == widget && s) {
                s->stop();
                r.cancelled = true;
                update();
            }
        }
    });
    connect(streamer, &StudyStreamer::progress, this, &TransfersPanel::update);
    connect(streamer, &QObject::destroyed, this, &TransfersPanel::update);
    m_rows << row;
    m_tick.start();
    update();
}

void TransfersPanel::addSend(ResultJob<ExportSummary> *job, const QString &title)
{
    Row row;
    row.isSend = true;
    row.send = job;
    row.pause = new QPushButton(tr("Cancel"));
    layOut(row, title, {row.pause});
    row.bar->setRange(0, 0);  // busy until the first image is made
    row.details->setText(tr("preparing…"));
    QWidget *widget = row.widget;
    auto rowOf = [this, widget]() -> Row * {
        for (Row &r : m_rows) {
            if (r.widget == widget)
                return &r;
        }
        return nullptr;
    };
    connect(row.pause, &QPushButton::clicked, this, [this, rowOf, widget] {
        Row *r = rowOf();
        if (!r)
            return;
        if (r->send) {
            r->send->cancel();  // finished() follows at once, with Cancelled
            return;
        }
        delete widget;  // dismissed
        m_rows.removeAt(std::distance(m_rows.data(), r));
        update();
    });
    connect(job, &Job::progress, this, [this, rowOf](qint64 done, qint64 total) {
        if (Row *r = rowOf()) {
            r->sent = done;
            r->sendTotal = total;
            refreshSendRow(*r);
        }
    });
    connect(job, &Job::finished, this, [this, rowOf, job] {
        Row *r = rowOf();
        if (!r)
            return;
        const Result<ExportSummary> result = job->result();
        r->sendOk = result.isOk();
        if (!result.isOk()) {
            r->outcome = result.error().code() == ErrorCode::Cancelled ? tr("cancelled") : tr("failed: %1").arg(result.error().toString());
        } else if (result.value().failed.isEmpty()) {
            r->outcome = tr("%n image(s) stored", nullptr, int(result.value().stored.size()));
        } else {
            r->outcome = tr("%1 stored, %2 refused: %3").arg(result.value().stored.size()).arg(result.value().failed.size())
                             .arg(result.value().failed.first().second);
        }
        r->send = nullptr;
        refreshSendRow(*r);
        update();
    });
    m_rows << row;
    refreshSendRow(m_rows.last());
    update();
}

int TransfersPanel::clearFinished()
{
    int removed = 0;
    for (int i = int(m_rows.size()) - 1; i >= 0; --i) {
        const Row &r = m_rows[i];
        const bool finished = r.isSend ? !r.send : (!r.streamer || r.cancelled || r.streamer->isComplete());
        if (!finished)
            continue;
        delete r.widget;
        m_rows.removeAt(i);
        ++removed;
    }
    update();
    return removed;
}

bool TransfersPanel::cancelFetch(int row)
{
    if (row < 0 || row >= m_rows.size() || m_rows[row].isSend || !m_rows[row].streamer || !m_rows[row].cancel->isEnabled())
        return false;
    m_rows[row].cancel->click();
    return true;
}

bool TransfersPanel::cancelSend(int row)
{
    if (row < 0 || row >= m_rows.size() || !m_rows[row].isSend || !m_rows[row].send)
        return false;
    m_rows[row].pause->click();
    return true;
}

void TransfersPanel::refreshSendRow(Row &row)
{
    if (row.sendTotal > 0) {
        row.bar->setRange(0, int(row.sendTotal));
        row.bar->setValue(int(row.sent));
    }
    if (!row.send) {  // done: the answer, until dismissed
        if (row.bar->maximum() == 0)
            row.bar->setRange(0, 1);
        if (row.sendOk)
            row.bar->setValue(row.bar->maximum());
        row.details->setText(row.outcome);
        row.pause->setText(tr("Dismiss"));
        return;
    }
    row.details->setText(row.sendTotal > 0 ? tr("%1 of %2 images made · sending").arg(row.sent).arg(row.sendTotal) : tr("preparing…"));
}

void TransfersPanel::refreshRow(Row &row)
{
    StudyStreamer *s = row.streamer;
    row.bar->setRange(0, std::max(1, s->total()));
    row.bar->setValue(s->cachedCount());
    const bool done = s->isComplete();
    row.pause->setText(s->isStopped() ? tr("Resume") : tr("Pause"));
    row.pause->setEnabled(!done && !row.cancelled);
    row.retry->setEnabled(s->failedCount() > 0 && !row.cancelled);
    row.cancel->setEnabled(!done && !row.cancelled);
    QStringList parts{tr("%1 of %2 images").arg(s->cachedCount()).arg(s->total()), megabytes(s->bytesFetched())};
    if (done) {
        parts << (s->failedCount() > 0 ? tr("%n failed", nullptr, s->failedCount()) : tr("complete"));
    } else if (row.cancelled) {
        parts << tr("cancelled");
    } else if (s->isStopped()) {
        parts << tr("paused");
    } else {
        parts << tr("%1 MB/s").arg(row.rate / 1e6, 0, 'f', 1) << tr("%n at once", nullptr, s->fetching());
        if (row.secondsLeft >= 0)
            parts << timeLeftText(row.secondsLeft);
        if (s->failedCount() > 0)
            parts << tr("%n failed", nullptr, s->failedCount());
    }
    row.details->setText(parts.join(QStringLiteral(" · ")));
}

void TransfersPanel::update()
{
    const double elapsed = std::max(0.001, m_clock.restart() / 1000.0);
    for (int i = int(m_rows.size()) - 1; i >= 0; --i) {
        Row &row = m_rows[i];
        if (row.isSend)
            continue;  // follows its job's signals
        if (!row.streamer) {  // its study was closed
            delete row.widget;
            m_rows.removeAt(i);
            continue;
        }
        StudyStreamer *s = row.streamer;
        const qint64 bytes = s->bytesFetched();
        const double now = (bytes - row.lastBytes) / elapsed;
        row.rate = row.rate <= 0 ? now : 0.7 * row.rate + 0.3 * now;  // smoothed over a few updates
        row.lastBytes = bytes;
        const int left = s->total() - s->cachedCount() - s->failedCount();
        const double perImage = s->cachedCount() > 0 ? double(bytes) / std::max(1, s->cachedCount()) : 0;
        // Below a byte a second nothing is moving (the smoothed rate decays towards zero, never to it): no estimate.
        row.secondsLeft = row.rate >= 1 && perImage > 0 && left > 0 ? left * perImage / row.rate : -1;
        refreshRow(row);
    }
    m_empty->setVisible(m_rows.isEmpty());
    if (m_rows.isEmpty())
        m_tick.stop();
    Q_EMIT totalsChanged(totals());
}

QString TransfersPanel::totals() const
{
    int active = 0;
    double rate = 0, left = 0;
    int sending = 0;
    for (const Row &row : m_rows) {
        if (row.isSend) {
            sending += row.send ? 1 : 0;
            continue;
        }
        if (!row.streamer || row.streamer->isComplete() || row.streamer->isStopped())
            continue;
        ++active;
        rate += row.rate;
        left = std::max(left, row.secondsLeft);
    }
    QStringList parts;
    if (active > 0) {
        parts << tr("%n transfer(s)", nullptr, active) << tr("%1 MB/s").arg(rate / 1e6, 0, 'f', 1);
        if (left > 0)
            parts << timeLeftText(left);
    }
    if (sending > 0)
        parts << tr("sending %n series", nullptr, sending);
    return parts.join(QStringLiteral(" · "));
}

QString TransfersPanel::details(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows[row].details->text() : QString();
}

} // namespace spectrum
