// SPDX-License-Identifier: Apache-2.0
// Derived instances (a processed image, a reformatted plane sent back to the archive) keep every name and text of
// their original as it was, whatever its character set, and carry their own descriptions — the original's with
// " (processed)", or one given in any alphabet — in a character set that holds them: read back by us and by pydicom
// (not ours), on originals pydicom wrote in Cyrillic, Greek, Japanese (ISO 2022), Chinese (GB18030), UTF-8 and
// Latin-1.

#include "spectrum/imaging/documents/derivedinstance.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"

#include "testsupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace spectrum;
using namespace spectrum::test;

class tst_DerivedInstance : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void namesAndDescriptionsKeepTheirCharacters_data();
    void namesAndDescriptionsKeepTheirCharacters();
    void undeclaredTextIsNeverGuessed();
    void otherValuesSurviveAndUnknownBytesAreNamed();
    void realValuesAreSentBackAsTheyCame_data();
    void realValuesAreSentBackAsTheyCame();
    void aResampledCopyKeepsThePixelsShape();

private:
    QTemporaryDir m_dir;
};

void tst_DerivedInstance::namesAndDescriptionsKeepTheirCharacters_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("patient");
    QTest::addColumn<QString>("description");
    QTest::addColumn<QString>("given");
    const QString folder = m_dir.filePath(QStringLiteral("charsets"));
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(CHARSET_FILES_SCRIPT), folder});
    QVERIFY2(made.ok(), made.err.constData());
    const QStringList lines = QString::fromUtf8(made.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 6);
    for (const QString &line : lines) {
        const QStringList f = line.split(QLatin1Char('\t'));
        const QString file = folder + QLatin1Char('/') + f[0] + QStringLiteral(".dcm");
        QTest::addRow("%s, its own description", qPrintable(f[0])) << file << f[1] << f[2] << QString();
        QTest::addRow("%s, ASCII given", qPrintable(f[0])) << file << f[1] << f[2] << QStringLiteral("Bone 3x3");
        QTest::addRow("%s, Latin-1 given", qPrintable(f[0])) << file << f[1] << f[2] << QStringLiteral("Schädel geschärft");
        QTest::addRow("%s, beyond Latin-1 given", qPrintable(f[0])) << file << f[1] << f[2] << QStringLiteral("胸部 – Übersicht ½");
    }
}

void tst_DerivedInstance::namesAndDescriptionsKeepTheirCharacters()
{
    QFETCH(QString, file);
    QFETCH(QString, patient);
    QFETCH(QString, description);
    QFETCH(QString, given);
    const QByteArray original = readFile(file);
    const Result<DecodedImage> image = decodeDicom(ByteView(original));
    QVERIFY(image.isOk());
    Derivation derivation;
    derivation.seriesDescription = given;
    derivation.description = given.isEmpty() ? QStringLiteral("Sharpen") : given;
    const Result<DerivedInstance> derived = makeDerivedInstance(ByteView(original), image.value().pixels, derivation);
    QVERIFY2(derived.isOk(), qPrintable(derived.isOk() ? QString() : derived.error().toString()));
    const QString expected = given.isEmpty() ? (description + QStringLiteral(" (processed)")).trimmed() : given;

    // Read back by us.
    const Result<DicomIdentity> id = readDicomIdentity(ByteView(derived.value().bytes));
    QVERIFY(id.isOk());
    QCOMPARE(id.value().patientName, patient);
    QCOMPARE(id.value().studyDescription, description);
    QCOMPARE(id.value().seriesDescription, expected);

    // And by pydicom.
    const QString path = m_dir.filePath(QStringLiteral("derived.dcm"));
    QVERIFY(writeFile(path, derived.value().bytes));
    const ProcessResult read = run(QStringLiteral(PYTHON3_EXECUTABLE),
                                   {QStringLiteral("-c"), QStringLiteral("import json, sys, pydicom\n"
                                                                         "ds = pydicom.dcmread(sys.argv[1])\n"
                                                                         "print(json.dumps({'patient': str(ds.PatientName), 'study': ds.StudyDescription,\n"
                                                                         "                  'series': ds.SeriesDescription, 'derivation': ds.DerivationDescription}))"),
                                    path});
    QVERIFY2(read.ok(), read.err.constData());
    const QJsonObject o = QJsonDocument::fromJson(read.out).object();
    QCOMPARE(o.value(QStringLiteral("patient")).toString(), patient);
    QCOMPARE(o.value(QStringLiteral("study")).toString(), description);
    QCOMPARE(o.value(QStringLiteral("series")).toString(), expected);
    QCOMPARE(o.value(QStringLiteral("derivation")).toString(), derivation.description);
}

void tst_DerivedInstance::undeclaredTextIsNeverGuessed()
{
    // The Latin-1 file with its Specific Character Set taken out (DCMTK's dcmodify): its names' bytes are kept as
    // they are — its own description with " (processed)" too —, and a description no Latin-1 byte can say is
    // refused, not written in a set the original's bytes would then be taken to be in.
    const QString folder = m_dir.filePath(QStringLiteral("undeclared"));
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(CHARSET_FILES_SCRIPT), folder});
    QVERIFY2(made.ok(), made.err.constData());
    const QString file = folder + QStringLiteral("/latin1.dcm");
    const ProcessResult modified = run(QStringLiteral(DCMODIFY_EXECUTABLE), {QStringLiteral("-nb"), QStringLiteral("-e"), QStringLiteral("(0008,0005)"), file});
    QVERIFY2(modified.ok(), modified.err.constData());
    const QByteArray original = readFile(file);
    QVERIFY(original.contains(QByteArray("M") + char(0xfc) + "ller"));
    const Result<DecodedImage> image = decodeDicom(ByteView(original));
    QVERIFY(image.isOk());
    Derivation own;
    const Result<DerivedInstance> kept = makeDerivedInstance(ByteView(original), image.value().pixels, own);
    QVERIFY(kept.isOk());
    QVERIFY(kept.value().bytes.contains(QByteArray("M") + char(0xfc) + "ller^J" + char(0xfc) + "rgen"));  // the same bytes
    QVERIFY(kept.value().bytes.contains(QByteArray("Sch") + char(0xe4) + "del (processed)"));
    QVERIFY(!kept.value().bytes.contains("ISO_IR"));
    Derivation foreign;
    foreign.seriesDescription = QStringLiteral("胸部");
    const Result<DerivedInstance> refused = makeDerivedInstance(ByteView(original), image.value().pixels, foreign);
    QVERIFY(!refused.isOk());
    QVERIFY2(refused.error().message().contains(QLatin1String("not declared")), qPrintable(refused.error().message()));
}

void tst_DerivedInstance::otherValuesSurviveAndUnknownBytesAreNamed()
{
    const QString folder = m_dir.filePath(QStringLiteral("extras"));
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(CHARSET_FILES_SCRIPT), folder, QStringLiteral("--extras")});
    QVERIFY2(made.ok(), made.err.constData());
    // What pydicom reads in a derived file: its character set, descriptions, comments, other names, private bytes.
    auto readBack = [&](const QByteArray &bytes) {
        const QString path = m_dir.filePath(QStringLiteral("extras-derived.dcm"));
        if (!writeFile(path, bytes))
            return QJsonObject();
        const ProcessResult read = run(
            QStringLiteral(PYTHON3_EXECUTABLE),
            {QStringLiteral("-c"), QStringLiteral("import json, sys, pydicom\n"
                                                  "ds = pydicom.dcmread(sys.argv[1])\n"
                                                  "p = ds.get((0x0009, 0x1010))\n"
                                                  "cs = ds.SpecificCharacterSet\n"
                                                  "print(json.dumps({'charset': [cs] if isinstance(cs, str) else list(cs),\n"
                                                  "                  'series': ds.SeriesDescription, 'comments': ds.get('ImageComments'),\n"
                                                  "                  'others': [str(n) for n in ds.get('OtherPatientNames', [])], 'patient': str(ds.PatientName),\n"
                                                  "                  'private': p.value.hex() if p is not None else None}))"),
             path});
        if (!read.ok())
            qWarning("%s", read.err.constData());
        return QJsonObject(QJsonDocument::fromJson(read.out).object());
    };
    auto derive = [&](const QString &file, const QString &given) {
        const QByteArray original = readFile(folder + QLatin1Char('/') + file);
        Derivation d;
        d.seriesDescription = given;
        return makeDerivedInstance(ByteView(original), decodeDicom(ByteView(original)).value().pixels, d);
    };
    const QJsonArray cyrillicNames{QStringLiteral("Иванов"), QStringLiteral("Петров")};
    const QString privateHex = QString::fromLatin1(QByteArray::fromRawData("\xc2\xd5\xe1\xe2", 4).toHex());  // "Тест" in ISO 8859-5

    // Its own description fits its own set: written in it, nothing else touched (the private bytes neither).
    const Result<DerivedInstance> own = derive(QStringLiteral("cyrillic-unknown.dcm"), QString());
    QVERIFY2(own.isOk(), qPrintable(own.isOk() ? QString() : own.error().toString()));
    QJsonObject o = readBack(own.value().bytes);
    QCOMPARE(o.value(QStringLiteral("charset")).toArray(), QJsonArray{QStringLiteral("ISO_IR 144")});
    QCOMPARE(o.value(QStringLiteral("series")).toString(), QStringLiteral("КТ головы (processed)"));
    QCOMPARE(o.value(QStringLiteral("private")).toString(), privateHex);
    QCOMPARE(o.value(QStringLiteral("others")).toArray(), cyrillicNames);

    // A description its set cannot say: UTF-8 — but bytes of no known type that may be Cyrillic text would be
    // declared UTF-8 with it. Refused, the element named: written as UN, or of no written type (implicit VR).
    for (const QString &file : {QStringLiteral("cyrillic-unknown.dcm"), QStringLiteral("cyrillic-unknown-implicit.dcm")}) {
        const Result<DerivedInstance> unknown = derive(file, QStringLiteral("胸部"));
        QVERIFY2(!unknown.isOk(), qPrintable(file));
        QVERIFY2(unknown.error().message().contains(QLatin1String("(0009,1010)")), qPrintable(unknown.error().message()));
    }

    // Without them: every value re-encoded as it was — both other names, the comments' leading spaces.
    const Result<DerivedInstance> values = derive(QStringLiteral("cyrillic-values.dcm"), QStringLiteral("胸部"));
    QVERIFY2(values.isOk(), qPrintable(values.isOk() ? QString() : values.error().toString()));
    o = readBack(values.value().bytes);
    QCOMPARE(o.value(QStringLiteral("charset")).toArray(), QJsonArray{QStringLiteral("ISO_IR 192")});
    QCOMPARE(o.value(QStringLiteral("series")).toString(), QStringLiteral("胸部"));
    QCOMPARE(o.value(QStringLiteral("comments")).toString(), QStringLiteral("  первая\tстрока\r\nвторая"));
    QCOMPARE(o.value(QStringLiteral("others")).toArray(), cyrillicNames);
    QCOMPARE(o.value(QStringLiteral("patient")).toString(), QStringLiteral("Люкценберг^Иван"));

    // ISO 2022 IR 13: the byte between two values is their delimiter, never a yen sign joining them.
    const Result<DerivedInstance> japanese = derive(QStringLiteral("japanese-values.dcm"), QStringLiteral("胸部 – Übersicht"));
    QVERIFY2(japanese.isOk(), qPrintable(japanese.isOk() ? QString() : japanese.error().toString()));
    o = readBack(japanese.value().bytes);
    QCOMPARE(o.value(QStringLiteral("others")).toArray(), (QJsonArray{QStringLiteral("ﾔﾏﾀﾞ"), QStringLiteral("山田")}));
    QCOMPARE(o.value(QStringLiteral("patient")).toString(), QStringLiteral("ﾔﾏﾀﾞ^ﾀﾛｳ=山田^太郎"));
    QCOMPARE(o.value(QStringLiteral("series")).toString(), QStringLiteral("胸部 – Übersicht"));
    // In free text the byte is the set's own character: a yen sign (pydicom, reading the original by Python's
    // shift_jis, would say a backslash; JIS X 0201 says yen).
    QCOMPARE(o.value(QStringLiteral("comments")).toString(), QStringLiteral("ﾔﾏﾀﾞ ¥100"));

    // GB18030 holds 誠, but as the bytes D5 5C: a reader would split the description in two at the 5C. UTF-8.
    const QString charsets = m_dir.filePath(QStringLiteral("charsets"));
    const ProcessResult plain = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(CHARSET_FILES_SCRIPT), charsets});
    QVERIFY2(plain.ok(), plain.err.constData());
    const QByteArray chinese = readFile(charsets + QStringLiteral("/chinese.dcm"));
    Derivation d;
    d.seriesDescription = QStringLiteral("誠 胸部");
    const Result<DerivedInstance> split = makeDerivedInstance(ByteView(chinese), decodeDicom(ByteView(chinese)).value().pixels, d);
    QVERIFY2(split.isOk(), qPrintable(split.isOk() ? QString() : split.error().toString()));
    QVERIFY(!split.value().bytes.contains(QByteArray("\xd5\x5c")));
    o = readBack(split.value().bytes);
    QCOMPARE(o.value(QStringLiteral("charset")).toArray(), QJsonArray{QStringLiteral("ISO_IR 192")});
    QCOMPARE(o.value(QStringLiteral("series")).toString(), QStringLiteral("誠 胸部"));
    QCOMPARE(o.value(QStringLiteral("patient")).toString(), QStringLiteral("Wang^XiaoDong=王^小东"));
    // Without such a character the description stays in GB18030, the file's own set.
    d.seriesDescription = QStringLiteral("胸部 增强");
    const Result<DerivedInstance> own18030 = makeDerivedInstance(ByteView(chinese), decodeDicom(ByteView(chinese)).value().pixels, d);
    QVERIFY(own18030.isOk());
    o = readBack(own18030.value().bytes);
    QCOMPARE(o.value(QStringLiteral("charset")).toArray(), QJsonArray{QStringLiteral("GB18030")});
    QCOMPARE(o.value(QStringLiteral("series")).toString(), QStringLiteral("胸部 增强"));
}

void tst_DerivedInstance::realValuesAreSentBackAsTheyCame_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("element");  // how dcmdump names the pixel data written
    QTest::addColumn<bool>("copy");           // sent as an unprocessed copy (Derivation::pixelsAreTheOriginals)
    // Written from the decoded values (as after processing that keeps them)…
    QTest::newRow("RT Dose, 32-bit unsigned") << QStringLiteral("rtdose") << QByteArray("(7fe0,0010) OW") << false;
    QTest::newRow("32-bit signed") << QStringLiteral("signed32") << QByteArray("(7fe0,0010) OW") << false;
    QTest::newRow("Float Pixel Data") << QStringLiteral("float") << QByteArray("(7fe0,0008) OF") << false;
    QTest::newRow("Double Float Pixel Data") << QStringLiteral("double") << QByteArray("(7fe0,0009) OD") << false;
    // … and as copies: the original's samples, colour of 16 bits a sample too.
    QTest::newRow("16-bit RGB, a copy") << QStringLiteral("rgb16") << QByteArray("(7fe0,0010) OW") << true;
    QTest::newRow("16-bit RGB planar, a copy") << QStringLiteral("rgb16-planar") << QByteArray("(7fe0,0010) OW") << true;
    QTest::newRow("RT Dose, a copy") << QStringLiteral("rtdose") << QByteArray("(7fe0,0010) OW") << true;
}

/// A dose grid or a parametric map sent back (a derived copy) holds the values it came with, in the encoding it came
/// in, as pydicom reads both files.
void tst_DerivedInstance::realValuesAreSentBackAsTheyCame()
{
    QFETCH(QString, name);
    QFETCH(QByteArray, element);
    QFETCH(bool, copy);
    QTemporaryDir dir;
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(DEPTH_FILES_SCRIPT), dir.path()});
    QVERIFY2(made.ok(), made.err.constData());
    const QString original = dir.filePath(name + QStringLiteral(".dcm"));
    const QByteArray bytes = readFile(original);
    const Result<DecodedImage> decoded = decodeDicom(ByteView(bytes));
    QVERIFY(decoded.isOk());
    Derivation d;
    d.description = QStringLiteral("copy");
    d.pixelsAreTheOriginals = copy;
    const Result<DerivedInstance> derived = makeDerivedInstance(ByteView(bytes), decoded.value().pixels, d);
    QVERIFY2(derived.isOk(), qPrintable(derived.isOk() ? QString() : derived.error().toString()));
    const QString out = dir.filePath(QStringLiteral("derived.dcm"));
    QVERIFY(writeFile(out, derived.value().bytes));
    const ProcessResult same = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(SAME_PIXELS_SCRIPT), original, out});
    QVERIFY2(same.ok(), (same.out + same.err).constData());
    const ProcessResult dump = run(QStringLiteral(DCMDUMP_EXECUTABLE), {out});
    QVERIFY2(dump.out.contains(element), dump.out.right(600).constData());
}

QTEST_GUILESS_MAIN(tst_DerivedInstance)
#include "tst_derivedinstance.moc"

void tst_DerivedInstance::aResampledCopyKeepsThePixelsShape()
{
    // The phantom's image that records only Pixel Aspect Ratio 2 \ 1 (512 x 256), sent back at half its width
    // (256 x 256): its pixels are square now, and the copy says so — never the old ratio on the new grid.
    const QString folder = m_dir.filePath(QStringLiteral("phantom"));
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(PHANTOM_FILES_SCRIPT), folder});
    QVERIFY2(made.ok(), made.err.constData());
    const QByteArray original = readFile(folder + QStringLiteral("/dx/DX002.dcm"));
    const Result<DecodedImage> image = decodeDicom(ByteView(original));
    QVERIFY(image.isOk());
    QCOMPARE(image.value().info.pixelAspect(), 2.0);
    const PixelBuffer half(image.value().pixels.format(), 256, 256, 1);
    const Result<DerivedInstance> copy = makeDerivedInstance(ByteView(original), half, Derivation());
    QVERIFY2(copy.isOk(), qPrintable(copy.isOk() ? QString() : copy.error().message()));
    const Result<DecodedImage> back = decodeDicom(ByteView(copy.value().bytes));
    QVERIFY(back.isOk());
    QCOMPARE(back.value().info.columns, 256);
    QCOMPARE(back.value().info.pixelAspect(), 1.0);
    // And half its height (512 x 128): pixels four times as tall as wide.
    const PixelBuffer squat(image.value().pixels.format(), 512, 128, 1);
    const Result<DerivedInstance> squatCopy = makeDerivedInstance(ByteView(original), squat, Derivation());
    QVERIFY(squatCopy.isOk());
    QCOMPARE(decodeDicom(ByteView(squatCopy.value().bytes)).value().info.pixelAspect(), 4.0);
}
