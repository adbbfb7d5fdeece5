// SPDX-License-Identifier: Apache-2.0
// Every way DICOM stores pixels, decoded to the values a reader relies on: sample depths and signedness as pydicom
// reads them, VOI LUT sequences, multi-frame timing and functional groups, JPEG 2000 deeper than its header; and the
// tag listing with its sequences nested.

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

namespace {
// A small image built directly with DCMTK: `values` are the intended sample values (signed where asked),
// packed into words with junk above Bits Stored, so the decoder has to shift, mask and sign-extend.
QByteArray makeImage(int bitsAllocated, int bitsStored, int highBit, bool isSigned, int samples, int planar,
                     const QList<int> &values, E_TransferSyntax xfer, int columns, int rows)
{
    DcmFileFormat ff;
    DcmDataset *ds = ff.getDataset();
    ds->putAndInsertString(DCM_SOPClassUID, UID_SecondaryCaptureImageStorage);
    ds->putAndInsertString(DCM_SOPInstanceUID, "2.25.1234");
    ds->putAndInsertString(DCM_StudyInstanceUID, "2.25.1");
    ds->putAndInsertString(DCM_SeriesInstanceUID, "2.25.2");
    ds->putAndInsertString(DCM_PatientID, "TEST");
    ds->putAndInsertUint16(DCM_SamplesPerPixel, Uint16(samples));
    ds->putAndInsertString(DCM_PhotometricInterpretation, samples == 3 ? "RGB" : "MONOCHROME2");
    if (samples == 3)
        ds->putAndInsertUint16(DCM_PlanarConfiguration, Uint16(planar));
    ds->putAndInsertUint16(DCM_Rows, Uint16(rows));
    ds->putAndInsertUint16(DCM_Columns, Uint16(columns));
    ds->putAndInsertUint16(DCM_BitsAllocated, Uint16(bitsAllocated));
    ds->putAndInsertUint16(DCM_BitsStored, Uint16(bitsStored));
    ds->putAndInsertUint16(DCM_HighBit, Uint16(highBit));
    ds->putAndInsertUint16(DCM_PixelRepresentation, isSigned ? 1 : 0);
    const int shift = highBit + 1 - bitsStored;
    const unsigned mask = (1u << bitsStored) - 1;
    const unsigned junk = bitsAllocated == 16 ? (0xFFFFu & ~(mask << shift)) : (0xFFu & ~(mask << shift));
    if (bitsAllocated == 16) {
        std::vector<Uint16> words;
        for (int v : values)
            words.push_back(Uint16(((unsigned(v) & mask) << shift) | (junk & 0xA5A5u)));
        ds->putAndInsertUint16Array(DCM_PixelData, words.data(), static_cast<unsigned long>(words.size()));
    } else {
        std::vector<Uint8> bytes;
        for (int v : values)
            bytes.push_back(Uint8(((unsigned(v) & mask) << shift) | (junk & 0xA5u)));
        ds->putAndInsertUint8Array(DCM_PixelData, bytes.data(), static_cast<unsigned long>(bytes.size()));
    }
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("x.dcm"));
    if (ff.saveFile(path.toLocal8Bit().constData(), xfer).bad())
        return QByteArray();
    return readFile(path);
}
} // namespace

class tst_PixelEncodings : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void pixelEncodingsDecodeToTheirValues_data();
    void pixelEncodingsDecodeToTheirValues();
    void voiLutSequenceIsReadAndRendered_data();
    void voiLutSequenceIsReadAndRendered();
    void multiFrameTimingAndFunctionalGroups();
    void tagsListEveryElementWithSequencesNested();
    void everySampleDepthAsPydicomReadsIt_data();
    void everySampleDepthAsPydicomReadsIt();
    void aJpeg2000StreamDeeperThanItsHeaderIsReadAtItsOwnPrecision();

private:
    /// `original` recompressed by OpenJPEG's own encoder (opj_compress), wrapped as encapsulated DICOM in
    /// fragments of `fragmentKiB` (0: one fragment). `rate` 0: lossless (.90), else that compression ratio (.91).
    QString makeJpeg2000(const QString &original, int rate, int fragmentKiB);
    QTemporaryDir m_dir;
};

QString tst_PixelEncodings::makeJpeg2000(const QString &original, int rate, int fragmentKiB)
{
    return spectrum::test::makeJpeg2000(original, m_dir.path(), rate, fragmentKiB);
}

void tst_PixelEncodings::pixelEncodingsDecodeToTheirValues_data()
{
    QTest::addColumn<int>("bitsAllocated");
    QTest::addColumn<int>("bitsStored");
    QTest::addColumn<int>("highBit");
    QTest::addColumn<bool>("isSigned");
    QTest::addColumn<int>("samples");
    QTest::addColumn<int>("planar");
    QTest::addColumn<E_TransferSyntax>("xfer");
    QTest::addColumn<int>("format");
    const auto le = EXS_LittleEndianExplicit;
    QTest::newRow("16-bit unsigned, all bits") << 16 << 16 << 15 << false << 1 << 0 << le << int(PixelFormat::Gray16);
    QTest::newRow("16-bit signed, 12 stored") << 16 << 12 << 11 << true << 1 << 0 << le << int(PixelFormat::Gray16Signed);
    QTest::newRow("16-bit signed, all bits") << 16 << 16 << 15 << true << 1 << 0 << le << int(PixelFormat::Gray16Signed);
    QTest::newRow("16-bit unsigned, 10 stored, high bit 13") << 16 << 10 << 13 << false << 1 << 0 << le << int(PixelFormat::Gray16);
    QTest::newRow("16-bit signed, implicit VR") << 16 << 12 << 11 << true << 1 << 0 << EXS_LittleEndianImplicit << int(PixelFormat::Gray16Signed);
    QTest::newRow("16-bit signed, big endian") << 16 << 12 << 11 << true << 1 << 0 << EXS_BigEndianExplicit << int(PixelFormat::Gray16Signed);
    QTest::newRow("8-bit unsigned") << 8 << 8 << 7 << false << 1 << 0 << le << int(PixelFormat::Gray8);
    QTest::newRow("8-bit signed, 7 stored") << 8 << 7 << 6 << true << 1 << 0 << le << int(PixelFormat::Gray8Signed);
    QTest::newRow("8-bit unsigned, implicit VR") << 8 << 8 << 7 << false << 1 << 0 << EXS_LittleEndianImplicit << int(PixelFormat::Gray8);
    QTest::newRow("RGB interleaved") << 8 << 8 << 7 << false << 3 << 0 << le << int(PixelFormat::Rgb24);
    QTest::newRow("RGB planar") << 8 << 8 << 7 << false << 3 << 1 << le << int(PixelFormat::Rgb24);
}

void tst_PixelEncodings::pixelEncodingsDecodeToTheirValues()
{
    QFETCH(int, bitsAllocated);
    QFETCH(int, bitsStored);
    QFETCH(int, highBit);
    QFETCH(bool, isSigned);
    QFETCH(int, samples);
    QFETCH(int, planar);
    QFETCH(E_TransferSyntax, xfer);
    QFETCH(int, format);
    const int columns = 7, rows = 5;  // odd sizes on purpose
    const int lo = isSigned ? -(1 << (bitsStored - 1)) : 0;
    const int hi = isSigned ? (1 << (bitsStored - 1)) - 1 : (1 << bitsStored) - 1;
    std::mt19937 rng(42);
    std::uniform_int_distribution<int> dist(lo, hi);
    QList<int> values;  // in the order they are stored (planes one after another when planar)
    for (int i = 0; i < columns * rows * samples; ++i)
        values << (i == 0 ? lo : i == 1 ? hi : dist(rng));
    const QByteArray file = makeImage(bitsAllocated, bitsStored, highBit, isSigned, samples, planar, values, xfer, columns, rows);
    QVERIFY(!file.isEmpty());
    Result<DecodedImage> decoded = decodeDicom(ByteView(file));
    QVERIFY2(decoded.isOk(), qPrintable(decoded.error().toString()));
    const PixelBuffer &px = decoded.value().pixels;
    QCOMPARE(int(px.format()), format);
    QCOMPARE(px.width(), columns);
    QCOMPARE(px.height(), rows);
    for (int y = 0; y < rows; ++y) {
        for (int x = 0; x < columns; ++x) {
            const int i = y * columns + x;
            if (samples == 1) {
                QCOMPARE(px.valueAt(x, y), values[i]);
            } else {
                const uchar *rgb = px.frameData(0) + 3 * i;
                for (int c = 0; c < 3; ++c) {
                    const int expected = planar ? values[c * columns * rows + i] : values[3 * i + c];
                    QCOMPARE(int(rgb[c]), expected);
                }
            }
        }
    }
}

void tst_PixelEncodings::voiLutSequenceIsReadAndRendered_data()
{
    QTest::addColumn<bool>("isSigned");
    QTest::newRow("unsigned, first mapped 0") << false;
    QTest::newRow("signed, first mapped −1024 (SS)") << true;
}

void tst_PixelEncodings::voiLutSequenceIsReadAndRendered()
{
    QFETCH(bool, isSigned);
    const int first = isSigned ? -1024 : 0;
    QList<int> values{first, first + 1, first + 2000, first + 4095, first + 5000};  // the last is beyond the table
    const QByteArray plain = makeImage(16, 16, 15, isSigned, 1, 0, values, EXS_LittleEndianExplicit, 5, 1);
    QVERIFY(!plain.isEmpty());
    DcmFileFormat ff;
    DcmInputBufferStream in;
    in.setBuffer(plain.constData(), offile_off_t(plain.size()));
    in.setEos();
    ff.transferInit();
    QVERIFY(ff.read(in).good());
    ff.transferEnd();
    // A 4096-entry, 12-bit table that reverses the values it maps.
    DcmItem *item = nullptr;
    QVERIFY(ff.getDataset()->findOrCreateSequenceItem(DCM_VOILUTSequence, item, -2).good() && item);
    DcmElement *descriptor = isSigned ? static_cast<DcmElement *>(new DcmSignedShort(DcmTag(DCM_LUTDescriptor, EVR_SS)))
                                      : static_cast<DcmElement *>(new DcmUnsignedShort(DcmTag(DCM_LUTDescriptor, EVR_US)));
    if (isSigned) {
        const Sint16 d[3] = {4096, Sint16(first), 12};
        QVERIFY(descriptor->putSint16Array(d, 3).good());
    } else {
        const Uint16 d[3] = {4096, Uint16(first), 12};
        QVERIFY(descriptor->putUint16Array(d, 3).good());
    }
    QVERIFY(item->insert(descriptor, true).good());
    std::vector<Uint16> table(4096);
    for (int i = 0; i < 4096; ++i)
        table[size_t(i)] = Uint16(4095 - i);
    QVERIFY(item->putAndInsertUint16Array(DCM_LUTData, table.data(), 4096).good());
    QVERIFY(item->putAndInsertString(DCM_LUTExplanation, "REVERSE").good());
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("voi.dcm"));
    QVERIFY(ff.saveFile(QFile::encodeName(path).constData(), EXS_LittleEndianExplicit).good());

    Result<DecodedImage> decoded = decodeDicomFile(path);
    QVERIFY2(decoded.isOk(), qPrintable(decoded.error().toString()));
    QCOMPARE(decoded.value().info.voiLuts.size(), 1);
    const VoiLut &lut = decoded.value().info.voiLuts.first();
    QCOMPARE(lut.firstMapped, first);
    QCOMPARE(lut.bits, 12);
    QCOMPARE(lut.data.size(), 4096);
    QCOMPARE(lut.explanation, QStringLiteral("REVERSE"));
    const PixelBuffer shown = renderFrame(decoded.value(), 0, lut);
    QCOMPARE(shown.format(), PixelFormat::Gray8);
    const uchar *row = shown.frameData(0);
    QCOMPARE(int(row[0]), 255);                         // the first entry: 4095 of 4095
    QCOMPARE(int(row[1]), int(4094 * 255.0 / 4095));
    QCOMPARE(int(row[2]), int(2095 * 255.0 / 4095));
    QCOMPARE(int(row[3]), 0);                           // the last entry
    QCOMPARE(int(row[4]), 0);                           // beyond the table: the last entry
}

/// Multi-frame files pydicom wrote: the cine timing (Frame Time, Frame Time Vector), and an Enhanced CT whose
/// rescale, spacing, orientation and window live only in its functional groups and whose frames lie apart.
void tst_PixelEncodings::multiFrameTimingAndFunctionalGroups()
{
    QTemporaryDir dir;
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(MULTIFRAME_FILES_SCRIPT), dir.path()});
    QVERIFY2(made.ok(), made.err.constData());

    const Result<DecodedImage> mr = decodeDicom(ByteView(readFile(dir.filePath(QStringLiteral("mr10.dcm")))));
    QVERIFY(mr.isOk());
    QCOMPARE(mr.value().info.frames, 10);
    QCOMPARE(mr.value().pixels.frames(), 10);
    QCOMPARE(mr.value().info.frameTimeMs, 40.0);
    QCOMPARE(mr.value().info.frameDurationMs(3), 40.0);
    QVERIFY(mr.value().info.perFrame.isEmpty());  // one geometry for all frames
    for (int f = 0; f < 10; ++f)
        QCOMPARE(mr.value().pixels.valueAt(5, 5, f), 100 * (f + 1));

    const Result<DecodedImage> us = decodeDicom(ByteView(readFile(dir.filePath(QStringLiteral("us-loop.dcm")))));
    QVERIFY(us.isOk());
    QCOMPARE(us.value().info.frames, 8);
    QCOMPARE(us.value().info.frameTimeVectorMs.size(), 8);
    QCOMPARE(us.value().info.frameDurationMs(0), 20.0);
    QCOMPARE(us.value().info.frameDurationMs(7), 20.0);

    const Result<DecodedImage> ct = decodeDicom(ByteView(readFile(dir.filePath(QStringLiteral("enhanced-ct.dcm")))));
    QVERIFY(ct.isOk());
    const ImageInfo &info = ct.value().info;
    QCOMPARE(info.frames, 5);
    QCOMPARE(info.rescaleIntercept, -1024.0);  // from the shared groups: HU, not stored values
    QCOMPARE(info.rowSpacing, 0.5);
    QCOMPARE(info.sliceThickness, 10.0);
    QVERIFY(info.hasPosition);
    QCOMPARE(info.windows.size(), 1);
    QCOMPARE(info.windows.first().center, 40.0);
    QCOMPARE(info.perFrame.size(), 5);
    for (int f = 0; f < 5; ++f) {
        const ImageInfo frame = info.frame(f);
        QCOMPARE(frame.frameIndex, f);
        QVERIFY(frame.hasPosition);
        QCOMPARE(frame.imagePosition[2], 10.0 * f);
        QCOMPARE(frame.slicePositionAlongNormal(), 10.0 * f);
        QCOMPARE(frame.columnSpacing, 0.5);
        QCOMPARE(frame.toModalityValue(ct.value().pixels.valueAt(3, 3, f)), 10.0 * f);
    }
}

/// The tag viewer's rows: meta information and dataset in file order, keywords from the dictionary, sequences
/// with their items nested, names in their character set.
void tst_PixelEncodings::tagsListEveryElementWithSequencesNested()
{
    QTemporaryDir dir;
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(SEGMENTATION_FILES_SCRIPT), dir.path()});
    QVERIFY2(made.ok(), made.err.constData());
    const Result<QList<DicomTagRow>> rows = readDicomTags(ByteView(readFile(dir.filePath(QStringLiteral("seg.dcm")))));
    QVERIFY(rows.isOk());
    QCOMPARE(rows.value().first().tagText(), QStringLiteral("(0002,0000)"));  // the meta information first
    const auto find = [&](const QString &keyword) {
        return std::find_if(rows.value().begin(), rows.value().end(), [&](const DicomTagRow &r) { return r.keyword == keyword; });
    };
    QVERIFY(find(QStringLiteral("PatientName")) != rows.value().end());
    QCOMPARE(find(QStringLiteral("PatientName"))->value, QStringLiteral("SEG^TEST"));
    const auto segments = find(QStringLiteral("SegmentSequence"));
    QVERIFY(segments != rows.value().end());
    QCOMPARE(segments->vr, QStringLiteral("SQ"));
    QCOMPARE(segments->children.size(), 1);  // one item
    const QList<DicomTagRow> &item = segments->children.first().children;
    QVERIFY(std::any_of(item.begin(), item.end(), [](const DicomTagRow &r) { return r.keyword == QLatin1String("SegmentLabel") && r.value == QLatin1String("Lesion"); }));
    const Result<QList<DicomTagRow>> cyrillic = [&] {
        const ProcessResult names = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(CHARSET_FILES_SCRIPT), dir.filePath(QStringLiteral("cs"))});
        return names.ok() ? readDicomTags(ByteView(readFile(dir.filePath(QStringLiteral("cs/cyrillic.dcm"))))) : Result<QList<DicomTagRow>>(Error(ErrorCode::Internal, QString()));
    }();
    QVERIFY(cyrillic.isOk());
    QVERIFY(std::any_of(cyrillic.value().begin(), cyrillic.value().end(), [](const DicomTagRow &r) { return r.value == QStringLiteral("Люкценберг^Иван"); }));
    QVERIFY(!readDicomTags(ByteView(QByteArray("not DICOM at all"))).isOk());
}

namespace {
/// The depth test files (tests/support/depth_files.py), made once per run.
QString depthFolder()
{
    static QTemporaryDir dir;
    static const bool made = [] {
        const ProcessResult r = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(DEPTH_FILES_SCRIPT), dir.path()});
        if (!r.ok())
            qWarning("depth_files.py: %s", r.err.constData());
        return r.ok();
    }();
    return made ? dir.path() : QString();
}

QVector<double> expectedValues(const QString &name)
{
    const QByteArray raw = readFile(depthFolder() + QLatin1Char('/') + name + QStringLiteral(".f64"));
    QVector<double> v(raw.size() / 8);
    std::memcpy(v.data(), raw.constData(), size_t(v.size()) * 8);
    return v;
}

bool sameValue(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }
} // namespace

void tst_PixelEncodings::everySampleDepthAsPydicomReadsIt_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("format");
    QTest::addColumn<int>("shift");  // colour: expected >> shift is what is shown
    QTest::newRow("RT Dose, 32-bit unsigned") << QStringLiteral("rtdose") << int(PixelFormat::Float64) << 0;
    QTest::newRow("32-bit signed") << QStringLiteral("signed32") << int(PixelFormat::Float64) << 0;
    QTest::newRow("Float Pixel Data") << QStringLiteral("float") << int(PixelFormat::Float64) << 0;
    QTest::newRow("Double Float Pixel Data") << QStringLiteral("double") << int(PixelFormat::Float64) << 0;
    QTest::newRow("1-bit segmentation") << QStringLiteral("seg") << int(PixelFormat::Gray8) << 0;
    QTest::newRow("16-bit RGB") << QStringLiteral("rgb16") << int(PixelFormat::Rgb24) << 4;
    QTest::newRow("16-bit RGB, planar") << QStringLiteral("rgb16-planar") << int(PixelFormat::Rgb24) << 4;
    QTest::newRow("32-bit RGB") << QStringLiteral("rgb32") << int(PixelFormat::Rgb24) << 12;
}

/// Every sample depth DICOM allows for images, decoded — whole and while streaming — to what pydicom reads from
/// the same file: 32-bit integers and floating point exactly, 1-bit masks as 0 and 1, 16- and 32-bit colour at 8 bits.
void tst_PixelEncodings::everySampleDepthAsPydicomReadsIt()
{
    QFETCH(QString, name);
    QFETCH(int, format);
    QFETCH(int, shift);
    QVERIFY(!depthFolder().isEmpty());
    const QByteArray bytes = readFile(depthFolder() + QLatin1Char('/') + name + QStringLiteral(".dcm"));
    const Result<DecodedImage> decoded = decodeDicom(ByteView(bytes));
    QVERIFY2(decoded.isOk(), qPrintable(decoded.isOk() ? QString() : decoded.error().toString()));
    const PixelBuffer &px = decoded.value().pixels;
    QCOMPARE(int(px.format()), format);
    const QVector<double> expected = expectedValues(name);
    const int channels = px.format() == PixelFormat::Rgb24 ? 3 : 1;
    QCOMPARE(qsizetype(expected.size()), qsizetype(px.width()) * px.height() * px.frames() * channels);
    qsizetype i = 0;
    for (int f = 0; f < px.frames(); ++f) {
        for (int y = 0; y < px.height(); ++y) {
            for (int x = 0; x < px.width(); ++x, i += channels) {
                if (channels == 3) {
                    const uchar *p = px.frameData(f) + 3 * (qsizetype(y) * px.width() + x);
                    for (int c = 0; c < 3; ++c)
                        QCOMPARE(int(p[c]), int(expected[i + c]) >> shift);
                } else if (!sameValue(px.sampleAt(x, y, f), expected[i])) {
                    QFAIL(qPrintable(QStringLiteral("frame %1 (%2, %3): %4, pydicom reads %5").arg(f).arg(x).arg(y).arg(px.sampleAt(x, y, f)).arg(expected[i])));
                }
            }
        }
    }
    // The same pixels when they arrive in pieces.
    StreamingDecoder streaming;
    for (qsizetype at = 0; at < bytes.size(); at += 1000)
        QVERIFY(!streaming.feed(bytes.constData() + at, std::min<qsizetype>(1000, bytes.size() - at)).isError());
    QVERIFY(!streaming.finish().isError());
    QCOMPARE(streaming.pixels().frameBytes() * streaming.pixels().frames(), px.frameBytes() * px.frames());
    QVERIFY(std::memcmp(streaming.pixels().frameData(0), px.frameData(0), size_t(px.frameBytes() * px.frames())) == 0);

    // The same pixels through DCMTK's lossless codecs where they take the depth: RLE (up to 32-bit samples, and
    // colour) and JPEG-LS (up to 16-bit, and colour).
    QStringList tools;
    if (name == QLatin1String("rtdose") || name == QLatin1String("signed32") || channels == 3)
        tools << QStringLiteral(DCMCRLE_EXECUTABLE);
    if (channels == 3 && name != QLatin1String("rgb32"))  // JPEG-LS holds up to 16 bits
        tools << QStringLiteral(DCMCJPLS_EXECUTABLE);
    for (const QString &tool : tools) {
        const QString out = depthFolder() + QLatin1Char('/') + name + QFileInfo(tool).fileName() + QStringLiteral(".dcm");
        const ProcessResult encoded = run(tool, {depthFolder() + QLatin1Char('/') + name + QStringLiteral(".dcm"), out});
        QVERIFY2(encoded.ok(), encoded.err.constData());
        const Result<DecodedImage> again = decodeDicom(ByteView(readFile(out)));
        QVERIFY2(again.isOk(), qPrintable(tool + QStringLiteral(": ") + (again.isOk() ? QString() : again.error().toString())));
        QCOMPARE(again.value().pixels.frameBytes() * again.value().pixels.frames(), px.frameBytes() * px.frames());
        QVERIFY2(std::memcmp(again.value().pixels.frameData(0), px.frameData(0), size_t(px.frameBytes() * px.frames())) == 0, qPrintable(tool));
    }

    const ImageInfo &info = decoded.value().info;
    if (name == QLatin1String("rtdose")) {
        QCOMPARE(info.rescaleSlope, 0.0001);  // Dose Grid Scaling: values in Gy
        QCOMPARE(info.valueUnit(), QStringLiteral("GY"));
        QCOMPARE(info.toModalityValue(px.sampleAt(0, 0, 0)), 7.0);
        // Each dose plane where Grid Frame Offset Vector puts it (0, 2.5, 5 mm along the normal from z = 30).
        QCOMPARE(info.frame(0).imagePosition[2], 30.0);
        QCOMPARE(info.frame(2).imagePosition[2], 35.0);
        QVERIFY(info.frame(2).hasPosition);
    }
    if (channels == 3)  // the reader is told
        QVERIFY2(info.notes.join(QLatin1Char(' ')).contains(QStringLiteral("%1-bit colour shown at 8 bits").arg(shift + 8)), qPrintable(info.notes.join(QLatin1Char(' '))));
    // Real values are shown and measured, never filtered as if they were 16-bit.
    if (px.format() == PixelFormat::Float64) {
        Result<FilterChain> chain = FilterRegistry().makeChain({QStringLiteral("sharpen")});
        QVERIFY(chain.isOk());
        const Result<PixelBuffer> filtered = applyFilters(chain.value(), px, info, nullptr);
        QVERIFY(!filtered.isOk());
        QCOMPARE(filtered.error().code(), ErrorCode::Unsupported);
        QVERIFY(!renderFrame(decoded.value(), 0, defaultWindow(decoded.value())).isNull());
    }
}

/// 14 bits in the header, 16 in the JPEG 2000 stream: the stream's values, all of them, and the reader is told.
void tst_PixelEncodings::aJpeg2000StreamDeeperThanItsHeaderIsReadAtItsOwnPrecision()
{
    QVERIFY(!depthFolder().isEmpty());
    const QString j2k = makeJpeg2000(depthFolder() + QStringLiteral("/gray16-wide.dcm"), 0, 0);
    QVERIFY(!j2k.isEmpty());
    const ProcessResult modified = run(QStringLiteral(DCMODIFY_EXECUTABLE), {QStringLiteral("-nb"), QStringLiteral("-m"), QStringLiteral("(0028,0101)=14"),
                                                                              QStringLiteral("-m"), QStringLiteral("(0028,0102)=13"), j2k});
    QVERIFY2(modified.ok(), modified.err.constData());
    const Result<DecodedImage> decoded = decodeDicom(ByteView(readFile(j2k)));
    QVERIFY2(decoded.isOk(), qPrintable(decoded.isOk() ? QString() : decoded.error().toString()));
    const QVector<double> expected = expectedValues(QStringLiteral("gray16-wide"));
    const PixelBuffer &px = decoded.value().pixels;
    for (int y = 0; y < px.height(); ++y)
        for (int x = 0; x < px.width(); ++x)
            QCOMPARE(px.sampleAt(x, y), expected[y * px.width() + x]);
    QCOMPARE(decoded.value().info.bitsStored, 16);
    QVERIFY2(decoded.value().info.notes.join(QLatin1Char(' ')).contains(QStringLiteral("16-bit samples, the header says 14")),
             qPrintable(decoded.value().info.notes.join(QLatin1Char(' '))));
}

QTEST_GUILESS_MAIN(tst_PixelEncodings)
#include "tst_pixelencodings.moc"
