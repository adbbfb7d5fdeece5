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
    QList<StoreField> fields() const override
    {
        return {StoreField::Url, StoreField::Bucket, StoreField::Prefix, StoreField::Region, StoreField::Addressing, StoreField::AccessKey,
                StoreField::SecretKey, StoreField::CaFile, StoreField::MaxParallel, StoreField::Timeout};
    }
    Error validate(const StoreConfig &s, const QString &where) const override
    {
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
    void writeJson(const StoreConfig &s, QJsonObject &o) const override
    {
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
    QString summary(const StoreConfig &s) const override
    {
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
