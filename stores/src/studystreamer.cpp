#include "spectrum/stores/studystreamer.h"

#include "spectrum/core/resultjob.h"
#include "spectrum/stores/filestore.h"
#include "spectrum/stores/storeregistry.h"

#include <QPointer>


namespace spectrum {

StudyStreamer::StudyStreamer(StoreRegistry *registry, FileStore *cache, QString storeName, QString studyUid, QObject *parent)
    : QObject(parent), m_registry(registry), m_cache(cache), m_store(std::move(storeName)), m_studyUid(std::move(studyUid))
{
    // Whatever request brought an instance of this study (a bulk series answer, another window's fetch).
    connect(m_registry, &StoreRegistry::instanceFetched, this, [this](const QString &sop, qint64 bytes) {
        if (m_listed && m_keys.contains(sop))
            markCached(sop, bytes);
    });
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &StudyStreamer::retryTransient);
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
        Q_EMIT progress(cachedCount(), total());
    pump();
}

void StudyStreamer::markCached(const QString &key, qint64 bytes)
{
    if (m_cached.contains(key))
        return;
    m_cached.insert(key);
    m_failed.remove(key);
    m_bytes += bytes;
    if (m_backoffMs > 0) {
        // The archive answers again: what failed while it did not is tried within a second, not after the
        // longest wait; the backoff starts over.
        m_backoffMs = 0;
        if (m_retry.isActive() && m_retry.remainingTime() > 1000)
            m_retry.start(1000);
    }
    Q_EMIT instanceCached(key);
    Q_EMIT progress(cachedCount(), total());
    if (isComplete())
        Q_EMIT finished();
}

void StudyStreamer::setBulkAfter(int radius)
{
    m_bulkRadius = std::max(0, radius);
}

void StudyStreamer::startBulk()
{
    if (m_bulkRadius == 0 || m_bulk || m_stopped || !m_listed)
        return;
    // Not before the view's neighbourhood is in or on its way.
    const int count = int(m_study.series.size());
    const int focus = std::clamp(m_focusSeries, 0, count - 1);
    const QList<InstanceRef> &around = m_study.series[focus].instances;
    const int centre = m_focusIndex >= 0 ? std::min(m_focusIndex, int(around.size()) - 1) : int(around.size()) / 2;
    for (int i = std::max(0, centre - m_bulkRadius); i <= std::min(int(around.size()) - 1, centre + m_bulkRadius); ++i) {
        const QString &key = around[i].key;
        if (!m_cached.contains(key) && !m_running.contains(key) && !m_failed.contains(key))
            return;
    }
    for (int k = 0; k < count; ++k) {
        const int s = (focus + k) % count;
        if (m_bulkStarted.contains(s))
            continue;
        const bool anyMissing = std::any_of(m_study.series[s].instances.begin(), m_study.series[s].instances.end(),
                                            [this](const InstanceRef &r) { return !m_cached.contains(r.key); });
        m_bulkStarted.insert(s);
        if (!anyMissing)
            continue;
        auto *job = m_registry->fetchSeries(m_store, m_studyUid, m_study.series[s].seriesInstanceUid);
        ++m_requests;
        m_bulk = job;
        m_bulkSeries = s;
        whenDone(job, this, [this, job](const Result<FetchSummary> &) {
            if (m_bulk != job)
                return;  // stopped meanwhile
            m_bulk = nullptr;
            m_bulkSeries = -1;
            // What the answer did not bring is fetched one by one, as before.
            pump();
        });
        return;
    }
}

StudyStreamer::~StudyStreamer()
{
    stop();
}

void StudyStreamer::start()
{
    if (m_cache) {
        // The listing of a big study takes a while (Orthanc: 0.3 s for 300 instances); the slice a stack opens at
        // is found with two small queries and fetched meanwhile.
        whenDone(m_registry->firstLook(m_store, m_studyUid), this, [this](const Result<StudySummary> &r) {
            if (!r.isOk() || m_listed || m_stopped)
                return;  // nothing quicker to show: the listing will do
            m_firstLook = r.value();
            const SeriesSummary &series = m_firstLook.series.first();
            const InstanceRef &first = series.instances.first();
            Q_EMIT firstLookReady();
            if (!m_running.contains(first.key) && !m_cached.contains(first.key))
                fetchOne(series.seriesInstanceUid, first.sopInstanceUid, first.key);
        });
    }
    whenDone(m_registry->listStudy(m_store, m_studyUid), this, [this](const Result<StudySummary> &r) {
        if (!r.isOk())
            return Q_EMIT failed(r.error());
        m_study = r.value();
        for (const SeriesSummary &s : m_study.series)
            for (const InstanceRef &i : s.instances)
                m_keys.insert(i.key);
        auto ready = [this] {
            m_listed = true;
            Q_EMIT listed();
            Q_EMIT progress(cachedCount(), total());
            if (isComplete())
                Q_EMIT finished();
            pump();
        };
        if (!m_cache)
            return ready();
        // What the cache already holds is not fetched again.
        BlobQuery q;
        q.studyInstanceUid = m_studyUid;
        whenDone(m_cache->query(q), this, [this, ready](const Result<QList<BlobInfo>> &held) {
            if (held.isOk()) {
                QSet<QString> listedKeys;
                for (const SeriesSummary &s : m_study.series)
                    for (const InstanceRef &i : s.instances)
                        listedKeys.insert(i.key);
                for (const BlobInfo &b : held.value()) {
                    if (listedKeys.contains(b.key))
                        m_cached.insert(b.key);
                }
            }
            ready();
        });
    });
}

void StudyStreamer::setFocus(int series, int index)
{
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
    m_stopped = true;
    m_retry.stop();
    QList<Job *> running = m_running.values();
    m_running.clear();
    if (m_bulk) {
        running << m_bulk;
        m_bulkStarted.remove(m_bulkSeries);  // asked again on resume
        m_bulk = nullptr;
        m_bulkSeries = -1;
    }
    for (Job *job : running)
        job->cancel();
}

void StudyStreamer::resume()
{
    m_stopped = false;
    retryTransient();  // pumps
}

void StudyStreamer::retryFailed()
{
    m_failed.clear();
    m_attempts.clear();  // the reader asked: every instance gets its attempts again
    m_retry.stop();
    m_backoffMs = 0;
    m_stopped = false;
    Q_EMIT progress(cachedCount(), total());
    pump();
}

void StudyStreamer::refetch(const QString &key)
{
    if (!m_keys.contains(key) || m_running.contains(key))
        return;
    if (m_cached.remove(key))
        Q_EMIT progress(cachedCount(), total());
    m_failed.remove(key);
    pump();
}

QPair<int, int> StudyStreamer::next() const
{
    // The focus series outward from the focus (nearest first, below before above), then the other series in
    // order, each from its middle outward.
    const int count = int(m_study.series.size());
    const int focus = std::clamp(m_focusSeries, 0, count - 1);
    const int focusN = int(m_study.series[focus].instances.size());
    const int focusCentre = m_focusIndex >= 0 ? std::min(m_focusIndex, focusN - 1) : focusN / 2;
    auto pending = [this, focus, focusCentre](int s, int i) {
        const QString &key = m_study.series[s].instances[i].key;
        if (m_cached.contains(key) || m_failed.contains(key) || m_running.contains(key))
            return false;
        // The series whose bulk answer is coming brings its instances itself — except the view's neighbourhood,
        // which keeps its own requests so that it is never behind the rest.
        if (m_bulkSeries == s)
            return s == focus && std::abs(i - focusCentre) <= m_bulkRadius;
        return true;
    };
    for (int k = 0; k < count; ++k) {
        const int s = (std::clamp(m_focusSeries, 0, count - 1) + k) % count;
        const int n = int(m_study.series[s].instances.size());
        const int centre = k == 0 && m_focusIndex >= 0 ? std::min(m_focusIndex, n - 1) : n / 2;
        for (int d = 0; d < n; ++d) {
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
    startBulk();
}

void StudyStreamer::fetchOne(const QString &seriesUid, const QString &sopUid, const QString &key)
{
    // The instance's bytes as they come, into a buffer of its full size (never reallocated: the decoder showing
    // it reads there while the rest arrives).
    auto buffer = std::make_shared<QByteArray>();
    QPointer<StudyStreamer> self(this);
    auto bytes = [self, key, buffer](const char *data, qint64 n, qint64 expected) {
        if (!self || expected <= 0 || expected > (qint64(1) << 30) || buffer->size() + n > expected)
            return;  // unknown or implausible size: seen once cached
        if (buffer->capacity() < expected)
            buffer->reserve(expected);
        buffer->append(data, n);
        Q_EMIT self->instanceArriving(key, buffer, buffer->size(), expected);
    };
    auto *job = m_registry->fetchInstance(m_store, m_studyUid, seriesUid, sopUid, bytes);
    m_running.insert(key, job);
    ++m_requests;
    whenDone(job, this, [this, key](const Result<FetchSummary> &r) {
        if (!m_running.remove(key))
            return;  // stopped meanwhile
        if (r.isOk() && r.value().sopInstanceUids.contains(key)) {
            markCached(key, r.value().bytes);  // usually announced already (instanceFetched)
        } else if (!m_listed) {
            return;  // the first look's instance: fetched again with the rest once listed
        } else if (!m_cached.contains(key)) {
            const Error e = r.isOk() ? Error(ErrorCode::Corrupt, QStringLiteral("the store sent something else for %1").arg(key)) : r.error();
            m_failed.insert(key, e);
            const int attempts = ++m_attempts[key];
            if (isTransient(e) && attempts < kMaxAttempts)
                scheduleRetry();
            Q_EMIT instanceFailed(key, e);
            Q_EMIT progress(cachedCount(), total());
            if (isComplete())
                Q_EMIT finished();
        }
        pump();
    });
}

} // namespace spectrum
