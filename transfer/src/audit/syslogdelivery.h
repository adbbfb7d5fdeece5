// SPDX-License-Identifier: Apache-2.0
#pragma once
// One delivery of spooled frames to the audit repository, blocking (run on the network pool). Over TLS the
// frames are written, our side of TLS and TCP is closed, and the repository's close is awaited: a clean close
// (its close_notify or its end of stream) means it read every byte; a reset, a timeout or any failure means it
// may not have, and nothing of this delivery counts. Over UDP each message is one datagram, counted once sent.

#include "spectrum/core/error.h"
#include "spectrum/transfer/audit/audittrail.h"

#include <QByteArray>
#include <QList>

namespace spectrum {

struct SyslogDelivery
{
    int delivered = 0;  ///< frames the repository has (all or none over TLS)
    Error error;
    bool securityRefusal = false;  ///< the repository's certificate was refused, or it refused ours
};

SyslogDelivery deliverSyslog(const AuditRepository &repository, const QList<QByteArray> &frames, int timeoutMs);

} // namespace spectrum
