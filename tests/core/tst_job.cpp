// SPDX-License-Identifier: Apache-2.0
// The uniform callback API: one callback, Async or Sync by a flag, finished exactly once, cancel under both.

#include "spectrum/core/jobtracker.h"
#include "spectrum/core/resultjob.h"

#include <QPointer>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QThreadPool>
#include <QTimer>

using namespace spectrum;

Q_DECLARE_METATYPE(spectrum::ExecutionPolicy)

namespace {
// An event-driven job: finishes from a timer after `ms` (never when ms < 0), reports progress on the way.
class TimerJob : public Job
{
public:
    explicit TimerJob(int ms) : m_ms(ms) {}
    bool cancelledCalled = false;

protected:
    void doStart() override
    {
        if (m_ms < 0)
            return;
        QTimer::singleShot(m_ms, this, [this] {
            setProgress(1, 1);
            emitResult();
        });
    }
    void doCancel() override { cancelledCalled = true; }

private:
    int m_ms;
};
} // namespace

class tst_Job : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void finishedExactlyOnceUnderBothPolicies_data();
    void finishedExactlyOnceUnderBothPolicies();
    void asyncReturnsBeforeTheCallback();
    void syncReturnsAfterTheCallback();
    void poolWorkReportsOnTheStartingThread_data();
    void poolWorkReportsOnTheStartingThread();
    void cancelBeforeStart();
    void cancelWhileRunningAsync();
    void cancelWhileRunningSync();
    void cancelAfterFinishIsIgnored();
    void cancelledPoolWorkIsNeverDelivered();
    void poolResultsReachOnlyALivingContext_data();
    void poolResultsReachOnlyALivingContext();
    void autoDeleteAfterFinish();
    void syncJobStaysAliveUntilTheCallerReturnsToTheLoop();
    void chainPassesValuesAndErrors_data();
    void chainPassesValuesAndErrors();
    void runSyncReturnsTheValue();
    void theTrackerFollowsWhatMovesAndWhatWaits();
};

void tst_Job::finishedExactlyOnceUnderBothPolicies_data()
{
    QTest::addColumn<ExecutionPolicy>("policy");
    QTest::newRow("async") << ExecutionPolicy::Async;
    QTest::newRow("sync") << ExecutionPolicy::Sync;
}

void tst_Job::finishedExactlyOnceUnderBothPolicies()
{
    QFETCH(ExecutionPolicy, policy);
    auto *job = new TimerJob(5);
    job->setAutoDelete(false);  // we cancel it after it finished, below
    int calls = 0;
    // The same callback code for both policies.
    connect(job, &Job::finished, this, [&calls](Job *j) {
        ++calls;
        QVERIFY(!j->hasError());
    });
    job->start(policy);
    QTRY_COMPARE(calls, 1);
    job->cancel();  // after finishing: nothing more
    QTest::qWait(20);  // let any stray second emission surface (there must be none)
    QCOMPARE(calls, 1);
    delete job;
}

void tst_Job::asyncReturnsBeforeTheCallback()
{
    auto *job = makeJob<int>([](const CancelToken &) { return Result<int>(7); }, RunOn::Caller);
    QSignalSpy spy(job, &Job::finished);
    job->start(ExecutionPolicy::Async);
    QCOMPARE(spy.count(), 0);  // even work that is instant is reported through the event loop
    QVERIFY(spy.wait(5000));
    QCOMPARE(spy.count(), 1);
}

void tst_Job::syncReturnsAfterTheCallback()
{
    auto *job = new TimerJob(10);
    bool called = false;
    connect(job, &Job::finished, this, [&called] { called = true; });
    job->start(ExecutionPolicy::Sync);
    QVERIFY(called);
    QCOMPARE(job->processedAmount(), 1);
}

void tst_Job::poolWorkReportsOnTheStartingThread_data()
{
    finishedExactlyOnceUnderBothPolicies_data();
}

void tst_Job::poolWorkReportsOnTheStartingThread()
{
    QFETCH(ExecutionPolicy, policy);
    QThread *workThread = nullptr;
    auto *job = makeJob<int>([&workThread](const CancelToken &) {
        workThread = QThread::currentThread();
        return Result<int>(42);
    });
    QThread *callbackThread = nullptr;
    int value = 0;
    connect(job, &Job::finished, this, [&, job] {
        callbackThread = QThread::currentThread();
        value = job->result().value();
    });
    job->start(policy);
    QTRY_COMPARE(value, 42);
    QCOMPARE(callbackThread, QThread::currentThread());
    if (policy == ExecutionPolicy::Async)
        QVERIFY(workThread != QThread::currentThread());  // blocking work left the caller's thread
    else
        QCOMPARE(workThread, QThread::currentThread());   // sync: no hand-off needed
}

void tst_Job::cancelBeforeStart()
{
    auto *job = new TimerJob(5);
    QSignalSpy spy(job, &Job::finished);
    job->setAutoDelete(false);
    job->cancel();
    QCOMPARE(spy.count(), 1);
    QCOMPARE(job->error().code(), ErrorCode::Cancelled);
    job->start(ExecutionPolicy::Async);  // too late: nothing runs, nothing more is emitted
    QTest::qWait(30);
    QCOMPARE(spy.count(), 1);
    delete job;
}

void tst_Job::cancelWhileRunningAsync()
{
    auto *job = new TimerJob(-1);  // would never finish on its own
    QSignalSpy spy(job, &Job::finished);
    job->setAutoDelete(false);
    job->start(ExecutionPolicy::Async);
    QTimer::singleShot(10, job, &Job::cancel);
    QVERIFY(spy.wait(5000));
    QCOMPARE(spy.count(), 1);
    QVERIFY(job->cancelledCalled);
    QCOMPARE(job->error().code(), ErrorCode::Cancelled);
    delete job;
}

void tst_Job::cancelWhileRunningSync()
{
    auto *job = new TimerJob(-1);
    QSignalSpy spy(job, &Job::finished);
    QPointer<Job> guard(job);
    QTimer::singleShot(10, job, &Job::cancel);
    job->start(ExecutionPolicy::Sync);  // returns because the cancel finished it
    QCOMPARE(spy.count(), 1);
    QCOMPARE(job->error().code(), ErrorCode::Cancelled);
    QTRY_VERIFY(guard.isNull());  // auto-deleted once we are back in the event loop
}

void tst_Job::cancelAfterFinishIsIgnored()
{
    auto *job = makeJob<int>([](const CancelToken &) { return Result<int>(1); }, RunOn::Caller);
    job->setAutoDelete(false);
    QSignalSpy spy(job, &Job::finished);
    job->start(ExecutionPolicy::Sync);
    job->cancel();
    QCOMPARE(spy.count(), 1);
    QVERIFY(!job->hasError());
    QCOMPARE(job->result().value(), 1);
    delete job;
}

void tst_Job::cancelledPoolWorkIsNeverDelivered()
{
    std::atomic<bool> sawCancel{false};
    std::atomic<bool> release{false};
    std::atomic<bool> running{false};
    auto *job = makeJob<int>([&](const CancelToken &token) {
        running = true;
        while (!release.load())
            QThread::msleep(1);
        sawCancel = token.isCancelled();
        return Result<int>(5);
    });
    job->setAutoDelete(false);
    QSignalSpy spy(job, &Job::finished);
    job->start(ExecutionPolicy::Async);
    QTRY_VERIFY(running.load());
    job->cancel();
    release = true;
    QCOMPARE(spy.count(), 1);
    QCOMPARE(job->error().code(), ErrorCode::Cancelled);
    QTRY_VERIFY(sawCancel.load());  // the worker saw the token
    QTest::qWait(20);
    QCOMPARE(spy.count(), 1);        // and its late result was dropped
    QVERIFY(!job->result().isOk());
    QCOMPARE(job->result().error().code(), ErrorCode::Cancelled);  // the typed result says why, as error() does
    delete job;
}

void tst_Job::poolResultsReachOnlyALivingContext_data()
{
    QTest::addColumn<int>("deleteContext");  // 0: never; 1: while the work runs; 2: after its result was queued
    QTest::newRow("alive") << 0;
    QTest::newRow("destroyed while working") << 1;
    QTest::newRow("destroyed with the result queued") << 2;
}

void tst_Job::poolResultsReachOnlyALivingContext()
{
    QFETCH(int, deleteContext);
    QThreadPool pool;
    auto *context = new QObject;
    std::atomic<bool> running{false}, release{false};
    int delivered = -1;
    QThread *deliveredOn = nullptr;
    runOnPool<int>(&pool, context, [&] {
        running = true;
        while (!release.load())
            QThread::msleep(1);
        return 42;
    }, [&](int &&value) {
        delivered = value;
        deliveredOn = QThread::currentThread();
    });
    QTRY_VERIFY(running.load());
    if (deleteContext == 1)
        delete context;
    release = true;
    QVERIFY(pool.waitForDone(10000));  // the result is queued (or dropped) by now
    if (deleteContext == 2)
        delete context;
    QCoreApplication::processEvents();
    if (deleteContext == 0) {
        QCOMPARE(delivered, 42);
        QCOMPARE(deliveredOn, QThread::currentThread());  // on the context's thread, not the pool's
        delete context;
    } else {
        QCOMPARE(delivered, -1);  // never delivered to a context that is gone
    }
}

void tst_Job::autoDeleteAfterFinish()
{
    auto *job = new TimerJob(1);
    QPointer<Job> guard(job);
    job->start(ExecutionPolicy::Async);
    QTRY_VERIFY(guard.isNull());
}

void tst_Job::syncJobStaysAliveUntilTheCallerReturnsToTheLoop()
{
    auto *job = makeJob<int>([](const CancelToken &) { return Result<int>(3); });
    QPointer<ResultJob<int>> guard(job);
    job->start(ExecutionPolicy::Sync);
    QVERIFY(!guard.isNull());
    QCOMPARE(job->result().value(), 3);
    QTRY_VERIFY(guard.isNull());
}

void tst_Job::chainPassesValuesAndErrors_data()
{
    QTest::addColumn<ExecutionPolicy>("policy");
    QTest::addColumn<bool>("firstFails");
    QTest::newRow("async, value") << ExecutionPolicy::Async << false;
    QTest::newRow("async, error") << ExecutionPolicy::Async << true;
    QTest::newRow("sync, value") << ExecutionPolicy::Sync << false;
    QTest::newRow("sync, error") << ExecutionPolicy::Sync << true;
}

void tst_Job::chainPassesValuesAndErrors()
{
    QFETCH(ExecutionPolicy, policy);
    QFETCH(bool, firstFails);
    auto *first = makeJob<int>([firstFails](const CancelToken &) -> Result<int> {
        if (firstFails)
            return Error(ErrorCode::NotFound, QStringLiteral("nothing there"));
        return 20;
    });
    bool thenRan = false;
    auto *chain = chainJob<QString>(first, [&thenRan](const int &v, const CancelToken &) {
        thenRan = true;
        return Result<QString>(QString::number(v * 2));
    });
    chain->setAutoDelete(false);
    QSignalSpy spy(chain, &Job::finished);
    chain->start(policy);
    QTRY_COMPARE(spy.count(), 1);
    if (firstFails) {
        QCOMPARE(chain->error().code(), ErrorCode::NotFound);
        QVERIFY(!thenRan);
    } else {
        QCOMPARE(chain->result().value(), QStringLiteral("40"));
    }
    delete chain;
}

void tst_Job::runSyncReturnsTheValue()
{
    Result<int> r = runSync(makeJob<int>([](const CancelToken &) { return Result<int>(9); }));
    QVERIFY(r.isOk());
    QCOMPARE(r.value(), 9);
    Result<int> e = runSync(makeJob<int>([](const CancelToken &) -> Result<int> {
        return Error(ErrorCode::Io, QStringLiteral("disk on fire"));
    }));
    QCOMPARE(e.error().code(), ErrorCode::Io);
    QCOMPARE(e.error().toString(), QStringLiteral("i/o error: disk on fire"));
}

/// A transfer of ten units that the test moves by hand: Suspendable and Retryable, as a study's arrival.
class ManualTransfer : public Job
{
public:
    Capabilities capabilities() const override { return Cancellable | Suspendable | Retryable; }
    void advance(qint64 units, qint64 bytes)
    {
        setBytesDone(bytesDone() + bytes);
        setProgress(processedAmount() + units, 10);
    }
    void failRest()
    {
        setStalled(true);
        setCanRetry(true);
    }
    int retries = 0;
    bool paused = false;

protected:
    void doStart() override {}
    bool doSuspend() override { return paused = true; }
    bool doResume() override { return !(paused = false); }
    bool doRetry() override
    {
        ++retries;
        setStalled(false);
        return true;
    }
};

// The tracker behind the transfers panel and the status bar: one line for what moves, with its rate and time left
// from the bytes each unit took; a paused or stalled job is not "moving"; a job that goes leaves it.
void tst_Job::theTrackerFollowsWhatMovesAndWhatWaits()
{
    JobTracker tracker;
    QSignalSpy added(&tracker, &JobTracker::added);
    auto *in = new ManualTransfer;
    in->setAutoDelete(false);
    in->setTitle(QStringLiteral("CT from pacs"));
    tracker.add(in);
    tracker.add(in);  // once
    QCOMPARE(added.count(), 1);
    in->start();
    QCOMPARE(tracker.summary(), QStringLiteral("1 transfer(s) · 0.0 MB/s"));
    // 2 MB for the first two units: a rate after a tick, and 8 units of 1 MB left at it.
    QSignalSpy updated(&tracker, &JobTracker::updated);
    in->advance(2, 2'000'000);
    QVERIFY(updated.wait(3000));
    QTRY_VERIFY(tracker.rate(in) > 0);
    const double expected = 8 * 1'000'000 / tracker.rate(in);
    QVERIFY2(std::abs(tracker.secondsLeft(in) - expected) < 1e-6 * expected, qPrintable(QString::number(tracker.secondsLeft(in))));
    QVERIFY(tracker.summary().contains(QStringLiteral("left")));

    // Paused: not moving, no rate; resumed, it moves again.
    QSignalSpy changed(in, &Job::changed);
    QVERIFY(in->suspend());
    QVERIFY(!in->suspend());
    QVERIFY(in->isSuspended() && in->paused);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(tracker.summary(), QString());
    QCOMPARE(tracker.rate(in), 0.0);
    QVERIFY(in->resume());
    QVERIFY(!in->isSuspended() && !in->paused);
    QVERIFY(!tracker.summary().isEmpty());

    // Everything left failed: stalled, waiting for the reader; Retry tries again once.
    QVERIFY(!in->retry());  // nothing failed yet
    in->failRest();
    QVERIFY(in->isStalled());
    QCOMPARE(tracker.summary(), QString());
    QVERIFY(in->retry());
    QCOMPARE(in->retries, 1);
    QVERIFY(!in->isStalled());

    // A send beside it is counted apart; a job that cannot pause says so.
    auto *out = makeJob<int>([](const CancelToken &) { return Result<int>(1); });
    tracker.add(out, JobTracker::Direction::Outgoing);
    QVERIFY(!out->suspend());
    QVERIFY2(tracker.summary().endsWith(QStringLiteral("1 send(s)")), qPrintable(tracker.summary()));
    QSignalSpy outDone(out, &Job::finished);
    out->start();
    QVERIFY(outDone.wait(3000));
    QTRY_COMPARE(tracker.jobs().size(), 1);  // deleted itself: no longer followed
    QVERIFY(in->suspend());
    in->failRest();
    in->cancel();
    QVERIFY(!in->resume() && !in->retry());  // ended: neither, though paused and with failures
    QVERIFY(in->paused);  // doResume never called
    QCOMPARE(tracker.summary(), QString());
    delete in;
    QCOMPARE(tracker.jobs().size(), 0);
}

QTEST_GUILESS_MAIN(tst_Job)
#include "tst_job.moc"
