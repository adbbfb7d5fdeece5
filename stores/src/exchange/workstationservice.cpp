// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/exchange/workstationservice.h"

#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/reading/priorprefetch.h"
#include "spectrum/stores/reading/savedsearchrunner.h"
#include "spectrum/stores/archives/storeregistry.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QFile>
#include <QStandardPaths>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalServer>
#include <QLocalSocket>
#include <QTimer>

#include <chrono>

#include <unistd.h>

namespace spectrum {

namespace {
QJsonObject toJson(const ImportSummary &s)
{
    QJsonArray notDicom, notDicomWhy, failed, duplicates, flagged;
    for (const QString &f : s.notDicom)
        notDicom.append(f);
    for (const QString &w : s.notDicomWhy)
        notDicomWhy.append(w);
    for (const auto &[file, why] : s.failed)
        failed.append(QJsonArray{file, why});
    for (const auto &[file, why] : s.duplicates)
        duplicates.append(QJsonArray{file, why});
    for (const auto &[study, why] : s.flagged)
        flagged.append(QJsonArray{study, why});
    QJsonArray studies;
    for (const QString &uid : s.studies)
        studies.append(uid);
    return QJsonObject{{QStringLiteral("imported"), s.imported}, {QStringLiteral("notDicom"), notDicom}, {QStringLiteral("notDicomWhy"), notDicomWhy},
                       {QStringLiteral("failed"), failed}, {QStringLiteral("duplicates"), duplicates}, {QStringLiteral("flagged"), flagged},
                       {QStringLiteral("studies"), studies}, {QStringLiteral("cancelled"), s.cancelled}};
}

ImportSummary fromJson(const QJsonObject &o)
{
    ImportSummary s;
    s.imported = o.value(QStringLiteral("imported")).toInt();
    for (const QJsonValue &v : o.value(QStringLiteral("notDicom")).toArray())
        s.notDicom << v.toString();
    for (const QJsonValue &v : o.value(QStringLiteral("notDicomWhy")).toArray())
        s.notDicomWhy << v.toString();
    for (const QJsonValue &v : o.value(QStringLiteral("failed")).toArray())
        s.failed.append({v.toArray().at(0).toString(), v.toArray().at(1).toString()});
    for (const QJsonValue &v : o.value(QStringLiteral("duplicates")).toArray())
        s.duplicates.append({v.toArray().at(0).toString(), v.toArray().at(1).toString()});
    for (const QJsonValue &v : o.value(QStringLiteral("flagged")).toArray())
        s.flagged.append({v.toArray().at(0).toString(), v.toArray().at(1).toString()});
    for (const QJsonValue &v : o.value(QStringLiteral("studies")).toArray())
        s.studies.insert(v.toString());
    s.cancelled = o.value(QStringLiteral("cancelled")).toBool();
    return s;
}

QByteArray line(const QJsonObject &o)
{
    return QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
}

QJsonArray strings(const QStringList &list)
{
    QJsonArray a;
    for (const QString &s : list)
        a.append(s);
    return a;
}

QStringList strings(const QJsonValue &v)
{
    QStringList out;
    for (const QJsonValue &s : v.toArray())
        out << s.toString();
    return out;
}

QJsonObject toJson(const DicomQuery &q)
{
    return QJsonObject{{QStringLiteral("patientName"), q.patientName}, {QStringLiteral("patientId"), q.patientId},
                       {QStringLiteral("accessionNumber"), q.accessionNumber}, {QStringLiteral("modality"), q.modality},
                       {QStringLiteral("description"), q.description}, {QStringLiteral("dateFrom"), q.dateFrom.toString(Qt::ISODate)},
                       {QStringLiteral("dateTo"), q.dateTo.toString(Qt::ISODate)}};
}

DicomQuery queryFromJson(const QJsonObject &o)
{
    DicomQuery q;
    q.patientName = o.value(QStringLiteral("patientName")).toString();
    q.patientId = o.value(QStringLiteral("patientId")).toString();
    q.accessionNumber = o.value(QStringLiteral("accessionNumber")).toString();
    q.modality = o.value(QStringLiteral("modality")).toString();
    q.description = o.value(QStringLiteral("description")).toString();
    q.dateFrom = QDate::fromString(o.value(QStringLiteral("dateFrom")).toString(), Qt::ISODate);
    q.dateTo = QDate::fromString(o.value(QStringLiteral("dateTo")).toString(), Qt::ISODate);
    return q;
}

QJsonObject toJson(const StudySummary &s)
{
    return QJsonObject{{QStringLiteral("studyInstanceUid"), s.identity.studyInstanceUid}, {QStringLiteral("patientName"), s.identity.patientName},
                       {QStringLiteral("patientId"), s.identity.patientId}, {QStringLiteral("studyDate"), s.identity.studyDate},
                       {QStringLiteral("studyDescription"), s.identity.studyDescription}, {QStringLiteral("modalities"), strings(s.modalities)},
                       {QStringLiteral("instances"), s.instanceCount}, {QStringLiteral("bytes"), double(s.bytes)},
                       {QStringLiteral("identityConflict"), s.identityConflict}};
}

StudySummary studyFromJson(const QJsonObject &o)
{
    StudySummary s;
    s.identity.studyInstanceUid = o.value(QStringLiteral("studyInstanceUid")).toString();
    s.identity.patientName = o.value(QStringLiteral("patientName")).toString();
    s.identity.patientId = o.value(QStringLiteral("patientId")).toString();
    s.identity.studyDate = o.value(QStringLiteral("studyDate")).toString();
    s.identity.studyDescription = o.value(QStringLiteral("studyDescription")).toString();
    s.modalities = strings(o.value(QStringLiteral("modalities")));
    s.instanceCount = o.value(QStringLiteral("instances")).toInt();
    s.bytes = qint64(o.value(QStringLiteral("bytes")).toDouble());
    s.identityConflict = o.value(QStringLiteral("identityConflict")).toBool();
    return s;
}

QJsonObject toJson(const FetchSummary &s)
{
    return QJsonObject{{QStringLiteral("instances"), s.instances}, {QStringLiteral("bytes"), double(s.bytes)}, {QStringLiteral("seconds"), s.seconds},
                       {QStringLiteral("firstInstanceSeconds"), s.firstInstanceSeconds}, {QStringLiteral("rejected"), s.rejected},
                       {QStringLiteral("problems"), strings(s.problems)}, {QStringLiteral("servers"), strings(s.servers)},
                       {QStringLiteral("serversLost"), strings(s.serversLost)}};
}

FetchSummary fetchFromJson(const QJsonObject &o)
{
    FetchSummary s;
    s.instances = o.value(QStringLiteral("instances")).toInt();
    s.bytes = qint64(o.value(QStringLiteral("bytes")).toDouble());
    s.seconds = o.value(QStringLiteral("seconds")).toDouble();
    s.firstInstanceSeconds = o.value(QStringLiteral("firstInstanceSeconds")).toDouble();
    s.rejected = o.value(QStringLiteral("rejected")).toInt();
    s.problems = strings(o.value(QStringLiteral("problems")));
    s.servers = strings(o.value(QStringLiteral("servers")));
    s.serversLost = strings(o.value(QStringLiteral("serversLost")));
    return s;
}

QByteArray errorLine(const Error &e)
{
    return line({{QStringLiteral("error"), QJsonObject{{QStringLiteral("code"), int(e.code())}, {QStringLiteral("message"), e.message()}}}});
}

QString canonical(const QString &path)
{
    const QString c = QFileInfo(path).canonicalFilePath();
    return c.isEmpty() ? QDir::cleanPath(QFileInfo(path).absoluteFilePath()) : c;
}

/// One request and its answer: progress lines to `progress`, then the summary (or the workstation's error).
Result<QJsonValue> exchange(const QString &cacheRoot, const QJsonObject &request, const WorkstationService::Progress &progress)
{
    QLocalSocket socket;
    socket.connectToServer(WorkstationService::serverName(cacheRoot));
    if (!socket.waitForConnected(2000))
        return Error(ErrorCode::Busy, QStringLiteral("the workstation holding the cache does not answer (%1)").arg(socket.errorString()));
    socket.write(line(request));
    socket.flush();
    for (;;) {
        while (socket.canReadLine()) {
            const QJsonObject o = QJsonDocument::fromJson(socket.readLine()).object();
            if (o.contains(QStringLiteral("summary")))
                return o.value(QStringLiteral("summary"));
            if (o.contains(QStringLiteral("error"))) {
                const QJsonObject e = o.value(QStringLiteral("error")).toObject();
                return Error(ErrorCode(e.value(QStringLiteral("code")).toInt()), e.value(QStringLiteral("message")).toString());
            }
            if (progress)
                progress(o.value(QStringLiteral("done")).toInt(), o.value(QStringLiteral("total")).toInt());
        }
        if (socket.state() != QLocalSocket::ConnectedState && socket.bytesAvailable() == 0)
            return Error(ErrorCode::Network, QStringLiteral("the workstation closed the connection before it answered"));
        socket.waitForReadyRead(1000);
    }
}
} // namespace

WorkstationService::WorkstationService(Parts parts, QObject *parent) : QObject(parent), m_parts(parts), m_server(new QLocalServer(this))
{
    m_server->setSocketOptions(QLocalServer::UserAccessOption);  // this user's processes only
    connect(m_server, &QLocalServer::newConnection, this, &WorkstationService::serve);
}

WorkstationService::~WorkstationService() = default;

QString WorkstationService::serverName(const QString &cacheRoot)
{
    const QString canonical = QFileInfo(cacheRoot).canonicalFilePath();
    const QByteArray hash = QCryptographicHash::hash((canonical.isEmpty() ? QDir::cleanPath(QFileInfo(cacheRoot).absoluteFilePath()) : canonical).toUtf8(),
                                                     QCryptographicHash::Sha256).toHex().left(16);
    // A full path in a folder only this user may enter (the runtime folder, else one of our own under the temp
    // folder, made 0700): another user cannot take the name first and answer in the workstation's place.
    // The user's runtime folder — /run/user/UID also when the environment does not say so (cron), so that a
    // nightly job finds the workstation the desktop session started.
    QString folder = qEnvironmentVariableIsSet("XDG_RUNTIME_DIR") ? QStandardPaths::writableLocation(QStandardPaths::RuntimeLocation) : QString();
    if (const QString session = QStringLiteral("/run/user/%1").arg(::getuid()); folder.isEmpty() && QFileInfo(session).isDir() && QFileInfo(session).ownerId() == ::getuid())
        folder = session;
    if (folder.isEmpty()) {
        folder = QDir::tempPath() + QStringLiteral("/spectrum-") + QString::number(::getuid());
        QDir().mkpath(folder);
        QFile::setPermissions(folder, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }
    return folder + QStringLiteral("/spectrum-import-") + QString::fromLatin1(hash);
}

Error WorkstationService::listen(const QString &cacheRoot)
{
    const QString name = serverName(cacheRoot);
    if (m_server->listen(name))
        return Error();
    // A socket left by a workstation that died: nobody answers on it, so it may go.
    QLocalSocket probe;
    probe.connectToServer(name);
    if (probe.waitForConnected(500))
        return Error(ErrorCode::Busy, QStringLiteral("another workstation holds %1").arg(cacheRoot));
    QLocalServer::removeServer(name);
    if (!m_server->listen(name))
        return Error(ErrorCode::Io, QStringLiteral("cannot listen for the command line: %1").arg(m_server->errorString()));
    return Error();
}

void WorkstationService::serve()
{
    while (QLocalSocket *socket = m_server->nextPendingConnection()) {
        connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
        connect(socket, &QLocalSocket::readyRead, this, [this, socket] {
            if (!socket->canReadLine() || socket->property("asked").toBool())
                return;
            socket->setProperty("asked", true);
            answer(socket, QJsonDocument::fromJson(socket->readLine()).object());
        });
    }
}

void WorkstationService::answer(QLocalSocket *socket, const QJsonObject &ask)
{
    if (ask.contains(QStringLiteral("import")))
        return import(socket, ask);
    if (ask.contains(QStringLiteral("fetch")))
        return fetch(socket, ask.value(QStringLiteral("fetch")).toObject());
    if (ask.contains(QStringLiteral("prefetch")))
        return prefetch(socket, ask.value(QStringLiteral("prefetch")).toObject());
    if (ask.contains(QStringLiteral("studies")))
        return studies(socket, ask.value(QStringLiteral("studies")).toObject());
    if (ask.contains(QStringLiteral("removeFromCache")))
        return removeFromCache(socket, ask.value(QStringLiteral("removeFromCache")).toObject());
    socket->write(errorLine(Error(ErrorCode::Unsupported, QStringLiteral("the running workstation does not know this request (an older version?)"))));
    socket->disconnectFromServer();
}

void WorkstationService::import(QLocalSocket *socket, const QJsonObject &ask)
{
    QStringList paths;
    for (const QJsonValue &v : ask.value(QStringLiteral("import")).toArray()) {
        if (QFileInfo(v.toString()).isAbsolute())
            paths << v.toString();
    }
    auto *import = new DicomImport(m_parts.cache, paths, socket);
    connect(import, &DicomImport::progress, socket, [socket](int done, int total) {
        socket->write(line({{QStringLiteral("done"), done}, {QStringLiteral("total"), total}}));
    });
    connect(import, &DicomImport::finished, socket, [this, socket](const ImportSummary &summary) {
        socket->write(line({{QStringLiteral("summary"), toJson(summary)}}));
        socket->disconnectFromServer();
        Q_EMIT imported(summary);
    });
    connect(socket, &QLocalSocket::disconnected, import, &DicomImport::cancel);  // the CLI was interrupted
    import->start();
}

bool WorkstationService::sameConfig(QLocalSocket *socket, const QJsonObject &ask)
{
    Error refused;
    if (!m_parts.registry)
        refused = Error(ErrorCode::Unsupported, QStringLiteral("the running workstation has no archives"));
    else if (canonical(ask.value(QStringLiteral("config")).toString()) != canonical(m_parts.registry->config().path()))
        refused = Error(ErrorCode::InvalidArgument, QStringLiteral("the running workstation follows another store configuration (%1), not %2")
                                                        .arg(m_parts.registry->config().path(), ask.value(QStringLiteral("config")).toString()));
    if (!refused.isError())
        return true;
    socket->write(errorLine(refused));
    socket->disconnectFromServer();
    return false;
}

void WorkstationService::fetch(QLocalSocket *socket, const QJsonObject &ask)
{
    if (!sameConfig(socket, ask))
        return;
    auto *job = m_parts.registry->fetchStudy(ask.value(QStringLiteral("store")).toString(), ask.value(QStringLiteral("study")).toString());
    connect(job, &Job::progress, socket, [socket](qint64 done, qint64 total) {
        socket->write(line({{QStringLiteral("done"), double(done)}, {QStringLiteral("total"), double(total)}}));
    });
    connect(socket, &QLocalSocket::disconnected, job, [job] { job->cancel(); });  // the CLI was interrupted
    whenDone(job, socket, [socket](const Result<FetchSummary> &r) {  // starts it
        socket->write(r.isOk() ? line({{QStringLiteral("summary"), toJson(r.value())}}) : errorLine(r.error()));
        socket->disconnectFromServer();
    });
}

void WorkstationService::prefetch(QLocalSocket *socket, const QJsonObject &ask)
{
    if (!sameConfig(socket, ask))
        return;
    if (!m_parts.searches || !m_parts.prefetcher) {
        socket->write(errorLine(Error(ErrorCode::Unsupported, QStringLiteral("prefetching is off on the running workstation"))));
        return socket->disconnectFromServer();
    }
    SavedSearch search;
    search.name = QStringLiteral("spectrum-cli prefetch");
    search.prefetch = ask.value(QStringLiteral("studies")).toBool() ? SavedSearch::Prefetch::StudiesAndPriors : SavedSearch::Prefetch::Priors;
    const int priors = ask.value(QStringLiteral("priors")).toInt();
    search.priorsPerStudy = priors > 0 ? priors : -1;  // 0: the studies alone (the prefetcher's own 0 means its default)
    search.stores = strings(ask.value(QStringLiteral("stores")));
    QStringList problems;
    const QStringList stores = m_parts.searches->storesFor(search, &problems);
    auto *find = m_parts.registry->findStudies(queryFromJson(ask.value(QStringLiteral("query")).toObject()), stores);
    whenDone(find, socket, [this, socket, search, problems](const Result<QList<StudyHit>> &hits) {
        if (!hits.isOk()) {
            socket->write(errorLine(hits.error()));
            return socket->disconnectFromServer();
        }
        // Which of the studies listed are here whole already (the prefetcher counts a study once a day's run).
        int here = 0, listed = 0;
        const QList<StudySummary> cached = m_parts.cachedStudies ? m_parts.cachedStudies() : QList<StudySummary>();
        for (const StudyHit &h : hits.value()) {
            ++listed;
            here += std::any_of(cached.begin(), cached.end(), [&](const StudySummary &c) {
                return c.identity.studyInstanceUid == h.study.identity.studyInstanceUid && c.identity.patientId == h.study.identity.patientId
                    && !c.identityConflict && c.instanceCount > 0 && c.instanceCount >= h.study.relatedInstances;
            });
        }
        const PrefetchSummary before = m_parts.prefetcher->summary();
        SavedSearchRun run = m_parts.searches->prefetchFor(search, hits.value());
        run.problems = problems + run.problems;
        // Answered once the prefetcher has done what it was handed (and anything else it had queued).
        auto reply = [this, socket, run, before, here, listed] {
            const PrefetchSummary &now = m_parts.prefetcher->summary();
            QStringList lines{run.text(),
                              QStringLiteral("%1 stud%2 listed, %3 here already; the prefetcher fetched %4 stud%5 and %6 prior(s) (%7 instance(s), %8 MB)")
                                  .arg(listed).arg(listed == 1 ? QStringLiteral("y") : QStringLiteral("ies")).arg(here)
                                  .arg(now.studiesFetched - before.studiesFetched).arg(now.studiesFetched - before.studiesFetched == 1 ? QStringLiteral("y") : QStringLiteral("ies"))
                                  .arg(now.priorsFetched - before.priorsFetched).arg(now.instances - before.instances).arg((now.bytes - before.bytes) / 1e6, 0, 'f', 1)};
            for (const QString &s : now.skipped.mid(before.skipped.size()))
                lines << QStringLiteral("  left out: %1").arg(s);
            for (const QString &held : run.heldBack)
                lines << QStringLiteral("  not fetched: %1").arg(held);
            for (const QString &p : run.problems + now.problems.mid(before.problems.size()))
                lines << QStringLiteral("  %1").arg(p);
            socket->write(line({{QStringLiteral("summary"), QJsonObject{{QStringLiteral("lines"), strings(lines)}, {QStringLiteral("listed"), run.hits.size()}}}}));
            socket->disconnectFromServer();
        };
        if (m_parts.prefetcher->isIdle())
            return reply();
        connect(m_parts.prefetcher, &PriorPrefetcher::idle, socket, reply, Qt::SingleShotConnection);
        // A transfer the reader paused keeps the prefetcher from ever being idle: answered after an hour all the
        // same, saying so (the work goes on in the workstation).
        QTimer::singleShot(std::chrono::hours(1), socket, [socket, listed] {
            if (socket->state() != QLocalSocket::ConnectedState)
                return;
            socket->write(line({{QStringLiteral("summary"), QJsonObject{{QStringLiteral("lines"), strings({QStringLiteral("%1 stud%2 listed").arg(listed).arg(listed == 1 ? QStringLiteral("y") : QStringLiteral("ies")),
                                                                                                            QStringLiteral("  the workstation is still prefetching after an hour (a transfer paused?): it goes on")})},
                                                                        {QStringLiteral("listed"), listed}}}}));
            socket->disconnectFromServer();
        });
    });
}

void WorkstationService::studies(QLocalSocket *socket, const QJsonObject &ask)
{
    auto *job = m_parts.cache->studies(queryFromJson(ask.value(QStringLiteral("query")).toObject()));
    whenDone(job, socket, [this, socket](const Result<QList<StudySummary>> &r) {
        if (!r.isOk()) {
            socket->write(errorLine(r.error()));
            return socket->disconnectFromServer();
        }
        QJsonArray list;
        for (const StudySummary &s : r.value())
            list.append(toJson(s));
        const StoreUsage u = m_parts.cache->usage();
        socket->write(line({{QStringLiteral("summary"), QJsonObject{{QStringLiteral("studies"), list}, {QStringLiteral("blobs"), double(u.blobs)},
                                                                    {QStringLiteral("bytes"), double(u.bytes)}, {QStringLiteral("budget"), double(u.budget)}}}}));
        socket->disconnectFromServer();
    });
}

void WorkstationService::removeFromCache(QLocalSocket *socket, const QJsonObject &ask)
{
    Result<CacheSelection> which = CacheSelection::fromJson(ask);
    if (!which.isOk()) {
        socket->write(errorLine(which.error()));
        return socket->disconnectFromServer();
    }
    // On the pool: thousands of removals, each made durable, never on the reader's thread.
    FileStore *cache = m_parts.cache;
    auto *job = makeJob<CacheRemoval>([cache, selection = which.value()](const CancelToken &cancel) { return spectrum::removeFromCache(*cache, selection, cancel); });
    whenDone(job, socket, [socket](const Result<CacheRemoval> &r) {
        socket->write(r.isOk() ? line({{QStringLiteral("summary"), r.value().toJson()}}) : errorLine(r.error()));
        socket->disconnectFromServer();
    });
}

Result<CacheRemoval> WorkstationService::handOverCacheRemoval(const QString &cacheRoot, const CacheSelection &which)
{
    Result<QJsonValue> r = exchange(cacheRoot, {{QStringLiteral("removeFromCache"), which.toJson()}}, {});
    if (!r.isOk())
        return r.error();
    return CacheRemoval::fromJson(r.value().toObject());
}

Result<ImportSummary> WorkstationService::handOverImport(const QString &cacheRoot, const QStringList &paths, const Progress &progress)
{
    QJsonArray absolute;
    for (const QString &p : paths)
        absolute.append(QFileInfo(p).absoluteFilePath());
    Result<QJsonValue> r = exchange(cacheRoot, {{QStringLiteral("import"), absolute}}, progress);
    if (!r.isOk())
        return r.error();
    return fromJson(r.value().toObject());
}

Result<FetchSummary> WorkstationService::handOverFetch(const QString &cacheRoot, const QString &configPath, const QString &store, const QString &studyUid,
                                                       const Progress &progress)
{
    Result<QJsonValue> r = exchange(cacheRoot,
                                    {{QStringLiteral("fetch"), QJsonObject{{QStringLiteral("config"), canonical(configPath)}, {QStringLiteral("store"), store},
                                                                           {QStringLiteral("study"), studyUid}}}},
                                    progress);
    if (!r.isOk())
        return r.error();
    return fetchFromJson(r.value().toObject());
}

Result<QStringList> WorkstationService::handOverPrefetch(const QString &cacheRoot, const QString &configPath, const DicomQuery &query, const QStringList &stores,
                                                         int priors, bool studies, const Progress &progress)
{
    Result<QJsonValue> r = exchange(cacheRoot,
                                    {{QStringLiteral("prefetch"), QJsonObject{{QStringLiteral("config"), canonical(configPath)}, {QStringLiteral("query"), toJson(query)},
                                                                              {QStringLiteral("stores"), strings(stores)}, {QStringLiteral("priors"), priors},
                                                                              {QStringLiteral("studies"), studies}}}},
                                    progress);
    if (!r.isOk())
        return r.error();
    return strings(r.value().toObject().value(QStringLiteral("lines")));
}

Result<QList<StudySummary>> WorkstationService::askStudies(const QString &cacheRoot, const DicomQuery &query)
{
    Result<QJsonValue> r = exchange(cacheRoot, {{QStringLiteral("studies"), QJsonObject{{QStringLiteral("query"), toJson(query)}}}}, {});
    if (!r.isOk())
        return r.error();
    QList<StudySummary> out;
    for (const QJsonValue &v : r.value().toObject().value(QStringLiteral("studies")).toArray())
        out << studyFromJson(v.toObject());
    return out;
}

} // namespace spectrum
