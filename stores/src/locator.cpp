#include "spectrum/stores/locator.h"

#include "spectrum/stores/filestore.h"
#include "spectrum/stores/memorystore.h"
#include "spectrum/stores/storeregistry.h"

#include <QPointer>

namespace spectrum {

namespace {

/// Keeps a small instance in memory too (best effort: the memory cache has its own budget).
void remember(MemoryStore *memory, const BlobSnapshot &s)
{
    if (!memory)
        return;
    Result<BlobWriterPtr> w = runSync(memory->reserve(s.info.key, s.bytes.size()));
    if (!w.isOk() || w.value()->writeAt(0, s.bytes.data(), s.bytes.size()).isError())
        return;
    CommitOptions o;
    o.verifiedSha256 = s.info.sha256;
    runSync(memory->commit(w.value(), o));
}

} // namespace

Locator::Locator(MemoryStore *memory, std::shared_ptr<FileStore> disk, StoreRegistry *registry, QObject *parent)
    : QObject(parent), m_memory(memory), m_disk(std::move(disk)), m_registry(registry)
{
}

QStringList Locator::remoteOrder() const
{
    QStringList cluster, central;
    for (const StoreConfig &s : m_registry->config().stores()) {
        if (s.kind == StoreKind::Blobd)
            cluster << s.name;
        else if (s.kind == StoreKind::DicomWeb || s.kind == StoreKind::Dimse)
            central << s.name;
    }
    return cluster + central;
}

ResultJob<Located> *Locator::locate(const DicomIdentity &identity)
{
    const QString key = identity.sopInstanceUid;
    MemoryStore *memory = m_memory;
    std::shared_ptr<FileStore> disk = m_disk;
    QPointer<StoreRegistry> registry(m_registry);
    const QStringList order = remoteOrder();
    QHash<QString, QString> tierOf;
    for (const StoreConfig &s : m_registry->config().stores())
        tierOf.insert(s.name, s.kind == StoreKind::Blobd ? QStringLiteral("cluster") : QStringLiteral("central"));
    return new CallbackJob<Located>([=](CallbackJob<Located> *job) {
        if (key.isEmpty())
            return job->complete(Error(ErrorCode::InvalidArgument, QStringLiteral("no SOP Instance UID to look for")));
        auto fromDisk = [job, disk, memory, key](const QString &tier, const QString &store, const QStringList &misses) {
            whenDone(disk->snapshot(key), job, [job, memory, tier, store, misses](const Result<BlobSnapshot> &r) {
                if (!r.isOk())
                    return job->complete(r.error());
                remember(memory, r.value());
                job->complete(Located{r.value(), tier, store, misses});
            });
        };
        auto *tryRemote = ownedFunction<void(int, QStringList)>(job);
        *tryRemote = [=](int i, QStringList misses) {
            if (i >= order.size() || !registry) {
                return job->complete(Error(ErrorCode::NotFound, QStringLiteral("instance %1 is in no store (%2)")
                                                                    .arg(key, misses.isEmpty() ? QStringLiteral("none configured") : misses.join(QStringLiteral("; ")))));
            }
            const QString name = order.at(i);
            whenDone(registry->fetchInstance(name, identity.studyInstanceUid, identity.seriesInstanceUid, key), job,
                     [=](const Result<FetchSummary> &r) {
                         if (r.isOk() && r.value().sopInstanceUids.contains(key))
                             return fromDisk(tierOf.value(name), name, misses);
                         (*tryRemote)(i + 1, misses + QStringList{QStringLiteral("%1: %2").arg(name, r.isOk() ? QStringLiteral("not there") : r.error().toString())});
                     });
        };
        auto tryDisk = [=]() {
            whenDone(disk->stat(key), job, [=](const Result<BlobInfo> &r) {
                if (r.isOk())
                    return fromDisk(QStringLiteral("disk"), QString(), QStringList());
                (*tryRemote)(0, QStringList());
            });
        };
        if (!memory)
            return tryDisk();
        whenDone(memory->snapshot(key), job, [=](const Result<BlobSnapshot> &r) {
            if (r.isOk())
                return job->complete(Located{r.value(), QStringLiteral("memory"), QString(), QStringList()});
            tryDisk();
        });
    });
}

} // namespace spectrum
