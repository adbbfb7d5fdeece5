// SPDX-License-Identifier: Apache-2.0
// An S3-compatible object store: its endpoint, bucket, prefix and region, path or virtual-host addressing, and
// either an access key and its secret or the reader's sign-in traded at the store's security token service.
#include "archives/s3/s3archive.h"
#include "archives/kindsupport.h"

#include <QRegularExpression>
#include <QUrl>

namespace spectrum::kinds {
namespace {

class S3Kind final : public ArchiveKind
{
public:
    StoreKind kind() const override { return StoreKind::S3; }
    QList<FieldAccess> access() const override
    {
        return {member(StoreField::Url, &S3Settings::url),
                member(StoreField::Bucket, &S3Settings::bucket),
                member(StoreField::Prefix, &S3Settings::prefix),
                member(StoreField::Region, &S3Settings::region),
                member(StoreField::Addressing, &S3Settings::virtualHosted),
                member(StoreField::Auth, &S3Settings::auth),
                member(StoreField::AccessKey, &S3Settings::accessKey),
                member(StoreField::SecretKey, &S3Settings::secretKey),
                member(StoreField::Issuer, &S3Settings::issuer),
                member(StoreField::ClientId, &S3Settings::clientId),
                member(StoreField::Audience, &S3Settings::audience),
                member(StoreField::StsUrl, &S3Settings::stsUrl),
                member(StoreField::RoleArn, &S3Settings::roleArn),
                member(StoreField::CaFile, &S3Settings::caFile)};
    }
    StoreSettings defaults() const override { return S3Settings(); }
    Result<StoreSettings> readJson(const QJsonObject &json, const QString &where, QSet<QString> &read) const override
    {
        return readSettings<S3Settings>(json, where, read, [](FieldReader &r, S3Settings &s) {
            r.text("url", s.url);
            r.text("bucket", s.bucket);
            r.text("prefix", s.prefix);
            r.text("region", s.region);
            QString addressing = QStringLiteral("path");
            r.choice("addressing", {QStringLiteral("path"), QStringLiteral("virtual")}, addressing);
            s.virtualHosted = addressing == QLatin1String("virtual");
            r.choice("auth", {QStringLiteral("keys"), QStringLiteral("oidc")}, s.auth);
            r.text("accessKey", s.accessKey);
            r.secret("secretKey", s.secretKey);
            r.text("caFile", s.caFile);
            r.text("issuer", s.issuer);
            r.text("clientId", s.clientId);
            r.text("audience", s.audience);
            r.text("stsUrl", s.stsUrl);
            r.text("roleArn", s.roleArn);
        });
    }
    Error validate(const StoreConfig &store, const QString &where) const override
    {
        const S3Settings &s = store.as<S3Settings>();
        const QUrl u(s.url, QUrl::StrictMode);
        if (!u.isValid() || (u.scheme() != QLatin1String("http") && u.scheme() != QLatin1String("https")) || u.host().isEmpty() || !u.path(QUrl::FullyEncoded).remove(QLatin1Char('/')).isEmpty())
            return invalid(where, QStringLiteral("url must be the store's http:// or https:// address, e.g. https://s3.hospital.example (no path: the bucket is separate)"));
        if (!u.userInfo().isEmpty())
            return invalid(where, QStringLiteral("credentials do not belong in the url: use accessKey and secretKey"));
        static const QRegularExpression bucketPattern(QStringLiteral("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"));
        if (!bucketPattern.match(s.bucket).hasMatch())
            return invalid(where, QStringLiteral("bucket '%1' is not a bucket name (3-63 lower-case letters, digits, '.' or '-')").arg(s.bucket));
        if (s.prefix.startsWith(QLatin1Char('/')) || (!s.prefix.isEmpty() && !s.prefix.endsWith(QLatin1Char('/'))) || s.prefix.contains(QLatin1String("//")))
            return invalid(where, QStringLiteral("prefix is empty or like \"spectrum/\" (no leading '/', ending in '/')"));
        if (s.region.trimmed().isEmpty())
            return invalid(where, QStringLiteral("region is missing (us-east-1 when the store does not care)"));
        if (s.auth == QLatin1String("oidc")) {
            if (Error e = checkIssuer(s.issuer, s.clientId, where); e.isError())
                return e;
            // The ID token goes to the STS, the session token to the store: over TLS (or on this machine) only.
            if (!s.stsUrl.isEmpty() && (!isWebAddress(s.stsUrl) || !carriesTokensSafely(s.stsUrl)))
                return invalid(where, QStringLiteral("stsUrl must be the security token service's https:// address, e.g. https://sts.amazonaws.com (empty: the store's)"));
            if (!carriesTokensSafely(s.url))
                return invalid(where, QStringLiteral("with oidc the store must be reached over https:// (%1 would carry the reader's credentials in clear)").arg(s.url));
            static const QRegularExpression arn(QStringLiteral("^arn:[a-z0-9-]+:iam::([0-9A-Za-z-]*:)?role/[\\w+=,.@/-]{1,512}$"));
            if (!s.roleArn.isEmpty() && !arn.match(s.roleArn).hasMatch())
                return invalid(where, QStringLiteral("roleArn '%1' is not a role's ARN (arn:aws:iam::123456789012:role/radiology-readers)").arg(s.roleArn));
            if (!s.accessKey.isEmpty() || s.secretKey.isSet())
                return invalid(where, QStringLiteral("a store whose readers sign in keeps no accessKey or secretKey (each reader gets their own)"));
            return Error();
        }
        if (s.accessKey.isEmpty() || !s.secretKey.isSet())
            return invalid(where, QStringLiteral("an S3 store needs accessKey and secretKey (or auth \"oidc\": its readers sign in)"));
        return Error();
    }
    void writeJson(const StoreConfig &store, QJsonObject &o) const override
    {
        const S3Settings &s = store.as<S3Settings>();
        put(o, "url", s.url);
        put(o, "caFile", s.caFile);
        put(o, "bucket", s.bucket);
        put(o, "prefix", s.prefix);
        put(o, "region", s.region);
        o.insert(QStringLiteral("addressing"), s.virtualHosted ? QStringLiteral("virtual") : QStringLiteral("path"));
        if (s.auth != QLatin1String("keys"))
            o.insert(QStringLiteral("auth"), s.auth);
        put(o, "accessKey", s.accessKey);
        if (s.secretKey.isSet())
            o.insert(QStringLiteral("secretKey"), s.secretKey.toJson());
        put(o, "issuer", s.issuer);
        put(o, "clientId", s.clientId);
        put(o, "audience", s.audience);
        put(o, "stsUrl", s.stsUrl);
        put(o, "roleArn", s.roleArn);
    }
    QString summary(const StoreConfig &store) const override
    {
        const S3Settings &s = store.as<S3Settings>();
        const QString who = s.auth == QLatin1String("oidc") ? QStringLiteral("readers sign in to %1").arg(QUrl(s.issuer).host())
                                                             : QStringLiteral("key %1").arg(s.accessKey.left(8) + QStringLiteral("…"));
        return QStringLiteral("s3 %1 %2/%3 (%4, %5)").arg(s.url, s.bucket, s.prefix, s.region, who);
    }
    std::unique_ptr<Archive> makeArchive(const StoreConfig &s, const StoreConfigFile &all, std::shared_ptr<FileStore> cache) const override
    {
        return std::make_unique<S3Archive>(s, all, std::move(cache));
    }
};

} // namespace
} // namespace spectrum::kinds

const spectrum::ArchiveKind &makeS3Kind()
{
    static const spectrum::kinds::S3Kind kind;
    return kind;
}
