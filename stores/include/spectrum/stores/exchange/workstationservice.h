// SPDX-License-Identifier: Apache-2.0
#pragma once
// WorkstationService: what the command line hands to a running workstation, which holds the disk cache (only one
// process writes it) — imports, fetches, prefetches (cron's, on a workstation left open overnight) — and what it
// asks of the cache meanwhile (its studies). The workstation listens on a local socket named after its cache
// folder, reachable by the same user only; the CLI, finding the cache in use, asks there and prints the answer.
//
// One JSON line asks: {"import": [absolute paths]}, {"fetch": {"config", "store", "study"}},
// {"prefetch": {"config", "query", "stores", "priors", "studies"}} or {"studies": {"query"}}. The answer is lines of
// {"done": n, "total": m}, then one {"summary": …} or {"error": {"code", "message"}}.

#include "spectrum/core/dicomquery.h"
#include "spectrum/core/result.h"
#include "spectrum/stores/blobs/cachemaintenance.h"
#include "spectrum/stores/archives/archive.h"
#include "spectrum/stores/exchange/dicomimport.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QJsonObject>
#include <QObject>

#include <functional>

class QLocalServer;
class QLocalSocket;

namespace spectrum {

class PriorPrefetcher;
class SavedSearchRunner;
class StoreRegistry;

class WorkstationService : public QObject
{
    Q_OBJECT
public:
    /// The workstation's parts the requests use; `cache` must outlive the service, the others may be null (their
    /// requests are then refused with why).
    struct Parts
    {
        FileStore *cache = nullptr;
        StoreRegistry *registry = nullptr;
        SavedSearchRunner *searches = nullptr;
        PriorPrefetcher *prefetcher = nullptr;
        /// The studies in the cache now (the workstation's list): which of those a prefetch lists are here.
        std::function<QList<StudySummary>()> cachedStudies;
    };
    explicit WorkstationService(Parts parts, QObject *parent = nullptr);
    ~WorkstationService() override;

    /// Listens for the cache at `cacheRoot`; an error when another process listens for it already.
    Error listen(const QString &cacheRoot);
    /// The socket's name for a cache folder (the same for every path that names the folder).
    static QString serverName(const QString &cacheRoot);

    // The client side (blocking; for the CLI). An error when no workstation answers, or it refused.
    using Progress = std::function<void(int done, int total)>;
    /// Hands `paths` to the workstation holding `cacheRoot` to import.
    static Result<ImportSummary> handOverImport(const QString &cacheRoot, const QStringList &paths, const Progress &progress);
    /// Has it fetch study `studyUid` from store `store` of the configuration at `configPath` (which must be its own).
    static Result<FetchSummary> handOverFetch(const QString &cacheRoot, const QString &configPath, const QString &store, const QString &studyUid,
                                              const Progress &progress);
    /// Has it prefetch what `query` finds in `stores` (empty: every archive): the studies themselves when
    /// `studies`, and `priors` comparable priors of each. The lines of its summary.
    static Result<QStringList> handOverPrefetch(const QString &cacheRoot, const QString &configPath, const DicomQuery &query, const QStringList &stores,
                                                int priors, bool studies, const Progress &progress);
    /// The studies its cache holds that match `query`, newest first.
    static Result<QList<StudySummary>> askStudies(const QString &cacheRoot, const DicomQuery &query);
    /// Has it remove what `which` selects from its cache (cachemaintenance.h).
    static Result<CacheRemoval> handOverCacheRemoval(const QString &cacheRoot, const CacheSelection &which);

Q_SIGNALS:
    /// A client's import ended (the study list follows the cache by itself).
    void imported(const spectrum::ImportSummary &summary);

private:
    void serve();
    void answer(QLocalSocket *socket, const QJsonObject &ask);
    void import(QLocalSocket *socket, const QJsonObject &ask);
    void fetch(QLocalSocket *socket, const QJsonObject &ask);
    void prefetch(QLocalSocket *socket, const QJsonObject &ask);
    void studies(QLocalSocket *socket, const QJsonObject &ask);
    void removeFromCache(QLocalSocket *socket, const QJsonObject &ask);
    /// Refused (with why) when the client's configuration is not the one this workstation follows.
    bool sameConfig(QLocalSocket *socket, const QJsonObject &ask);

    Parts m_parts;
    QLocalServer *m_server;
};

} // namespace spectrum
