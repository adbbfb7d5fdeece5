// SPDX-License-Identifier: Apache-2.0
#pragma once
// StudyStreamer: a study opened from a remote store and read while it arrives — the viewer's fetch engine. It
// asks the store what the study holds (StoreRegistry::listStudy) and brings it into the workstation's cache in
// two lanes at once:
//   - the bulk lane: the whole study as `spectrum-cli fetch` brings it (StoreRegistry::fetchStudy — one WADO-RS
//     stream, or one per series, read straight from the socket and written into the cache on the reading
//     thread; C-GET; blobd pulls), far faster than instance by instance (Orthanc: 300 instances in 0.3 s as one
//     answer, 3.5–5 s one by one);
//   - the view lane: the slice in view and its nearest neighbours (setViewRadius), each with a request of its own
//     that shows the slice while it arrives (InstanceUpdate::Arriving), re-aimed whenever the view moves (setFocus).
// An instance is kept once: what one lane brings after the other did is dropped unread (HeldKeys). Once the
// bulk lane has ended, whatever it did not bring (an archive that died, a refused series) is fetched instance by
// instance, nearest the view first, and failures are retried by themselves. Instances already in the cache are
// not fetched again. Runs on the caller's event loop; each fetch is a StoreRegistry job.

#include "spectrum/core/bytes.h"
#include "spectrum/core/error.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QTimer>

#include <memory>

namespace spectrum {

class FileStore;
class Job;

/// One step of one instance of a study on its way in (StudyStreamer::instanceUpdated). An instance's steps come
/// in this order: Arriving any number of times (only from stores that stream an instance and tell its size),
/// Whole at most once (not for instances that came as files), Stored once if it came before the study was listed,
/// then Kept or Failed. Fetched again (a retry, a damaged copy, the next store) it starts over.
struct InstanceUpdate
{
    enum Step {
        Arriving,  ///< bytes [0, arrival.end) of arrival.total are in arrival.buffer (for showing it while it arrives)
        Whole,     ///< every byte is here and written into the cache; `bytes`, in memory still, for reading it at once
        Stored,    ///< in the cache before the listing says it is the study's (then Kept): for laying out the study
        Kept,      ///< in the cache and the study's: counted (cachedCount())
        Failed,    ///< not fetched: `error` says why (StudyStreamer::failure() keeps it)
    };
    Step step = Arriving;
    QString key;
    /// Arriving: the buffer never moves and bytes before `end` never change; holding the pointer keeps it alive.
    Arrival arrival;
    ByteView bytes;  ///< Whole
    Error error;     ///< Failed
};

class StudyStreamer : public QObject
{
    Q_OBJECT
public:
    /// `cache` is the registry's cache, where fetched instances land.
    StudyStreamer(StoreRegistry *registry, FileStore *cache, QString storeName, QString studyUid, QObject *parent = nullptr);
    ~StudyStreamer() override;

    /// Lists the study (listed() or failed()), then starts fetching around the focus (by default the middle of
    /// the first series, where a stack opens). Meanwhile, from an archive, a first look (StoreRegistry::firstLook)
    /// finds the instance a stack opens at and fetches it at once (firstLookReady()), so that it can be shown
    /// before the whole study is listed.
    void start();
    /// Before listed(): the first series with only the instance the stack opens at, being fetched. Empty until
    /// firstLookReady().
    const StudySummary &firstLook() const { return m_firstLook; }
    bool isListed() const { return m_listed; }
    const StudySummary &study() const { return m_study; }
    /// Before listed(), while the bulk lane streams the study in: the study as the instances here so far lay it
    /// out (StudySummary::arriving says how many more are coming), remade at most every kLayoutMs (laidOut()). A
    /// study of 10,000 slices that streams for seconds is read as it fills, not from one slice until it is listed.
    /// Only instances in the cache, of the first look's patient, are in it. Empty until the first laidOut().
    const StudySummary &provisional() const { return m_provisional; }
    static constexpr int kLayoutMs = 500;
    /// The store it fetches from now (the one it was made with, or a fallback since).
    QString storeName() const { return m_store; }
    /// Stores that hold the study too, nearest first (StoreRegistry::nearestFirst), for when the store fetched
    /// from stops answering — a reading room's peer switched off mid-read, an archive down: the listing, the
    /// bulk lane and the instances not here yet go on from the next one (sourceChanged()). The instances cached
    /// stay; one cut short is fetched whole from the next store.
    void setFallbacks(const QStringList &stores) { m_fallbacks = stores; }
    /// The most instances any store said the study holds (its search answers). A store whose listing has fewer —
    /// a reading-room peer that cached part of the study — is left for the next (setFallbacks()), which lists it
    /// whole: a study is never taken as complete from a store holding part of it. What came from it stays.
    void setExpectedInstances(int instances) { m_expectedInstances = instances; }

    /// The slice in view: it is fetched next, then its neighbours.
    void setFocus(int series, int index);
    /// Instance requests at once (the view lane, and the fetches of what the bulk lane left; default 3; ≥ 1).
    void setParallel(int fetches);
    /// The bulk lane (on by default). Off: instance by instance only, nearest the view first — the order then
    /// follows the view exactly.
    void setBulk(bool on);
    /// While the bulk lane runs, the view lane fetches the slice in view and `radius` slices either side of it
    /// (default 2) with requests of their own.
    void setViewRadius(int radius);

    bool isCached(const QString &key) const { return m_cached.contains(key); }
    /// Whether `key` is in the cache, readable: counted (isCached()), or brought before the study was listed and
    /// not counted yet (InstanceUpdate::Stored).
    bool isHere(const QString &key) const { return m_cached.contains(key) || m_early.contains(key); }
    /// Whether `key` is (or, before the listing, may be) one of the study's instances and is not here yet: whoever
    /// shows it waits for its Stored or Kept rather than reading the cache.
    bool isAwaited(const QString &key) const { return (!m_listed || m_keys.contains(key)) && !isHere(key); }
    /// Whether `key` is one of the study's instances as the store listed them (others — a series made here and
    /// sent — are the cache's alone).
    bool isListed(const QString &key) const { return m_keys.contains(key); }
    bool isFetching(const QString &key) const { return m_running.contains(key); }
    int cachedCount() const { return int(m_cached.size()); }
    int failedCount() const { return int(m_failed.size()); }
    /// Whether `key` failed, and why. A failure that may pass — the archive down or unreachable, a timeout, a
    /// transfer cut short (isTransient) — is tried again by itself, up to kMaxAttempts times: after 1 s, then 2, 4, … up to a minute between
    /// rounds, and within a second once another instance arrives (the archive answers again). Any other failure
    /// waits for retryFailed().
    bool isFailed(const QString &key) const { return m_failed.contains(key); }
    Error failure(const QString &key) const { return m_failed.value(key); }
    /// Milliseconds until the failed instances are tried again by themselves; −1 when none will be.
    int retryInMs() const;
    static bool isTransient(const Error &error);
    int total() const { return m_study.instanceCount; }
    /// Every instance is here or has failed for good (failures waiting to be retried by themselves are not done).
    bool isComplete() const { return m_listed && cachedCount() + failedForGood() >= total(); }
    /// Failures that will not be retried by themselves (not transient, or tried kMaxAttempts times).
    int failedForGood() const;
    /// At most this many instances are announced (InstanceUpdate::Kept) in one event, however many came at once
    /// (a study of 10,000 streamed before it was listed): the GUI thread's work per event stays bounded.
    static constexpr int kAnnouncedPerEvent = 256;
    /// How many times an instance is fetched before a transient failure counts as for good.
    static constexpr int kMaxAttempts = 8;
    /// Stops fetching (what is cached stays); resume() goes on where it stopped.
    void stop();
    void resume();
    bool isStopped() const { return m_stopped; }
    /// Fetches again, now, every instance that failed.
    void retryFailed();
    /// The cache's copy of `key` turned out damaged (and was dropped): it is fetched again, next.
    void refetch(const QString &key);
    /// Bytes of the instances fetched so far (not those that were cached already), counted or not yet.
    qint64 bytesFetched() const { return m_bytes + m_earlyBytes; }
    /// How many of the study's instances are here, of how many: once listed cachedCount() of total(); before, as
    /// laid out so far (provisional()) — a transfer row is shown from the first layout on; once listed, what came
    /// before the listing and is being counted (absorbEarly()) too, each once.
    int hereCount() const { return m_listed ? cachedCount() + m_toCount : m_provisional.instanceCount; }
    int expectedCount() const { return m_listed ? total() : m_provisional.instanceCount + m_provisional.arriving; }
    /// How many of the study's instances were in the cache before this stream began (known once listed).
    int cachedBefore() const;
    /// How many fetches are under way.
    int fetching() const { return int(m_running.size()); }
    /// Requests sent so far: one per instance fetched alone, one per bulk fetch of the study.
    int requestsMade() const { return m_requests; }
    /// Whether the bulk lane is bringing the study now.
    bool isBulkRunning() const { return m_bulk != nullptr; }

Q_SIGNALS:
    /// The first look found the instance to show first; it is being fetched (instanceUpdated).
    /// At most once, and only before listed().
    void firstLookReady();
    void listed();
    /// Before listed(): the study as laid out from what has come so far changed (provisional()).
    void laidOut();
    /// Listing failed: nothing will be fetched.
    void failed(const spectrum::Error &error);
    /// The study's one channel for its instances: each step of one instance on its way in, in order
    /// (InstanceUpdate). Whoever shows, lays out or counts the study's images listens here.
    void instanceUpdated(const spectrum::InstanceUpdate &update);
    /// How many of the study's instances are here, of how many. While they stream in, at most once every
    /// kProgressMs (a study of 10,000 slices is not 10,000 redraws of every counter that shows it); at once for the
    /// first, the last (before finished()), a failure, a retry or a re-fetch.
    void progress(int cached, int total);
    /// stop() or resume() took effect (whoever called it: the reader, the prefetcher holding a prior back).
    void stoppedChanged(bool stopped);
    /// Every instance is cached or failed.
    void finished();
    /// Failed instances will be tried again by themselves in `ms` milliseconds.
    void retryScheduled(int ms);
    /// The last store that may hold the study lists fewer instances than a search reported
    /// (setExpectedInstances()): what it lists is read; the reader is to be told the study may be incomplete.
    void listedShort(const QString &store, int listed, int expected);
    /// Store `from` stopped answering, or holds only part of the study (`why`): the rest comes from `to`
    /// (setFallbacks()).
    void sourceChanged(const QString &from, const QString &to, const spectrum::Error &why);

private:
    void pump();
    /// What the cache holds of the study (asked for at start()): not fetched again; the listing may go on.
    void cacheAnswered(const Result<QList<BlobInfo>> &held);
    /// The cache's answer held for a test (SPECTRUM_TEST_CACHE_AFTER_ARRIVAL), taken now.
    void answerHeldCache();
    /// Fetches one instance into the cache, streaming its bytes (InstanceUpdate::Arriving).
    void fetchOne(const QString &seriesUid, const QString &sopUid, const QString &key);
    /// The next instance to fetch: (series, index), or (−1, −1).
    QPair<int, int> next() const;

    StoreRegistry *m_registry;
    FileStore *m_cache;
    QString m_store;
    QStringList m_fallbacks;
    int m_expectedInstances = 0;
    /// Goes on from the next fallback when `error`, from `store`, says the store no longer answers; whether it did.
    bool fallBack(const QString &store, const Error &error);
    /// Goes on from the next fallback store (`why` for sourceChanged()).
    void switchToNext(const Error &why);
    QString m_studyUid;
    StudySummary m_study;
    StudySummary m_firstLook;
    bool m_listed = false;
    bool m_stopped = false;
    int m_parallel = 3;
    int m_focusSeries = 0;
    int m_focusIndex = -1;  ///< −1: the middle of the focus series
    QSet<QString> m_keys;  ///< every instance listed
    QSet<QString> m_cached;
    QHash<QString, Error> m_failed;  ///< key → why
    QHash<QString, int> m_attempts;  ///< key → fetches that failed
    QTimer m_retry;                  ///< the next round of retries of transient failures
    int m_backoffMs = 0;             ///< the last round's wait; 0 while nothing fails
    QHash<QString, Job *> m_running;
    qint64 m_bytes = 0;
    bool m_bulkWanted = true;
    bool m_bulkEnded = false;  ///< the bulk lane ran (and ended); instance by instance for the rest
    int m_viewRadius = 2;
    int m_requests = 0;
    Job *m_bulk = nullptr;     ///< the bulk fetch under way
    std::shared_ptr<HeldKeys> m_held = std::make_shared<HeldKeys>();  ///< what is here: the lanes drop it

    /// `key` is in the cache now (fetched by any request): counted once, announced.
    void markCached(const QString &key, qint64 bytes);
    /// Counts what the bulk lane brought before the listing (m_early) and says Kept for it, a slice of at most
    /// kAnnouncedPerEvent instances or kAbsorbSliceMs at a time with the event loop running between slices: a study of 10,000 slices streamed
    /// before it was listed is not 10,000 announcements in one event. Then finished() if that completes it.
    void absorbEarly();
    static constexpr int kAbsorbSliceMs = 4;
    QStringList m_absorbing;            ///< the keys of m_early when the study was listed
    qsizetype m_absorbed = 0;           ///< of m_absorbing
    int m_toCount = 0;                  ///< of those not absorbed yet, the study's and not counted (m_cached) otherwise
    QTimer m_absorb;
    /// finished() when the study is complete and everything counted has been announced.
    void finishIfComplete();
    /// progress() now (`now`, or none for kProgressMs), or once kProgressMs have passed since the last.
    void announceProgress(bool now);
    static constexpr int kProgressMs = 100;
    QTimer m_progressDue;               ///< a progress() held back
    QElapsedTimer m_progressClock;      ///< since the last progress()
    /// Starts the bulk lane when it is wanted and enough is missing.
    void startBulk();
    /// Whether (series, index) is for the view lane while the bulk lane runs.
    bool inViewLane(int series, int index) const;
    /// The study's contents are known (listed, or brought whole by the bulk lane first).
    /// `keys`: its instances' keys when made already (on the pool), else made here.
    void listedAs(const StudySummary &study, QSet<QString> keys = {});
    /// Listed, and the cache's share known: what is here counted, fetching starts.
    void ready();
    QPointer<Job> m_listing;            ///< the listing, while it runs
    QPointer<Job> m_looking;            ///< the first look, while it runs
    bool m_listingStarted = false;
    /// Lists the study (listStudy), once.
    void startListing();
    /// Lists the study now, unless the bulk lane will have brought all of it sooner.
    void maybeList();
    static constexpr int kListAfterMs = 150;
    /// A stream bringing an instance in less than this (on average, since its first) is not listed beside: about
    /// twice what a listing costs per instance (Orthanc: 1–2 ms), so that a listing is asked for only where it
    /// would answer well before the stream ends (a LAN at 1 Gbit/s brings a 512 KB CT slice in 4 ms; a WAN slower).
    static constexpr int kListBeyondMsPerInstance = 4;
    /// A stream that has not been flowing for kListAfterMs after this long is listed beside (a slow link; an
    /// archive slow to begin: Orthanc takes 150–300 ms before the first of 3,000 instances).
    static constexpr int kStreamStartMs = 1000;
    QTimer m_listSoon;                  ///< when a study streamed from the start is listed
    QElapsedTimer m_bulkClock;
    qint64 m_bulkDone = 0, m_bulkExpected = 0;  ///< the bulk fetch's progress (instances)
    qint64 m_bulkFirstAt = -1;          ///< when its first instance came (m_bulkClock)
    qint64 m_bulkLastAt = -1;           ///< when its latest came
    bool m_listingFromStream = false;   ///< the whole stream is being laid out as the listing: no provisional layout after it
    bool m_cacheKnown = false;          ///< the cache said what it holds of the study
    bool m_firstLookDone = false;       ///< the first look answered (and its instance was asked for)
    bool m_listingWaits = false;        ///< listed, waiting for the cache's answer
    QSet<QString> m_heldBefore;         ///< what the cache held of the study when it was opened
    bool m_arrivedOnce = false;          ///< bytes of an instance have arrived
    std::shared_ptr<Result<QList<BlobInfo>>> m_heldAnswer;  ///< answerHeldCache()
    QHash<QString, qint64> m_early;     ///< fetched before the listing (the bulk lane, the first look): key → bytes; absorbEarly() counts them
    qint64 m_earlyBytes = 0;            ///< their bytes
    QList<DicomIdentity> m_earlyIds;    ///< their identities, for the provisional layout
    StudySummary m_provisional;
    QTimer m_layoutDue;                 ///< the next provisional layout
    bool m_layingOut = false;           ///< one is being made on the pool
    qsizetype m_laidOutFrom = 0;        ///< how many of m_earlyIds the last one was made from
    /// Lays the study out from m_earlyIds on the pool, then laidOut() — unless it was listed meanwhile.
    void layOutProvisionally();
    bool m_focusSet = false;
    QTimer m_settle;                    ///< the view moved lately: its own requests wait until it stays
    QElapsedTimer m_clock;              ///< since start(), for the debug log
    /// The next round of retries, after a wait twice the last (1 s to 1 min).
    void scheduleRetry();
    /// Transient failures back in the queue.
    void retryTransient();
};

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::InstanceUpdate)
