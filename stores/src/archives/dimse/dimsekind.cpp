// SPDX-License-Identifier: Apache-2.0
// A DIMSE archive (a PACS over DICOM's network protocol): its host, port and AE title, C-GET or C-MOVE, DICOM TLS.
#include "archives/dimse/dimsearchive.h"
#include "archives/kindsupport.h"

#include "spectrum/transfer/dimse.h"

namespace spectrum::kinds {
namespace {

class DimseKind final : public ArchiveKind
{
public:
    StoreKind kind() const override { return StoreKind::Dimse; }
    QList<FieldAccess> access() const override
    {
        return {member(StoreField::Host, &DimseSettings::host),
                member(StoreField::Port, &DimseSettings::port),
                member(StoreField::AeTitle, &DimseSettings::aeTitle),
                member(StoreField::OurAeTitle, &DimseSettings::ourAeTitle),
                member(StoreField::Retrieve, &DimseSettings::retrieve),
                member(StoreField::Tls, &DimseSettings::tls),
                member(StoreField::CaFile, &DimseSettings::caFile)};
    }
    StoreSettings defaults() const override { return DimseSettings(); }
    Result<StoreSettings> readJson(const QJsonObject &json, const QString &where, QSet<QString> &read) const override
    {
        return readSettings<DimseSettings>(json, where, read, [](FieldReader &r, DimseSettings &s) {
            r.text("host", s.host);
            r.whole("port", s.port);
            r.text("aeTitle", s.aeTitle);
            r.text("ourAeTitle", s.ourAeTitle);
            r.text("retrieve", s.retrieve);
            r.flag("tls", s.tls);
            r.text("caFile", s.caFile);
        });
    }
    Error validate(const StoreConfig &store, const QString &where) const override
    {
        const DimseSettings &s = store.as<DimseSettings>();
        if (s.host.trimmed().isEmpty())
            return invalid(where, QStringLiteral("host is missing"));
        if (s.port < 1 || s.port > 65535)
            return invalid(where, QStringLiteral("port must be 1-65535"));
        if (!isValidAeTitle(s.aeTitle))
            return invalid(where, QStringLiteral("aeTitle '%1' is not an AE title (1-16 printable characters, no '\\')").arg(s.aeTitle));
        if (!s.ourAeTitle.isEmpty() && !isValidAeTitle(s.ourAeTitle))
            return invalid(where, QStringLiteral("ourAeTitle '%1' is not an AE title").arg(s.ourAeTitle));
        if (s.retrieve != QLatin1String("get") && s.retrieve != QLatin1String("move"))
            return invalid(where, QStringLiteral("retrieve is get or move"));
        return Error();
    }
    void writeJson(const StoreConfig &store, QJsonObject &o) const override
    {
        const DimseSettings &s = store.as<DimseSettings>();
        put(o, "host", s.host);
        o.insert(QStringLiteral("port"), s.port);
        put(o, "aeTitle", s.aeTitle);
        put(o, "ourAeTitle", s.ourAeTitle);
        o.insert(QStringLiteral("retrieve"), s.retrieve);
        if (s.tls) {
            o.insert(QStringLiteral("tls"), true);
            put(o, "caFile", s.caFile);
        }
    }
    QString summary(const StoreConfig &store) const override
    {
        const DimseSettings &s = store.as<DimseSettings>();
        return QStringLiteral("dimse %1@%2:%3 (C-%4%5)").arg(s.aeTitle, s.host).arg(s.port).arg(s.retrieve.toUpper(), s.tls ? QStringLiteral(", TLS") : QString());
    }
    std::optional<QPair<QString, QString>> dicomNode(const StoreConfig &store) const override
    {
        const DimseSettings &s = store.as<DimseSettings>();
        return qMakePair(s.aeTitle, s.host);
    }
    std::unique_ptr<Archive> makeArchive(const StoreConfig &s, const StoreConfigFile &all, std::shared_ptr<FileStore> cache) const override
    {
        return std::make_unique<DimseArchive>(s, all, std::move(cache));
    }
};

} // namespace
} // namespace spectrum::kinds

const spectrum::ArchiveKind &makeDimseKind()
{
    static const spectrum::kinds::DimseKind kind;
    return kind;
}
