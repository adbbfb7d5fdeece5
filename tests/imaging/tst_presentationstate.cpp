// SPDX-License-Identifier: Apache-2.0
// How a series was looked at, as a Grayscale Softcopy Presentation State: the window, the area shown, rotation and
// flip, inversion and the findings as graphics — written, checked by DCMTK's dcmpschk, read back as written and by
// pydicom; and a presentation state made by DCMTK's dcmpsmk read the way DCMTK meant it.

#include "testsupport.h"

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/documents/presentationstate.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace spectrum;

namespace {

const QString kStudy = QStringLiteral("2.25.1001");
const QString kSeries = QStringLiteral("2.25.1002");
const QString kCt = QStringLiteral("1.2.840.10008.5.1.4.1.1.2");

ImageRef image(const QString &sop)
{
    return ImageRef{kStudy, kSeries, kCt, sop, 0};
}

PresentationStateRequest request()
{
    PresentationStateRequest r;
    r.study.studyInstanceUid = kStudy;
    r.study.patientName = QStringLiteral("View^Kept");
    r.study.patientId = QStringLiteral("PR-1");
    r.images = {image(QStringLiteral("2.25.11")), image(QStringLiteral("2.25.12"))};
    r.columns = 512;
    r.rows = 512;
    r.view.window = std::make_pair(40.0, 80.0);
    r.view.displayedArea = QRectF(QPointF(100, 120), QPointF(300, 320));
    r.view.rotation = 90;
    r.view.flipHorizontally = true;
    r.view.inverse = true;
    r.rescaleIntercept = -1024;
    r.rescaleType = QStringLiteral("HU");
    r.description = QStringLiteral("Brain window, zoomed on the lesion");
    r.creatorName = QStringLiteral("Reader^Rita");
    r.annotations[QStringLiteral("2.25.11")] = {
        Annotation{AnnotationKind::Distance, {{110.5, 130.25}, {200, 140}}, QString(), QString()},
        Annotation{AnnotationKind::Ellipse, {{150, 150}, {190, 170}}, QString(), QString()},
        Annotation{AnnotationKind::Polygon, {{120, 200}, {160, 205}, {150, 240}}, QString(), QString()},
        Annotation{AnnotationKind::Text, {{250, 260}}, QStringLiteral("Ödem"), QString()},
    };
    r.labels[QStringLiteral("2.25.11")] = {QStringLiteral("45.0 mm"), QStringLiteral("Mean 40.1 SD 3.2 HU\nArea 314.2 mm²"), QStringLiteral("Area 1.0 mm²"), QString()};
    return r;
}

} // namespace

class TestPresentationState : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        Result<QByteArray> ps = writePresentationState(request());
        QVERIFY2(ps.isOk(), qPrintable(ps.error().toString()));
        m_bytes = ps.value();
        m_path = m_dir.filePath(QStringLiteral("ps.dcm"));
        QVERIFY(test::writeFile(m_path, m_bytes));
    }

    void dcmpschkFindsNothingWrong()
    {
        const test::ProcessResult r = test::run(QStringLiteral(DCMPSCHK_EXECUTABLE), {m_path});
        QVERIFY2(r.ok(), (r.out + r.err).constData());
        // dcmpschk reports on its warning channel: "Testing: FILE", then each problem, then its verdict.
        const QByteArray all = r.out + r.err;
        QVERIFY2(all.contains("Test passed.") && !all.contains("Error") && !all.contains("failed"), all.constData());
    }

    void readsBackTheView()
    {
        Result<PresentationState> read = readPresentationState(ByteView(m_bytes));
        QVERIFY2(read.isOk(), qPrintable(read.error().toString()));
        const PresentationState &s = read.value();
        QCOMPARE(s.identity.modality, QStringLiteral("PR"));
        QCOMPARE(s.description, request().description);
        QCOMPARE(s.creatorName, QStringLiteral("Reader^Rita"));
        QCOMPARE(s.images, request().images);
        QVERIFY(s.view.window && *s.view.window == std::make_pair(40.0, 80.0));
        QCOMPARE(*s.view.displayedArea, QRectF(QPointF(100, 120), QPointF(300, 320)));  // on pixel bounds: exact
        QCOMPARE(s.view.rotation, 90);
        QVERIFY(s.view.flipHorizontally);
        QVERIFY(s.view.inverse);
        QVERIFY2(s.notShown.isEmpty(), qPrintable(s.notShown.join(QLatin1Char('\n'))));
        // The findings as graphics (the values' layer is ours: measured again where shown, not read as text).
        const QList<Annotation> drawn = request().annotations.value(QStringLiteral("2.25.11"));
        const QList<Annotation> back = s.annotations.value(QStringLiteral("2.25.11"));
        QCOMPARE(back.size(), drawn.size());
        for (int i = 0; i < drawn.size(); ++i) {
            QCOMPARE(back[i].kind, drawn[i].kind);
            QCOMPARE(back[i].points, drawn[i].points);
            QCOMPARE(back[i].text, drawn[i].text);
        }
        QVERIFY(s.annotations.value(QStringLiteral("2.25.12")).isEmpty());
    }

    void pydicomReadsTheSame()
    {
        const QString script = QStringLiteral(
            "import json, sys, pydicom\n"
            "ds = pydicom.dcmread(sys.argv[1])\n"
            "voi = ds.SoftcopyVOILUTSequence[0]\n"
            "area = ds.DisplayedAreaSelectionSequence[0]\n"
            "print(json.dumps({'class': ds.SOPClassUID, 'centre': float(voi.WindowCenter), 'width': float(voi.WindowWidth),\n"
            "  'tlhc': list(area.DisplayedAreaTopLeftHandCorner), 'brhc': list(area.DisplayedAreaBottomRightHandCorner),\n"
            "  'rotation': int(ds.ImageRotation), 'flip': ds.ImageHorizontalFlip, 'lut': ds.PresentationLUTShape,\n"
            "  'images': [i.ReferencedSOPInstanceUID for s in ds.ReferencedSeriesSequence for i in s.ReferencedImageSequence],\n"
            "  'layers': [a.GraphicLayer for a in ds.GraphicAnnotationSequence],\n"
            "  'texts': [t.UnformattedTextValue for a in ds.GraphicAnnotationSequence for t in a.get('TextObjectSequence', [])]}))\n");
        const test::ProcessResult r = test::run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral("-c"), script, m_path});
        QVERIFY2(r.ok(), r.err.constData());
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o[QStringLiteral("class")].toString(), QStringLiteral("1.2.840.10008.5.1.4.1.1.11.1"));
        QCOMPARE(o[QStringLiteral("centre")].toDouble(), 40.0);
        QCOMPARE(o[QStringLiteral("width")].toDouble(), 80.0);
        QCOMPARE(o[QStringLiteral("tlhc")].toVariant().toList(), (QVariantList{101, 121}));
        QCOMPARE(o[QStringLiteral("brhc")].toVariant().toList(), (QVariantList{300, 320}));
        QCOMPARE(o[QStringLiteral("rotation")].toInt(), 90);
        QCOMPARE(o[QStringLiteral("flip")].toString(), QStringLiteral("Y"));
        QCOMPARE(o[QStringLiteral("lut")].toString(), QStringLiteral("INVERSE"));
        QCOMPARE(o[QStringLiteral("images")].toVariant().toStringList(), (QStringList{QStringLiteral("2.25.11"), QStringLiteral("2.25.12")}));
        QCOMPARE(o[QStringLiteral("layers")].toVariant().toStringList(), (QStringList{QStringLiteral("FINDINGS"), QStringLiteral("MEASURED VALUES")}));
        const QStringList texts = o[QStringLiteral("texts")].toVariant().toStringList();
        QVERIFY(texts.contains(QStringLiteral("Ödem")));
        QVERIFY(texts.contains(QStringLiteral("45.0 mm")));  // what the reader saw, for viewers that do not measure
    }

    /// DCMTK's dcmpsmk makes a presentation state of an image with its own window: read as DCMTK meant it.
    void readsAStateDcmpsmkMade()
    {
        DemoOptions demo;
        demo.studies = {DemoStudy::HeadCt};
        demo.ctSlices = 1;
        QByteArray ct;
        QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) {
                     ct = i.bytes;
                     return Error();
                 }).isError());
        const QString imagePath = m_dir.filePath(QStringLiteral("ct.dcm")), psPath = m_dir.filePath(QStringLiteral("made.dcm"));
        QVERIFY(test::writeFile(imagePath, ct));
        const test::ProcessResult made = test::run(QStringLiteral(DCMPSMK_EXECUTABLE), {QStringLiteral("+Vw"), imagePath, psPath});
        QVERIFY2(made.ok(), made.err.constData());
        Result<PresentationState> read = readPresentationState(ByteView(test::readFile(psPath)));
        QVERIFY2(read.isOk(), qPrintable(read.error().toString()));
        Result<DecodedImage> decoded = decodeDicom(ByteView(ct));
        QVERIFY(decoded.isOk());
        const ImageInfo &info = decoded.value().info;
        QCOMPARE(read.value().images.size(), 1);
        QCOMPARE(read.value().images[0].sopInstanceUid, info.identity.sopInstanceUid);
        QCOMPARE(read.value().images[0].seriesInstanceUid, info.identity.seriesInstanceUid);
        QVERIFY(!info.windows.isEmpty());
        QVERIFY(read.value().view.window);
        QCOMPARE(read.value().view.window->first, info.windows.first().center);
        QCOMPARE(read.value().view.window->second, info.windows.first().width);
        QCOMPARE(*read.value().view.displayedArea, QRectF(0, 0, info.columns, info.rows));
        QCOMPARE(read.value().view.rotation, 0);
        QVERIFY(!read.value().view.flipHorizontally);
    }

    /// A state another writer made (pydicom, tests/support/gsps_make.py; dcmpschk passes it): each image its own
    /// window and displayed area, a rectangular and circular shutter in white, an activated overlay plane in its
    /// layer's grey and one not activated — read as written, nothing listed as not applied.
    void readsPerImageWindowsShuttersAndOverlays()
    {
        const QString path = m_dir.filePath(QStringLiteral("pydicom-gsps.dcm"));
        const test::ProcessResult made = test::run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(GSPS_MAKE_SCRIPT), path, kStudy, kSeries,
                                                                                        QStringLiteral("2.25.21"), QStringLiteral("2.25.22")});
        QVERIFY2(made.ok(), made.err.constData());
        const test::ProcessResult check = test::run(QStringLiteral(DCMPSCHK_EXECUTABLE), {path});
        QVERIFY2(check.ok() && check.err.contains("Test passed."), check.err.constData());
        Result<PresentationState> read = readPresentationState(ByteView(test::readFile(path)));
        QVERIFY2(read.isOk(), qPrintable(read.error().toString()));
        const PresentationState &ps = read.value();
        QVERIFY2(ps.notShown.isEmpty(), qPrintable(ps.notShown.join(QLatin1Char('\n'))));
        QVERIFY(ps.appliesTo(QStringLiteral("2.25.21")) && ps.appliesTo(QStringLiteral("2.25.22")) && !ps.appliesTo(QStringLiteral("2.25.23")));
        const PresentationView a = ps.viewFor(QStringLiteral("2.25.21")), b = ps.viewFor(QStringLiteral("2.25.22"));
        QCOMPARE(a.window, std::make_optional(std::make_pair(40.0, 80.0)));
        QCOMPARE(b.window, std::make_optional(std::make_pair(300.0, 1500.0)));
        QCOMPARE(a.displayedArea, std::make_optional(QRectF(0, 0, 20, 10)));  // columns 1–20, rows 1–10
        QCOMPARE(b.displayedArea, std::make_optional(QRectF(0, 0, 40, 40)));
        QCOMPARE(ps.view.window, a.window);  // the first image's, for whoever asks the state as a whole
        // The shutter: columns 3–30 and rows 2–35 (1-based), and within 15 pixels of row 20, column 12.
        QVERIFY(ps.shutter);
        QCOMPARE(ps.shutter->grey, 1.0);
        QVERIFY(ps.shutter->shows(QPointF(11.5, 19.5)));   // the centre
        QVERIFY(ps.shutter->shows(QPointF(11.5, 30.5)));   // 11 rows below it (column and row read the other way: 20.6 away)
        QVERIFY(ps.shutter->shows(QPointF(5.5, 19.5)));    // column 6: in the rectangle, 6 from the centre
        QVERIFY(!ps.shutter->shows(QPointF(1.5, 19.5)));   // column 2: left of the rectangle
        QVERIFY(!ps.shutter->shows(QPointF(29.5, 19.5)));  // in the rectangle, 18 from the centre: outside the circle
        QVERIFY(!ps.shutter->shows(QPointF(11.5, 36.5)));  // row 37: below the rectangle
        // The activated overlay only; its pixels where they were set, in its layer's grey.
        QCOMPARE(ps.overlays.size(), 1);
        const PresentationOverlay &o = ps.overlays.first();
        QCOMPARE(o.rows, 8);
        QCOMPARE(o.columns, 8);
        QCOMPARE(o.origin, QPointF(4, 2));  // column 5, row 3
        QVERIFY(std::abs(o.grey - 0x8000 / 65535.0) < 1e-9);
        int set = 0;
        for (int y = 0; y < 8; ++y)
            for (int x = 0; x < 8; ++x) {
                const bool inBand = y >= 1 && y < 3 && x >= 2 && x < 7;
                QCOMPARE(bool(o.bits[y * 8 + x]), inBand);
                set += o.bits[y * 8 + x];
            }
        QCOMPARE(set, 10);
        QCOMPARE(ps.overlaysFor(QStringLiteral("2.25.22")).size(), 1);
    }

    void refusesWhatIsNotAState()
    {
        QVERIFY(!readPresentationState(ByteView(QByteArray("no"))).isOk());
        PresentationStateRequest r = request();
        r.view.rotation = 45;
        QCOMPARE(writePresentationState(r).error().code(), ErrorCode::InvalidArgument);
        r = request();
        r.images[0].studyInstanceUid = QStringLiteral("2.25.9");
        QCOMPARE(writePresentationState(r).error().code(), ErrorCode::InvalidArgument);
    }

private:
    QTemporaryDir m_dir;
    QByteArray m_bytes;
    QString m_path;
};

QTEST_GUILESS_MAIN(TestPresentationState)
#include "tst_presentationstate.moc"
