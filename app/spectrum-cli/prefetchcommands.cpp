// SPDX-License-Identifier: Apache-2.0
// spectrum-cli prefetch: the seeds' batch workflow, headless — the studies a query finds in the archives, and
// their comparable priors, into the workstation's cache before the reader sits down.

#include "archivesupport.h"
#include "spectrum/stores/archives/archivekind.h"
#include "commands.h"
#include "output.h"

#include "spectrum/core/settings.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/reading/priorprefetch.h"
#include "spectrum/stores/reading/savedsearch.h"
#include "spectrum/stores/reading/studystreamer.h"
#include "spectrum/stores/exchange/workstationservice.h"

#include <QCoreApplication>
#include <QEventLoop>

#include <cstdio>
#include <optional>
#include <unistd.h>

namespace spectrum::cli {

namespace {

QString titleOf(const DicomIdentity &id, const QStringList &modalities)
{
    return QStringLiteral("%1 %2 %3 %4").arg(DicomIdentity::displayName(id.patientName), DicomIdentity::displayDate(id.studyDate), modalities.join(QLatin1Char('/')),
                                            id.studyDescription).simplified();
}

/// Streams one study into the cache (what is there already is not fetched again), printing its progress.
/// Returns how many instances came, or the error.
Result<int> streamStudy(StoreRegistry *registry, FileStore *cache, const QString &store, const QString &uid, const QString &label, bool quiet)
{
    StudyStreamer streamer(registry, cache, store, uid);
    streamer.setParallel(3);
    Error failure;
    QEventLoop loop;
    const bool tty = !quiet && ::isatty(STDERR_FILENO);
    QObject::connect(&streamer, &StudyStreamer::instanceUpdated, &loop, [&](const InstanceUpdate &u) {
        if (quiet || u.step != InstanceUpdate::Kept)
            return;
        if (tty)
            std::fprintf(stderr, "\r%s: %d/%d ", qPrintable(label), streamer.cachedCount(), streamer.total());
        else
            std::fprintf(stderr, "%s: %d/%d\n", qPrintable(label), streamer.cachedCount(), streamer.total());
    });
    QObject::connect(&streamer, &StudyStreamer::finished, &loop, &QEventLoop::quit);
    QObject::connect(&streamer, &StudyStreamer::failed, &loop, [&](const Error &e) {
        failure = e;
        loop.quit();
    });
    streamer.start();
    loop.exec();
    if (tty)
        std::fprintf(stderr, "\n");
    if (failure.isError())
        return failure;
    if (streamer.failedForGood() > 0)
        return Error(ErrorCode::Network, QStringLiteral("%1 of %2 instance(s) could not be fetched").arg(streamer.failedForGood()).arg(streamer.total()));
    return streamer.cachedCount() - streamer.cachedBefore();  // what came now, not what was here
}

int cmdPrefetch(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Fetches the studies a query finds in the configured archives, and each one's comparable priors (same patient, "
        "same modality, same body part or description, earlier), into the workstation's cache for reading later. "
        "What is cached already is not fetched again: run it again after an interruption and it goes on."));
    p.addHelpOption();
    addConfigOption(p);
    addQueryOptions(p);
    p.addOptions({
        {QStringLiteral("store"), QStringLiteral("Search this store (repeatable; default: every configured archive)."), QStringLiteral("NAME")},
        {QStringLiteral("priors"), QStringLiteral("Comparable priors per study, most recent first (default 1)."), QStringLiteral("N"), QStringLiteral("1")},
        {QStringLiteral("priors-only"), QStringLiteral("Only the priors: not the studies found themselves.")},
        {QStringLiteral("saved"), QStringLiteral("Run the saved search of that name (saved in the workstation's browser): its query, its stores, "
                                                 "what it prefetches (dates such as \"today\" fall on the day it runs)."), QStringLiteral("NAME")},
        {QStringLiteral("searches"), QStringLiteral("The saved searches file (default %1).").arg(SavedSearches::defaultPath()), QStringLiteral("FILE")},
        {QStringLiteral("quiet"), QStringLiteral("For cron: no progress, and nothing printed unless something went wrong (then the summary and the problems).")},
    });
    processArguments(p, args);
    const bool quiet = p.isSet(QStringLiteral("quiet"));
    std::optional<SavedSearch> saved;
    if (p.isSet(QStringLiteral("saved"))) {
        for (const char *option : {"patient-name", "patient-id", "date", "modality", "accession", "description", "store", "priors", "priors-only"}) {
            if (p.isSet(QString::fromLatin1(option)))
                return fail(QStringLiteral("prefetch: --saved says the query, the stores and the priors; --%1 cannot change them").arg(QLatin1String(option)), 2);
        }
        const QString file = p.isSet(QStringLiteral("searches")) ? p.value(QStringLiteral("searches")) : SavedSearches::defaultPath();
        const Result<SavedSearches> searches = SavedSearches::load(file);
        if (!searches.isOk())
            return fail(QStringLiteral("prefetch: ") + searches.error().message());
        const SavedSearch *found = searches.value().find(p.value(QStringLiteral("saved")));
        if (!found) {
            QStringList names;
            for (const SavedSearch &s : searches.value().searches)
                names << s.name;
            return fail(QStringLiteral("prefetch: no saved search is named \"%1\" in %2 (%3)")
                            .arg(p.value(QStringLiteral("saved")), file, names.isEmpty() ? QStringLiteral("it has none") : QStringLiteral("it has: ") + names.join(QStringLiteral(", "))),
                        2);
        }
        if (found->prefetch == SavedSearch::Prefetch::None)
            return fail(QStringLiteral("prefetch: the saved search \"%1\" prefetches nothing (save it with \"prefetch their priors\" or \"the studies and their priors\")").arg(found->name), 2);
        saved = *found;
    }
    const Result<DicomQuery> query = saved ? Result<DicomQuery>(saved->query()) : queryFrom(p);
    if (!query.isOk())
        return fail(QStringLiteral("prefetch: ") + query.error().message(), 2);
    const DicomQuery &q = query.value();
    if (q.patientName.isEmpty() && q.patientId.isEmpty() && q.accessionNumber.isEmpty() && q.modality.isEmpty() && q.description.isEmpty()
        && q.dateFrom.isNull() && q.dateTo.isNull())
        return fail(QStringLiteral("prefetch: say which studies (--date today --modality CT, --patient-id …): every study of every archive is not a worklist"), 2);
    bool okPriors = false;
    const int priors = saved ? saved->priorsPerStudy : p.value(QStringLiteral("priors")).toInt(&okPriors);
    okPriors = okPriors || saved;
    if (!okPriors || priors < 0)
        return fail(QStringLiteral("prefetch: --priors takes a number, 0 or more"), 2);
    Result<StoreConfigFile> config = loadConfig(p);
    if (!config.isOk())
        return fail(config.error().toString());
    QStringList names = saved ? saved->stores : p.values(QStringLiteral("store"));
    for (const QString &n : std::as_const(names)) {
        if (!config.value().find(n))
            return fail(QStringLiteral("prefetch: store '%1' is not configured").arg(n));
    }
    if (names.isEmpty()) {
        for (const StoreConfig &s : config.value().stores()) {
            if (!s.isTheCache())  // the cache itself is where they go; a folder archive is one
                names << s.name;
        }
    }
    if (names.isEmpty())
        return fail(QStringLiteral("prefetch: no archive is configured (spectrum-cli stores add …)"));
    for (const QString &n : names) {
        if (const StoreConfig *s = config.value().find(n); s && archiveKind(s->kind()).dicomNode(*s))
            preloadDicomDictionary();  // DCMTK's network code needs it at once
    }
    Result<std::unique_ptr<FileStore>> opened = openCache();
    if (!opened.isOk() && opened.error().code() == ErrorCode::Busy) {
        // The workstation holds the cache (left open overnight): it prefetches, we wait for its summary.
        const Result<QStringList> handed =
            WorkstationService::handOverPrefetch(WorkstationPaths::cacheDirectory(), config.value().path(), q, saved ? saved->stores : p.values(QStringLiteral("store")),
                                                 priors, saved ? saved->prefetch == SavedSearch::Prefetch::StudiesAndPriors : !p.isSet(QStringLiteral("priors-only")), {});
        if (!handed.isOk())
            return fail(opened.error().toString() + QStringLiteral("; ") + handed.error().toString());
        const bool troubled = std::any_of(handed.value().begin(), handed.value().end(), [](const QString &l) { return l.startsWith(QLatin1String("  ")) && !l.startsWith(QLatin1String("  left out")); });
        if (!quiet || troubled) {
            out(QStringLiteral("prefetched by the running workstation:"));
            for (const QString &l : handed.value())
                out(l);
        }
        return troubled ? 1 : 0;
    }
    if (!opened.isOk())
        return fail(opened.error().toString());
    std::shared_ptr<FileStore> cache(opened.takeValue());
    StoreRegistry registry(config.value(), cache);

    Result<QList<StudyHit>> hits = runSync(registry.findStudies(q, names));
    if (!hits.isOk())
        return fail(QStringLiteral("prefetch: ") + hits.error().toString());
    // What the cache holds, from its index's study counts (never every instance).
    auto cachedStudies = [&cache] { return runSync(cache->studies(DicomQuery())).valueOr(QList<StudySummary>()); };
    QStringList problems;
    int studiesFetched = 0, studiesHere = 0, studyInstances = 0;
    QList<StudySummary> found;
    const QList<StudySummary> before = cachedStudies();
    for (const StudyHit &h : hits.value()) {
        const DicomIdentity &id = h.study.identity;
        if (!saved && !nameAsTyped(p, id.patientName))
            continue;  // asked wider than the typed words mean
        const QString label = titleOf(id, h.study.modalitiesInStudy);
        if (!h.conflicts.isEmpty()) {
            problems << QStringLiteral("%1: not fetched, the archives disagree on whose it is (%2)").arg(label, h.conflicts.join(QStringLiteral("; ")));
            continue;
        }
        StudySummary s;
        s.identity = id;
        s.modalities = h.study.modalitiesInStudy;
        s.instanceCount = std::max(0, h.study.relatedInstances);
        bool elsewhere = false;
        for (const StudySummary &c : before) {
            if (c.identity.studyInstanceUid != id.studyInstanceUid)
                continue;
            if (c.identityConflict || c.identity.patientId != id.patientId)
                elsewhere = true;
            else
                s = c;  // what is here of it: its series, its size
        }
        if (elsewhere) {
            problems << QStringLiteral("%1: not fetched, the cache holds its Study Instance UID under another patient").arg(label);
            continue;
        }
        const bool here = s.instanceCount > 0 && s.bytes > 0 && h.study.relatedInstances >= 0 && s.instanceCount >= h.study.relatedInstances;
        if (saved ? saved->prefetch == SavedSearch::Prefetch::StudiesAndPriors : !p.isSet(QStringLiteral("priors-only"))) {
            if (here) {
                ++studiesHere;
            } else if (const QStringList nearest = registry.nearestFirst(h.stores); nearest.isEmpty()) {
                problems << QStringLiteral("%1: not fetched, %2 cannot be fetched from").arg(label, h.stores.join(QStringLiteral(", ")));
            } else {
                const Result<int> r = streamStudy(&registry, cache.get(), nearest.first(), id.studyInstanceUid, label, quiet);
                if (r.isOk()) {
                    ++studiesFetched;
                    studyInstances += r.value();
                } else {
                    problems << QStringLiteral("%1: %2").arg(label, r.error().toString());
                }
            }
        }
        found << s;
    }

    // Their priors, one at a time.
    PrefetchSummary summary;
    if (priors > 0 && !found.isEmpty()) {
        PriorPrefetcher prefetcher(&registry, cache.get());
        prefetcher.setCachedStudies(cachedStudies);
        prefetcher.setPriorsPerStudy(priors);
        prefetcher.setParallel(3);
        prefetcher.setBudget(WorkstationPaths::diskBudgetBytes());
        const QList<StudySummary> now = cachedStudies();
        prefetcher.setProtectedBytes([&now, &found] {
            qint64 bytes = 0;  // the studies found stay: they are what the priors are for
            for (const StudySummary &f : found)
                for (const StudySummary &c : now)
                    if (c.identity.studyInstanceUid == f.identity.studyInstanceUid)
                        bytes += c.bytes;
            return bytes;
        });
        const bool tty = !quiet && ::isatty(STDERR_FILENO);
        QObject::connect(&prefetcher, &PriorPrefetcher::started, &prefetcher, [tty, quiet](StudyStreamer *streamer, const QString &title) {
            QObject::connect(streamer, &StudyStreamer::progress, streamer, [streamer, title, tty, quiet](int cached, int total) {
                if (streamer->isListed() && !quiet)
                    std::fprintf(stderr, tty ? "\rprior %s: %d/%d " : "prior %s: %d/%d\n", qPrintable(title), cached, total);
            });
        });
        QEventLoop loop;
        QObject::connect(&prefetcher, &PriorPrefetcher::idle, &loop, &QEventLoop::quit);
        for (const StudySummary &s : std::as_const(found)) {
            StudySummary withSize = s;
            for (const StudySummary &c : now) {
                if (c.identity.studyInstanceUid == s.identity.studyInstanceUid && c.identity.patientId == s.identity.patientId)
                    withSize = c;
            }
            prefetcher.add(withSize);
        }
        if (!prefetcher.isIdle())
            loop.exec();
        if (tty)
            std::fprintf(stderr, "\n");
        summary = prefetcher.summary();
    }
    const bool troubled = !problems.isEmpty() || !summary.problems.isEmpty();
    if (quiet && !troubled)
        return 0;
    out(QStringLiteral("%1 stud%2 found: %3 fetched (%4 instance(s)), %5 here already; priors: %6 fetched (%7 instance(s), %8 MB), %9 here already, %10 left out")
            .arg(hits.value().size()).arg(hits.value().size() == 1 ? QStringLiteral("y") : QStringLiteral("ies"))
            .arg(studiesFetched).arg(studyInstances).arg(studiesHere)
            .arg(summary.priorsFetched).arg(summary.instances).arg(summary.bytes / 1e6, 0, 'f', 1).arg(summary.priorsHere).arg(summary.skipped.size()));
    for (const QString &s : summary.skipped)
        out(QStringLiteral("  left out: %1").arg(s));
    for (const QString &problem : problems + summary.problems)
        std::fprintf(stderr, "  %s\n", qPrintable(problem));
    return troubled ? 1 : 0;
}

} // namespace

QList<Command> prefetchCommands()
{
    return {
        {"prefetch", "[--date today] [--modality M] [--patient-id I]… [--priors N] [--priors-only] [--quiet] | --saved NAME",
         "the studies a query finds, and their comparable priors, into the disk cache", cmdPrefetch, false},
    };
}

} // namespace spectrum::cli
