// SPDX-License-Identifier: Apache-2.0
#pragma once
// The audit messages Spectrum sends, each as DICOM PS3.15 A.5.3 lays it out: the event's codes, the participants
// it names (the reading user as requestor, this program, the archive at the other end) and the objects (the
// patient and the study, a query). The reading user and this machine come from audit.h.

#include "spectrum/core/audit/auditmessage.h"

namespace spectrum::auditevents {

/// A study as an audit message names it, with its patient.
struct Study
{
    QString studyUid;
    QString patientId;
    QString patientName;      ///< DICOM PN as stored
    QString accessionNumber;
    QList<QPair<QString, int>> sopClasses;  ///< SOP Class UID, instances of it (empty: not known)
};

/// A node at the other end: an archive ("PACS" at https://pacs/dicom-web, an AE title at host:port), a client.
struct Peer
{
    QString id;       ///< the store's URL or "AE@host:port": UserID
    QString name;     ///< the store's name as configured: AlternativeUserID
    QString host;     ///< NetworkAccessPointID (a name or an address)
};

using Outcome = AuditMessage::Outcome;

/// Application Activity (110100): this program started (110120) or stopped (110121).
AuditMessage applicationActivity(bool started, Outcome outcome = Outcome::Success, const QString &why = QString());
/// User Authentication (110114): login (110122) or logout (110123) of the reading user at an identity provider.
AuditMessage userAuthentication(bool login, const Peer &identityProvider, Outcome outcome = Outcome::Success, const QString &why = QString());
/// DICOM Instances Accessed (110103): studies read (R: opened, shown) or created here (C: findings saved locally).
AuditMessage instancesAccessed(QChar action, const QList<Study> &studies, Outcome outcome = Outcome::Success, const QString &why = QString());
/// Query (110112) sent to `archive`: `model` the SOP Class of the query (Study Root FIND), `request` its bytes
/// (its matching keys as DICOM keywords, "PatientID=…&StudyDate=…").
AuditMessage query(const Peer &archive, const QString &model, const QByteArray &request, Outcome outcome = Outcome::Success, const QString &why = QString());
/// Begin Transferring DICOM Instances (110102): a retrieve of `study` from `source` starts.
AuditMessage beginTransferring(const Peer &source, const Study &study);
/// DICOM Instances Transferred (110104): instances of `study` came from `source` into this workstation
/// (`toUs`), or went from it to `destination` (!toUs). C: the receiver makes new instances; R: it had them.
AuditMessage instancesTransferred(bool toUs, const Peer &remote, const Study &study, QChar action, Outcome outcome = Outcome::Success,
                                  const QString &why = QString());
/// Export (110106): `study` written to a folder (`destination`, a path) — de-identified or not.
AuditMessage dataExport(const QString &destination, const Study &study, bool deidentified, Outcome outcome = Outcome::Success,
                        const QString &why = QString());
/// Security Alert (110113) about `peer`, `what` said in words: a node not authenticated (110126: a certificate
/// refused, an association refused) or credentials refused (110132 Use of Restricted Function: a wrong token).
enum class Alert { NodeAuthentication, UseOfRestrictedFunction };
/// Client: the reader's request was refused by `peer`; Server: a server of ours (the Storage SCP, the blob server)
/// refused `peer` — then no reader is named, the program reports and the caller performed.
enum class AlertBy { Client, Server };
AuditMessage securityAlert(Alert type, const Peer &peer, const QString &what, AlertBy by = AlertBy::Client);

/// The codes, for tests and the trail's summary.
AuditCode eventCode(const QString &code);

} // namespace spectrum::auditevents
