// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a workstation's audit messages go, as the hospital configures it: the "audit" section of the store
// configuration — {"repository": "tls://audit.hospital.org:6514", "caFile", "certificate", "key", "sourceId",
// "site", "spool"}. The system configuration's (/etc/spectrum/stores.json) cannot be changed or turned off by a
// user's file: when the hospital set one, a user's "audit" is ignored. startAuditTrail() makes the process's trail
// of it, for each program's main().

#include "spectrum/core/result.h"

#include <QJsonObject>
#include <QString>

#include <memory>

namespace spectrum {

class AuditTrail;
class StoreConfigFile;

struct AuditConfig
{
    QString repository;       ///< tls://HOST[:PORT] or udp://HOST[:PORT]; empty: nothing is audited
    QString caFile;           ///< the CA of the repository's certificate (PEM; empty: the system's)
    QString certificateFile;  ///< this workstation's certificate for the repository (PEM), with its key
    QString keyFile;
    QString sourceId;         ///< AuditSourceID (default: this machine's host name)
    QString site;             ///< AuditEnterpriseSiteID (the hospital); empty: left out
    QString spoolDirectory;   ///< default: $XDG_STATE_HOME/spectrum/audit (~/.local/state/spectrum/audit)
    bool fromSystem = false;  ///< set by the system configuration: a user's cannot change it

    bool isSet() const { return !repository.isEmpty(); }
    static Result<AuditConfig> fromJson(const QJsonObject &json, const QString &where);
    QJsonObject toJson() const;
    /// The spool folder in use: spoolDirectory or the default.
    QString spool() const;
};

/// The audit section a program must follow: the one of the configuration at `userPath` (the hospital's over the
/// user's); when that cannot be read, the hospital's alone; and /etc/spectrum/stores.json's whenever it has one,
/// wherever SPECTRUM_SYSTEM_CONFIG points (a variable a user sets does not turn the hospital's audit off). An error
/// when the hospital's configuration exists and cannot be read: a program then must not run unaudited.
Result<AuditConfig> auditConfigToFollow(const QString &userPath);

/// The process's audit trail from the configuration's "audit" section, opened (what earlier runs left is sent
/// first) and installed as the process's sink (core's audit.h); null when no repository is configured. An error
/// when one is configured and its files or spool cannot be used — a program should then not run unaudited.
/// `sourceType`: 1 for a reading workstation's programs, 4 for a server.
Result<std::unique_ptr<AuditTrail>> startAuditTrail(const AuditConfig &config, const QString &program, int sourceType);

} // namespace spectrum
