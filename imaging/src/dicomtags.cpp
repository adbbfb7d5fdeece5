// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/dicomtags.h"

#include "dcmtksupport.h"

namespace spectrum {

namespace {
constexpr int kMaxValueText = 300;

QString valueText(DcmElement *e, const DicomTextDecoder &text)
{
    const DcmEVR vr = e->getVR();
    const Uint32 length = e->getLength();
    if (e->getTag() == DCM_PixelData || vr == EVR_OB || vr == EVR_OW || vr == EVR_OF || vr == EVR_OD || vr == EVR_OL || vr == EVR_OV || vr == EVR_UN
        || vr == EVR_pixelSQ || vr == EVR_ox || vr == EVR_px) {
        return length == 0xFFFFFFFFu ? QStringLiteral("(encapsulated)") : QStringLiteral("(%1 bytes of binary data)").arg(length);
    }
    OFString value;
    if (e->getOFStringArray(value).bad())
        return QString();
    QString out;
    if (DcmVR(vr).isAffectedBySpecificCharacterSet())
        out = text.decode(QByteArray(value.c_str(), qsizetype(value.length())), vr == EVR_PN);
    else
        out = QString::fromLatin1(value.c_str(), qsizetype(value.length())).trimmed();
    if (out.size() > kMaxValueText)
        out = out.left(kMaxValueText) + QStringLiteral("… (%1 characters)").arg(out.size());
    return out;
}

QList<DicomTagRow> rowsOf(DcmItem *item, const DicomTextDecoder &text, int depth)
{
    QList<DicomTagRow> rows;
    if (!item || depth > 16)
        return rows;
    for (unsigned long i = 0; i < item->card(); ++i) {
        DcmElement *e = item->getElement(i);
        if (!e)
            continue;
        DicomTagRow row;
        DcmTag tag = e->getTag();
        row.group = tag.getGTag();
        row.element = tag.getETag();
        row.keyword = QString::fromLatin1(tag.getTagName());
        row.vr = QString::fromLatin1(DcmVR(e->getVR()).getVRName());
        if (e->getVR() == EVR_SQ) {
            auto *sequence = static_cast<DcmSequenceOfItems *>(e);
            row.value = QStringLiteral("%1 item(s)").arg(sequence->card());
            for (unsigned long k = 0; k < sequence->card(); ++k) {
                DicomTagRow itemRow;
                itemRow.group = 0xFFFE;
                itemRow.element = 0xE000;
                itemRow.keyword = QStringLiteral("Item %1").arg(k + 1);
                itemRow.children = rowsOf(sequence->getItem(k), text, depth + 1);
                row.children << itemRow;
            }
        } else {
            row.value = valueText(e, text);
        }
        rows << row;
    }
    return rows;
}
} // namespace

QString DicomTagRow::tagText() const
{
    return QStringLiteral("(%1,%2)").arg(group, 4, 16, QLatin1Char('0')).arg(element, 4, 16, QLatin1Char('0')).toUpper();
}

Result<QList<DicomTagRow>> readDicomTags(const ByteView &bytes)
{
    dcmtk::registerCodecs();
    DcmFileFormat file;
    if (Error e = dcmtk::parse(bytes, file, dcmtk::ParseExtent::Everything); e.isError())
        return e;
    const DicomTextDecoder text = dcmtk::textDecoder(file.getDataset());
    QList<DicomTagRow> rows = rowsOf(file.getMetaInfo(), DicomTextDecoder(), 0);
    rows << rowsOf(file.getDataset(), text, 0);
    return rows;
}

} // namespace spectrum
