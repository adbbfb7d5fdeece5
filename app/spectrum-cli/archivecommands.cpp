// SPDX-License-Identifier: Apache-2.0
// spectrum-cli's archive commands: find, fetch, export and listen across the configured stores (their
// configuration: storecommands.cpp).

#include "archivesupport.h"
#include "spectrum/stores/archives/archivekind.h"
#include "commands.h"
#include "output.h"

#include "spectrum/core/settings.h"
#include "spectrum/core/privatefile.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/exchange/listenaddress.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/exchange/workstationservice.h"
#include "spectrum/transfer/dimse.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QHostAddress>
#include <QNetworkInterface>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSocketNotifier>
#include <QTextStream>

#include <csignal>
#include <cstdio>
#include <sys/socket.h>
#include <unistd.h>

namespace spectrum::cli {

namespace {

QString displayDate(const QString &dicomDate)
{
    const QDate d = QDate::fromString(dicomDate, QStringLiteral("yyyyMMdd"));
    return d.isValid() ? d.toString(Qt::ISODate) : dicomDate;
}



QStringList expandFiles(const QStringList &arguments)
{
    QStringList files;
    for (const QString &a : arguments) {
        if (QFileInfo(a).isDir()) {
            QDir d(a);
            for (const QString &f : d.entryList(QDir::Files, QDir::Name))
                files << d.filePath(f);
        } else {
            files << a;
        }
    }
    return files;
}


int cmdFind(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Finds studies in the configured stores (all at once unless --store names some). One study per line."));
    p.addHelpOption();
    addConfigOption(p);
    p.addOptions({
        {QStringLiteral("store"), QStringLiteral("Search this store (repeatable)."), QStringLiteral("NAME")},
        {QStringLiteral("json"), QStringLiteral("One JSON object per line.")},
    });
    addQueryOptions(p);
    processArguments(p, args);
    Result<StoreConfigFile> config = loadConfig(p);
    if (!config.isOk())
        return fail(config.error().toString());
    const Result<DicomQuery> query = queryFrom(p);
    if (!query.isOk())
        return fail(QStringLiteral("find: ") + query.error().message(), 2);
    const DicomQuery q = query.value();
    const QStringList names = p.values(QStringLiteral("store"));
    bool needsCache = false;
    for (const StoreConfig &s : config.value().stores())
        needsCache = needsCache || (s.isTheCache() && (names.isEmpty() || names.contains(s.name)));
    Result<std::unique_ptr<StoreRegistry>> reg = registry(config.value(), needsCache);
    if (!reg.isOk())
        return fail(reg.error().toString());
    QStringList silent;  // the stores that did not answer: the list is then not the whole truth
    int asked = 0;
    QObject::connect(reg.value().get(), &StoreRegistry::storeAnswered, [&](const QString &store, int studies, const Error &e) {
        ++asked;
        if (e.isError())
            silent.append(store);
        if (e.isError())
            std::fprintf(stderr, "%s: %s\n", qPrintable(store), qPrintable(e.toString()));
        else
            std::fprintf(stderr, "%s: %d stud%s\n", qPrintable(store), studies, studies == 1 ? "y" : "ies");
    });
    Result<QList<StudyHit>> hits = runSync(reg.value()->findStudies(q, names));
    if (!hits.isOk() && !silent.isEmpty() && silent.size() == asked)  // each store's words said above, once
        return fail(QStringLiteral("find: no store answered (%1)").arg(silent.join(QStringLiteral(", "))));
    if (!hits.isOk())
        return fail(hits.error().toString());
    for (const StudyHit &h : hits.value()) {
        const DicomIdentity &id = h.study.identity;
        if (!nameAsTyped(p, id.patientName))
            continue;  // asked wider ("*JOHN*"): what the typed words do not mean
        if (p.isSet(QStringLiteral("json"))) {
            QJsonObject o = id.toJson();
            o.insert(QStringLiteral("stores"), QJsonArray::fromStringList(h.stores));
            o.insert(QStringLiteral("modalities"), QJsonArray::fromStringList(h.study.modalitiesInStudy));
            o.insert(QStringLiteral("instances"), h.study.relatedInstances);
            if (!h.conflicts.isEmpty())
                o.insert(QStringLiteral("conflicts"), QJsonArray::fromStringList(h.conflicts));
            out(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)));
        } else {
            out(QStringLiteral("%1  %2  %3  %4  %5  %6  %7 instance(s)  [%8]%9")
                    .arg(displayDate(id.studyDate), DicomIdentity::displayName(id.patientName), id.patientId, h.study.modalitiesInStudy.join(QLatin1Char('/')),
                         id.studyDescription.isEmpty() ? QStringLiteral("-") : id.studyDescription, id.studyInstanceUid)
                    .arg(h.study.relatedInstances < 0 ? QStringLiteral("?") : QString::number(h.study.relatedInstances))
                    .arg(h.stores.join(QStringLiteral(", ")), h.conflicts.isEmpty() ? QString() : QStringLiteral("  CONFLICT: ") + h.conflicts.join(QStringLiteral("; "))));
        }
    }
    if (!silent.isEmpty())  // a script (a prior search, a prefetch list) must not take a part for the whole
        return fail(QStringLiteral("find: %1 of %2 store(s) did not answer (%3): the list may lack their studies")
                        .arg(silent.size()).arg(asked).arg(silent.join(QStringLiteral(", "))));
    return 0;
}

int cmdFetch(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Fetches a study from a store into the workstation's cache (or a folder)."));
    p.addHelpOption();
    addConfigOption(p);
    p.addPositionalArgument(QStringLiteral("study"), QStringLiteral("Study Instance UID."));
    p.addOptions({
        {QStringLiteral("store"), QStringLiteral("The store to fetch from."), QStringLiteral("NAME")},
        {QStringLiteral("out"), QStringLiteral("Write SOP_INSTANCE_UID.dcm files here instead of into the cache."), QStringLiteral("DIR")},
    });
    processArguments(p, args);
    if (p.positionalArguments().size() != 1 || !p.isSet(QStringLiteral("store")))
        return fail(QStringLiteral("fetch: --store NAME STUDY_UID"), 2);
    Result<StoreConfigFile> config = loadConfig(p);
    if (!config.isOk())
        return fail(config.error().toString());
    const QString outDir = p.value(QStringLiteral("out"));
    const bool tty = ::isatty(STDERR_FILENO);
    auto progress = [tty](qint64 done, qint64 total) {
        if (tty)
            std::fprintf(stderr, "\r%lld/%lld instance(s) ", qlonglong(done), qlonglong(total));
    };
    Result<std::unique_ptr<StoreRegistry>> reg = registry(config.value(), outDir.isEmpty());
    Result<FetchSummary> r = Error(ErrorCode::Cancelled, QString());
    if (!reg.isOk() && reg.error().code() == ErrorCode::Busy) {
        // The workstation holds the cache: it fetches, we watch.
        r = WorkstationService::handOverFetch(WorkstationPaths::cacheDirectory(), config.value().path(), p.value(QStringLiteral("store")),
                                              p.positionalArguments().first(), progress);
        if (!r.isOk() && r.error().code() == ErrorCode::Busy)  // nobody answers on its socket
            return fail(reg.error().toString() + QStringLiteral("; ") + r.error().toString());
        if (r.isOk())
            std::fprintf(stderr, "%sfetched by the running workstation\n", tty ? "\n" : "");
    } else if (!reg.isOk()) {
        return fail(reg.error().toString());
    } else {
        if (const StoreConfig *s = config.value().find(p.value(QStringLiteral("store"))); s && archiveKind(s->kind()).dicomNode(*s))
            preloadDicomDictionary();  // DCMTK's network code needs it at once
        auto *job = reg.value()->fetchStudy(p.value(QStringLiteral("store")), p.positionalArguments().first(), FetchOptions::into(outDir));
        QObject::connect(job, &Job::progress, job, progress);
        r = runSync(job);
        if (tty)
            std::fprintf(stderr, "\n");
    }
    if (!r.isOk())
        return fail(r.error().toString());
    const FetchSummary &s = r.value();
    std::fprintf(stderr, "%d instance(s), %lld bytes in %.3f s (%.1f MB/s), first instance complete after %.3f s%s → %s\n", s.instances, qlonglong(s.bytes), s.seconds,
                 s.bytes / std::max(1e-9, s.seconds) / 1e6, s.firstInstanceSeconds,
                 s.rejected ? qPrintable(QStringLiteral(", %1 rejected (another study or patient)").arg(s.rejected)) : "",
                 outDir.isEmpty() ? qPrintable(WorkstationPaths::cacheDirectory()) : qPrintable(outDir));
    if (!s.servers.isEmpty())
        std::fprintf(stderr, "  from %s\n", qPrintable(s.servers.join(QStringLiteral(", "))));
    for (const QString &lost : s.serversLost)
        std::fprintf(stderr, "  %s stopped answering: its series came from the others\n", qPrintable(lost));
    for (const QString &problem : s.problems)
        std::fprintf(stderr, "  %s\n", qPrintable(problem));
    return s.rejected == 0 && s.problems.isEmpty() ? 0 : 1;
}

int cmdExport(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Sends DICOM files to a store (STOW-RS, C-STORE, blobd, or the local cache)."));
    p.addHelpOption();
    addConfigOption(p);
    p.addPositionalArgument(QStringLiteral("files"), QStringLiteral("DICOM files or folders."), QStringLiteral("FILE..."));
    p.addOption({QStringLiteral("store"), QStringLiteral("The store to send to."), QStringLiteral("NAME")});
    processArguments(p, args);
    if (p.positionalArguments().isEmpty() || !p.isSet(QStringLiteral("store")))
        return fail(QStringLiteral("export: --store NAME FILE..."), 2);
    Result<StoreConfigFile> config = loadConfig(p);
    if (!config.isOk())
        return fail(config.error().toString());
    const QStringList files = expandFiles(p.positionalArguments());
    const StoreConfig *target = config.value().find(p.value(QStringLiteral("store")));
    Result<std::unique_ptr<StoreRegistry>> reg = registry(config.value(), target && target->isTheCache());
    if (!reg.isOk())
        return fail(reg.error().toString());
    Result<ExportSummary> r = runSync(reg.value()->exportFiles(p.value(QStringLiteral("store")), files));
    if (!r.isOk())
        return fail(r.error().toString());
    for (const auto &[what, why] : r.value().failed)
        std::fprintf(stderr, "%s: %s\n", qPrintable(what), qPrintable(why));
    out(QStringLiteral("%1 stored, %2 failed").arg(r.value().stored.size()).arg(r.value().failed.size()));
    return r.value().failed.isEmpty() ? 0 : 1;
}

int g_signalPipe[2] = {-1, -1};
void onSignal(int)
{
    const char c = 1;
    [[maybe_unused]] const ssize_t n = ::write(g_signalPipe[1], &c, 1);
}

int cmdListen(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Runs the workstation's Storage SCP headless: instances pushed to it go into the cache. Stop with Ctrl+C."));
    p.addHelpOption();
    addConfigOption(p);
    p.addOptions({
        {QStringLiteral("aet"), QStringLiteral("Our AE title (default: the configuration's workstation aeTitle)."), QStringLiteral("AET")},
        {QStringLiteral("port"), QStringLiteral("Port (default: the configuration's workstation storagePort)."), QStringLiteral("PORT")},
        {QStringLiteral("address"), QStringLiteral("Listen on this IPv4 address of the machine, or 'any' for every address (default: the "
                                                   "configuration's workstation listenAddress, else the address the PACS are reached from)."), QStringLiteral("ADDRESS")},
        {QStringLiteral("out"), QStringLiteral("Keep received files in this folder instead of the cache."), QStringLiteral("DIR")},
        {QStringLiteral("tls-cert"), QStringLiteral("DICOM TLS: our certificate (PEM; default: the configuration's workstation tls)."), QStringLiteral("FILE")},
        {QStringLiteral("tls-key"), QStringLiteral("DICOM TLS: its private key (PEM)."), QStringLiteral("FILE")},
        {QStringLiteral("tls-client-ca"), QStringLiteral("DICOM TLS: callers need a certificate from this CA (PEM)."), QStringLiteral("FILE")},
        {QStringLiteral("any-caller"), QStringLiteral("Take associations from any AE title and host (default: the configured DIMSE stores and the "
                                                      "workstation's \"callers\" only).")},
    });
    processArguments(p, args);
    Result<StoreConfigFile> config = loadConfig(p);
    if (!config.isOk())
        return fail(config.error().toString());
    StorageScp::Options o;
    o.aeTitle = p.value(QStringLiteral("aet")).isEmpty() ? config.value().workstation.aeTitle : p.value(QStringLiteral("aet"));
    o.port = config.value().workstation.storagePort;
    if (p.isSet(QStringLiteral("port"))) {
        bool ok = false;
        const int port = p.value(QStringLiteral("port")).toInt(&ok);
        if (!ok || port < 1 || port > 65535)  // 0 would listen on a port nobody is told
            return fail(QStringLiteral("--port: '%1' is not a TCP port (1-65535)").arg(p.value(QStringLiteral("port"))), 2);
        o.port = quint16(port);
    }
    const WorkstationConfig &ws = config.value().workstation;
    if (p.isSet(QStringLiteral("address"))) {
        const QString a = p.value(QStringLiteral("address")).trimmed();
        if (a != QLatin1String("any") && QHostAddress(a).protocol() != QAbstractSocket::IPv4Protocol)
            return fail(QStringLiteral("--address: '%1' is neither an IPv4 address nor 'any'").arg(a), 2);
        config.value().workstation.listenAddress = a;
    }
    if (p.isSet(QStringLiteral("any-caller")))
        config.value().workstation.acceptAnyCaller = true;
    const ListenAddress where = chooseListenAddress(config.value());
    o.address = where.address;
    o.certificateFile = p.isSet(QStringLiteral("tls-cert")) ? p.value(QStringLiteral("tls-cert")) : ws.tlsCertificate;
    o.keyFile = p.isSet(QStringLiteral("tls-key")) ? p.value(QStringLiteral("tls-key")) : ws.tlsKey;
    o.clientCaFile = p.isSet(QStringLiteral("tls-client-ca")) ? p.value(QStringLiteral("tls-client-ca")) : ws.tlsClientCa;
    o.callers = WorkstationConfig::allowedCallers(config.value());
    o.anyCaller = ws.acceptAnyCaller || p.isSet(QStringLiteral("any-caller"));
    if (!o.anyCaller && o.callers.isEmpty())
        std::fprintf(stderr, "spectrum-cli: no caller is allowed: add the PACS as a dimse store, name callers in the configuration's workstation "
                             "\"callers\", or --any-caller\n");
    const QString outDir = p.value(QStringLiteral("out"));
    std::shared_ptr<FileStore> cache;
    if (outDir.isEmpty()) {
        Result<std::unique_ptr<FileStore>> opened = openCache();
        if (!opened.isOk())
            return fail(opened.error().toString());
        cache = std::shared_ptr<FileStore>(opened.takeValue());
        o.directory = WorkstationPaths::cacheDirectory() + QStringLiteral("/incoming");
    } else {
        o.directory = outDir;
    }
    // The command line meanwhile (studies, import, cache) is handed to this process, which holds the cache, as to
    // a running workstation; fetches are refused with why (no archives here).
    std::unique_ptr<WorkstationService> service;
    if (cache) {
        WorkstationService::Parts parts;
        parts.cache = cache.get();
        service = std::make_unique<WorkstationService>(parts);
        if (Error e = service->listen(WorkstationPaths::cacheDirectory()); e.isError())
            std::fprintf(stderr, "spectrum-cli: other commands cannot reach this cache meanwhile: %s\n", qPrintable(e.toString()));
    }
    StorageScp scp(o);
    int received = 0;
    scp.setHandler([cache](const ReceivedInstance &i) { return cache ? keepReceivedInstance(*cache, i.path, i.sopInstanceUid) : Error(); });
    QObject::connect(&scp, &StorageScp::instanceReceived, [&received](const ReceivedInstance &i) {
        ++received;
        out(QStringLiteral("received %1 (%2)").arg(i.sopInstanceUid, i.sopClassUid));
    });
    QObject::connect(&scp, &StorageScp::failed, [](const Error &e) { std::fprintf(stderr, "spectrum-cli: %s\n", qPrintable(e.toString())); });
    // A refused association is logged by the SCP itself (on standard error here): printing StorageScp::refused too
    // would say it twice.
    if (Error e = scp.start(); e.isError())
        return fail(e.toString());
    std::fprintf(stderr, "Storage SCP %s listening on %s port %d (%s)%s, instances into %s\n", qPrintable(o.aeTitle), qPrintable(where.shown()), o.port,
                 qPrintable(where.why),
                 o.certificateFile.isEmpty() ? "" : o.clientCaFile.isEmpty() ? " (TLS)" : " (TLS, client certificates required)",
                 cache ? qPrintable(WorkstationPaths::cacheDirectory()) : qPrintable(outDir));
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, g_signalPipe) != 0)
        return fail(QStringLiteral("cannot set up signal handling"));
    QSocketNotifier notifier(g_signalPipe[0], QSocketNotifier::Read);
    QObject::connect(&notifier, &QSocketNotifier::activated, QCoreApplication::instance(), &QCoreApplication::quit);
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    QCoreApplication::exec();
    scp.stop();
    std::fprintf(stderr, "stopped after %d instance(s)\n", received);
    return 0;
}

} // namespace

QList<Command> archiveCommands()
{
    return {
        {"find", "[--store NAME] [--patient-name P] [--patient-id I] [--date FROM-TO] [--modality M] [--json]",
         "studies in the configured archives", cmdFind},
        {"fetch", "--store NAME STUDY_UID [--out DIR]", "a study into the disk cache (or a folder)", cmdFetch, false},
        {"export", "--store NAME FILE...", "send DICOM files to a store", cmdExport},
        {"listen", "[--aet A] [--port P]", "the Storage SCP, headless: studies pushed to this workstation go into its cache", cmdListen},
    };
}

} // namespace spectrum::cli
