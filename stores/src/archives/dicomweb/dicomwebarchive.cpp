// SPDX-License-Identifier: Apache-2.0
#include "archives/dicomweb/dicomwebarchive.h"

#include "spectrum/stores/signin/signin.h"

#include "archives/fetchjob.h"

#include "spectrum/core/logging.h"
#include "spectrum/stores/archives/storeregistry.h"

#include <QDeadlineTimer>
#include <QFile>

#include <algorithm>
#include <deque>

namespace spectrum {

Result<DicomWebEndpoint> dicomWebEndpointFor(const StoreConfig &s, const StoreConfigFile &config)
{
    const DicomWebSettings *web = s.ifKind<DicomWebSettings>();
    if (!web)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("store '%1' is not a DICOMweb store").arg(s.name));
    DicomWebEndpoint ep;
    ep.base = QUrl(web->url);
    ep.caFile = web->caFile;
    ep.maxParallel = s.maxParallel;
    ep.timeoutMs = s.timeoutSeconds * 1000;
    if (web->auth == QLatin1String("basic")) {
        Result<QString> password = config.reveal(web->password);
        if (!password.isOk())
            return password.error().withContext(s.name);
        ep.auth.kind = HttpAuth::Kind::Basic;
        ep.auth.user = web->user;
        ep.auth.password = password.value();
    } else if (web->auth == QLatin1String("bearer")) {
        Result<QString> token = config.reveal(web->token);
        if (!token.isOk())
            return token.error().withContext(s.name);
        ep.auth.kind = HttpAuth::Kind::Bearer;
        ep.auth.token = token.value();
        // A token kept in a file or a variable may have been renewed by whoever issues it: read it again.
        if (web->token.source != Secret::Source::Sealed) {
            ep.auth.refresh = [secret = web->token, config]() { return config.reveal(secret); };
        }
    } else if (web->auth == QLatin1String("oidc")) {
        // The reader's sign-in: its access token, renewed behind the requests, asked for at each one.
        SignIn *signIn = SignIn::forStore(s, config);
        ep.auth.kind = HttpAuth::Kind::Bearer;
        ep.auth.signInHint = signIn->hint();
        // Asked for on the requests' threads, perhaps after the sign-in is gone at the program's end.
        ep.auth.current = signIn->accessTokenSource();
        ep.auth.refresh = [current = ep.auth.current, hint = ep.auth.signInHint]() -> Result<QString> {
            const QString token = current();
            if (token.isEmpty())
                return Error(ErrorCode::Authentication, QStringLiteral("not signed in: %1").arg(hint));
            return token;
        };
    }
    return ep;
}

bool serverUnreachable(const Error &e)
{
    return e.code() == ErrorCode::Network || e.code() == ErrorCode::Timeout;
}

bool DicomWebNodes::isUp(int node) const
{
    return size_t(node) >= m_downUntil.size() || m_downUntil[size_t(node)] <= QDeadlineTimer::current().deadline();
}

void DicomWebNodes::markDown(int node)
{
    if (m_downUntil.size() < size_t(clients.size()))
        m_downUntil.resize(size_t(clients.size()), 0);
    m_downUntil[size_t(node)] = QDeadlineTimer::current().deadline() + kDownMs;
}

void DicomWebNodes::markUp(int node)
{
    if (size_t(node) < m_downUntil.size())
        m_downUntil[size_t(node)] = 0;
}

QList<int> DicomWebNodes::order() const
{
    QList<int> up, down;
    for (int i = 0; i < clients.size(); ++i)
        (isUp(i) ? up : down) << i;
    std::stable_sort(down.begin(), down.end(), [this](int a, int b) { return m_downUntil[size_t(a)] < m_downUntil[size_t(b)]; });
    return up + down;
}

QString DicomWebNodes::name(int node) const
{
    return clients.value(node) ? clients[node]->endpoint().base.toString(QUrl::RemoveUserInfo) : QString();
}

namespace {

/// A search asked of the archive's servers in turn: the next when one is not there (a refusal is an answer).
class FailoverSearch : public CompoundJob<QList<DicomRecord>>
{
public:
    FailoverSearch(std::shared_ptr<DicomWebNodes> nodes, DicomQuery query) : m_nodes(std::move(nodes)), m_query(std::move(query))
    {
        setParent(m_nodes->clients.first());  // as the clients' own jobs: one stopped before it ends goes with them
    }

protected:
    void doStart() override
    {
        m_order = m_nodes->order();
        next();
    }

private:
    void next()
    {
        const int node = m_order.at(m_tried++);
        addSubjob(m_nodes->clients[node]->search(m_query), [this, node](const Result<QList<DicomRecord>> &r) {
            if (r.isOk() || !serverUnreachable(r.error()) || m_tried == m_order.size()) {
                if (r.isOk())
                    m_nodes->markUp(node);
                return finishWith(r);
            }
            qCWarning(lcStores) << "search: trying the next server after" << r.error().toString();
            m_nodes->markDown(node);
            next();
        });
    }

    std::shared_ptr<DicomWebNodes> m_nodes;
    DicomQuery m_query;
    QList<int> m_order;
    int m_tried = 0;
};


/// A study, a series or an instance over WADO-RS into the cache. One instance: straight to it, its bytes shown
/// while they arrive when someone watches (FetchOptions::arriving). A study (or series): asked for at once as one
/// stream, with its series listed beside it (QIDO-RS) — a single-series study, or any study when maxParallel is
/// 1, then costs no round trip before its first byte. When the listing names several series and more than one
/// request may run, the stream gives way to one request per series, maxParallel at once (faster wherever one
/// connection is limited by its window and the round trip, or the server serves each request on one core);
/// what the stream had brought by then is kept, and what the series requests bring again is counted once. A
/// stream the server refuses (one that serves series but not whole studies) gives way the same way.
/// Orthanc's WADO-RS has no byte ranges, so parallelism is across objects, and per series, not per instance:
/// measured on a 200-instance CT, one request for the series took 0.1 s where 200 instance requests, 6 at a
/// time, took 0.8 s (each costs Orthanc a lookup and a new answer).
class DicomWebFetch : public FetchJob
{
public:
    DicomWebFetch(std::shared_ptr<DicomWebNodes> nodes, FetchRequest what, FetchOptions options, std::shared_ptr<FileStore> cache, Archive::Kept kept)
        : FetchJob(std::move(what), std::move(options), std::move(cache), std::move(kept)), m_nodes(std::move(nodes)),
          m_running(size_t(m_nodes->clients.size()), 0)
    {
    }

protected:
    void doStart() override
    {
        const QList<int> order = m_nodes->order();
        if (!m_what.sopUid.isEmpty())
            return fetchInstance(order, 0);
        m_wholeNode = order.first();
        m_whole = client(m_wholeNode)->retrieve(m_what.studyUid, m_what.seriesUid, QString(), callbacks());
        addSubjob(m_whole.data(), [this](const Result<RetrieveSummary> &r) { wholeEnded(r); });
        DicomQuery q;
        q.level = QueryLevel::Series;
        q.studyInstanceUid = m_what.studyUid;
        q.seriesInstanceUid = m_what.seriesUid;
        addSubjob(new FailoverSearch(m_nodes, q), [this](const Result<QList<DicomRecord>> &r) { seriesListed(r); });
    }

private:
    DicomWebClient *client(int node) const { return m_nodes->clients[node]; }
    int maxParallel() const { return m_nodes->clients.first()->endpoint().maxParallel; }
    bool mirrored() const { return m_nodes->clients.size() > 1; }

    /// Each whole part to the cache: on the reading thread when it goes into the cache, else on the pool.
    RetrieveCallbacks callbacks()
    {
        RetrieveCallbacks cb;
        cb.complete = [this](const WadoPart &, const ByteView &whole) {
            keep(whole);  // to the cache while the rest streams in
            return Error();
        };
        if (m_options.outDir.isEmpty()) {  // into a pack of the cache; files in a folder are created on the pool
            cb.completeOnReader = [keeper = keeperOnReader()](const WadoPart &, const ByteView &whole) { return keeper(whole); };
        }
        return cb;
    }

    /// One instance, from the first server that answers.
    void fetchInstance(const QList<int> &order, int at)
    {
        setExpected(1);
        RetrieveCallbacks cb = callbacks();
        if (m_options.arriving) {
            cb.arriving = [arriving = m_options.arriving](const WadoPart &part, const Arrival &a) {
                if (part.index == 0)
                    arriving(a);
            };
        }
        const int node = order.at(at);
        addSubjob(client(node)->retrieve(m_what.studyUid, m_what.seriesUid, m_what.sopUid, cb), [this, order, at, node](const Result<RetrieveSummary> &r) {
            if (!r.isOk() && serverUnreachable(r.error()) && at + 1 < order.size()) {
                m_nodes->markDown(node);
                noteServer(m_nodes->name(node), true);
                return fetchInstance(order, at + 1);
            }
            transferEnded(r.isOk() ? Error() : r.error());
        });
    }

    void wholeEnded(const Result<RetrieveSummary> &r)
    {
        if (m_perSeries)
            return;  // cancelled: the series requests carry on
        m_whole = nullptr;
        if (r.isOk()) {
            if (mirrored())
                noteServer(m_nodes->name(m_wholeNode));
            return transferEnded(Error());
        }
        if (serverUnreachable(r.error()) && mirrored()) {
            m_nodes->markDown(m_wholeNode);
            noteServer(m_nodes->name(m_wholeNode), true);
        }
        if (!m_seriesAnswered) {
            m_wholeFailed = r.error();  // the series list decides
            return;
        }
        if (m_series.isEmpty())
            return transferEnded(r.error());
        qCWarning(lcStores) << "fetch: asked series by series after" << r.error().toString();
        giveWay();
    }

    void seriesListed(const Result<QList<DicomRecord>> &r)
    {
        m_seriesAnswered = true;
        if (r.isOk())
            m_series = r.value();
        else  // the stream decides: it fails too if the server is unreachable or refuses us
            qCWarning(lcStores) << "fetch: the series could not be listed:" << r.error().toString();
        int expected = 0;
        for (const DicomRecord &series : m_series)
            expected += std::max(0, series.relatedInstances);
        setExpected(expected);
        if (m_wholeFailed.isError()) {
            if (m_series.isEmpty())
                return transferEnded(m_wholeFailed);
            qCWarning(lcStores) << "fetch: asked series by series after" << m_wholeFailed.toString();
            return giveWay();
        }
        // Series by series where more than one request may run: on one server, or spread over several.
        if (m_whole && m_series.size() >= 2 && (maxParallel() >= 2 || mirrored()))
            giveWay();  // otherwise the stream brings it all
    }

    /// The stream gives way to one request per series.
    void giveWay()
    {
        m_perSeries = true;
        if (m_whole)
            m_whole->cancel();
        m_whole = nullptr;
        m_queue.assign(m_series.begin(), m_series.end());
        nextSeries();
    }

    /// The server that takes the next series: of those up, the one with the fewest requests running (below the
    /// limit), or -1.
    int pickNode() const
    {
        int best = -1;
        for (int node = 0; node < m_nodes->clients.size(); ++node) {
            if (!m_nodes->isUp(node) || m_running[size_t(node)] >= maxParallel())
                continue;
            if (best < 0 || m_running[size_t(node)] < m_running[size_t(best)])
                best = node;
        }
        return best;
    }

    void nextSeries()
    {
        while (!m_queue.empty() && !isFinished()) {
            const int node = pickNode();
            if (node < 0)
                break;
            const DicomRecord series = m_queue.front();
            m_queue.pop_front();
            ++m_running[size_t(node)];
            ++m_runningAll;
            addSubjob(client(node)->retrieve(series.identity.studyInstanceUid, series.identity.seriesInstanceUid, QString(), callbacks()),
                      [this, node, series](const Result<RetrieveSummary> &r) { seriesEnded(node, series, r); });
        }
        if (m_runningAll == 0 && !m_queue.empty() && !isFinished()) {
            // Every server of the archive stopped answering: what is left cannot come.
            m_queue.clear();
            transferEnded(m_lastError.isError() ? m_lastError : Error(ErrorCode::Network, QStringLiteral("no server of the archive answers")));
        }
    }

    void seriesEnded(int node, const DicomRecord &series, const Result<RetrieveSummary> &r)
    {
        --m_running[size_t(node)];
        --m_runningAll;
        if (r.isOk() && mirrored()) {
            noteServer(m_nodes->name(node));
            m_nodes->markUp(node);  // it answers: a timeout before does not keep it aside
        }
        if (!r.isOk() && mirrored() && serverUnreachable(r.error())) {
            // That server is gone: its series again from the others (what it brought before is kept, and counted once).
            qCWarning(lcStores) << "fetch: series" << series.identity.seriesInstanceUid << "from another server after" << r.error().toString();
            m_nodes->markDown(node);
            noteServer(m_nodes->name(node), true);
            m_lastError = r.error();
            m_queue.push_front(series);
            return nextSeries();
        }
        if (!r.isOk())
            qCWarning(lcStores) << "fetch:" << r.error().toString();
        if (m_queue.empty() && m_runningAll == 0)
            return transferEnded(r.isOk() ? Error() : r.error());
        if (!r.isOk())
            transferProblem(r.error());
        nextSeries();
    }

    std::shared_ptr<DicomWebNodes> m_nodes;
    QPointer<ResultJob<RetrieveSummary>> m_whole;  ///< the stream, while it runs
    int m_wholeNode = 0;
    bool m_perSeries = false;                      ///< the stream gave way
    bool m_seriesAnswered = false;
    QList<DicomRecord> m_series;                   ///< what the QIDO-RS answer listed
    Error m_wholeFailed;                           ///< the stream's error while the series were still being listed
    std::deque<DicomRecord> m_queue;
    std::vector<int> m_running;                    ///< requests under way, per server
    int m_runningAll = 0;
    Error m_lastError;                             ///< why the last server was left
};

/// Every server of a mirrored archive asked at once; one that does not answer is named (the others still serve,
/// but an admin testing the store wants to know).
class PingAll : public CompoundJob<Done>
{
public:
    explicit PingAll(std::shared_ptr<DicomWebNodes> nodes) : m_nodes(std::move(nodes)) {}

protected:
    void doStart() override
    {
        m_left = int(m_nodes->clients.size());
        for (int node = 0; node < m_nodes->clients.size(); ++node) {
            addSubjob(m_nodes->clients[node]->ping(), [this, node](const Result<Done> &r) {
                if (!r.isOk())
                    m_failures << QStringLiteral("%1: %2").arg(m_nodes->name(node), r.error().message());
                if (--m_left > 0)
                    return;
                if (m_failures.isEmpty())
                    return finishWith(Done{});
                finishWith(Error(ErrorCode::Network, QStringLiteral("%1 of %2 servers do not answer: %3")
                                                         .arg(m_failures.size()).arg(m_nodes->clients.size()).arg(m_failures.join(QStringLiteral("; ")))));
            });
        }
    }

private:
    std::shared_ptr<DicomWebNodes> m_nodes;
    QStringList m_failures;
    int m_left = 0;
};

} // namespace

DicomWebArchive::DicomWebArchive(StoreConfig config, StoreConfigFile all, std::shared_ptr<FileStore> cache, QObject *parent)
    : QueryArchive(std::move(config), std::move(all), std::move(cache), parent)
{
    Result<DicomWebEndpoint> ep = dicomWebEndpointFor(m_config, m_all);
    if (!ep.isOk()) {
        m_endpointError = ep.error();
        return;
    }
    m_nodes = std::make_shared<DicomWebNodes>();
    m_nodes->clients << new DicomWebClient(ep.value(), this);
    for (const QString &mirror : m_config.as<DicomWebSettings>().mirrors) {
        DicomWebEndpoint other = ep.value();
        other.base = QUrl(mirror);
        m_nodes->clients << new DicomWebClient(other, this);
    }
}

ResultJob<Done> *DicomWebArchive::test()
{
    if (!m_nodes)
        return track(failedJob<Done>(m_endpointError));
    if (m_nodes->clients.size() == 1)
        return track(m_nodes->clients.first()->ping());
    return track(new PingAll(m_nodes));
}

ResultJob<QList<DicomRecord>> *DicomWebArchive::find(const DicomQuery &query)
{
    if (!m_nodes)
        return failedJob<QList<DicomRecord>>(m_endpointError);
    if (m_nodes->clients.size() == 1)
        return m_nodes->clients.first()->search(query);
    return new FailoverSearch(m_nodes, query);
}

ResultJob<FetchSummary> *DicomWebArchive::fetch(const FetchRequest &what, const FetchOptions &options, Kept kept)
{
    if (!m_nodes)
        return track(failedJob<FetchSummary>(m_endpointError));
    return track(new DicomWebFetch(m_nodes, what, options, m_cache, std::move(kept)));
}

ResultJob<ExportSummary> *DicomWebArchive::send(const QStringList &files)
{
    if (!m_nodes)
        return track(failedJob<ExportSummary>(m_endpointError));
    ExportSummary pre;
    QList<ByteView> instances;
    for (const QString &f : files) {
        QFile file(f);
        if (!file.open(QIODevice::ReadOnly)) {
            pre.failed.append({f, file.errorString()});
            continue;
        }
        instances << ByteView(file.readAll());
    }
    if (instances.isEmpty())
        return track(makeJob<ExportSummary>([pre](const CancelToken &) -> Result<ExportSummary> { return pre; }, RunOn::Caller));
    return track(chainJob<ExportSummary>(m_nodes->clients.at(m_nodes->order().first())->store(instances), [pre](const StowResult &r, const CancelToken &) -> Result<ExportSummary> {
        ExportSummary out = pre;
        out.stored = r.stored;
        for (const auto &[uid, reason] : r.failed)
            out.failed.append({uid, QStringLiteral("refused, reason 0x%1").arg(reason, 4, 16, QLatin1Char('0'))});
        if (r.unaccounted() > 0)
            out.failed.append({QStringLiteral("(%1 instance(s))").arg(r.unaccounted()), QStringLiteral("not accepted and not named by the server (not DICOM?)")});
        return out;
    }));
}

} // namespace spectrum
