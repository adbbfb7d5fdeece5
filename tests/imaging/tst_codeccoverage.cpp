// SPDX-License-Identifier: Apache-2.0
// Codec coverage against files we did not make, decoded by software we did not write: every file with pixel data
// among pydicom's own test files and pydicom-data's (PyPI) — native little and big endian, deflated, JPEG baseline,
// extended, lossless, JPEG-LS, JPEG 2000, RLE; 8 to 32 bits, signed and unsigned, monochrome, palette and colour,
// single and multi-frame — decoded by pydicom with pylibjpeg (tests/support/codec_reference.py) and by us.
//
// What a reader may rely on: each file we decode gives pydicom's values, every frame and sample — exactly for a
// lossless syntax, within a decoder's rounding for a lossy one; each file we do not decode is refused with a reason
// (never a crash, never a guess); and a file whose pixel data is cut short is never shown as an image.

#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "testsupport.h"

#include <QFile>
#include <QHash>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>

using namespace spectrum;
using namespace spectrum::test;

namespace {

/// Transfer syntaxes whose pixels must come back exactly.
bool isLossless(const QString &ts)
{
    static const QStringList lossy{QStringLiteral("1.2.840.10008.1.2.4.50"), QStringLiteral("1.2.840.10008.1.2.4.51"),
                                   QStringLiteral("1.2.840.10008.1.2.4.81"), QStringLiteral("1.2.840.10008.1.2.4.91"),
                                   QStringLiteral("1.2.840.10008.1.2.4.203")};
    return !lossy.contains(ts);
}

/// The reference values (pydicom's array, little endian, its dtype) as 64-bit integers.
QList<qint64> referenceValues(const QByteArray &raw, const QString &dtype, bool *ok)
{
    *ok = true;
    QList<qint64> out;
    const int size = dtype.mid(2).toInt();
    const QChar kind = dtype.size() > 1 ? dtype.at(1) : QChar();
    if (size <= 0 || raw.size() % size != 0 || (kind != QLatin1Char('u') && kind != QLatin1Char('i'))) {
        *ok = false;
        return out;
    }
    out.reserve(raw.size() / size);
    for (qsizetype at = 0; at < raw.size(); at += size) {
        quint64 v = 0;
        for (int b = 0; b < size; ++b)
            v |= quint64(quint8(raw[at + b])) << (8 * b);
        if (kind == QLatin1Char('i') && size < 8 && (v >> (8 * size - 1)) & 1)
            v |= ~quint64(0) << (8 * size);  // sign-extended
        out << qint64(v);
    }
    return out;
}

/// Our decoded values in pydicom's order (frame, row, column, sample).
QList<qint64> ourValues(const PixelBuffer &p)
{
    QList<qint64> out;
    const qint64 perFrame = qint64(p.width()) * p.height() * (p.isGray() ? 1 : 3);
    out.reserve(perFrame * p.frames());
    for (int f = 0; f < p.frames(); ++f) {
        const uchar *d = p.frameData(f);
        for (qint64 i = 0; i < perFrame; ++i) {
            switch (p.format()) {
            case PixelFormat::Gray8:
            case PixelFormat::Rgb24: out << d[i]; break;
            case PixelFormat::Gray8Signed: out << qint8(d[i]); break;
            case PixelFormat::Gray16: {
                quint16 v;
                std::memcpy(&v, d + 2 * i, 2);
                out << v;
                break;
            }
            case PixelFormat::Gray16Signed: {
                qint16 v;
                std::memcpy(&v, d + 2 * i, 2);
                out << v;
                break;
            }
            case PixelFormat::Float64: {  // 32-bit integer samples, held exactly
                double v;
                std::memcpy(&v, d + 8 * i, 8);
                out << qint64(std::llround(v));
                break;
            }
            }
        }
    }
    return out;
}

/// Files pydicom decodes that we refuse, each with why; any other refusal fails the test (coverage lost).
const QHash<QString, QString> kKnownRefusals{
    {QStringLiteral("SC_rgb_jpeg.dcm"), QStringLiteral("says explicit VR (JPEG baseline) but is written implicit; pydicom guesses, DCMTK does not")},
    {QStringLiteral("gdcm-US-ALOKA-16.dcm"), QStringLiteral("segmented palette lookup tables")},
    {QStringLiteral("gdcm-US-ALOKA-16_big.dcm"), QStringLiteral("segmented palette lookup tables")},
    {QStringLiteral("rtdose_expb.dcm"), QStringLiteral("32-bit samples in the retired big endian syntax")},
    {QStringLiteral("rtdose_expb_1frame.dcm"), QStringLiteral("32-bit samples in the retired big endian syntax")},
    {QStringLiteral("SC_rgb_expb_32bit.dcm"), QStringLiteral("32-bit samples in the retired big endian syntax")},
    {QStringLiteral("SC_rgb_expb_32bit_2frame.dcm"), QStringLiteral("32-bit samples in the retired big endian syntax")},
};

} // namespace

class tst_CodecCoverage : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void everyFileIsDecodedAsPydicomDoesOrRefusedWithAReason();
};

void tst_CodecCoverage::everyFileIsDecodedAsPydicomDoesOrRefusedWithAReason()
{
    const ProcessResult venv = run(QStringLiteral(PYVENV_SCRIPT), {QStringLiteral(TEST_VENV_DIR), QStringLiteral(TEST_PEERS_REQUIREMENTS)}, 600000);
    QVERIFY2(venv.ok(), venv.err.constData());
    QTemporaryDir dir;
    const ProcessResult refs = run(QStringLiteral(TEST_VENV_DIR "/bin/python"), {QStringLiteral(CODEC_REFERENCE_SCRIPT), dir.path()}, 600000);
    QVERIFY2(refs.ok(), refs.err.right(3000).constData());

    int files = 0, same = 0, close = 0, refused = 0, noReference = 0;
    QStringList wrong, refusals, table;
    for (const QByteArray &line : refs.out.split('\n')) {
        if (line.trimmed().isEmpty())
            continue;
        const QJsonObject e = QJsonDocument::fromJson(line).object();
        const QString file = e.value(QStringLiteral("file")).toString(), name = QFileInfo(file).fileName();
        const QString ts = e.value(QStringLiteral("transferSyntax")).toString();
        ++files;
        const Result<DecodedImage> ours = decodeDicomFile(file);
        if (!e.contains(QStringLiteral("reference"))) {
            // pydicom cannot decode it either: no values to compare. A file whose pixel data is cut short must not
            // come out as an image here.
            ++noReference;
            const QString why = e.value(QStringLiteral("referenceError")).toString();
            if (why.contains(QStringLiteral("less than expected")) && ours.isOk())
                wrong << QStringLiteral("%1: its pixel data is cut short (%2), and we decoded it as whole").arg(name, why);
            table << QStringLiteral("  %1  %2  pydicom: %3; we: %4").arg(name, ts, why.left(80), ours.isOk() ? QStringLiteral("decoded") : ours.error().toString().left(80));
            continue;
        }
        if (!ours.isOk()) {
            ++refused;
            refusals << QStringLiteral("  %1 (%2, %3, %4 bits, %5 sample(s)): %6")
                            .arg(name, ts, e.value(QStringLiteral("photometric")).toString())
                            .arg(e.value(QStringLiteral("bitsAllocated")).toInt())
                            .arg(e.value(QStringLiteral("samples")).toInt())
                            .arg(ours.error().toString());
            // Refused with a reason, and known: what this test allows. A new refusal is coverage lost.
            if (!kKnownRefusals.contains(name) || ours.error().message().isEmpty())
                wrong << QStringLiteral("%1: refused (%2) where pydicom decodes it").arg(name, ours.error().toString());
            continue;
        }
        bool ok = false;
        const QList<qint64> reference = referenceValues(readFile(e.value(QStringLiteral("reference")).toString()), e.value(QStringLiteral("dtype")).toString(), &ok);
        if (!ok) {
            wrong << QStringLiteral("%1: pydicom's values are of a type this test does not read (%2)").arg(name, e.value(QStringLiteral("dtype")).toString());
            continue;
        }
        if (name == QLatin1String("J2K_pixelrep_mismatch.dcm")
            && !ours.value().info.notes.join(QLatin1Char(' ')).contains(QStringLiteral("Pixel Representation says")))
            wrong << QStringLiteral("%1: its JPEG 2000 stream's sign disagrees with Pixel Representation, and the reader is not told").arg(name);
        QList<qint64> mine = ourValues(ours.value().pixels);
        QList<qint64> expected = reference;
        const int bits = e.value(QStringLiteral("bitsStored")).toInt();
        if (ours.value().pixels.format() == PixelFormat::Rgb24 && !e.value(QStringLiteral("palette")).toBool() && bits > 8) {
            for (qint64 &v : expected)  // deeper colour is shown at the top 8 bits of Bits Stored
                v >>= bits - 8;
        }
        if (mine.size() != expected.size()) {
            wrong << QStringLiteral("%1: %2 values (%3×%4, %5 frame(s)) where pydicom has %6 (shape %7)")
                         .arg(name)
                         .arg(mine.size())
                         .arg(ours.value().pixels.width())
                         .arg(ours.value().pixels.height())
                         .arg(ours.value().pixels.frames())
                         .arg(expected.size())
                         .arg(QString::fromUtf8(QJsonDocument(e.value(QStringLiteral("shape")).toArray()).toJson(QJsonDocument::Compact)));
            continue;
        }
        qint64 maxDiff = 0, differing = 0;
        for (qsizetype i = 0; i < mine.size(); ++i) {
            const qint64 d = std::abs(mine[i] - expected[i]);
            maxDiff = std::max(maxDiff, d);
            differing += d != 0;
        }
        // A lossy decoder may round differently from another: a few levels at most, on a small share of the samples;
        // a little more where the chroma was subsampled (decoders upsample it each their own way).
        const bool subsampled = e.value(QStringLiteral("photometric")).toString().startsWith(QLatin1String("YBR_FULL_422"));
        const qint64 tolerance = bits > 8 ? 1 << (bits - 8) : subsampled ? 8 : 2;
        if (maxDiff == 0) {
            ++same;
        } else if (!isLossless(ts) && maxDiff <= tolerance && differing * 10 <= mine.size()) {
            ++close;
            table << QStringLiteral("  %1  %2  lossy: %3 of %4 samples differ from pydicom's, by at most %5").arg(name, ts).arg(differing).arg(mine.size()).arg(maxDiff);
        } else {
            wrong << QStringLiteral("%1 (%2, %3): %4 of %5 values differ from pydicom's, by up to %6")
                         .arg(name, ts, e.value(QStringLiteral("photometric")).toString())
                         .arg(differing)
                         .arg(mine.size())
                         .arg(maxDiff);
        }
    }
    qInfo("%d files: %d decoded exactly as pydicom does, %d within a lossy decoder's rounding, %d refused with a reason, %d pydicom cannot decode either",
          files, same, close, refused, noReference);
    for (const QString &line : table)
        qInfo("%s", qPrintable(line));
    if (!refusals.isEmpty())
        qInfo("refused:\n%s", qPrintable(refusals.join(QLatin1Char('\n'))));
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join(QLatin1Char('\n'))));
    QVERIFY2(files >= 120, "fewer files than pydicom and pydicom-data hold: the reference script missed some");
    QCOMPARE(refused, int(kKnownRefusals.size()));  // each known refusal still happens: one decoded now is to be compared, and taken off the list
}

QTEST_GUILESS_MAIN(tst_CodecCoverage)
#include "tst_codeccoverage.moc"
