// SPDX-License-Identifier: Apache-2.0
#pragma once
// ResultJob<T>: a Job that produces a typed Result<T>; makeJob(): a job from a plain blocking function.
//
//   auto *job = store->stat(key);                       // ResultJob<BlobInfo>*
//   connect(job, &Job::finished, this, [job] {          // same callback, Async or Sync
//       if (job->result().isOk()) use(job->result().value());
//   });
//   job->start(ExecutionPolicy::Async);
//
// runSync(job) is the return-value wrapper for callers that never want callbacks (command-line tools, tests,
// worker threads): it starts the job synchronously and returns its result.

#include "spectrum/core/job.h"
#include "spectrum/core/result.h"

#include <functional>
#include <memory>

namespace spectrum {

template <typename T>
class ResultJob : public Job
{
public:
    using ValueType = T;
    explicit ResultJob(QObject *parent = nullptr) : Job(parent) {}

    /// Valid once finished() was emitted; a cancelled job holds ErrorCode::Cancelled.
    const Result<T> &result() const { return m_result; }
    Result<T> takeResult() { return std::move(m_result); }

protected:
    void finishWith(Result<T> result)
    {
        if (isFinished())
            return;
        m_result = std::move(result);
        emitResult(m_result.isOk() ? Error() : m_result.error());
    }
    void finishCancelled(const Error &error) override { finishWith(Result<T>(error)); }

private:
    Result<T> m_result;
};

/// A job that fails with `error` as soon as it is started: for requests refused before any work (a bad argument,
/// an unknown store), so that callers still get one shape of answer.
template <typename T>
ResultJob<T> *failedJob(Error error);

/// Where a function job does its work.
enum class RunOn {
    Pool,    ///< blocking work: on blockingPool() under Async, on the caller's thread under Sync
    Caller,  ///< quick work: always on the job's own thread (still reported through the event loop under Async)
};

/// A job around a function `Result<T>(const CancelToken &)`. Under Async the function runs on the pool and its
/// result comes back to the job's thread through a queued signal; under Sync it runs right in start().
template <typename T>
class FunctionJob : public ResultJob<T>
{
public:
    using Function = std::function<Result<T>(const CancelToken &)>;
    FunctionJob(Function fn, RunOn where, QObject *parent = nullptr)
        : ResultJob<T>(parent), m_fn(std::move(fn)), m_where(where) {}

protected:
    bool finishesOnlyLater() const override { return m_where == RunOn::Pool; }
    void doStart() override
    {
        const CancelToken token = this->cancelToken();
        if (m_where == RunOn::Caller || this->policy() == ExecutionPolicy::Sync) {
            this->finishWith(m_fn(token));
            return;
        }
        // If the job is cancelled and deleted meanwhile, the result is dropped, never delivered.
        // Cancelled before the pool got to it: never run, as when cancelled before start.
        runOnPool<Result<T>>(blockingPool(), this, [fn = m_fn, token] {
            return token.isCancelled() ? Result<T>(Error(ErrorCode::Cancelled, QStringLiteral("cancelled by the caller"))) : fn(token);
        },
                             [this](Result<T> &&result) { this->finishWith(std::move(result)); });
    }

private:
    Function m_fn;
    RunOn m_where;
};

template <typename T>
FunctionJob<T> *makeJob(std::function<Result<T>(const CancelToken &)> fn, RunOn where = RunOn::Pool)
{
    return new FunctionJob<T>(std::move(fn), where);
}

template <typename T>
ResultJob<T> *failedJob(Error error)
{
    return makeJob<T>([error](const CancelToken &) -> Result<T> { return error; }, RunOn::Caller);
}

/// A job that runs `first`, then — on the pool — `then(first's value)`. An error of `first` ends the chain with
/// that error. Both run under the chain's own policy; cancelling the chain cancels whichever step is running.
template <typename A, typename B>
class ChainJob : public ResultJob<B>
{
public:
    using Then = std::function<Result<B>(const A &, const CancelToken &)>;
    ChainJob(ResultJob<A> *first, Then then, QObject *parent = nullptr)
        : ResultJob<B>(parent), m_first(first), m_then(std::move(then))
    {
        m_first->setParent(this);
        m_first->setAutoDelete(false);
    }

protected:
    void doStart() override
    {
        QObject::connect(m_first, &Job::finished, this, [this] {
            if (!m_first->result().isOk()) {
                this->finishWith(m_first->result().error());
                return;
            }
            m_second = new FunctionJob<B>([then = m_then, value = m_first->result().value()](const CancelToken &token) {
                return then(value, token);
            }, RunOn::Pool, this);
            m_second->setAutoDelete(false);
            QObject::connect(m_second, &Job::finished, this, [this] { this->finishWith(m_second->takeResult()); });
            m_second->start(this->policy());
        });
        m_first->start(this->policy());
    }
    void doCancel() override
    {
        if (m_second && !m_second->isFinished())
            m_second->cancel();
        else if (!m_first->isFinished())
            m_first->cancel();
    }

private:
    ResultJob<A> *m_first;
    FunctionJob<B> *m_second = nullptr;
    Then m_then;
};

template <typename B, typename A>
ChainJob<A, B> *chainJob(ResultJob<A> *first, typename ChainJob<A, B>::Then then)
{
    return new ChainJob<A, B>(first, std::move(then));
}

/// A job finished by hand: `starter` runs at start() and wires up whatever callbacks lead to complete(). For
/// work that is a conversation of other jobs (search several stores, then merge).
template <typename T>
class CallbackJob : public ResultJob<T>
{
public:
    using Starter = std::function<void(CallbackJob<T> *)>;
    explicit CallbackJob(Starter starter, QObject *parent = nullptr) : ResultJob<T>(parent), m_starter(std::move(starter)) {}
    void complete(Result<T> result) { this->finishWith(std::move(result)); }
    void progressTo(qint64 processed, qint64 total) { this->setProgress(processed, total); }

protected:
    void doStart() override { m_starter(this); }

private:
    Starter m_starter;
};

/// Starts `job` (Async) and calls `then(result)` on `context`'s thread when it finishes — unless `context` is gone
/// by then. The job deletes itself afterwards as usual.
template <typename T, typename F>
void whenDone(ResultJob<T> *job, QObject *context, F then)
{
    QObject::connect(job, &Job::finished, context, [job, then] { then(job->result()); });
    job->start(ExecutionPolicy::Async);
}

/// A function that calls itself again later (a queue worked through step by step), owned by `owner`: it lives
/// until the owner is destroyed, without the reference cycle of a shared_ptr captured by its own lambda.
template <typename Signature>
std::function<Signature> *ownedFunction(QObject *owner)
{
    auto f = std::make_shared<std::function<Signature>>();
    QObject::connect(owner, &QObject::destroyed, [f] {});
    return f.get();
}

/// The synchronous return-value wrapper: start(Sync) and hand back the result. Deletes the job.
template <typename T>
Result<T> runSync(ResultJob<T> *job)
{
    job->setAutoDelete(false);
    job->start(ExecutionPolicy::Sync);
    Result<T> result = job->takeResult();
    delete job;
    return result;
}

/// The same for plain jobs: returns the job's error (ErrorCode::None on success). Deletes the job.
Error runSync(Job *job);

} // namespace spectrum
