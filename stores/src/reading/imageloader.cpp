// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/reading/imageloader.h"

namespace spectrum {

namespace {

Result<DecodedImage> decodeInstance(const QString &key, const ByteView &bytes)
{
    Result<DecodedImage> image = decodeDicom(bytes);
    if (!image.isOk())
        return Result<DecodedImage>(image.error().withContext(QStringLiteral("instance %1").arg(key)));
    return image;
}

} // namespace

ResultJob<DecodedImage> *loadImage(BlobStore *store, const QString &key)
{
    if (store->readsOnAnyThread()) {
        // Read and decoded in one task on the pool: no hop through the caller's thread in between, where the
        // GUI, busy laying out the viewer that asked, would hold the decode back by milliseconds.
        return makeJob<DecodedImage>([store, key](const CancelToken &token) -> Result<DecodedImage> {
            Result<ByteView> bytes = runSync(store->read(key));
            if (!bytes.isOk())
                return bytes.error();  // as it is: a damaged blob (Corrupt) is fetched again by the caller
            if (token.isCancelled())
                return Error(ErrorCode::Cancelled, QStringLiteral("cancelled by the caller"));
            return decodeInstance(key, bytes.value());
        });
    }
    return chainJob<DecodedImage>(store->read(key), [key](const ByteView &bytes, const CancelToken &) { return decodeInstance(key, bytes); });
}

} // namespace spectrum
