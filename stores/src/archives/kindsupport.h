// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the archive kinds share when they read, check and write their fields (private to stores).

#include "spectrum/stores/archives/archivekind.h"

#include <QJsonObject>
#include <QSet>
#include <QString>
#include <QStringList>

namespace spectrum::kinds {

inline Error invalid(const QString &where, const QString &what)
{
    return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: %2").arg(where, what));
}

/// `value` under `key` when it is set.
inline void put(QJsonObject &json, const char *key, const QString &value)
{
    if (!value.isEmpty())
        json.insert(QLatin1String(key), value);
}

/// The access to `member` of a kind's settings S as `field` (ArchiveKind::access()).
template <typename S, typename V>
ArchiveKind::FieldAccess member(StoreField field, V S::*m)
{
    return {field, [m](const StoreSettings &s) { return QVariant::fromValue(std::get<S>(s).*m); },
            [m](StoreSettings &s, const QVariant &v) { std::get<S>(s).*m = v.value<V>(); }};
}

/// Whether `url` is an http(s) address with a host and no credentials.
bool isWebAddress(const QString &url);
/// A sign-in's settings (auth "oidc"): the identity provider over https:// (http:// only on this machine) and the
/// client id; or why not.
Error checkIssuer(const QString &issuer, const QString &clientId, const QString &where);
/// Whether a reader's token or credentials may go to `url`: over TLS, or to this machine.
bool carriesTokensSafely(const QString &url);

/// Reads a store's fields from its JSON record, each of the type its kind says, and remembers which it read: a
/// field left over afterwards is none of the kind's (StoreConfig::fromJson names it). A missing field keeps the
/// value the settings came with (their default). The first error is kept; later reads do nothing.
class FieldReader
{
public:
    FieldReader(const QJsonObject &json, QString where) : m_json(json), m_where(std::move(where)) {}

    void text(const char *key, QString &out);
    void whole(const char *key, int &out);
    void flag(const char *key, bool &out);
    void addresses(const char *key, QStringList &out);  ///< a list of addresses (text)
    void secret(const char *key, Secret &out);
    /// One of `choices` (text), e.g. "path" or "virtual".
    void choice(const char *key, const QStringList &choices, QString &out);

    /// The first error met, or none.
    Error error() const { return m_error; }
    /// The fields read (present or not).
    const QSet<QString> &read() const { return m_read; }

private:
    /// The field's value, or undefined when it is missing or an error came first; marks it read.
    QJsonValue take(const char *key);

    const QJsonObject &m_json;
    QString m_where;
    QSet<QString> m_read;
    Error m_error;
};

/// A kind's settings S read from a store's JSON record by `fields` (FieldReader&, S&), missing fields at S's
/// defaults; `read` gets the names of the fields it knows (ArchiveKind::readJson).
template <typename S, typename Fields>
Result<StoreSettings> readSettings(const QJsonObject &json, const QString &where, QSet<QString> &read, Fields fields)
{
    S settings;
    FieldReader reader(json, where);
    fields(reader, settings);
    read = reader.read();
    if (reader.error().isError())
        return reader.error();
    return StoreSettings(std::move(settings));
}

} // namespace spectrum::kinds
