// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a pull's bytes are checked as they land, off the job's thread (decision 0022): each 1 MiB leaf of the
// server's hash tree is hashed on the pool once all its bytes are here; from a server without a tree, the whole
// blob's SHA-256 runs over the received prefix, a step at a time. What a check finds comes back on the job's thread.

#include "spectrum/transfer/rangeset.h"
#include "spectrum/transfer/sha256.h"

#include <QByteArray>
#include <QFuture>

#include <deque>
#include <functional>
#include <memory>
#include <vector>

class QObject;

namespace spectrum {
class DeliveryAddress;
}

namespace spectrum::blobwire {

class PullChecks
{
public:
    /// What the checks find is delivered on `job`'s thread while it lives.
    explicit PullChecks(QObject *job);
    /// Waits for the pool's tasks: they read the destination.
    ~PullChecks();
    PullChecks(const PullChecks &) = delete;
    PullChecks &operator=(const PullChecks &) = delete;

    /// A leaf was hashed: whether its bytes matched the tree. False: the job has finished, stop.
    std::function<bool(qint64 leaf, bool matched)> onLeaf;
    /// A step of the whole blob's SHA-256 ended.
    std::function<void()> onHashed;

    /// Checks the leaves of a blob of `size` bytes, received into `dest`, against `tree` (hashtree.h).
    void checkTree(const QByteArray &tree, qint64 size, const char *dest);
    /// Checks the SHA-256 of the whole blob received into `dest`.
    void checkSha256(const char *dest);

    /// The leaves overlapping [b, e) whose bytes `done` now holds whole go to the pool to be hashed.
    void leavesArrived(qint64 b, qint64 e, const RangeSet &done);
    /// A leaf whose bytes did not match: hashed again once they are back.
    void leafAgain(qint64 leaf);
    /// A leaf whose bytes matched.
    void leafMatched(qint64 leaf);
    /// The bytes of the leaves that matched.
    const RangeSet &verified() const { return m_verified; }

    /// The SHA-256 goes on over the bytes received up to `prefixEnd`.
    void hashAhead(qint64 prefixEnd);
    /// Whether the SHA-256 has taken every byte before `end`, and no step is running.
    bool hashedUpTo(qint64 end) const { return !m_hashing && m_hashedUpTo == end; }
    /// The whole blob's SHA-256, once hashedUpTo() its end.
    QByteArray sha256() { return m_sha.result(); }

    /// The blob changed on the server: every check starts over with its new `tree`, and what the old ones still
    /// report is dropped.
    void restart(const QByteArray &tree);
    void waitForHashing();

private:
    void hashLeaves();

    enum class LeafState : quint8 { Waiting, Hashing, Verified };
    std::shared_ptr<DeliveryAddress> m_job;
    QByteArray m_tree;
    qint64 m_size = 0;
    const char *m_dest = nullptr;
    quint64 m_generation = 0;  ///< bumps when the checks start over: late results of the old ones are ignored
    std::vector<LeafState> m_state;
    std::deque<qint64> m_queue;  ///< leaves whose bytes are all here, waiting for a hashing thread
    int m_tasks = 0;             ///< tasks hashing leaves
    std::vector<QFuture<void>> m_futures;
    RangeSet m_verified;
    Sha256 m_sha;
    qint64 m_hashedUpTo = 0;
    bool m_hashing = false;
    QFuture<void> m_hashFuture;
};

} // namespace spectrum::blobwire
