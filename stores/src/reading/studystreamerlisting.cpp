// SPDX-License-Identifier: Apache-2.0
// StudyStreamer, what it knows of the study before it is listed and how it comes to be listed: the layout made from
// what the stream brought (provisional()), whether and when the archive is asked to list it, the listing taken in,
// and what came before it counted in slices.
#include "spectrum/stores/reading/studystreamer.h"

#include "archives/studylisting.h"

#include "spectrum/core/logging.h"
#include "spectrum/core/resultjob.h"
#include "spectrum/core/threadpools.h"
#include "spectrum/stores/archives/storeregistry.h"

#include <QPointer>

#include <algorithm>
#include <iterator>

namespace spectrum {

void StudyStreamer::absorbEarly()
{
    QElapsedTimer slice;
    slice.start();
    QPointer<StudyStreamer> self(this);  // a listener may close the study
    for (int n = 0; n < kAnnouncedPerEvent && m_absorbed < m_absorbing.size() && slice.elapsed() < kAbsorbSliceMs; ++n) {
        const QString key = m_absorbing.at(m_absorbed++);
        if (!m_early.contains(key))
            continue;  // dropped meanwhile as damaged (refetch()): fetched again, counted when it comes
        if (m_keys.contains(key) && !m_cached.contains(key))
            --m_toCount;  // counted now (markCached), not twice
        const qint64 bytes = m_early.take(key);
        m_earlyBytes -= bytes;
        if (m_keys.contains(key))
            markCached(key, bytes);  // unless a request of the view lane brought it again meanwhile
        if (!self)
            return;
    }
    if (m_absorbed < m_absorbing.size())
        return;  // the rest after the events waiting (the timer goes on)
    m_absorb.stop();
    m_absorbing.clear();
    m_absorbed = 0;
    m_toCount = 0;
    m_early.clear();  // what was not the study's
    m_earlyBytes = 0;
    announceProgress(false);
    finishIfComplete();
}

void StudyStreamer::layOutProvisionally()
{
    if (m_listed || m_listingWaits || m_layingOut || m_listingFromStream || m_earlyIds.size() == m_laidOutFrom)
        return;
    m_layingOut = true;
    m_laidOutFrom = m_earlyIds.size();
    // Of the first look's patient only (the bulk lane refuses others too, FetchOptions::patientId); sorted and
    // placed on the pool: 10,000 instances take tens of milliseconds.
    runOnPool<StudySummary>(blockingPool(), this, [uid = m_studyUid, ids = m_earlyIds, patient = m_firstLook.identity.patientId] {
        if (patient.isEmpty())
            return studyFrom(uid, {}, ids);
        QList<DicomIdentity> same;
        same.reserve(ids.size());
        std::copy_if(ids.cbegin(), ids.cend(), std::back_inserter(same), [&](const DicomIdentity &id) { return id.patientId == patient; });
        return studyFrom(uid, {}, same);
    }, [this](StudySummary &&study) {
        m_layingOut = false;
        if (m_listed || m_listingWaits || m_listingFromStream)
            return;  // the listing says what the study is from now on
        if (study.instanceCount > 0) {
            study.partial = true;
            study.arriving = std::max({0, int(m_bulkExpected) - study.instanceCount, m_expectedInstances - study.instanceCount});
            m_provisional = std::move(study);
            Q_EMIT laidOut();
        }
        if (m_earlyIds.size() > m_laidOutFrom && !m_layoutDue.isActive())
            m_layoutDue.start(kLayoutMs);  // more came meanwhile
    });
}

void StudyStreamer::maybeList()
{
    if (m_listed || m_listing || m_listingStarted)
        return;
    if (!m_bulk && m_bulkWanted && !m_bulkEnded && !m_firstLookDone && m_clock.elapsed() < kStreamStartMs) {
        m_listSoon.start(kListAfterMs);  // the stream is about to start (after the first look's request): its pace decides
        return;
    }
    if (m_bulk) {
        // While the stream brings the study quickly, what it sends is laid out as it comes (provisional()) and is
        // the listing when it ends whole: a listing would cost the archive as much work again, slow the stream
        // (Orthanc: a 10,000-instance listing takes 19 s beside the stream and slows it by a quarter) and answer
        // after it. Listed only when the stream is slow for its size (a wide-area link: then the listing lets
        // the view lane fetch any slice the reader goes to before the stream brings it), or brings nothing.
        // Its pace since its first instance (an archive takes a while to begin: Orthanc reads the study first).
        const qint64 elapsed = m_bulkClock.elapsed();
        const qint64 flowing = m_bulkFirstAt >= 0 ? elapsed - m_bulkFirstAt : 0;
        const bool starting = flowing < kListAfterMs && elapsed < kStreamStartMs;
        const bool stalled = m_bulkFirstAt >= 0 && elapsed - m_bulkLastAt > kStreamStartMs;  // it stopped bringing
        const bool quick = !starting && !stalled && m_bulkDone > 1 && flowing < kListBeyondMsPerInstance * (m_bulkDone - 1);
        if (quick || starting) {
            m_listSoon.start(starting ? kListAfterMs : 4 * kListAfterMs);  // its pace looked at again then
            return;
        }
    }
    startListing();
}

void StudyStreamer::startListing()
{
    if (m_listingStarted || m_listed)
        return;
    m_listingStarted = true;
    m_listSoon.stop();
    qCDebug(lcStores) << "streamer: listing from" << m_clock.elapsed() << "ms";
    auto *listing = m_registry->listStudy(m_store, m_studyUid);
    m_listing = listing;
    whenDone(listing, this, [this, store = m_store](const Result<StudySummary> &r) {
        if (m_listed || m_listingWaits)
            return;  // listed from the bulk fetch already
        if (!r.isOk() && fallBack(store, r.error())) {
            m_listingStarted = false;
            return startListing();  // asked of the next store
        }
        if (!r.isOk()) {
            qCWarning(lcStores) << "streamer: cannot list" << m_studyUid << "from" << m_store << ":" << r.error().toString();
            stop();  // the bulk lane too: nothing is fetched for a study that cannot be listed
            return Q_EMIT failed(r.error());
        }
        listedAs(r.value());
    });
}

void StudyStreamer::listedAs(const StudySummary &study, QSet<QString> keys)
{
    if (study.instanceCount < m_expectedInstances && !m_stopped) {
        // Part of the study (a peer that cached what its reader looked at): the next store lists it whole.
        const Error why(ErrorCode::NotFound, QStringLiteral("%1 holds %2 of the study's %3 instances").arg(m_store).arg(study.instanceCount).arg(m_expectedInstances));
        if (!m_fallbacks.isEmpty()) {
            qCInfo(lcStores) << "study" << m_studyUid << ":" << why.message() << "- listing it from" << m_fallbacks.first();
            switchToNext(why);
            m_listingStarted = false;
            return startListing();
        }
        // No store left that may hold more: what is listed is read, and the reader is told it is less.
        qCWarning(lcStores) << "study" << m_studyUid << ":" << why.message() << "and no other store holds it";
        Q_EMIT listedShort(m_store, study.instanceCount, m_expectedInstances);
    }
    m_study = study;
    m_keys = keys.isEmpty() ? keysOf(m_study) : std::move(keys);
    if (m_cache && !m_cacheKnown) {
        m_listingWaits = true;  // for the cache's answer
        return;
    }
    ready();
}

int StudyStreamer::cachedBefore() const
{
    int n = 0;
    for (const QString &key : m_heldBefore)
        n += m_keys.contains(key) ? 1 : 0;
    return n;
}

void StudyStreamer::ready()
{
    qCDebug(lcStores) << "streamer: listed at" << m_clock.elapsed() << "ms";
    m_listingWaits = false;
    m_layoutDue.stop();
    m_earlyIds.clear();  // the listing lays the study out from now on
    m_provisional = StudySummary();
    m_cached.reserve(m_study.instanceCount);
    QStringList fetchedForNothing;
    for (const QString &key : std::as_const(m_heldBefore)) {
        if (!m_keys.contains(key))
            continue;
        m_cached.insert(key);
        if (m_running.contains(key))
            fetchedForNothing << key;
    }
    // The first look's instance asked for before the cache said it holds it (a prior prefetched, a study read
    // before): its request is dropped, and whoever follows its bytes as they arrive (the pane showing it) is told it
    // is here — else it would wait for the rest of bytes nobody announces any more (tests/bench/soak.sh found it:
    // a prior prefetched, opened, its image "arriving 12 %" for good).
    for (const QString &key : std::as_const(fetchedForNothing)) {
        if (Job *job = m_running.take(key))
            job->cancel();
        Q_EMIT instanceUpdated(InstanceUpdate{InstanceUpdate::Kept, key, {}, {}, {}});
    }
    // What the bulk lane brought while the study was being listed is the study's: counted and announced in slices
    // (absorbEarly()), never fetched again meanwhile (next()).
    m_absorbing = m_early.keys();
    m_absorbed = 0;
    m_toCount = int(std::count_if(m_absorbing.cbegin(), m_absorbing.cend(), [this](const QString &k) { return m_keys.contains(k) && !m_cached.contains(k); }));
    m_listed = true;
    Q_EMIT listed();
    announceProgress(true);
    if (!m_absorbing.isEmpty())
        m_absorb.start();
    else
        finishIfComplete();
    pump();
}

} // namespace spectrum
