// SPDX-License-Identifier: Apache-2.0
// FileStore's way in: a reservation in the staging folder (or under its final name), written by the transfer and
// read while it arrives; resumable ones that survive a kill; the commit that makes one an entry; put and import.

#include "blobs/filestore/state.h"

#include "spectrum/core/logging.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>

#include <cerrno>
#include "spectrum/core/bootid.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/transfer/filesink.h"
#include "spectrum/transfer/progressrecord.h"
#include "spectrum/transfer/hashtree.h"
#include "spectrum/transfer/sha256.h"
#include "spectrum/transfer/xxh3.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

namespace spectrum {

using namespace cachedisk;

namespace cachedisk {

Error describeContent(Entry *entry, const ByteView &content, const CommitOptions &options, const QByteArray &check)
{
    entry->check = check.isEmpty() ? xxh3Digest(content.data(), content.size()) : check;
    if (options.verifiedSha256.isEmpty() && (!options.deferSha256 || !options.expectedSha256.isEmpty())) {
        // Read once for both: the tree's leaves beside the SHA-256, so that serving it never reads it again.
        const hashtree::Digests digests = hashtree::sha256AndLeaves(content.data(), content.size());
        entry->info.sha256 = digests.sha256;
        entry->info.tree = digests.leaves;
        Sha256::releaseThreadState();  // usually a pool thread, which may outlive the program's end
    } else {
        entry->info.sha256 = options.verifiedSha256;  // empty when deferred
    }
    if (!options.expectedSha256.isEmpty() && options.expectedSha256 != entry->info.sha256)
        return Error(ErrorCode::Corrupt, QStringLiteral("blob '%1' does not match its expected SHA-256").arg(entry->info.key));
    if (hashtree::fits(options.verifiedTree, entry->info.size) && !hashtree::fits(entry->info.tree, entry->info.size))
        entry->info.tree = options.verifiedTree;
    if (entry->info.sha256.isEmpty() && hashtree::leafCount(entry->info.size) == 1 && !entry->info.tree.isEmpty())
        entry->info.sha256 = entry->info.tree;  // one leaf: its verified digest is the blob's
    completeTree(&entry->info);  // a longer tree is computed when first asked for (withDigest)
    if (options.knownIdentity.isValid())
        entry->info.dicom = options.knownIdentity;
    else if (Result<DicomIdentity> id = readDicomIdentity(content); id.isOk())
        entry->info.dicom = id.value();
    else
        qCWarning(lcStores) << "blob" << entry->info.key << "looks like DICOM but its header is unreadable:" << id.error().toString();
    return Error();
}

} // namespace cachedisk

namespace {

/// A reserved blob: a file in the staging folder (or already under its final name, Placement::Final), written
/// with pwrite() and mapped for reading what arrived.
class FileWriter : public BlobWriter
{
public:
    FileWriter(QString key, const void *owner) : BlobWriter(std::move(key)), owner(owner) {}
    ~FileWriter() override
    {
        if (progress && !committed)
            progress->flush(file.handle());  // resumable: what arrived stays for the next attempt
        if (map)
            file.unmap(map);
        if (!committed && !progress && file.fileName().size() > 0)
            file.remove();  // abandoned: never becomes visible
    }
    QList<QPair<qint64, qint64>> completedRanges() const override
    {
        return progress ? progress->ranges() : QList<QPair<qint64, qint64>>();
    }
    void rangeVerified(qint64 begin, qint64 end) override
    {
        if (progress && !committed)
            progress->verified(begin, end, file.handle());
    }
    qint64 size() const override { return blobSize; }
    Error writeAt(qint64 offset, const char *data, qint64 length) override
    {
        if (committed)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("blob '%1' is already committed").arg(key()));
        if (offset < 0 || length < 0 || offset > blobSize - length) {
            return Error(ErrorCode::OutOfRange, QStringLiteral("write [%1, %2) outside blob '%3' of %4 bytes")
                                                    .arg(offset).arg(offset + length).arg(key()).arg(blobSize));
        }
        return writeFileAt(file.handle(), offset, data, length, file.fileName());
    }

    /// For reading what arrived (a decoder following a transfer); writes go through writeAt().
    char *data() override { return committed ? nullptr : reinterpret_cast<char *>(map); }
    bool receivesInPlace() const override { return false; }

    const void *owner;
    QFile file;
    uchar *map = nullptr;
    std::unique_ptr<ProgressRecord> progress;  ///< resumable reservations only
    qint64 blobSize = 0;
    quint64 version = 0;
    bool inPlace = false;  ///< written under its final name (Placement::Final): no rename at the commit
    bool committed = false;
};

} // namespace

ResultJob<BlobWriterPtr> *FileStore::reserve(const QString &key, qint64 size)
{
    return makeJob<BlobWriterPtr>([d = d, key, size](const CancelToken &) { return reserveNow(d, key, size); });
}

Result<BlobWriterPtr> FileStore::reserveNow(const std::shared_ptr<State> &d, const QString &key, qint64 size, bool mapped, Placement placement)
{
    Result<quint64> admitted = d->admit(key, size);
    if (!admitted.isOk())
        return admitted.error();
    const quint64 version = admitted.value();
    auto w = std::make_shared<FileWriter>(key, d.get());
    w->blobSize = size;
    w->version = version;
    w->inPlace = placement == Placement::Final;
    w->file.setFileName(w->inPlace ? d->objectPath(key, version) : d->stagingPath(key, version));
    // A final name is new: versions only grow, and the open removed what no record names.
    std::unique_lock<std::mutex> creating(d->createMutex);
    const bool opened = w->file.open(QIODevice::ReadWrite | (w->inPlace ? QIODevice::NewOnly : QIODevice::Truncate), QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    creating.unlock();
    if (!opened)
        return Error(ErrorCode::Io, QStringLiteral("cannot create %1: %2").arg(w->file.fileName(), w->file.errorString()));
    if (size > 0 && mapped) {
        // Allocate the blocks now: a full disk fails here with a clear error, not later as SIGBUS in a
        // write through the mapping.
        const int rc = ::posix_fallocate(w->file.handle(), 0, off_t(size));
        if (rc != 0)
            return ioError(QStringLiteral("cannot reserve %1 bytes for blob '%2'").arg(size).arg(key), rc);
        w->map = w->file.map(0, size);
        if (!w->map)
            return Error(ErrorCode::Io, QStringLiteral("cannot map %1: %2").arg(w->file.fileName(), w->file.errorString()));
    }
    return BlobWriterPtr(w);
}

ResultJob<BlobWriterPtr> *FileStore::reserveResumable(const QString &key, qint64 size, const QString &identity)
{
    auto *plain = reserve(key, size);
    return chainJob<BlobWriterPtr>(plain, [d = d, key, size, identity](const BlobWriterPtr &fresh, const CancelToken &) -> Result<BlobWriterPtr> {
        auto *w = static_cast<FileWriter *>(fresh.get());
        const QString recordPath = d->root + QLatin1Char('/') + QLatin1String(kStaging) + QLatin1Char('/') + key + QStringLiteral(".resume");
        auto progress = std::make_unique<ProgressRecord>(recordPath, identity, size);
        if (progress->load() && size > 0) {
            // An earlier attempt: continue in its file, and drop the fresh one.
            auto old = std::make_shared<FileWriter>(key, w->owner);
            old->blobSize = size;
            old->version = progress->dataFile().section(QLatin1Char('~'), -1).section(QLatin1Char('.'), 0, 0).toULongLong();
            old->file.setFileName(d->root + QLatin1Char('/') + QLatin1String(kStaging) + QLatin1Char('/') + progress->dataFile());
            if (old->version > 0 && old->file.size() == size && old->file.open(QIODevice::ReadWrite)) {
                old->map = old->file.map(0, size);
                if (old->map) {
                    old->progress = std::move(progress);
                    return BlobWriterPtr(old);
                }
            }
            old->file.close();
        }
        // A new start: the fresh reservation, with a record naming its file from the first moment.
        progress = std::make_unique<ProgressRecord>(recordPath, identity, size, QFileInfo(w->file.fileName()).fileName());
        progress->flush(w->file.handle());
        w->progress = std::move(progress);
        return fresh;
    });
}

ResultJob<BlobInfo> *FileStore::commit(const BlobWriterPtr &writer, const CommitOptions &options)
{
    return makeJob<BlobInfo>([d = d, writer, options, notifier = notifier()](const CancelToken &) { return commitNow(d, notifier, writer, options); });
}

Result<BlobInfo> FileStore::commitNow(const std::shared_ptr<State> &d, const std::shared_ptr<StoreNotifier> &notifier, const BlobWriterPtr &writer,
                                     const CommitOptions &options, QByteArray check)
{
    auto *w = dynamic_cast<FileWriter *>(writer.get());
    if (!w || w->owner != d.get())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("the blob was not reserved in this disk cache"));
    if (w->committed)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("blob '%1' was already committed").arg(w->key()));
    if (w->progress)
        w->progress->waitForBackground();  // it may still be syncing the file we are about to close

    Entry entry;
    entry.info.key = w->key();
    entry.info.size = w->blobSize;
    entry.info.version = w->version;
    const bool hashSha256 = options.verifiedSha256.isEmpty() && (!options.deferSha256 || !options.expectedSha256.isEmpty());
    const bool needContent = hashSha256 || check.isEmpty() || !options.knownIdentity.isValid();
    if (needContent && !w->map && w->blobSize > 0) {
        w->map = w->file.map(0, w->blobSize);
        if (!w->map)
            return Error(ErrorCode::Io, QStringLiteral("cannot map %1: %2").arg(w->file.fileName(), w->file.errorString()));
    }
    const ByteView content(reinterpret_cast<const char *>(w->map), w->blobSize, nullptr);
    if (Error e = describeContent(&entry, content, options, check); e.isError())
        return e;

    if (w->map) {
        w->file.unmap(w->map);
        w->map = nullptr;
    }
    // Without a sync only where a crash of the kernel can be told afterwards (its boot ID; see filestore.h).
    const bool synced = options.durable || kernelBootId().isEmpty();
    if (!w->file.flush() || (synced && ::fdatasync(w->file.handle()) != 0))
        return ioError(QStringLiteral("cannot sync blob '%1'").arg(w->key()), errno);
    w->file.close();
    if (!synced)
        entry.unsyncedBoot = kernelBootId();

    entry.info.committed = QDateTime::currentDateTimeUtc();
    entry.lastAccessMs = entry.info.committed.toMSecsSinceEpoch();
    const QString target = d->objectPath(w->key(), w->version);
    QStringList evicted;
    quint64 seq = 0;
    {
        QMutexLocker journalLock(&d->journalMutex);
        if (d->closed)
            return d->closedError();
        // A resumable reservation's staging file stays, with its record, until the entry is journalled: it is
        // linked into objects/ rather than moved. A kill in between then leaves what had been received to be
        // continued, where a rename left an orphan in objects/ (deleted at the next open) and a record naming a
        // file that was gone — the progress lost (tst_faults caught it once in several thousand kills).
        const bool resumable = w->progress != nullptr;
        if (!w->inPlace) {
            const QByteArray from = QFile::encodeName(w->file.fileName()), to = QFile::encodeName(target);
            if ((resumable ? ::link(from.constData(), to.constData()) : ::rename(from.constData(), to.constData())) != 0)
                return ioError(QStringLiteral("cannot move blob '%1' into the cache").arg(w->key()), errno);
        }
        w->committed = !resumable;  // a moved or final file is the entry's now; the writer must not delete it
        // Made durable below, together with the commits that run meanwhile (group commit).
        QList<Reclaim> space;
        if (Error e = d->recordLocked(entry, &space, &evicted, &seq); e.isError()) {
            QFile::remove(target);  // without its record the file would be an orphan: not committed
            return e.withContext(QStringLiteral("blob '%1' not committed").arg(w->key()));
        }
        w->committed = true;
        if (resumable) {
            w->progress->remove();                 // first the record, then the file it names
            QFile::remove(w->file.fileName());     // the entry has its own link
        }
        for (const Reclaim &r : space)
            d->reclaim(r);  // readers that mapped an old file keep their mapping; packed blobs were copied
    }
    // Only a durable commit is acknowledged. The bytes were synced above; this covers the rename and the record.
    if (Error e = synced ? d->syncUpTo(seq) : Error(); e.isError())
        return e.withContext(QStringLiteral("blob '%1' may not survive a crash").arg(w->key()));
    notifier->announceCommitted(entry.info);
    notifier->announceRemoved(evicted);
    return entry.info;
}

ResultJob<BlobInfo> *FileStore::put(const QString &key, const ByteView &bytes, const CommitOptions &options)
{
    return makeJob<BlobInfo>([d = d, notifier = notifier(), key, bytes, options](const CancelToken &) -> Result<BlobInfo> {
        if (bytes.size() <= kPackedBlobMax)
            return putPacked(d, notifier, key, bytes, options);
        Result<BlobWriterPtr> w = reserveNow(d, key, bytes.size(), false, Placement::Final);
        if (!w.isOk())
            return w.error();
        if (Error e = w.value()->writeAt(0, bytes.data(), bytes.size()); e.isError())
            return e;
        CommitOptions fromMemory = options;
        if (fromMemory.verifiedSha256.isEmpty() && (!options.deferSha256 || !options.expectedSha256.isEmpty())) {
            const hashtree::Digests digests = hashtree::sha256AndLeaves(bytes.data(), bytes.size());
            fromMemory.verifiedSha256 = digests.sha256;
            fromMemory.verifiedTree = digests.leaves;
            Sha256::releaseThreadState();
        }
        if (!fromMemory.knownIdentity.isValid()) {
            if (Result<DicomIdentity> id = readDicomIdentity(bytes); id.isOk())
                fromMemory.knownIdentity = id.value();
        }
        return commitNow(d, notifier, w.value(), fromMemory, xxh3Digest(bytes.data(), bytes.size()));
    });
}

ResultJob<BlobInfo> *FileStore::importFile(const QString &key, const QString &path, const CommitOptions &options)
{
    return makeJob<BlobInfo>([d = d, notifier = notifier(), key, path, options](const CancelToken &) -> Result<BlobInfo> {
        const int src = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_CLOEXEC);
        if (src < 0)
            return ioError(QStringLiteral("cannot read %1").arg(path), errno);
        struct stat st {};
        if (::fstat(src, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(src);
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1 is not a regular file").arg(path));
        }
        Result<BlobWriterPtr> w = reserveNow(d, key, qint64(st.st_size), true, Placement::Final);
        if (!w.isOk()) {
            ::close(src);
            return w.error();
        }
        auto *writer = static_cast<FileWriter *>(w.value().get());
        const int dst = writer->file.handle();
        loff_t in = 0, out = 0;
        qint64 left = qint64(st.st_size);
        while (left > 0) {
            const ssize_t n = ::copy_file_range(src, &in, dst, &out, size_t(left), 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                const int err = n < 0 ? errno : EIO;
                ::close(src);
                return ioError(QStringLiteral("cannot copy %1 into the cache").arg(path), err);
            }
            left -= n;
        }
        ::close(src);
        Result<BlobInfo> committed = commitNow(d, notifier, w.value(), options);
        if (committed.isOk())
            QFile::remove(path);
        return committed;
    });
}

} // namespace spectrum
