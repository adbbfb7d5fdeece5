// SPDX-License-Identifier: Apache-2.0
#pragma once
// PriorPrefetcher: the seeds' batch workflow for priors — for each study given (opened, pushed to the
// workstation, found by a query or a saved search), its comparable priors are found (PriorSearch) and fetched
// into the cache before the reader asks, one at a time, behind whatever the reader is waiting for; for a study
// listed by a saved search that says so, the study itself first.
//
// Resumable: a prior is streamed in like any study (StudyStreamer), so what is in the cache already — from a
// run that was killed — is not fetched again. Bounded by the cache budget: a prior whose estimated size does not
// fit beside the studies that must stay (the ones open) is left out and said, so prefetching never evicts what
// the reader is looking at.

#include "spectrum/stores/reading/priorsearch.h"

#include <QObject>
#include <QPointer>
#include <QQueue>
#include <QTimer>

#include <functional>

namespace spectrum {

class FileStore;
class StudyStreamer;

struct PrefetchSummary
{
    int studies = 0;         ///< studies whose priors were looked for
    int studiesFetched = 0;  ///< studies themselves brought in whole (addWithStudy)
    int studiesHere = 0;     ///< studies themselves that were in the cache already
    int priorsFetched = 0;   ///< priors brought in whole
    int priorsHere = 0;      ///< comparable priors that were in the cache already
    int instances = 0;       ///< instances fetched (not those already here)
    qint64 bytes = 0;
    QStringList skipped;     ///< priors left out, and why (the budget, no store holds it)
    QStringList problems;    ///< searches or fetches that failed, and why
};

class PriorPrefetcher : public QObject
{
    Q_OBJECT
public:
    /// Priors done whose streamers are kept, the newest: those brought whole, and those not (failed, left short) —
    /// the transfers list shows how they went and the reader may retry one there. Older ones are deleted (not one
    /// being retried), so that a working day of hundreds of studies does not keep every prior's model (soak.sh).
    static constexpr int kKeptDone = 20;
    static constexpr int kKeptFailed = 50;

    PriorPrefetcher(StoreRegistry *registry, FileStore *cache, QObject *parent = nullptr);
    ~PriorPrefetcher() override;

    /// The studies in the cache now (the workstation's list): where priors already are.
    void setCachedStudies(std::function<QList<StudySummary>()> studies) { m_cachedStudies = std::move(studies); }
    /// Whether the reader waits for something (a study streaming in): prefetching holds back meanwhile.
    void setForegroundBusy(std::function<bool()> busy) { m_foregroundBusy = std::move(busy); }
    /// Bytes in the cache that must stay (the open studies'); with the cache's budget, what a prior may take.
    void setProtectedBytes(std::function<qint64()> bytes) { m_protectedBytes = std::move(bytes); }
    /// The cache's budget in bytes (0: none).
    void setBudget(qint64 bytes) { m_budget = bytes; }
    /// How many comparable priors of each study, most recent first (default 1).
    void setPriorsPerStudy(int n) { m_perStudy = std::max(1, n); }
    /// Instance requests at once for a prior (default 1: behind the reader's own).
    void setParallel(int fetches) { m_parallel = std::max(1, fetches); }

    /// Looks for `study`'s comparable priors and queues those not all here (`priors` of them, most recent
    /// first; 0: setPriorsPerStudy's; below 0: none). A study given again before the prefetcher is next idle counts once; a
    /// prior queued or fetched once is not fetched again, unless it failed or was left out.
    void add(const StudySummary &study, int priors = 0);
    /// The study itself too, from the nearest of `stores`, queued first unless it is all here (`study` says how
    /// many instances it has, and how many of them are here: instanceCount of a cache summary, or none).
    void addWithStudy(const StudySummary &study, int instancesInArchive, const QStringList &stores, int priors = 0);
    bool isIdle() const { return m_searches == 0 && m_queue.isEmpty() && !m_current; }
    const PrefetchSummary &summary() const { return m_summary; }
    /// The prior being fetched now (null when none).
    StudyStreamer *current() const { return m_current; }

Q_SIGNALS:
    /// A prior was queued (`title`: patient, date, modality, description, store).
    void queued(const QString &priorUid, const QString &title);
    /// A prior (or, `prior` false, a study listed by a saved search) started streaming in.
    void started(spectrum::StudyStreamer *streamer, const QString &title, bool prior);
    /// A prior is done: fetched whole, or not (`outcome` says).
    void priorDone(const QString &priorUid, const QString &outcome);
    /// Nothing more to do for now.
    void idle();

private:
    struct Pending
    {
        QString store;
        QStringList fallbacks;  ///< the other stores holding it, nearest first
        QString studyUid;
        QString title;
        qint64 estimate = 0;
        int instances = 0;      ///< as many as any store said it holds (0: unknown)
        bool prior = true;
        QString key;  ///< in m_queued
    };
    void searched(PriorSearch *search);
    void pump();
    void finishCurrent(const QString &outcome);
    void followForeground();

    StoreRegistry *m_registry;
    FileStore *m_cache;
    std::function<QList<StudySummary>()> m_cachedStudies;
    std::function<bool()> m_foregroundBusy;
    std::function<qint64()> m_protectedBytes;
    qint64 m_budget = 0;
    int m_perStudy = 1;
    int m_parallel = 1;
    int m_searches = 0;
    QHash<PriorSearch *, int> m_priorsOf;  ///< priors wanted of each running search's study
    QSet<QString> m_given;   ///< studies whose priors are looked for in this batch ("uid|patient id"): each once
    QSet<QString> m_queued;  ///< studies queued or fetched, as priors or themselves: each once (a failed or left-out one may come again)
    qint64 m_batchBytes = 0; ///< fetched since the prefetcher was last idle: what the budget is held against
    QQueue<Pending> m_queue;
    StudyStreamer *m_current = nullptr;
    QList<QPointer<StudyStreamer>> m_done;  ///< the newest done (kKeptDone, kKeptFailed), oldest first
    QString m_currentUid;
    QString m_currentKey;
    bool m_currentIsPrior = true;
    bool m_heldBack = false;  ///< the current prior was stopped here (not by the reader) while the foreground was busy
    QTimer m_foreground;   ///< holds the prior back while the reader waits
    PrefetchSummary m_summary;
};

} // namespace spectrum
