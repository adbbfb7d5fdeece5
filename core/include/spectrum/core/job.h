// SPDX-License-Identifier: Apache-2.0
#pragma once
// Job: the one shape of every long operation in Spectrum (the uniform callback API of the Blob Streaming
// paper, modelled on KJob and QNetworkReply).
//
// Connect to finished() (and, if you care, progress() and dataAvailable()), then start(policy):
//   - ExecutionPolicy::Async: start() returns at once; finished() is emitted later, from the event loop of the
//     thread that owns the job (the thread that created it), so callbacks run on the caller's thread.
//   - ExecutionPolicy::Sync: start() returns only after finished() has been emitted and its slots ran.
// The callback code is the same under both policies: switching is toggling a flag.
//
// Promises: finished() is emitted exactly once — after success, failure or cancel(); a job that was never
// started and is destroyed emits nothing. With autoDelete (the default) the job deletes itself after finished(),
// through deleteLater(), so a Sync caller can still read it right after start() returns.
//
// Thread-safety: a Job lives on one thread; call its methods from that thread. To cancel from another thread
// use QMetaObject::invokeMethod(job, &Job::cancel, Qt::QueuedConnection).

#include "spectrum/core/error.h"
#include "spectrum/core/threadpools.h"

#include <QObject>

#include <atomic>
#include <functional>
#include <memory>

class QThreadPool;

namespace spectrum {


enum class ExecutionPolicy {
    Async,  ///< return at once; finished() arrives through the event loop
    Sync,   ///< return after finished() was emitted
};

/// Shared flag that blocking work polls to stop early when its job is cancelled. Cheap to copy; thread-safe.
class CancelToken
{
public:
    CancelToken() : m_flag(std::make_shared<std::atomic<bool>>(false)) {}
    bool isCancelled() const { return m_flag->load(std::memory_order_relaxed); }
    void cancel() const { m_flag->store(true, std::memory_order_relaxed); }

private:
    std::shared_ptr<std::atomic<bool>> m_flag;
};

/// Delivers calls to an object's thread for as long as the object lives, from any thread: what a pool task uses
/// to report back. A call posted after the object was destroyed is dropped, as is one still queued when it is.
class DeliveryAddress : public std::enable_shared_from_this<DeliveryAddress>
{
public:
    static std::shared_ptr<DeliveryAddress> of(QObject *context);
    ~DeliveryAddress();
    /// Queues `call` for the context's thread; thread-safe. False when the context is gone (nothing queued).
    bool post(std::function<void()> call);

private:
    DeliveryAddress() = default;
    struct State;
    std::unique_ptr<State> d;
};

/// Runs `work` on `pool`, then `then(its result)` on the thread of `context` through one queued call, unless
/// `context` is destroyed first (the result is then dropped, never delivered). What QtConcurrent::run and a
/// QFutureWatcher child do, without the watcher object, the future and their several queued events per call.
template <typename R>
void runOnPool(QThreadPool *pool, QObject *context, std::function<R()> work, std::function<void(R &&)> then, int priority = 0)
{
    std::shared_ptr<DeliveryAddress> to = DeliveryAddress::of(context);
    startOnPool(
        pool,
        [to, work = std::move(work), then = std::move(then)] {
            auto result = std::make_shared<R>(work());
            to->post([then, result] { then(std::move(*result)); });
        },
        priority);
}

class Job : public QObject
{
    Q_OBJECT
public:
    explicit Job(QObject *parent = nullptr);
    ~Job() override;

    /// Starts the job; see the file comment for the two policies. Call at most once.
    void start(ExecutionPolicy policy = ExecutionPolicy::Async);

    /// Stops the job: finished() is emitted with ErrorCode::Cancelled unless the job already finished.
    /// Safe to call before start(), during, and after finishing (then it does nothing).
    void cancel();

    ExecutionPolicy policy() const { return m_policy; }
    bool isStarted() const { return m_started; }
    bool isFinished() const { return m_finished; }
    const Error &error() const { return m_error; }
    bool hasError() const { return m_error.isError(); }

    /// Units of progress are the job's own (bytes for transfers, instances for study loads); see the subclass.
    qint64 processedAmount() const { return m_processed; }
    qint64 totalAmount() const { return m_total; }

    bool isAutoDelete() const { return m_autoDelete; }
    void setAutoDelete(bool autoDelete) { m_autoDelete = autoDelete; }

    /// A token that blocking work of this job polls; it is cancelled when the job is.
    CancelToken cancelToken() const { return m_token; }

    // What a tracker (JobTracker, the transfers panel behind it) shows of the job and may do with it, as KJob's
    // description, suspend/resume and info message. changed() tells of every change but progress.
    enum Capability {
        Cancellable = 0x1,  ///< cancel() stops it (every job: the default)
        Suspendable = 0x2,  ///< suspend() and resume() pause it and go on
        Retryable = 0x4,    ///< retry() tries again what failed while it still runs (a study's failed images)
    };
    Q_DECLARE_FLAGS(Capabilities, Capability)
    virtual Capabilities capabilities() const { return Cancellable; }
    /// What the job is, for a person ("DEMO, HEAD — CT 2024-03-01 from pacs").
    QString title() const { return m_title; }
    void setTitle(const QString &title);
    /// Where it is, in the words of its kind ("120 of 300 images · 60 MB · 2 failed", "1 image(s) stored");
    /// set by the job, or by whoever started it and knows its result's meaning. Kept after it finished.
    QString statusText() const { return m_status; }
    void setStatusText(const QString &text);
    /// Bytes moved so far (for a rate and the time left); 0 for jobs that move none.
    qint64 bytesDone() const { return m_bytesDone; }
    /// Pauses a Suspendable job / goes on; false when it cannot (not Suspendable, finished, already so).
    bool suspend();
    bool resume();
    bool isSuspended() const { return m_suspended; }
    /// Running, but nothing more happens unless someone acts: everything left has failed (Retryable jobs).
    bool isStalled() const { return m_stalled; }
    /// Something failed that retry() would try again now (Retryable jobs).
    bool canRetry() const { return m_canRetry; }
    /// Tries again what failed; false when the job is not Retryable, finished, or has nothing failed.
    bool retry();

Q_SIGNALS:
    void progress(qint64 processed, qint64 total, QPrivateSignal);
    /// Bytes [begin, end) of the job's output are now readable (a growing prefix, a new chunk…).
    void dataAvailable(qint64 begin, qint64 end, QPrivateSignal);
    /// Emitted exactly once. Check job->error() (or the typed result of a ResultJob).
    void finished(spectrum::Job *job, QPrivateSignal);
    /// Its title, status text, suspended, stalled or retry state changed.
    void changed(QPrivateSignal);

protected:
    /// Begins the work. Runs on the job's thread, inside start() (Sync) or from the event loop (Async).
    /// Must eventually lead to emitResult(), synchronously or later.
    virtual void doStart() = 0;
    /// Asks the work to stop; finished() is emitted by cancel() itself right after. Default: nothing.
    virtual void doCancel() {}
    /// Whether doStart() only hands the work to another thread, and the job always finishes from a later event
    /// (never inside doStart()): then start(Async) calls doStart() at once instead of from the event loop, and
    /// the work is not held back behind whatever the loop has queued before it (a viewer's layout). Callers
    /// still connect after start(): finished() cannot arrive before they return to the loop.
    virtual bool finishesOnlyLater() const { return false; }
    /// Pause and go on (Suspendable jobs); true when done.
    virtual bool doSuspend() { return false; }
    virtual bool doResume() { return false; }
    /// Try again what failed (Retryable jobs); true when something is tried again.
    virtual bool doRetry() { return false; }
    void setBytesDone(qint64 bytes) { m_bytesDone = bytes; }
    void setStalled(bool stalled);
    /// The work paused or went on by itself (or by another's hand): the tracker shows it so.
    void setSuspended(bool suspended);
    void setCanRetry(bool can);

    /// Ends a cancelled job with `error` (ErrorCode::Cancelled); typed jobs keep it as their result too.
    virtual void finishCancelled(const Error &error) { emitResult(error); }
    /// Ends the job: emits finished() once; later calls are ignored.
    void emitResult(const Error &error = Error());
    void setProgress(qint64 processed, qint64 total);
    void emitDataAvailable(qint64 begin, qint64 end);

private:
    void deleteIfAutoDelete();

    ExecutionPolicy m_policy = ExecutionPolicy::Async;
    bool m_started = false;
    bool m_finished = false;
    bool m_inSyncStart = false;
    bool m_autoDelete = true;
    qint64 m_processed = 0;
    qint64 m_total = 0;
    qint64 m_bytesDone = 0;
    bool m_suspended = false;
    bool m_stalled = false;
    bool m_canRetry = false;
    QString m_title, m_status;
    Error m_error;
    CancelToken m_token;
};

Q_DECLARE_OPERATORS_FOR_FLAGS(Job::Capabilities)

} // namespace spectrum
