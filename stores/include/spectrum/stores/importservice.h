#pragma once
// ImportService: a running workstation takes imports from `spectrum-cli import` while it holds the cache (only
// one process may write it). The workstation listens on a local socket named after its cache folder, reachable
// by the same user only; the CLI, finding the cache in use, hands its files over and prints the workstation's
// progress and summary. One JSON line asks ({"import": [absolute paths]}); the answer is lines of
// {"done": n, "total": m}, then one {"summary": …}.

#include "spectrum/core/result.h"
#include "spectrum/stores/dicomimport.h"

#include <QObject>

#include <functional>

class QLocalServer;

namespace spectrum {

class ImportService : public QObject
{
    Q_OBJECT
public:
    /// Imports into `cache` (which must outlive the service) what clients hand over.
    explicit ImportService(FileStore *cache, QObject *parent = nullptr);
    ~ImportService() override;

    /// Listens for the cache at `cacheRoot`; an error when another process listens for it already.
    Error listen(const QString &cacheRoot);
    /// The socket's name for a cache folder (the same for every path that names the folder).
    static QString serverName(const QString &cacheRoot);

    /// The client side: hands `paths` to the workstation holding `cacheRoot` and waits for the summary (blocking;
    /// for the CLI). `progress` hears each step. An error when no workstation answers.
    static Result<ImportSummary> handOver(const QString &cacheRoot, const QStringList &paths, const std::function<void(int, int)> &progress);

Q_SIGNALS:
    /// A client's import ended (the study list follows the cache by itself).
    void imported(const spectrum::ImportSummary &summary);

private:
    void serve();

    FileStore *m_cache;
    QLocalServer *m_server;
};

} // namespace spectrum
