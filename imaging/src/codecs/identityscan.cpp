// SPDX-License-Identifier: Apache-2.0
#include "codecs/identityscan.h"

#include <QString>

#include <cstring>
#include <vector>

namespace spectrum {

namespace {

constexpr quint32 kUndefined = 0xFFFFFFFFu;
constexpr quint32 kItem = 0xFFFEE000u, kItemEnd = 0xFFFEE00Du, kSequenceEnd = 0xFFFEE0DDu;
constexpr quint32 kPixelData = 0x7FE00010u;
constexpr int kMaxDepth = 32;

quint16 le16(const uchar *p) { return quint16(p[0] | (p[1] << 8)); }
quint32 le32(const uchar *p) { return quint32(p[0]) | (quint32(p[1]) << 8) | (quint32(p[2]) << 16) | (quint32(p[3]) << 24); }

bool vrIn(const char vr[2], const char *list)
{
    for (const char *v = list;; v += 3) {  // "AE AS … UV": two letters, then a space or the end
        if (v[0] == vr[0] && v[1] == vr[1])
            return true;
        if (v[2] == '\0')
            return false;
    }
}
/// Explicit VRs whose length takes 4 bytes after 2 reserved ones (PS3.5 7.1.2).
bool isLongVr(const char vr[2]) { return vrIn(vr, "OB OD OF OL OV OW SQ SV UC UN UR UT UV"); }
bool isKnownVr(const char vr[2])
{
    return vrIn(vr, "AE AS AT CS DA DS DT FL FD IS LO LT OB OD OF OL OV OW PN SH SL SQ SS ST SV TM UC UI UL UN UR US UT UV");
}
/// VRs whose value DCMTK hands over as the text it is.
bool isStringVr(const char vr[2]) { return vrIn(vr, "AE AS CS DA DS DT IS LO LT PN SH ST TM UC UI UR UT"); }

struct Element
{
    quint32 tag = 0;
    char vr[2] = {0, 0};  ///< zeros for items and delimiters
    quint32 length = 0;
    qint64 valueAt = 0;
};

class Scanner
{
public:
    Scanner(const uchar *p, qint64 size) : m_p(p), m_size(size) {}

    /// The element header at `at`, or false when it does not fit or is not plausible.
    bool header(qint64 at, Element &e) const
    {
        if (at < 0 || m_size - at < 8)
            return false;
        e = Element();
        e.tag = (quint32(le16(m_p + at)) << 16) | le16(m_p + at + 2);
        if ((e.tag >> 16) == 0xFFFE) {
            e.length = le32(m_p + at + 4);
            e.valueAt = at + 8;
            return true;
        }
        e.vr[0] = char(m_p[at + 4]);
        e.vr[1] = char(m_p[at + 5]);
        if (!isKnownVr(e.vr))
            return false;
        if (isLongVr(e.vr)) {
            if (m_size - at < 12)
                return false;
            e.length = le32(m_p + at + 8);
            e.valueAt = at + 12;
        } else {
            e.length = le16(m_p + at + 6);
            e.valueAt = at + 8;
        }
        return true;
    }

    /// The end of a defined-length value, or −1 when it runs past the bytes.
    qint64 endOf(const Element &e) const { return e.length <= quint64(m_size - e.valueAt) ? e.valueAt + qint64(e.length) : -1; }

    /// Past the contents of a sequence (`items`: its items) or of an item (its elements) starting at `at`: up to
    /// `end` for a defined length (filled exactly, as DCMTK checks), or after its delimiter (end −1). −1 when it
    /// is not so.
    qint64 skipContents(qint64 at, qint64 end, bool items, int depth) const
    {
        if (depth > kMaxDepth)
            return -1;
        const quint32 delimiter = items ? kSequenceEnd : kItemEnd;
        Element e;
        while (end < 0 || at < end) {
            if (!header(at, e) || (end >= 0 && e.valueAt > end))
                return -1;
            if (e.tag == delimiter)
                return end < 0 && e.length == 0 ? e.valueAt : -1;
            if (items ? e.tag != kItem : (e.tag >> 16) == 0xFFFE)
                return -1;
            if (!items)
                at = skipValue(e, depth + 1);
            else if (e.length == kUndefined)
                at = skipContents(e.valueAt, -1, false, depth + 1);
            else
                at = endOf(e) < 0 ? -1 : skipContents(e.valueAt, endOf(e), false, depth + 1);
            if (at < 0 || (end >= 0 && at > end))
                return -1;
        }
        return at == end ? at : -1;
    }

    /// Past an element's value; a sequence's items are parsed (DCMTK parses them and checks their lengths).
    /// An undefined length other than a sequence's (UN holds implicit VR inside) is left to DCMTK.
    qint64 skipValue(const Element &e, int depth) const
    {
        const bool sequence = e.vr[0] == 'S' && e.vr[1] == 'Q';
        if (e.length == kUndefined)
            return sequence ? skipContents(e.valueAt, -1, true, depth) : -1;
        const qint64 end = endOf(e);
        if (end < 0 || !sequence || e.length == 0)
            return end;
        return skipContents(e.valueAt, end, true, depth);
    }

    const uchar *bytes() const { return m_p; }

private:
    const uchar *m_p;
    qint64 m_size;
};

/// The value as DCMTK's getString gives it: up to the first NUL, Latin-1 (or UTF-8 for ISO_IR 192), trimmed.
/// False for more than one value (DCMTK normalises each), and for a UID that is not only digits and dots before
/// its padding (DCMTK drops spaces inside one) — left to DCMTK.
bool textOf(const Scanner &s, const Element &e, QString *out, bool uid = false, bool utf8 = false)
{
    const char *v = reinterpret_cast<const char *>(s.bytes() + e.valueAt);
    qint64 n = qint64(e.length);
    if (const void *nul = std::memchr(v, 0, size_t(n)))
        n = static_cast<const char *>(nul) - v;
    if (std::memchr(v, '\\', size_t(n)) || std::memchr(v, 0x1B, size_t(n)))
        return false;  // several values, or an escape the text decoder replaces: DCMTK's (and the decoder's) to read
    if (uid) {
        qint64 end = n;
        while (end > 0 && v[end - 1] == ' ')
            --end;
        for (qint64 i = 0; i < end; ++i)
            if (!((v[i] >= '0' && v[i] <= '9') || v[i] == '.'))
                return false;
    }
    *out = (utf8 ? QString::fromUtf8(v, n) : QString::fromLatin1(v, n)).trimmed();
    return true;
}

/// An Integer String as DCMTK's getInt gives it, when it is plainly one: an optional sign and up to 9 digits
/// (0 when empty). False for anything else — left to DCMTK.
bool integerOf(const Scanner &s, const Element &e, int *out)
{
    QString text;
    if (!textOf(s, e, &text))
        return false;
    if (text.isEmpty()) {
        *out = 0;
        return true;
    }
    const int digitsFrom = text.front() == QLatin1Char('+') || text.front() == QLatin1Char('-') ? 1 : 0;
    const qsizetype digits = text.size() - digitsFrom;
    if (digits < 1 || digits > 9)
        return false;
    for (qsizetype i = digitsFrom; i < text.size(); ++i)
        if (text[i] < QLatin1Char('0') || text[i] > QLatin1Char('9'))
            return false;
    *out = text.toInt();
    return true;
}

/// A Decimal String of exactly `count` plain decimal numbers ("-0.5\\1e-3"), written as formatDecimals()
/// writes them. False for anything else — left to DCMTK.
bool decimalsOf(const Scanner &s, const Element &e, int count, QString *out)
{
    if (e.vr[0] != 'D' || e.vr[1] != 'S')
        return false;
    QByteArray raw(reinterpret_cast<const char *>(s.bytes() + e.valueAt), qsizetype(e.length));
    if (const qsizetype nul = raw.indexOf('\0'); nul >= 0)
        raw.truncate(nul);
    if (raw.trimmed().isEmpty()) {
        out->clear();
        return true;
    }
    const QList<QByteArray> parts = raw.split('\\');
    if (parts.size() != count)
        return false;
    std::vector<double> values;
    for (const QByteArray &p : parts) {
        const QByteArray t = p.trimmed();
        // Digits with an optional sign, point and exponent; nothing DCMTK might read another way.
        int i = 0, digits = 0;
        if (i < t.size() && (t[i] == '+' || t[i] == '-'))
            ++i;
        for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i)
            ++digits;
        if (i < t.size() && t[i] == '.')
            for (++i; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i)
                ++digits;
        if (digits == 0 || digits > 16)
            return false;
        if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
            ++i;
            if (i < t.size() && (t[i] == '+' || t[i] == '-'))
                ++i;
            int exponentDigits = 0;
            for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i)
                ++exponentDigits;
            if (exponentDigits == 0 || exponentDigits > 2)
                return false;
        }
        if (i != t.size())
            return false;
        bool ok = false;
        values.push_back(t.toDouble(&ok));
        if (!ok)
            return false;
    }
    *out = DicomIdentity::formatDecimals(values);
    return true;
}

} // namespace

std::optional<DicomIdentity> scanDicomIdentity(const char *data, qint64 size)
{
    if (!data || size < 132 + 12 || std::memcmp(data + 128, "DICM", 4) != 0)
        return std::nullopt;
    const Scanner s(reinterpret_cast<const uchar *>(data), size);

    // File meta information: explicit VR little endian, group 0002, its length given by its first element.
    Element e;
    qint64 at = 132;
    if (!s.header(at, e) || e.tag != 0x00020000u || e.vr[0] != 'U' || e.vr[1] != 'L' || e.length != 4 || s.endOf(e) < 0)
        return std::nullopt;  // (a group length in another VR is an error to DCMTK)
    const qint64 metaEnd = s.endOf(e) + qint64(le32(s.bytes() + e.valueAt));
    at = s.endOf(e);
    QString transferSyntax;
    while (at < metaEnd) {
        if (!s.header(at, e) || (e.tag >> 16) != 0x0002 || e.length == kUndefined || s.endOf(e) < 0)
            return std::nullopt;
        if (e.tag == 0x00020010u && (e.vr[0] != 'U' || e.vr[1] != 'I' || !textOf(s, e, &transferSyntax)))
            return std::nullopt;
        at = s.endOf(e);
    }
    if (at != metaEnd || (s.header(at, e) && (e.tag >> 16) == 0x0002))
        return std::nullopt;  // a group length that does not add up: DCMTK's rules decide

    // Explicit VR little endian only. In implicit VR whether an element is a sequence (whose items DCMTK parses
    // and checks) is in the data dictionary, which this reader does without; big endian, deflated and anything
    // unusual are DCMTK's too.
    if (transferSyntax != QLatin1String("1.2.840.10008.1.2.1") && !transferSyntax.startsWith(QLatin1String("1.2.840.10008.1.2.4."))
        && transferSyntax != QLatin1String("1.2.840.10008.1.2.5"))
        return std::nullopt;

    DicomIdentity id;
    bool utf8 = false;  // Specific Character Set ISO_IR 192
    quint32 previous = 0;
    while (at < size) {
        if (!s.header(at, e) || (e.tag >> 16) == 0xFFFE || e.tag <= previous)
            return std::nullopt;  // out of order, a stray item, or cut short: DCMTK's rules decide
        previous = e.tag;
        if (e.tag == kPixelData)
            break;  // where DCMTK's header-only read stops
        if (e.tag == 0x00080005u) {
            // Specific Character Set: ASCII, Latin-1 and UTF-8 are read here; any other (ISO 2022 escapes,
            // Cyrillic, Greek, Japanese, Chinese…) is converted by DCMTK.
            QString charset;
            if (e.length == kUndefined || s.endOf(e) < 0 || !isStringVr(e.vr) || !textOf(s, e, &charset))
                return std::nullopt;
            if (charset == QLatin1String("ISO_IR 192"))
                utf8 = true;
            else if (!charset.isEmpty() && charset != QLatin1String("ISO_IR 100") && charset != QLatin1String("ISO_IR 6"))
                return std::nullopt;
        }
        QString *text = nullptr;
        int *number = nullptr;
        switch (e.tag) {
        case 0x00080016u: text = &id.sopClassUid; break;
        case 0x00080018u: text = &id.sopInstanceUid; break;
        case 0x00080020u: text = &id.studyDate; break;
        case 0x00080030u: text = &id.studyTime; break;
        case 0x00080050u: text = &id.accessionNumber; break;
        case 0x00080060u: text = &id.modality; break;
        case 0x00081030u: text = &id.studyDescription; break;
        case 0x0008103Eu: text = &id.seriesDescription; break;
        case 0x00100010u: text = &id.patientName; break;
        case 0x00100020u: text = &id.patientId; break;
        case 0x00100021u: text = &id.issuerOfPatientId; break;
        case 0x00100030u: text = &id.patientBirthDate; break;
        case 0x00100040u: text = &id.patientSex; break;
        case 0x00180015u: text = &id.bodyPartExamined; break;
        case 0x00185101u: text = &id.viewPosition; break;
        case 0x0020000Du: text = &id.studyInstanceUid; break;
        case 0x0020000Eu: text = &id.seriesInstanceUid; break;
        case 0x00200052u: text = &id.frameOfReferenceUid; break;
        case 0x00200011u: number = &id.seriesNumber; break;
        case 0x00200013u: number = &id.instanceNumber; break;
        default: break;
        }
        if (e.tag == 0x00180050u || e.tag == 0x00200032u || e.tag == 0x00200037u) {
            if (e.length == kUndefined || s.endOf(e) < 0)
                return std::nullopt;
            const int count = e.tag == 0x00180050u ? 1 : e.tag == 0x00200032u ? 3 : 6;
            QString *into = e.tag == 0x00180050u ? &id.sliceThickness : e.tag == 0x00200032u ? &id.imagePosition : &id.imageOrientation;
            if (!decimalsOf(s, e, count, into))
                return std::nullopt;
        }
        if (text || number) {
            if (e.length == kUndefined || s.endOf(e) < 0)
                return std::nullopt;
            if (!(number ? e.vr[0] == 'I' && e.vr[1] == 'S' : isStringVr(e.vr)))
                return std::nullopt;  // a wanted element in a VR DCMTK would not hand over as text
            const bool uid = e.tag == 0x00080016u || e.tag == 0x00080018u || e.tag == 0x0020000Du || e.tag == 0x0020000Eu || e.tag == 0x00200052u;
            // Only the names, identifiers and descriptions are read in the character set (readIdentity hands them
            // to the text decoder); dates, times, codes and UIDs as DCMTK's path reads them, byte for byte.
            const bool inCharset = e.tag == 0x00100010u || e.tag == 0x00100020u || e.tag == 0x00100021u || e.tag == 0x00081030u
                || e.tag == 0x00080050u || e.tag == 0x0008103Eu;
            if (text ? !textOf(s, e, text, uid, utf8 && inCharset) : !integerOf(s, e, number))
                return std::nullopt;
        }
        at = s.skipValue(e, 0);
        if (at < 0)
            return std::nullopt;
    }
    return id;
}

} // namespace spectrum
