// SPDX-License-Identifier: Apache-2.0
#include "blobclient/pullchecks.h"

#include "spectrum/core/job.h"
#include "spectrum/core/threadpools.h"
#include "spectrum/transfer/hashtree.h"

#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace spectrum::blobwire {

PullChecks::PullChecks(QObject *job) : m_job(DeliveryAddress::of(job)) {}

PullChecks::~PullChecks()
{
    waitForHashing();
}

void PullChecks::checkTree(const QByteArray &tree, qint64 size, const char *dest)
{
    m_tree = tree;
    m_size = size;
    m_dest = dest;
    m_state.assign(size_t(hashtree::leafCount(size)), LeafState::Waiting);
}

void PullChecks::checkSha256(const char *dest)
{
    m_dest = dest;
}

void PullChecks::leavesArrived(qint64 b, qint64 e, const RangeSet &done)
{
    const qint64 last = std::min<qint64>(hashtree::leafCount(m_size), (e + hashtree::kLeafSize - 1) / hashtree::kLeafSize);
    for (qint64 leaf = b / hashtree::kLeafSize; leaf < last; ++leaf) {
        const qint64 lb = hashtree::leafBegin(leaf), le = hashtree::leafEnd(leaf, m_size);
        if (m_state[size_t(leaf)] != LeafState::Waiting || !done.covers(lb, le))
            continue;
        m_state[size_t(leaf)] = LeafState::Hashing;
        m_queue.push_back(leaf);
    }
    hashLeaves();
}

void PullChecks::leafAgain(qint64 leaf)
{
    m_state[size_t(leaf)] = LeafState::Waiting;
}

void PullChecks::leafMatched(qint64 leaf)
{
    m_state[size_t(leaf)] = LeafState::Verified;
    m_verified.add(hashtree::leafBegin(leaf), hashtree::leafEnd(leaf, m_size));
}

/// Starts hashing queued leaves, at most one per core but one at once: the receiving thread (and on one machine,
/// the server) needs a core too, and more hashing threads than cores only take turns (measured: slower than one
/// whole-blob hash on two cores).
void PullChecks::hashLeaves()
{
    const int limit = std::max(1, QThread::idealThreadCount() - 1);
    while (m_tasks < limit && !m_queue.empty()) {
        // Up to 8 leaves a task: one pool task and one call back per leaf cost more than the hash of some.
        const size_t take = std::min<size_t>(m_queue.size(), 8);
        std::vector<qint64> leaves(m_queue.begin(), m_queue.begin() + qptrdiff(take));
        m_queue.erase(m_queue.begin(), m_queue.begin() + qptrdiff(take));
        ++m_tasks;
        m_futures.push_back(QtConcurrent::run(computePool(), [this, leaves, toJob = m_job, tree = m_tree, dest = m_dest, size = m_size,
                                                              generation = m_generation] {
            std::vector<char> ok(leaves.size());
            for (size_t i = 0; i < leaves.size(); ++i) {
                const qint64 lb = hashtree::leafBegin(leaves[i]), le = hashtree::leafEnd(leaves[i], size);
                ok[i] = hashtree::leafMatches(tree, leaves[i], dest + lb, le - lb);
            }
            Sha256::releaseThreadState();
            // Delivered only while the job lives (and with it these checks).
            toJob->post([this, leaves, ok, generation] {
                if (generation != m_generation)
                    return;
                --m_tasks;
                m_futures.erase(std::remove_if(m_futures.begin(), m_futures.end(), [](const QFuture<void> &f) { return f.isFinished(); }),
                                m_futures.end());
                for (size_t i = 0; i < leaves.size(); ++i) {
                    if (!onLeaf(leaves[i], ok[i] != 0))
                        return;
                }
                hashLeaves();
            });
        }));
    }
}

void PullChecks::hashAhead(qint64 prefixEnd)
{
    if (m_hashing)
        return;
    // Steps of at most 16 MiB keep each pool task short (and a cancel's wait for it).
    const qint64 upTo = std::min(prefixEnd, m_hashedUpTo + (qint64(16) << 20));
    if (upTo <= m_hashedUpTo)
        return;
    m_hashing = true;
    Sha256 *sha = &m_sha;
    const char *from = m_dest + m_hashedUpTo;
    const qint64 n = upTo - m_hashedUpTo;
    m_hashFuture = QtConcurrent::run(computePool(), [this, sha, from, n, upTo, toJob = m_job, generation = m_generation] {
        sha->add(from, n);
        Sha256::releaseThreadState();
        toJob->post([this, upTo, generation] {
            if (generation != m_generation)
                return;  // a step of the hash before the blob changed on the server and it started over
            m_hashing = false;
            m_hashedUpTo = upTo;
            onHashed();
        });
    });
}

void PullChecks::restart(const QByteArray &tree)
{
    waitForHashing();
    ++m_generation;
    m_tree = tree;
    m_sha.reset();
    m_hashedUpTo = 0;
    m_hashing = false;
    m_verified.clear();
    m_queue.clear();
    m_tasks = 0;  // waitForHashing() saw every task of the old generation end
    std::fill(m_state.begin(), m_state.end(), LeafState::Waiting);
}

void PullChecks::waitForHashing()
{
    m_hashFuture.waitForFinished();
    for (QFuture<void> &f : m_futures)
        f.waitForFinished();
    m_futures.clear();
}

} // namespace spectrum::blobwire
