// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/signin/signinpolicy.h"

#include <QStringList>

#include <cmath>

namespace spectrum {

namespace {

constexpr double kMaxIdleMinutes = 24 * 60;

QString minutesText(double minutes)
{
    if (minutes >= 1 && std::floor(minutes) == minutes)
        return minutes == 1 ? QStringLiteral("1 minute") : QStringLiteral("%1 minutes").arg(qint64(minutes));
    return QStringLiteral("%1 seconds").arg(qRound64(minutes * 60));
}

} // namespace

QString SignInPolicy::summary() const
{
    QStringList parts;
    parts << (keepBetweenPrograms ? QStringLiteral("kept between programs") : QStringLiteral("kept by the program that signed in alone"));
    if (idleMinutes > 0)
        parts << QStringLiteral("signed out after %1 without use").arg(minutesText(idleMinutes));
    return parts.join(QStringLiteral("; "));
}

Result<SignInPolicy> SignInPolicy::fromJson(const QJsonObject &json, const QString &where)
{
    static const QStringList fields = {QStringLiteral("keep"), QStringLiteral("idleMinutes")};
    for (auto it = json.begin(); it != json.end(); ++it) {
        if (!fields.contains(it.key()))
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: signIn: unknown field '%2' (%3)").arg(where, it.key(), fields.join(QStringLiteral(", "))));
    }
    SignInPolicy p;
    if (json.contains(QStringLiteral("keep"))) {
        const QString keep = json.value(QStringLiteral("keep")).toString();
        if (keep != QLatin1String("desktop") && keep != QLatin1String("program"))
            return Error(ErrorCode::InvalidArgument,
                         QStringLiteral("%1: signIn keep is \"desktop\" (the keyring, else a sealed file: the next program goes on) or \"program\" (the program that signed in alone)").arg(where));
        p.keepBetweenPrograms = keep == QLatin1String("desktop");
    }
    if (json.contains(QStringLiteral("idleMinutes"))) {
        const QJsonValue v = json.value(QStringLiteral("idleMinutes"));
        const double minutes = v.toDouble(-1);
        if (!v.isDouble() || !std::isfinite(minutes) || minutes < 0 || minutes > kMaxIdleMinutes)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: signIn idleMinutes is a number of minutes from 0 (never) to %2").arg(where).arg(kMaxIdleMinutes));
        p.idleMinutes = minutes;
    }
    return p;
}

QJsonObject SignInPolicy::toJson() const
{
    QJsonObject o;
    if (!keepBetweenPrograms)
        o.insert(QStringLiteral("keep"), QStringLiteral("program"));
    if (idleMinutes > 0)
        o.insert(QStringLiteral("idleMinutes"), idleMinutes);
    return o;
}

} // namespace spectrum
