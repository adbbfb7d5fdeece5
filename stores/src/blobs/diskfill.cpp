// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/blobs/diskfill.h"

namespace spectrum {

QString resumeIdentity(const RemoteBlobInfo &blob)
{
    return blob.version + QLatin1Char(' ') + QString::fromLatin1(blob.sha256.toHex());
}

Result<PullResult> fillDiskFromRemote(FileStore &disk, RemoteBlobStore &remote, const QString &key, CommitOptions options,
                                      const std::function<void(Job *)> &watch)
{
    BlobWriterPtr writer;
    auto *job = remote.pull(key, [&](const RemoteBlobInfo &blob, qint64, qint64) -> Result<ByteSink *> {
        // Resumable: after an interruption (even a restart) only what is missing comes again.
        Result<BlobWriterPtr> w = runSync(disk.reserveResumable(key, blob.size, resumeIdentity(blob)));
        if (!w.isOk())
            return w.error();
        writer = w.value();
        return writer.get();
    });
    if (watch)
        watch(job);
    Result<PullResult> pulled = runSync(job);
    if (!pulled.isOk())
        return pulled.error();
    if (pulled.value().verifiedByTree) {
        // Every leaf checked on the way in: the tree is kept, the whole blob's SHA-256 computed if ever asked for
        // (checking it now would be the serial hash the tree spares). The tree the bytes were checked against is
        // the pull's own: the blob may have changed on the server since the destination was asked for.
        options.verifiedTree = pulled.value().blob.tree;
        options.deferSha256 = true;
    } else {
        options.expectedSha256 = pulled.value().blob.sha256;
        if (pulled.value().verified)
            options.verifiedSha256 = pulled.value().blob.sha256;  // checked on the way in: not hashed a second time
    }
    if (Error e = runSync(disk.commit(writer, options)).error(); e.isError())
        return e;
    return pulled;
}

} // namespace spectrum
