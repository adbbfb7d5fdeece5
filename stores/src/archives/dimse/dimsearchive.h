// SPDX-License-Identifier: Apache-2.0
#pragma once
// DimseArchive: a PACS over DIMSE — C-ECHO to test, C-FIND to search and list, C-GET or C-MOVE (to this
// workstation's Storage SCP) to fetch (instances land as files and are moved or copied into the cache inside the
// kernel), C-STORE to send. Private to stores.

#include "archives/queryarchive.h"

#include "spectrum/transfer/dimse.h"

#include <QPointer>

namespace spectrum {

class DimseArchive : public QueryArchive
{
    Q_OBJECT
public:
    DimseArchive(StoreConfig config, StoreConfigFile all, std::shared_ptr<FileStore> cache, QObject *parent = nullptr);

    Reach reach() const override { return Reach::Hospital; }
    ResultJob<Done> *test() override;
    ResultJob<FetchSummary> *fetch(const FetchRequest &what, const FetchOptions &options, Kept kept) override;
    ResultJob<ExportSummary> *send(const QStringList &files) override;
    /// The Storage SCP this process runs, where C-MOVE fetches claim what they asked for; without one a C-MOVE
    /// fetch starts its own on the workstation's AE title and port.
    void setMoveDestination(StorageScp *scp) { m_moveDestination = scp; }

protected:
    ResultJob<QList<DicomRecord>> *find(const DicomQuery &query) override;

private:
    Error m_endpointError;
    DimseClient *m_client = nullptr;
    QPointer<StorageScp> m_moveDestination;
};

} // namespace spectrum
