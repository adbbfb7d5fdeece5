// SPDX-License-Identifier: Apache-2.0
#pragma once
// The process's audit trail, as every layer sees it: audit(message) from any thread hands a message to the
// sink main() installed (transfer's AuditTrail: kept on disk, sent to the hospital's audit repository); nothing
// happens when none is (tests, a workstation whose hospital has not configured one). Who reads (the signed-in
// user, else this machine's login) and on which machine are filled in here, once for every message.

#include "spectrum/core/audit/auditmessage.h"

namespace spectrum {

class AuditSink
{
public:
    virtual ~AuditSink() = default;
    /// Keeps the message (called on any thread; returns at once).
    virtual void record(const AuditMessage &message) = 0;
};

/// Installs `sink` for the process (not owned; null uninstalls). The sink must outlive every audit() call
/// until it is uninstalled.
void installAuditSink(AuditSink *sink);
/// Uninstalls `sink` if it is the one installed (a sink going away).
void uninstallAuditSink(AuditSink *sink);
bool isAuditing();
/// Hands `message` to the sink (thread-safe); nothing without one.
void audit(const AuditMessage &message);

/// The person reading: the login of this machine's account until someone signs in (OpenID Connect), then the
/// identity provider's subject and name.
struct AuditUser
{
    QString id;        ///< UserID: "drsmith", or the signed-in user's preferred name / e-mail
    QString name;      ///< UserName: "Dr. Anna Smith" (empty when unknown)
    QString alternativeId; ///< AlternativeUserID: the identity provider's subject, or the login it replaces
    QString identityProvider; ///< the issuer (empty: the machine's own login)
};
AuditUser auditUser();
void setAuditUser(const AuditUser &user);
/// Back to this machine's login (sign-out).
void resetAuditUser();

/// This machine, as audit messages name it (its host name), and the program reporting ("spectrum", "spectrum-cli").
QString auditHostName();
QString auditProgram();
void setAuditProgram(const QString &program);

} // namespace spectrum
