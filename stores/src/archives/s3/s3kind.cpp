// SPDX-License-Identifier: Apache-2.0
// An S3-compatible object store: its endpoint, bucket, prefix and region, path or virtual-host addressing, an
// access key and its secret.
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
                member(StoreField::AccessKey, &S3Settings::accessKey),
                member(StoreField::SecretKey, &S3Settings::secretKey),
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
            r.text("accessKey", s.accessKey);
            r.secret("secretKey", s.secretKey);
            r.text("caFile", s.caFile);
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
        if (s.accessKey.isEmpty() || !s.secretKey.isSet())
            return invalid(where, QStringLiteral("an S3 store needs accessKey and secretKey"));
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
        put(o, "accessKey", s.accessKey);
        if (s.secretKey.isSet())
            o.insert(QStringLiteral("secretKey"), s.secretKey.toJson());
    }
    QString summary(const StoreConfig &store) const override
    {
        const S3Settings &s = store.as<S3Settings>();
        return QStringLiteral("s3 %1 %2/%3 (%4, key %5)").arg(s.url, s.bucket, s.prefix, s.region, s.accessKey.left(8) + QStringLiteral("…"));
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
