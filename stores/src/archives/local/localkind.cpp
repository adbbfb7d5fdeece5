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
    QList<StoreField> fields() const override { return {StoreField::Path}; }
    bool offeredInDialog() const override { return false; }
    Error validate(const StoreConfig &, const QString &) const override { return Error(); }
    void writeJson(const StoreConfig &s, QJsonObject &o) const override { put(o, "path", s.path); }
    QString summary(const StoreConfig &s) const override
    {
        return QStringLiteral("local %1").arg(s.path.isEmpty() ? QStringLiteral("(the workstation's cache)") : s.path);
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
