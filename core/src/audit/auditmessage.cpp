// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/audit/auditmessage.h"

#include <QXmlStreamWriter>

namespace spectrum {

namespace {

/// XML 1.0 allows neither most control characters nor unpaired surrogates: a DICOM value may hold them (a
/// damaged patient name), an audit message must still be well-formed. They become U+FFFD.
QString xmlSafe(const QString &text)
{
    QString out;
    out.reserve(text.size());
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text.at(i);
        if (c.isHighSurrogate() && i + 1 < text.size() && text.at(i + 1).isLowSurrogate()) {
            out.append(c);
            out.append(text.at(++i));
        } else if (c.isSurrogate() || (c.unicode() < 0x20 && c != QLatin1Char('\t') && c != QLatin1Char('\n') && c != QLatin1Char('\r'))
                   || c.unicode() == 0xFFFE || c.unicode() == 0xFFFF) {
            out.append(QChar(0xFFFD));
        } else {
            out.append(c);
        }
    }
    return out;
}

/// An xsd:token: no line breaks or tabs, no leading, trailing or doubled spaces.
QString token(const QString &text)
{
    return xmlSafe(text).simplified();
}

void writeCode(QXmlStreamWriter &w, const QString &element, const AuditCode &code)
{
    w.writeEmptyElement(element);
    w.writeAttribute(QStringLiteral("csd-code"), token(code.code));
    w.writeAttribute(QStringLiteral("codeSystemName"), token(code.system));
    w.writeAttribute(QStringLiteral("originalText"), token(code.meaning));
}

QString boolText(bool b)
{
    return b ? QStringLiteral("true") : QStringLiteral("false");
}

void writeParticipant(QXmlStreamWriter &w, const AuditParticipant &p)
{
    w.writeStartElement(QStringLiteral("ActiveParticipant"));
    w.writeAttribute(QStringLiteral("UserID"), xmlSafe(p.userId));
    if (!p.alternativeUserId.isEmpty())
        w.writeAttribute(QStringLiteral("AlternativeUserID"), xmlSafe(p.alternativeUserId));
    if (!p.userName.isEmpty())
        w.writeAttribute(QStringLiteral("UserName"), xmlSafe(p.userName));
    w.writeAttribute(QStringLiteral("UserIsRequestor"), boolText(p.requestor));
    if (p.accessPointType != AuditParticipant::AccessPointType::None && !p.networkAccessPoint.isEmpty()) {
        w.writeAttribute(QStringLiteral("NetworkAccessPointID"), token(p.networkAccessPoint));
        w.writeAttribute(QStringLiteral("NetworkAccessPointTypeCode"), QString::number(int(p.accessPointType)));
    }
    for (const AuditCode &role : p.roles)
        writeCode(w, QStringLiteral("RoleIDCode"), role);
    if (p.media) {
        w.writeStartElement(QStringLiteral("MediaIdentifier"));
        writeCode(w, QStringLiteral("MediaType"), *p.media);
        w.writeEndElement();
    }
    w.writeEndElement();
}

void writeObject(QXmlStreamWriter &w, const AuditObject &o)
{
    w.writeStartElement(QStringLiteral("ParticipantObjectIdentification"));
    w.writeAttribute(QStringLiteral("ParticipantObjectID"), token(o.id));
    if (o.type != AuditObject::Type::None)
        w.writeAttribute(QStringLiteral("ParticipantObjectTypeCode"), QString::number(int(o.type)));
    if (o.role != AuditObject::Role::None)
        w.writeAttribute(QStringLiteral("ParticipantObjectTypeCodeRole"), QString::number(int(o.role)));
    if (o.lifeCycle > 0)
        w.writeAttribute(QStringLiteral("ParticipantObjectDataLifeCycle"), QString::number(o.lifeCycle));
    writeCode(w, QStringLiteral("ParticipantObjectIDTypeCode"), o.idType);
    // The schema wants a name or a query (A.5.1): a query's bytes, else the name — the ID again when there is none.
    if (!o.query.isEmpty())
        w.writeTextElement(QStringLiteral("ParticipantObjectQuery"), QString::fromLatin1(o.query.toBase64()));
    else
        w.writeTextElement(QStringLiteral("ParticipantObjectName"), token(o.name.isEmpty() ? o.id : o.name));
    for (const auto &[type, value] : o.details) {
        w.writeEmptyElement(QStringLiteral("ParticipantObjectDetail"));
        w.writeAttribute(QStringLiteral("type"), token(type));
        w.writeAttribute(QStringLiteral("value"), QString::fromLatin1(value.toBase64()));
    }
    if (o.hasDescription || !o.sopClasses.isEmpty() || !o.accessions.isEmpty() || o.anonymized || o.encrypted) {
        w.writeStartElement(QStringLiteral("ParticipantObjectDescription"));
        for (const QString &accession : o.accessions) {
            w.writeEmptyElement(QStringLiteral("Accession"));
            w.writeAttribute(QStringLiteral("Number"), token(accession));
        }
        for (const auto &[uid, count] : o.sopClasses) {
            w.writeEmptyElement(QStringLiteral("SOPClass"));
            if (!uid.isEmpty())
                w.writeAttribute(QStringLiteral("UID"), token(uid));
            w.writeAttribute(QStringLiteral("NumberOfInstances"), QString::number(count));
        }
        if (o.encrypted)
            w.writeTextElement(QStringLiteral("Encrypted"), boolText(*o.encrypted));
        if (o.anonymized)
            w.writeTextElement(QStringLiteral("Anonymized"), boolText(*o.anonymized));
        w.writeEndElement();
    }
    w.writeEndElement();
}

} // namespace

QByteArray AuditMessage::toXml(const AuditSource &source) const
{
    QByteArray xml;
    QXmlStreamWriter w(&xml);
    w.writeStartElement(QStringLiteral("AuditMessage"));
    w.writeStartElement(QStringLiteral("EventIdentification"));
    if (!action.isNull())
        w.writeAttribute(QStringLiteral("EventActionCode"), QString(action));
    const QDateTime at = (when.isValid() ? when : QDateTime::currentDateTimeUtc()).toUTC();
    w.writeAttribute(QStringLiteral("EventDateTime"), at.toString(Qt::ISODateWithMs));
    w.writeAttribute(QStringLiteral("EventOutcomeIndicator"), QString::number(int(outcome)));
    writeCode(w, QStringLiteral("EventID"), event);
    for (const AuditCode &type : eventTypes)
        writeCode(w, QStringLiteral("EventTypeCode"), type);
    if (!outcomeDescription.isEmpty())
        w.writeTextElement(QStringLiteral("EventOutcomeDescription"), xmlSafe(outcomeDescription));
    w.writeEndElement();
    for (const AuditParticipant &p : participants)
        writeParticipant(w, p);
    w.writeStartElement(QStringLiteral("AuditSourceIdentification"));
    if (!source.siteId.isEmpty())
        w.writeAttribute(QStringLiteral("AuditEnterpriseSiteID"), token(source.siteId));
    w.writeAttribute(QStringLiteral("AuditSourceID"), token(source.sourceId));
    w.writeEmptyElement(QStringLiteral("AuditSourceTypeCode"));
    w.writeAttribute(QStringLiteral("csd-code"), QString::number(source.typeCode));
    w.writeEndElement();
    for (const AuditObject &o : objects)
        writeObject(w, o);
    w.writeEndElement();
    return xml;
}

QString AuditMessage::summary() const
{
    QString who;
    for (const AuditParticipant &p : participants) {
        if (p.requestor) {
            who = p.userId;
            break;
        }
    }
    QStringList types;
    for (const AuditCode &t : eventTypes)
        types << t.meaning;
    return QStringLiteral("%1 (%2)%3%4: %5").arg(event.meaning, event.code, types.isEmpty() ? QString() : QStringLiteral(", ") + types.join(QStringLiteral(", ")),
                                                 who.isEmpty() ? QString() : QStringLiteral(" by ") + who,
                                               outcome == Outcome::Success ? QStringLiteral("success") : QStringLiteral("failure %1").arg(outcomeDescription));
}

} // namespace spectrum
