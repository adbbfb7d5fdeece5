#include "dimsearchive.h"

#include "fetchjob.h"

#include "spectrum/stores/storeregistry.h"

#include <QDir>
#include <QTemporaryDir>

namespace spectrum {

Result<DimseEndpoint> dimseEndpointFor(const StoreConfig &s, const StoreConfigFile &config)
{
    if (s.kind != StoreKind::Dimse)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("store '%1' is not a DIMSE store").arg(s.name));
    DimseEndpoint ep;
    ep.host = s.host;
    ep.port = quint16(s.port);
    ep.calledAeTitle = s.aeTitle;
    ep.callingAeTitle = s.ourAeTitle.isEmpty() ? config.workstation.aeTitle : s.ourAeTitle;
    ep.timeoutSeconds = s.timeoutSeconds;
    ep.tls = s.tls;
    ep.caFile = s.caFile;
    if (s.tls) {  // the workstation's certificate, for a PACS that asks who we are
        ep.certificateFile = config.workstation.tlsCertificate;
        ep.keyFile = config.workstation.tlsKey;
    }
    return ep;
}

namespace {

/// C-GET of a study, series or instance: DCMTK writes each instance into a private folder as it streams in; each
/// file is checked and moved or copied (in the kernel) into place — never read whole into memory.
class DimseFetch : public FetchJob
{
public:
    DimseFetch(DimseClient *client, FetchRequest what, FetchOptions options, std::shared_ptr<FileStore> cache, Archive::Kept kept)
        : FetchJob(std::move(what), std::move(options), std::move(cache), std::move(kept)), m_client(client) {}

protected:
    void doStart() override
    {
        m_incoming = std::make_unique<QTemporaryDir>(m_options.outDir.isEmpty() ? QDir::tempPath() + QStringLiteral("/spectrum-get-XXXXXX")
                                                                               : QDir(m_options.outDir).filePath(QStringLiteral(".incoming-XXXXXX")));
        if (!m_incoming->isValid())
            return finishWith(Error(ErrorCode::Io, QStringLiteral("cannot make a folder for incoming instances")));
        // Posted from DCMTK's thread: delivered only while the job lives.
        std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(this);
        auto *get = m_client->get(m_what.studyUid, m_what.seriesUid, m_what.sopUid, m_incoming->path(), [toJob, this](const ReceivedInstance &i) -> Error {
            toJob->post([this, path = i.path] { keepFile(path); });
            return Error();
        });
        QObject::connect(get, &Job::progress, this, [this](qint64, qint64 total) { setExpected(int(total)); });
        // The keeps were posted to this thread before the job's end was: they are pending by the time it is seen.
        addSubjob(get, [this](const Result<RetrieveCount> &r) {
            if (r.isOk() && r.value().failed > 0)  // the PACS said it could not send some: never a silent gap
                transferProblem(Error(ErrorCode::Protocol, QStringLiteral("the PACS could not send %1 instance(s)").arg(r.value().failed)));
            transferEnded(r.isOk() ? Error() : r.error());
        });
    }

private:
    DimseClient *m_client;
    std::unique_ptr<QTemporaryDir> m_incoming;
};

} // namespace

DimseArchive::DimseArchive(StoreConfig config, StoreConfigFile all, std::shared_ptr<FileStore> cache, QObject *parent)
    : QueryArchive(std::move(config), std::move(all), std::move(cache), parent)
{
    Result<DimseEndpoint> ep = dimseEndpointFor(m_config, m_all);
    if (ep.isOk())
        m_client = new DimseClient(ep.value(), this);
    else
        m_endpointError = ep.error();
}

ResultJob<Done> *DimseArchive::test()
{
    return track(m_client ? m_client->echo() : failedJob<Done>(m_endpointError));
}

ResultJob<QList<DicomRecord>> *DimseArchive::find(const DicomQuery &query)
{
    return m_client ? m_client->find(query) : failedJob<QList<DicomRecord>>(m_endpointError);
}

ResultJob<FetchSummary> *DimseArchive::fetch(const FetchRequest &what, const FetchOptions &options, Kept kept)
{
    if (!m_client)
        return track(failedJob<FetchSummary>(m_endpointError));
    return track(new DimseFetch(m_client, what, options, m_cache, std::move(kept)));
}

ResultJob<ExportSummary> *DimseArchive::send(const QStringList &files)
{
    if (!m_client)
        return track(failedJob<ExportSummary>(m_endpointError));
    return track(chainJob<ExportSummary>(m_client->store(files), [](const StoreCount &r, const CancelToken &) -> Result<ExportSummary> {
        ExportSummary out;
        out.stored = r.stored;
        out.failed = r.failed;
        return out;
    }));
}

} // namespace spectrum
