// SPDX-License-Identifier: Apache-2.0
// The audit trail against a real audit record repository (rsyslog, started here on loopback): messages arrive over
// TLS and UDP as RFC 5424 syslog with schema-valid DICOM audit XML; a repository that dies loses nothing (kept
// in the spool, sent again by the running trail, or by the next program when this one ended first); a repository
// whose certificate is not the hospital's gets nothing; one that wants our certificate gets it; a spool cut short
// by a crash gives back every whole message.

#include "spectrum/core/audit/auditevents.h"
#include "spectrum/transfer/audit/audittrail.h"
#include "spectrum/transfer/audit/syslogframe.h"

#include "auditrepository.h"
#include "testsupport.h"

#include <QDir>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;
namespace ae = spectrum::auditevents;

namespace {

ae::Study study(int n)
{
    ae::Study s;
    s.studyUid = QStringLiteral("1.2.826.0.1.3680043.8.498.%1").arg(n);
    s.patientId = QStringLiteral("PAT-%1").arg(n);
    s.patientName = QStringLiteral("Doe^Jane");
    return s;
}

AuditTrailOptions optionsFor(const test::AuditRepositoryProcess &repository, const QString &spool, bool udp = false)
{
    AuditTrailOptions o;
    AuditRepository r = AuditRepository::fromUrl(udp ? repository.udpUrl() : repository.tlsUrl()).value();
    r.caFile = repository.caFile();
    o.repository = r;
    o.spoolDirectory = spool;
    o.program = QStringLiteral("spectrum-test");
    o.source = AuditSource{QStringLiteral("RR-WS-12"), QStringLiteral("St Elsewhere"), 1};
    o.retryMinMs = 100;
    o.retryMaxMs = 400;
    o.confirmTimeoutMs = 5000;
    return o;
}

/// The Study Instance UIDs of the Instances Accessed messages received, in order.
QStringList studiesReceived(const test::AuditRepositoryProcess &repository)
{
    QStringList out;
    for (const QByteArray &m : repository.messages()) {
        const QByteArray xml = test::auditXmlOf(m);
        const qsizetype at = xml.indexOf("ParticipantObjectID=\"1.2.826");
        if (at >= 0)
            out.append(QString::fromLatin1(xml.mid(at + 21, xml.indexOf('"', at + 21) - at - 21)));
    }
    return out;
}

bool waitDelivered(AuditTrail &trail, int timeoutMs = 20000)
{
    QElapsedTimer clock;
    clock.start();
    while (trail.pending() > 0 && clock.elapsed() < timeoutMs)
        QTest::qWait(50);
    return trail.pending() == 0;
}

} // namespace

class tst_AuditTrail : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void repositoryUrls()
    {
        QCOMPARE(AuditRepository::fromUrl(QStringLiteral("tls://audit.hospital.test")).value().port, quint16(6514));
        QCOMPARE(AuditRepository::fromUrl(QStringLiteral("udp://10.0.0.5")).value().port, quint16(514));
        QCOMPARE(AuditRepository::fromUrl(QStringLiteral("tls://audit:7514")).value().url(), QStringLiteral("tls://audit:7514"));
        QVERIFY(!AuditRepository::fromUrl(QStringLiteral("http://audit")).isOk());
        QVERIFY(!AuditRepository::fromUrl(QStringLiteral("tls://")).isOk());
        QVERIFY(!AuditRepository::fromUrl(QStringLiteral("tls://audit/path")).isOk());
    }

    void framesAndTheirEnds()
    {
        const QByteArray a = syslogFrame("first"), b = syslogFrame("second message");
        qsizetype used = 0;
        Result<QList<QByteArray>> frames = parseSyslogFrames(a + b + b.left(5), &used);
        QVERIFY(frames.isOk());
        QCOMPARE(frames.value(), (QList<QByteArray>{"first", "second message"}));
        QCOMPARE(used, a.size() + b.size());  // the cut one is not whole
        QVERIFY(!parseSyslogFrames("x5 hello").isOk());
        QVERIFY(!parseSyslogFrames("05 hello").isOk());
        QVERIFY(!parseSyslogFrames("999999999 x").isOk());
        SyslogHeader h{QDateTime::fromString(QStringLiteral("2026-11-30T04:55:01.123Z"), Qt::ISODateWithMs), QStringLiteral("ws 12"), QStringLiteral("spectrum"), 42};
        QCOMPARE(syslogMessage(h, "<x/>"), QByteArray("<85>1 2026-11-30T04:55:01.123Z ws12 spectrum 42 IHE+RFC-3881 - \xEF\xBB\xBF<x/>"));
    }

    void tlsDeliversWhatTheSchemaWants()
    {
        test::AuditRepositoryProcess repository;
        QVERIFY(repository.start());
        QTemporaryDir spool;
        AuditTrail trail(optionsFor(repository, spool.path()));
        QVERIFY(!trail.open().isError());
        const QList<AuditMessage> sent = {ae::applicationActivity(true), ae::instancesAccessed(QLatin1Char('R'), {study(1)}),
                                          ae::query(ae::Peer{QStringLiteral("https://pacs/dicom-web"), QStringLiteral("PACS"), QStringLiteral("pacs")},
                                                    QStringLiteral("1.2.840.10008.5.1.4.1.2.2.1"), "PatientID=PAT-1"),
                                          ae::applicationActivity(false)};
        for (const AuditMessage &m : sent)
            trail.record(m);
        QVERIFY(waitDelivered(trail));
        QVERIFY(repository.waitForMessages(sent.size()));
        const QList<QByteArray> got = repository.messages();
        QCOMPARE(got.size(), sent.size());
        QStringList events;
        for (const QByteArray &m : got) {
            const QString header = test::checkAuditSyslogHeader(m, QStringLiteral("spectrum-test"));
            QVERIFY2(header.isEmpty(), qPrintable(header));
            const QString invalid = test::validateAuditXml(test::auditXmlOf(m));
            QVERIFY2(invalid.isEmpty(), qPrintable(invalid));
            events.append(test::auditEventId(test::auditXmlOf(m)));
        }
        QCOMPARE(events, (QStringList{QStringLiteral("110100"), QStringLiteral("110103"), QStringLiteral("110112"), QStringLiteral("110100")}));
        // Delivered: the spool is empty, and goes with the trail.
        QCOMPARE(trail.pending(), 0);
    }

    void udpDelivers()
    {
        test::AuditRepositoryProcess repository;
        QVERIFY(repository.start());
        QTemporaryDir spool;
        AuditTrail trail(optionsFor(repository, spool.path(), true));
        QVERIFY(!trail.open().isError());
        trail.record(ae::instancesAccessed(QLatin1Char('R'), {study(7)}));
        QVERIFY(waitDelivered(trail));
        QVERIFY(QTest::qWaitFor([&] { return !repository.udpMessages().isEmpty(); }, 20000));
        QVERIFY(test::validateAuditXml(test::auditXmlOf(repository.udpMessages().first())).isEmpty());
        QVERIFY(repository.udpMessages().first().contains(study(7).studyUid.toLatin1()));
        QVERIFY(repository.messages().isEmpty());  // not over TLS
    }

    void aKilledRepositoryLosesNothing()
    {
        test::AuditRepositoryProcess repository;
        QVERIFY(repository.start());
        QTemporaryDir spool;
        {
            AuditTrail trail(optionsFor(repository, spool.path()));
            QVERIFY(!trail.open().isError());
            trail.record(ae::instancesAccessed(QLatin1Char('R'), {study(1)}));
            QVERIFY(waitDelivered(trail));

            repository.kill();
            QSignalSpy failed(&trail, &AuditTrail::deliveryFailed);
            trail.record(ae::instancesAccessed(QLatin1Char('R'), {study(2)}));
            QVERIFY(failed.wait(10000));
            QCOMPARE(trail.pending(), 1);
            QCOMPARE(failed.first().first().value<Error>().code(), ErrorCode::Network);
            // The running trail sends it once the repository is back.
            QVERIFY(repository.start());
            QVERIFY(waitDelivered(trail));

            // Down again, and this program ends before it is back: kept on disk.
            repository.kill();
            trail.record(ae::instancesAccessed(QLatin1Char('R'), {study(3)}));
            trail.record(ae::instancesAccessed(QLatin1Char('R'), {study(4)}));
            QVERIFY(!trail.flush(3000));  // does not wait long for a repository that is down
            QCOMPARE(trail.pending(), 2);
        }
        QCOMPARE(QDir(spool.path()).entryList({QStringLiteral("*.spool")}, QDir::Files).size(), 1);
        QVERIFY(repository.start());
        AuditTrail next(optionsFor(repository, spool.path()));
        QVERIFY(!next.open().isError());  // adopts what the last one left
        QVERIFY(waitDelivered(next));
        QVERIFY(repository.waitForMessages(4));
        QCOMPARE(studiesReceived(repository), (QStringList{study(1).studyUid, study(2).studyUid, study(3).studyUid, study(4).studyUid}));
    }

    void aRepositoryKilledWhileItReadsLosesNothing()
    {
        // Killed while a large batch is on its way: the connection breaks under the writer (no SIGPIPE ends this
        // program), nothing of that batch counts, and all of it arrives once the repository is back.
        test::AuditRepositoryProcess repository;
        QVERIFY(repository.start());
        QTemporaryDir spool;
        AuditTrail trail(optionsFor(repository, spool.path()));
        QVERIFY(!trail.open().isError());
        for (int i = 0; i < 300; ++i)
            trail.record(ae::instancesAccessed(QLatin1Char('R'), {study(1000 + i)}));
        QVERIFY(QTest::qWaitFor([&] { return !repository.messages().isEmpty() || trail.pending() == 0; }, 20000));
        repository.kill();
        QVERIFY(repository.start());
        QVERIFY(waitDelivered(trail, 60000));
        QVERIFY(repository.waitForMessages(300, 30000));
        QSet<QString> got;
        for (const QString &uid : studiesReceived(repository))
            got.insert(uid);
        for (int i = 0; i < 300; ++i)
            QVERIFY2(got.contains(study(1000 + i).studyUid), qPrintable(study(1000 + i).studyUid));
    }

    void aRepositoryNotTheHospitalsGetsNothing()
    {
        test::AuditRepositoryProcess repository;
        test::AuditRepositoryProcess::Options options;
        options.trustedCertificate = false;
        QVERIFY(repository.start(options));
        QTemporaryDir spool;
        AuditTrail trail(optionsFor(repository, spool.path()));
        QVERIFY(!trail.open().isError());
        QSignalSpy failed(&trail, &AuditTrail::deliveryFailed);
        trail.record(ae::instancesAccessed(QLatin1Char('R'), {study(5)}));
        QVERIFY(failed.wait(10000));
        const Error e = failed.first().first().value<Error>();
        QCOMPARE(e.code(), ErrorCode::Authentication);
        QVERIFY2(e.message().contains(QStringLiteral("certificate was refused")), qPrintable(e.message()));
        QCOMPARE(trail.pending(), 1);
        QCOMPARE(repository.messages().size(), 0);
    }

    void aRepositoryThatWantsOurCertificateGetsIt()
    {
        test::AuditRepositoryProcess repository;
        test::AuditRepositoryProcess::Options options;
        options.requireClientCertificate = true;
        QVERIFY(repository.start(options));
        {
            QTemporaryDir spool;
            AuditTrail without(optionsFor(repository, spool.path()));
            QVERIFY(!without.open().isError());
            QSignalSpy failed(&without, &AuditTrail::deliveryFailed);
            QSignalSpy delivered(&without, &AuditTrail::delivered);
            without.record(ae::applicationActivity(true));
            // The refusal may come only after the handshake (TLS 1.3 checks the client's certificate last): each
            // step has the delivery's own timeout, and a loaded machine is slow.
            QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty() || !delivered.isEmpty(); }, 60000));
            QVERIFY2(delivered.isEmpty(), "a repository that wants a client certificate took a message from a client without one");
            QCOMPARE(without.pending(), 1);
            QVERIFY(repository.messages().isEmpty());
        }
        QTemporaryDir spool;
        AuditTrailOptions o = optionsFor(repository, spool.path());
        o.repository->certificateFile = repository.clientCertificate();
        o.repository->keyFile = repository.clientKey();
        AuditTrail with(o);
        QVERIFY(!with.open().isError());
        with.record(ae::applicationActivity(true));
        QVERIFY(waitDelivered(with));
        QVERIFY(repository.waitForMessages(1));
        QCOMPARE(repository.messages().size(), 1);
    }

    void aSpoolCutShortGivesBackEveryWholeMessage()
    {
        test::AuditRepositoryProcess repository;
        QVERIFY(repository.start());
        QTemporaryDir spool;
        // A program that crashed: three messages kept, the first delivered, the fourth cut off while written.
        const QByteArray m1 = syslogMessage(SyslogHeader{QDateTime::currentDateTimeUtc(), QStringLiteral("ws"), QStringLiteral("spectrum"), 1},
                                            ae::instancesAccessed(QLatin1Char('R'), {study(1)}).toXml(AuditSource{QStringLiteral("ws"), QString(), 1}));
        const QByteArray m2 = syslogMessage(SyslogHeader{QDateTime::currentDateTimeUtc(), QStringLiteral("ws"), QStringLiteral("spectrum"), 1},
                                            ae::instancesAccessed(QLatin1Char('R'), {study(2)}).toXml(AuditSource{QStringLiteral("ws"), QString(), 1}));
        const QByteArray m3 = syslogMessage(SyslogHeader{QDateTime::currentDateTimeUtc(), QStringLiteral("ws"), QStringLiteral("spectrum"), 1},
                                            ae::instancesAccessed(QLatin1Char('R'), {study(3)}).toXml(AuditSource{QStringLiteral("ws"), QString(), 1}));
        QVERIFY(test::writeFile(spool.filePath(QStringLiteral("spectrum-999999.spool")), syslogFrame(m1) + syslogFrame(m2) + syslogFrame(m3) + syslogFrame(m3).left(40)));
        QVERIFY(test::writeFile(spool.filePath(QStringLiteral("spectrum-999999.sent")), "1\n"));
        AuditTrail trail(optionsFor(repository, spool.path()));
        QVERIFY(!trail.open().isError());
        QVERIFY(waitDelivered(trail));
        QVERIFY(repository.waitForMessages(2));
        QCOMPARE(studiesReceived(repository), (QStringList{study(2).studyUid, study(3).studyUid}));
        QVERIFY(!QFile::exists(spool.filePath(QStringLiteral("spectrum-999999.spool"))));
    }
};

QTEST_GUILESS_MAIN(tst_AuditTrail)
#include "tst_audittrail.moc"
