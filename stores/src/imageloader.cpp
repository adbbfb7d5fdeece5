#include "spectrum/stores/imageloader.h"

namespace spectrum {

ResultJob<DecodedImage> *loadImage(BlobStore *store, const QString &key)
{
    return chainJob<DecodedImage>(store->read(key), [key](const ByteView &bytes, const CancelToken &) {
        Result<DecodedImage> image = decodeDicom(bytes);
        if (!image.isOk())
            return Result<DecodedImage>(image.error().withContext(QStringLiteral("instance %1").arg(key)));
        return image;
    });
}

} // namespace spectrum
