// SPDX-License-Identifier: Apache-2.0
#include "spectrum/transfer/audit/syslogframe.h"

namespace spectrum {

namespace {

constexpr qsizetype kMaxFrame = 16 * 1024 * 1024;  // far beyond any audit message; a length past it is not a frame

/// PRINTUSASCII (33–126), at most `max` characters, "-" (NILVALUE) when empty.
QByteArray field(const QString &text, int max)
{
    QByteArray out;
    for (const QChar c : text) {
        if (out.size() >= max)
            break;
        if (c.unicode() >= 33 && c.unicode() <= 126)
            out.append(char(c.unicode()));
    }
    return out.isEmpty() ? QByteArrayLiteral("-") : out;
}

} // namespace

QByteArray syslogMessage(const SyslogHeader &header, const QByteArray &utf8Message)
{
    const QDateTime when = (header.when.isValid() ? header.when : QDateTime::currentDateTimeUtc()).toUTC();
    QByteArray m = "<85>1 " + when.toString(Qt::ISODateWithMs).toLatin1() + ' ' + field(header.hostName, 255) + ' ' + field(header.appName, 48)
        + ' ' + QByteArray::number(header.processId) + " IHE+RFC-3881 - ";
    m += "\xEF\xBB\xBF";
    m += utf8Message;
    return m;
}

QByteArray syslogFrame(const QByteArray &message)
{
    return QByteArray::number(message.size()) + ' ' + message;
}

Result<QList<QByteArray>> parseSyslogFrames(const QByteArray &bytes, qsizetype *consumed)
{
    QList<QByteArray> messages;
    qsizetype at = 0;
    while (at < bytes.size()) {
        qsizetype digits = 0;
        qsizetype length = 0;
        while (at + digits < bytes.size() && bytes.at(at + digits) >= '0' && bytes.at(at + digits) <= '9' && digits < 9) {
            length = length * 10 + (bytes.at(at + digits) - '0');
            ++digits;
        }
        if (at + digits >= bytes.size())
            break;  // the length itself cut short
        if (digits == 0 || bytes.at(at + digits) != ' ' || bytes.at(at) == '0' || length > kMaxFrame) {
            if (consumed)
                *consumed = at;  // the whole frames before the damage
            return Error(ErrorCode::Corrupt, QStringLiteral("not a syslog frame at byte %1").arg(at));
        }
        const qsizetype start = at + digits + 1;
        if (start + length > bytes.size())
            break;  // the message cut short
        messages.append(bytes.mid(start, length));
        at = start + length;
    }
    if (consumed)
        *consumed = at;
    return messages;
}

} // namespace spectrum
