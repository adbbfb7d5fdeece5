// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/blobs/remoteblobstore.h"

#include "spectrum/transfer/buffersink.h"

namespace spectrum {

namespace {

class RemoteWriter : public BlobWriter
{
public:
    RemoteWriter(QString key, qint64 size, const void *owner) : BlobWriter(std::move(key)), sink(size), owner(owner) {}
    qint64 size() const override { return sink.size(); }
    Error writeAt(qint64 offset, const char *data, qint64 length) override { return sink.writeAt(offset, data, length); }
    char *data() override { return sink.data(); }

    BufferSink sink;
    const void *owner;
};

} // namespace

RemoteBlobStore::RemoteBlobStore(BlobEndpoint endpoint, TransferOptions options, QObject *parent)
    : BlobStore(parent), m_endpoint(std::move(endpoint)), m_options(options)
{
}

RemoteBlobStore::~RemoteBlobStore() = default;

BlobInfo RemoteBlobStore::toBlobInfo(const RemoteBlobInfo &remote)
{
    BlobInfo info;
    info.key = remote.key;
    info.size = remote.size;
    info.sha256 = remote.sha256;
    info.tree = remote.tree;
    info.version = remote.version.section(QLatin1Char('-'), 0, 0).toULongLong();
    info.dicom = remote.dicom;
    return info;
}

// Each job owns its client object (parented to the job), so jobs may be created and run on any thread.
ResultJob<BlobInfo> *RemoteBlobStore::stat(const QString &key)
{
    auto *client = new BlobClient(m_endpoint);
    client->setDefaults(m_options);
    auto *job = chainJob<BlobInfo>(client->stat(key), [](const RemoteBlobInfo &r, const CancelToken &) {
        return Result<BlobInfo>(toBlobInfo(r));
    });
    client->setParent(job);
    return job;
}

ResultJob<QList<BlobInfo>> *RemoteBlobStore::query(const BlobQuery &query)
{
    auto *client = new BlobClient(m_endpoint);
    client->setDefaults(m_options);
    RemoteQuery q;
    q.keyPrefix = query.keyPrefix;
    q.patientId = query.patientId;
    q.studyInstanceUid = query.studyInstanceUid;
    q.seriesInstanceUid = query.seriesInstanceUid;
    q.sopInstanceUid = query.sopInstanceUid;
    q.limit = query.limit < 0 ? 100000 : query.limit;
    auto *job = chainJob<QList<BlobInfo>>(client->list(q), [](const QList<RemoteBlobInfo> &items, const CancelToken &) {
        QList<BlobInfo> out;
        for (const RemoteBlobInfo &r : items)
            out << toBlobInfo(r);
        return Result<QList<BlobInfo>>(out);
    });
    client->setParent(job);
    return job;
}

ResultJob<PullResult> *RemoteBlobStore::pull(const QString &key, BlobClient::SinkFactory factory)
{
    auto *client = new BlobClient(m_endpoint);
    client->setDefaults(m_options);
    auto *job = client->pull(key, std::move(factory));
    client->setParent(job);
    return job;
}

namespace {
/// Pulls land in memory: a BufferSink made once the size is known, kept by the returned holder.
using SinkHolder = std::shared_ptr<std::unique_ptr<BufferSink>>;
BlobClient::SinkFactory memorySink(const SinkHolder &holder)
{
    return [holder](const RemoteBlobInfo &, qint64 b, qint64 e) -> Result<ByteSink *> {
        *holder = std::make_unique<BufferSink>(e - b);
        if (!(*holder)->isValid())
            return Error(ErrorCode::DiskFull, QStringLiteral("cannot hold %1 bytes in memory").arg(e - b));
        return holder->get();
    };
}
} // namespace

ResultJob<ByteView> *RemoteBlobStore::read(const QString &key, ByteRange range)
{
    auto *client = new BlobClient(m_endpoint);
    client->setDefaults(m_options);
    auto sink = std::make_shared<std::unique_ptr<BufferSink>>();
    auto *pullJob = client->pull(key, memorySink(sink), range);
    auto *job = chainJob<ByteView>(pullJob, [sink](const PullResult &, const CancelToken &) {
        return Result<ByteView>((*sink)->view());
    });
    client->setParent(job);
    return job;
}

ResultJob<BlobSnapshot> *RemoteBlobStore::snapshot(const QString &key)
{
    auto *client = new BlobClient(m_endpoint);
    client->setDefaults(m_options);
    auto sink = std::make_shared<std::unique_ptr<BufferSink>>();
    auto *pullJob = client->pull(key, memorySink(sink));
    auto *job = chainJob<BlobSnapshot>(pullJob, [sink](const PullResult &r, const CancelToken &) {
        return Result<BlobSnapshot>(BlobSnapshot{toBlobInfo(r.blob), (*sink)->view()});
    });
    client->setParent(job);
    return job;
}

ResultJob<BlobWriterPtr> *RemoteBlobStore::reserve(const QString &key, qint64 size)
{
    const void *owner = this;
    return makeJob<BlobWriterPtr>([key, size, owner](const CancelToken &) -> Result<BlobWriterPtr> {
        if (Error e = validateKey(key); e.isError())
            return e;
        if (size < 0)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("negative size %1").arg(size));
        auto w = std::make_shared<RemoteWriter>(key, size, owner);
        if (!w->sink.isValid())
            return Error(ErrorCode::DiskFull, QStringLiteral("cannot hold %1 bytes in memory").arg(size));
        return BlobWriterPtr(w);
    }, RunOn::Caller);
}

ResultJob<BlobInfo> *RemoteBlobStore::commit(const BlobWriterPtr &writer, const CommitOptions &options)
{
    auto *w = dynamic_cast<RemoteWriter *>(writer.get());
    if (!w || w->owner != this) {
        return makeJob<BlobInfo>([](const CancelToken &) -> Result<BlobInfo> {
            return Error(ErrorCode::InvalidArgument, QStringLiteral("the blob was not reserved in this remote store"));
        }, RunOn::Caller);
    }
    auto *client = new BlobClient(m_endpoint);
    client->setDefaults(m_options);
    const QByteArray expected = options.expectedSha256;
    auto *job = chainJob<BlobInfo>(client->push(w->key(), w->sink.view()),
                                   [expected, writer, notifier = notifier()](const RemoteBlobInfo &r, const CancelToken &) -> Result<BlobInfo> {
        if (!expected.isEmpty() && expected != r.sha256)
            return Error(ErrorCode::Corrupt, QStringLiteral("blob '%1' does not match its expected SHA-256").arg(r.key));
        const BlobInfo info = toBlobInfo(r);
        notifier->announceCommitted(info);
        return info;
    });
    client->setParent(job);
    return job;
}

ResultJob<Done> *RemoteBlobStore::remove(const QString &key)
{
    auto *client = new BlobClient(m_endpoint);
    client->setDefaults(m_options);
    auto *job = chainJob<Done>(client->remove(key), [key, notifier = notifier()](const Done &, const CancelToken &) {
        notifier->announceRemoved({key});
        return Result<Done>(Done{});
    });
    client->setParent(job);
    return job;
}

} // namespace spectrum
