// SPDX-License-Identifier: Apache-2.0
#include "spectrum/transfer/xxh3.h"

#include <xxhash.h>

namespace spectrum {

QByteArray xxh3Digest(const char *data, qint64 length)
{
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, XXH3_128bits(data, size_t(length)));
    return QByteArray(reinterpret_cast<const char *>(canonical.digest), int(sizeof canonical.digest));
}

} // namespace spectrum
