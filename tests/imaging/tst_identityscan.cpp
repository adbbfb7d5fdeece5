// SPDX-License-Identifier: Apache-2.0
// The quick identity scanner (identityscan.h) against DCMTK's parse: wherever the scanner answers, its answer is
// DCMTK's — on every encoding DCMTK's tools write, with sequences of defined and undefined length, on odd values,
// and on thousands of damaged headers. And it does answer for the usual files, or it would save nothing.
#include "testsupport.h"

#include "codecs/identityscan.h"  // private to imaging

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/documents/derivedinstance.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"

#include <QDir>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;
using namespace spectrum::test;

namespace {

/// Whether the scanner agrees with DCMTK on `bytes`; `answered` says whether it gave an answer.
bool agrees(const QByteArray &bytes, bool *answered = nullptr, QString *why = nullptr)
{
    const std::optional<DicomIdentity> quick = scanDicomIdentity(bytes.constData(), bytes.size());
    if (answered)
        *answered = quick.has_value();
    if (!quick)
        return true;
    const Result<DicomIdentity> full = readDicomIdentityWithDcmtk(ByteView(bytes));
    if (!full.isOk()) {
        if (why)
            *why = QStringLiteral("the scanner answered where DCMTK says: ") + full.error().toString();
        return false;
    }
    if (!(full.value() == *quick)) {
        if (why)
            *why = QStringLiteral("DCMTK: %1\nscanner: %2").arg(QString::fromUtf8(QJsonDocument(full.value().toJson()).toJson(QJsonDocument::Compact)),
                                                              QString::fromUtf8(QJsonDocument(quick->toJson()).toJson(QJsonDocument::Compact)));
        return false;
    }
    return true;
}

} // namespace

class tst_IdentityScan : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void answersForTheUsualEncodingsAsDcmtkDoes_data();
    void answersForTheUsualEncodingsAsDcmtkDoes();
    void leavesOddValuesToDcmtk_data();
    void leavesOddValuesToDcmtk();
    void damagedHeadersNeverGiveAnotherAnswer();
    void namesInOtherAlphabetsWrittenByPydicom();

private:
    QTemporaryDir m_dir;
    QString m_ct;       ///< a demo CT slice, explicit VR little endian
    QString m_derived;  ///< a derived instance of it: nested sequences (Source Image Sequence and its codes)
};

void tst_IdentityScan::initTestCase()
{
    QVERIFY(m_dir.isValid());
    DemoOptions options;
    options.ctSlices = 3;
    options.mrSlices = 2;
    QByteArray ct;
    QVERIFY(!DemoArchive::generate(options, [&](DemoInstance &&i) {
                 if (ct.isEmpty() && i.identity.modality == QLatin1String("CT"))
                     ct = i.bytes;
                 return Error();
             }).isError());
    QVERIFY(!ct.isEmpty());
    m_ct = m_dir.filePath(QStringLiteral("ct.dcm"));
    QVERIFY(writeFile(m_ct, ct));
    const Result<DecodedImage> decoded = decodeDicom(ByteView(ct));
    QVERIFY(decoded.isOk());
    Derivation derivation;
    derivation.description = QStringLiteral("invert");
    const Result<DerivedInstance> derived = makeDerivedInstance(ByteView(ct), decoded.value().pixels, derivation);
    QVERIFY2(derived.isOk(), qPrintable(derived.isOk() ? QString() : derived.error().toString()));
    m_derived = m_dir.filePath(QStringLiteral("derived.dcm"));
    QVERIFY(writeFile(m_derived, derived.value().bytes));
}

void tst_IdentityScan::answersForTheUsualEncodingsAsDcmtkDoes_data()
{
    QTest::addColumn<QString>("source");
    QTest::addColumn<QStringList>("dcmconv");  // empty: the file as it is
    QTest::addColumn<bool>("scannerAnswers");
    for (const auto &[name, which] : {std::pair{"CT", 0}, std::pair{"derived", 1}}) {
        const QString s = QString::fromLatin1(name);
        QTest::newRow(qPrintable(s + QStringLiteral(" as written"))) << s << QStringList() << true;
        QTest::newRow(qPrintable(s + QStringLiteral(" implicit VR"))) << s << QStringList{QStringLiteral("+ti")} << false;
        QTest::newRow(qPrintable(s + QStringLiteral(" explicit VR, undefined lengths")))
            << s << QStringList{QStringLiteral("+te"), QStringLiteral("-e")} << true;
        QTest::newRow(qPrintable(s + QStringLiteral(" implicit VR, undefined lengths")))
            << s << QStringList{QStringLiteral("+ti"), QStringLiteral("-e")} << false;
        QTest::newRow(qPrintable(s + QStringLiteral(" big endian"))) << s << QStringList{QStringLiteral("+tb")} << false;
        QTest::newRow(qPrintable(s + QStringLiteral(" deflated"))) << s << QStringList{QStringLiteral("+td")} << false;
        Q_UNUSED(which)
    }
    for (const QString &seed : QDir(QStringLiteral(SPECTRUM_FUZZ_INPUTS "/dicomdecoder")).entryList(QDir::Files))
        QTest::newRow(qPrintable(QStringLiteral("fuzz input ") + seed)) << QStringLiteral(SPECTRUM_FUZZ_INPUTS "/dicomdecoder/") + seed << QStringList() << false;
}

void tst_IdentityScan::answersForTheUsualEncodingsAsDcmtkDoes()
{
    QFETCH(QString, source);
    QFETCH(QStringList, dcmconv);
    QFETCH(bool, scannerAnswers);
    QString path = source == QLatin1String("CT") ? m_ct : source == QLatin1String("derived") ? m_derived : source;
    if (!dcmconv.isEmpty()) {
        const QString converted = m_dir.filePath(QStringLiteral("converted.dcm"));
        const ProcessResult r = run(QStringLiteral(DCMCONV_EXECUTABLE), dcmconv + QStringList{path, converted});
        QVERIFY2(r.ok(), r.err.constData());
        path = converted;
    }
    const QByteArray bytes = readFile(path);
    bool answered = false;
    QString why;
    QVERIFY2(agrees(bytes, &answered, &why), qPrintable(why));
    if (scannerAnswers) {
        QVERIFY2(answered, "the scanner left an ordinary file to DCMTK");
        const Result<DicomIdentity> id = readDicomIdentity(ByteView(bytes));
        QVERIFY(id.isOk() && id.value().isValid());
        QCOMPARE(id.value().modality, QStringLiteral("CT"));
        // Who issued the Patient ID and what was examined: what finding a patient's priors relies on.
        QCOMPARE(id.value().issuerOfPatientId, QStringLiteral("SPECTRUM DEMO"));
        QCOMPARE(id.value().bodyPartExamined, QStringLiteral("HEAD"));
        // What hanging protocols place series by, without the pixels.
        QCOMPARE(id.value().imageOrientation, QStringLiteral("1\\0\\0\\0\\1\\0"));
        QCOMPARE(DicomIdentity::planeOf(id.value().imageOrientation), QStringLiteral("Axial"));
        QVERIFY(id.value().sliceThickness.toDouble() > 0);
        // Where the slice lies, so a linked prior opens at the same level before anything is decoded.
        QCOMPARE(id.value().imagePosition.split(QLatin1Char('\\')).size(), 3);
        QVERIFY(id.value().frameOfReferenceUid.startsWith(QStringLiteral("2.25.")));
    }
}

void tst_IdentityScan::leavesOddValuesToDcmtk_data()
{
    QTest::addColumn<QString>("tag");
    QTest::addColumn<QString>("value");
    QTest::addColumn<bool>("scannerAnswers");
    QTest::newRow("two patient names") << QStringLiteral("(0010,0010)") << QStringLiteral("Doe^John\\Roe^Richard") << false;
    QTest::newRow("padded patient ID") << QStringLiteral("(0010,0020)") << QStringLiteral("  ID 42  ") << true;
    QTest::newRow("instance number with spaces") << QStringLiteral("(0020,0013)") << QStringLiteral(" 12 ") << true;
    QTest::newRow("negative series number") << QStringLiteral("(0020,0011)") << QStringLiteral("-3") << true;
    QTest::newRow("instance number not an integer") << QStringLiteral("(0020,0013)") << QStringLiteral("12.5") << false;
    QTest::newRow("empty instance number") << QStringLiteral("(0020,0013)") << QString() << true;
    QTest::newRow("Latin-1 name") << QStringLiteral("(0010,0010)") << QStringLiteral("Müller^Jörg") << true;
    QTest::newRow("orientation with exponents") << QStringLiteral("(0020,0037)") << QStringLiteral("1e0\\-0.0\\0\\0\\.9999999999\\+1.5E-2") << true;
    QTest::newRow("orientation of five numbers") << QStringLiteral("(0020,0037)") << QStringLiteral("1\\0\\0\\0\\1") << false;
    QTest::newRow("orientation not a number") << QStringLiteral("(0020,0037)") << QStringLiteral("1\\0\\0\\0\\1\\x") << false;
    QTest::newRow("padded thickness") << QStringLiteral("(0018,0050)") << QStringLiteral(" 2.50 ") << true;
    QTest::newRow("empty thickness") << QStringLiteral("(0018,0050)") << QString() << true;
    QTest::newRow("thickness of two numbers") << QStringLiteral("(0018,0050)") << QStringLiteral("1\\2") << false;
    QTest::newRow("position with exponents") << QStringLiteral("(0020,0032)") << QStringLiteral("-1.25e2\\+0\\ 37.5 ") << true;
    QTest::newRow("position of two numbers") << QStringLiteral("(0020,0032)") << QStringLiteral("1\\2") << false;
    QTest::newRow("empty position") << QStringLiteral("(0020,0032)") << QString() << true;
    QTest::newRow("padded frame of reference") << QStringLiteral("(0020,0052)") << QStringLiteral("1.2.3") << true;
}

void tst_IdentityScan::leavesOddValuesToDcmtk()
{
    QFETCH(QString, tag);
    QFETCH(QString, value);
    QFETCH(bool, scannerAnswers);
    for (const bool implicitVr : {false, true}) {
        const QString path = m_dir.filePath(QStringLiteral("odd.dcm"));
        QVERIFY(writeFile(path, readFile(m_ct)));
        if (implicitVr)
            QVERIFY(run(QStringLiteral(DCMCONV_EXECUTABLE), {QStringLiteral("+ti"), path, path}).ok());
        const ProcessResult r = run(QStringLiteral(DCMODIFY_EXECUTABLE), {QStringLiteral("-nb"), QStringLiteral("-i"), tag + QLatin1Char('=') + value, path});
        QVERIFY2(r.ok(), r.err.constData());
        const QByteArray bytes = readFile(path);
        bool answered = false;
        QString why;
        QVERIFY2(agrees(bytes, &answered, &why), qPrintable(why));
        QCOMPARE(answered, scannerAnswers && !implicitVr);
        QVERIFY(readDicomIdentity(ByteView(bytes)).isOk());  // answered either way
    }
}

void tst_IdentityScan::damagedHeadersNeverGiveAnotherAnswer()
{
    // Bytes changed in the header, lengths changed, files cut short: wherever the scanner still answers, DCMTK
    // reads the same identity.
    int answered = 0, total = 0;
    for (const QString &path : {m_ct, m_derived}) {
        for (const bool implicitVr : {false, true}) {
            QByteArray base = readFile(path);
            if (implicitVr) {
                const QString converted = m_dir.filePath(QStringLiteral("implicit.dcm"));
                QVERIFY(run(QStringLiteral(DCMCONV_EXECUTABLE), {QStringLiteral("+ti"), QStringLiteral("-e"), path, converted}).ok());
                base = readFile(converted);
            }
            const qsizetype header = std::min<qsizetype>(base.indexOf(QByteArray("\xE0\x7F\x10\x00", 4)) + 16, base.size());
            QVERIFY(header > 200);
            QRandomGenerator g(quint32((path == m_ct ? 1 : 3) + implicitVr));  // the same damage every run
            for (int round = 0; round < 1500; ++round) {
                QByteArray bytes = base;
                switch (round % 3) {
                case 0:  // a few bytes changed
                    for (int k = 0, n = 1 + int(g.bounded(3)); k < n; ++k)
                        bytes[132 + g.bounded(header - 132)] = char(g.bounded(256));
                    break;
                case 1:  // one byte set to a value that matters to a parser
                    bytes[132 + g.bounded(header - 132)] = "\x00\xFF\\ \xFE\xE0"[g.bounded(6)];
                    break;
                default:  // cut short
                    bytes.truncate(132 + g.bounded(header - 132));
                    break;
                }
                bool a = false;
                QString why;
                QVERIFY2(agrees(bytes, &a, &why), qPrintable(QStringLiteral("round %1: %2").arg(round).arg(why)));
                answered += a;
                ++total;
            }
        }
    }
    qInfo("the scanner answered %d of %d damaged headers (the rest went to DCMTK)", answered, total);
    QVERIFY(answered > 0);
}

/// Files whose names pydicom encoded (Cyrillic, Greek, Japanese with ISO 2022 escapes, Chinese in GB18030,
/// UTF-8, Latin-1): the identity read — quickly or by DCMTK — is the Unicode text pydicom was given.
void tst_IdentityScan::namesInOtherAlphabetsWrittenByPydicom()
{
    const QString folder = m_dir.filePath(QStringLiteral("charsets"));
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(CHARSET_FILES_SCRIPT), folder});
    QVERIFY2(made.ok(), made.err.constData());
    const QStringList lines = QString::fromUtf8(made.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 6);
    int quick = 0;
    for (const QString &line : lines) {
        const QStringList f = line.split(QLatin1Char('\t'));
        QCOMPARE(f.size(), 3);
        const QByteArray bytes = readFile(folder + QLatin1Char('/') + f[0] + QStringLiteral(".dcm"));
        const Result<DicomIdentity> id = readDicomIdentity(ByteView(bytes));
        QVERIFY2(id.isOk(), qPrintable(f[0]));
        QCOMPARE(id.value().patientName, f[1]);
        QCOMPARE(id.value().studyDescription, f[2]);
        const Result<DicomIdentity> dcmtk = readDicomIdentityWithDcmtk(ByteView(bytes));
        QVERIFY(dcmtk.isOk());
        QCOMPARE(dcmtk.value().patientName, f[1]);
        QCOMPARE(dcmtk.value().seriesDescription, f[2]);
        bool answered = false;
        QString why;
        QVERIFY2(agrees(bytes, &answered, &why), qPrintable(f[0] + QStringLiteral(": ") + why));
        quick += answered;
        const Result<DecodedImage> image = decodeDicom(ByteView(bytes));
        QVERIFY(image.isOk());
        QCOMPARE(image.value().info.identity.patientName, f[1]);
    }
    QCOMPARE(quick, 2);  // UTF-8 and Latin-1 read quickly; the other sets are DCMTK's to parse, ours to convert
}

QTEST_GUILESS_MAIN(tst_IdentityScan)
#include "tst_identityscan.moc"
