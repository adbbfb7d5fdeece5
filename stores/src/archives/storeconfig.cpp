// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/archives/storeconfig.h"

#include "spectrum/stores/archives/archivekind.h"

#include "archives/kindsupport.h"

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

// The settings' alternatives are in SPECTRUM_STORE_KINDS' order: a store's kind is its settings' index.
#define SPECTRUM_SETTINGS_AT_ITS_KIND(kind, name)                                                                            \
    static_assert(std::is_same_v<std::variant_alternative_t<size_t(StoreKind::kind), StoreSettings>, kind##Settings>,       \
                  "StoreSettings' alternatives must follow SPECTRUM_STORE_KINDS");
SPECTRUM_STORE_KINDS(SPECTRUM_SETTINGS_AT_ITS_KIND)
#undef SPECTRUM_SETTINGS_AT_ITS_KIND
#define SPECTRUM_ONE_MORE(kind, name) +1
static_assert(std::variant_size_v<StoreSettings> == 0 SPECTRUM_STORE_KINDS(SPECTRUM_ONE_MORE), "one settings type per kind");
#undef SPECTRUM_ONE_MORE

QString StoreConfig::caFile() const
{
    return std::visit([](const auto &settings) -> QString {
        if constexpr (std::is_same_v<std::decay_t<decltype(settings)>, LocalSettings>)
            return QString();
        else
            return settings.caFile;
    }, settings);
}

QList<const Secret *> StoreConfig::secrets() const
{
    if (const DicomWebSettings *web = ifKind<DicomWebSettings>())
        return {&web->password, &web->token};
    if (const BlobdSettings *blobd = ifKind<BlobdSettings>())
        return {&blobd->token};
    if (const S3Settings *s3 = ifKind<S3Settings>())
        return {&s3->secretKey};
    return {};
}

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
    if (const QString ca = caFile(); !ca.isEmpty() && !QFileInfo(ca).isReadable())
        return invalid(where, QStringLiteral("caFile %1 cannot be read").arg(ca));
    return archiveKind(kind()).validate(*this, where);
}

QJsonObject StoreConfig::toJson() const
{
    QJsonObject o{{QStringLiteral("name"), name}, {QStringLiteral("kind"), storeKindName(kind())}};
    archiveKind(kind()).writeJson(*this, o);
    o.insert(QStringLiteral("maxParallel"), maxParallel);
    o.insert(QStringLiteral("timeoutSeconds"), timeoutSeconds);
    return o;
}

Result<StoreConfig> StoreConfig::fromJson(const QJsonObject &o, const QString &where)
{
    StoreConfig c;
    const QJsonValue name = o.value(QStringLiteral("name"));
    if (!name.isUndefined() && !name.isString())
        return invalid(where, QStringLiteral("name must be text"));
    c.name = name.toString();
    Result<StoreKind> kind = storeKindFromName(o.value(QStringLiteral("kind")).toString());
    if (!kind.isOk())
        return invalid(where, kind.error().message());
    // What every store has, then what its kind reads: anything else is no field of this store's.
    QSet<QString> read{QStringLiteral("name"), QStringLiteral("kind")};
    kinds::FieldReader common(o, where);
    common.whole("maxParallel", c.maxParallel);
    common.whole("timeoutSeconds", c.timeoutSeconds);
    if (common.error().isError())
        return common.error();
    read.unite(common.read());
    const ArchiveKind &its = archiveKind(kind.value());
    QSet<QString> itsFields;
    Result<StoreSettings> settings = its.readJson(o, where, itsFields);
    if (!settings.isOk())
        return settings.error();
    read.unite(itsFields);
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (read.contains(it.key()))
            continue;
        QStringList of;
        for (const ArchiveKind *other : archiveKinds()) {
            QSet<QString> theirs;
            other->readJson(QJsonObject(), where, theirs);
            if (theirs.contains(it.key()))
                of << other->name();
        }
        if (of.isEmpty())
            return invalid(where, QStringLiteral("unknown field '%1'").arg(it.key()));
        return invalid(where, QStringLiteral("'%1' is not a field of a %2 store (it is of %3 stores)").arg(it.key(), its.name(), of.join(QStringLiteral(", "))));
    }
    c.settings = std::move(settings.value());
    if (Error e = c.validate(); e.isError())
        return e;
    return c;
}

QString StoreConfig::summary() const
{
    return archiveKind(kind()).summary(*this);
}

} // namespace spectrum
