// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where this workstation's Storage SCP listens: the one address its PACS reach it on, not every address it has.

#include <QList>
#include <QPair>
#include <QString>

namespace spectrum {

class StoreConfigFile;
struct WorkstationConfig;

struct ListenAddress
{
    QString address;  ///< an IPv4 address of this machine; empty: every address
    QString why;      ///< for the log and the status line: "as configured", "where pacs-1 is reached from"…
    /// "127.0.0.1" or "every address" — for messages.
    QString shown() const { return address.isEmpty() ? QStringLiteral("every address") : address; }
};

/// The configured workstation listenAddress ("any": every address); when there is none, the local address the
/// machine reaches its DIMSE stores and named callers from — loopback when they are all on this machine, and only
/// loopback when none is configured (no one may call then). Hosts reached from several addresses, or a caller
/// from any host ("*"): every address, said in `why`. Host names are looked up: blocking, call off the GUI thread.
ListenAddress chooseListenAddress(const StoreConfigFile &config);
/// The same for `ws` and the (who, host) pairs that will call: a C-MOVE's PACS.
ListenAddress chooseListenAddress(const WorkstationConfig &ws, const QList<QPair<QString, QString>> &hosts);

} // namespace spectrum
