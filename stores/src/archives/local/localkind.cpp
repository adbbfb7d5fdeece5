// SPDX-License-Identifier: Apache-2.0
// A local store: without a path the workstation's own cache (where fetches land), with one a folder archive.
#include "archives/local/localarchive.h"
#include "archives/kindsupport.h"

namespace spectrum::kinds {
namespace {

class LocalKind final : public ArchiveKind
{
public:
    StoreKind kind() const override { return StoreKind::Local; }
    QList<FieldAccess> access() const override
    {
        return {member(StoreField::Path, &LocalSettings::path)};
    }
    QList<StoreField> limits() const override { return {}; }
    bool offeredInDialog() const override { return false; }
    StoreSettings defaults() const override { return LocalSettings(); }
    Result<StoreSettings> readJson(const QJsonObject &json, const QString &where, QSet<QString> &read) const override
    {
        return readSettings<LocalSettings>(json, where, read, [](FieldReader &r, LocalSettings &s) {
            r.text("path", s.path);
        });
    }
    Error validate(const StoreConfig &, const QString &) const override { return Error(); }
    void writeJson(const StoreConfig &store, QJsonObject &o) const override { put(o, "path", store.as<LocalSettings>().path); }
    QString summary(const StoreConfig &store) const override
    {
        const QString &path = store.as<LocalSettings>().path;
        return QStringLiteral("local %1").arg(path.isEmpty() ? QStringLiteral("(the workstation's cache)") : path);
    }
    std::unique_ptr<Archive> makeArchive(const StoreConfig &s, const StoreConfigFile &all, std::shared_ptr<FileStore> cache) const override
    {
        return std::make_unique<LocalArchive>(s, all, std::move(cache));
    }
};

} // namespace
} // namespace spectrum::kinds

const spectrum::ArchiveKind &makeLocalKind()
{
    static const spectrum::kinds::LocalKind kind;
    return kind;
}
