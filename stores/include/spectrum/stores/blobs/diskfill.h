// SPDX-License-Identifier: Apache-2.0
#pragma once
// A blob from a remote blob store (blobd) into the workstation's disk cache, resumably: what `spectrum-cli pull`
// does for one blob.

#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/blobs/remoteblobstore.h"

#include <functional>

namespace spectrum {

/// The identity a resumable disk reservation of a remote blob is kept under (its version and digest): a
/// reservation made for another version starts over.
QString resumeIdentity(const RemoteBlobInfo &blob);

/// Fetches `key` from `remote` into `disk`, straight from the wire into a resumable reservation — interrupted,
/// even by a kill, the next call continues where the verified ranges on record end — and commits it only against
/// the remote's SHA-256 (`options` adds the rest: durable or not…). `watch` sees the pull job as it starts
/// (progress). Blocking: for a worker thread or a command-line tool.
Result<PullResult> fillDiskFromRemote(FileStore &disk, RemoteBlobStore &remote, const QString &key, CommitOptions options = CommitOptions(),
                                      const std::function<void(Job *)> &watch = {});

} // namespace spectrum
