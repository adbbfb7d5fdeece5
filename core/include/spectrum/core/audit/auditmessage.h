// SPDX-License-Identifier: Apache-2.0
#pragma once
// An audit message as DICOM PS3.15 A.5 defines it (the RFC 3881 schema as DICOM extends it): what happened
// (EventIdentification), who took part (ActiveParticipant), what was touched (ParticipantObjectIdentification),
// and who reports it (AuditSourceIdentification, added by the trail that sends it). A plain value; toXml() writes
// it as the schema of A.5.1 wants (checked against it with xmllint in tst_auditmessage). What each event holds
// is auditevents.h's business.

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

#include <optional>

namespace spectrum {

/// A coded value: csd-code, codeSystemName, originalText (the code's meaning).
struct AuditCode
{
    QString code;
    QString system;
    QString meaning;
};

struct AuditParticipant
{
    QString userId;             ///< who: a person's login, a process, an AE title, a URL
    QString alternativeUserId;  ///< "AETITLES=…", a process id
    QString userName;           ///< a person's name as people say it
    bool requestor = false;     ///< started the event
    QString networkAccessPoint; ///< host name or address
    enum class AccessPointType { None = 0, MachineName = 1, IpAddress = 2, Uri = 5 };
    AccessPointType accessPointType = AccessPointType::None;
    QList<AuditCode> roles;     ///< 110150 Application, 110152 Destination, 110153 Source…
    std::optional<AuditCode> media; ///< MediaIdentifier/MediaType, for an export's destination media
};

struct AuditObject
{
    enum class Type { None = 0, Person = 1, SystemObject = 2, Organization = 3, Other = 4 };
    enum class Role { None = 0, Patient = 1, Report = 3, Resource = 4, MasterFile = 5, User = 6, List = 7, SecurityResource = 13,
                      DataDestination = 16, DataRepository = 17, Job = 20, Query = 24, DataSource = 25 };
    QString id;                  ///< ParticipantObjectID: a Study Instance UID, a Patient ID, a SOP Class UID, a URL
    Type type = Type::None;
    Role role = Role::None;
    int lifeCycle = 0;           ///< ParticipantObjectDataLifeCycle (0: none): 6 access, 7 de-identification, 10 export…
    AuditCode idType;            ///< ParticipantObjectIDTypeCode
    QString name;                ///< ParticipantObjectName (a patient's name)
    QByteArray query;            ///< ParticipantObjectQuery (written base64): instead of the name, for a query
    QList<QPair<QString, QByteArray>> details;  ///< ParticipantObjectDetail type/value (value written base64)
    // ParticipantObjectDescription (DICOM's), for a study:
    QStringList accessions;
    QList<QPair<QString, int>> sopClasses;      ///< SOP Class UID and how many instances of it
    bool hasDescription = false;                ///< writes the description even with no class (Anonymized…)
    std::optional<bool> anonymized;
    std::optional<bool> encrypted;
};

struct AuditSource
{
    QString sourceId;      ///< AuditSourceID: this workstation (its host name by default, or configured)
    QString siteId;        ///< AuditEnterpriseSiteID (the hospital), empty: left out
    int typeCode = 1;      ///< 1 end-user display device, 4 application server…
};

struct AuditMessage
{
    enum class Outcome { Success = 0, MinorFailure = 4, SeriousFailure = 8, MajorFailure = 12 };
    AuditCode event;                 ///< EventID: 110100 Application Activity, 110112 Query…
    QList<AuditCode> eventTypes;     ///< EventTypeCode: 110120 Application Start…
    QChar action;                    ///< C, R, U, D, E; null: left out
    QDateTime when;                  ///< UTC, to the millisecond
    Outcome outcome = Outcome::Success;
    QString outcomeDescription;      ///< why it failed (EventOutcomeDescription)
    QList<AuditParticipant> participants;
    QList<AuditObject> objects;

    /// The XML of A.5.1, UTF-8, without an XML declaration (as syslog carries it); `source` reports it.
    QByteArray toXml(const AuditSource &source) const;
    /// "Query (110112) by drsmith: success" — for logs and tests.
    QString summary() const;
};

} // namespace spectrum
