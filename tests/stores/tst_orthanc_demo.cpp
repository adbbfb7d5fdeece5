// SPDX-License-Identifier: Apache-2.0
// The demo archive is accepted by a real PACS: Orthanc, started here on free loopback ports.

#include "spectrum/imaging/demostudies.h"
#include "testsupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;
using namespace spectrum::test;

class tst_OrthancDemo : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void orthancStoresEveryDemoStudy();

private:
    QByteArray request(const QByteArray &verb, const QString &path, const QByteArray &body, int *status);

    QTemporaryDir m_dir;
    QProcess m_orthanc;
    quint16 m_httpPort = 0;
    QNetworkAccessManager m_net;
};

void tst_OrthancDemo::initTestCase()
{
    QVERIFY2(QFile::exists(QStringLiteral(ORTHANC_EXECUTABLE)), "Orthanc is not installed (make test installs it)");
    m_httpPort = freePort();
    const QJsonObject config{
        {QStringLiteral("Name"), QStringLiteral("spectrum-test")},
        {QStringLiteral("StorageDirectory"), m_dir.filePath(QStringLiteral("storage"))},
        {QStringLiteral("IndexDirectory"), m_dir.filePath(QStringLiteral("index"))},
        {QStringLiteral("HttpPort"), m_httpPort},
        {QStringLiteral("DicomPort"), freePort()},
        {QStringLiteral("RemoteAccessAllowed"), false},
        {QStringLiteral("AuthenticationEnabled"), false},
        {QStringLiteral("Plugins"), QJsonArray()},
    };
    const QString configPath = m_dir.filePath(QStringLiteral("orthanc.json"));
    QVERIFY(writeFile(configPath, QJsonDocument(config).toJson()));
    m_orthanc.setProcessChannelMode(QProcess::MergedChannels);
    m_orthanc.setStandardOutputFile(m_dir.filePath(QStringLiteral("orthanc.log")));
    m_orthanc.start(QStringLiteral(ORTHANC_EXECUTABLE), {configPath});
    QVERIFY(m_orthanc.waitForStarted());
    int status = 0;
    QTRY_VERIFY_WITH_TIMEOUT((request("GET", QStringLiteral("/system"), {}, &status), status == 200), 30000);
    qInfo() << "Orthanc is up on port" << m_httpPort;
}

void tst_OrthancDemo::cleanupTestCase()
{
    m_orthanc.terminate();
    if (!m_orthanc.waitForFinished(10000))
        m_orthanc.kill();
}

QByteArray tst_OrthancDemo::request(const QByteArray &verb, const QString &path, const QByteArray &body, int *status)
{
    QNetworkRequest req(QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(m_httpPort).arg(path)));
    req.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/dicom"));
    QNetworkReply *reply = m_net.sendCustomRequest(req, verb, body);
    QSignalSpy done(reply, &QNetworkReply::finished);
    if (!reply->isFinished())
        done.wait(30000);
    *status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray answer = reply->readAll();
    reply->deleteLater();
    return answer;
}

void tst_OrthancDemo::orthancStoresEveryDemoStudy()
{
    DemoOptions options;
    options.ctSlices = 2;  // same generator as the 200-slice series, fewer uploads
    options.mrSlices = 2;
    QList<DemoInstance> instances;
    QVERIFY(!DemoArchive::generate(options, [&](DemoInstance &&i) { instances << std::move(i); return Error(); }).isError());
    for (const DemoInstance &i : instances) {
        int status = 0;
        const QJsonObject answer = QJsonDocument::fromJson(request("POST", QStringLiteral("/instances"), i.bytes, &status)).object();
        QCOMPARE(status, 200);
        QCOMPARE(answer.value(QStringLiteral("Status")).toString(), QStringLiteral("Success"));
        int tagsStatus = 0;
        const QJsonObject tags = QJsonDocument::fromJson(request("GET", QStringLiteral("/instances/%1/simplified-tags")
                                                                            .arg(answer.value(QStringLiteral("ID")).toString()),
                                                                 {}, &tagsStatus)).object();
        QCOMPARE(tagsStatus, 200);
        QCOMPARE(tags.value(QStringLiteral("SOPInstanceUID")).toString(), i.identity.sopInstanceUid);
        QCOMPARE(tags.value(QStringLiteral("PatientName")).toString(), i.identity.patientName);
    }
    int status = 0;
    const QJsonArray studies = QJsonDocument::fromJson(request("GET", QStringLiteral("/studies?expand"), {}, &status)).array();
    QCOMPARE(status, 200);
    QCOMPARE(studies.size(), 5);
    QStringList uids;
    for (const QJsonValue &s : studies)
        uids << s.toObject().value(QStringLiteral("MainDicomTags")).toObject().value(QStringLiteral("StudyInstanceUID")).toString();
    for (DemoStudy s : allDemoStudies())
        QVERIFY(uids.contains(DemoArchive::studyUid(s)));
}

QTEST_GUILESS_MAIN(tst_OrthancDemo)
#include "tst_orthanc_demo.moc"
