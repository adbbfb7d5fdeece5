// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/blobs/memorystore.h"

#include "blobs/lrumap.h"
#include "blobs/queryindex.h"

#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/transfer/hashtree.h"
#include "spectrum/transfer/sha256.h"
#include "spectrum/transfer/buffersink.h"

#include <QMutex>

#include <algorithm>

namespace spectrum {

namespace {
struct Entry
{
    BlobInfo info;
    ByteView bytes;  // shares the writer's buffer: committing copies nothing
};

class MemoryWriter : public BlobWriter
{
public:
    MemoryWriter(QString key, qint64 size, const void *store)
        : BlobWriter(std::move(key)), sink(size), owner(store) {}
    qint64 size() const override { return sink.size(); }
    // Once committed, the memory is the stored blob's: no more writes.
    Error writeAt(qint64 offset, const char *data, qint64 length) override
    {
        if (committed)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("blob '%1' is already committed").arg(key()));
        return sink.writeAt(offset, data, length);
    }
    char *data() override { return committed ? nullptr : sink.data(); }

    BufferSink sink;
    const void *owner;  ///< the store state that reserved it: a writer commits only there
    bool committed = false;
};
} // namespace

struct MemoryStore::State
{
    mutable QMutex mutex;
    LruMap<Entry> entries;
    qint64 total = 0;
    qint64 budget = 0;
    quint64 nextVersion = 1;
};

MemoryStore::MemoryStore(qint64 budgetBytes, QObject *parent) : BlobStore(parent), d(std::make_shared<State>())
{
    d->budget = std::max<qint64>(0, budgetBytes);
}

MemoryStore::~MemoryStore() = default;

ResultJob<BlobInfo> *MemoryStore::stat(const QString &key)
{
    return makeJob<BlobInfo>([d = d, key](const CancelToken &) -> Result<BlobInfo> {
        QMutexLocker lock(&d->mutex);
        if (const Entry *e = d->entries.find(key))
            return e->info;
        return Error(ErrorCode::NotFound, QStringLiteral("no blob '%1' in memory").arg(key));
    }, RunOn::Caller);
}

ResultJob<QList<BlobInfo>> *MemoryStore::query(const BlobQuery &query)
{
    return makeJob<QList<BlobInfo>>([d = d, query](const CancelToken &) -> Result<QList<BlobInfo>> {
        QList<BlobInfo> out;
        {
            QMutexLocker lock(&d->mutex);
            out = matchingBlobs(d->entries, query);
        }
        query.arrange(&out);
        return out;
    }, RunOn::Caller);
}

ResultJob<ByteView> *MemoryStore::read(const QString &key, ByteRange range)
{
    return makeJob<ByteView>([d = d, key, range](const CancelToken &) -> Result<ByteView> {
        QMutexLocker lock(&d->mutex);
        Entry *e = d->entries.find(key);
        if (!e)
            return Error(ErrorCode::NotFound, QStringLiteral("no blob '%1' in memory").arg(key));
        d->entries.touch(key);
        qint64 begin = 0, end = 0;
        if (Error err = range.resolve(e->bytes.size(), &begin, &end); err.isError())
            return err;
        return e->bytes.mid(begin, end - begin);  // shares the buffer, no copy
    }, RunOn::Caller);
}

ResultJob<BlobSnapshot> *MemoryStore::snapshot(const QString &key)
{
    return makeJob<BlobSnapshot>([d = d, key](const CancelToken &) -> Result<BlobSnapshot> {
        QMutexLocker lock(&d->mutex);
        Entry *e = d->entries.find(key);
        if (!e)
            return Error(ErrorCode::NotFound, QStringLiteral("no blob '%1' in memory").arg(key));
        d->entries.touch(key);
        return BlobSnapshot{e->info, e->bytes};
    }, RunOn::Caller);
}

ResultJob<BlobWriterPtr> *MemoryStore::reserve(const QString &key, qint64 size)
{
    return makeJob<BlobWriterPtr>([d = d, key, size](const CancelToken &) -> Result<BlobWriterPtr> {
        if (Error e = validateKey(key); e.isError())
            return e;
        if (size < 0)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("negative size %1").arg(size));
        if (d->budget > 0 && size > d->budget) {
            return Error(ErrorCode::DiskFull, QStringLiteral("blob of %1 bytes exceeds the memory budget of %2 bytes")
                                                  .arg(size).arg(d->budget));
        }
        auto writer = std::make_shared<MemoryWriter>(key, size, d.get());
        if (!writer->sink.isValid())
            return Error(ErrorCode::DiskFull, QStringLiteral("cannot allocate %1 bytes").arg(size));
        return BlobWriterPtr(writer);
    });
}

ResultJob<BlobInfo> *MemoryStore::commit(const BlobWriterPtr &writer, const CommitOptions &options)
{
    return makeJob<BlobInfo>([d = d, writer, options, notifier = notifier()](const CancelToken &) -> Result<BlobInfo> {
        auto *w = dynamic_cast<MemoryWriter *>(writer.get());
        if (!w || w->owner != d.get())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("the blob was not reserved in this memory store"));
        if (w->committed)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("blob '%1' was already committed").arg(w->key()));
        Entry entry;
        entry.bytes = w->sink.view();
        entry.info.key = w->key();
        entry.info.size = entry.bytes.size();
        entry.info.sha256 = options.verifiedSha256.isEmpty() ? Sha256::hash(entry.bytes.data(), entry.bytes.size()) : options.verifiedSha256;
        Sha256::releaseThreadState();  // usually a pool thread, which may outlive the program's end
        if (!options.expectedSha256.isEmpty() && options.expectedSha256 != entry.info.sha256)
            return Error(ErrorCode::Corrupt, QStringLiteral("blob '%1' does not match its expected SHA-256").arg(w->key()));
        entry.info.tree = hashtree::fits(options.verifiedTree, entry.info.size) ? options.verifiedTree : QByteArray();
        completeTree(&entry.info);
        if (!hashtree::fits(entry.info.tree, entry.info.size)) {
            entry.info.tree = hashtree::leaves(entry.bytes.data(), entry.bytes.size());
            Sha256::releaseThreadState();
        }
        Result<DicomIdentity> identity = readDicomIdentity(entry.bytes);
        entry.info.dicom = identity.isOk() ? identity.value() : DicomIdentity();
        entry.info.committed = QDateTime::currentDateTimeUtc();
        QStringList evicted;
        {
            QMutexLocker lock(&d->mutex);
            entry.info.version = d->nextVersion++;
            if (const Entry *old = d->entries.find(w->key()))
                d->total -= old->info.size;
            d->total += entry.info.size;
            d->entries.insert(w->key(), entry);
            evicted = evictToBudget(d->entries, d->total, d->budget, w->key(),
                                    [](const Entry &e) { return e.info.size; });
        }
        w->committed = true;
        notifier->announceCommitted(entry.info);
        notifier->announceRemoved(evicted);
        return entry.info;
    });
}

ResultJob<Done> *MemoryStore::remove(const QString &key)
{
    return makeJob<Done>([d = d, key, notifier = notifier()](const CancelToken &) -> Result<Done> {
        {
            QMutexLocker lock(&d->mutex);
            const Entry *e = d->entries.find(key);
            if (!e)
                return Error(ErrorCode::NotFound, QStringLiteral("no blob '%1' in memory").arg(key));
            d->total -= e->info.size;
            d->entries.remove(key);
        }
        notifier->announceRemoved({key});
        return Done{};
    }, RunOn::Caller);
}

StoreUsage MemoryStore::usage() const
{
    QMutexLocker lock(&d->mutex);
    return StoreUsage{d->total, d->budget, d->entries.size()};
}

} // namespace spectrum
