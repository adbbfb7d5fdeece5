// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/uid.h"

#include <QStringList>

#include <QUuid>

namespace spectrum {

namespace {
// 128-bit unsigned integer (16 bytes, big-endian) to its decimal string, by repeated division by 10.
QString toDecimal(const QByteArray &bigEndian16)
{
    quint8 n[16];
    for (int i = 0; i < 16; ++i)
        n[i] = static_cast<quint8>(bigEndian16.at(i));
    QString digits;
    bool nonZero = true;
    while (nonZero) {
        unsigned remainder = 0;
        nonZero = false;
        for (int i = 0; i < 16; ++i) {
            const unsigned cur = (remainder << 8) | n[i];
            n[i] = static_cast<quint8>(cur / 10);
            remainder = cur % 10;
            nonZero = nonZero || n[i] != 0;
        }
        digits.prepend(QChar(u'0' + remainder));
    }
    return digits;
}

QString uidFromUuid(const QUuid &uuid)
{
    return QStringLiteral("2.25.") + toDecimal(uuid.toRfc4122());
}
} // namespace

QString makeUid()
{
    return uidFromUuid(QUuid::createUuid());
}

QString makeUidFromName(const QByteArray &name)
{
    // A fixed namespace for Spectrum's name-based UIDs (itself a v5 UUID of "spectrum" in the URL namespace).
    static const QUuid ns = QUuid::createUuidV5(QUuid(QStringLiteral("{6ba7b811-9dad-11d1-80b4-00c04fd430c8}")),
                                                QByteArrayLiteral("spectrum"));
    return uidFromUuid(QUuid::createUuidV5(ns, name));
}

bool isValidUid(const QString &uid)
{
    if (uid.isEmpty() || uid.size() > 64)
        return false;
    for (const QString &component : uid.split(QLatin1Char('.'))) {
        if (component.isEmpty() || (component.size() > 1 && component.front() == QLatin1Char('0')))
            return false;
        for (const QChar c : component) {
            if (c < QLatin1Char('0') || c > QLatin1Char('9'))
                return false;
        }
    }
    return true;
}

} // namespace spectrum
