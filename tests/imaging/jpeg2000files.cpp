// SPDX-License-Identifier: Apache-2.0
#include "jpeg2000files.h"

#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "testsupport.h"

#include <QDir>
#include <QFileInfo>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dctk.h>
#include <dcmtk/dcmdata/dcpixseq.h>
#include <dcmtk/dcmdata/dcpxitem.h>

namespace spectrum::test {

QString makeJpeg2000(const QString &original, const QString &folder, int rate, int fragmentKiB)
{
    Result<DecodedImage> decoded = decodeDicomFile(original);
    if (!decoded.isOk())
        return {};
    const PixelBuffer &px = decoded.value().pixels;
    const int maxval = (1 << decoded.value().info.bitsStored) - 1;
    const QString stem = QDir(folder).filePath(QStringLiteral("j2k-%1-%2-%3").arg(QFileInfo(original).baseName()).arg(rate).arg(fragmentKiB));
    // A 16-bit PGM (big-endian samples) with the stored precision as its maximum value.
    QByteArray pgm = QStringLiteral("P5\n%1 %2\n%3\n").arg(px.width()).arg(px.height()).arg(maxval).toLatin1();
    const auto *v = reinterpret_cast<const quint16 *>(px.frameData(0));
    for (qint64 i = 0; i < qint64(px.width()) * px.height(); ++i) {
        pgm.append(char(v[i] >> 8));
        pgm.append(char(v[i] & 0xff));
    }
    writeFile(stem + QStringLiteral(".pgm"), pgm);
    QStringList args{QStringLiteral("-i"), stem + QStringLiteral(".pgm"), QStringLiteral("-o"), stem + QStringLiteral(".j2k")};
    if (rate > 0)
        args << QStringLiteral("-r") << QString::number(rate) << QStringLiteral("-I");  // irreversible 9/7 wavelet
    const ProcessResult r = run(QStringLiteral(OPJ_COMPRESS_EXECUTABLE), args);
    if (!r.ok()) {
        qWarning("opj_compress: %s %s", r.out.constData(), r.err.constData());
        return {};
    }
    const QByteArray codestream = readFile(stem + QStringLiteral(".j2k"));
    DcmFileFormat ff;
    if (ff.loadFile(QFile::encodeName(original).constData()).bad())
        return {};
    DcmDataset *ds = ff.getDataset();
    auto *sequence = new DcmPixelSequence(DCM_PixelSequenceTag);
    sequence->insert(new DcmPixelItem(DcmTag(DCM_Item, EVR_OB)));  // an empty Basic Offset Table
    OFList<Uint32> offsets;
    if (sequence->storeCompressedFrame(offsets, reinterpret_cast<Uint8 *>(const_cast<char *>(codestream.constData())), Uint32(codestream.size()), Uint32(fragmentKiB)).bad())
        return {};
    auto *pixelData = new DcmPixelData(DCM_PixelData);
    const E_TransferSyntax xfer = rate > 0 ? EXS_JPEG2000 : EXS_JPEG2000LosslessOnly;
    pixelData->putOriginalRepresentation(xfer, nullptr, sequence);
    ds->insert(pixelData, true);
    const QString out = stem + QStringLiteral(".dcm");
    if (ff.saveFile(QFile::encodeName(out).constData(), xfer).bad())
        return {};
    return out;
}

QString makeMultiFrameJpeg2000(const QStringList &slices, const QString &folder, bool offsetTable, int fragmentKiB)
{
    QList<QByteArray> codestreams;
    for (const QString &slice : slices) {
        const QString single = makeJpeg2000(slice, folder, 0, 0);
        if (single.isEmpty())
            return {};
        codestreams << readFile(QString(single).replace(QStringLiteral(".dcm"), QStringLiteral(".j2k")));
    }
    DcmFileFormat ff;
    if (slices.isEmpty() || ff.loadFile(QFile::encodeName(slices.first()).constData()).bad())
        return {};
    DcmDataset *ds = ff.getDataset();
    auto *sequence = new DcmPixelSequence(DCM_PixelSequenceTag);
    auto *table = new DcmPixelItem(DcmTag(DCM_Item, EVR_OB));
    sequence->insert(table);
    DcmOffsetList offsets;
    for (const QByteArray &c : codestreams) {
        if (sequence->storeCompressedFrame(offsets, reinterpret_cast<Uint8 *>(const_cast<char *>(c.constData())), Uint32(c.size()), Uint32(fragmentKiB)).bad())
            return {};
    }
    if (offsetTable && table->createOffsetTable(offsets).bad())
        return {};
    auto *pixelData = new DcmPixelData(DCM_PixelData);
    pixelData->putOriginalRepresentation(EXS_JPEG2000LosslessOnly, nullptr, sequence);
    ds->insert(pixelData, true);
    ds->putAndInsertString(DCM_NumberOfFrames, QByteArray::number(slices.size()).constData());
    const QString path = QDir(folder).filePath(QStringLiteral("multiframe-j2k-%1-%2.dcm").arg(offsetTable ? 1 : 0).arg(fragmentKiB));
    if (ff.saveFile(QFile::encodeName(path).constData(), EXS_JPEG2000LosslessOnly).bad())
        return {};
    return path;
}

} // namespace spectrum::test
