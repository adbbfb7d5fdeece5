// SPDX-License-Identifier: Apache-2.0
// The archive kinds, one for each line of SPECTRUM_STORE_KINDS (storeconfig.h): the one place a kind is known by
// its enum value and its name.
#include "spectrum/stores/archives/archivekind.h"

#include "archives/kindsupport.h"

#include <QJsonArray>
#include <QUrl>

#include <cmath>
#include <limits>

#define SPECTRUM_DECLARE_KIND(kind, name) const spectrum::ArchiveKind &make##kind##Kind();
SPECTRUM_STORE_KINDS(SPECTRUM_DECLARE_KIND)
#undef SPECTRUM_DECLARE_KIND

namespace spectrum {

namespace {

const QList<const ArchiveKind *> &table()
{
    static const QList<const ArchiveKind *> kinds = {
#define SPECTRUM_REGISTER_KIND(kind, name) &make##kind##Kind(),
        SPECTRUM_STORE_KINDS(SPECTRUM_REGISTER_KIND)
#undef SPECTRUM_REGISTER_KIND
    };
    return kinds;
}

} // namespace

QString storeKindName(StoreKind kind)
{
    static const QStringList names = {
#define SPECTRUM_KIND_NAME(kind, name) QStringLiteral(#name),
        SPECTRUM_STORE_KINDS(SPECTRUM_KIND_NAME)
#undef SPECTRUM_KIND_NAME
    };
    return names.value(int(kind));
}

Result<StoreKind> storeKindFromName(const QString &name)
{
    QStringList names;
    for (const ArchiveKind *k : table()) {
        if (k->name() == name)
            return k->kind();
        names << k->name();
    }
    const QString last = names.takeLast();
    return Error(ErrorCode::InvalidArgument, QStringLiteral("unknown store kind '%1' (%2 or %3)").arg(name, names.join(QStringLiteral(", ")), last));
}

const ArchiveKind &archiveKind(StoreKind kind)
{
    return *table().at(int(kind));
}

QList<const ArchiveKind *> archiveKinds()
{
    return table();
}

QList<StoreField> ArchiveKind::fields() const
{
    QList<StoreField> all;
    for (const FieldAccess &a : access())
        all << a.field;
    return all << limits();
}

QVariant ArchiveKind::value(const StoreConfig &store, StoreField field) const
{
    if (field == StoreField::MaxParallel || field == StoreField::Timeout)  // every store's, shown or not
        return field == StoreField::MaxParallel ? store.maxParallel : store.timeoutSeconds;
    for (const FieldAccess &a : access())
        if (a.field == field)
            return a.get(store.settings);
    return QVariant();
}

bool ArchiveKind::setValue(StoreConfig &store, StoreField field, const QVariant &value) const
{
    if (field == StoreField::MaxParallel || field == StoreField::Timeout) {
        (field == StoreField::MaxParallel ? store.maxParallel : store.timeoutSeconds) = value.toInt();
        return true;
    }
    for (const FieldAccess &a : access()) {
        if (a.field == field) {
            a.set(store.settings, value);
            return true;
        }
    }
    return false;
}

namespace kinds {

bool carriesTokensSafely(const QString &url)
{
    const QUrl a(url);
    const bool here = a.host() == QLatin1String("127.0.0.1") || a.host() == QLatin1String("localhost");
    return a.scheme() == QLatin1String("https") || (here && a.scheme() == QLatin1String("http"));
}

Error checkIssuer(const QString &issuer, const QString &clientId, const QString &where)
{
    const QUrl u(issuer, QUrl::StrictMode);
    if (!u.isValid() || u.host().isEmpty() || !carriesTokensSafely(issuer))
        return invalid(where, QStringLiteral("oidc needs the identity provider as an https:// issuer, e.g. https://sso.hospital.org/realms/radiology"));
    if (clientId.isEmpty())
        return invalid(where, QStringLiteral("oidc needs the client id Spectrum has at the identity provider (clientId)"));
    return Error();
}

bool isWebAddress(const QString &url)
{
    const QUrl u(url, QUrl::StrictMode);
    return u.isValid() && (u.scheme() == QLatin1String("http") || u.scheme() == QLatin1String("https")) && !u.host().isEmpty() && u.userInfo().isEmpty();
}

QJsonValue FieldReader::take(const char *key)
{
    const QString name = QLatin1String(key);
    m_read.insert(name);
    return m_error.isError() ? QJsonValue(QJsonValue::Undefined) : m_json.value(name);
}

void FieldReader::text(const char *key, QString &out)
{
    const QJsonValue v = take(key);
    if (v.isUndefined())
        return;
    if (!v.isString())
        m_error = invalid(m_where, QStringLiteral("%1 must be text").arg(QLatin1String(key)));
    else
        out = v.toString();
}

void FieldReader::whole(const char *key, int &out)
{
    const QJsonValue v = take(key);
    if (v.isUndefined())
        return;
    // In range before it is converted: a double beyond int is undefined behaviour (found by fuzzing).
    const double d = v.toDouble();
    if (!v.isDouble() || !(d >= double(std::numeric_limits<int>::min()) && d <= double(std::numeric_limits<int>::max())) || d != std::trunc(d))
        m_error = invalid(m_where, QStringLiteral("%1 must be a whole number").arg(QLatin1String(key)));
    else
        out = v.toInt();
}

void FieldReader::flag(const char *key, bool &out)
{
    const QJsonValue v = take(key);
    if (v.isUndefined())
        return;
    if (!v.isBool())
        m_error = invalid(m_where, QStringLiteral("%1 must be true or false").arg(QLatin1String(key)));
    else
        out = v.toBool();
}

void FieldReader::addresses(const char *key, QStringList &out)
{
    const QJsonValue v = take(key);
    if (v.isUndefined())
        return;
    QStringList list;
    for (const QJsonValue &item : v.toArray()) {
        if (!item.isString())
            break;
        list << item.toString();
    }
    if (!v.isArray() || list.size() != v.toArray().size())
        m_error = invalid(m_where, QStringLiteral("%1 must be a list of addresses").arg(QLatin1String(key)));
    else
        out = list;
}

void FieldReader::secret(const char *key, Secret &out)
{
    const QJsonValue v = take(key);
    if (v.isUndefined())
        return;
    Result<Secret> s = Secret::fromJson(v, QStringLiteral("%1, %2").arg(m_where, QLatin1String(key)));
    if (!s.isOk())
        m_error = s.error();
    else
        out = s.value();
}

void FieldReader::choice(const char *key, const QStringList &choices, QString &out)
{
    QString value = out;
    text(key, value);
    if (m_error.isError())
        return;
    if (!choices.contains(value)) {
        QStringList others = choices;
        const QString last = others.takeLast();
        m_error = invalid(m_where, QStringLiteral("%1 is %2 or %3").arg(QLatin1String(key), others.join(QStringLiteral(", ")), last));
    } else {
        out = value;
    }
}

} // namespace kinds

} // namespace spectrum
