// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/audit/auditevents.h"

#include "spectrum/core/audit/audit.h"

#include <QHash>
#include <QRegularExpression>

#include <unistd.h>

namespace spectrum::auditevents {

namespace {

AuditCode dcm(const char *code, const char *meaning)
{
    return AuditCode{QLatin1String(code), QStringLiteral("DCM"), QLatin1String(meaning)};
}

AuditParticipant::AccessPointType accessPointType(const QString &host)
{
    static const QRegularExpression address(QStringLiteral("^(\\d{1,3}(\\.\\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)$"));
    return address.match(host).hasMatch() ? AuditParticipant::AccessPointType::IpAddress : AuditParticipant::AccessPointType::MachineName;
}

/// The person reading, who asked for what happened.
AuditParticipant reader(QList<AuditCode> roles = {})
{
    const AuditUser u = auditUser();
    AuditParticipant p;
    p.userId = u.id;
    p.userName = u.name;
    p.alternativeUserId = u.alternativeId;
    p.requestor = true;
    p.networkAccessPoint = auditHostName();
    p.accessPointType = AuditParticipant::AccessPointType::MachineName;
    p.roles = std::move(roles);
    return p;
}

/// This program on this machine.
AuditParticipant us(QList<AuditCode> roles = {})
{
    AuditParticipant p;
    p.userId = auditProgram();
    p.alternativeUserId = QString::number(qint64(::getpid()));
    p.requestor = false;
    p.networkAccessPoint = auditHostName();
    p.accessPointType = AuditParticipant::AccessPointType::MachineName;
    p.roles = std::move(roles);
    return p;
}

AuditParticipant peer(const Peer &node, QList<AuditCode> roles = {})
{
    AuditParticipant p;
    p.userId = node.id;
    p.alternativeUserId = node.name;
    p.requestor = false;
    p.networkAccessPoint = node.host;
    p.accessPointType = node.host.isEmpty() ? AuditParticipant::AccessPointType::None : accessPointType(node.host);
    p.roles = std::move(roles);
    return p;
}

AuditObject patientObject(const Study &s)
{
    AuditObject o;
    o.id = s.patientId;
    o.type = AuditObject::Type::Person;
    o.role = AuditObject::Role::Patient;
    o.idType = AuditCode{QStringLiteral("2"), QStringLiteral("RFC-3881"), QStringLiteral("Patient Number")};
    o.name = s.patientName.isEmpty() ? s.patientId : s.patientName;
    return o;
}

AuditObject studyObject(const Study &s)
{
    AuditObject o;
    o.id = s.studyUid;
    o.type = AuditObject::Type::SystemObject;
    o.role = AuditObject::Role::Report;
    o.idType = dcm("110180", "Study Instance UID");
    if (!s.accessionNumber.isEmpty())
        o.accessions = {s.accessionNumber};
    o.sopClasses = s.sopClasses;
    return o;
}

AuditMessage event(AuditCode id, QChar action, Outcome outcome, const QString &why)
{
    AuditMessage m;
    m.event = std::move(id);
    m.action = action;
    m.when = QDateTime::currentDateTimeUtc();
    m.outcome = outcome;
    m.outcomeDescription = why;
    return m;
}

/// The study, then its patient (A.5.3: one patient per message) — when it is known: a retrieve that begins may
/// not know it yet, and an empty Patient ID would name no one.
void addStudy(AuditMessage &m, const Study &s)
{
    m.objects.append(studyObject(s));
    if (!s.patientId.isEmpty())
        m.objects.append(patientObject(s));
}

} // namespace

AuditCode eventCode(const QString &code)
{
    static const QHash<QString, const char *> meanings = {
        {QStringLiteral("110100"), "Application Activity"},  {QStringLiteral("110102"), "Begin Transferring DICOM Instances"},
        {QStringLiteral("110103"), "DICOM Instances Accessed"}, {QStringLiteral("110104"), "DICOM Instances Transferred"},
        {QStringLiteral("110106"), "Export"},                {QStringLiteral("110112"), "Query"},
        {QStringLiteral("110113"), "Security Alert"},        {QStringLiteral("110114"), "User Authentication"},
    };
    return AuditCode{code, QStringLiteral("DCM"), QLatin1String(meanings.value(code, ""))};
}

AuditMessage applicationActivity(bool started, Outcome outcome, const QString &why)
{
    AuditMessage m = event(eventCode(QStringLiteral("110100")), QLatin1Char('E'), outcome, why);
    m.eventTypes = {started ? dcm("110120", "Application Start") : dcm("110121", "Application Stop")};
    m.participants = {us({dcm("110150", "Application")}), reader({dcm("110151", "Application Launcher")})};
    return m;
}

AuditMessage userAuthentication(bool login, const Peer &identityProvider, Outcome outcome, const QString &why)
{
    AuditMessage m = event(eventCode(QStringLiteral("110114")), QLatin1Char('E'), outcome, why);
    m.eventTypes = {login ? dcm("110122", "Login") : dcm("110123", "Logout")};
    m.participants = {reader(), us(), peer(identityProvider)};
    return m;
}

AuditMessage instancesAccessed(QChar action, const QList<Study> &studies, Outcome outcome, const QString &why)
{
    AuditMessage m = event(eventCode(QStringLiteral("110103")), action, outcome, why);
    m.participants = {reader(), us()};
    QStringList patients;
    for (const Study &s : studies) {
        m.objects.append(studyObject(s));
        if (!patients.contains(s.patientId)) {
            patients.append(s.patientId);
            m.objects.append(patientObject(s));
        }
    }
    return m;
}

AuditMessage query(const Peer &archive, const QString &model, const QByteArray &request, Outcome outcome, const QString &why)
{
    AuditMessage m = event(eventCode(QStringLiteral("110112")), QLatin1Char('E'), outcome, why);
    m.participants = {reader(), us({dcm("110153", "Source Role ID")}), peer(archive, {dcm("110152", "Destination Role ID")})};
    AuditObject q;
    q.id = model;
    q.type = AuditObject::Type::SystemObject;
    q.role = AuditObject::Role::Query;
    q.idType = dcm("110181", "SOP Class UID");
    q.query = request.isEmpty() ? QByteArray(" ") : request;
    m.objects = {q};
    return m;
}

AuditMessage beginTransferring(const Peer &source, const Study &study)
{
    AuditMessage m = event(eventCode(QStringLiteral("110102")), QLatin1Char('E'), Outcome::Success, QString());
    m.participants = {reader(), peer(source, {dcm("110153", "Source Role ID")}), us({dcm("110152", "Destination Role ID")})};
    addStudy(m, study);
    return m;
}

AuditMessage instancesTransferred(bool toUs, const Peer &remote, const Study &study, QChar action, Outcome outcome, const QString &why)
{
    AuditMessage m = event(eventCode(QStringLiteral("110104")), action, outcome, why);
    const AuditCode source = dcm("110153", "Source Role ID"), destination = dcm("110152", "Destination Role ID");
    m.participants = {reader(), toUs ? peer(remote, {source}) : us({source}), toUs ? us({destination}) : peer(remote, {destination})};
    addStudy(m, study);
    return m;
}

AuditMessage dataExport(const QString &destination, const Study &study, bool deidentified, Outcome outcome, const QString &why)
{
    AuditMessage m = event(eventCode(QStringLiteral("110106")), QLatin1Char('R'), outcome, why);
    AuditParticipant media;
    media.userId = destination;
    media.requestor = false;
    media.roles = {dcm("110154", "Destination Media")};
    media.media = dcm("110037", "URI");
    m.participants = {reader({dcm("110153", "Source Role ID")}), us(), media};
    AuditObject s = studyObject(study);
    s.lifeCycle = deidentified ? 7 : 10;  // de-identification, export
    s.anonymized = deidentified;
    m.objects = {s, patientObject(study)};
    return m;
}

AuditMessage securityAlert(Alert type, const Peer &node, const QString &what, AlertBy by)
{
    AuditMessage m = event(eventCode(QStringLiteral("110113")), QLatin1Char('E'), Outcome::MinorFailure, what);
    m.eventTypes = {type == Alert::NodeAuthentication ? dcm("110126", "Node Authentication") : dcm("110132", "Use of Restricted Function")};
    if (by == AlertBy::Server) {
        // A caller refused by a server of ours: this program reports it, the caller did it; no reader took part.
        AuditParticipant reporting = us();
        reporting.requestor = true;
        AuditParticipant performing = peer(node);
        m.participants = {reporting, performing};
    } else {
        m.participants = {reader(), us(), peer(node)};
    }
    AuditObject subject;
    subject.id = node.id;
    subject.type = AuditObject::Type::SystemObject;
    subject.role = AuditObject::Role::SecurityResource;
    subject.idType = dcm("110182", "Node ID");
    subject.name = node.name;
    subject.details = {{QStringLiteral("Alert Description"), what.toUtf8()}};
    m.objects = {subject};
    return m;
}

} // namespace spectrum::auditevents
