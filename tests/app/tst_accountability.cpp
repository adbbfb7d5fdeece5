// SPDX-License-Identifier: Apache-2.0
// Accountable, through the programs' doors: a hospital's system configuration names its audit repository (rsyslog
// over TLS, started here), and everything a reader and the command line do with a patient's images arrives there as
// DICOM audit messages valid against the standard's schema — the workstation opened, a study opened and findings
// saved in the window, a query, a retrieve, a copy into a folder and a de-identified one from the command line, a
// token refused, a certificate refused, an association refused. A user's own configuration cannot turn it off; a
// repository that dies loses nothing; a trail that cannot be kept stops the program. And the logs an admin reads.

#include "auditrepository.h"
#include "testsupport.h"

#include "spectrum/imaging/demostudies.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;
using namespace spectrum::test;

namespace {

/// The event IDs of `messages`, in order.
QStringList eventIds(const QList<QByteArray> &messages)
{
    QStringList out;
    for (const QByteArray &m : messages)
        out << auditEventId(auditXmlOf(m));
    return out;
}

/// The messages whose XML holds all of `needles`.
QList<QByteArray> withAll(const QList<QByteArray> &messages, const QList<QByteArray> &needles)
{
    QList<QByteArray> out;
    for (const QByteArray &m : messages) {
        if (std::all_of(needles.begin(), needles.end(), [&](const QByteArray &n) { return m.contains(n); }))
            out << m;
    }
    return out;
}

} // namespace

class tst_Accountability : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void everyActionThroughTheProgramsIsOnTheTrail();
    void aKilledRepositoryLosesNothing();
    void aTrailThatCannotBeKeptStopsTheProgram();
    void logsAnAdminCanRead();

private:
    QList<QPair<QString, QString>> env() const;
    ProcessResult cli(const QStringList &args) const { return runCli(args, env()); }
    void writeSystemConfig(const QJsonObject &audit);

    QTemporaryDir m_dir;
    AuditRepositoryProcess m_repository;
    OrthancProcess m_orthanc;
    QString m_studyUid, m_patientId;
    QString m_systemConfig, m_userConfig;
};

QList<QPair<QString, QString>> tst_Accountability::env() const
{
    return {{QStringLiteral("SPECTRUM_SYSTEM_CONFIG"), m_systemConfig}, {QStringLiteral("SPECTRUM_CONFIG"), m_userConfig},
            {QStringLiteral("SPECTRUM_CACHE_DIR"), m_dir.filePath(QStringLiteral("cache"))},
            {QStringLiteral("SPECTRUM_LOG_DIR"), m_dir.filePath(QStringLiteral("log"))},
            {QStringLiteral("XDG_STATE_HOME"), m_dir.filePath(QStringLiteral("state"))},
            {QStringLiteral("XDG_CONFIG_HOME"), m_dir.filePath(QStringLiteral("config"))},
            {QStringLiteral("XDG_DATA_HOME"), m_dir.filePath(QStringLiteral("data"))},
            {QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen")}};
}

void tst_Accountability::writeSystemConfig(const QJsonObject &audit)
{
    QVERIFY(writeFile(m_systemConfig, QJsonDocument(QJsonObject{{QStringLiteral("version"), 1}, {QStringLiteral("audit"), audit}}).toJson()));
}

void tst_Accountability::initTestCase()
{
    QVERIFY(m_repository.start());
    OrthancProcess::Options o;
    o.users = {{QStringLiteral("reader"), QStringLiteral("right-password")}};
    QVERIFY2(m_orthanc.start(o), "Orthanc did not start");
    DemoOptions demo;
    demo.studies = {DemoStudy::HeadCt};
    demo.ctSlices = 6;
    QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) {
                 m_patientId = i.identity.patientId;
                 return m_orthanc.upload(i.bytes).isEmpty() ? Error(ErrorCode::Io, QStringLiteral("not uploaded")) : Error();
             }).isError());
    m_studyUid = DemoArchive::studyUid(DemoStudy::HeadCt);

    // The hospital's configuration: its audit repository, over TLS, its CA.
    m_systemConfig = m_dir.filePath(QStringLiteral("etc-spectrum-stores.json"));
    writeSystemConfig(QJsonObject{{QStringLiteral("repository"), m_repository.tlsUrl()}, {QStringLiteral("caFile"), m_repository.caFile()},
                                  {QStringLiteral("sourceId"), QStringLiteral("RR-WS-12")}, {QStringLiteral("site"), QStringLiteral("St Elsewhere")}});
    // The user's: the PACS (right and wrong password), a server whose certificate no one here trusts — and an
    // "audit" of their own, pointing nowhere, which must change nothing.
    QVERIFY(writePrivateFile(m_dir.filePath(QStringLiteral("right")), "right-password"));
    QVERIFY(writePrivateFile(m_dir.filePath(QStringLiteral("wrong")), "wrong-password"));
    auto web = [&](const QString &name, const QString &url, const QString &passwordFile) {
        QJsonObject s{{QStringLiteral("name"), name}, {QStringLiteral("kind"), QStringLiteral("dicomweb")}, {QStringLiteral("url"), url}};
        if (!passwordFile.isEmpty()) {
            s.insert(QStringLiteral("auth"), QStringLiteral("basic"));
            s.insert(QStringLiteral("user"), QStringLiteral("reader"));
            s.insert(QStringLiteral("password"), QJsonObject{{QStringLiteral("file"), passwordFile}});
        }
        return s;
    };
    m_userConfig = m_dir.filePath(QStringLiteral("stores.json"));
    const QJsonObject user{
        {QStringLiteral("version"), 1},
        {QStringLiteral("stores"), QJsonArray{web(QStringLiteral("pacs"), m_orthanc.dicomWebUrl(), m_dir.filePath(QStringLiteral("right"))),
                                              web(QStringLiteral("locked"), m_orthanc.dicomWebUrl(), m_dir.filePath(QStringLiteral("wrong"))),
                                              web(QStringLiteral("impostor"), QStringLiteral("https://127.0.0.1:%1/dicom-web").arg(m_repository.tlsPort()), QString())}},
        {QStringLiteral("audit"), QJsonObject{{QStringLiteral("repository"), m_repository.udpUrl()}}}};
    QVERIFY(writePrivateFile(m_userConfig, QJsonDocument(user).toJson()));
}

void tst_Accountability::everyActionThroughTheProgramsIsOnTheTrail()
{
    const int before = int(m_repository.messages().size());
    // The command line: a query, a retrieve, a copy into a folder, a de-identified copy.
    ProcessResult r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs"), QStringLiteral("--patient-id"), m_patientId});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = cli({QStringLiteral("fetch"), QStringLiteral("--store"), QStringLiteral("pacs"), m_studyUid});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = cli({QStringLiteral("fetch"), QStringLiteral("--store"), QStringLiteral("pacs"), m_studyUid, QStringLiteral("--out"), m_dir.filePath(QStringLiteral("usb"))});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = cli({QStringLiteral("deidentify"), m_studyUid, QStringLiteral("--out"), m_dir.filePath(QStringLiteral("teaching"))});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    // Refusals: a wrong password (HTTP 401), a server whose certificate is not the hospital's.
    r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("locked"), QStringLiteral("--patient-id"), m_patientId});
    QVERIFY(r.exitCode != 0);
    r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("impostor"), QStringLiteral("--patient-id"), m_patientId});
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("not trusted"), r.err.constData());

    // The window: the study opened, a distance measured and saved as findings to the PACS.
    {
        QProcess gui;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        for (const auto &[name, value] : env())
            e.insert(name, value);
        gui.setProcessEnvironment(e);
        gui.start(QStringLiteral(SPECTRUM_GUI_EXECUTABLE), {QStringLiteral("--screenshot"), m_dir.filePath(QStringLiteral("shot.png")), QStringLiteral("--open"),
                                                             m_studyUid, QStringLiteral("--measure"), QStringLiteral("--save-findings"), QStringLiteral("pacs"),
                                                             QStringLiteral("--no-demo")});
        QVERIFY(gui.waitForFinished(120000));
        QVERIFY2(gui.exitCode() == 0, gui.readAllStandardError().constData());
    }

    // An association from an AE title no one named, refused by the Storage SCP.
    {
        const quint16 port = freePort();
        QProcess listen;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        for (const auto &[name, value] : env())
            e.insert(name, value);
        listen.setProcessEnvironment(e);
        dieWithParent(listen);
        listen.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("listen"), QStringLiteral("--aet"), QStringLiteral("SPECTRUM"),
                                                                QStringLiteral("--port"), QString::number(port), QStringLiteral("--address"), QStringLiteral("127.0.0.1")});
        QVERIFY(QTest::qWaitFor([&] {
            QTcpSocket probe;
            probe.connectToHost(QHostAddress::LocalHost, port);
            return probe.waitForConnected(100);
        }, 20000));
        const ProcessResult echo = run(QStringLiteral(ECHOSCU_EXECUTABLE), {QStringLiteral("-aet"), QStringLiteral("INTRUDER"), QStringLiteral("-aec"),
                                                                            QStringLiteral("SPECTRUM"), QStringLiteral("127.0.0.1"), QString::number(port)});
        QVERIFY(echo.exitCode != 0);  // refused
        QVERIFY(QTest::qWaitFor([&] { return !withAll(m_repository.messages(), {"INTRUDER", "csd-code=\"110113\""}).isEmpty(); }, 20000));
        stopProcess(listen);
    }

    // Everything arrived, each an RFC 5424 message with a schema-valid DICOM audit message.
    QVERIFY(QTest::qWaitFor([&] { return withAll(m_repository.messages(), {"spectrum-cli", "110121"}).size() >= 7; }, 20000));
    const QList<QByteArray> got = m_repository.messages().mid(before);
    for (const QByteArray &m : got) {
        const QString app = QString::fromLatin1(m.split(' ').value(3));
        const QString header = checkAuditSyslogHeader(m, app);
        QVERIFY2(header.isEmpty(), qPrintable(header));
        QVERIFY2(app == QLatin1String("spectrum") || app == QLatin1String("spectrum-cli"), qPrintable(app));
        const QString invalid = validateAuditXml(auditXmlOf(m));
        QVERIFY2(invalid.isEmpty(), qPrintable(invalid + QStringLiteral("\n") + QString::fromUtf8(auditXmlOf(m))));
        QVERIFY(m.contains("AuditSourceID=\"RR-WS-12\""));  // the hospital's, not the user's
    }
    const QStringList ids = eventIds(got);
    for (const char *id : {"110100", "110112", "110102", "110104", "110106", "110103", "110113"})
        QVERIFY2(ids.contains(QLatin1String(id)), qPrintable(QStringLiteral("no %1 in %2").arg(QLatin1String(id), ids.join(QLatin1Char(' ')))));

    const QByteArray study = "ParticipantObjectID=\"" + m_studyUid.toLatin1() + "\"";
    const QByteArray patient = "ParticipantObjectID=\"" + m_patientId.toLatin1() + "\"";
    // The query: what was asked, of which archive.
    const QList<QByteArray> queries = withAll(got, {"csd-code=\"110112\"", m_orthanc.dicomWebUrl().toLatin1(), "EventOutcomeIndicator=\"0\""});
    QVERIFY(!queries.isEmpty());
    const QByteArray asked = ("QueryRetrieveLevel=STUDY&PatientID=" + m_patientId.toUtf8()).toBase64();
    QVERIFY2(queries.first().contains(asked), queries.first().constData());
    // The retrieve: begun and done, the study and its patient named, from the PACS to this workstation.
    QVERIFY(!withAll(got, {"csd-code=\"110102\"", study}).isEmpty());
    QVERIFY(!withAll(got, {"csd-code=\"110104\"", study, patient, "EventActionCode=\"C\"", "1.2.840.10008.5.1.4.1.1.2\" NumberOfInstances=\"6\""}).isEmpty());
    // The copy into a folder and the de-identified one: exports, the latter anonymized.
    QVERIFY(!withAll(got, {"csd-code=\"110106\"", study, patient, "/usb", "<Anonymized>false</Anonymized>", "ParticipantObjectDataLifeCycle=\"10\""}).isEmpty());
    QVERIFY(!withAll(got, {"csd-code=\"110106\"", study, patient, "/teaching", "<Anonymized>true</Anonymized>", "ParticipantObjectDataLifeCycle=\"7\""}).isEmpty());
    // The window: the study read, findings created, and sent to the PACS.
    QVERIFY(!withAll(got, {" spectrum ", "csd-code=\"110103\"", "EventActionCode=\"R\"", study, patient}).isEmpty());
    QVERIFY(!withAll(got, {" spectrum ", "csd-code=\"110103\"", "EventActionCode=\"C\"", study}).isEmpty());
    QVERIFY(!withAll(got, {" spectrum ", "csd-code=\"110104\"", "Destination Role ID", study, "1.2.840.10008.5.1.4.1.1.88"}).isEmpty());
    QVERIFY(!withAll(got, {" spectrum ", "110120"}).isEmpty());
    QVERIFY(!withAll(got, {" spectrum ", "110121"}).isEmpty());
    // The refusals: the password, the certificate, the association.
    QVERIFY(!withAll(got, {"csd-code=\"110113\"", "csd-code=\"110132\"", "locked"}).isEmpty());
    QVERIFY(!withAll(got, {"csd-code=\"110113\"", "csd-code=\"110126\"", "impostor"}).isEmpty());
    QCOMPARE(withAll(got, {"csd-code=\"110113\"", "csd-code=\"110126\"", "Storage SCP"}).size(), 1);  // the probe that asked nothing is not one
    QVERIFY(!withAll(got, {"csd-code=\"110113\"", "csd-code=\"110126\"", "INTRUDER"}).isEmpty());
    // Nothing went to the user's own "audit" (the same repository's UDP port): the hospital's holds; all delivered.
    QVERIFY(m_repository.udpMessages().isEmpty());
    QCOMPARE(QDir(m_dir.filePath(QStringLiteral("state/spectrum/audit"))).entryList({QStringLiteral("*.spool")}, QDir::Files).size(), 0);
}

void tst_Accountability::aKilledRepositoryLosesNothing()
{
    m_repository.kill();
    // The repository is down: the command still works (it says the trail is behind), its messages are kept.
    ProcessResult r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs"), QStringLiteral("--patient-name"), QStringLiteral("KEPT*")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("audit") && r.err.contains("kept"), r.err.constData());
    QCOMPARE(QDir(m_dir.filePath(QStringLiteral("state/spectrum/audit"))).entryList({QStringLiteral("*.spool")}, QDir::Files).size(), 1);
    const int before = int(m_repository.messages().size());
    QVERIFY(m_repository.start());
    // The next program sends what the last one kept, first.
    r = cli({QStringLiteral("studies")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(m_repository.waitForMessages(before + 5));
    const QList<QByteArray> got = m_repository.messages().mid(before);
    QCOMPARE(eventIds(got), (QStringList{QStringLiteral("110100"), QStringLiteral("110112"), QStringLiteral("110100"), QStringLiteral("110100"), QStringLiteral("110100")}));
    QVERIFY(got.at(1).contains(QByteArray("QueryRetrieveLevel=STUDY&PatientName=KEPT*").toBase64()));
    QCOMPARE(QDir(m_dir.filePath(QStringLiteral("state/spectrum/audit"))).entryList({QStringLiteral("*.spool")}, QDir::Files).size(), 0);
}

void tst_Accountability::aTrailThatCannotBeKeptStopsTheProgram()
{
    // The spool's folder is a file: nothing can be kept, so nothing is done.
    const QString notAFolder = m_dir.filePath(QStringLiteral("spool-is-a-file"));
    QVERIFY(writeFile(notAFolder, "x"));
    writeSystemConfig(QJsonObject{{QStringLiteral("repository"), m_repository.tlsUrl()}, {QStringLiteral("caFile"), m_repository.caFile()},
                                  {QStringLiteral("spool"), notAFolder}});
    const ProcessResult r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs")});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("audit trail cannot be kept"), r.err.constData());
    QVERIFY(!r.out.contains(m_studyUid.toLatin1()));
    writeSystemConfig(QJsonObject{{QStringLiteral("repository"), m_repository.tlsUrl()}, {QStringLiteral("caFile"), m_repository.caFile()},
                                  {QStringLiteral("sourceId"), QStringLiteral("RR-WS-12")}});
}

void tst_Accountability::logsAnAdminCanRead()
{
    const QString log = m_dir.filePath(QStringLiteral("log/spectrum-cli.log"));
    QFile::remove(log);
    ProcessResult r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QStringList lines = QString::fromUtf8(readFile(log)).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QVERIFY(!lines.isEmpty());
    static const QRegularExpression line(QStringLiteral("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z spectrum-cli\\[\\d+\\] (debug|info|warning|error) "));
    for (const QString &l : lines)
        QVERIFY2(line.match(l).hasMatch() || l.startsWith(QLatin1String("    ")), qPrintable(l));
    QVERIFY(!lines.join(QLatin1Char('\n')).contains(QLatin1String(" debug ")));
    QVERIFY(lines.join(QLatin1Char('\n')).contains(QLatin1String("info spectrum.transfer: audit: Query (110112)")));
    // --log-level debug: the details too, on stderr as well; --log-file elsewhere.
    const QString other = m_dir.filePath(QStringLiteral("debug.log"));
    r = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("pacs"), QStringLiteral("--log-level"), QStringLiteral("debug"), QStringLiteral("--log-file"), other});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(readFile(other).contains(" debug "));
    QVERIFY(r.err.contains(" info "));
    r = cli({QStringLiteral("find"), QStringLiteral("--log-level"), QStringLiteral("chatty")});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("debug, info, warning, error"), r.err.constData());
    // The window's own, beside it.
    QVERIFY(QFile::exists(m_dir.filePath(QStringLiteral("log/spectrum.log"))));
    QVERIFY(readFile(m_dir.filePath(QStringLiteral("log/spectrum.log"))).contains("audit: DICOM Instances Accessed (110103)"));
}

QTEST_GUILESS_MAIN(tst_Accountability)
#include "tst_accountability.moc"
