#pragma once
// DimseArchive: a PACS over DIMSE — C-ECHO to test, C-FIND to search and list, C-GET to fetch (instances land as
// files and are moved or copied into the cache inside the kernel), C-STORE to send. Private to stores.

#include "queryarchive.h"

#include "spectrum/transfer/dimse.h"

namespace spectrum {

class DimseArchive : public QueryArchive
{
    Q_OBJECT
public:
    DimseArchive(StoreConfig config, StoreConfigFile all, std::shared_ptr<FileStore> cache, QObject *parent = nullptr);

    ResultJob<Done> *test() override;
    ResultJob<FetchSummary> *fetch(const FetchRequest &what, const FetchOptions &options, Kept kept) override;
    ResultJob<ExportSummary> *send(const QStringList &files) override;

protected:
    ResultJob<QList<DicomRecord>> *find(const DicomQuery &query) override;

private:
    Error m_endpointError;
    DimseClient *m_client = nullptr;
};

} // namespace spectrum
