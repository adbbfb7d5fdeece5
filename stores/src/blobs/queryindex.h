// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one way the memory and disk stores answer a BlobQuery from their index (an LruMap of entries that each
// hold an `info`): the matches are picked under the index's lock, then arranged (BlobQuery::arrange: key order,
// the limit) after it, so that the lock is held for the scan alone.

#include "blobs/lrumap.h"

#include "spectrum/stores/blobs/blobstore.h"

namespace spectrum {

/// The blobs of `index` that `query` matches, in use order. Caller holds the index's lock.
template <typename Entry>
QList<BlobInfo> matchingBlobs(LruMap<Entry> &index, const BlobQuery &query)
{
    QList<BlobInfo> out;
    for (const QString &key : index.order()) {
        const Entry *e = index.find(key);
        if (query.matches(e->info))
            out << e->info;
    }
    return out;
}

} // namespace spectrum
