// SPDX-License-Identifier: Apache-2.0
#pragma once
// MemoryStore: blobs in memory, least recently used evicted first to stay under a byte budget.

#include "spectrum/stores/blobs/blobstore.h"

namespace spectrum {

class MemoryStore : public BlobStore
{
    Q_OBJECT
public:
    /// `budgetBytes` 0: no budget.
    explicit MemoryStore(qint64 budgetBytes, QObject *parent = nullptr);
    ~MemoryStore() override;

    QString kind() const override { return QStringLiteral("memory"); }
    bool readsOnAnyThread() const override { return true; }
    ResultJob<BlobInfo> *stat(const QString &key) override;
    ResultJob<QList<BlobInfo>> *query(const BlobQuery &query) override;
    ResultJob<ByteView> *read(const QString &key, ByteRange range = ByteRange::all()) override;
    ResultJob<BlobSnapshot> *snapshot(const QString &key) override;
    ResultJob<BlobWriterPtr> *reserve(const QString &key, qint64 size) override;
    ResultJob<BlobInfo> *commit(const BlobWriterPtr &writer, const CommitOptions &options = CommitOptions()) override;
    ResultJob<Done> *remove(const QString &key) override;
    StoreUsage usage() const override;

    struct State;

private:
    std::shared_ptr<State> d;
};

} // namespace spectrum
