// SPDX-License-Identifier: Apache-2.0
#pragma once
// Syslog as audit repositories take it: an RFC 5424 message (PRI 85: security/authorization, notice; MSGID
// IHE+RFC-3881; the audit XML as a UTF-8 MSG with its byte order mark), framed for a stream with RFC 5425's octet
// counting ("LENGTH SP MESSAGE") — the frame the TLS transport sends and the spool keeps; UDP (RFC 5426) sends the
// message alone, one per datagram.

#include "spectrum/core/result.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>

namespace spectrum {

struct SyslogHeader
{
    QDateTime when;       ///< the event's time (UTC, milliseconds)
    QString hostName;     ///< this machine
    QString appName;      ///< the program
    qint64 processId = 0;
};

/// The RFC 5424 message: header, no structured data, the BOM and `utf8Message`. Header fields are cut to
/// RFC 5424's lengths and printable ASCII ('-' when nothing is left).
QByteArray syslogMessage(const SyslogHeader &header, const QByteArray &utf8Message);
/// RFC 5425's frame of a message: its length in decimal, a space, the message.
QByteArray syslogFrame(const QByteArray &message);

/// The messages of a run of frames, in order. `consumed` is how many bytes made whole frames: a frame cut short
/// at the end (a crash while it was written) is not returned. An error when the bytes are not frames (from some
/// point on: `consumed` then says how many bytes before it are whole frames).
Result<QList<QByteArray>> parseSyslogFrames(const QByteArray &bytes, qsizetype *consumed = nullptr);

} // namespace spectrum
