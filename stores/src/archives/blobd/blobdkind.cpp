// SPDX-License-Identifier: Apache-2.0
// A blob server (spectrum-blobd, or a workstation's shared cache): blob://HOST:PORT or blobs:// (TLS), a token.
#include "archives/blobd/blobdarchive.h"
#include "archives/kindsupport.h"

#include <QUrl>

namespace spectrum::kinds {
namespace {

class BlobdKind final : public ArchiveKind
{
public:
    StoreKind kind() const override { return StoreKind::Blobd; }
    QList<FieldAccess> access() const override
    {
        return {member(StoreField::Url, &BlobdSettings::url),
                member(StoreField::Token, &BlobdSettings::token),
                member(StoreField::CaFile, &BlobdSettings::caFile)};
    }
    QList<StoreField> limits() const override { return {StoreField::Timeout}; }
    StoreSettings defaults() const override { return BlobdSettings(); }
    Result<StoreSettings> readJson(const QJsonObject &json, const QString &where, QSet<QString> &read) const override
    {
        return readSettings<BlobdSettings>(json, where, read, [](FieldReader &r, BlobdSettings &s) {
            r.text("url", s.url);
            r.secret("token", s.token);
            r.text("caFile", s.caFile);
        });
    }
    Error validate(const StoreConfig &store, const QString &where) const override
    {
        const QUrl u(store.as<BlobdSettings>().url);
        if (!u.isValid() || (u.scheme() != QLatin1String("blob") && u.scheme() != QLatin1String("blobs")) || u.host().isEmpty() || u.port() <= 0)
            return invalid(where, QStringLiteral("url must be blob://HOST:PORT or blobs://HOST:PORT"));
        return Error();
    }
    void writeJson(const StoreConfig &store, QJsonObject &o) const override
    {
        const BlobdSettings &s = store.as<BlobdSettings>();
        put(o, "url", s.url);
        put(o, "caFile", s.caFile);
        if (s.token.isSet())
            o.insert(QStringLiteral("token"), s.token.toJson());
    }
    QString summary(const StoreConfig &store) const override
    {
        const BlobdSettings &s = store.as<BlobdSettings>();
        return QStringLiteral("blobd %1%2").arg(s.url, s.token.isSet() ? QStringLiteral(" (token)") : QString());
    }
    std::unique_ptr<Archive> makeArchive(const StoreConfig &s, const StoreConfigFile &all, std::shared_ptr<FileStore> cache) const override
    {
        return std::make_unique<BlobdArchive>(s, all, std::move(cache));
    }
};

} // namespace
} // namespace spectrum::kinds

const spectrum::ArchiveKind &makeBlobdKind()
{
    static const spectrum::kinds::BlobdKind kind;
    return kind;
}
