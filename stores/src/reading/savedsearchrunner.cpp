// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/reading/savedsearchrunner.h"

#include "spectrum/stores/reading/priorprefetch.h"

#include <QTimer>

namespace spectrum {

QString SavedSearchRun::text() const
{
    if (error.isError())
        return QStringLiteral("%1: the search failed: %2").arg(name, error.toString());
    QString t = QStringLiteral("%1: %2 stud%3 listed").arg(name).arg(hits.size()).arg(hits.size() == 1 ? QStringLiteral("y") : QStringLiteral("ies"));
    if (handedOn > 0 && prefetch == SavedSearch::Prefetch::StudiesAndPriors)
        t += handedOn == 1 ? QStringLiteral("; it and its priors are fetched behind the reader")
                           : QStringLiteral("; %1 of them and their priors are fetched behind the reader").arg(handedOn);
    else if (handedOn > 0)
        t += handedOn == 1 ? QStringLiteral("; its priors are fetched behind the reader")
                           : QStringLiteral("; the priors of %1 of them are fetched behind the reader").arg(handedOn);
    if (!heldBack.isEmpty())
        t += QStringLiteral("; nothing fetched for %1: %2").arg(heldBack.size()).arg(heldBack.join(QStringLiteral("; ")));
    if (!problems.isEmpty())
        t += QStringLiteral(" (%1)").arg(problems.join(QStringLiteral("; ")));
    return t;
}

SavedSearchRunner::SavedSearchRunner(StoreRegistry *registry, PriorPrefetcher *prefetcher, QObject *parent)
    : QObject(parent), m_registry(registry), m_prefetcher(prefetcher)
{
    qRegisterMetaType<spectrum::SavedSearchRun>();
}

SavedSearchRunner::~SavedSearchRunner() = default;

void SavedSearchRunner::setSearches(const SavedSearches &searches)
{
    m_searches = searches;
    // Timers follow: a search whose interval is unchanged keeps its timer (and the time already waited).
    QHash<QString, QTimer *> kept;
    for (const SavedSearch &s : m_searches.searches) {
        if (s.everyMinutes <= 0)
            continue;
        QTimer *timer = m_timers.take(s.name);
        if (!timer) {
            timer = new QTimer(this);
            const QString name = s.name;
            connect(timer, &QTimer::timeout, this, [this, name] { run(name); });
        }
        if (timer->interval() != s.everyMinutes * 60 * 1000 || !timer->isActive())
            timer->start(s.everyMinutes * 60 * 1000);
        kept.insert(s.name, timer);
    }
    qDeleteAll(m_timers);
    m_timers = kept;
}

QDateTime SavedSearchRunner::nextRun(const QString &name) const
{
    const QTimer *timer = m_timers.value(name);
    return timer && timer->isActive() ? QDateTime::currentDateTime().addMSecs(timer->remainingTime()) : QDateTime();
}

QStringList SavedSearchRunner::storesFor(const SavedSearch &search, QStringList *problems) const
{
    QStringList names;
    if (!m_registry)
        return names;
    const StoreConfigFile &config = m_registry->config();
    if (search.stores.isEmpty()) {
        for (const StoreConfig &s : config.stores()) {
            if (!s.isTheCache())
                names << s.name;
        }
        return names;
    }
    for (const QString &n : search.stores) {
        if (config.find(n))
            names << n;
        else if (problems)
            *problems << QStringLiteral("store '%1' is not configured").arg(n);
    }
    return names;
}

bool SavedSearchRunner::run(const QString &name)
{
    const SavedSearch *found = m_searches.find(name);
    if (!found || m_running.contains(name))
        return false;
    const SavedSearch search = *found;  // as it is now, whatever the file becomes meanwhile
    SavedSearchRun done;
    done.name = name;
    done.prefetch = search.prefetch;
    done.at = QDateTime::currentDateTime();
    const QStringList stores = storesFor(search, &done.problems);
    if (stores.isEmpty()) {
        done.error = Error(ErrorCode::NotFound, done.problems.isEmpty() ? QStringLiteral("no archive is configured") : done.problems.join(QStringLiteral("; ")));
        done.problems.clear();
        m_lastRun.insert(name, done.at);
        QMetaObject::invokeMethod(this, [this, done] { Q_EMIT ran(done); }, Qt::QueuedConnection);  // as a search that ran
        return true;
    }
    m_running.insert(name);
    // The name as the reader typed it in the browser: archives asked for names holding it, answers matched by one rule.
    DicomQuery q = search.query(done.at.date());
    const QString typed = std::exchange(q.patientName, DicomQuery::nameQueryFor(search.patientName));
    whenDone(m_registry->findStudies(q, stores), this, [this, search, done, typed](const Result<QList<StudyHit>> &found) {
        Result<QList<StudyHit>> r = found;
        if (r.isOk()) {
            QList<StudyHit> kept;
            for (const StudyHit &h : found.value())
                if (DicomQuery::nameMatchesTyped(typed, h.study.identity.patientName))
                    kept << h;
            r = kept;
        }
        m_running.remove(search.name);
        m_lastRun.insert(search.name, done.at);
        if (!r.isOk()) {
            SavedSearchRun failed = done;
            failed.error = r.error();
            return Q_EMIT ran(failed);
        }
        SavedSearchRun handed = prefetchFor(search, r.value());
        handed.at = done.at;
        handed.problems = done.problems + handed.problems;
        Q_EMIT ran(handed);
    });
    return true;
}

SavedSearchRun SavedSearchRunner::prefetchFor(const SavedSearch &search, const QList<StudyHit> &hits)
{
    SavedSearchRun run;
    run.name = search.name;
    run.prefetch = search.prefetch;
    run.at = QDateTime::currentDateTime();
    run.hits = hits;
    if (!m_running.contains(search.name))
        m_lastRun.insert(search.name, run.at);  // run from the browser: it ran all the same
    if (search.prefetch == SavedSearch::Prefetch::None)
        return run;
    if (!m_prefetcher) {
        run.problems << QStringLiteral("prefetching is off on this workstation");
        return run;
    }
    const QList<StudySummary> cached = m_cachedStudies ? m_cachedStudies() : QList<StudySummary>();
    for (const StudyHit &h : hits) {
        const DicomIdentity &id = h.study.identity;
        if (!h.conflicts.isEmpty()) {
            run.heldBack << QStringLiteral("%1 %2 (%3)").arg(DicomIdentity::displayName(id.patientName), DicomIdentity::displayDate(id.studyDate),
                                                             h.conflicts.join(QStringLiteral("; ")));
            continue;
        }
        StudySummary study;
        study.identity = id;
        study.modalities = h.study.modalitiesInStudy;
        for (const StudySummary &c : cached) {
            if (c.identity.studyInstanceUid != id.studyInstanceUid)
                continue;
            if (c.identityConflict || c.identity.patientId != id.patientId)
                study.identityConflict = true;  // here under another patient, or flagged: never added to
            else if (!study.identityConflict)
                study = c;  // what is here of it: how many instances, how large
        }
        if (study.identityConflict) {
            run.heldBack << QStringLiteral("%1 %2 (the cache holds its Study UID under another patient)")
                                .arg(DicomIdentity::displayName(id.patientName), DicomIdentity::displayDate(id.studyDate));
            continue;
        }
        if (search.prefetch == SavedSearch::Prefetch::StudiesAndPriors)
            m_prefetcher->addWithStudy(study, h.study.relatedInstances, h.stores, search.priorsPerStudy);
        else
            m_prefetcher->add(study, search.priorsPerStudy);
        ++run.handedOn;
    }
    return run;
}

} // namespace spectrum
