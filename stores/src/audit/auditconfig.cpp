// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/audit/auditconfig.h"

#include "spectrum/core/audit/audit.h"
#include "spectrum/core/privatefile.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/transfer/audit/audittrail.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

namespace spectrum {

Result<AuditConfig> AuditConfig::fromJson(const QJsonObject &json, const QString &where)
{
    static const QStringList fields = {QStringLiteral("repository"), QStringLiteral("caFile"), QStringLiteral("certificate"), QStringLiteral("key"),
                                       QStringLiteral("sourceId"), QStringLiteral("site"), QStringLiteral("spool")};
    for (auto it = json.begin(); it != json.end(); ++it) {
        if (!fields.contains(it.key()))
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: audit: unknown field '%2' (%3)").arg(where, it.key(), fields.join(QStringLiteral(", "))));
        if (!it.value().isString())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: audit %2 must be a string").arg(where, it.key()));
    }
    AuditConfig c;
    c.repository = json.value(QStringLiteral("repository")).toString().trimmed();
    c.caFile = json.value(QStringLiteral("caFile")).toString();
    c.certificateFile = json.value(QStringLiteral("certificate")).toString();
    c.keyFile = json.value(QStringLiteral("key")).toString();
    c.sourceId = json.value(QStringLiteral("sourceId")).toString().trimmed();
    c.site = json.value(QStringLiteral("site")).toString().trimmed();
    c.spoolDirectory = json.value(QStringLiteral("spool")).toString();
    if (c.repository.isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: audit needs its repository: \"tls://HOST:6514\" (or udp://HOST:514)").arg(where));
    Result<AuditRepository> r = AuditRepository::fromUrl(c.repository);
    if (!r.isOk())
        return r.error().withContext(where);
    if (c.certificateFile.isEmpty() != c.keyFile.isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: audit certificate and key go together").arg(where));
    if (r.value().transport == AuditRepository::Transport::Udp && !(c.caFile.isEmpty() && c.certificateFile.isEmpty()))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: audit over UDP has no TLS: caFile, certificate and key are for tls://").arg(where));
    return c;
}

QJsonObject AuditConfig::toJson() const
{
    QJsonObject o{{QStringLiteral("repository"), repository}};
    const QList<QPair<const char *, QString>> optional = {{"caFile", caFile}, {"certificate", certificateFile}, {"key", keyFile},
                                                          {"sourceId", sourceId}, {"site", site}, {"spool", spoolDirectory}};
    for (const auto &[name, value] : optional) {
        if (!value.isEmpty())
            o.insert(QLatin1String(name), value);
    }
    return o;
}

QString AuditConfig::spool() const
{
    if (!spoolDirectory.isEmpty())
        return spoolDirectory;
    QString state = qEnvironmentVariable("XDG_STATE_HOME");
    if (state.isEmpty())
        state = QDir::homePath() + QStringLiteral("/.local/state");
    return state + QStringLiteral("/spectrum/audit");
}

Result<AuditConfig> auditConfigToFollow(const QString &userPath)
{
    AuditConfig audit;
    if (Result<StoreConfigFile> both = StoreConfigFile::load(userPath); both.isOk()) {
        audit = both.value().audit;
    } else if (QFile::exists(StoreConfigFile::systemPath())) {
        Result<StoreConfigFile> hospital = StoreConfigFile::load(StoreConfigFile::systemPath());
        if (!hospital.isOk())
            return hospital.error();
        audit = hospital.value().audit;
        audit.fromSystem = audit.isSet();
    }
    const QString etc = QStringLiteral("/etc/spectrum/stores.json");
    if (StoreConfigFile::systemPath() != etc && QFile::exists(etc)) {
        QFile f(etc);
        if (!f.open(QIODevice::ReadOnly))
            return Error(ErrorCode::Io, QStringLiteral("cannot read the hospital's configuration %1: %2").arg(etc, f.errorString()));
        Result<StoreConfigFile> hospital = StoreConfigFile::parse(f.read(4 << 20), etc);
        if (!hospital.isOk())
            return hospital.error();
        if (hospital.value().audit.isSet()) {
            audit = hospital.value().audit;
            audit.fromSystem = true;
        }
    }
    return audit;
}

Result<std::unique_ptr<AuditTrail>> startAuditTrail(const AuditConfig &config, const QString &program, int sourceType)
{
    setAuditProgram(program);
    if (!config.isSet())
        return std::unique_ptr<AuditTrail>();
    Result<AuditRepository> repository = AuditRepository::fromUrl(config.repository);
    if (!repository.isOk())
        return repository.error();
    repository.value().caFile = config.caFile;
    repository.value().certificateFile = config.certificateFile;
    repository.value().keyFile = config.keyFile;
    for (const QString &file : {config.caFile, config.certificateFile}) {
        if (!file.isEmpty() && !QFileInfo(file).isReadable())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("audit: %1 cannot be read").arg(file));
    }
    if (!config.keyFile.isEmpty()) {
        if (Error e = checkPrivateFile(config.keyFile, QStringLiteral("the audit certificate's key")); e.isError())
            return e;
    }
    AuditTrailOptions o;
    o.repository = repository.value();
    o.spoolDirectory = config.spool();
    o.program = program;
    o.source = AuditSource{config.sourceId.isEmpty() ? auditHostName() : config.sourceId, config.site, sourceType};
    auto trail = std::make_unique<AuditTrail>(o);
    if (Error e = trail->open(); e.isError())
        return e;
    installAuditSink(trail.get());
    return trail;
}

} // namespace spectrum
