// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/reading/priorprefetch.h"

#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/reading/studystreamer.h"

namespace spectrum {

namespace {

/// A guess at an instance's size when nothing of the patient is here to go by: a CT slice.
constexpr qint64 kTypicalInstanceBytes = 540 * 1024;

QString titleOf(const PriorStudy &p, const QString &store)
{
    return QStringLiteral("%1 — %2 %3 %4 from %5")
        .arg(DicomIdentity::displayName(p.identity.patientName), DicomIdentity::displayDate(p.identity.studyDate), p.modalities.join(QLatin1Char('/')),
             p.identity.studyDescription, store)
        .simplified();
}

} // namespace

PriorPrefetcher::PriorPrefetcher(StoreRegistry *registry, FileStore *cache, QObject *parent)
    : QObject(parent), m_registry(registry), m_cache(cache)
{
    m_foreground.setInterval(200);
    connect(&m_foreground, &QTimer::timeout, this, &PriorPrefetcher::followForeground);
}

PriorPrefetcher::~PriorPrefetcher() = default;

void PriorPrefetcher::add(const StudySummary &study, int priors)
{
    const QString key = study.identity.studyInstanceUid + QLatin1Char('|') + study.identity.patientId;
    if (priors < 0 || study.identity.studyInstanceUid.isEmpty() || m_given.contains(key))
        return;  // no priors asked for, or looked for already
    m_given.insert(key);
    ++m_summary.studies;
    ++m_searches;
    auto *search = new PriorSearch(m_registry, m_cachedStudies ? m_cachedStudies() : QList<StudySummary>(), study, this);
    m_priorsOf.insert(search, priors > 0 ? priors : m_perStudy);
    connect(search, &PriorSearch::finished, this, [this, search] { searched(search); });
    search->start();
}

void PriorPrefetcher::addWithStudy(const StudySummary &study, int instancesInArchive, const QStringList &stores, int priors)
{
    // The study itself once — unless it is queued (or was fetched) already, as another study's prior say; its
    // priors are looked for once (add()).
    const QString key = study.identity.studyInstanceUid + QLatin1Char('|') + study.identity.patientId;
    if (study.identity.studyInstanceUid.isEmpty() || m_queued.contains(key))
        return add(study, priors);
    m_queued.insert(key);
    const bool here = study.instanceCount > 0 && instancesInArchive >= 0 && study.instanceCount >= instancesInArchive;
    const QStringList nearest = m_registry ? m_registry->nearestFirst(stores) : QStringList();
    const QString title = QStringLiteral("%1 — %2 %3 %4").arg(DicomIdentity::displayName(study.identity.patientName), DicomIdentity::displayDate(study.identity.studyDate),
                                                           study.modalities.join(QLatin1Char('/')), study.identity.studyDescription).simplified();
    if (here) {
        ++m_summary.studiesHere;
    } else if (nearest.isEmpty()) {
        m_summary.skipped << QStringLiteral("%1: no configured store holds it").arg(title);
    } else {
        Pending pending;
        pending.store = nearest.first();
        pending.fallbacks = nearest.mid(1);
        pending.instances = std::max(0, instancesInArchive);
        pending.studyUid = study.identity.studyInstanceUid;
        pending.title = QStringLiteral("%1 from %2").arg(title, pending.store);
        const qint64 perInstance = study.instanceCount > 0 && study.bytes > 0 ? study.bytes / study.instanceCount : kTypicalInstanceBytes;
        const int missing = instancesInArchive >= 0 ? std::max(1, instancesInArchive - study.instanceCount) : 100;  // unknown: as for a prior
        pending.estimate = qint64(missing) * perInstance;
        pending.prior = false;
        pending.key = key;
        m_queue.enqueue(pending);  // before its priors, which are looked for meanwhile
        Q_EMIT queued(pending.studyUid, pending.title);
    }
    add(study, priors);
    pump();
}

void PriorPrefetcher::searched(PriorSearch *search)
{
    --m_searches;
    search->deleteLater();
    const int wanted = m_priorsOf.take(search);
    const PriorList &list = search->result();
    const StudySummary &study = search->current();
    for (const QString &p : list.problems)
        m_summary.problems << p;
    // What one instance of this patient's studies takes here, to judge what a prior will take.
    const qint64 perInstance = study.instanceCount > 0 && study.bytes > 0 ? study.bytes / study.instanceCount : kTypicalInstanceBytes;
    int taken = 0;
    for (const PriorStudy &p : list.studies) {
        if (taken >= wanted)
            break;
        if (!p.comparable || !p.isEarlierThan(study.identity))
            continue;
        ++taken;
        const QString key = p.identity.studyInstanceUid + QLatin1Char('|') + p.identity.patientId;
        if (m_queued.contains(key))
            continue;  // queued (or done) for another study of the patient, or as a study a search listed
        if (p.isCached()) {
            ++m_summary.priorsHere;
            continue;
        }
        const QStringList nearest = m_registry ? m_registry->nearestFirst(p.stores) : QStringList();
        if (nearest.isEmpty()) {
            m_summary.skipped << QStringLiteral("%1: no configured store holds it").arg(titleOf(p, QStringLiteral("?")));
            continue;
        }
        m_queued.insert(key);
        Pending pending;
        pending.key = key;
        pending.store = nearest.first();
        pending.fallbacks = nearest.mid(1);
        pending.instances = std::max(0, p.instances);
        pending.studyUid = p.identity.studyInstanceUid;
        pending.title = titleOf(p, pending.store);
        const int missing = p.instances > 0 ? std::max(0, p.instances - p.cachedInstances) : 0;
        pending.estimate = qint64(missing > 0 ? missing : 100) * perInstance;
        m_queue.enqueue(pending);
        Q_EMIT queued(pending.studyUid, pending.title);
    }
    pump();
}

void PriorPrefetcher::pump()
{
    if (!m_current && !m_queue.isEmpty() && m_foregroundBusy && m_foregroundBusy()) {
        m_foreground.start();  // the reader waits for a study: priors start once it is in
        return;
    }
    while (!m_current && !m_queue.isEmpty()) {
        const Pending next = m_queue.dequeue();
        if (m_budget > 0) {
            const qint64 mustStay = m_protectedBytes ? m_protectedBytes() : 0;
            if (next.estimate + m_batchBytes > m_budget - mustStay) {  // with what this batch fetched so far
                const QString why = QStringLiteral("%1: about %2 MB would not fit the cache budget (%3 MB) beside the %4 MB of the studies open")
                                        .arg(next.title).arg(next.estimate / 1e6, 0, 'f', 0).arg(m_budget / 1e6, 0, 'f', 0).arg(mustStay / 1e6, 0, 'f', 0);
                m_summary.skipped << why;
                m_queued.remove(next.key);  // a later batch, with room, may bring it
                Q_EMIT priorDone(next.studyUid, why);
                continue;
            }
        }
        StudyStreamer *streamer = new StudyStreamer(m_registry, m_cache, next.store, next.studyUid, this);
        streamer->setFallbacks(next.fallbacks);
        streamer->setExpectedInstances(next.instances);
        m_current = streamer;
        m_currentUid = next.studyUid;
        m_currentKey = next.key;
        m_currentIsPrior = next.prior;
        m_heldBack = false;
        m_current->setParallel(m_parallel);
        // Only the prior being fetched counts: one done earlier and retried by hand (from the transfers list)
        // finishes on its own.
        connect(m_current, &StudyStreamer::failed, this, [this, streamer](const Error &e) {
            if (streamer != m_current)
                return;
            m_summary.problems << QStringLiteral("%1: %2").arg(m_currentUid, e.toString());
            m_queued.remove(m_currentKey);  // tried again when a later batch asks for it
            finishCurrent(e.toString());
        });
        connect(m_current, &StudyStreamer::finished, this, [this, streamer] {
            if (streamer != m_current)
                return;
            m_summary.instances += m_current->cachedCount() - m_current->cachedBefore();  // not what was here already
            m_summary.bytes += m_current->bytesFetched();
            m_batchBytes += m_current->bytesFetched();
            if (m_current->failedForGood() > 0) {
                m_summary.problems << QStringLiteral("%1: %2 of %3 instance(s) could not be fetched").arg(m_currentUid).arg(m_current->failedForGood()).arg(m_current->total());
                m_queued.remove(m_currentKey);
                finishCurrent(QStringLiteral("%1 instance(s) failed").arg(m_current->failedForGood()));
            } else {
                ++(m_currentIsPrior ? m_summary.priorsFetched : m_summary.studiesFetched);
                finishCurrent(QString());
            }
        });
        Q_EMIT started(m_current, next.title, next.prior);
        m_current->start();
        followForeground();
        m_foreground.start();
    }
    if (isIdle()) {
        m_foreground.stop();
        m_batchBytes = 0;  // the next batch is held against the budget afresh: what this one brought is the cache's now
        m_given.clear();   // a study given again later (a saved search's next run) is looked at again: a prior may have come
        Q_EMIT idle();
    }
}

void PriorPrefetcher::finishCurrent(const QString &outcome)
{
    if (!m_current)
        return;
    const QString uid = m_currentUid;
    // Kept (stopped) a while: the transfers list still shows how it went. Beyond the newest kKeptDone brought whole
    // and kKeptFailed not, the oldest go — not one the reader is retrying from the transfers list (it runs again).
    m_current->stop();
    m_done << m_current;
    int whole = 0, failed = 0;
    for (qsizetype i = m_done.size() - 1; i >= 0; --i) {
        StudyStreamer *done = m_done[i];
        if (!done) {
            m_done.removeAt(i);
            continue;
        }
        const bool complete = done->isComplete() && done->failedForGood() == 0;
        if ((complete ? ++whole <= kKeptDone : ++failed <= kKeptFailed) || !done->isStopped())
            continue;
        m_done.removeAt(i);
        done->deleteLater();
    }
    m_current = nullptr;
    m_currentUid.clear();
    Q_EMIT priorDone(uid, outcome);
    pump();
}

void PriorPrefetcher::followForeground()
{
    if (!m_current)
        return pump();
    // Held back while the reader waits, and let go after; a pause the reader made (transfers list) stays.
    const bool busy = m_foregroundBusy && m_foregroundBusy();
    if (busy && !m_current->isStopped()) {
        m_current->stop();
        m_heldBack = true;
    } else if (!busy && m_heldBack) {
        m_heldBack = false;
        m_current->resume();
    }
}

} // namespace spectrum
