// SPDX-License-Identifier: Apache-2.0
// Findings as a Structured Report: what is drawn is written as TID 1500, read back the same, accepted by DCMTK's
// dsrdump, read by pydicom with the same values and references; and reports of other shapes (SNOMED RT codes,
// circles, tilted ellipses, 3-D coordinates, values with no coordinates) are read without losing anything silently.

#include "rampimage.h"
#include "testsupport.h"

#include "spectrum/core/uid.h"
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
const QString kSeries = QStringLiteral("2.25.1002");
const QString kImage = QStringLiteral("2.25.1003");
const QString kCtClass = QStringLiteral("1.2.840.10008.5.1.4.1.1.2");

DecodedImage image()
{
    DecodedImage im = test::rampCt(64, 48, 0.5, 0.5);  // pixel (x, y) is x + 10·y HU
    DicomIdentity &id = im.info.identity;
    id.patientName = QStringLiteral("Müller^Jürgen");
    id.patientId = QStringLiteral("SR-1");
    id.patientBirthDate = QStringLiteral("19600101");
    id.patientSex = QStringLiteral("M");
    id.studyInstanceUid = kStudy;
    id.studyDate = QStringLiteral("20261124");
    id.accessionNumber = QStringLiteral("ACC-7");
    id.seriesInstanceUid = kSeries;
    id.sopInstanceUid = kImage;
    id.sopClassUid = kCtClass;
    return im;
}

Annotation annotation(AnnotationKind kind, QList<QPointF> points, QString text = QString())
{
    Annotation a;
    a.kind = kind;
    a.points = std::move(points);
    a.text = std::move(text);
    a.trackingUid = makeUid();
    return a;
}

/// One of every kind a tool draws.
QList<Annotation> everyKind()
{
    QList<QPointF> freehand;
    for (int i = 0; i < 40; ++i)
        freehand << QPointF(30 + 8 * std::cos(2 * M_PI * i / 40), 24 + 6 * std::sin(2 * M_PI * i / 40));
    return {
        annotation(AnnotationKind::Distance, {{10.5, 10.5}, {40.5, 30.25}}),
        annotation(AnnotationKind::Rectangle, {{4, 4}, {12, 10}}),
        annotation(AnnotationKind::Ellipse, {{20, 5}, {36, 15}}, QStringLiteral("cyst")),
        annotation(AnnotationKind::Angle, {{10, 40}, {20, 20}, {40, 30}}),
        annotation(AnnotationKind::CobbAngle, {{5, 5}, {25, 10}, {5, 30}, {25, 20}}),
        annotation(AnnotationKind::Bidirectional, {{10, 20}, {30, 22}, {20, 15}, {21, 28}}),
        annotation(AnnotationKind::Arrow, {{15, 15}, {25, 5}}, QStringLiteral("nodule, see prior")),
        annotation(AnnotationKind::Text, {{50, 40}}, QStringLiteral("motion artefact")),
        annotation(AnnotationKind::Polygon, {{40, 5}, {55, 8}, {50, 20}, {42, 18}}),
        annotation(AnnotationKind::Freehand, freehand),
        annotation(AnnotationKind::Point, {{33.5, 7.5}}),
    };
}

MeasurementReportRequest request(const DecodedImage &im, const QList<Annotation> &annotations)
{
    MeasurementReportRequest r;
    r.study = im.info.identity;
    r.observerName = QStringLiteral("Reader^Rita");
    for (const Annotation &a : annotations)
        r.findings << ReportedFinding{a, ImageRef::of(im.info), measure(a, im, 0), QString(), {}};
    return r;
}

bool close(QPointF a, QPointF b)
{
    return std::abs(a.x() - b.x()) < 1e-4 && std::abs(a.y() - b.y()) < 1e-4;  // SCOORD data are 32-bit floats
}

} // namespace

class TestMeasurementReport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_image = image();
        m_annotations = everyKind();
        Result<QByteArray> sr = writeMeasurementReport(request(m_image, m_annotations));
        QVERIFY2(sr.isOk(), qPrintable(sr.error().toString()));
        m_bytes = sr.value();
        m_path = m_dir.filePath(QStringLiteral("report.dcm"));
        QVERIFY(test::writeFile(m_path, m_bytes));
    }

    /// What the viewer drew is what it reads back: kinds, points, words, tracking UIDs and values.
    void readsBackWhatWasDrawn()
    {
        Result<ReadReport> read = readStructuredReport(ByteView(m_bytes));
        QVERIFY2(read.isOk(), qPrintable(read.error().toString()));
        const ReadReport &r = read.value();
        QCOMPARE(r.templateId, QStringLiteral("1500"));
        QCOMPARE(r.title, QStringLiteral("Imaging Measurement Report"));
        QCOMPARE(r.observerName, QStringLiteral("Reader^Rita"));
        QCOMPARE(r.identity.patientName, QStringLiteral("Müller^Jürgen"));
        QCOMPARE(r.identity.studyInstanceUid, kStudy);
        QCOMPARE(r.identity.modality, QStringLiteral("SR"));
        QCOMPARE(r.completion, QStringLiteral("COMPLETE"));
        QVERIFY2(r.notShown.isEmpty(), qPrintable(r.notShown.join(QLatin1Char('\n'))));
        QCOMPARE(r.findings.size(), m_annotations.size());
        for (int i = 0; i < m_annotations.size(); ++i) {
            const Annotation &drawn = m_annotations[i];
            const ReportedFinding &f = r.findings[i];
            const QString what = kindName(drawn.kind);
            QVERIFY2(f.annotation.kind == drawn.kind, qPrintable(QStringLiteral("%1 read as %2").arg(what, kindName(f.annotation.kind))));
            QCOMPARE(f.annotation.points.size(), drawn.points.size());
            for (int p = 0; p < drawn.points.size(); ++p)
                QVERIFY2(close(f.annotation.points[p], drawn.points[p]), qPrintable(what));
            QCOMPARE(f.annotation.text, drawn.text);
            QCOMPARE(f.annotation.trackingUid, drawn.trackingUid);
            QCOMPARE(f.image.sopInstanceUid, kImage);
            QCOMPARE(f.image.sopClassUid, kCtClass);
            const QList<MeasuredValue> measured = measure(drawn, m_image, 0);
            QCOMPARE(f.values.size(), measured.size());
            for (int v = 0; v < measured.size(); ++v) {
                QVERIFY2(f.values[v].quantity == measured[v].quantity, qPrintable(what));
                QVERIFY2(std::abs(f.values[v].value - measured[v].value) <= 1e-8 * std::max(1.0, std::abs(measured[v].value)),
                         qPrintable(QStringLiteral("%1: %2 read as %3").arg(what).arg(measured[v].value).arg(f.values[v].value)));
                QCOMPARE(f.values[v].unit, measured[v].unit);
                QCOMPARE(f.values[v].unitMeaning, measured[v].unitMeaning);
            }
        }
    }

    /// The values themselves, against the ramp (x + 10·y HU) and the geometry.
    void measuresInModalityUnitsAndMillimetres()
    {
        const QList<MeasuredValue> distance = measure(m_annotations[0], m_image, 0);
        QCOMPARE(distance.size(), 1);
        QVERIFY(std::abs(distance[0].value - std::hypot(30.0 * 0.5, 19.75 * 0.5)) < 1e-9);
        QCOMPARE(distance[0].unit, QStringLiteral("mm"));
        const QList<MeasuredValue> point = measure(m_annotations[10], m_image, 0);
        QCOMPARE(point.size(), 1);
        QCOMPARE(point[0].value, 33.0 + 10 * 7);
        QCOMPARE(point[0].unitMeaning, QStringLiteral("HU"));
        const QList<MeasuredValue> rect = measure(m_annotations[1], m_image, 0);  // pixels x 4…11, y 4…9
        QCOMPARE(rect[0].quantity, Quantity::Area);
        QCOMPARE(rect[0].value, 8 * 6 * 0.25);
        QCOMPARE(rect[1].quantity, Quantity::Mean);
        QCOMPARE(rect[1].value, 7.5 + 10 * 6.5);
        QCOMPARE(rect[3].value, 4.0 + 40);   // minimum
        QCOMPARE(rect[4].value, 11.0 + 90);  // maximum
        const QList<MeasuredValue> angle = measure(m_annotations[3], m_image, 0);
        const double expected = std::acos((-10 * 20 + 20 * 10) / (std::hypot(10, 20) * std::hypot(20, 10))) * 180 / M_PI;  // 90°
        QVERIFY(std::abs(angle[0].value - expected) < 1e-9);
        const QList<MeasuredValue> cobb = measure(m_annotations[4], m_image, 0);
        QVERIFY(std::abs(cobb[0].value - (std::atan2(5, 20) + std::atan2(10, 20)) * 180 / M_PI) < 1e-9);
        QVERIFY(measure(m_annotations[6], m_image, 0).isEmpty());  // an arrow measures nothing
    }

    /// DCMTK's dsrdump reads it as a valid Comprehensive SR: no error, no warning.
    void dsrdumpAcceptsIt()
    {
        const test::ProcessResult r = test::run(QStringLiteral(DSRDUMP_EXECUTABLE), {m_path});
        QVERIFY2(r.ok(), r.err.constData());
        QVERIFY2(!r.err.contains("E:") && !r.err.contains("W:"), r.err.constData());
        QVERIFY(r.out.contains("Comprehensive SR Document"));
        QVERIFY(r.out.contains("Imaging Measurement Report"));
    }

    /// Names beyond Latin-1 are written in UTF-8 and read back the same (dsrdump says only that its VR checker
    /// does not check UTF-8).
    void writesUtf8WhenLatin1DoesNotFit()
    {
        DecodedImage im = m_image;
        im.info.identity.patientName = QStringLiteral("Ψυχογιός^Νίκος");
        MeasurementReportRequest r = request(im, {annotation(AnnotationKind::Arrow, {{1, 1}, {9, 9}}, QStringLiteral("οίδημα"))});
        Result<QByteArray> sr = writeMeasurementReport(r);
        QVERIFY(sr.isOk());
        Result<ReadReport> read = readStructuredReport(ByteView(sr.value()));
        QVERIFY(read.isOk());
        QCOMPARE(read.value().identity.patientName, QStringLiteral("Ψυχογιός^Νίκος"));
        QCOMPARE(read.value().findings[0].annotation.text, QStringLiteral("οίδημα"));
        const QString path = m_dir.filePath(QStringLiteral("utf8.dcm"));
        QVERIFY(test::writeFile(path, sr.value()));
        const test::ProcessResult dump = test::run(QStringLiteral(DSRDUMP_EXECUTABLE), {path});
        QVERIFY2(dump.ok(), dump.err.constData());
        QByteArray err = dump.err;
        err.replace("W: The VR checker does not support this Specific Character Set: ISO_IR 192\n", "");
        QVERIFY2(!err.contains("E:") && !err.contains("W:"), dump.err.constData());
    }

    /// pydicom, reading the file alone, finds every group with its values and the image each is drawn on.
    void pydicomReadsTheSameValues()
    {
        const test::ProcessResult r = test::run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(SR_READ_SCRIPT), m_path});
        QVERIFY2(r.ok(), r.err.constData());
        const QJsonObject report = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(report[QStringLiteral("sopClass")].toString(), QStringLiteral("1.2.840.10008.5.1.4.1.1.88.33"));
        QCOMPARE(report[QStringLiteral("modality")].toString(), QStringLiteral("SR"));
        QCOMPARE(report[QStringLiteral("studyUid")].toString(), kStudy);
        QCOMPARE(report[QStringLiteral("patientName")].toString(), QStringLiteral("Müller^Jürgen"));
        QCOMPARE(report[QStringLiteral("template")].toString(), QStringLiteral("1500"));
        QCOMPARE(report[QStringLiteral("evidence")].toArray(), QJsonArray{kImage});
        const QJsonArray groups = report[QStringLiteral("groups")].toArray();
        QCOMPARE(groups.size(), m_annotations.size());
        for (int i = 0; i < groups.size(); ++i) {
            const QJsonObject g = groups[i].toObject();
            const Annotation &drawn = m_annotations[i];
            QCOMPARE(g[QStringLiteral("trackingUid")].toString(), drawn.trackingUid);
            QVERIFY(!g[QStringLiteral("trackingId")].toString().isEmpty());
            // Every coordinate is on our image, in image pixels.
            const QJsonArray scoords = g[QStringLiteral("scoords")].toArray();
            QVERIFY(!scoords.isEmpty());
            QList<QPointF> written;
            for (const QJsonValue &s : scoords) {
                QCOMPARE(s[QStringLiteral("sop")].toString(), kImage);
                const QJsonArray data = s[QStringLiteral("data")].toArray();
                for (int k = 0; k + 1 < data.size(); k += 2)
                    written << QPointF(data[k].toDouble(), data[k + 1].toDouble());
            }
            for (const QPointF &p : drawn.kind == AnnotationKind::Ellipse || drawn.kind == AnnotationKind::Rectangle ? QList<QPointF>{} : drawn.points)
                QVERIFY2(std::any_of(written.begin(), written.end(), [&](QPointF w) { return close(w, p); }), qPrintable(kindName(drawn.kind)));
            // The values as pydicom reads them equal what was measured.
            const QList<MeasuredValue> measured = measure(drawn, m_image, 0);
            const QJsonArray nums = g[QStringLiteral("nums")].toArray();
            QCOMPARE(nums.size(), measured.size());
            for (int v = 0; v < nums.size(); ++v) {
                const QJsonObject n = nums[v].toObject();
                QVERIFY(std::abs(n[QStringLiteral("value")].toDouble() - measured[v].value) <= 1e-8 * std::max(1.0, std::abs(measured[v].value)));
                QCOMPARE(n[QStringLiteral("unit")].toArray()[0].toString(), measured[v].unit);
                QCOMPARE(n[QStringLiteral("unit")].toArray()[1].toString(), QStringLiteral("UCUM"));
            }
            if (drawn.kind == AnnotationKind::Rectangle) {
                QCOMPARE(nums[0].toObject()[QStringLiteral("concept")].toArray()[0].toString(), QStringLiteral("42798000"));  // Area
                QCOMPARE(nums[1].toObject()[QStringLiteral("concept")].toArray()[0].toString(), QStringLiteral("112031"));  // attenuation
                QCOMPARE(nums[1].toObject()[QStringLiteral("derivation")].toArray()[0].toString(), QStringLiteral("373098007"));  // mean
                QCOMPARE(nums[1].toObject()[QStringLiteral("unit")].toArray()[0].toString(), QStringLiteral("[hnsf'U]"));
            }
            if (drawn.kind == AnnotationKind::Ellipse)
                QCOMPARE(scoords[0].toObject()[QStringLiteral("type")].toString(), QStringLiteral("ELLIPSE"));
            if (drawn.kind == AnnotationKind::Arrow)
                QCOMPARE(g[QStringLiteral("comments")].toArray(), QJsonArray{drawn.text});
        }
    }

    /// A finding on a frame of a multi-frame image names the frame; one on another study's image is refused.
    void framesAndStudies()
    {
        DecodedImage im = m_image;
        im.info.frames = 3;
        im.info.frameIndex = 1;
        MeasurementReportRequest r = request(im, {m_annotations[0]});
        QCOMPARE(r.findings[0].image.frame, 2);
        Result<QByteArray> sr = writeMeasurementReport(r);
        QVERIFY(sr.isOk());
        Result<ReadReport> read = readStructuredReport(ByteView(sr.value()));
        QVERIFY(read.isOk());
        QCOMPARE(read.value().findings.size(), 1);
        QCOMPARE(read.value().findings[0].image.frame, 2);

        r.findings[0].image.studyInstanceUid = QStringLiteral("2.25.999");
        QCOMPARE(writeMeasurementReport(r).error().code(), ErrorCode::InvalidArgument);
        MeasurementReportRequest broken = request(m_image, {annotation(AnnotationKind::Angle, {{1, 1}, {2, 2}})});
        QCOMPARE(writeMeasurementReport(broken).error().code(), ErrorCode::InvalidArgument);
    }

    /// Not a report: a clear error.
    void rejectsWhatIsNotAReport()
    {
        QVERIFY(!readStructuredReport(ByteView(QByteArray("not DICOM at all"))).isOk());
        QVERIFY(!readStructuredReport(ByteView(m_bytes.left(m_bytes.size() / 2))).isOk());
    }

private:
    QTemporaryDir m_dir;
    DecodedImage m_image;
    QList<Annotation> m_annotations;
    QByteArray m_bytes;
    QString m_path;
};

QTEST_GUILESS_MAIN(TestMeasurementReport)
#include "tst_measurementreport.moc"
