// SPDX-License-Identifier: Apache-2.0
#pragma once
// JobTracker: the one place long-running work is followed, as KDE's job tracker — studies arriving, series and
// findings leaving. Whoever starts a job the reader should see adds it here (add()); the transfers panel shows a
// row per job it was told of (added()), and the status bar shows summary(). The tracker keeps each running job's
// rate (from Job::bytesDone, smoothed) and time left, and tells its watchers once a second while anything runs
// (updated()). It owns no job: a job goes when it deletes itself (autoDelete) or when its owner does.

#include "spectrum/core/job.h"

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTimer>

namespace spectrum {

class JobTracker : public QObject
{
    Q_OBJECT
public:
    enum class Direction {
        Incoming,  ///< into the workstation (a study fetched)
        Outgoing,  ///< to an archive (a derived series, findings, a de-identified copy)
    };
    explicit JobTracker(QObject *parent = nullptr);

    /// Follows `job` (titled, started or about to be); added() tells the watchers. Adding it again does nothing.
    void add(Job *job, Direction direction = Direction::Incoming);
    /// The jobs followed that still exist, in the order they were added.
    QList<Job *> jobs() const;
    Direction direction(const Job *job) const;
    /// Bytes a second, smoothed over a few seconds; 0 while nothing moves or for a job not followed.
    double rate(const Job *job) const;
    /// Seconds until it is done at its rate, from the bytes of each unit done so far; negative for no estimate.
    double secondsLeft(const Job *job) const;
    /// Whether it moves on by itself: running, not suspended, not stalled.
    static bool isMoving(const Job *job);
    /// "2 transfer(s) · 14.2 MB/s · about 20 s left · 1 send(s)", or empty when nothing moves.
    QString summary() const;
    /// "about 40 s left", "about 3 min left", "about 2 h left"; empty for no estimate (negative or NaN).
    static QString timeLeftText(double seconds);

Q_SIGNALS:
    void added(spectrum::Job *job);
    /// Rates, times left or some job's state changed; summary() may read otherwise.
    void updated();

private:
    struct Followed
    {
        QPointer<Job> job;
        Direction direction = Direction::Incoming;
        qint64 lastBytes = 0;
        double rate = 0;
        double secondsLeft = -1;
    };
    void tick();
    const Followed *find(const Job *job) const;

    QList<Followed> m_jobs;
    QTimer m_tick;
    QElapsedTimer m_clock;
};

} // namespace spectrum
