// SPDX-License-Identifier: Apache-2.0
#pragma once
// StudyFetchJob: a study's arrival as a Job, for the JobTracker (and the transfers panel behind it). It follows a
// StudyStreamer — the study's channel, which lives as long as the study is open and keeps serving it after
// (a damaged image fetched again, a failure retried) — from its listing until every instance is here: progress
// in images, bytes moved, "2 failed" while what is left has failed (stalled), pause and resume (Suspendable),
// retry of the failed images (Retryable), cancel (what is cached stays, nothing more comes). It finishes when
// the whole study is here (no error), when the listing fails (its error) or when cancelled. It belongs to the
// streamer (not auto-deleted): closing the study ends it, and its row, with the streamer.

#include "spectrum/core/job.h"

#include <QPointer>

namespace spectrum {

class StudyStreamer;

class StudyFetchJob : public Job
{
    Q_OBJECT
public:
    /// Follows `streamer` (started or not) under `title`; the job is the streamer's child.
    StudyFetchJob(StudyStreamer *streamer, const QString &title);
    ~StudyFetchJob() override;

    StudyStreamer *streamer() const { return m_streamer; }
    Capabilities capabilities() const override { return Cancellable | Suspendable | Retryable; }

protected:
    void doStart() override;
    void doCancel() override;
    bool doSuspend() override;
    bool doResume() override;
    bool doRetry() override;

private:
    void follow();

    QPointer<StudyStreamer> m_streamer;
};

} // namespace spectrum
