// SPDX-License-Identifier: Apache-2.0
// A DICOMweb archive (QIDO-RS, WADO-RS, STOW-RS): its address and its mirrors (other servers of the same
// archive), HTTP Basic, a Bearer token, or the reader's sign-in to the hospital's identity provider (OpenID Connect).
#include "archives/dicomweb/dicomwebarchive.h"
#include "archives/kindsupport.h"

#include <QJsonArray>
#include <QUrl>

namespace spectrum::kinds {
namespace {

class DicomWebKind final : public ArchiveKind
{
public:
    StoreKind kind() const override { return StoreKind::DicomWeb; }
    QList<FieldAccess> access() const override
    {
        return {member(StoreField::Url, &DicomWebSettings::url),
                member(StoreField::Mirrors, &DicomWebSettings::mirrors),
                member(StoreField::Auth, &DicomWebSettings::auth),
                member(StoreField::User, &DicomWebSettings::user),
                member(StoreField::Password, &DicomWebSettings::password),
                member(StoreField::Token, &DicomWebSettings::token),
                member(StoreField::CaFile, &DicomWebSettings::caFile),
                member(StoreField::Issuer, &DicomWebSettings::issuer),
                member(StoreField::ClientId, &DicomWebSettings::clientId),
                member(StoreField::Audience, &DicomWebSettings::audience)};
    }
    StoreSettings defaults() const override { return DicomWebSettings(); }
    Result<StoreSettings> readJson(const QJsonObject &json, const QString &where, QSet<QString> &read) const override
    {
        return readSettings<DicomWebSettings>(json, where, read, [](FieldReader &r, DicomWebSettings &s) {
            r.text("url", s.url);
            r.addresses("mirrors", s.mirrors);
            r.text("auth", s.auth);
            r.text("user", s.user);
            r.secret("password", s.password);
            r.secret("token", s.token);
            r.text("caFile", s.caFile);
            r.text("issuer", s.issuer);
            r.text("clientId", s.clientId);
            r.text("audience", s.audience);
        });
    }
    Error validate(const StoreConfig &store, const QString &where) const override
    {
        const DicomWebSettings &s = store.as<DicomWebSettings>();
        const QUrl u(s.url, QUrl::StrictMode);
        if (!u.isValid() || (u.scheme() != QLatin1String("http") && u.scheme() != QLatin1String("https")) || u.host().isEmpty())
            return invalid(where, QStringLiteral("url must be an http:// or https:// address, e.g. https://pacs.example/dicom-web"));
        if (!u.userInfo().isEmpty())
            return invalid(where, QStringLiteral("credentials do not belong in the url: use user and password"));
        for (const QString &mirror : s.mirrors) {
            const QUrl m(mirror, QUrl::StrictMode);
            if (!isWebAddress(mirror))
                return invalid(where, QStringLiteral("mirror '%1' must be an http:// or https:// address without credentials").arg(mirror));
            if (m == u || s.mirrors.count(mirror) > 1)
                return invalid(where, QStringLiteral("mirror '%1' is named twice").arg(mirror));
        }
        if (s.auth == QLatin1String("basic")) {
            if (s.user.isEmpty() || !s.password.isSet())
                return invalid(where, QStringLiteral("basic authentication needs user and password"));
        } else if (s.auth == QLatin1String("bearer")) {
            if (!s.token.isSet())
                return invalid(where, QStringLiteral("bearer authentication needs a token"));
        } else if (s.auth == QLatin1String("oidc")) {
            if (Error e = checkIssuer(s.issuer, s.clientId, where); e.isError())
                return e;
            // The reader's token goes only over TLS (or to this machine).
            for (const QString &address : QStringList{s.url} + s.mirrors) {
                if (!carriesTokensSafely(address))
                    return invalid(where, QStringLiteral("with oidc the archive must be reached over https:// (%1 would carry the reader's token in clear)").arg(address));
            }
        } else if (s.auth != QLatin1String("none")) {
            return invalid(where, QStringLiteral("auth is none, basic, bearer or oidc"));
        }
        return Error();
    }
    void writeJson(const StoreConfig &store, QJsonObject &o) const override
    {
        const DicomWebSettings &s = store.as<DicomWebSettings>();
        put(o, "url", s.url);
        if (!s.mirrors.isEmpty())
            o.insert(QStringLiteral("mirrors"), QJsonArray::fromStringList(s.mirrors));
        put(o, "caFile", s.caFile);
        o.insert(QStringLiteral("auth"), s.auth);
        put(o, "user", s.user);
        if (s.password.isSet())
            o.insert(QStringLiteral("password"), s.password.toJson());
        if (s.token.isSet())
            o.insert(QStringLiteral("token"), s.token.toJson());
        put(o, "issuer", s.issuer);
        put(o, "clientId", s.clientId);
        put(o, "audience", s.audience);
    }
    QString summary(const StoreConfig &store) const override
    {
        const DicomWebSettings &s = store.as<DicomWebSettings>();
        return QStringLiteral("dicomweb %1%4 (%2%3)")
            .arg(s.url, s.auth, s.user.isEmpty() ? QString() : QStringLiteral(", ") + s.user,
                 s.mirrors.isEmpty() ? QString() : QStringLiteral(" + ") + s.mirrors.join(QStringLiteral(" + ")));
    }
    std::unique_ptr<Archive> makeArchive(const StoreConfig &s, const StoreConfigFile &all, std::shared_ptr<FileStore> cache) const override
    {
        return std::make_unique<DicomWebArchive>(s, all, std::move(cache));
    }
};

} // namespace
} // namespace spectrum::kinds

const spectrum::ArchiveKind &makeDicomWebKind()
{
    static const spectrum::kinds::DicomWebKind kind;
    return kind;
}
