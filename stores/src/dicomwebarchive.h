#pragma once
// DicomWebArchive: a DICOMweb store — QIDO-RS for search and listing, WADO-RS for fetches (the whole study as
// one stream, giving way to one request per series where that is faster), STOW-RS for sends. One
// DicomWebClient per archive, kept while the configuration stays: its connections are reused. Private to stores.

#include "queryarchive.h"

#include "spectrum/transfer/dicomweb.h"

namespace spectrum {

class DicomWebArchive : public QueryArchive
{
    Q_OBJECT
public:
    DicomWebArchive(StoreConfig config, StoreConfigFile all, std::shared_ptr<FileStore> cache, QObject *parent = nullptr);

    ResultJob<Done> *test() override;
    ResultJob<FetchSummary> *fetch(const FetchRequest &what, const FetchOptions &options, Kept kept) override;
    ResultJob<ExportSummary> *send(const QStringList &files) override;

protected:
    ResultJob<QList<DicomRecord>> *find(const DicomQuery &query) override;

private:
    Error m_endpointError;  ///< why there is no client (a secret that cannot be revealed…)
    DicomWebClient *m_client = nullptr;
};

} // namespace spectrum
