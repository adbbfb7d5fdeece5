// SPDX-License-Identifier: Apache-2.0
// Structured Reports between us and software we did not write: highdicom (PyPI, in a venv this test makes) reads our
// measurement reports as TID 1500 — regions as planar ROI groups with their statistics, lines and angles as
// measurement groups — with the values and places we drew; and we read highdicom's reports and one made by DCMTK's
// xml2dsr the way another vendor writes them, drawing what can be drawn and listing the rest.

#include "rampimage.h"
#include "testsupport.h"

#include "spectrum/core/uid.h"
#include "spectrum/imaging/documents/keyobjects.h"
#include "spectrum/imaging/documents/measurementreport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace spectrum;

namespace {

const QString kStudy = QStringLiteral("2.25.1001");
const QString kImage = QStringLiteral("2.25.1003");
const QString kCtClass = QStringLiteral("1.2.840.10008.5.1.4.1.1.2");

QString venvPython()
{
    return QStringLiteral(TEST_VENV_DIR "/bin/python");
}

bool near(double a, double b, double tolerance = 1e-4)
{
    return std::abs(a - b) <= tolerance * std::max(1.0, std::abs(b));
}

} // namespace

class TestForeignReports : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        const test::ProcessResult venv = test::run(QStringLiteral(PYVENV_SCRIPT), {QStringLiteral(TEST_VENV_DIR), QStringLiteral(TEST_PEERS_REQUIREMENTS)}, 600000);
        QVERIFY2(venv.ok(), qPrintable(QStringLiteral("the test peers' venv (PyPI: highdicom) could not be made: ") + QString::fromLocal8Bit(venv.err)));
    }

    /// highdicom reads ours: regions as TID 1410 with the region we drew and its statistics (with their
    /// derivations), the other findings as TID 1501 groups with their values.
    void highdicomReadsOurReports()
    {
        DecodedImage image = test::rampCt(64, 48, 0.5, 0.5);
        DicomIdentity &id = image.info.identity;
        id.patientName = QStringLiteral("HD^CHECK");
        id.patientId = QStringLiteral("SR-1");
        id.studyInstanceUid = kStudy;
        id.seriesInstanceUid = QStringLiteral("2.25.1002");
        id.sopInstanceUid = kImage;
        id.sopClassUid = kCtClass;
        id.modality = QStringLiteral("CT");
        const QList<Annotation> drawn = {
            Annotation{AnnotationKind::Ellipse, {{20, 5}, {36, 15}}, QString(), makeUid()},
            Annotation{AnnotationKind::Polygon, {{40, 5}, {55, 8}, {50, 20}, {42, 18}}, QString(), makeUid()},
            Annotation{AnnotationKind::Distance, {{10.5, 10.5}, {40.5, 30.25}}, QString(), makeUid()},
            Annotation{AnnotationKind::Bidirectional, {{10, 20}, {30, 22}, {20, 15}, {21, 28}}, QString(), makeUid()},
        };
        MeasurementReportRequest request;
        request.study = id;
        for (const Annotation &a : drawn)
            request.findings << ReportedFinding{a, ImageRef::of(image.info), measure(a, image, 0), QString(), {}};
        Result<QByteArray> sr = writeMeasurementReport(request);
        QVERIFY(sr.isOk());
        const QString path = m_dir.filePath(QStringLiteral("ours.dcm"));
        QVERIFY(test::writeFile(path, sr.value()));

        const test::ProcessResult r = test::run(venvPython(), {QStringLiteral(HD_REPORT_SCRIPT), QStringLiteral("read"), path});
        QVERIFY2(r.ok(), r.err.constData());
        const QJsonObject read = QJsonDocument::fromJson(r.out).object();
        const QJsonArray planar = read[QStringLiteral("planar")].toArray();
        QCOMPARE(planar.size(), 2);
        for (int i = 0; i < 2; ++i) {
            const QJsonObject g = planar[i].toObject();
            QCOMPARE(g[QStringLiteral("trackingUid")].toString(), drawn[i].trackingUid);
            QCOMPARE(g[QStringLiteral("sop")].toString(), kImage);
            QCOMPARE(g[QStringLiteral("graphicType")].toString(), i == 0 ? QStringLiteral("ELLIPSE") : QStringLiteral("POLYLINE"));
            const QList<MeasuredValue> values = measure(drawn[i], image, 0);
            const QJsonArray m = g[QStringLiteral("measurements")].toArray();
            QCOMPARE(m.size(), values.size());  // area, mean, SD, minimum, maximum
            const QStringList derivations{QString(), QStringLiteral("373098007"), QStringLiteral("386136009"), QStringLiteral("255605001"), QStringLiteral("56851009")};
            for (int k = 0; k < m.size(); ++k) {
                QVERIFY(near(m[k][QStringLiteral("value")].toDouble(), values[k].value, 1e-8));
                QCOMPARE(m[k][QStringLiteral("derivation")].toString(), derivations[k]);
            }
        }
        const QJsonArray polygon = planar[1][QStringLiteral("points")].toArray();
        QCOMPARE(polygon.size(), 5);  // closed: the first vertex again
        for (int k = 0; k < 4; ++k) {
            QCOMPARE(polygon[k].toArray()[0].toDouble(), drawn[1].points[k].x());
            QCOMPARE(polygon[k].toArray()[1].toDouble(), drawn[1].points[k].y());
        }
        const QJsonArray groups = read[QStringLiteral("image")].toArray();
        QCOMPARE(groups.size(), 2);
        QCOMPARE(groups[0][QStringLiteral("trackingUid")].toString(), drawn[2].trackingUid);
        QCOMPARE(groups[0][QStringLiteral("measurements")].toArray()[0][QStringLiteral("name")].toArray()[0].toString(), QStringLiteral("410668003"));
        QVERIFY(near(groups[0][QStringLiteral("measurements")].toArray()[0][QStringLiteral("value")].toDouble(), measure(drawn[2], image, 0)[0].value, 1e-8));
        const QJsonArray axes = groups[1][QStringLiteral("measurements")].toArray();
        QCOMPARE(axes.size(), 2);
        QCOMPARE(axes[0][QStringLiteral("name")].toArray()[2].toString(), QStringLiteral("Long Axis"));
        QCOMPARE(axes[1][QStringLiteral("name")].toArray()[2].toString(), QStringLiteral("Short Axis"));
    }

    /// A report highdicom wrote: its circle drawn as our ellipse, its polygon (a rectangle) as a rectangle, each
    /// with its values and finding type; its volume, which has no coordinates, listed.
    void readsHighdicomReports()
    {
        const QString path = m_dir.filePath(QStringLiteral("hd.dcm"));
        const test::ProcessResult w = test::run(venvPython(), {QStringLiteral(HD_REPORT_SCRIPT), QStringLiteral("write"), path, kStudy,
                                                               QStringLiteral("2.25.1002"), kCtClass, kImage, QStringLiteral("SR-1")});
        QVERIFY2(w.ok(), w.err.constData());
        Result<ReadReport> read = readStructuredReport(ByteView(test::readFile(path)));
        QVERIFY2(read.isOk(), qPrintable(read.error().toString()));
        const ReadReport &r = read.value();
        QCOMPARE(r.templateId, QStringLiteral("1500"));
        QCOMPARE(r.observerName, QStringLiteral("Other^Reader"));
        QCOMPARE(r.findings.size(), 2);
        const ReportedFinding &circle = r.findings[0];
        QCOMPARE(circle.annotation.kind, AnnotationKind::Ellipse);
        QCOMPARE(circle.annotation.points, (QList<QPointF>{{15, 15}, {25, 25}}));
        QCOMPARE(circle.image.sopInstanceUid, kImage);
        QCOMPARE(circle.label, QStringLiteral("lesion 1"));
        QVERIFY(!circle.annotation.trackingUid.isEmpty());
        QCOMPARE(circle.values.size(), 2);
        QCOMPARE(circle.values[0].quantity, Quantity::Area);
        QVERIFY(near(circle.values[0].value, 19.63));
        QCOMPARE(circle.values[1].quantity, Quantity::Mean);
        QVERIFY(near(circle.values[1].value, 219.5));
        QCOMPARE(circle.values[1].unitMeaning, QStringLiteral("HU"));
        QCOMPARE(circle.otherValues, QStringList{QStringLiteral("Finding: Nodule")});
        QCOMPARE(r.findings[1].annotation.kind, AnnotationKind::Rectangle);
        QCOMPARE(r.findings[1].annotation.points, (QList<QPointF>{{4, 4}, {12, 10}}));
        QCOMPARE(r.notShown.size(), 1);
        QVERIFY2(r.notShown[0].startsWith(QStringLiteral("Volume 1.5 milliliter (volume)")), qPrintable(r.notShown[0]));
    }

    /// Key Object Selections highdicom writes: "Of Interest" with its images as IMAGE references, and again with
    /// them as COMPOSITE references (highdicom's way when it is not told they are images) — key images both; and an
    /// IHE IOCM rejection note ("Rejected for Patient Safety Reasons"): a rejection, never key images.
    void readsHighdicomKeyObjects()
    {
        const QString series = QStringLiteral("2.25.1002"), other = QStringLiteral("2.25.1004");
        for (const QString &form : {QStringLiteral("113000"), QStringLiteral("113000:composite"), QStringLiteral("113037")}) {
            const QString path = m_dir.filePath(QStringLiteral("hd-ko-%1.dcm").arg(QString(form).replace(QLatin1Char(':'), QLatin1Char('-'))));
            const test::ProcessResult w = test::run(venvPython(), {QStringLiteral(HD_REPORT_SCRIPT), QStringLiteral("keys"), path, form, kStudy, series,
                                                                   kCtClass, QStringLiteral("SR-1"), kImage, other});
            QVERIFY2(w.ok(), w.err.constData());
            Result<KeyObjectSelection> read = readKeyObjectSelection(ByteView(test::readFile(path)));
            QVERIFY2(read.isOk(), qPrintable(read.error().toString()));
            const KeyObjectSelection &k = read.value();
            QCOMPARE(k.observerName, QStringLiteral("Other^Reader"));
            QCOMPARE(k.description, QStringLiteral("chosen elsewhere"));
            QCOMPARE(k.images, (QList<ImageRef>{ImageRef{kStudy, series, kCtClass, kImage, 0}, ImageRef{kStudy, series, kCtClass, other, 0}}));
            QVERIFY2(k.notShown.isEmpty(), qPrintable(k.notShown.join(QLatin1Char('\n'))));
            QCOMPARE(k.isRejectionNote(), form == QLatin1String("113037"));
            QCOMPARE(k.title, form == QLatin1String("113037") ? QStringLiteral("Rejected for Patient Safety Reasons") : QStringLiteral("Of Interest"));
        }
    }

    /// Another vendor's report, made by DCMTK's xml2dsr: SNOMED RT codes, a frame, a tilted ellipse, a text at a
    /// point, coordinates on no image and a value with none — each drawn, or listed with why.
    void readsAnotherVendorsReport()
    {
        const QString path = m_dir.filePath(QStringLiteral("vendor.dcm"));
        const test::ProcessResult x = test::run(QStringLiteral(XML2DSR_EXECUTABLE), {QStringLiteral(TEST_DATA_DIR "/foreign-report.xml"), path});
        QVERIFY2(x.ok(), x.err.constData());
        Result<ReadReport> read = readStructuredReport(ByteView(test::readFile(path)));
        QVERIFY2(read.isOk(), qPrintable(read.error().toString()));
        const ReadReport &r = read.value();
        QCOMPARE(r.identity.patientName, QStringLiteral("Müller^Jürgen"));
        QCOMPARE(r.observerName, QStringLiteral("Vendor^Vera"));
        QCOMPARE(r.findings.size(), 3);
        const ReportedFinding &length = r.findings[0];
        QCOMPARE(length.annotation.kind, AnnotationKind::Distance);
        QCOMPARE(length.image.sopInstanceUid, QStringLiteral("2.25.1004"));
        QCOMPARE(length.image.frame, 3);
        QCOMPARE(length.values.size(), 1);
        QCOMPARE(length.values[0].quantity, Quantity::Length);  // G-D7FE, SRT
        QCOMPARE(length.values[0].value, 31.5);
        QCOMPARE(length.label, QStringLiteral("aorta"));
        const ReportedFinding &tilted = r.findings[1];
        QCOMPARE(tilted.annotation.kind, AnnotationKind::Polygon);  // our ellipses are upright: its outline
        for (const QPointF &p : tilted.annotation.points) {
            // On the ellipse: centre (20, 20), semi-axes 14.1 along (1, 1) and 5.7 along (1, −1).
            const QPointF d = p - QPointF(20, 20);
            const double u = (d.x() + d.y()) / std::sqrt(2.0), v = (d.x() - d.y()) / std::sqrt(2.0);
            QVERIFY(near(u * u / 200 + v * v / 32, 1.0, 1e-3));
        }
        QCOMPARE(tilted.values[0].quantity, Quantity::Area);
        QCOMPARE(r.findings[2].annotation.kind, AnnotationKind::Text);
        QCOMPARE(r.findings[2].annotation.text, QStringLiteral("Ödem"));
        QCOMPARE(r.findings[2].annotation.points, QList<QPointF>{QPointF(5.5, 6.5)});
        QCOMPARE(r.notShown, (QStringList{QStringLiteral("Center (nowhere): its coordinates name no image"),
                                          QStringLiteral("Volume 12.5 milliliter (nowhere): no image coordinates")}));
    }

private:
    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(TestForeignReports)
#include "tst_foreignreports.moc"
