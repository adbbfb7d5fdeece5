// SPDX-License-Identifier: Apache-2.0
// HttpConnections (httpstream.h): connections left open by answers that ended cleanly, per peer, for the next
// request there.

#include "httpstream.h"

#include <QDeadlineTimer>

#include <algorithm>

#include <poll.h>
#include <unistd.h>

namespace spectrum {

HttpConnections &HttpConnections::shared()
{
    // Never destroyed: reader threads of the network pool may still give connections back while the program's
    // statics go (the kernel closes what is left at exit).
    static HttpConnections *connections = new HttpConnections;
    return *connections;
}

HttpConnections::~HttpConnections()
{
    clear();
}

int HttpConnections::take(const QByteArray &peer)
{
    const qint64 now = QDeadlineTimer::current().deadline();
    QMutexLocker lock(&m_mutex);
    for (auto &[name, idle] : m_peers) {
        if (name != peer)
            continue;
        while (!idle.empty()) {
            const Idle last = idle.back();  // the most recently used: the least likely to have been closed
            idle.pop_back();
            // Closed by the peer (readable: its FIN, or bytes no one asked for), or idle past what servers keep.
            pollfd p{last.fd, POLLIN, 0};
            if (now - last.since > kIdleMs || ::poll(&p, 1, 0) != 0) {
                ::close(last.fd);
                continue;
            }
            return last.fd;
        }
        return -1;
    }
    return -1;
}

void HttpConnections::give(const QByteArray &peer, int fd)
{
    const qint64 now = QDeadlineTimer::current().deadline();
    QMutexLocker lock(&m_mutex);
    auto it = std::find_if(m_peers.begin(), m_peers.end(), [&](const auto &p) { return p.first == peer; });
    if (it == m_peers.end()) {
        m_peers.emplace_back(peer, std::vector<Idle>());
        it = m_peers.end() - 1;
    }
    std::vector<Idle> &idle = it->second;
    // The oldest go first: past their time, or beyond the most kept.
    const auto stale = std::remove_if(idle.begin(), idle.end(), [&](const Idle &i) { return now - i.since > kIdleMs; });
    for (auto it = stale; it != idle.end(); ++it)
        ::close(it->fd);  // gone whatever close() says: the descriptor is released either way
    idle.erase(stale, idle.end());
    if (int(idle.size()) >= kMaxIdlePerPeer) {
        ::close(idle.front().fd);
        idle.erase(idle.begin());
    }
    idle.push_back({fd, now});
}

int HttpConnections::idle(const QByteArray &peer) const
{
    QMutexLocker lock(&m_mutex);
    for (const auto &[name, idle] : m_peers)
        if (name == peer)
            return int(idle.size());
    return 0;
}

void HttpConnections::clear()
{
    QMutexLocker lock(&m_mutex);
    for (auto &[name, idle] : m_peers)
        for (const Idle &i : idle)
            ::close(i.fd);
    m_peers.clear();
}

} // namespace spectrum
