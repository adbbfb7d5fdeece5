// Derived instances (a processed image, a reformatted plane sent back to the archive) keep every name and text of
// their original as it was, whatever its character set, and carry their own descriptions — the original's with
// " (processed)", or one given in any alphabet — in a character set that holds them: read back by us and by pydicom
// (not ours), on originals pydicom wrote in Cyrillic, Greek, Japanese (ISO 2022), Chinese (GB18030), UTF-8 and
// Latin-1.

#include "spectrum/imaging/derivedinstance.h"
#include "spectrum/imaging/dicomdecoder.h"

#include "testsupport.h"

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

QTEST_GUILESS_MAIN(tst_DerivedInstance)
#include "tst_derivedinstance.moc"
