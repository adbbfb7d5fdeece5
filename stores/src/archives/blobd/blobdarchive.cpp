// SPDX-License-Identifier: Apache-2.0
#include "archives/blobd/blobdarchive.h"

#include "archives/fetchjob.h"
#include "archives/studylisting.h"

#include "spectrum/core/compoundjob.h"
#include "spectrum/core/logging.h"
#include "spectrum/core/uid.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/transfer/blobclient.h"
#include "spectrum/transfer/buffersink.h"

#include <QFile>

#include <deque>

namespace spectrum {

Result<BlobEndpoint> blobEndpointFor(const StoreConfig &s, const StoreConfigFile &config)
{
    const BlobdSettings *blobd = s.ifKind<BlobdSettings>();
    if (!blobd)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("store '%1' is not a blob store").arg(s.name));
    auto parsed = BlobEndpoint::fromUrl(QUrl(blobd->url));
    if (!parsed.isOk())
        return parsed.error();
    BlobEndpoint ep = parsed.value().first;
    ep.caFile = blobd->caFile;
    Result<QString> token = config.reveal(blobd->token);
    if (!token.isOk())
        return token.error().withContext(s.name);
    ep.token = token.value();
    return ep;
}

/// Files into a blob store (a blobd or a local cache), keyed by SOP Instance UID as the workstation's cache keys
/// instances. Blocking: on the pool.
ExportSummary sendFiles(const QStringList &files, const std::function<Error(const QString &sop, const ByteView &bytes)> &put)
{
    ExportSummary out;
    for (const QString &f : files) {
        QFile file(f);
        if (!file.open(QIODevice::ReadOnly)) {
            out.failed.append({f, file.errorString()});
            continue;
        }
        const ByteView bytes(file.readAll());
        Result<DicomIdentity> id = readDicomIdentity(bytes);
        if (!id.isOk() || !isValidUid(id.value().sopInstanceUid)) {
            out.failed.append({f, id.isOk() ? QStringLiteral("no SOP Instance UID") : id.error().toString()});
            continue;
        }
        if (Error err = put(id.value().sopInstanceUid, bytes); err.isError())
            out.failed.append({f, err.toString()});
        else
            out.stored << id.value().sopInstanceUid;
    }
    return out;
}

namespace {

/// The blobs of a study (or series, or instance) listed, then pulled one after another into memory, each
/// checked and kept.
class BlobdFetch : public FetchJob
{
public:
    BlobdFetch(BlobEndpoint endpoint, FetchRequest what, FetchOptions options, std::shared_ptr<FileStore> cache, Archive::Kept kept)
        : FetchJob(std::move(what), std::move(options), std::move(cache), std::move(kept)), m_client(new BlobClient(std::move(endpoint), this)) {}

protected:
    void doStart() override
    {
        RemoteQuery rq;
        rq.studyInstanceUid = m_what.studyUid;
        rq.seriesInstanceUid = m_what.seriesUid;
        rq.sopInstanceUid = m_what.sopUid;
        addSubjob(m_client->list(rq), [this](const Result<QList<RemoteBlobInfo>> &r) { listed(r); });
    }

private:
    void listed(const Result<QList<RemoteBlobInfo>> &r)
    {
        if (!r.isOk())
            return transferEnded(r.error());
        setExpected(int(r.value().size()));
        if (r.value().isEmpty())
            return transferEnded(Error(ErrorCode::NotFound, QStringLiteral("not there")));
        m_queue.assign(r.value().begin(), r.value().end());
        pullNext();
    }

    void pullNext()
    {
        if (m_queue.empty())
            return transferEnded(Error());
        const RemoteBlobInfo b = m_queue.front();
        m_queue.pop_front();
        auto sink = std::make_shared<std::unique_ptr<BufferSink>>();
        auto *pull = m_client->pull(b.key, [sink](const RemoteBlobInfo &, qint64 begin, qint64 end) -> Result<ByteSink *> {
            *sink = std::make_unique<BufferSink>(end - begin);
            if (!(*sink)->isValid())
                return Error(ErrorCode::DiskFull, QStringLiteral("cannot hold %1 bytes").arg(end - begin));
            return sink->get();
        });
        addSubjob(pull, [this, sink](const Result<PullResult> &pr) {
            if (pr.isOk()) {
                keep((*sink)->view());
            } else {
                qCWarning(lcStores) << "fetch:" << pr.error().toString();
                transferProblem(pr.error());  // the job's error, when nothing could be kept
            }
            pullNext();
        });
    }

    BlobClient *m_client;
    std::deque<RemoteBlobInfo> m_queue;
};

/// A listing of the blob store, turned into whatever `convert` makes of the identities it holds.
template <typename T>
class BlobdListing : public CompoundJob<T>
{
public:
    using Convert = std::function<Result<T>(const QList<DicomIdentity> &)>;
    BlobdListing(BlobEndpoint endpoint, RemoteQuery query, Convert convert)
        : m_client(new BlobClient(std::move(endpoint), this)), m_query(std::move(query)), m_convert(std::move(convert)) {}

protected:
    void doStart() override
    {
        this->addSubjob(m_client->list(m_query), [this](const Result<QList<RemoteBlobInfo>> &r) {
            if (!r.isOk())
                return this->finishWith(r.error());
            QList<DicomIdentity> ids;
            for (const RemoteBlobInfo &b : r.value())
                ids << b.dicom;  // cached under its SOP Instance UID once fetched, whatever its key there
            this->finishWith(m_convert(ids));
        });
    }

private:
    BlobClient *m_client;
    RemoteQuery m_query;
    Convert m_convert;
};

} // namespace

ResultJob<Done> *BlobdArchive::test()
{
    Result<BlobEndpoint> ep = blobEndpointFor(m_config, m_all);
    if (!ep.isOk())
        return track(failedJob<Done>(ep.error()));
    RemoteQuery any;
    any.limit = 1;
    return track(new BlobdListing<Done>(ep.value(), any, [](const QList<DicomIdentity> &) -> Result<Done> { return Done{}; }));
}

ResultJob<QList<DicomRecord>> *BlobdArchive::search(const DicomQuery &query)
{
    Result<BlobEndpoint> ep = blobEndpointFor(m_config, m_all);
    if (!ep.isOk())
        return track(failedJob<QList<DicomRecord>>(ep.error()));
    RemoteQuery rq;
    rq.studyInstanceUid = query.studyInstanceUid;
    if (!query.patientId.contains(QLatin1Char('*')) && !query.patientId.contains(QLatin1Char('?')))
        rq.patientId = query.patientId;
    return track(new BlobdListing<QList<DicomRecord>>(ep.value(), rq, [query](const QList<DicomIdentity> &ids) -> Result<QList<DicomRecord>> {
        return studiesFrom(ids, query);
    }));
}

ResultJob<StudySummary> *BlobdArchive::list(const QString &studyUid)
{
    Result<BlobEndpoint> ep = blobEndpointFor(m_config, m_all);
    if (!ep.isOk())
        return track(failedJob<StudySummary>(ep.error()));
    RemoteQuery rq;
    rq.studyInstanceUid = studyUid;
    return track(new BlobdListing<StudySummary>(ep.value(), rq, [studyUid](const QList<DicomIdentity> &ids) -> Result<StudySummary> {
        StudySummary study = studyFrom(studyUid, {}, ids);
        if (study.instanceCount == 0)
            return Error(ErrorCode::NotFound, QStringLiteral("study %1 has no instance there").arg(studyUid));
        return study;
    }));
}

ResultJob<FetchSummary> *BlobdArchive::fetch(const FetchRequest &what, const FetchOptions &options, Kept kept)
{
    Result<BlobEndpoint> ep = blobEndpointFor(m_config, m_all);
    if (!ep.isOk())
        return track(failedJob<FetchSummary>(ep.error()));
    return track(new BlobdFetch(ep.value(), what, options, m_cache, std::move(kept)));
}

ResultJob<ExportSummary> *BlobdArchive::send(const QStringList &files)
{
    Result<BlobEndpoint> ep = blobEndpointFor(m_config, m_all);
    if (!ep.isOk())
        return track(failedJob<ExportSummary>(ep.error()));
    return track(makeJob<ExportSummary>([endpoint = ep.value(), files](const CancelToken &) -> Result<ExportSummary> {
        BlobClient remote(endpoint);  // on this pool thread, for this send
        return sendFiles(files, [&remote](const QString &sop, const ByteView &bytes) { return runSync(remote.push(sop, bytes)).error(); });
    }));
}

} // namespace spectrum
