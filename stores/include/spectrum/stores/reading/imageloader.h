// SPDX-License-Identifier: Apache-2.0
#pragma once
// Loading an instance from any store into decoded pixels.

#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/stores/blobs/blobstore.h"

namespace spectrum {

/// Reads blob `key` from `store` and decodes it on the pool (in one pool task where the store reads on any thread).
ResultJob<DecodedImage> *loadImage(BlobStore *store, const QString &key);

} // namespace spectrum
