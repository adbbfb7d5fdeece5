#include "spectrum/stores/diskfill.h"

namespace spectrum {

QString resumeIdentity(const RemoteBlobInfo &blob)
{
    return blob.version + QLatin1Char(' ') + QString::fromLatin1(blob.sha256.toHex());
}

Result<PullResult> fillDiskFromRemote(FileStore &disk, RemoteBlobStore &remote, const QString &key, CommitOptions options,
                                      const std::function<void(Job *)> &watch)
{
    BlobWriterPtr writer;
    QByteArray expected;
    QByteArray tree;
    auto *job = remote.pull(key, [&](const RemoteBlobInfo &blob, qint64, qint64) -> Result<ByteSink *> {
        // Resumable: after an interruption (even a restart) only what is missing comes again.
        Result<BlobWriterPtr> w = runSync(disk.reserveResumable(key, blob.size, resumeIdentity(blob)));
        if (!w.isOk())
            return w.error();
        writer = w.value();
        expected = blob.sha256;
        tree = blob.tree;
        return writer.get();
    });
    if (watch)
        watch(job);
    Result<PullResult> pulled = runSync(job);
    if (!pulled.isOk())
        return pulled.error();
    if (pulled.value().verifiedByTree) {
        // Every leaf checked on the way in: the tree is kept, the whole blob's SHA-256 computed if ever asked for
        // (checking it now would be the serial hash the tree spares).
        options.verifiedTree = tree;
        options.deferSha256 = true;
    } else {
        options.expectedSha256 = expected;
        if (pulled.value().verified)
            options.verifiedSha256 = expected;  // checked on the way in: not hashed a second time
    }
    if (Error e = runSync(disk.commit(writer, options)).error(); e.isError())
        return e;
    return pulled;
}

} // namespace spectrum
