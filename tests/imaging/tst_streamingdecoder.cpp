// SPDX-License-Identifier: Apache-2.0
// StreamingDecoder: bytes in pieces of any size — one at a time, random, whole — give exactly the pixels of the
// whole-file decoder for every transfer syntax and encoding; rows and frames are there before the last byte; data
// cut short or malformed is a clear error and never complete.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/filters/filterregistry.h"
#include "spectrum/imaging/codecs/progressiveimage.h"
#include "spectrum/imaging/codecs/streamingdecoder.h"
#include "jpeg2000files.h"
#include "testsupport.h"

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dctk.h>

#include <QDir>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QThreadPool>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>

using namespace spectrum;
using namespace spectrum::test;

namespace {

/// Feeds `bytes` cut at `cuts` (increasing offsets); the decoder's result after finish().
struct Streamed
{
    Error error;
    ImageInfo info;
    PixelBuffer pixels;
    bool complete = false;
};

Streamed stream(const QByteArray &bytes, const QList<qint64> &cuts)
{
    StreamingDecoder decoder;
    Streamed s;
    qint64 at = 0;
    for (qint64 cut : cuts + QList<qint64>{bytes.size()}) {
        if (Error e = decoder.feed(bytes.constData() + at, cut - at); e.isError()) {
            s.error = e;
            return s;
        }
        at = cut;
    }
    s.error = decoder.finish();
    s.info = decoder.info();
    s.pixels = decoder.pixels();
    s.complete = decoder.isComplete();
    return s;
}

QList<qint64> randomCuts(qint64 size, quint32 seed, int maxPiece)
{
    QRandomGenerator g(seed);
    QList<qint64> cuts;
    for (qint64 at = 0;;) {
        at += 1 + g.bounded(maxPiece);
        if (at >= size)
            return cuts;
        cuts << at;
    }
}

QList<qint64> everyByte(qint64 size)
{
    QList<qint64> cuts;
    for (qint64 i = 1; i < size; ++i)
        cuts << i;
    return cuts;
}

bool samePixels(const PixelBuffer &a, const PixelBuffer &b)
{
    if (a.format() != b.format() || a.width() != b.width() || a.height() != b.height() || a.frames() != b.frames())
        return false;
    return std::memcmp(a.frameData(0), b.frameData(0), size_t(a.frameBytes() * a.frames())) == 0;
}

/// An 8-bit colour image made with DCMTK: RGB (interleaved or planar) or YBR_FULL_422.
QByteArray makeColour(const char *photometric, int planar, int columns, int rows)
{
    DcmFileFormat ff;
    DcmDataset *ds = ff.getDataset();
    ds->putAndInsertString(DCM_SOPClassUID, UID_SecondaryCaptureImageStorage);
    ds->putAndInsertString(DCM_SOPInstanceUID, "2.25.4242");
    ds->putAndInsertString(DCM_StudyInstanceUID, "2.25.1");
    ds->putAndInsertString(DCM_SeriesInstanceUID, "2.25.2");
    ds->putAndInsertUint16(DCM_SamplesPerPixel, 3);
    ds->putAndInsertString(DCM_PhotometricInterpretation, photometric);
    ds->putAndInsertUint16(DCM_PlanarConfiguration, Uint16(planar));
    ds->putAndInsertUint16(DCM_Rows, Uint16(rows));
    ds->putAndInsertUint16(DCM_Columns, Uint16(columns));
    ds->putAndInsertUint16(DCM_BitsAllocated, 8);
    ds->putAndInsertUint16(DCM_BitsStored, 8);
    ds->putAndInsertUint16(DCM_HighBit, 7);
    ds->putAndInsertUint16(DCM_PixelRepresentation, 0);
    const bool ybr422 = std::strcmp(photometric, "YBR_FULL_422") == 0;
    std::vector<Uint8> bytes(size_t(columns) * rows * (ybr422 ? 2 : 3));
    QRandomGenerator g(7);
    for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = Uint8((i * 37 / 5) % 256 ^ (g.bounded(16)));
    ds->putAndInsertUint8Array(DCM_PixelData, bytes.data(), static_cast<unsigned long>(bytes.size()));
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("c.dcm"));
    if (ff.saveFile(QFile::encodeName(path).constData(), EXS_LittleEndianExplicit).bad())
        return {};
    return readFile(path);
}

} // namespace

class tst_StreamingDecoder : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void sameAsTheWholeFileDecoder_data();
    void sameAsTheWholeFileDecoder();
    void rowsArriveBeforeTheLastByte();
    void framesArriveBeforeTheLastByte();
    void progressiveImageFiltersWhileTheBytesArrive();
    void progressiveImageReportsBadData();
    void badInputIsAClearErrorAndNeverComplete_data();
    void badInputIsAClearErrorAndNeverComplete();

private:
    QString compressed(const QString &name, const QString &tool, const QStringList &options, const QString &input);
    QTemporaryDir m_dir;
    QString m_ct, m_cr, m_multi;
    QStringList m_slices;
};

void tst_StreamingDecoder::initTestCase()
{
    QVERIFY(m_dir.isValid());
    DemoOptions options;
    options.studies = {DemoStudy::HeadCt, DemoStudy::ChestCr};
    options.ctSlices = 3;
    QStringList slices;
    const Error e = DemoArchive::generate(options, [&](DemoInstance &&inst) -> Error {
        const QString path = m_dir.filePath(inst.relativePath.replace(QLatin1Char('/'), QLatin1Char('_')));
        if (inst.relativePath.contains(QLatin1String("ct_")))
            slices << path;
        if (inst.relativePath.contains(QLatin1String("cr_")))
            m_cr = path;
        return writeFile(path, inst.bytes) ? Error() : Error(ErrorCode::Io, path);
    });
    QVERIFY2(!e.isError(), qPrintable(e.toString()));
    slices.sort();
    QCOMPARE(slices.size(), 3);
    m_ct = slices.first();
    m_slices = slices;
    // The three slices as the frames of one native instance.
    DcmFileFormat ff;
    QVERIFY(ff.loadFile(QFile::encodeName(m_ct).constData()).good());
    std::vector<Uint16> frames;
    for (const QString &slice : slices) {
        Result<DecodedImage> d = decodeDicomFile(slice);
        QVERIFY(d.isOk());
        const auto *v = reinterpret_cast<const Uint16 *>(d.value().pixels.frameData(0));
        frames.insert(frames.end(), v, v + 512 * 512);
    }
    DcmDataset *ds = ff.getDataset();
    ds->putAndInsertUint16Array(DCM_PixelData, frames.data(), static_cast<unsigned long>(frames.size()));
    ds->putAndInsertString(DCM_NumberOfFrames, "3");
    m_multi = m_dir.filePath(QStringLiteral("multiframe.dcm"));
    QVERIFY(ff.saveFile(QFile::encodeName(m_multi).constData(), EXS_LittleEndianExplicit).good());
}

QString tst_StreamingDecoder::compressed(const QString &name, const QString &tool, const QStringList &options, const QString &input)
{
    const QString out = m_dir.filePath(name + QStringLiteral(".dcm"));
    if (!QFile::exists(out)) {
        const ProcessResult r = run(tool, options + QStringList{input, out});
        if (!r.ok())
            qWarning("%s: %s", qPrintable(tool), r.err.constData());
    }
    return out;
}

void tst_StreamingDecoder::sameAsTheWholeFileDecoder_data()
{
    QTest::addColumn<QString>("tool");  // empty: the input as it is
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("input"); // "ct", "cr", "multi", or a colour encoding
    QTest::addColumn<bool>("byteByByte");
    const QString conv = QStringLiteral(DCMCONV_EXECUTABLE), jpeg = QStringLiteral(DCMCJPEG_EXECUTABLE),
                  jpls = QStringLiteral(DCMCJPLS_EXECUTABLE), rle = QStringLiteral(DCMCRLE_EXECUTABLE);
    auto row = [](const char *name, const QString &tool, const char *options, const char *input, bool byteByByte) {
        QTest::newRow(name) << tool << QString::fromLatin1(options).split(QLatin1Char(' '), Qt::SkipEmptyParts) << QString::fromLatin1(input) << byteByByte;
    };
    row("explicit VR little endian", QString(), "", "ct", true);
    row("implicit VR little endian", conv, "+ti", "ct", true);
    row("explicit VR big endian", conv, "+tb", "ct", true);
    row("deflated", conv, "+td", "ct", false);
    row("JPEG lossless SV1", jpeg, "+e1", "ct", true);
    row("JPEG extended (lossy, 12 bits)", jpeg, "+ee", "ct", false);
    row("JPEG-LS lossless", jpls, "+el", "ct", false);
    row("JPEG-LS near-lossless", jpls, "+en +md 3", "ct", false);
    row("RLE", rle, "", "ct", false);
    row("CR 2048 x 2500 native", QString(), "", "cr", false);
    row("3 frames native", QString(), "", "multi", false);
    row("3 frames JPEG-LS, offset table", jpls, "+el +ot", "multi", false);
    row("3 frames JPEG-LS, no offset table", jpls, "+el -ot", "multi", false);
    row("3 frames JPEG lossless, fragments of 8 KiB", jpeg, "+e1 +fs 8", "multi", false);
    row("3 frames RLE", rle, "", "multi", false);
    row("RGB interleaved", QString(), "", "RGB0", true);
    row("RGB planar", QString(), "", "RGB1", true);
    row("YBR_FULL_422", QString(), "", "YBR_FULL_422", true);
    row("RGB as JPEG baseline", jpeg, "+eb", "RGB0", true);
    row("JPEG 2000 lossless, 16 KiB fragments", QString(), "", "j2k", false);
    row("3 frames JPEG 2000, offset table, 16 KiB fragments", QString(), "", "j2k-frames-table", false);
    row("3 frames JPEG 2000, no offset table", QString(), "", "j2k-frames", false);
}

void tst_StreamingDecoder::sameAsTheWholeFileDecoder()
{
    QFETCH(QString, tool);
    QFETCH(QStringList, options);
    QFETCH(QString, input);
    QFETCH(bool, byteByByte);
    QString source = input == QLatin1String("ct") ? m_ct : input == QLatin1String("cr") ? m_cr : input == QLatin1String("multi") ? m_multi : QString();
    if (input == QLatin1String("j2k"))
        source = makeJpeg2000(m_ct, m_dir.path(), 0, 16);
    if (input.startsWith(QLatin1String("j2k-frames")))
        source = makeMultiFrameJpeg2000(m_slices, m_dir.path(), input.endsWith(QLatin1String("table")), input.endsWith(QLatin1String("table")) ? 16 : 0);
    if (source.isEmpty() && input.startsWith(QLatin1String("j2k")))
        QFAIL("no JPEG 2000 test file");
    if (source.isEmpty()) {
        source = m_dir.filePath(input + QStringLiteral(".dcm"));
        const QByteArray colour = input.startsWith(QLatin1String("RGB")) ? makeColour("RGB", input.endsWith(QLatin1Char('1')) ? 1 : 0, 33, 21)
                                                                          : makeColour(input.toLatin1().constData(), 0, 34, 21);
        QVERIFY(!colour.isEmpty());
        QVERIFY(writeFile(source, colour));
    }
    const QString path = tool.isEmpty() ? source : compressed(QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('_')), tool, options, source);
    const QByteArray bytes = readFile(path);
    QVERIFY(!bytes.isEmpty());
    Result<DecodedImage> whole = decodeDicom(ByteView(bytes));
    QVERIFY2(whole.isOk(), qPrintable(whole.error().toString()));

    QList<QList<qint64>> patterns{{}, randomCuts(bytes.size(), 1, 100), randomCuts(bytes.size(), 2, 70000), randomCuts(bytes.size(), 3, 3)};
    if (byteByByte)
        patterns << everyByte(bytes.size());
    for (const QList<qint64> &cuts : patterns) {
        const Streamed s = stream(bytes, cuts);
        QVERIFY2(!s.error.isError(), qPrintable(QStringLiteral("%1 pieces: %2").arg(cuts.size() + 1).arg(s.error.toString())));
        QVERIFY(s.complete);
        QCOMPARE(s.info.rows, whole.value().info.rows);
        QCOMPARE(s.info.columns, whole.value().info.columns);
        QCOMPARE(s.info.frames, whole.value().info.frames);
        QCOMPARE(s.info.photometricName, whole.value().info.photometricName);
        QCOMPARE(s.info.transferSyntaxUid, whole.value().info.transferSyntaxUid);
        QVERIFY2(samePixels(s.pixels, whole.value().pixels), qPrintable(QStringLiteral("%1 pieces").arg(cuts.size() + 1)));
    }
}

void tst_StreamingDecoder::rowsArriveBeforeTheLastByte()
{
    const QByteArray bytes = readFile(m_cr);  // 2048 × 2500, 16 bits: 10 MB
    Result<DecodedImage> whole = decodeDicom(ByteView(bytes));
    QVERIFY(whole.isOk());
    StreamingDecoder decoder;
    int headers = 0, lastRows = 0;
    bool monotonic = true;
    decoder.onHeader = [&](const ImageInfo &info) {
        ++headers;
        QCOMPARE(info.rows, 2500);
    };
    decoder.onRows = [&](int frame, int rows) {
        monotonic = monotonic && frame == 0 && rows > lastRows;
        lastRows = rows;
    };
    const qint64 headerEnd = bytes.size() - 2048 * 2500 * 2;
    QVERIFY(!decoder.feed(bytes.constData(), headerEnd - 100).isError());
    QVERIFY(!decoder.hasHeader() || decoder.rowsComplete() == 0);
    const qint64 part = headerEnd + qint64(2048 * 2) * 1000 + 77;  // 1000 rows and a bit of the next
    QVERIFY(!decoder.feed(bytes.constData() + headerEnd - 100, part - (headerEnd - 100)).isError());
    QCOMPARE(headers, 1);
    QVERIFY(decoder.hasHeader());
    QCOMPARE(decoder.rowsComplete(), 1000);  // exactly the rows whose bytes are in
    QCOMPARE(lastRows, 1000);
    QVERIFY(!decoder.isComplete());
    QVERIFY(std::memcmp(decoder.pixels().frameData(0), whole.value().pixels.frameData(0), 2048 * 2 * 1000) == 0);
    QVERIFY(!decoder.feed(bytes.constData() + part, bytes.size() - part).isError());
    QVERIFY(decoder.isComplete());
    QVERIFY(monotonic);
    QCOMPARE(lastRows, 0 + 2500);
    QVERIFY(!decoder.finish().isError());
    QVERIFY(samePixels(decoder.pixels(), whole.value().pixels));
}

void tst_StreamingDecoder::framesArriveBeforeTheLastByte()
{
    const QString path = compressed(QStringLiteral("frames-rle"), QStringLiteral(DCMCRLE_EXECUTABLE), {}, m_multi);
    const QByteArray bytes = readFile(path);
    StreamingDecoder decoder;
    QList<int> framesDone;
    decoder.onRows = [&](int frame, int rows) {
        if (rows == 512)
            framesDone << frame;
    };
    // Up to three quarters: the first frame (at least) is decoded, the last is not.
    QVERIFY(!decoder.feed(bytes.constData(), bytes.size() * 3 / 4).isError());
    QVERIFY2(decoder.framesComplete() >= 1 && decoder.framesComplete() < 3, qPrintable(QString::number(decoder.framesComplete())));
    QCOMPARE(framesDone.first(), 0);
    QVERIFY(!decoder.feed(bytes.constData() + bytes.size() * 3 / 4, bytes.size() - bytes.size() * 3 / 4).isError());
    QVERIFY(!decoder.finish().isError());
    QCOMPARE(framesDone, (QList<int>{0, 1, 2}));
}

void tst_StreamingDecoder::progressiveImageFiltersWhileTheBytesArrive()
{
    const QByteArray bytes = readFile(m_cr);
    Result<FilterChain> chain = FilterRegistry().makeChain({QStringLiteral("gaussian:sigma=2"), QStringLiteral("invert")});
    QVERIFY(chain.isOk());
    Result<DecodedImage> whole = decodeDicom(ByteView(bytes));
    QVERIFY(whole.isOk());
    Result<PixelBuffer> expected = applyFilters(chain.value(), whole.value().pixels, whole.value().info, nullptr);
    QVERIFY(expected.isOk());

    QThreadPool pool;
    pool.setMaxThreadCount(2);
    ProgressiveImage image(chain.value(), &pool);
    QSignalSpy headers(&image, &ProgressiveImage::headerReady);
    QSignalSpy rows(&image, &ProgressiveImage::rowsReady);
    const qint64 half = bytes.size() / 2;
    for (qint64 end = 4096; end < half; end += 100000)
        image.bytesAvailable(bytes.constData(), end);
    image.bytesAvailable(bytes.constData(), half);
    // Half the bytes: about half the rows, filtered, reported before any more arrive.
    QTRY_VERIFY(!rows.isEmpty() && rows.last().at(1).toInt() > 1000);
    QCOMPARE(headers.size(), 1);
    QCOMPARE(headers.first().at(0).value<ImageInfo>().rows, 2500);
    QVERIFY(rows.last().at(1).toInt() < 1300);
    image.bytesAvailable(bytes.constData(), bytes.size());
    Result<DecodedImage> done = image.finish();
    QVERIFY2(done.isOk(), qPrintable(done.error().toString()));
    QVERIFY(samePixels(done.value().pixels, expected.value()));  // the same as filtering the whole image after
    QCOMPARE(done.value().info.rows, 2500);
    QVERIFY(image.firstRowsSeconds() >= 0);
}

void tst_StreamingDecoder::progressiveImageReportsBadData()
{
    const QByteArray bytes = readFile(m_ct);
    ProgressiveImage cut(FilterChain{}, nullptr);
    cut.bytesAvailable(bytes.constData(), bytes.size() - 4096);
    Result<DecodedImage> r = cut.finish();
    QVERIFY(!r.isOk());
    QVERIFY2(r.error().message().contains(QStringLiteral("incomplete")), qPrintable(r.error().toString()));
}

void tst_StreamingDecoder::badInputIsAClearErrorAndNeverComplete_data()
{
    QTest::addColumn<QString>("what");
    QTest::newRow("empty") << QStringLiteral("empty");
    QTest::newRow("not DICOM") << QStringLiteral("garbage");
    QTest::newRow("cut in the header") << QStringLiteral("cut-header");
    QTest::newRow("cut in the pixels") << QStringLiteral("cut-pixels");
    QTest::newRow("cut in a compressed frame") << QStringLiteral("cut-jpeg");
    QTest::newRow("pixel data shorter than the image") << QStringLiteral("short-length");
    QTest::newRow("rows × columns × frames too large") << QStringLiteral("huge");
    QTest::newRow("broken JPEG stream") << QStringLiteral("broken-jpeg");
    QTest::newRow("more frames than announced") << QStringLiteral("extra-frames");
}

void tst_StreamingDecoder::badInputIsAClearErrorAndNeverComplete()
{
    QFETCH(QString, what);
    const QByteArray ct = readFile(m_ct);
    const qint64 pixelStart = ct.size() - 512 * 512 * 2;  // the value; its element header is the 12 bytes before
    QByteArray input;
    if (what == QLatin1String("garbage")) {
        input = QByteArray(128, '\0') + "DIXM" + QByteArray(4000, '\x7f');
    } else if (what == QLatin1String("cut-header")) {
        input = ct.left(pixelStart / 2);
    } else if (what == QLatin1String("cut-pixels")) {
        input = ct.left(ct.size() - 1000);
    } else if (what == QLatin1String("cut-jpeg")) {
        const QByteArray jpeg = readFile(compressed(QStringLiteral("cut-jpeg"), QStringLiteral(DCMCJPEG_EXECUTABLE), {QStringLiteral("+e1")}, m_ct));
        input = jpeg.left(jpeg.size() - 500);
    } else if (what == QLatin1String("short-length")) {
        input = ct;
        const quint32 length = 512 * 512;  // half of what 512 × 512 × 16 bits need
        std::memcpy(input.data() + pixelStart - 4, &length, 4);
        input.truncate(pixelStart + length);
    } else if (what == QLatin1String("huge")) {
        DcmFileFormat ff;
        QVERIFY(ff.loadFile(QFile::encodeName(m_ct).constData()).good());
        ff.getDataset()->putAndInsertUint16(DCM_Rows, 65535);
        ff.getDataset()->putAndInsertUint16(DCM_Columns, 65535);
        ff.getDataset()->putAndInsertString(DCM_NumberOfFrames, "100000");
        const QString path = m_dir.filePath(QStringLiteral("huge.dcm"));
        QVERIFY(ff.saveFile(QFile::encodeName(path).constData(), EXS_LittleEndianExplicit).good());
        input = readFile(path);
    } else if (what == QLatin1String("broken-jpeg")) {
        input = readFile(compressed(QStringLiteral("broken-jpeg"), QStringLiteral(DCMCJPEG_EXECUTABLE), {QStringLiteral("+e1")}, m_ct));
        const qsizetype sof = input.indexOf(QByteArray("\xFF\xC3", 2));  // the lossless frame header
        QVERIFY(sof > 0);
        std::memset(input.data() + sof, 0x55, 64);  // the frame header and what follows: no longer a JPEG stream
    } else if (what == QLatin1String("extra-frames")) {
        input = readFile(compressed(QStringLiteral("frames-rle-extra"), QStringLiteral(DCMCRLE_EXECUTABLE), {}, m_multi));
        DcmFileFormat ff;
        QVERIFY(ff.loadFile(QFile::encodeName(m_dir.filePath(QStringLiteral("frames-rle-extra.dcm"))).constData()).good());
        ff.getDataset()->putAndInsertString(DCM_NumberOfFrames, "2");  // three RLE fragments: one too many
        const QString path = m_dir.filePath(QStringLiteral("extra.dcm"));
        QVERIFY(ff.saveFile(QFile::encodeName(path).constData(), EXS_RLELossless).good());
        input = readFile(path);
    }
    for (const QList<qint64> &cuts : {QList<qint64>{}, randomCuts(input.size(), 5, 5000)}) {
        const Streamed s = stream(input, cuts);
        QVERIFY2(s.error.isError(), qPrintable(what));
        QVERIFY(!s.complete);
        QVERIFY(!s.error.message().isEmpty());
        if (cuts.isEmpty())
            qInfo() << what << "→" << s.error.toString();
    }
}

QTEST_GUILESS_MAIN(tst_StreamingDecoder)
#include "tst_streamingdecoder.moc"
