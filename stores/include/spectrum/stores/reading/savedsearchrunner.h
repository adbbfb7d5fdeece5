// SPDX-License-Identifier: Apache-2.0
#pragma once
// SavedSearchRunner: runs saved searches — when asked, and every N minutes for those that say so — and hands
// what they list to the prior prefetcher as each search says (its priors; the study and its priors). A study the
// archives disagree on (one Study UID, two patients) is listed but nothing is fetched for it. The GUI's browser
// runs a saved search itself (to show its rows) and hands its hits over with prefetchFor(); the workstation's
// timers and `spectrum-cli prefetch --saved` go through run().

#include "spectrum/stores/reading/savedsearch.h"
#include "spectrum/stores/archives/storeregistry.h"

#include <QDateTime>
#include <QHash>
#include <QObject>
#include <QSet>

#include <functional>

class QTimer;

namespace spectrum {

class PriorPrefetcher;

/// What one run of a saved search did.
struct SavedSearchRun
{
    QString name;
    SavedSearch::Prefetch prefetch = SavedSearch::Prefetch::None;
    QDateTime at;
    QList<StudyHit> hits;    ///< the studies it listed
    int handedOn = 0;        ///< studies whose priors (and selves) went to the prefetcher
    QStringList heldBack;    ///< studies nothing was fetched for, and why (a patient conflict)
    QStringList problems;    ///< stores that did not answer, stores not configured
    Error error;             ///< the search itself failed (no store answered)

    /// "Today's CT: 4 studies listed; their priors are fetched behind the reader (nothing fetched for 1: …)".
    QString text() const;
};

class SavedSearchRunner : public QObject
{
    Q_OBJECT
public:
    /// `prefetcher` may be null (prefetching is off): runs then only list.
    SavedSearchRunner(StoreRegistry *registry, PriorPrefetcher *prefetcher, QObject *parent = nullptr);
    ~SavedSearchRunner() override;

    /// The studies in the cache now: how much of a listed study is here already.
    void setCachedStudies(std::function<QList<StudySummary>()> studies) { m_cachedStudies = std::move(studies); }
    /// The searches; those with everyMinutes run that often from now on (the first time after one interval).
    void setSearches(const SavedSearches &searches);
    const SavedSearches &searches() const { return m_searches; }

    /// Runs the search of that name now; false when there is none, or it is running already.
    bool run(const QString &name);
    bool isRunning(const QString &name) const { return m_running.contains(name); }
    /// When it last ran — here, or from the browser (prefetchFor) — (invalid: not yet).
    QDateTime lastRun(const QString &name) const { return m_lastRun.value(name); }
    /// When its timer runs it next (invalid: it runs only when asked).
    QDateTime nextRun(const QString &name) const;
    /// The stores `search` asks: its own list, or every configured archive; names not configured go to `problems`.
    QStringList storesFor(const SavedSearch &search, QStringList *problems = nullptr) const;
    /// Hands `hits` (listed by `search`) to the prefetcher as the search says; what was done.
    SavedSearchRun prefetchFor(const SavedSearch &search, const QList<StudyHit> &hits);

Q_SIGNALS:
    /// A run ended (run() or a timer).
    void ran(const spectrum::SavedSearchRun &run);

private:
    StoreRegistry *m_registry;
    PriorPrefetcher *m_prefetcher;
    std::function<QList<StudySummary>()> m_cachedStudies;
    SavedSearches m_searches;
    QHash<QString, QTimer *> m_timers;
    QSet<QString> m_running;
    QHash<QString, QDateTime> m_lastRun;
};

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::SavedSearchRun)
