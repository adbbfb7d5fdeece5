// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/exchange/listenaddress.h"
#include "spectrum/stores/archives/archivekind.h"

#include "spectrum/stores/archives/storeconfig.h"

#include <QHostAddress>
#include <QHostInfo>
#include <QSet>

#include <algorithm>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace spectrum {

namespace {

/// The local IPv4 address the kernel routes to `to` from (a UDP socket connected, nothing sent); empty if none.
QString localAddressTowards(const QHostAddress &to)
{
    bool ok = false;
    const quint32 ip = to.toIPv4Address(&ok);
    if (!ok)
        return QString();
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return QString();
    sockaddr_in peer{};
    peer.sin_family = AF_INET;
    peer.sin_port = htons(104);
    peer.sin_addr.s_addr = htonl(ip);
    sockaddr_in local{};
    socklen_t length = sizeof local;
    QString out;
    if (::connect(fd, reinterpret_cast<sockaddr *>(&peer), sizeof peer) == 0
        && ::getsockname(fd, reinterpret_cast<sockaddr *>(&local), &length) == 0)
        out = QHostAddress(ntohl(local.sin_addr.s_addr)).toString();
    ::close(fd);
    return out;
}

} // namespace

ListenAddress chooseListenAddress(const StoreConfigFile &config)
{
    QList<QPair<QString, QString>> hosts;  // (who, host)
    for (const StoreConfig &s : config.stores()) {
        if (const auto node = archiveKind(s.kind()).dicomNode(s))
            hosts.append({s.name, node->second});
    }
    for (const auto &[ae, host] : config.workstation.callers)
        hosts.append({ae, host});
    return chooseListenAddress(config.workstation, hosts);
}

ListenAddress chooseListenAddress(const WorkstationConfig &ws, const QList<QPair<QString, QString>> &hosts)
{
    const QString configured = ws.listenAddress;
    if (configured == QLatin1String("any"))
        return {QString(), QStringLiteral("as configured")};
    if (!configured.isEmpty())
        return {configured, QStringLiteral("as configured")};
    if (ws.acceptAnyCaller || std::any_of(hosts.begin(), hosts.end(), [](const auto &h) { return h.second == QLatin1String("*"); }))
        return {QString(), QStringLiteral("callers are allowed from any host")};
    if (hosts.isEmpty())
        return {QStringLiteral("127.0.0.1"), QStringLiteral("no PACS is configured")};
    QSet<QString> locals;
    QStringList unresolved;
    QString first;
    for (const auto &[who, host] : hosts) {
        QList<QHostAddress> addresses;
        if (QHostAddress(host).isNull())
            addresses = QHostInfo::fromName(host).addresses();
        else
            addresses = {QHostAddress(host)};
        bool found = false;
        for (const QHostAddress &a : addresses) {
            const QString local = a.isLoopback() ? QStringLiteral("127.0.0.1") : localAddressTowards(a);
            if (!local.isEmpty()) {
                locals.insert(local);
                found = true;
                if (first.isEmpty())
                    first = who;
                break;  // the first IPv4 address the name gives, as a connection to it would use
            }
        }
        if (!found)
            unresolved << QStringLiteral("%1 (%2)").arg(host, who);  // cannot call from anywhere now: no reason to listen wider
    }
    if (locals.isEmpty())
        return {QStringLiteral("127.0.0.1"), QStringLiteral("no IPv4 address found for %1; set the workstation's listenAddress").arg(unresolved.join(QStringLiteral(", ")))};
    if (locals.size() > 1)
        return {QString(), QStringLiteral("the PACS are reached from %1 addresses; set the workstation's listenAddress to choose one").arg(locals.size())};
    return {*locals.begin(), QStringLiteral("where %1 is reached from%2").arg(first, unresolved.isEmpty() ? QString()
                                                                                    : QStringLiteral("; no address found for %1").arg(unresolved.join(QStringLiteral(", "))))};
}

} // namespace spectrum
