// SPDX-License-Identifier: Apache-2.0
// Decoding DICOM into native-depth pixels: every transfer syntax DCMTK's codecs give us, checked against the
// uncompressed original (lossless) or an independent JPEG decoder (Qt's libjpeg, for baseline), and bad input.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/windowlevel.h"
#include "jpeg2000files.h"
#include "testsupport.h"
#include "spectrum/imaging/dicomtags.h"
#include "spectrum/imaging/codecs/streamingdecoder.h"
#include "spectrum/imaging/filters/bandprocessor.h"
#include "spectrum/imaging/filters/filterregistry.h"
#include "spectrum/imaging/windowlevel.h"

#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dcistrmb.h>
#include <dcmtk/dcmdata/dctk.h>
#include <dcmtk/dcmdata/dcpixseq.h>
#include <dcmtk/dcmdata/dcpxitem.h>

using namespace spectrum;
using namespace spectrum::test;

class tst_Decoder : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void nativeCtHasGeometryAndDisplayMetadata();
    void ctPixelsAreHounsfieldUnits();
    void compressedSyntaxesDecodeLikeTheOriginal_data();
    void compressedSyntaxesDecodeLikeTheOriginal();
    void lossyExtendedJpegStaysClose();
    void jpeg2000LosslessDecodesLikeTheOriginal_data();
    void jpeg2000LosslessDecodesLikeTheOriginal();
    void jpeg2000LossyStaysClose();
    void multiFrameJpeg2000SplitsItsFragments_data();
    void multiFrameJpeg2000SplitsItsFragments();
    void paletteColorMapsThroughItsTables_data();
    void paletteColorMapsThroughItsTables();
    void baselineJpegMatchesAnIndependentDecoder_data();
    void baselineJpegMatchesAnIndependentDecoder();
    void monochrome1IsReported();
    void identityOnlyReadsTheHeader();
    void badInputGivesClearErrors_data();
    void badInputGivesClearErrors();

private:
    /// `original` recompressed by OpenJPEG's own encoder (opj_compress), wrapped as encapsulated DICOM in
    /// fragments of `fragmentKiB` (0: one fragment). `rate` 0: lossless (.90), else that compression ratio (.91).
    QString makeJpeg2000(const QString &original, int rate, int fragmentKiB);
    QTemporaryDir m_dir;
    QString m_ct, m_cr;
    DecodedImage m_ctImage;
};

void tst_Decoder::initTestCase()
{
    QVERIFY(m_dir.isValid());
    DemoOptions options;
    options.studies = {DemoStudy::HeadCt, DemoStudy::ChestCr};
    options.ctSlices = 4;
    const Error e = DemoArchive::generate(options, [&](DemoInstance &&inst) -> Error {
        const QString path = m_dir.filePath(inst.relativePath.replace(QLatin1Char('/'), QLatin1Char('_')));
        if (inst.relativePath.contains(QLatin1String("ct_IM0003")))
            m_ct = path;
        if (inst.relativePath.contains(QLatin1String("cr_")))
            m_cr = path;
        return writeFile(path, inst.bytes) ? Error() : Error(ErrorCode::Io, path);
    });
    QVERIFY2(!e.isError(), qPrintable(e.toString()));
    QVERIFY(!m_ct.isEmpty() && !m_cr.isEmpty());
    Result<DecodedImage> ct = decodeDicomFile(m_ct);
    QVERIFY2(ct.isOk(), qPrintable(ct.error().toString()));
    m_ctImage = ct.takeValue();
}

void tst_Decoder::nativeCtHasGeometryAndDisplayMetadata()
{
    const ImageInfo &info = m_ctImage.info;
    QCOMPARE(info.rows, 512);
    QCOMPARE(info.columns, 512);
    QCOMPARE(info.frames, 1);
    QCOMPARE(info.bitsAllocated, 16);
    QCOMPARE(info.bitsStored, 12);
    QVERIFY(!info.isSigned);
    QCOMPARE(info.photometric, Photometric::Monochrome2);
    QCOMPARE(info.rescaleSlope, 1.0);
    QCOMPARE(info.rescaleIntercept, -1024.0);
    QCOMPARE(info.valueUnit(), QStringLiteral("HU"));
    QCOMPARE(info.rowSpacing, 250.0 / 512);
    QCOMPARE(info.columnSpacing, 250.0 / 512);
    QVERIFY(info.hasPosition);
    QCOMPARE(info.imageOrientation[0], 1.0);
    QCOMPARE(info.imageOrientation[4], 1.0);
    QCOMPARE(info.windows.size(), 2);
    QCOMPARE(info.windows[0].name, QStringLiteral("BRAIN"));
    QCOMPARE(info.windows[0].center, 40.0);
    QCOMPARE(info.windows[0].width, 80.0);
    QCOMPARE(info.identity.modality, QStringLiteral("CT"));
    QCOMPARE(info.identity.patientId, QStringLiteral("DEMO-HEAD-001"));
    QCOMPARE(info.transferSyntaxUid, QStringLiteral("1.2.840.10008.1.2.1"));
    QCOMPARE(m_ctImage.pixels.format(), PixelFormat::Gray16);
}

void tst_Decoder::ctPixelsAreHounsfieldUnits()
{
    const ImageInfo &info = m_ctImage.info;
    const PixelBuffer &px = m_ctImage.pixels;
    QCOMPARE(info.toModalityValue(px.valueAt(0, 0)), -1000.0);  // air outside the head
    // Somewhere across the middle row there is skull (≥ 700 HU) and brain tissue (20…60 HU).
    bool bone = false, brain = false;
    for (int x = 0; x < 512; ++x) {
        const double hu = info.toModalityValue(px.valueAt(x, 256));
        bone = bone || hu >= 700;
        brain = brain || (hu >= 20 && hu <= 60);
    }
    QVERIFY(bone);
    QVERIFY(brain);
}

void tst_Decoder::compressedSyntaxesDecodeLikeTheOriginal_data()
{
    QTest::addColumn<QString>("tool");
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("transferSyntax");
    QTest::newRow("JPEG lossless SV1") << QStringLiteral(DCMCJPEG_EXECUTABLE) << QStringList{QStringLiteral("+e1")} << QStringLiteral("1.2.840.10008.1.2.4.70");
    QTest::newRow("JPEG lossless") << QStringLiteral(DCMCJPEG_EXECUTABLE) << QStringList{QStringLiteral("+el")} << QStringLiteral("1.2.840.10008.1.2.4.57");
    QTest::newRow("JPEG-LS lossless") << QStringLiteral(DCMCJPLS_EXECUTABLE) << QStringList{QStringLiteral("+el")} << QStringLiteral("1.2.840.10008.1.2.4.80");
    QTest::newRow("RLE") << QStringLiteral(DCMCRLE_EXECUTABLE) << QStringList() << QStringLiteral("1.2.840.10008.1.2.5");
    QTest::newRow("deflated explicit VR LE") << QStringLiteral(DCMCONV_EXECUTABLE) << QStringList{QStringLiteral("+td")} << QStringLiteral("1.2.840.10008.1.2.1.99");
    QTest::newRow("explicit VR big endian") << QStringLiteral(DCMCONV_EXECUTABLE) << QStringList{QStringLiteral("+tb")} << QStringLiteral("1.2.840.10008.1.2.2");
    QTest::newRow("implicit VR LE") << QStringLiteral(DCMCONV_EXECUTABLE) << QStringList{QStringLiteral("+ti")} << QStringLiteral("1.2.840.10008.1.2");
}

void tst_Decoder::compressedSyntaxesDecodeLikeTheOriginal()
{
    QFETCH(QString, tool);
    QFETCH(QStringList, options);
    QFETCH(QString, transferSyntax);
    const QString out = m_dir.filePath(QStringLiteral("compressed-%1.dcm").arg(QString::fromLatin1(QTest::currentDataTag())).replace(QLatin1Char(' '), QLatin1Char('_')));
    const ProcessResult r = run(tool, options + QStringList{m_ct, out});
    QVERIFY2(r.ok(), r.err.constData());
    Result<DecodedImage> decoded = decodeDicomFile(out);
    QVERIFY2(decoded.isOk(), qPrintable(decoded.error().toString()));
    QCOMPARE(decoded.value().info.transferSyntaxUid, transferSyntax);
    QCOMPARE(decoded.value().pixels.format(), m_ctImage.pixels.format());
    QCOMPARE(decoded.value().pixels.frameBytes(), m_ctImage.pixels.frameBytes());
    QVERIFY(std::memcmp(decoded.value().pixels.frameData(0), m_ctImage.pixels.frameData(0), size_t(m_ctImage.pixels.frameBytes())) == 0);
}

void tst_Decoder::lossyExtendedJpegStaysClose()
{
    const QString out = m_dir.filePath(QStringLiteral("extended.dcm"));
    const ProcessResult r = run(QStringLiteral(DCMCJPEG_EXECUTABLE), {QStringLiteral("+ee"), m_ct, out});
    QVERIFY2(r.ok(), r.err.constData());
    Result<DecodedImage> decoded = decodeDicomFile(out);
    QVERIFY2(decoded.isOk(), qPrintable(decoded.error().toString()));
    QCOMPARE(decoded.value().info.transferSyntaxUid, QStringLiteral("1.2.840.10008.1.2.4.51"));
    // DCMTK's lossy encoder may shift stored values and compensate in the Rescale Intercept: compare HU.
    const ImageInfo &lossy = decoded.value().info;
    double sumAbs = 0;
    for (int y = 0; y < 512; ++y) {
        for (int x = 0; x < 512; ++x)
            sumAbs += std::abs(lossy.toModalityValue(decoded.value().pixels.valueAt(x, y))
                               - m_ctImage.info.toModalityValue(m_ctImage.pixels.valueAt(x, y)));
    }
    const double meanAbs = sumAbs / (512.0 * 512.0);
    QVERIFY2(meanAbs < 8, qPrintable(QString::number(meanAbs)));  // lossy, but the same image
    QVERIFY(meanAbs > 0);                                          // and really decoded, not copied
}

QString tst_Decoder::makeJpeg2000(const QString &original, int rate, int fragmentKiB)
{
    return spectrum::test::makeJpeg2000(original, m_dir.path(), rate, fragmentKiB);
}

void tst_Decoder::jpeg2000LosslessDecodesLikeTheOriginal_data()
{
    QTest::addColumn<bool>("cr");
    QTest::addColumn<int>("fragmentKiB");
    QTest::newRow("CT, one fragment") << false << 0;
    QTest::newRow("CT, 16 KiB fragments") << false << 16;
    QTest::newRow("CR 2048x2500, 64 KiB fragments") << true << 64;
}

void tst_Decoder::jpeg2000LosslessDecodesLikeTheOriginal()
{
    QFETCH(bool, cr);
    QFETCH(int, fragmentKiB);
    const QString original = cr ? m_cr : m_ct;
    const QString j2k = makeJpeg2000(original, 0, fragmentKiB);
    QVERIFY(!j2k.isEmpty());
    Result<DecodedImage> want = decodeDicomFile(original);
    Result<DecodedImage> got = decodeDicomFile(j2k);
    QVERIFY2(got.isOk(), qPrintable(got.error().toString()));
    QCOMPARE(got.value().info.transferSyntaxUid, QStringLiteral("1.2.840.10008.1.2.4.90"));
    QCOMPARE(got.value().pixels.format(), want.value().pixels.format());
    QCOMPARE(got.value().info.photometricName, want.value().info.photometricName);
    QVERIFY(std::memcmp(got.value().pixels.frameData(0), want.value().pixels.frameData(0), size_t(want.value().pixels.frameBytes())) == 0);
}

void tst_Decoder::jpeg2000LossyStaysClose()
{
    const QString j2k = makeJpeg2000(m_ct, 20, 0);
    QVERIFY(!j2k.isEmpty());
    Result<DecodedImage> got = decodeDicomFile(j2k);
    QVERIFY2(got.isOk(), qPrintable(got.error().toString()));
    QCOMPARE(got.value().info.transferSyntaxUid, QStringLiteral("1.2.840.10008.1.2.4.91"));
    double sumAbs = 0;
    for (int y = 0; y < 512; ++y) {
        for (int x = 0; x < 512; ++x)
            sumAbs += std::abs(got.value().pixels.valueAt(x, y) - m_ctImage.pixels.valueAt(x, y));
    }
    const double meanAbs = sumAbs / (512.0 * 512.0);
    QVERIFY2(meanAbs < 10 && meanAbs > 0, qPrintable(QString::number(meanAbs)));  // the same image, really decoded
    // A damaged codestream is a clear error, not garbage pixels.
    QByteArray broken = readFile(j2k);
    broken.chop(broken.size() / 3);
    Result<DecodedImage> bad = decodeDicom(ByteView(broken));
    QVERIFY(!bad.isOk());
}

void tst_Decoder::multiFrameJpeg2000SplitsItsFragments_data()
{
    QTest::addColumn<bool>("offsetTable");
    QTest::addColumn<int>("fragmentKiB");
    QTest::newRow("offset table, several fragments per frame") << true << 16;
    QTest::newRow("no offset table, one fragment per frame") << false << 0;
}

void tst_Decoder::multiFrameJpeg2000SplitsItsFragments()
{
    QFETCH(bool, offsetTable);
    QFETCH(int, fragmentKiB);
    // Three CT slices as the frames of one instance, each compressed by opj_compress.
    QStringList slices;
    for (const QString &f : QDir(m_dir.path()).entryList({QStringLiteral("demo-ct_IM000*.dcm")}, QDir::Files, QDir::Name).mid(0, 3))
        slices << m_dir.filePath(f);
    QCOMPARE(slices.size(), 3);
    QList<DecodedImage> originals;
    for (const QString &slice : slices)
        originals << decodeDicomFile(slice).value();
    const QString path = makeMultiFrameJpeg2000(slices, m_dir.path(), offsetTable, fragmentKiB);
    QVERIFY(!path.isEmpty());

    Result<DecodedImage> got = decodeDicomFile(path);
    QVERIFY2(got.isOk(), qPrintable(got.error().toString()));
    QCOMPARE(got.value().pixels.frames(), 3);
    for (int f = 0; f < 3; ++f)
        QVERIFY(std::memcmp(got.value().pixels.frameData(f), originals[f].pixels.frameData(0), size_t(originals[f].pixels.frameBytes())) == 0);
}

void tst_Decoder::paletteColorMapsThroughItsTables_data()
{
    QTest::addColumn<int>("bitsAllocated");
    QTest::addColumn<int>("firstMapped");
    QTest::newRow("8-bit indices") << 8 << 0;
    QTest::newRow("16-bit indices, first mapped 100") << 16 << 100;
}

void tst_Decoder::paletteColorMapsThroughItsTables()
{
    QFETCH(int, bitsAllocated);
    QFETCH(int, firstMapped);
    // An ultrasound-like PALETTE COLOR image built with DCMTK: 64 × 4 indices, 256-entry 16-bit tables.
    const int width = 64, height = 4, entries = 256;
    DcmFileFormat ff;
    DcmDataset *ds = ff.getDataset();
    ds->putAndInsertString(DCM_SOPClassUID, UID_UltrasoundImageStorage);
    ds->putAndInsertString(DCM_SOPInstanceUID, "1.2.826.0.1.3680043.2.1125.88.1");
    ds->putAndInsertString(DCM_StudyInstanceUID, "1.2.826.0.1.3680043.2.1125.88.2");
    ds->putAndInsertString(DCM_SeriesInstanceUID, "1.2.826.0.1.3680043.2.1125.88.3");
    ds->putAndInsertString(DCM_PatientID, "PALETTE");
    ds->putAndInsertString(DCM_Modality, "US");
    ds->putAndInsertUint16(DCM_Rows, height);
    ds->putAndInsertUint16(DCM_Columns, width);
    ds->putAndInsertUint16(DCM_SamplesPerPixel, 1);
    ds->putAndInsertString(DCM_PhotometricInterpretation, "PALETTE COLOR");
    ds->putAndInsertUint16(DCM_BitsAllocated, Uint16(bitsAllocated));
    ds->putAndInsertUint16(DCM_BitsStored, Uint16(bitsAllocated));
    ds->putAndInsertUint16(DCM_HighBit, Uint16(bitsAllocated - 1));
    ds->putAndInsertUint16(DCM_PixelRepresentation, 0);
    std::vector<Uint16> red(entries), green(entries), blue(entries);
    for (int i = 0; i < entries; ++i) {
        red[size_t(i)] = Uint16(i * 257);
        green[size_t(i)] = Uint16((255 - i) * 257);
        blue[size_t(i)] = Uint16(((i * 2) % 256) * 257);
    }
    const DcmTagKey descriptors[3] = {DCM_RedPaletteColorLookupTableDescriptor, DCM_GreenPaletteColorLookupTableDescriptor, DCM_BluePaletteColorLookupTableDescriptor};
    const DcmTagKey tables[3] = {DCM_RedPaletteColorLookupTableData, DCM_GreenPaletteColorLookupTableData, DCM_BluePaletteColorLookupTableData};
    const std::vector<Uint16> *data[3] = {&red, &green, &blue};
    for (int c = 0; c < 3; ++c) {
        const Uint16 descriptor[3] = {Uint16(entries), Uint16(firstMapped), 16};
        ds->putAndInsertUint16Array(descriptors[c], descriptor, 3);
        ds->putAndInsertUint16Array(tables[c], data[c]->data(), entries);
    }
    // Indices 0, 1, … across each row; with a first mapped value of 100, also below and above the table.
    std::vector<int> index(size_t(width * height));
    for (int i = 0; i < width * height; ++i)
        index[size_t(i)] = bitsAllocated == 8 ? i % 256 : firstMapped - 10 + i * 2;
    if (bitsAllocated == 8) {
        std::vector<Uint8> px(index.begin(), index.end());
        ds->putAndInsertUint8Array(DCM_PixelData, px.data(), unsigned(px.size()));
    } else {
        std::vector<Uint16> px(index.begin(), index.end());
        ds->putAndInsertUint16Array(DCM_PixelData, px.data(), unsigned(px.size()));
    }
    const QString path = m_dir.filePath(QStringLiteral("palette-%1.dcm").arg(bitsAllocated));
    QVERIFY(ff.saveFile(QFile::encodeName(path).constData(), EXS_LittleEndianExplicit).good());

    Result<DecodedImage> got = decodeDicomFile(path);
    QVERIFY2(got.isOk(), qPrintable(got.error().toString()));
    QCOMPARE(got.value().pixels.format(), PixelFormat::Rgb24);
    QCOMPARE(got.value().info.photometricName, QStringLiteral("RGB"));
    const uchar *rgb = got.value().pixels.frameData(0);
    for (int i = 0; i < width * height; ++i) {
        const int e = std::clamp(index[size_t(i)] - firstMapped, 0, entries - 1);
        QCOMPARE(int(rgb[3 * i]), red[size_t(e)] >> 8);
        QCOMPARE(int(rgb[3 * i + 1]), green[size_t(e)] >> 8);
        QCOMPARE(int(rgb[3 * i + 2]), blue[size_t(e)] >> 8);
    }
    // Without its tables the image cannot be shown: a clear error.
    ds->findAndDeleteElement(DCM_GreenPaletteColorLookupTableData);
    QVERIFY(ff.saveFile(QFile::encodeName(path).constData(), EXS_LittleEndianExplicit).good());
    Result<DecodedImage> broken = decodeDicomFile(path);
    QVERIFY(!broken.isOk());
    QVERIFY(broken.error().message().contains(QStringLiteral("lookup table")));
}

void tst_Decoder::baselineJpegMatchesAnIndependentDecoder_data()
{
    QTest::addColumn<bool>("colour");
    QTest::newRow("grey") << false;
    QTest::newRow("colour") << true;
}

void tst_Decoder::baselineJpegMatchesAnIndependentDecoder()
{
    QFETCH(bool, colour);
    // An 8-bit picture with structure, saved as baseline JPEG by Qt, wrapped into DICOM by DCMTK's img2dcm.
    QImage picture(256, 192, colour ? QImage::Format_RGB888 : QImage::Format_Grayscale8);
    for (int y = 0; y < picture.height(); ++y) {
        for (int x = 0; x < picture.width(); ++x)
            picture.setPixelColor(x, y, colour ? QColor((x * 3) % 256, (y * 5) % 256, ((x + y) * 2) % 256) : QColor::fromHsv(0, 0, (x ^ y) % 256));
    }
    const QString jpeg = m_dir.filePath(colour ? QStringLiteral("colour.jpg") : QStringLiteral("grey.jpg"));
    QVERIFY(picture.save(jpeg, "JPEG", 90));
    const QString dcm = jpeg + QStringLiteral(".dcm");
    const ProcessResult r = run(QStringLiteral("img2dcm"), {jpeg, dcm});
    QVERIFY2(r.ok(), r.err.constData());

    Result<DecodedImage> decoded = decodeDicomFile(dcm);
    QVERIFY2(decoded.isOk(), qPrintable(decoded.error().toString()));
    QCOMPARE(decoded.value().info.transferSyntaxUid, QStringLiteral("1.2.840.10008.1.2.4.50"));
    const QImage reference = QImage(jpeg).convertToFormat(colour ? QImage::Format_RGB888 : QImage::Format_Grayscale8);
    const PixelBuffer &px = decoded.value().pixels;
    QCOMPARE(px.width(), reference.width());
    QCOMPARE(px.height(), reference.height());
    QCOMPARE(px.format(), colour ? PixelFormat::Rgb24 : PixelFormat::Gray8);
    int worst = 0;
    const int samples = colour ? 3 : 1;
    for (int y = 0; y < px.height(); ++y) {
        const uchar *ours = px.frameData(0) + qsizetype(y) * px.width() * samples;
        const uchar *theirs = reference.constScanLine(y);
        for (int i = 0; i < px.width() * samples; ++i)
            worst = std::max(worst, std::abs(int(ours[i]) - int(theirs[i])));
    }
    // Two libjpeg builds may differ by IDCT rounding and colour conversion: a few levels, no more.
    QVERIFY2(worst <= 4, qPrintable(QString::number(worst)));
}

void tst_Decoder::monochrome1IsReported()
{
    Result<DecodedImage> cr = decodeDicomFile(m_cr);
    QVERIFY2(cr.isOk(), qPrintable(cr.error().toString()));
    QCOMPARE(cr.value().info.photometric, Photometric::Monochrome1);
    QCOMPARE(cr.value().info.columns, 2048);
    QCOMPARE(cr.value().info.rows, 2500);
}

void tst_Decoder::identityOnlyReadsTheHeader()
{
    const QByteArray bytes = readFile(m_ct);
    // Cut the file inside the pixel data: the header alone is enough for the identity…
    Result<DicomIdentity> id = readDicomIdentity(ByteView(bytes.left(bytes.size() - 1000)));
    QVERIFY2(id.isOk(), qPrintable(id.error().toString()));
    QCOMPARE(id.value().patientName, QStringLiteral("DEMO^HEAD PHANTOM"));
    QCOMPARE(id.value().instanceNumber, 3);
    // …and something that is not DICOM has no identity, without an error.
    Result<DicomIdentity> none = readDicomIdentity(ByteView(QByteArray("just some bytes")));
    QVERIFY(none.isOk());
    QVERIFY(!none.value().isValid());
}


Q_DECLARE_METATYPE(E_TransferSyntax)

void tst_Decoder::badInputGivesClearErrors_data()
{
    QTest::addColumn<QString>("what");
    QTest::addColumn<int>("expectedCode");
    QTest::newRow("empty") << QStringLiteral("empty") << int(ErrorCode::InvalidDicom);
    QTest::newRow("garbage") << QStringLiteral("garbage") << int(ErrorCode::InvalidDicom);
    QTest::newRow("truncated pixel data") << QStringLiteral("truncated") << int(ErrorCode::InvalidDicom);
    QTest::newRow("header only") << QStringLiteral("header") << int(ErrorCode::InvalidDicom);
}

void tst_Decoder::badInputGivesClearErrors()
{
    QFETCH(QString, what);
    QFETCH(int, expectedCode);
    const QByteArray ct = readFile(m_ct);
    QByteArray input;
    if (what == QLatin1String("garbage")) {
        input = QByteArray(128, '\0') + "DICM" + QByteArray(4000, '\x7f');
    } else if (what == QLatin1String("truncated")) {
        input = ct.left(ct.size() / 2);
    } else if (what == QLatin1String("header")) {
        input = ct.left(ct.size() - 512 * 512 * 2 + 4);  // pixel data element header, no value
    }
    Result<DecodedImage> r = decodeDicom(ByteView(input));
    QVERIFY(!r.isOk());
    QCOMPARE(int(r.error().code()), expectedCode);
    QVERIFY(!r.error().message().isEmpty());
    qInfo() << what << "→" << r.error().toString();
}

QTEST_GUILESS_MAIN(tst_Decoder)
#include "tst_decoder.moc"
