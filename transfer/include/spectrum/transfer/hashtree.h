// SPDX-License-Identifier: Apache-2.0
#pragma once
// A blob's hash tree: the SHA-256 of every 1 MiB leaf, and a root over them — the construction of S3's composite
// checksums (the root is the SHA-256 of the leaves' digests one after another). A receiver that holds the leaves
// checks each leaf as it lands, on any core, and finds a byte that differs in the first leaf it is in; a whole-blob
// SHA-256 can only be computed on one core, in order, and says so at the very end.
//
// The leaves are the digests, 32 bytes each, one after another: a blob of n bytes has ceil(n / 1 MiB) of them (none
// for an empty blob). A blob of at most one leaf has the whole blob's SHA-256 as its only leaf.

#include <QByteArray>

#include <algorithm>

namespace spectrum::hashtree {

constexpr qint64 kLeafSize = qint64(1) << 20;
constexpr int kDigestSize = 32;

inline qint64 leafCount(qint64 size) { return (size + kLeafSize - 1) / kLeafSize; }
inline qint64 leafBegin(qint64 leaf) { return leaf * kLeafSize; }
inline qint64 leafEnd(qint64 leaf, qint64 size) { return std::min(size, (leaf + 1) * kLeafSize); }

/// Whether `leaves` can be the tree of a blob of `size` bytes (its length, not its digests).
inline bool fits(const QByteArray &leaves, qint64 size) { return leaves.size() == leafCount(size) * kDigestSize; }

/// Leaf `leaf`'s digest out of `leaves`.
inline QByteArray leafDigest(const QByteArray &leaves, qint64 leaf)
{
    return leaves.mid(qsizetype(leaf * kDigestSize), kDigestSize);
}

/// Every leaf's digest, computed on the compute pool as well as on the calling thread (it waits).
QByteArray leaves(const char *data, qint64 size);

/// The whole blob's SHA-256 and its leaves at once: the SHA-256 (one core, in order) on a pool thread while the
/// leaves take the calling thread and the compute pool. A blob of one leaf is hashed once.
struct Digests
{
    QByteArray sha256;
    QByteArray leaves;
};
Digests sha256AndLeaves(const char *data, qint64 size);

/// The root: the SHA-256 of the leaves.
QByteArray root(const QByteArray &leaves);

/// Whether leaf `leaf` of the blob, whose bytes are [data, data + its length), has the digest the leaves say.
bool leafMatches(const QByteArray &leaves, qint64 leaf, const char *data, qint64 length);

} // namespace spectrum::hashtree
