// SPDX-License-Identifier: Apache-2.0
#pragma once
// StreamAdaptation: the timing of a pull's `--streams auto` around StreamSteps' decisions — once a step's streams
// are attached, wait for their first requests' round trip, measure the rate the job receives at, ask StreamSteps
// for the next step and have the job open that many streams; until a step is the last, or the job stops it (the
// session was lost, nothing is left to ask for). The job keeps its streams; this keeps the clock and the timers.

#include "blobclient/streamsteps.h"

#include <QElapsedTimer>
#include <QObject>

#include <functional>
#include <optional>

namespace spectrum::blobwire {

class StreamAdaptation : public QObject
{
public:
    /// What it asks of the job: the bytes received so far, its streams attached, whether it has finished,
    /// whether more streams are of use (something left to ask for, a session), and to have `n` streams.
    struct Job
    {
        std::function<qint64()> bytesReceived;
        std::function<int()> attachedStreams;
        std::function<bool()> finished;
        std::function<bool()> wantsMore;
        std::function<void(int)> growTo;
    };
    StreamAdaptation(QObject *parent, Job job) : QObject(parent), m_job(std::move(job)) {}

    /// The first step's `streams` are opening, at most `maxStreams`, on a path of `roundTripMs`.
    void start(int maxStreams, double roundTripMs, int streams);
    /// A stream attached: once all of the step's are, its measurement starts a round trip later.
    void attached();
    /// No step follows: the count reached is kept.
    void stop();

private:
    void measured();

    Job m_job;
    std::optional<StreamSteps> m_steps;
    QElapsedTimer m_clock;
    int m_target = 0;  ///< streams of the current step
    bool m_measuring = false;
    qint64 m_startBytes = 0;
    qint64 m_startNs = 0;
};

} // namespace spectrum::blobwire
