// SPDX-License-Identifier: Apache-2.0
#pragma once
// CompoundJob<T>: a job made of sub-jobs (after KDE's KCompoundJob) — a fetch plan that lists, streams, falls
// back and keeps; a search that asks several stores. The sub-jobs run on this job's thread; cancelling the
// compound cancels every sub-job still running; a sub-job's result reaches its continuation only while the
// compound has not finished. Subclasses write their steps as member functions and end with finishWith().
//
//   class FetchPlan : public CompoundJob<FetchSummary> {
//       void doStart() override { addSubjob(m_client->search(q), [this](const Result<QList<DicomRecord>> &r) { listed(r); }); }
//       void listed(const Result<QList<DicomRecord>> &r) { … finishWith(summary); }
//   };

#include "spectrum/core/resultjob.h"

#include <QList>
#include <QPointer>

namespace spectrum {

template <typename T>
class CompoundJob : public ResultJob<T>
{
public:
    explicit CompoundJob(QObject *parent = nullptr) : ResultJob<T>(parent) {}

protected:
    /// Starts `sub` (Async) as part of this job; `then(its result)` runs on this job's thread when it ends —
    /// unless this job has finished (or gone) by then. Cancelled with this job.
    template <typename S, typename F>
    void addSubjob(ResultJob<S> *sub, F then)
    {
        m_subjobs.append(QPointer<Job>(sub));
        QObject::connect(sub, &Job::finished, this, [this, sub, then] {
            m_subjobs.removeAll(QPointer<Job>(sub));
            if (!this->isFinished() && !m_cancelling)
                then(sub->result());
        });
        sub->start(ExecutionPolicy::Async);
    }

    /// Sub-jobs still running.
    int runningSubjobs() const
    {
        int n = 0;
        for (const QPointer<Job> &j : m_subjobs)
            n += j && !j->isFinished();
        return n;
    }

    /// Cancels every sub-job still running (their continuations do not run: this job has finished by then).
    void doCancel() override
    {
        m_cancelling = true;
        cancelSubjobs();
    }

    void cancelSubjobs()
    {
        const QList<QPointer<Job>> running = std::exchange(m_subjobs, {});
        for (const QPointer<Job> &j : running) {
            if (j && !j->isFinished())
                j->cancel();
        }
    }

private:
    QList<QPointer<Job>> m_subjobs;
    bool m_cancelling = false;
};

} // namespace spectrum
