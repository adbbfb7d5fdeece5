// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/job.h"

#include <QEventLoop>
#include <QMutex>
#include <QPointer>
#include <QThread>
#include <QThreadPool>

namespace spectrum {


struct DeliveryAddress::State
{
    QMutex mutex;
    QObject *context = nullptr;  ///< guarded by mutex; null once destroyed() went out
    QMetaObject::Connection watch;
};

std::shared_ptr<DeliveryAddress> DeliveryAddress::of(QObject *context)
{
    std::shared_ptr<DeliveryAddress> a(new DeliveryAddress);
    a->d = std::make_unique<State>();
    a->d->context = context;
    // Direct: it runs in the destructor of the context, on its thread, before its queued events are discarded.
    // A post() that got the mutex first has queued its call by then, and the call is discarded with the rest.
    a->d->watch = QObject::connect(context, &QObject::destroyed, [weak = std::weak_ptr<DeliveryAddress>(a)] {
        if (std::shared_ptr<DeliveryAddress> alive = weak.lock()) {
            QMutexLocker lock(&alive->d->mutex);
            alive->d->context = nullptr;
        }
    });
    return a;
}

DeliveryAddress::~DeliveryAddress()
{
    QObject::disconnect(d->watch);  // thread-safe; a context with many short-lived addresses keeps no dead connections
}

bool DeliveryAddress::post(std::function<void()> call)
{
    QMutexLocker lock(&d->mutex);
    if (!d->context)
        return false;
    // The call holds the address, so the context's destroyed() still finds it while the call waits in the queue.
    QMetaObject::invokeMethod(d->context, [self = shared_from_this(), call = std::move(call)] { call(); }, Qt::QueuedConnection);
    return true;
}

Job::Job(QObject *parent) : QObject(parent) {}

Job::~Job() = default;

void Job::start(ExecutionPolicy policy)
{
    Q_ASSERT_X(!m_started, "Job::start", "a job can be started only once");
    Q_ASSERT_X(thread() == QThread::currentThread(), "Job::start", "start a job on its own thread");
    if (m_started)
        return;
    m_started = true;
    m_policy = policy;
    if (m_finished)  // cancelled before start: finished() already went out
        return;

    if (policy == ExecutionPolicy::Async) {
        if (finishesOnlyLater()) {
            doStart();
            return;
        }
        QMetaObject::invokeMethod(this, [this] {
            if (!m_finished)
                doStart();
        }, Qt::QueuedConnection);
        return;
    }

    // Sync: run until finished() has gone out. Deletion is held back until we return to the caller.
    QPointer<Job> self(this);
    m_inSyncStart = true;
    doStart();
    if (self && !m_finished) {
        QEventLoop loop;
        connect(this, &Job::finished, &loop, &QEventLoop::quit);
        loop.exec(QEventLoop::ExcludeUserInputEvents);
    }
    if (self) {
        m_inSyncStart = false;
        deleteIfAutoDelete();
    }
}

void Job::cancel()
{
    if (m_finished)
        return;
    m_token.cancel();
    doCancel();
    finishCancelled(Error(ErrorCode::Cancelled, QStringLiteral("cancelled by the caller")));
}

void Job::emitResult(const Error &error)
{
    if (m_finished)
        return;
    m_finished = true;
    m_error = error;
    Q_EMIT finished(this, QPrivateSignal());
    if (!m_inSyncStart)
        deleteIfAutoDelete();
}

void Job::setProgress(qint64 processed, qint64 total)
{
    m_processed = processed;
    m_total = total;
    Q_EMIT progress(processed, total, QPrivateSignal());
}

void Job::setTitle(const QString &title)
{
    if (title == m_title)
        return;
    m_title = title;
    Q_EMIT changed(QPrivateSignal());
}

void Job::setStatusText(const QString &text)
{
    if (text == m_status)
        return;
    m_status = text;
    Q_EMIT changed(QPrivateSignal());
}

bool Job::suspend()
{
    if (m_finished || m_suspended || !(capabilities() & Suspendable) || !doSuspend())
        return false;
    setSuspended(true);
    return true;
}

bool Job::resume()
{
    if (m_finished || !m_suspended || !doResume())
        return false;
    setSuspended(false);
    return true;
}

bool Job::retry()
{
    return !m_finished && m_canRetry && (capabilities() & Retryable) && doRetry();
}

void Job::setStalled(bool stalled)
{
    if (stalled == m_stalled)
        return;
    m_stalled = stalled;
    Q_EMIT changed(QPrivateSignal());
}

void Job::setSuspended(bool suspended)
{
    if (suspended == m_suspended)
        return;
    m_suspended = suspended;
    Q_EMIT changed(QPrivateSignal());
}

void Job::setCanRetry(bool can)
{
    if (can == m_canRetry)
        return;
    m_canRetry = can;
    Q_EMIT changed(QPrivateSignal());
}

void Job::emitDataAvailable(qint64 begin, qint64 end)
{
    Q_EMIT dataAvailable(begin, end, QPrivateSignal());
}

void Job::deleteIfAutoDelete()
{
    if (m_autoDelete && m_finished)
        deleteLater();
}

} // namespace spectrum

#include "spectrum/core/resultjob.h"

namespace spectrum {

Error runSync(Job *job)
{
    job->setAutoDelete(false);
    job->start(ExecutionPolicy::Sync);
    const Error error = job->error();
    delete job;
    return error;
}

} // namespace spectrum
