// SPDX-License-Identifier: Apache-2.0
// The embedded demo archive: realistic, consistent, deterministic, valid DICOM, and plainly fake.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "testsupport.h"

#include <QCryptographicHash>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;
using namespace spectrum::test;

class tst_DemoStudies : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void hasTheStudiesTheIssueAsksFor();
    void ctGeometryIsConsistent();
    void priorIsTheSamePatientAYearEarlierLyingElsewhere();
    void thickSlicesAverageTheThinOnesInTheSameFrame();
    void identitiesArePlainlyDemo();
    void generationIsDeterministic();
    void dcmdumpAcceptsEveryStudy();
    void cancelStopsGeneration();

private:
    QList<DemoInstance> m_instances;
};

void tst_DemoStudies::initTestCase()
{
    const Error e = DemoArchive::generate(DemoOptions(), [&](DemoInstance &&inst) {
        m_instances << std::move(inst);
        return Error();
    });
    QVERIFY2(!e.isError(), qPrintable(e.toString()));
}

void tst_DemoStudies::hasTheStudiesTheIssueAsksFor()
{
    QMap<QString, int> perStudy;
    for (const DemoInstance &i : m_instances)
        perStudy[i.identity.studyInstanceUid]++;
    QCOMPARE(perStudy.size(), 5);
    QVERIFY(perStudy.value(DemoArchive::studyUid(DemoStudy::HeadCt)) >= 200);
    QCOMPARE(perStudy.value(DemoArchive::studyUid(DemoStudy::ChestCr)), 2);  // PA and lateral
    QVERIFY(perStudy.value(DemoArchive::studyUid(DemoStudy::HeadMr)) >= 20);
    QCOMPARE(perStudy.value(DemoArchive::studyUid(DemoStudy::HeadCtPrior)), 100);
    QCOMPARE(perStudy.value(DemoArchive::studyUid(DemoStudy::ChestCrPrior)), 2);
    QCOMPARE(m_instances.size(), DemoArchive::instanceCount(DemoOptions()));

    QSet<QString> sops;
    for (const DemoInstance &i : m_instances)
        sops.insert(i.identity.sopInstanceUid);
    QCOMPARE(sops.size(), m_instances.size());  // every instance its own UID

    const DemoInstance &cr = *std::find_if(m_instances.begin(), m_instances.end(),
                                           [](const DemoInstance &i) { return i.identity.modality == QLatin1String("CR"); });
    Result<DecodedImage> img = decodeDicom(ByteView(cr.bytes));
    QVERIFY(img.isOk());
    QCOMPARE(img.value().info.columns, 2048);
    QCOMPARE(img.value().info.rows, 2500);
    QCOMPARE(img.value().info.bitsAllocated, 16);
}

void tst_DemoStudies::ctGeometryIsConsistent()
{
    QList<ImageInfo> slices;
    for (const DemoInstance &i : m_instances) {
        if (i.identity.studyInstanceUid != DemoArchive::studyUid(DemoStudy::HeadCt))
            continue;
        Result<DecodedImage> img = decodeDicom(ByteView(i.bytes));
        QVERIFY(img.isOk());
        slices << img.value().info;
    }
    QVERIFY(slices.size() >= 200);
    const ImageInfo &first = slices.first();
    QCOMPARE(first.rows, 512);
    QCOMPARE(first.columns, 512);
    QCOMPARE(first.bitsAllocated, 16);
    for (int k = 1; k < slices.size(); ++k) {
        const ImageInfo &s = slices[k];
        QCOMPARE(s.identity.seriesInstanceUid, first.identity.seriesInstanceUid);
        QCOMPARE(s.identity.instanceNumber, k + 1);
        QCOMPARE(s.imageOrientation, first.imageOrientation);
        QCOMPARE(s.rowSpacing, first.rowSpacing);
        QCOMPARE(s.imagePosition[0], first.imagePosition[0]);
        QCOMPARE(s.imagePosition[1], first.imagePosition[1]);
        // Adjacent slices are one slice thickness apart along the normal, in instance order.
        const double step = s.slicePositionAlongNormal() - slices[k - 1].slicePositionAlongNormal();
        QVERIFY2(qAbs(step - s.sliceThickness) < 1e-3, qPrintable(QStringLiteral("slice %1: step %2").arg(k).arg(step)));
    }
    // The volume spans the head: 200 × 1.25 mm = 250 mm, the same as the field of view.
    QVERIFY(qAbs(slices.last().slicePositionAlongNormal() - first.slicePositionAlongNormal() - 248.75) < 1e-3);
}

// The prior head CT is the same patient a year earlier, lying kDemoPriorShiftMm further along z: its own frame
// of reference, 2.5 mm slices, and the same anatomy (here, the pixels of a slice) at Image Positions that much
// greater — what cross-study synchronisation and its manual offset are tried on.
void tst_DemoStudies::priorIsTheSamePatientAYearEarlierLyingElsewhere()
{
    QList<ImageInfo> current, prior;
    QList<QByteArray> priorBytes;
    for (const DemoInstance &i : m_instances) {
        const bool isPrior = i.identity.studyInstanceUid == DemoArchive::studyUid(DemoStudy::HeadCtPrior);
        if (!isPrior && i.identity.studyInstanceUid != DemoArchive::studyUid(DemoStudy::HeadCt))
            continue;
        Result<DecodedImage> img = decodeDicom(ByteView(i.bytes));
        QVERIFY(img.isOk());
        (isPrior ? prior : current) << img.value().info;
    }
    QCOMPARE(prior.size(), 100);
    const DicomIdentity &a = current.first().identity, &b = prior.first().identity;
    QCOMPARE(b.patientId, a.patientId);
    QCOMPARE(b.issuerOfPatientId, a.issuerOfPatientId);
    QCOMPARE(b.patientName, a.patientName);
    QCOMPARE(b.bodyPartExamined, QStringLiteral("HEAD"));
    QCOMPARE(b.studyDate, QStringLiteral("20230103"));  // a year before the current one
    QCOMPARE(a.studyDate, QStringLiteral("20240102"));
    QVERIFY(prior.first().frameOfReferenceUid != current.first().frameOfReferenceUid);
    QCOMPARE(prior.first().sliceThickness, 2.5);
    QCOMPARE(b.seriesDescription, QStringLiteral("Axial 2.5 mm"));
    // Prior slice k covers the thin slices 2k and 2k+1: its centre is theirs, shifted by the table.
    for (int k : {0, 37, 99}) {
        const double mid = (current[2 * k].slicePositionAlongNormal() + current[2 * k + 1].slicePositionAlongNormal()) / 2;
        QVERIFY2(qAbs(prior[k].slicePositionAlongNormal() - mid - kDemoPriorShiftMm) < 1e-3, qPrintable(QString::number(k)));
    }
}

// With ctSlabSlices, every N thin slices again as one thick slice: their mean, centred on them, in the same frame
// of reference, in a series of its own.
void tst_DemoStudies::thickSlicesAverageTheThinOnesInTheSameFrame()
{
    DemoOptions options;
    options.studies = {DemoStudy::HeadCt};
    options.ctSlices = 16;
    options.ctSlabSlices = 4;
    QList<DecodedImage> thin, thick;
    const Error e = DemoArchive::generate(options, [&](DemoInstance &&inst) {
        Result<DecodedImage> img = decodeDicom(ByteView(inst.bytes));
        if (!img.isOk())
            return img.error();
        (inst.identity.seriesNumber == 2 ? thick : thin) << img.value();
        return Error();
    });
    QVERIFY2(!e.isError(), qPrintable(e.toString()));
    QCOMPARE(thin.size(), 16);
    QCOMPARE(thick.size(), 4);
    QCOMPARE(DemoArchive::instanceCount(options), 20);
    QVERIFY(thick[0].info.identity.seriesInstanceUid != thin[0].info.identity.seriesInstanceUid);
    for (int j = 0; j < 4; ++j) {
        const ImageInfo &t = thick[j].info;
        QCOMPARE(t.frameOfReferenceUid, thin[0].info.frameOfReferenceUid);
        QVERIFY(!t.frameOfReferenceUid.isEmpty());
        QCOMPARE(t.identity.instanceNumber, j + 1);
        QCOMPARE(t.sliceThickness, 4 * thin[0].info.sliceThickness);
        double z = 0;
        for (int k = 4 * j; k < 4 * j + 4; ++k)
            z += thin[k].info.slicePositionAlongNormal() / 4;
        QVERIFY(std::abs(t.slicePositionAlongNormal() - z) < 1e-3);
        const auto *p = reinterpret_cast<const quint16 *>(thick[j].pixels.frameData(0));
        for (const qsizetype i : {qsizetype(0), qsizetype(256 * 512 + 256), qsizetype(300 * 512 + 200)}) {
            int sum = 0;
            for (int k = 4 * j; k < 4 * j + 4; ++k)
                sum += reinterpret_cast<const quint16 *>(thin[k].pixels.frameData(0))[i];
            QCOMPARE(int(p[i]), (sum + 2) / 4);
        }
    }
}

void tst_DemoStudies::identitiesArePlainlyDemo()
{
    for (const DemoInstance &i : m_instances) {
        QVERIFY(i.identity.patientName.startsWith(QLatin1String("DEMO^")));
        QVERIFY(i.identity.patientId.startsWith(QLatin1String("DEMO-")));
        QVERIFY(i.identity.studyDescription.startsWith(QLatin1String("DEMO ")));
        QVERIFY(i.bytes.contains("SYNTHETIC DEMO DATA - NOT A REAL PATIENT"));
    }
}

void tst_DemoStudies::generationIsDeterministic()
{
    DemoOptions small;
    small.ctSlices = 3;
    small.studies = {DemoStudy::HeadCt};
    QList<QByteArray> a, b;
    DemoArchive::generate(small, [&](DemoInstance &&i) { a << QCryptographicHash::hash(i.bytes, QCryptographicHash::Sha256); return Error(); });
    DemoArchive::generate(small, [&](DemoInstance &&i) { b << QCryptographicHash::hash(i.bytes, QCryptographicHash::Sha256); return Error(); });
    QCOMPARE(a.size(), 3);
    QCOMPARE(a, b);
    QCOMPARE(DemoArchive::studyUid(DemoStudy::HeadCt), QStringLiteral("2.25.104936718312662119164801873572494925916"));
}

void tst_DemoStudies::dcmdumpAcceptsEveryStudy()
{
    QTemporaryDir dir;
    QSet<QString> studiesChecked;
    for (const DemoInstance &i : m_instances) {
        if (studiesChecked.contains(i.identity.studyInstanceUid))
            continue;
        studiesChecked.insert(i.identity.studyInstanceUid);
        const QString path = dir.filePath(QStringLiteral("x.dcm"));
        QVERIFY(writeFile(path, i.bytes));
        const ProcessResult r = run(QStringLiteral(DCMDUMP_EXECUTABLE), {QStringLiteral("-dc"), path});
        QVERIFY2(r.ok(), r.err.constData());
        QVERIFY2(r.err.isEmpty(), r.err.constData());  // DCMTK prints any parse warning here
        QVERIFY(r.out.contains(i.identity.sopInstanceUid.toLatin1()));
    }
    QCOMPARE(studiesChecked.size(), 5);
}

void tst_DemoStudies::cancelStopsGeneration()
{
    CancelToken cancel;
    int seen = 0;
    const Error e = DemoArchive::generate(DemoOptions(), [&](DemoInstance &&) {
        if (++seen == 5)
            cancel.cancel();
        return Error();
    }, cancel);
    QCOMPARE(e.code(), ErrorCode::Cancelled);
    QCOMPARE(seen, 5);
}

QTEST_GUILESS_MAIN(tst_DemoStudies)
#include "tst_demostudies.moc"
