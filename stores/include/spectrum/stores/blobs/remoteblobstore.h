// SPDX-License-Identifier: Apache-2.0
#pragma once
// RemoteBlobStore: a BlobStore whose blobs live on a spectrum-blobd server (cluster or central store),
// reached through the blob protocol's multi-stream client.

#include "spectrum/stores/blobs/blobstore.h"
#include "spectrum/transfer/blobclient.h"

namespace spectrum {

class RemoteBlobStore : public BlobStore
{
    Q_OBJECT
public:
    RemoteBlobStore(BlobEndpoint endpoint, TransferOptions options = TransferOptions(), QObject *parent = nullptr);
    ~RemoteBlobStore() override;

    QString kind() const override { return QStringLiteral("blobd"); }
    BlobEndpoint endpoint() const { return m_endpoint; }

    ResultJob<BlobInfo> *stat(const QString &key) override;
    ResultJob<QList<BlobInfo>> *query(const BlobQuery &query) override;
    /// Pulls the range over several connections into memory.
    ResultJob<ByteView> *read(const QString &key, ByteRange range = ByteRange::all()) override;
    ResultJob<BlobSnapshot> *snapshot(const QString &key) override;
    /// The blob is assembled in memory here and pushed at commit().
    ResultJob<BlobWriterPtr> *reserve(const QString &key, qint64 size) override;
    ResultJob<BlobInfo> *commit(const BlobWriterPtr &writer, const CommitOptions &options = CommitOptions()) override;
    ResultJob<Done> *remove(const QString &key) override;
    /// Unknown for a remote store: zeros.
    StoreUsage usage() const override { return StoreUsage(); }

    /// Pulls the whole blob into `sink` (sized by `factory` once the size is known): for callers that want it
    /// somewhere other than memory, such as a disk reservation.
    ResultJob<PullResult> *pull(const QString &key, BlobClient::SinkFactory factory);

    static BlobInfo toBlobInfo(const RemoteBlobInfo &remote);

private:
    BlobEndpoint m_endpoint;
    TransferOptions m_options;
};

} // namespace spectrum
