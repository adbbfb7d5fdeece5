// SPDX-License-Identifier: Apache-2.0
// The audit messages as DICOM PS3.15 A.5 wants them: every kind Spectrum sends is valid against the standard's
// schema (A.5.1, checked by xmllint), says the right event and names the reader, the patient and the study; and
// text no schema expects (a damaged patient name, markup, control characters) cannot break the XML.

#include "spectrum/core/audit/audit.h"
#include "spectrum/core/audit/auditevents.h"

#include "auditrepository.h"

#include <QTest>
#include <QXmlStreamReader>

using namespace spectrum;
namespace ae = spectrum::auditevents;

namespace {

ae::Study study()
{
    ae::Study s;
    s.studyUid = QStringLiteral("1.2.826.0.1.3680043.8.498.1");
    s.patientId = QStringLiteral("PAT-0042");
    s.patientName = QStringLiteral("Müller^Anna");
    s.accessionNumber = QStringLiteral("ACC 17");
    s.sopClasses = {{QStringLiteral("1.2.840.10008.5.1.4.1.1.2"), 120}, {QStringLiteral("1.2.840.10008.5.1.4.1.1.88.22"), 1}};
    return s;
}

ae::Peer pacs()
{
    return ae::Peer{QStringLiteral("https://pacs.hospital.test/dicom-web"), QStringLiteral("PACS"), QStringLiteral("pacs.hospital.test")};
}

AuditSource source()
{
    return AuditSource{QStringLiteral("RR-WS-12"), QStringLiteral("St Elsewhere"), 1};
}

/// Every attribute value of every element named `element`, in order.
QStringList attributeValues(const QByteArray &xml, const QString &element, const QString &attribute)
{
    QStringList out;
    QXmlStreamReader r(xml);
    while (!r.atEnd()) {
        r.readNext();
        if (r.isStartElement() && r.name() == element)
            out.append(r.attributes().value(attribute).toString());
    }
    return out;
}

QStringList elementTexts(const QByteArray &xml, const QString &element)
{
    QStringList out;
    QXmlStreamReader r(xml);
    while (!r.atEnd()) {
        r.readNext();
        if (r.isStartElement() && r.name() == element)
            out.append(r.readElementText());
    }
    return out;
}

} // namespace

class tst_AuditMessage : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void everyKindIsValidAgainstTheSchema_data()
    {
        QTest::addColumn<AuditMessage>("message");
        QTest::addColumn<QString>("eventId");
        QTest::newRow("start") << ae::applicationActivity(true) << "110100";
        QTest::newRow("stop") << ae::applicationActivity(false) << "110100";
        QTest::newRow("login") << ae::userAuthentication(true, ae::Peer{QStringLiteral("https://idp.test/"), QStringLiteral("Hospital SSO"), QStringLiteral("127.0.0.1")}) << "110114";
        QTest::newRow("login refused") << ae::userAuthentication(true, ae::Peer{QStringLiteral("https://idp.test/"), QString(), QString()}, AuditMessage::Outcome::SeriousFailure, QStringLiteral("state did not match")) << "110114";
        QTest::newRow("logout") << ae::userAuthentication(false, ae::Peer{QStringLiteral("https://idp.test/"), QString(), QString()}) << "110114";
        QTest::newRow("opened") << ae::instancesAccessed(QLatin1Char('R'), {study()}) << "110103";
        QTest::newRow("query") << ae::query(pacs(), QStringLiteral("1.2.840.10008.5.1.4.1.2.2.1"), "PatientName=M*&StudyDate=20260101-") << "110112";
        QTest::newRow("empty query") << ae::query(pacs(), QStringLiteral("1.2.840.10008.5.1.4.1.2.2.1"), QByteArray()) << "110112";
        QTest::newRow("begin") << ae::beginTransferring(pacs(), study()) << "110102";
        QTest::newRow("retrieved") << ae::instancesTransferred(true, pacs(), study(), QLatin1Char('C')) << "110104";
        QTest::newRow("sent") << ae::instancesTransferred(false, pacs(), study(), QLatin1Char('C'), AuditMessage::Outcome::MinorFailure, QStringLiteral("1 of 3 refused")) << "110104";
        QTest::newRow("export") << ae::dataExport(QStringLiteral("file:///media/usb/export"), study(), false) << "110106";
        QTest::newRow("de-identified export") << ae::dataExport(QStringLiteral("file:///tmp/anon"), study(), true) << "110106";
        QTest::newRow("alert") << ae::securityAlert(ae::Alert::NodeAuthentication, ae::Peer{QStringLiteral("EVIL@10.0.0.9:104"), QStringLiteral("EVIL"), QStringLiteral("10.0.0.9")}, QStringLiteral("refused an association")) << "110113";
        QTest::newRow("token alert") << ae::securityAlert(ae::Alert::UseOfRestrictedFunction, pacs(), QStringLiteral("the token was refused (HTTP 401)")) << "110113";
    }
    void everyKindIsValidAgainstTheSchema()
    {
        QFETCH(AuditMessage, message);
        QFETCH(QString, eventId);
        const QByteArray xml = message.toXml(source());
        const QString invalid = test::validateAuditXml(xml);
        QVERIFY2(invalid.isEmpty(), qPrintable(invalid + QStringLiteral("\n") + QString::fromUtf8(xml)));
        QCOMPARE(test::auditEventId(xml), eventId);
        // Who asked is always named: the reader, as requestor.
        QVERIFY(attributeValues(xml, QStringLiteral("ActiveParticipant"), QStringLiteral("UserIsRequestor")).contains(QStringLiteral("true")));
        QCOMPARE(attributeValues(xml, QStringLiteral("AuditSourceIdentification"), QStringLiteral("AuditSourceID")), QStringList{QStringLiteral("RR-WS-12")});
    }

    void theSchemaRefusesWhatIsWrong()
    {
        // The check can fail: a message without its participants, and one with an outcome the standard lacks.
        QByteArray xml = ae::applicationActivity(true).toXml(source());
        QVERIFY(test::validateAuditXml(xml).isEmpty());
        QByteArray wrongOutcome = xml;
        wrongOutcome.replace("EventOutcomeIndicator=\"0\"", "EventOutcomeIndicator=\"3\"");
        QVERIFY(!test::validateAuditXml(wrongOutcome).isEmpty());
        AuditMessage nobody = ae::applicationActivity(true);
        nobody.participants.clear();
        QVERIFY(!test::validateAuditXml(nobody.toXml(source())).isEmpty());
    }

    void thePatientAndTheStudyAreNamed()
    {
        const QByteArray xml = ae::instancesAccessed(QLatin1Char('R'), {study()}).toXml(source());
        const QStringList ids = attributeValues(xml, QStringLiteral("ParticipantObjectIdentification"), QStringLiteral("ParticipantObjectID"));
        QCOMPARE(ids, (QStringList{study().studyUid, study().patientId}));
        QVERIFY(QString::fromUtf8(xml).contains(QStringLiteral("<ParticipantObjectName>Müller^Anna</ParticipantObjectName>")));
        QCOMPARE(attributeValues(xml, QStringLiteral("SOPClass"), QStringLiteral("NumberOfInstances")), (QStringList{QStringLiteral("120"), QStringLiteral("1")}));
        QCOMPARE(attributeValues(xml, QStringLiteral("Accession"), QStringLiteral("Number")), QStringList{QStringLiteral("ACC 17")});
        // The reader is this machine's login until someone signs in; then the signed-in user.
        QCOMPARE(attributeValues(xml, QStringLiteral("ActiveParticipant"), QStringLiteral("UserID")).first(), auditUser().id);
        setAuditUser(AuditUser{QStringLiteral("asmith@hospital.test"), QStringLiteral("Dr. Anna Smith"), QStringLiteral("sub-123"), QStringLiteral("https://idp.test/")});
        const QByteArray signedIn = ae::instancesAccessed(QLatin1Char('R'), {study()}).toXml(source());
        resetAuditUser();
        QCOMPARE(attributeValues(signedIn, QStringLiteral("ActiveParticipant"), QStringLiteral("UserID")).first(), QStringLiteral("asmith@hospital.test"));
        QCOMPARE(attributeValues(signedIn, QStringLiteral("ActiveParticipant"), QStringLiteral("UserName")).first(), QStringLiteral("Dr. Anna Smith"));
    }

    void hostileTextCannotBreakTheMessage()
    {
        ae::Study s = study();
        s.patientName = QStringLiteral("</ParticipantObjectName><Evil a=\"1\"/>&amp;\x01\x1b") + QChar(0xD800) + QStringLiteral("\ttab\nline");
        s.patientId = QStringLiteral("  ID  with   spaces ");
        s.accessionNumber = QStringLiteral("]]>");
        const QByteArray xml = ae::dataExport(QStringLiteral("file:///tmp/\"quoted\" <dir>"), s, true).toXml(source());
        const QString invalid = test::validateAuditXml(xml);
        QVERIFY2(invalid.isEmpty(), qPrintable(invalid + QStringLiteral("\n") + QString::fromUtf8(xml)));
        QVERIFY(!xml.contains("<Evil"));
        // The name is kept, as text (control characters and a lone surrogate replaced, never dropped silently).
        QCOMPARE(elementTexts(xml, QStringLiteral("ParticipantObjectName")).last(),
                 QStringLiteral("</ParticipantObjectName><Evil a=\"1\"/>&amp;\uFFFD\uFFFD\uFFFD tab line"));
        const QStringList ids = attributeValues(xml, QStringLiteral("ParticipantObjectIdentification"), QStringLiteral("ParticipantObjectID"));
        QCOMPARE(ids.last(), QStringLiteral("ID with spaces"));
    }
};

QTEST_GUILESS_MAIN(tst_AuditMessage)
#include "tst_auditmessage.moc"
