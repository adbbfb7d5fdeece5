// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/archives/storeconfig.h"

#include "spectrum/stores/archives/archivekind.h"

#include "spectrum/core/privatefile.h"
#include "spectrum/core/settings.h"

#include "spectrum/transfer/dimse.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QHostAddress>
#include <QSysInfo>
#include <QJsonDocument>
#include <QStandardPaths>
#include <QRegularExpression>
#include <QUrl>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <limits>

namespace spectrum {

namespace {

Error invalid(const QString &where, const QString &what)
{
    return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: %2").arg(where, what));
}

/// Writes `bytes` to `path` atomically with mode 0600: a new file beside it, synced, renamed over.

} // namespace

// ---- Secret ----

QJsonValue Secret::toJson() const
{
    switch (source) {
    case Source::None: return QJsonValue();
    case Source::Sealed: return QJsonObject{{QStringLiteral("sealed"), value}};
    case Source::File: return QJsonObject{{QStringLiteral("file"), value}};
    case Source::Env: return QJsonObject{{QStringLiteral("env"), value}};
    }
    return QJsonValue();
}

Result<Secret> Secret::fromJson(const QJsonValue &json, const QString &where)
{
    Secret s;
    if (json.isUndefined() || json.isNull())
        return s;
    if (json.isString())
        return invalid(where, QStringLiteral("a secret in clear is not accepted: use {\"file\": …}, {\"env\": …} or `spectrum-cli stores add`, which seals it"));
    const QJsonObject o = json.toObject();
    if (o.size() != 1)
        return invalid(where, QStringLiteral("a secret is one of {\"sealed\": …}, {\"file\": …}, {\"env\": …}"));
    const QString key = o.begin().key();
    s.value = o.begin().value().toString();
    if (s.value.isEmpty())
        return invalid(where, QStringLiteral("the secret's %1 is empty").arg(key));
    if (key == QLatin1String("sealed"))
        s.source = Source::Sealed;
    else if (key == QLatin1String("file"))
        s.source = Source::File;
    else if (key == QLatin1String("env"))
        s.source = Source::Env;
    else
        return invalid(where, QStringLiteral("unknown secret source '%1'").arg(key));
    return s;
}

// ---- StoreConfig ----

Error StoreConfig::validate() const
{
    const QString where = QStringLiteral("store '%1'").arg(name);
    static const QRegularExpression namePattern(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"));
    if (!namePattern.match(name).hasMatch())
        return invalid(where, QStringLiteral("a name is 1-64 letters, digits, '.', '_' or '-'"));
    if (maxParallel < 1 || maxParallel > 64)
        return invalid(where, QStringLiteral("maxParallel must be 1-64"));
    if (timeoutSeconds < 1 || timeoutSeconds > 3600)
        return invalid(where, QStringLiteral("timeoutSeconds must be 1-3600"));
    if (!caFile.isEmpty() && !QFileInfo(caFile).isReadable())
        return invalid(where, QStringLiteral("caFile %1 cannot be read").arg(caFile));
    return archiveKind(kind).validate(*this, where);
}

QJsonObject StoreConfig::toJson() const
{
    QJsonObject o{{QStringLiteral("name"), name}, {QStringLiteral("kind"), storeKindName(kind)}};
    archiveKind(kind).writeJson(*this, o);
    o.insert(QStringLiteral("maxParallel"), maxParallel);
    o.insert(QStringLiteral("timeoutSeconds"), timeoutSeconds);
    return o;
}

Result<StoreConfig> StoreConfig::fromJson(const QJsonObject &o, const QString &where)
{
    static const QStringList known{QStringLiteral("name"), QStringLiteral("kind"), QStringLiteral("url"), QStringLiteral("caFile"),
                                   QStringLiteral("auth"), QStringLiteral("user"), QStringLiteral("password"), QStringLiteral("token"),
                                   QStringLiteral("host"), QStringLiteral("port"), QStringLiteral("aeTitle"), QStringLiteral("ourAeTitle"),
                                   QStringLiteral("retrieve"), QStringLiteral("maxParallel"), QStringLiteral("timeoutSeconds"), QStringLiteral("path"),
                                   QStringLiteral("tls"), QStringLiteral("bucket"), QStringLiteral("prefix"), QStringLiteral("region"),
                                   QStringLiteral("addressing"), QStringLiteral("accessKey"), QStringLiteral("secretKey"),
                                   QStringLiteral("mirrors")};
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!known.contains(it.key()))
            return invalid(where, QStringLiteral("unknown field '%1'").arg(it.key()));
    }
    StoreConfig c;
    c.name = o.value(QStringLiteral("name")).toString();
    Result<StoreKind> kind = storeKindFromName(o.value(QStringLiteral("kind")).toString());
    if (!kind.isOk())
        return invalid(where, kind.error().message());
    c.kind = kind.value();
    auto str = [&](const char *key, QString *out, const QString &fallback = QString()) -> Error {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined()) {
            *out = fallback;
            return Error();
        }
        if (!v.isString())
            return invalid(where, QStringLiteral("%1 must be text").arg(QLatin1String(key)));
        *out = v.toString();
        return Error();
    };
    auto num = [&](const char *key, int *out, int fallback) -> Error {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined()) {
            *out = fallback;
            return Error();
        }
        // In range before it is converted: a double beyond int is undefined behaviour (found by fuzzing).
        const double d = v.toDouble();
        if (!v.isDouble() || !(d >= double(std::numeric_limits<int>::min()) && d <= double(std::numeric_limits<int>::max())) || d != std::trunc(d))
            return invalid(where, QStringLiteral("%1 must be a whole number").arg(QLatin1String(key)));
        *out = v.toInt();
        return Error();
    };
    for (Error e : {str("url", &c.url), str("caFile", &c.caFile), str("auth", &c.auth, QStringLiteral("none")), str("user", &c.user),
                    str("host", &c.host), str("aeTitle", &c.aeTitle), str("ourAeTitle", &c.ourAeTitle),
                    str("retrieve", &c.retrieve, QStringLiteral("get")), str("path", &c.path), num("port", &c.port, 0),
                    num("maxParallel", &c.maxParallel, 6), num("timeoutSeconds", &c.timeoutSeconds, 30), str("bucket", &c.bucket),
                    str("prefix", &c.prefix), str("region", &c.region, QStringLiteral("us-east-1")), str("accessKey", &c.accessKey)}) {
        if (e.isError())
            return e;
    }
    const QJsonValue mirrors = o.value(QStringLiteral("mirrors"));
    if (!mirrors.isUndefined()) {
        if (!mirrors.isArray())
            return invalid(where, QStringLiteral("mirrors must be a list of addresses"));
        for (const QJsonValue &m : mirrors.toArray()) {
            if (!m.isString())
                return invalid(where, QStringLiteral("mirrors must be a list of addresses"));
            c.mirrors << m.toString();
        }
    }
    const QJsonValue tls = o.value(QStringLiteral("tls"));
    if (!tls.isUndefined() && !tls.isBool())
        return invalid(where, QStringLiteral("tls must be true or false"));
    c.tls = tls.toBool(false);
    Result<Secret> password = Secret::fromJson(o.value(QStringLiteral("password")), where + QStringLiteral(", password"));
    if (!password.isOk())
        return password.error();
    c.password = password.value();
    Result<Secret> token = Secret::fromJson(o.value(QStringLiteral("token")), where + QStringLiteral(", token"));
    if (!token.isOk())
        return token.error();
    c.token = token.value();
    Result<Secret> secretKey = Secret::fromJson(o.value(QStringLiteral("secretKey")), where + QStringLiteral(", secretKey"));
    if (!secretKey.isOk())
        return secretKey.error();
    c.secretKey = secretKey.value();
    QString addressing;
    if (Error e = str("addressing", &addressing, QStringLiteral("path")); e.isError())
        return e;
    if (addressing != QLatin1String("path") && addressing != QLatin1String("virtual"))
        return invalid(where, QStringLiteral("addressing is path or virtual"));
    c.virtualHosted = addressing == QLatin1String("virtual");
    if (Error e = c.validate(); e.isError())
        return e;
    return c;
}

QString StoreConfig::summary() const
{
    return archiveKind(kind).summary(*this);
}

} // namespace spectrum
