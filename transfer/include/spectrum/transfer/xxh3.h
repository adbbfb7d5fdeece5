// SPDX-License-Identifier: Apache-2.0
#pragma once
// XXH3-128: a checksum at tens of GB/s. It tells damaged bytes (a bad disk, a crash, a flipped bit) from good
// ones, not forged ones — the content's identity across stores is its SHA-256 (sha256.h).

#include <QByteArray>

namespace spectrum {

/// The 16-byte XXH3-128 of [data, data + length), big-endian (XXH's canonical form).
QByteArray xxh3Digest(const char *data, qint64 length);

} // namespace spectrum
