// SPDX-License-Identifier: Apache-2.0
// From blobs to studies: grouping, ordering, and never merging two patients under one study UID.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/stores/blobs/memorystore.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QSignalSpy>
#include <QTest>

using namespace spectrum;

namespace {
BlobInfo blob(const QString &key, const QString &patient, const QString &study, const QString &date,
              const QString &series, int seriesNumber, int instance, const QString &modality)
{
    BlobInfo b;
    b.key = key;
    b.size = 100;
    b.dicom.patientId = patient;
    b.dicom.patientName = QStringLiteral("NAME^") + patient;
    b.dicom.studyInstanceUid = study;
    b.dicom.studyDate = date;
    b.dicom.seriesInstanceUid = series;
    b.dicom.seriesNumber = seriesNumber;
    b.dicom.sopInstanceUid = key;
    b.dicom.instanceNumber = instance;
    b.dicom.modality = modality;
    return b;
}
} // namespace

class tst_StudyCatalog : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // An instance's place comes from its header's decimal strings: read as DICOM writes them, and anything that is not
    // exactly three and six finite numbers gives no place at all — never a misread one.
    void placesAreReadExactlyOrNotAtAll_data()
    {
        QTest::addColumn<QString>("position");
        QTest::addColumn<bool>("placed");
        QTest::addColumn<double>("z");
        QTest::newRow("plain") << QStringLiteral("-125\\-125\\12.5") << true << 12.5;
        QTest::newRow("spaces and plus") << QStringLiteral(" -125 \\+125\\ +1.25e1") << true << 12.5;
        QTest::newRow("leading point") << QStringLiteral("0\\0\\.5") << true << 0.5;
        QTest::newRow("plus minus") << QStringLiteral("0\\0\\+-5") << false << 0.0;
        QTest::newRow("sign alone") << QStringLiteral("0\\0\\-") << false << 0.0;
        QTest::newRow("two values") << QStringLiteral("0\\0") << false << 0.0;
        QTest::newRow("four values") << QStringLiteral("0\\0\\0\\0") << false << 0.0;
        QTest::newRow("empty value") << QStringLiteral("0\\\\0") << false << 0.0;
        QTest::newRow("trailing backslash") << QStringLiteral("0\\0\\0\\") << false << 0.0;
        QTest::newRow("comma") << QStringLiteral("0\\0\\1,5") << false << 0.0;
        QTest::newRow("infinite") << QStringLiteral("0\\0\\inf") << false << 0.0;
        QTest::newRow("not a number") << QStringLiteral("0\\0\\nan") << false << 0.0;
        QTest::newRow("hexadecimal") << QStringLiteral("0\\0\\0x10") << false << 0.0;
        QTest::newRow("trailing text") << QStringLiteral("0\\0\\5mm") << false << 0.0;
    }
    void placesAreReadExactlyOrNotAtAll()
    {
        QFETCH(QString, position);
        QFETCH(bool, placed);
        QFETCH(double, z);
        DicomIdentity id;
        id.frameOfReferenceUid = QStringLiteral("1.2.3");
        id.imagePosition = position;
        id.imageOrientation = QStringLiteral("1\\0\\0\\0\\1\\0");
        const InstanceRef ref = InstanceRef::of(QStringLiteral("k"), id, 0);
        QCOMPARE(ref.hasPlace, placed);
        if (placed)
            QCOMPARE(ref.position[2], z);
    }

    void groupsAndOrders()
    {
        const QList<BlobInfo> blobs = {
            blob(QStringLiteral("i3"), QStringLiteral("P1"), QStringLiteral("1.1"), QStringLiteral("20240101"), QStringLiteral("s2"), 2, 1, QStringLiteral("CT")),
            blob(QStringLiteral("i2"), QStringLiteral("P1"), QStringLiteral("1.1"), QStringLiteral("20240101"), QStringLiteral("s1"), 1, 2, QStringLiteral("CT")),
            blob(QStringLiteral("i1"), QStringLiteral("P1"), QStringLiteral("1.1"), QStringLiteral("20240101"), QStringLiteral("s1"), 1, 1, QStringLiteral("CT")),
            blob(QStringLiteral("j1"), QStringLiteral("P2"), QStringLiteral("2.2"), QStringLiteral("20250505"), QStringLiteral("t1"), 1, 1, QStringLiteral("MR")),
            BlobInfo{QStringLiteral("not-dicom"), 5, {}, {}, 0, {}, {}},
        };
        const QList<StudySummary> studies = summarizeStudies(blobs);
        QCOMPARE(studies.size(), 2);
        QCOMPARE(studies[0].identity.studyInstanceUid, QStringLiteral("2.2"));  // newest first
        const StudySummary &ct = studies[1];
        QCOMPARE(ct.instanceCount, 3);
        QCOMPARE(ct.bytes, 300);
        QCOMPARE(ct.modalities, QStringList{QStringLiteral("CT")});
        QCOMPARE(ct.series.size(), 2);
        QCOMPARE(ct.series[0].seriesInstanceUid, QStringLiteral("s1"));
        QCOMPARE(ct.series[0].instances[0].key, QStringLiteral("i1"));
        QCOMPARE(ct.series[0].instances[1].key, QStringLiteral("i2"));
        QVERIFY(!ct.identityConflict);
        QVERIFY(ct.identity.sopInstanceUid.isEmpty());  // study level only
    }

    void twoPatientsUnderOneStudyUidAreNeverMerged()
    {
        const QList<BlobInfo> blobs = {
            blob(QStringLiteral("a"), QStringLiteral("P1"), QStringLiteral("9.9"), QStringLiteral("20240101"), QStringLiteral("s"), 1, 1, QStringLiteral("CT")),
            blob(QStringLiteral("b"), QStringLiteral("P2"), QStringLiteral("9.9"), QStringLiteral("20240101"), QStringLiteral("s"), 1, 2, QStringLiteral("CT")),
        };
        const QList<StudySummary> studies = summarizeStudies(blobs);
        QCOMPARE(studies.size(), 2);
        for (const StudySummary &s : studies) {
            QVERIFY(s.identityConflict);
            QCOMPARE(s.instanceCount, 1);
        }
        QVERIFY(studies[0].identity.patientId != studies[1].identity.patientId);
    }

    void imagesThatDisagreeOnThePatientAreSaidSo()
    {
        // Sex recorded otherwise in one image of three: one study, flagged, its sex left to each image.
        QList<BlobInfo> blobs;
        for (const char *key : {"a", "b", "c"})
            blobs << blob(QString::fromLatin1(key), QStringLiteral("P1"), QStringLiteral("7.7"), QStringLiteral("20240101"), QStringLiteral("s"), 1, blobs.size() + 1, QStringLiteral("CT"));
        blobs[0].dicom.patientSex = QStringLiteral("F");
        blobs[1].dicom.patientSex = QStringLiteral("m ");
        blobs[2].dicom.patientSex = QStringLiteral("F");
        QList<StudySummary> studies = summarizeStudies(blobs);
        QCOMPARE(studies.size(), 1);
        QCOMPARE(studies[0].instanceCount, 3);
        QCOMPARE(studies[0].sexDisagreement, QStringLiteral("F in 2 images, M in 1"));
        QVERIFY(studies[0].identity.patientSex.isEmpty());
        QVERIFY(studies[0].patientDisagreement.isEmpty());
        // Agreeing (one image silent on it): nothing said, the sex kept.
        blobs[1].dicom.patientSex.clear();
        studies = summarizeStudies(blobs);
        QVERIFY(studies[0].sexDisagreement.isEmpty());
        QCOMPARE(studies[0].identity.patientSex, QStringLiteral("F"));
        // Another name or birth date in any image, not only the first two: said, so that it is never shown as one.
        blobs[2].dicom.patientBirthDate = QStringLiteral("19500101");
        blobs[1].dicom.patientBirthDate = QStringLiteral("19500101");
        blobs[0].dicom.patientBirthDate = QStringLiteral("19500101");
        QVERIFY(summarizeStudies(blobs)[0].patientDisagreement.isEmpty());
        blobs[2].dicom.patientBirthDate = QStringLiteral("19510101");
        QVERIFY2(summarizeStudies(blobs)[0].patientDisagreement.contains(QStringLiteral("birth date")), qPrintable(summarizeStudies(blobs)[0].patientDisagreement));
        blobs[2].dicom.patientBirthDate = QStringLiteral("19500101");
        blobs[2].dicom.patientName = QStringLiteral("OTHER^PERSON");
        QVERIFY2(summarizeStudies(blobs)[0].patientDisagreement.contains(QStringLiteral("another patient name")), qPrintable(summarizeStudies(blobs)[0].patientDisagreement));
        // Without a Patient ID (type 2: it may be empty) the images are compared all the same.
        for (BlobInfo &b : blobs)
            b.dicom.patientId.clear();
        QVERIFY2(summarizeStudies(blobs)[0].patientDisagreement.contains(QStringLiteral("another patient name")), qPrintable(summarizeStudies(blobs)[0].patientDisagreement));
    }

    void loadsFromAStore()
    {
        MemoryStore store(0);
        DemoOptions options;
        options.ctSlices = 4;
        options.mrSlices = 3;
        DemoArchive::generate(options, [&](DemoInstance &&i) -> Error {
            Result<BlobWriterPtr> w = runSync(store.reserve(i.identity.sopInstanceUid, i.bytes.size()));
            w.value()->writeAt(0, i.bytes.constData(), i.bytes.size());
            return runSync(store.commit(w.value())).error();
        });
        auto *job = loadStudies(&store);
        QSignalSpy done(job, &Job::finished);
        QList<StudySummary> studies;
        connect(job, &Job::finished, this, [&studies, job] { studies = job->result().value(); });
        job->start();
        QVERIFY(done.wait(10000));
        QCOMPARE(studies.size(), 5);
        int total = 0;
        for (const StudySummary &s : studies) {
            total += s.instanceCount;
            for (const SeriesSummary &series : s.series)  // what a hanging protocol and a prior's match look at
                QCOMPARE(series.bodyPart, s.modalities.contains(QStringLiteral("CR")) ? QStringLiteral("CHEST") : QStringLiteral("HEAD"));
            QCOMPARE(s.identity.issuerOfPatientId, QStringLiteral("SPECTRUM DEMO"));
        }
        QCOMPARE(total, 4 + 2 + 3 + 2 + 2);  // CT, CR PA + lateral, MR, the CT prior (half the slices), the CR prior
        Result<QList<StudySummary>> one = runSync(loadStudies(&store, DemoArchive::studyUid(DemoStudy::HeadMr)));
        QCOMPARE(one.value().size(), 1);
        QCOMPARE(one.value().first().instanceCount, 3);
        QCOMPARE(one.value().first().identity.studyDescription, QStringLiteral("DEMO MR HEAD T2 (Shepp-Logan phantom)"));
    }
};

QTEST_GUILESS_MAIN(tst_StudyCatalog)
#include "tst_studycatalog.moc"
