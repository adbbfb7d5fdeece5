// SPDX-License-Identifier: Apache-2.0
// A de-identified copy of a study (PS3.15 Annex E, Basic Profile): CT slices carrying the identifying attributes
// a hospital's do — names, addresses, IDs, dates, private tags, an overlay, references to other studies —, one slice
// carrying every attribute of Table E.1-1 (planted at the top level and inside a sequence), and our report, key
// images and presentation state on them, exported with one UID map and checked against another project's
// transcription of the table (dicom-anonymizer, PyPI, in the test venv; tests/support/deid_check.py): every attribute
// removed, emptied, replaced or given a new UID as the table says, nothing identifying left, pixel data unchanged,
// every reference inside the export resolving; the dates kept with the option; burned-in annotation flagged.

#include "testsupport.h"

#include "spectrum/imaging/documents/deidentify.h"
#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/documents/keyobjects.h"
#include "spectrum/imaging/documents/measurementreport.h"
#include "spectrum/imaging/documents/presentationstate.h"

#include "dcmtksupport.h"  // private to imaging: its parse and serialize

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace spectrum;

namespace {

QString venvPython()
{
    return QStringLiteral(TEST_VENV_DIR "/bin/python");
}

/// `bytes` with what a hospital's images carry besides the pixels.
QByteArray withIdentity(const QByteArray &bytes, bool burnedIn)
{
    DcmFileFormat file;
    if (spectrum::dcmtk::parse(ByteView(bytes), file, spectrum::dcmtk::ParseExtent::Everything).isError())
        return QByteArray();
    DcmDataset *ds = file.getDataset();
    const std::pair<DcmTagKey, const char *> values[] = {
        {DCM_InstitutionName, "St. Elsewhere General"}, {DCM_InstitutionAddress, "1 Hospital Road, Springfield"},
        {DCM_ReferringPhysicianName, "Kildare^James"}, {DCM_OperatorsName, "Tech^Tina"}, {DCM_PerformingPhysicianName, "Casey^Ben"},
        {DCM_RETIRED_OtherPatientIDs, "MRN-998877"}, {DCM_PatientAge, "054Y"}, {DCM_PatientAddress, "12 Elm Street"},
        {DCM_PatientTelephoneNumbers, "555-0101"}, {DCM_StudyDescription, "CT HEAD for Mr Smith"}, {DCM_SeriesDescription, "Axial"},
        {DCM_AccessionNumber, "ACC-123456"}, {DCM_StudyID, "4711"}, {DCM_DeviceSerialNumber, "SN-42"}, {DCM_ProtocolName, "Head routine"},
        {DCM_ImageComments, "patient was anxious"}, {DCM_AcquisitionDate, "20240102"}, {DCM_ContentDate, "20240102"},
        {DCM_StationName, "CT01"}, {DCM_AdditionalPatientHistory, "fell at home"}, {DCM_PatientComments, "allergic to contrast"},
        {DCM_RequestingPhysician, "House^Gregory"}, {DCM_AdmissionID, "ADM-5"}, {DCM_InstitutionalDepartmentName, "Radiology"},
        {DCM_ReviewerName, "Wilson^James"},  // a person's name the profile's table does not list: no one named all the same
    };
    for (const auto &[tag, value] : values)
        ds->putAndInsertString(tag, value);
    ds->putAndInsertString(DcmTag(0x0009, 0x0010, EVR_LO), "ACME PRIVATE");
    ds->putAndInsertString(DcmTag(0x0009, 0x1001, EVR_LO), "Smith John 1970");
    ds->putAndInsertUint16(DcmTag(0x6000, 0x0010), 8);
    ds->putAndInsertUint16(DcmTag(0x6000, 0x0011), 8);
    ds->putAndInsertString(DcmTag(0x6000, 0x0022), "name burned in overlay");
    DcmItem *other = nullptr;
    ds->findOrCreateSequenceItem(DCM_ReferencedStudySequence, other, -2);
    other->putAndInsertString(DCM_ReferencedSOPClassUID, "1.2.840.10008.3.1.2.3.1");
    other->putAndInsertString(DCM_ReferencedSOPInstanceUID, "2.25.424242");
    DcmItem *request = nullptr;
    ds->findOrCreateSequenceItem(DCM_RequestAttributesSequence, request, -2);
    request->putAndInsertString(DCM_RequestedProcedureID, "RP-1");
    if (burnedIn)
        ds->putAndInsertString(DCM_BurnedInAnnotation, "YES");
    return spectrum::dcmtk::serialize(file, EXS_LittleEndianExplicit).value();
}

} // namespace

class TestDeidentify : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        DemoOptions demo;
        demo.studies = {DemoStudy::HeadCt};
        demo.ctSlices = 3;
        QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) {
                     m_originals << withIdentity(i.bytes, m_originals.size() == 2);
                     return Error();
                 }).isError());
        QCOMPARE(m_originals.size(), 3);
        // Our documents on them: a report, key images, a presentation state.
        QList<DecodedImage> images;
        for (const QByteArray &b : m_originals) {
            Result<DecodedImage> d = decodeDicom(ByteView(b));
            QVERIFY(d.isOk());
            images << d.value();
        }
        DicomIdentity study = images[0].info.identity;
        study.patientName = QStringLiteral("SMITH^JOHN");
        study.patientBirthDate = QStringLiteral("19700101");
        MeasurementReportRequest sr;
        sr.study = study;
        sr.observerName = QStringLiteral("Reader^Rita");
        const Annotation a{AnnotationKind::Distance, {{100, 100}, {200, 120}}, QStringLiteral("lesion"), QString()};
        sr.findings << ReportedFinding{a, ImageRef::of(images[0].info), measure(a, images[0], 0), QString(), {}};
        KeyObjectRequest ko;
        ko.study = study;
        ko.images = {ImageRef::of(images[1].info)};
        ko.description = QStringLiteral("see slice 2; Smith, DOB 1970-01-01");  // free text that names the patient
        PresentationStateRequest ps;
        ps.study = study;
        ps.images = {ImageRef::of(images[0].info), ImageRef::of(images[1].info)};
        ps.columns = ps.rows = 512;
        ps.creatorName = QStringLiteral("Reader^Rita");
        ps.annotations[images[0].info.identity.sopInstanceUid] = {a};
        for (const Result<QByteArray> &doc : {writeMeasurementReport(sr), writeKeyObjectSelection(ko), writePresentationState(ps)}) {
            QVERIFY2(doc.isOk(), qPrintable(doc.error().toString()));
            m_originals << doc.value();
        }
        // A slice with every attribute of the table, planted by the check's own script.
        const test::ProcessResult venv = test::run(QStringLiteral(PYVENV_SCRIPT), {QStringLiteral(TEST_VENV_DIR), QStringLiteral(TEST_PEERS_REQUIREMENTS)}, 600000);
        QVERIFY2(venv.ok(), qPrintable(QStringLiteral("the test peers' venv (PyPI) could not be made: ") + QString::fromLocal8Bit(venv.err)));
        const QString base = m_dir.filePath(QStringLiteral("base.dcm")), planted = m_dir.filePath(QStringLiteral("planted.dcm"));
        QByteArray fourth = m_originals[0];
        {
            DcmFileFormat file;  // its own instance: a fourth slice, not a copy of the first
            QVERIFY(!spectrum::dcmtk::parse(ByteView(fourth), file, spectrum::dcmtk::ParseExtent::Everything).isError());
            file.getDataset()->putAndInsertString(DCM_SOPInstanceUID, "2.25.310000000000000000000000000000000004");
            fourth = spectrum::dcmtk::serialize(file, EXS_LittleEndianExplicit).value();
        }
        QVERIFY(test::writeFile(base, fourth));
        const test::ProcessResult plant = test::run(venvPython(), {QStringLiteral(DEID_CHECK_SCRIPT), QStringLiteral("plant"), base, planted});
        QVERIFY2(plant.ok(), plant.err.constData());
        const QJsonObject planting = QJsonDocument::fromJson(plant.out).object();
        qInfo("Table E.1-1 attributes planted: %d; pydicom knows no VR for %d", planting[QStringLiteral("planted")].toInt(),
              int(planting[QStringLiteral("unknown")].toArray().size()));
        QVERIFY(planting[QStringLiteral("planted")].toInt() > 550);
        m_originals << test::readFile(planted);
    }

    void exportedCopyKeepsNothingIdentifying()
    {
        check(false);
    }

    void datesKeptWithTheOption()
    {
        check(true);
    }

    void notDicomIsRefused()
    {
        UidMap uids;
        QCOMPARE(deidentify(ByteView(QByteArray("plain text")), DeidentifyOptions(), uids).error().code(), ErrorCode::InvalidDicom);
    }

private:
    void check(bool retainDates)
    {
        const QString dir = m_dir.filePath(retainDates ? QStringLiteral("dates") : QStringLiteral("basic"));
        QVERIFY(QDir().mkpath(dir));
        DeidentifyOptions options;
        options.retainDates = retainDates;
        UidMap uids;
        QStringList pairs;
        QStringList flagged, texts;
        for (int i = 0; i < m_originals.size(); ++i) {
            Result<DeidentifiedInstance> d = deidentify(ByteView(m_originals[i]), options, uids);
            QVERIFY2(d.isOk(), qPrintable(d.error().toString()));
            const QString original = QDir(dir).filePath(QStringLiteral("original-%1.dcm").arg(i));
            const QString exported = QDir(dir).filePath(d.value().sopInstanceUid + QStringLiteral(".dcm"));
            QVERIFY(test::writeFile(original, m_originals[i]));
            QVERIFY(test::writeFile(exported, d.value().bytes));
            pairs << original + QLatin1Char(':') + exported;
            if (!d.value().burnedInWarning.isEmpty())
                flagged << QString::number(i);
            texts << d.value().textsKept;
        }
        QCOMPARE(flagged, QStringList{QStringLiteral("2")});  // the slice that says its pixels show text
        // The note kept, the patient's name and birth date in it replaced (the documents' patient: SMITH^JOHN, 19700101).
        QVERIFY2(texts.contains(QStringLiteral("see slice 2; ANONYMOUS, DOB ANONYMOUS")) && texts.contains(QStringLiteral("lesion")),
                 qPrintable(texts.join(QLatin1Char('|'))));
        QStringList args{QStringLiteral(DEID_CHECK_SCRIPT), QStringLiteral("check")};
        if (retainDates)
            args << QStringLiteral("--retain-dates");
        const test::ProcessResult r = test::run(venvPython(), args + pairs);
        QVERIFY2(r.ok(), r.err.constData());
        const QJsonObject result = QJsonDocument::fromJson(r.out).object();
        const QStringList problems = result[QStringLiteral("problems")].toVariant().toStringList();
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
        QVERIFY(result[QStringLiteral("checked")].toInt() > 1100);         // the table's attributes, twice over and more
        QCOMPARE(result[QStringLiteral("studies")].toArray().size(), 1);   // one study still
        QCOMPARE(result[QStringLiteral("patients")].toArray().size(), 1);  // one pseudonym for the patient
        QVERIFY(result[QStringLiteral("references")].toInt() >= 4);        // the documents' references, all resolved
        // The documents still read, referring to the exported images.
        for (const QString &pair : pairs) {
            const QByteArray bytes = test::readFile(pair.section(QLatin1Char(':'), 1));
            Result<DicomIdentity> id = readDicomIdentity(ByteView(bytes));
            QVERIFY(id.isOk());
            if (id.value().modality == QLatin1String("SR")) {
                Result<ReadReport> report = readStructuredReport(ByteView(bytes));
                QVERIFY(report.isOk());
                QCOMPARE(report.value().findings.size(), 1);
                QCOMPARE(report.value().findings[0].annotation.text, QStringLiteral("lesion"));
                QCOMPARE(report.value().observerName, QStringLiteral("ANONYMOUS"));
            }
        }
    }

    QTemporaryDir m_dir;
    QList<QByteArray> m_originals;
};

QTEST_GUILESS_MAIN(TestDeidentify)
#include "tst_deidentify.moc"
