// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/reading/studystreamer.h"

#include "archives/studylisting.h"

#include "spectrum/core/logging.h"
#include "spectrum/core/resultjob.h"
#include "spectrum/core/threadpools.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/archives/storeregistry.h"

#include <QPointer>
#include <QScopeGuard>

#include <algorithm>
#include <iterator>


namespace spectrum {

namespace {

InstanceUpdate update(InstanceUpdate::Step step, const QString &key, const ByteView &bytes = ByteView())
{
    InstanceUpdate u;
    u.step = step;
    u.key = key;
    u.bytes = bytes;
    return u;
}

} // namespace

StudyStreamer::StudyStreamer(StoreRegistry *registry, FileStore *cache, QString storeName, QString studyUid, QObject *parent)
    : QObject(parent), m_registry(registry), m_cache(cache), m_store(std::move(storeName)), m_studyUid(std::move(studyUid))
{
    qRegisterMetaType<spectrum::InstanceUpdate>();  // for whoever queues or spies on instanceUpdated
    // Whatever request brought an instance of this study (a bulk series answer, another window's fetch).
    connect(m_registry, &StoreRegistry::instanceBytes, this, [this](const QString &sop, const ByteView &bytes) {
        if ((!m_listed || m_keys.contains(sop)) && !m_cached.contains(sop))
            Q_EMIT instanceUpdated(update(InstanceUpdate::Whole, sop, bytes));  // before the listing too: the first look
    });
    connect(m_registry, &StoreRegistry::instanceFetched, this, [this](const QString &sop, qint64 bytes, const DicomIdentity &id) {
        if (m_listed && m_keys.contains(sop))
            markCached(sop, bytes);
        else if (!m_listed && (m_bulk || m_running.contains(sop)) && id.studyInstanceUid == m_studyUid) {
            const bool first = !m_early.contains(sop);  // (the first look's request and the stream may both bring it)
            if (first)
                m_earlyBytes += bytes;
            m_early.insert(sop, bytes);  // counted once the listing says it is the study's
            m_held->insert(sop);         // in the cache: no lane brings it again meanwhile
            if (first)
                m_earlyIds << id;        // laid out as it comes (provisional())
            if (!m_layoutDue.isActive() && !m_layingOut && !m_listingFromStream)
                m_layoutDue.start(m_provisional.instanceCount == 0 ? kLayoutMs / 4 : kLayoutMs);
            Q_EMIT instanceUpdated(update(InstanceUpdate::Stored, sop));
        }
    });
    m_layoutDue.setSingleShot(true);
    connect(&m_layoutDue, &QTimer::timeout, this, &StudyStreamer::layOutProvisionally);
    m_listSoon.setSingleShot(true);
    connect(&m_listSoon, &QTimer::timeout, this, &StudyStreamer::maybeList);
    m_settle.setSingleShot(true);
    m_settle.setInterval(150);
    connect(&m_settle, &QTimer::timeout, this, &StudyStreamer::pump);
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &StudyStreamer::retryTransient);
    m_absorb.setInterval(0);
    connect(&m_absorb, &QTimer::timeout, this, &StudyStreamer::absorbEarly);
    m_progressDue.setSingleShot(true);
    connect(&m_progressDue, &QTimer::timeout, this, [this] { announceProgress(true); });
}

void StudyStreamer::announceProgress(bool now)
{
    const qint64 since = m_progressClock.isValid() ? m_progressClock.elapsed() : kProgressMs;
    if (now || since >= kProgressMs) {
        m_progressDue.stop();
        m_progressClock.start();
        Q_EMIT progress(cachedCount(), total());
    } else if (!m_progressDue.isActive()) {
        m_progressDue.start(int(kProgressMs - since));
    }
}

bool StudyStreamer::isTransient(const Error &error)
{
    switch (error.code()) {
    case ErrorCode::Timeout:
    case ErrorCode::Network:
    case ErrorCode::Protocol:
    case ErrorCode::Corrupt:  // a transfer cut short or damaged on the way
    case ErrorCode::Io:
    case ErrorCode::Busy:
    case ErrorCode::Changed:  // the object changed under the fetch: fetched again, whole
        return true;
    default:
        return false;  // not found, refused credentials, unsupported, a full disk: trying again changes nothing
    }
}

int StudyStreamer::failedForGood() const
{
    int n = 0;
    for (auto it = m_failed.cbegin(); it != m_failed.cend(); ++it)
        n += !isTransient(it.value()) || m_attempts.value(it.key()) >= kMaxAttempts;
    return n;
}

int StudyStreamer::retryInMs() const
{
    return m_retry.isActive() ? m_retry.remainingTime() : -1;
}

void StudyStreamer::scheduleRetry()
{
    if (m_retry.isActive() || m_stopped)
        return;
    m_backoffMs = m_backoffMs == 0 ? 1000 : std::min(m_backoffMs * 2, 60'000);
    m_retry.start(m_backoffMs);
    Q_EMIT retryScheduled(m_backoffMs);
}

void StudyStreamer::retryTransient()
{
    if (m_stopped)
        return;
    if (!m_bulk)
        m_bulkEnded = false;  // the archive answers again (or may): what is missing comes in bulk again
    bool any = false;
    for (auto it = m_failed.begin(); it != m_failed.end();) {
        if (isTransient(it.value()) && m_attempts.value(it.key()) < kMaxAttempts) {
            it = m_failed.erase(it);
            any = true;
        } else {
            ++it;
        }
    }
    if (any)
        announceProgress(true);
    pump();
}

bool StudyStreamer::fallBack(const QString &store, const Error &error)
{
    // Only a store that does not answer any more (not one that refuses, or lacks an instance), only the one in use
    // (several requests fail together when it goes), and only while there is another.
    const bool unreachable = error.code() == ErrorCode::Network || error.code() == ErrorCode::Timeout;
    if (!unreachable || store != m_store || m_fallbacks.isEmpty() || m_stopped)
        return false;
    qCInfo(lcStores) << "study" << m_studyUid << ":" << m_store << "does not answer (" << error.toString() << ") - going on from" << m_fallbacks.first();
    switchToNext(error);
    return true;
}

void StudyStreamer::switchToNext(const Error &why)
{
    const QString from = m_store;
    m_store = m_fallbacks.takeFirst();
    // What failed because of it is fetched from the next store at once, its attempts counted afresh.
    for (auto it = m_failed.begin(); it != m_failed.end();) {
        if (isTransient(it.value())) {
            m_attempts.remove(it.key());
            it = m_failed.erase(it);
        } else {
            ++it;
        }
    }
    m_retry.stop();
    m_backoffMs = 0;
    m_bulkEnded = false;  // the rest in bulk from the next store, when it is worth it
    Q_EMIT sourceChanged(from, m_store, why);
}

void StudyStreamer::markCached(const QString &key, qint64 bytes)
{
    if (m_cached.contains(key))
        return;
    if (m_absorbed < m_absorbing.size() && m_early.contains(key) && m_keys.contains(key))
        --m_toCount;  // came early and is waiting to be counted: counted here, once
    m_cached.insert(key);
    m_held->insert(key);
    m_failed.remove(key);
    m_bytes += bytes;
    if (m_backoffMs > 0) {
        // The archive answers again: what failed while it did not is tried within a second, not after the
        // longest wait; the backoff starts over.
        m_backoffMs = 0;
        if (m_retry.isActive() && m_retry.remainingTime() > 1000)
            m_retry.start(1000);
    }
    Q_EMIT instanceUpdated(update(InstanceUpdate::Kept, key));
    announceProgress(isComplete() || cachedCount() == 1);
    finishIfComplete();
}

void StudyStreamer::finishIfComplete()
{
    if (!isComplete() || m_absorb.isActive())
        return;  // not yet, or once the last of what came early has been announced
    qCDebug(lcStores) << "streamer: all here at" << m_clock.elapsed() << "ms";
    announceProgress(true);
    Q_EMIT finished();
}

void StudyStreamer::setBulk(bool on)
{
    m_bulkWanted = on;
    if (!on && m_bulk) {
        Job *bulk = std::exchange(m_bulk, nullptr);
        bulk->cancel();
    }
    pump();
}

void StudyStreamer::setViewRadius(int radius)
{
    m_viewRadius = std::max(0, radius);
    pump();
}

bool StudyStreamer::inViewLane(int series, int index) const
{
    const int count = int(m_study.series.size());
    if (count == 0 || series != std::clamp(m_focusSeries, 0, count - 1) || m_settle.isActive())
        return false;
    const int n = int(m_study.series[series].instances.size());
    const int centre = m_focusIndex >= 0 ? std::min(m_focusIndex, n - 1) : n / 2;
    return std::abs(index - centre) <= m_viewRadius;
}

void StudyStreamer::startBulk()
{
    if (!m_bulkWanted || m_bulk || m_bulkEnded || m_stopped)
        return;
    if (!m_listed) {
        // Before the listing only when the cache holds none of the study, and after the first look's request
        // (the slice to show first goes out before the study's bulk).
        if (!m_cacheKnown || !m_heldBefore.isEmpty() || !m_firstLookDone)
            return;
    } else {
        // Worth a request of its own only when more is missing than the view lane brings.
        const int missing = total() - cachedCount() - int(m_running.size()) - m_toCount;
        if (missing <= 2 * m_viewRadius + 1)
            return;
    }
    FetchOptions options;
    options.held = m_held;
    // Of the study's patient (as listed, or as the first look found it): another's is refused before it is kept,
    // and the stream is then not taken for the study (not whole: listed).
    options.patientId = m_listed ? m_study.identity.patientId : m_firstLook.identity.patientId;
    auto *job = m_registry->fetchStudy(m_store, m_studyUid, options);
    qCDebug(lcStores) << "streamer: bulk fetch from" << m_clock.elapsed() << "ms";
    ++m_requests;
    m_bulk = job;
    m_bulkClock.start();
    m_bulkDone = m_bulkExpected = 0;
    m_bulkFirstAt = m_bulkLastAt = -1;
    connect(job, &Job::progress, this, [this](qint64 done, qint64 expected) {
        if (done > 0 && m_bulkFirstAt < 0)
            m_bulkFirstAt = m_bulkClock.elapsed();
        if (done > m_bulkDone)
            m_bulkLastAt = m_bulkClock.elapsed();
        m_bulkDone = done;
        m_bulkExpected = expected;
    });
    whenDone(job, this, [this, job, store = m_store](const Result<FetchSummary> &r) {
        if (m_bulk != job)
            return;  // stopped meanwhile
        m_bulk = nullptr;
        if (store != m_store) {
            // From a store left meanwhile (it held part of the study, or stopped answering): what it brought
            // stays; it says nothing of the study, and the next store's bulk lane may still run.
            qCDebug(lcStores) << "streamer: the bulk fetch from" << store << "ended after the switch to" << m_store;
            startBulk();
            return pump();
        }
        m_bulkEnded = true;
        if (!r.isOk())
            fallBack(store, r.error());
        qCDebug(lcStores) << "streamer: bulk fetch ended at" << m_clock.elapsed() << "ms";
        // Only a stream that brought, without a problem, as many instances as the archive said the study has —
        // and as many as any store said it holds (a peer's whole is not the study's).
        const bool whole = r.isOk() && r.value().problems.isEmpty() && r.value().rejected == 0 && m_bulkExpected > 0
                           && r.value().instances >= m_bulkExpected && r.value().instances >= m_expectedInstances;
        if (!m_listed && !m_listingWaits && whole) {
            // The whole study came before its listing (a quick archive: Orthanc lists 300 instances in 0.25 s,
            // and streams them in as long): what the archive sent is the study. The listing is not waited for.
            // Laid out on the pool: 10,000 instances are sorted and placed in tens of milliseconds.
            // The listing is not asked for meanwhile, and one under way is left unheard: only one of the two lists it.
            m_listSoon.stop();
            if (Job *listing = m_listing.data()) {
                disconnect(listing, nullptr, this, nullptr);  // not heard: its cancellation is no failure
                listing->cancel();
            }
            m_listingStarted = true;
            m_listingFromStream = true;  // no provisional layout after it
            m_layoutDue.stop();
            using Laid = std::pair<StudySummary, QSet<QString>>;
            runOnPool<Laid>(blockingPool(), this, [uid = m_studyUid, ids = r.value().identities] {
                StudySummary study = studyFrom(uid, {}, ids);
                QSet<QString> keys = keysOf(study);
                return Laid{std::move(study), std::move(keys)};
            }, [this, store = m_store](Laid &&laid) {
                if (m_listed || m_listingWaits)
                    return;
                if (store != m_store || laid.first.instanceCount == 0) {
                    // Left for another store meanwhile, or nothing usable in what was sent: the archive in use
                    // says what the study holds.
                    m_listingStarted = false;
                    m_listingFromStream = false;
                    startListing();
                    return pump();
                }
                listedAs(laid.first, std::move(laid.second));
            });
            return;
        }
        if (!m_listed)
            startListing();  // the study was not all sent: the archive says what it holds
        if (!r.isOk() && r.error().code() != ErrorCode::Cancelled)
            qCInfo(lcStores) << "study" << m_studyUid << "from" << m_store << ": the bulk fetch ended with" << r.error().toString()
                             << "- the rest instance by instance";
        // What it did not bring is fetched one by one, nearest the view first, with retries.
        pump();
    });
}

StudyStreamer::~StudyStreamer()
{
    stop();
    // Its questions to the archive go with it, unheard (a cancelled one would otherwise call back in here).
    for (Job *query : {m_looking.data(), m_listing.data()}) {
        if (query && !query->isFinished()) {
            QObject::disconnect(query, nullptr, this, nullptr);
            query->cancel();
        }
    }
}

void StudyStreamer::start()
{
    m_clock.start();
    qCDebug(lcStores) << "streamer: open" << m_studyUid << "from" << m_store;
    if (!m_cache)
        return startListing();
    // The listing of a big study takes a while (Orthanc: 0.25 s of its work for 300 instances); the slice a stack
    // opens at is found with two small queries and fetched meanwhile.
    auto *look = m_registry->firstLook(m_store, m_studyUid);
    m_looking = look;
    whenDone(look, this, [this](const Result<StudySummary> &r) {
        qCDebug(lcStores) << "streamer: first look at" << m_clock.elapsed() << "ms";
        const auto thenTheRest = qScopeGuard([this] {
            m_firstLookDone = true;  // its request went first: the bulk lane may start
            startBulk();
        });
        if (!r.isOk() || m_listed || m_stopped)
            return startListing();  // nothing quicker to show: the listing will do, now
        m_firstLook = r.value();
        const SeriesSummary &series = m_firstLook.series.first();
        const InstanceRef &first = series.instances.first();
        Q_EMIT firstLookReady();
        if (!m_running.contains(first.key) && !m_cached.contains(first.key))
            fetchOne(series.seriesInstanceUid, first.sopInstanceUid, first.key);
    });
    // What the cache already holds is not fetched again. When it holds none of the study (the usual case for a
    // study opened from an archive), the bulk lane starts as soon as the first look's request is out, as
    // `spectrum-cli fetch` does, and the listing waits a moment: it costs the archive as much work as the stream
    // (Orthanc: 0.25 s for 300 instances), and a quick archive streams the whole study before it could be
    // listed — then what it sent is the listing.
    BlobQuery q;
    q.studyInstanceUid = m_studyUid;
    // SPECTRUM_TEST_CACHE_AFTER_ARRIVAL: the cache's answer held until the first bytes of an instance have arrived
    // (30 s at most), as from a cache busy evicting — for the tests of what arrives before it.
    const bool afterArrival = qEnvironmentVariableIsSet("SPECTRUM_TEST_CACHE_AFTER_ARRIVAL");
    whenDone(m_cache->query(q), this, [this, afterArrival](const Result<QList<BlobInfo>> &answer) {
        if (!afterArrival || m_arrivedOnce)
            return cacheAnswered(answer);
        m_heldAnswer = std::make_shared<Result<QList<BlobInfo>>>(answer);
        QTimer::singleShot(30000, this, [this] { answerHeldCache(); });
    });
}

void StudyStreamer::answerHeldCache()
{
    if (const std::shared_ptr<Result<QList<BlobInfo>>> held = std::exchange(m_heldAnswer, nullptr))
        cacheAnswered(*held);
}

void StudyStreamer::cacheAnswered(const Result<QList<BlobInfo>> &held)
{
    m_cacheKnown = true;
    qCDebug(lcStores) << "streamer: the cache answered at" << m_clock.elapsed() << "ms";
    if (held.isOk()) {
        for (const BlobInfo &b : held.value()) {
            m_heldBefore.insert(b.key);
            m_held->insert(b.key);
        }
    }
    if (!m_heldBefore.isEmpty() || !m_bulkWanted) {
        startListing();  // listed first: the bulk lane brings only what is missing, if that is worth it
    } else {
        startBulk();
        m_listSoon.start(kListAfterMs);
    }
    if (m_listingWaits)
        ready();
}

void StudyStreamer::setFocus(int series, int index)
{
    if (m_focusSet && m_bulk && (series != m_focusSeries || index != m_focusIndex))
        m_settle.start();  // the view moves: its own requests wait until it stays (slices scrolled past are not asked twice)
    m_focusSet = true;
    m_focusSeries = series;
    m_focusIndex = index;
    pump();
}

void StudyStreamer::setParallel(int fetches)
{
    m_parallel = std::max(1, fetches);
    pump();
}

void StudyStreamer::stop()
{
    const bool was = std::exchange(m_stopped, true);
    m_retry.stop();
    QList<Job *> running = m_running.values();
    m_running.clear();
    if (m_bulk)
        running << std::exchange(m_bulk, nullptr);
    m_bulkEnded = false;  // asked again on resume, for what is still missing
    for (Job *job : running)
        job->cancel();
    if (!was)
        Q_EMIT stoppedChanged(true);
}

void StudyStreamer::resume()
{
    if (std::exchange(m_stopped, false))
        Q_EMIT stoppedChanged(false);
    retryTransient();  // pumps
}

void StudyStreamer::retryFailed()
{
    m_failed.clear();
    m_attempts.clear();  // the reader asked: every instance gets its attempts again
    if (!m_bulk)
        m_bulkEnded = false;  // and the rest comes in bulk again
    m_retry.stop();
    m_backoffMs = 0;
    if (std::exchange(m_stopped, false))
        Q_EMIT stoppedChanged(false);
    announceProgress(true);
    pump();
}

void StudyStreamer::refetch(const QString &key)
{
    if (!m_listed && m_early.contains(key)) {
        m_earlyBytes -= m_early.take(key);
        // Damaged, before the listing: not laid out, and fetched again once the study is listed (it is missing).
        m_held->remove(key);
        m_earlyIds.erase(std::remove_if(m_earlyIds.begin(), m_earlyIds.end(), [&](const DicomIdentity &id) { return id.sopInstanceUid == key; }),
                         m_earlyIds.end());
        m_laidOutFrom = -1;  // laid out again without it
        if (!m_layoutDue.isActive())
            m_layoutDue.start(0);
        return;
    }
    if (!m_keys.contains(key) || m_running.contains(key))
        return;
    if (m_absorbed < m_absorbing.size() && m_early.contains(key) && !m_cached.contains(key))
        --m_toCount;  // waiting to be counted: fetched again instead
    if (m_cached.remove(key))
        announceProgress(true);
    m_held->remove(key);
    m_failed.remove(key);
    m_earlyBytes -= m_early.take(key);  // one still to be counted (absorbEarly()) is not (0 when not there)
    pump();
}

QPair<int, int> StudyStreamer::next() const
{
    // The focus series outward from the focus (nearest first, below before above), then the other series in
    // order, each from its middle outward.
    const int count = int(m_study.series.size());
    // While the bulk lane runs only the view lane is asked for: the focus series around the focus, nothing else
    // (a pump at every wheel notch does not walk a stack of 10,000).
    const bool viewLaneOnly = m_bulk || (m_bulkWanted && !m_bulkEnded);
    auto pending = [this, viewLaneOnly](int s, int i) {
        const QString &key = m_study.series[s].instances[i].key;
        if (m_cached.contains(key) || m_failed.contains(key) || m_running.contains(key) || m_early.contains(key))
            return false;  // here (or here and being counted: absorbEarly()), failed, or on its way
        // While the bulk lane brings the study (or is about to), only the view's neighbourhood has requests of
        // its own, so that it is never behind the rest.
        if (viewLaneOnly)
            return inViewLane(s, i);
        return true;
    };
    for (int k = 0; k < (viewLaneOnly ? std::min(count, 1) : count); ++k) {
        const int s = (std::clamp(m_focusSeries, 0, count - 1) + k) % count;
        const int n = int(m_study.series[s].instances.size());
        const int centre = k == 0 && m_focusIndex >= 0 ? std::min(m_focusIndex, n - 1) : n / 2;
        for (int d = 0; d < (viewLaneOnly ? std::min(n, m_viewRadius + 1) : n); ++d) {
            for (int i : {centre + d, centre - d}) {
                if (i >= 0 && i < n && pending(s, i))
                    return {s, i};
                if (d == 0)
                    break;
            }
        }
    }
    return {-1, -1};
}

void StudyStreamer::pump()
{
    if (!m_listed || m_stopped)
        return;
    while (m_running.size() < m_parallel) {
        const QPair<int, int> at = next();
        if (at.first < 0)
            break;
        const SeriesSummary &series = m_study.series[at.first];
        fetchOne(series.seriesInstanceUid, series.instances[at.second].sopInstanceUid, series.instances[at.second].key);
    }
    startBulk();  // after the view's own requests: they go out first
    if (m_bulkWanted && !m_bulk && !m_bulkEnded) {
        // Not worth a bulk fetch (little is missing): instance by instance.
        m_bulkEnded = true;
        pump();
    }
}

void StudyStreamer::fetchOne(const QString &seriesUid, const QString &sopUid, const QString &key)
{
    // The instance's bytes as they come (in the buffer the reader fills: the decoder showing it reads there
    // while the rest arrives).
    QPointer<StudyStreamer> self(this);
    FetchOptions options;
    options.held = m_held;
    // Of the study's patient (as listed, or as the first look found it): another's is refused before it is kept.
    options.patientId = m_listed ? m_study.identity.patientId : m_firstLook.identity.patientId;
    options.arriving = [self, key](const Arrival &arrival) {
        if (!self)
            return;
        if (!self->m_cached.contains(key))
            Q_EMIT self->instanceUpdated(InstanceUpdate{InstanceUpdate::Arriving, key, arrival, {}, {}});
        if (!std::exchange(self->m_arrivedOnce, true) && self->m_heldAnswer)
            QMetaObject::invokeMethod(self, &StudyStreamer::answerHeldCache, Qt::QueuedConnection);  // after this arrival
    };
    auto *job = m_registry->fetchInstance(m_store, m_studyUid, seriesUid, sopUid, options);
    m_running.insert(key, job);
    ++m_requests;
    whenDone(job, this, [this, key, store = m_store](const Result<FetchSummary> &r) {
        if (!m_running.remove(key))
            return;  // stopped meanwhile
        if (r.isOk() && r.value().sopInstanceUids.contains(key)) {
            markCached(key, r.value().bytes);  // usually announced already (instanceFetched)
        } else if (!m_listed) {
            return;  // the first look's instance: fetched again with the rest once listed
        } else if (!m_cached.contains(key)) {
            const Error e = r.isOk() ? Error(ErrorCode::Corrupt, QStringLiteral("the store sent something else for %1").arg(key)) : r.error();
            if (store != m_store && isTransient(e)) {
                // From a store left since (it went while this was under way): fetched from the one in use, at once.
                pump();
                return;
            }
            m_failed.insert(key, e);
            const int attempts = ++m_attempts[key];
            if (fallBack(store, e)) {
                pump();
                return;  // from the next store, at once
            }
            if (isTransient(e) && attempts < kMaxAttempts)
                scheduleRetry();
            Q_EMIT instanceUpdated(InstanceUpdate{InstanceUpdate::Failed, key, {}, {}, e});
            announceProgress(true);
            finishIfComplete();
        }
        pump();
    });
}

} // namespace spectrum
