// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/jobtracker.h"

#include <QStringList>

#include <algorithm>
#include <cmath>

namespace spectrum {

JobTracker::JobTracker(QObject *parent) : QObject(parent)
{
    m_tick.setInterval(1000);
    connect(&m_tick, &QTimer::timeout, this, &JobTracker::tick);
    m_clock.start();
}

void JobTracker::add(Job *job, Direction direction)
{
    if (!job || find(job))
        return;
    Followed f;
    f.job = job;
    f.direction = direction;
    f.lastBytes = job->bytesDone();
    m_jobs << f;
    connect(job, &Job::changed, this, [this, job] {
        if (isMoving(job) && !m_tick.isActive()) {  // going on again: its rate from now
            for (Followed &f : m_jobs) {
                if (f.job == job)
                    f.lastBytes = job->bytesDone();
            }
            m_clock.restart();
            m_tick.start();
        }
        Q_EMIT updated();
    });
    connect(job, &Job::finished, this, &JobTracker::updated, Qt::QueuedConnection);  // after its own slots
    connect(job, &QObject::destroyed, this, [this] {
        m_jobs.erase(std::remove_if(m_jobs.begin(), m_jobs.end(), [](const Followed &f) { return !f.job; }), m_jobs.end());
        Q_EMIT updated();
    });
    if (!m_tick.isActive()) {
        m_clock.restart();
        m_tick.start();
    }
    Q_EMIT added(job);
    Q_EMIT updated();
}

QList<Job *> JobTracker::jobs() const
{
    QList<Job *> out;
    for (const Followed &f : m_jobs) {
        if (f.job)
            out << f.job.data();
    }
    return out;
}

const JobTracker::Followed *JobTracker::find(const Job *job) const
{
    for (const Followed &f : m_jobs) {
        if (f.job == job)
            return &f;
    }
    return nullptr;
}

JobTracker::Direction JobTracker::direction(const Job *job) const
{
    const Followed *f = find(job);
    return f ? f->direction : Direction::Incoming;
}

double JobTracker::rate(const Job *job) const
{
    const Followed *f = find(job);
    return f && isMoving(job) ? f->rate : 0;
}

double JobTracker::secondsLeft(const Job *job) const
{
    const Followed *f = find(job);
    return f && isMoving(job) ? f->secondsLeft : -1;
}

bool JobTracker::isMoving(const Job *job)
{
    return job && !job->isFinished() && !job->isSuspended() && !job->isStalled();
}

void JobTracker::tick()
{
    const double elapsed = std::max(0.001, m_clock.restart() / 1000.0);
    bool running = false;
    for (Followed &f : m_jobs) {
        if (!isMoving(f.job))
            continue;
        running = true;
        const qint64 bytes = f.job->bytesDone();
        const double now = (bytes - f.lastBytes) / elapsed;
        f.rate = f.rate <= 0 ? now : 0.7 * f.rate + 0.3 * now;  // smoothed over a few ticks
        f.lastBytes = bytes;
        const qint64 done = f.job->processedAmount(), left = f.job->totalAmount() - done;
        const double perUnit = done > 0 ? double(bytes) / double(done) : 0;
        // Below a byte a second nothing is moving (the smoothed rate decays towards zero, never to it): no estimate.
        f.secondsLeft = f.rate >= 1 && perUnit > 0 && left > 0 ? double(left) * perUnit / f.rate : -1;
    }
    if (!running)
        m_tick.stop();
    Q_EMIT updated();
}

QString JobTracker::summary() const
{
    int incoming = 0, outgoing = 0;
    double rate = 0, left = 0;
    for (const Followed &f : m_jobs) {
        if (!isMoving(f.job))
            continue;
        if (f.direction == Direction::Outgoing) {
            ++outgoing;
            continue;
        }
        ++incoming;
        rate += f.rate;
        left = std::max(left, f.secondsLeft);
    }
    QStringList parts;
    if (incoming > 0) {
        parts << tr("%n transfer(s)", nullptr, incoming) << tr("%1 MB/s").arg(rate / 1e6, 0, 'f', 1);
        if (left > 0)
            parts << timeLeftText(left);
    }
    if (outgoing > 0)
        parts << tr("%n send(s)", nullptr, outgoing);
    return parts.join(QStringLiteral(" · "));
}

QString JobTracker::timeLeftText(double seconds)
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

} // namespace spectrum
