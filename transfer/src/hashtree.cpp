// SPDX-License-Identifier: Apache-2.0
#include "spectrum/transfer/hashtree.h"

#include "spectrum/core/threadpools.h"
#include "spectrum/transfer/sha256.h"

#include <QFuture>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <vector>

namespace spectrum::hashtree {

namespace {

void hashLeaves(const char *data, qint64 size, qint64 first, qint64 last, char *out)
{
    Sha256 sha;
    for (qint64 leaf = first; leaf < last; ++leaf) {
        const qint64 b = leafBegin(leaf);
        sha.add(data + b, leafEnd(leaf, size) - b);
        const QByteArray d = sha.result();
        std::copy(d.constData(), d.constData() + kDigestSize, out + leaf * kDigestSize);
    }
}

} // namespace

QByteArray leaves(const char *data, qint64 size)
{
    const qint64 count = leafCount(size);
    QByteArray out(qsizetype(count * kDigestSize), Qt::Uninitialized);
    if (count <= 1) {
        hashLeaves(data, size, 0, count, out.data());
        return out;
    }
    // One share per core: the pool's threads take all but the first, the calling thread that one. A share still
    // queued when the caller waits for it is run by the caller (QFuture::waitForFinished), so this may be called
    // from the pool itself.
    const int shares = int(std::min<qint64>(count, std::max(1, computePool()->maxThreadCount())));
    std::vector<QFuture<void>> others;
    char *digests = out.data();
    for (int i = 1; i < shares; ++i) {
        const qint64 first = count * i / shares, last = count * (i + 1) / shares;
        others.push_back(QtConcurrent::run(computePool(), [=] {
            hashLeaves(data, size, first, last, digests);
            Sha256::releaseThreadState();
        }));
    }
    hashLeaves(data, size, 0, count / shares, digests);
    for (QFuture<void> &f : others)
        f.waitForFinished();
    return out;
}

Digests sha256AndLeaves(const char *data, qint64 size)
{
    Digests out;
    if (leafCount(size) <= 1) {
        out.sha256 = Sha256::hash(data, size);
        out.leaves = size == 0 ? QByteArray() : out.sha256;
        return out;
    }
    QFuture<QByteArray> whole = QtConcurrent::run(blockingPool(), [data, size] {
        QByteArray digest = Sha256::hash(data, size);
        Sha256::releaseThreadState();
        return digest;
    });
    out.leaves = leaves(data, size);
    out.sha256 = whole.result();
    return out;
}

QByteArray root(const QByteArray &leaves)
{
    return Sha256::hash(leaves.constData(), leaves.size());
}

bool leafMatches(const QByteArray &leaves, qint64 leaf, const char *data, qint64 length)
{
    const QByteArray d = Sha256::hash(data, length);
    return leaf >= 0 && (leaf + 1) * kDigestSize <= leaves.size()
        && std::equal(d.constBegin(), d.constEnd(), leaves.constBegin() + leaf * kDigestSize);
}

} // namespace spectrum::hashtree
