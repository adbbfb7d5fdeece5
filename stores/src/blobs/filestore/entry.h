// SPDX-License-Identifier: Apache-2.0
#pragma once
// One blob of the disk cache as its index knows it (state.h: who uses it; indexdb.h: how it is kept).

#include "spectrum/stores/blobs/blobstore.h"

namespace spectrum::cachedisk {

struct Entry
{
    BlobInfo info;
    QByteArray check;  ///< XXH3-128 of the bytes; empty for entries journalled before checksums were kept
    qint64 lastAccessMs = 0;
    /// Committed without a sync (CommitOptions::durable false): the boot ID of the kernel that holds its
    /// bytes. Empty once known to be on the disk.
    QString unsyncedBoot;
    /// When it was recorded, in the index's order of changes: a sync of the whole file system under a boot covers
    /// every entry recorded before it (IndexDb::markSynced()).
    qint64 seq = 0;
    /// Its bytes must be checked against the checksum before they are served: written without a sync under a
    /// kernel that has since gone (another boot).
    bool unconfirmed = false;
    /// The pack file holding its bytes (packs/<pack>, from `offset` on); 0: a file of its own,
    /// objects/<key>~<version>.
    quint64 pack = 0;
    qint64 offset = 0;
};

} // namespace spectrum::cachedisk
