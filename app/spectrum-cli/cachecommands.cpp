// SPDX-License-Identifier: Apache-2.0
// spectrum-cli's local commands: the demo studies, the disk cache's studies, importing files into it.

#include "archivesupport.h"
#include "commands.h"
#include "output.h"

#include "spectrum/core/settings.h"
#include "spectrum/imaging/demostudies.h"
#include "spectrum/stores/blobs/cachemaintenance.h"
#include "spectrum/stores/exchange/dicomimport.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/exchange/workstationservice.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>

#include <cstdio>

#include <unistd.h>

namespace spectrum::cli {

Result<std::unique_ptr<FileStore>> openCache()
{
    return FileStore::open(WorkstationPaths::cacheDirectory(), WorkstationPaths::diskBudgetBytes());
}

namespace {

int cmdDemo(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Writes the demo studies (head CT, chest CR PA and lateral, head MR, and the CT and chest priors a year earlier) as DICOM files."));
    p.addHelpOption();
    p.addOption({QStringLiteral("out"), QStringLiteral("Folder to write into (created if needed)."), QStringLiteral("DIR")});
    p.addOption({QStringLiteral("ct-slices"), QStringLiteral("CT slices (default 200)."), QStringLiteral("N"), QStringLiteral("200")});
    p.addOption({QStringLiteral("ct-slab"), QStringLiteral("Also a thick-slice CT series, every N thin slices averaged (0, the default: none)."),
                 QStringLiteral("N"), QStringLiteral("0")});
    p.addOption({QStringLiteral("only"), QStringLiteral("Only this study: demo-ct, demo-cr, demo-mr, demo-ct-prior or demo-cr-prior (repeatable)."), QStringLiteral("ALIAS")});
    processArguments(p, args);
    if (!p.isSet(QStringLiteral("out")))
        return fail(QStringLiteral("demo: --out DIR is required"), 2);
    DemoOptions options;
    options.ctSlices = p.value(QStringLiteral("ct-slices")).toInt();
    if (options.ctSlices < 1)
        return fail(QStringLiteral("demo: --ct-slices must be a positive number"), 2);
    options.ctSlabSlices = p.value(QStringLiteral("ct-slab")).toInt();
    if (options.ctSlabSlices < 0 || options.ctSlabSlices > options.ctSlices)
        return fail(QStringLiteral("demo: --ct-slab must be between 0 and the number of CT slices"), 2);
    if (p.isSet(QStringLiteral("only"))) {
        options.studies.clear();
        for (const QString &alias : p.values(QStringLiteral("only"))) {
            const auto study = DemoArchive::fromAlias(alias);
            if (!study)
                return fail(QStringLiteral("demo: unknown study '%1' (demo-ct, demo-cr, demo-mr, demo-ct-prior, demo-cr-prior)").arg(alias), 2);
            options.studies << *study;
        }
    }
    const QDir dir(p.value(QStringLiteral("out")));
    QElapsedTimer timer;
    timer.start();
    qint64 bytes = 0;
    int count = 0;
    const int total = DemoArchive::instanceCount(options);
    const Error e = DemoArchive::generate(options, [&](DemoInstance &&inst) -> Error {
        const QString path = dir.filePath(inst.relativePath);
        if (!QDir().mkpath(QFileInfo(path).absolutePath()))
            return Error(ErrorCode::Io, QStringLiteral("cannot create %1").arg(QFileInfo(path).absolutePath()));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(inst.bytes) != inst.bytes.size())
            return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
        bytes += inst.bytes.size();
        ++count;
        if (isatty(fileno(stderr)))
            std::fprintf(stderr, "\r%d/%d instances", count, total);
        return Error();
    });
    if (isatty(fileno(stderr)))
        std::fprintf(stderr, "\n");
    if (e.isError())
        return fail(e.toString());
    for (DemoStudy s : options.studies)
        out(QStringLiteral("%1  %2").arg(DemoArchive::alias(s), DemoArchive::studyUid(s)));
    out(QStringLiteral("%1 instances, %2 MB in %3 s → %4")
            .arg(count).arg(bytes / 1e6, 0, 'f', 1).arg(timer.elapsed() / 1000.0, 0, 'f', 2).arg(dir.absolutePath()));
    return 0;
}

int cmdStudies(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Lists the studies in the workstation's disk cache, newest first; the options narrow the list."));
    p.addHelpOption();
    addQueryOptions(p);
    processArguments(p, args);
    const Result<DicomQuery> query = queryFrom(p);
    if (!query.isOk())
        return fail(query.error().toString(), 2);
    auto cache = openCache();
    if (!cache.isOk() && cache.error().code() != ErrorCode::Busy)
        return fail(cache.error().toString());
    // Held by the running workstation: it answers from its index.
    const Result<QList<StudySummary>> studies = cache.isOk() ? runSync(cache.value()->studies(query.value()))
                                                             : WorkstationService::askStudies(WorkstationPaths::cacheDirectory(), query.value());
    if (!studies.isOk() && !cache.isOk())
        return fail(cache.error().toString() + QStringLiteral("; ") + studies.error().toString());
    if (!studies.isOk())
        return fail(studies.error().toString());
    for (const StudySummary &s : studies.value()) {
        if (!nameAsTyped(p, s.identity.patientName))
            continue;
        out(QStringLiteral("%1\t%2\t%3\t%4\t%5\t%6 images\t%7%8")
                .arg(DicomIdentity::displayName(s.identity.patientName), s.identity.patientId, s.identity.studyDate,
                     s.modalities.join(QLatin1Char('/')), s.identity.studyDescription)
                .arg(s.instanceCount)
                .arg(s.identity.studyInstanceUid, s.identityConflict ? QStringLiteral("\tIDENTITY CONFLICT") : QString()));
    }
    if (!cache.isOk()) {
        std::fprintf(stderr, "as the running workstation sees its cache %s\n", qPrintable(WorkstationPaths::cacheDirectory()));
        return 0;
    }
    const StoreUsage u = cache.value()->usage();
    std::fprintf(stderr, "%lld blob(s), %.1f MB of a %.1f MB budget in %s\n", qlonglong(u.blobs), u.bytes / 1e6, u.budget / 1e6,  // as `cache` says it
                 qPrintable(cache.value()->root()));
    return 0;
}

int cmdImport(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Copies DICOM files into the workstation's disk cache: files, folders (walked whole) and "
                                               "DICOMDIR files (their folder). While the workstation runs, it takes the import over."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("files"), QStringLiteral("DICOM Part 10 files, folders or a DICOMDIR."), QStringLiteral("FILE..."));
    processArguments(p, args);
    if (p.positionalArguments().isEmpty())
        return fail(QStringLiteral("import: name at least one file"), 2);
    for (const QString &path : p.positionalArguments()) {
        if (!QFileInfo::exists(path))
            return fail(QStringLiteral("import: %1: no such file or folder").arg(path), 2);
    }
    auto report = [](const ImportSummary &s) {
        for (int i = 0; i < s.notDicom.size(); ++i)
            std::fprintf(stderr, "%s: %s, left out\n", qPrintable(s.notDicom[i]), qPrintable(s.notDicomWhy.value(i, QStringLiteral("not a DICOM instance"))));
        for (const auto &[file, why] : s.failed)
            std::fprintf(stderr, "%s: %s\n", qPrintable(file), qPrintable(why));
        for (const auto &[file, why] : s.duplicates)
            std::fprintf(stderr, "%s: %s, left out\n", qPrintable(file), qPrintable(why));
        for (const auto &[study, why] : s.flagged)
            std::fprintf(stderr, "study %s: %s\n", qPrintable(study), qPrintable(why));
        out(QStringLiteral("%1 imported (%2 studies), %3 not DICOM, %4 failed").arg(s.imported).arg(s.studies.size()).arg(s.notDicom.size()).arg(s.failed.size()));
        return s.failed.isEmpty() && s.imported > 0 ? 0 : 1;  // nothing imported at all is a failure too
    };
    auto progress = [](int done, int total) {
        if (done == total || done % 100 == 0)
            std::fprintf(stderr, "%d of %d files\n", done, total);
    };
    auto cache = openCache();
    if (!cache.isOk()) {
        if (cache.error().code() != ErrorCode::Busy)
            return fail(cache.error().toString());
        // The workstation holds the cache: it imports, we watch.
        Result<ImportSummary> handed = WorkstationService::handOverImport(WorkstationPaths::cacheDirectory(), p.positionalArguments(), progress);
        if (!handed.isOk())
            return fail(cache.error().toString() + QStringLiteral("; ") + handed.error().toString());
        std::fprintf(stderr, "imported by the running workstation\n");
        return report(handed.value());
    }
    DicomImport import(cache.value().get(), p.positionalArguments());
    ImportSummary summary;
    QEventLoop loop;
    QObject::connect(&import, &DicomImport::progress, &loop, progress);
    QObject::connect(&import, &DicomImport::finished, &loop, [&](const ImportSummary &s) {
        summary = s;
        loop.quit();
    });
    import.start();
    loop.exec();
    return report(summary);
}

} // namespace

int cmdCache(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "The workstation's disk cache: what it holds (no action), or removes — every study (clear --yes), one study (remove "
        "STUDY-UID), or what came more than DAYS days ago (prune --older-than DAYS, for a retention policy in cron). While the "
        "workstation runs, it does the removing."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("action"), QStringLiteral("size (default), clear, remove STUDY-UID or prune."), QStringLiteral("[ACTION]"));
    p.addOptions({
        {QStringLiteral("older-than"), QStringLiteral("prune: what was received more than DAYS days ago."), QStringLiteral("DAYS")},
        {QStringLiteral("yes"), QStringLiteral("clear: yes, every study; prune: yes, also under a day old.")},
    });
    processArguments(p, args);
    const QStringList a = p.positionalArguments();
    const QString action = a.value(0, QStringLiteral("size"));
    CacheSelection which;
    if (action == QLatin1String("size") && a.size() <= 1) {
        const Result<QList<StudySummary>> studies = [&]() -> Result<QList<StudySummary>> {
            auto cache = openCache();
            if (cache.isOk()) {
                Result<QList<StudySummary>> s = runSync(cache.value()->studies(DicomQuery()));
                const StoreUsage u = cache.value()->usage();
                out(QStringLiteral("%1 blob(s), %2 MB%3 in %4").arg(u.blobs).arg(u.bytes / 1e6, 0, 'f', 1)
                        .arg(u.budget > 0 ? QStringLiteral(" of a %1 MB budget").arg(u.budget / 1e6, 0, 'f', 1) : QString(), cache.value()->root()));
                return s;
            }
            if (cache.error().code() != ErrorCode::Busy)
                return cache.error();
            std::fprintf(stderr, "as the running workstation sees its cache %s\n", qPrintable(WorkstationPaths::cacheDirectory()));
            return WorkstationService::askStudies(WorkstationPaths::cacheDirectory(), DicomQuery());
        }();
        if (!studies.isOk())
            return fail(studies.error().toString());
        qint64 images = 0;
        for (const StudySummary &s : studies.value())
            images += s.instanceCount;
        out(QStringLiteral("%1 study(ies), %2 image(s)").arg(studies.value().size()).arg(images));
        return 0;
    } else if (action == QLatin1String("clear") && a.size() == 1) {
        if (!p.isSet(QStringLiteral("yes")))
            return fail(QStringLiteral("cache clear removes every study from the cache: say --yes"), 2);
        which.what = CacheSelection::What::Everything;
    } else if (action == QLatin1String("remove") && a.size() == 2) {
        which.what = CacheSelection::What::Study;
        which.studyInstanceUid = a.at(1);
    } else if (action == QLatin1String("prune") && a.size() == 1) {
        bool ok = false;
        const double days = p.value(QStringLiteral("older-than")).toDouble(&ok);
        if (!ok || days < 0)
            return fail(QStringLiteral("cache prune: --older-than DAYS (a number of days, 0 or more)"), 2);
        if (days < 1 && !p.isSet(QStringLiteral("yes")))  // a typo's 0 would empty the cache of today's reading
            return fail(QStringLiteral("cache prune --older-than %1 removes what came today too: say --yes").arg(p.value(QStringLiteral("older-than"))), 2);
        which.what = CacheSelection::What::ReceivedBefore;
        which.before = QDateTime::currentDateTimeUtc().addMSecs(-qint64(days * 86400.0 * 1000.0));
    } else {
        return fail(QStringLiteral("cache: size, clear --yes, remove STUDY-UID or prune --older-than DAYS"), 2);
    }
    auto cache = openCache();
    if (!cache.isOk() && cache.error().code() != ErrorCode::Busy)
        return fail(cache.error().toString());
    const Result<CacheRemoval> removed = cache.isOk() ? removeFromCache(*cache.value(), which, CancelToken())
                                                      : WorkstationService::handOverCacheRemoval(WorkstationPaths::cacheDirectory(), which);
    if (!removed.isOk())
        return fail(removed.error().toString());
    out(removed.value().text() + (cache.isOk() ? QString() : QStringLiteral(" (by the running workstation)")));
    return 0;
}

QList<Command> cacheCommands()
{
    return {
        {"demo", "--out DIR", "write the demo studies (head CT, chest CR, head MR) as DICOM files", cmdDemo},
        {"studies", "", "list the studies in the workstation's disk cache", cmdStudies},
        {"cache", "[size|clear --yes|remove UID|prune --older-than DAYS]", "the disk cache: its size; remove everything, a study, what is older", cmdCache},
        {"import", "FILE...", "DICOM files, folders or a DICOMDIR into the disk cache (handed to a running workstation)", cmdImport},
    };
}

} // namespace spectrum::cli
