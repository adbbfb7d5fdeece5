// SPDX-License-Identifier: Apache-2.0
#pragma once
// DicomWebArchive: a DICOMweb store — QIDO-RS for search and listing, WADO-RS for fetches (the whole study as
// one stream, giving way to one request per series where that is faster), STOW-RS for sends. One
// DicomWebClient per server, kept while the configuration stays: its connections are reused. An archive of several
// servers (an Orthanc cluster: StoreConfig::mirrors) spreads a study's series over them and leaves a server that
// stops answering for the others (DicomWebNodes). Private to stores.

#include "archives/queryarchive.h"

#include "spectrum/transfer/dicomweb.h"

#include <vector>

namespace spectrum {

/// The servers of one DICOMweb archive — its url, then its mirrors — and which stopped answering lately. Used on
/// the archive's thread only.
class DicomWebNodes
{
public:
    QList<DicomWebClient *> clients;  ///< children of the archive
    bool isUp(int node) const;
    /// Left aside for kDownMs: searches and fetches start elsewhere meanwhile.
    void markDown(int node);
    void markUp(int node);
    /// Every node, those up first (in configuration order), then those down (the oldest failure first).
    QList<int> order() const;
    QString name(int node) const;
    static constexpr qint64 kDownMs = 30000;

private:
    std::vector<qint64> m_downUntil;
};

/// Whether `e` says the server is not there (rather than refusing or not having something).
bool serverUnreachable(const Error &e);

class DicomWebArchive : public QueryArchive
{
    Q_OBJECT
public:
    DicomWebArchive(StoreConfig config, StoreConfigFile all, std::shared_ptr<FileStore> cache, QObject *parent = nullptr);

    Reach reach() const override { return Reach::Hospital; }
    ResultJob<Done> *test() override;
    ResultJob<FetchSummary> *fetch(const FetchRequest &what, const FetchOptions &options, Kept kept) override;
    ResultJob<ExportSummary> *send(const QStringList &files) override;

protected:
    ResultJob<QList<DicomRecord>> *find(const DicomQuery &query) override;

private:
    Error m_endpointError;  ///< why there is no client (a secret that cannot be revealed…)
    std::shared_ptr<DicomWebNodes> m_nodes;
};

} // namespace spectrum
