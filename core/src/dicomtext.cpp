// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/dicomtext.h"

#include <QHash>
#include <QList>

#include <iconv.h>

#include <algorithm>
#include <cstring>

// Specific Character Set (PS3.3 C.12.1.1.2, PS3.5 6.1): single-byte sets without code extensions are decoded
// whole; with code extensions ("ISO 2022 IR …"), escape sequences switch the sets designated to G0 (bytes below
// 0x80) and G1 (bytes from 0x80), and each value — and each delimiter-separated component — starts again with the
// sets the first value of Specific Character Set designates (PS3.5 6.1.2.5.3). The C library's iconv decodes the
// bytes of each set (ISO 8859-x, EUC-JP for JIS X 0208/0212, EUC-KR, GB2312, GB18030, TIS-620).

namespace spectrum {

namespace {

/// What a code element holds. Two-byte sets in G0 (JIS X 0208/0212) take byte pairs 0x21–0x7E; in G1 (KS X 1001,
/// GB2312) pairs from 0xA1.
enum class Set { None, Ascii, Romaji, Katakana, Jis0208, Jis0212, Upper /* an ISO 8859 or TIS-620 upper half */, Ksx1001, Gb2312 };

struct Designation
{
    Set g0 = Set::Ascii;
    Set g1 = Set::None;
    QByteArray upperCodec;  ///< iconv's name for the set in G1 when it is Set::Upper
};

struct Term
{
    const char *defined;     ///< the defined term without "ISO_IR " / "ISO 2022 IR " (e.g. "144")
    const char *codec;       ///< iconv's name of the whole single-byte set, when it is one
    Set g0, g1;
};

// PS3.3 Tables C.12-2 and C.12-3/4.
const Term kTerms[] = {
    {"6", "ASCII", Set::Ascii, Set::None},
    {"100", "ISO-8859-1", Set::Ascii, Set::Upper},
    {"101", "ISO-8859-2", Set::Ascii, Set::Upper},
    {"109", "ISO-8859-3", Set::Ascii, Set::Upper},
    {"110", "ISO-8859-4", Set::Ascii, Set::Upper},
    {"144", "ISO-8859-5", Set::Ascii, Set::Upper},
    {"127", "ISO-8859-6", Set::Ascii, Set::Upper},
    {"126", "ISO-8859-7", Set::Ascii, Set::Upper},
    {"138", "ISO-8859-8", Set::Ascii, Set::Upper},
    {"148", "ISO-8859-9", Set::Ascii, Set::Upper},
    {"203", "ISO-8859-15", Set::Ascii, Set::Upper},
    {"166", "TIS-620", Set::Ascii, Set::Upper},
    {"13", nullptr, Set::Romaji, Set::Katakana},
    {"87", nullptr, Set::Jis0208, Set::None},
    {"159", nullptr, Set::Jis0212, Set::None},
    {"149", nullptr, Set::Ascii, Set::Ksx1001},
    {"58", nullptr, Set::Ascii, Set::Gb2312},
};

const Term *termOf(const QByteArray &number)
{
    for (const Term &t : kTerms) {
        if (number == t.defined)
            return &t;
    }
    return nullptr;
}

/// `bytes` from one encoding to another through iconv; false when iconv cannot convert them all.
bool iconvConvert(const char *to, const char *from, const QByteArray &bytes, QByteArray *out)
{
    iconv_t cd = iconv_open(to, from);
    if (cd == iconv_t(-1))
        return false;
    QByteArray converted(bytes.size() * 4 + 16, Qt::Uninitialized);
    char *in = const_cast<char *>(bytes.constData());
    size_t inLeft = size_t(bytes.size());
    char *at = converted.data();
    size_t left = size_t(converted.size());
    const size_t done = iconv(cd, &in, &inLeft, &at, &left);
    const bool ok = done != size_t(-1) && inLeft == 0 && iconv(cd, nullptr, nullptr, &at, &left) != size_t(-1);
    iconv_close(cd);
    if (!ok)
        return false;
    converted.truncate(converted.size() - qsizetype(left));
    *out = converted;
    return true;
}

/// Bytes in `codec` as Unicode, appended to `out`; false when iconv cannot convert them.
bool iconvDecode(const char *codec, const QByteArray &bytes, QString *out)
{
    QByteArray utf8;
    if (!iconvConvert("UTF-8", codec, bytes, &utf8))
        return false;
    *out += QString::fromUtf8(utf8);
    return true;
}

/// Unicode as bytes in `codec`; false when some character has none there.
bool iconvEncode(const char *codec, const QString &text, QByteArray *out)
{
    return iconvConvert(codec, "UTF-8", text.toUtf8(), out);
}

/// The escape sequence at `p` (after ESC): its length and what it designates; 0 when unknown.
int escape(const uchar *p, qsizetype left, Designation &d)
{
    auto is = [&](const char *seq) {
        const qsizetype n = qsizetype(std::strlen(seq));
        return left >= n && std::memcmp(p, seq, size_t(n)) == 0 ? int(n) : 0;
    };
    if (int n = is("(B"))
        return d.g0 = Set::Ascii, n;
    if (int n = is("(J"))
        return d.g0 = Set::Romaji, n;
    if (int n = is(")I"))
        return d.g1 = Set::Katakana, n;
    if (int n = is("$B"))
        return d.g0 = Set::Jis0208, n;
    if (int n = is("$(D"))
        return d.g0 = Set::Jis0212, n;
    if (int n = is("$)C"))
        return d.g1 = Set::Ksx1001, n;
    if (int n = is("$)A"))
        return d.g1 = Set::Gb2312, n;
    static const struct { const char *seq; const char *codec; } uppers[] = {
        {"-A", "ISO-8859-1"}, {"-B", "ISO-8859-2"}, {"-C", "ISO-8859-3"}, {"-D", "ISO-8859-4"}, {"-L", "ISO-8859-5"},
        {"-G", "ISO-8859-6"}, {"-F", "ISO-8859-7"}, {"-H", "ISO-8859-8"}, {"-M", "ISO-8859-9"}, {"-b", "ISO-8859-15"},
        {"-T", "TIS-620"},
    };
    for (const auto &u : uppers) {
        if (int n = is(u.seq)) {
            d.g1 = Set::Upper;
            d.upperCodec = u.codec;
            return n;
        }
    }
    return 0;
}

/// ASCII kept, everything else U+FFFD: what a value that cannot be converted shows instead of guesses.
QString asciiOnly(const QByteArray &raw)
{
    QString out;
    out.reserve(raw.size());
    for (char c : raw)
        out += (uchar(c) < 0x80 && c != 0x1B) ? QChar(QLatin1Char(c)) : QChar(QChar::ReplacementCharacter);
    return out;
}
/// A byte below 0x80 in JIS X 0201 Romaji (ISO_IR 13), which draws 05/12 as a yen sign and 07/14 as an overline.
/// But 05/12 separates values in every DICOM character set: in values both read as ASCII, as a value in ASCII alone
/// does, so values stay apart and a name reads the same whichever bytes carried it; in free text (ST, LT, UT),
/// which has no values to separate, they are the characters the set defines.
QChar romaji(uchar b, bool freeText)
{
    if (freeText && b == 0x5C)
        return QChar(0x00A5);
    if (freeText && b == 0x7E)
        return QChar(0x203E);
    return QChar(QLatin1Char(char(b)));
}
} // namespace

struct DicomTextDecoder::Converter
{
    QByteArray wholeCodec;   ///< a set without code extensions, decoded whole by iconv ("" when ISO 2022)
    bool jisX0201 = false;   ///< ISO_IR 13 without extensions: Romaji below 0x80, Katakana above
    Designation initial;

    /// A value with code extensions. False (with `why`) on a byte or escape it cannot place.
    bool decode2022(const QByteArray &bytes, const QString &delimiters, bool freeText, QString *out, QString *why) const
    {
        const auto *p = reinterpret_cast<const uchar *>(bytes.constData());
        const qsizetype n = bytes.size();
        Designation d = initial;
        bool ok = true;
        auto fail = [&](const QString &reason) {
            if (ok)
                *why = reason;
            ok = false;
            *out += QChar(QChar::ReplacementCharacter);
        };
        for (qsizetype i = 0; i < n;) {
            const uchar b = p[i];
            if (b == 0x1B) {
                const int length = escape(p + i + 1, n - i - 1, d);
                if (length == 0) {
                    fail(QStringLiteral("an unknown escape sequence"));
                    ++i;
                } else {
                    i += 1 + length;
                }
                continue;
            }
            if (b < 0x80) {
                if (d.g0 == Set::Jis0208 || d.g0 == Set::Jis0212) {
                    if (i + 1 >= n || p[i + 1] < 0x21 || p[i + 1] > 0x7E || b < 0x21 || b > 0x7E) {
                        fail(QStringLiteral("a broken two-byte character"));
                        ++i;
                        continue;
                    }
                    QByteArray euc;
                    if (d.g0 == Set::Jis0212)
                        euc += char(0x8F);
                    euc += char(b | 0x80);
                    euc += char(p[i + 1] | 0x80);
                    if (!iconvDecode("EUC-JP", euc, out))
                        fail(QStringLiteral("a character outside JIS X 0208/0212"));
                    i += 2;
                    continue;
                }
                *out += d.g0 == Set::Romaji ? romaji(b, freeText) : QChar(QLatin1Char(char(b)));
                ++i;
                if (delimiters.contains(QLatin1Char(char(b))) || b == '\r' || b == '\n' || b == '\t' || b == '\f')
                    d = initial;  // each value and component starts with the initial sets again
                continue;
            }
            switch (d.g1) {
            case Set::Upper:
                if (!iconvDecode(d.upperCodec.constData(), QByteArray(1, char(b)), out))
                    fail(QStringLiteral("a byte outside %1").arg(QString::fromLatin1(d.upperCodec)));
                ++i;
                break;
            case Set::Katakana:
                if (b >= 0xA1 && b <= 0xDF)
                    *out += QChar(char16_t(0xFF61 + (b - 0xA1)));
                else
                    fail(QStringLiteral("a byte outside JIS X 0201"));
                ++i;
                break;
            case Set::Ksx1001:
            case Set::Gb2312:
                if (i + 1 >= n || p[i + 1] < 0xA1) {
                    fail(QStringLiteral("a broken two-byte character"));
                    ++i;
                    break;
                }
                if (!iconvDecode(d.g1 == Set::Ksx1001 ? "EUC-KR" : "GB2312", bytes.mid(i, 2), out))
                    fail(QStringLiteral("a character outside %1").arg(d.g1 == Set::Ksx1001 ? QStringLiteral("KS X 1001") : QStringLiteral("GB2312")));
                i += 2;
                break;
            default:
                fail(QStringLiteral("a byte from 0x80 with no character set designated for it"));
                ++i;
                break;
            }
        }
        return ok;
    }
};

DicomTextDecoder::DicomTextDecoder(const QByteArray &specificCharacterSet) : m_characterSet(specificCharacterSet.trimmed())
{
    const QList<QByteArray> values = m_characterSet.split('\\');
    const QByteArray first = values.first().trimmed();
    if (values.size() == 1 && (first.isEmpty() || first == "ISO_IR 6" || first == "ISO_IR 100")) {
        m_kind = Kind::Latin1;  // (no Specific Character Set: ASCII by the standard, Latin-1 in practice)
        return;
    }
    if (values.size() == 1 && first == "ISO_IR 192") {
        m_kind = Kind::Utf8;
        return;
    }
    auto unsupported = [this](const QByteArray &term) {
        m_kind = Kind::Unsupported;
        m_problem = QStringLiteral("the character set '%1' is not one DICOM defines").arg(QString::fromLatin1(term));
        m_converter.reset();
    };
    m_converter = std::make_unique<Converter>();
    m_kind = Kind::Converted;
    if (values.size() == 1 && (first == "GB18030" || first == "GBK")) {
        m_converter->wholeCodec = first;
        return;
    }
    if (values.size() == 1 && first.startsWith("ISO_IR ")) {
        const Term *t = termOf(first.mid(7));
        if (!t) {
            unsupported(first);
            return;
        }
        if (t->codec)
            m_converter->wholeCodec = t->codec;
        else if (first == "ISO_IR 13")
            m_converter->jisX0201 = true;
        else
            unsupported(first);
        return;
    }
    // Code extensions: the first value designates the initial sets (empty: ASCII); every value must be a term.
    for (qsizetype i = 0; i < values.size(); ++i) {
        const QByteArray v = values[i].trimmed();
        if (i == 0 && v.isEmpty())
            continue;
        const Term *t = v.startsWith("ISO 2022 IR ") ? termOf(v.mid(12)) : nullptr;
        if (!t) {
            unsupported(v);
            return;
        }
        if (i == 0) {
            m_converter->initial.g0 = t->g0;
            m_converter->initial.g1 = t->g1;
            if (t->g1 == Set::Upper)
                m_converter->initial.upperCodec = t->codec;
        }
    }
}

DicomTextDecoder::~DicomTextDecoder() = default;
DicomTextDecoder::DicomTextDecoder(DicomTextDecoder &&) noexcept = default;
DicomTextDecoder &DicomTextDecoder::operator=(DicomTextDecoder &&) noexcept = default;

QString DicomTextDecoder::decode(const QByteArray &raw, bool personName) const
{
    return decodeExact(raw, personName ? TextKind::PersonNames : TextKind::Values).trimmed();
}

QString DicomTextDecoder::decodeExact(const QByteArray &raw, TextKind kind) const
{
    QString text = decodeUnchecked(raw, kind);
    // An escape the character set does not define (in a set without code extensions, or one left over) is never
    // shown as if it were text.
    if (text.contains(QChar(0x1B))) {
        text.replace(QChar(0x1B), QChar(QChar::ReplacementCharacter));
        if (m_problem.isEmpty())
            m_problem = QStringLiteral("a value in '%1' holds an escape sequence it does not define").arg(QString::fromLatin1(m_characterSet));
    }
    return text;
}

QString DicomTextDecoder::decodeUnchecked(const QByteArray &raw, TextKind kind) const
{
    QByteArray bytes = raw;
    if (const qsizetype nul = bytes.indexOf('\0'); nul >= 0)
        bytes.truncate(nul);
    bool ascii = true;
    for (char c : bytes) {
        if (uchar(c) >= 0x80 || c == 0x1B) {
            ascii = false;
            break;
        }
    }
    const bool freeText = kind == TextKind::FreeText;
    const bool romajiFirst = m_converter && (m_converter->jisX0201 || m_converter->initial.g0 == Set::Romaji);
    if (ascii && !(m_converter && (m_converter->initial.g0 == Set::Jis0208 || m_converter->initial.g0 == Set::Jis0212)) && !(freeText && romajiFirst))
        return QString::fromLatin1(bytes);  // the same in every character set that starts in ASCII
    switch (m_kind) {
    case Kind::Latin1:
        return QString::fromLatin1(bytes);
    case Kind::Utf8:
        return QString::fromUtf8(bytes);
    case Kind::Unsupported:
        return asciiOnly(bytes);
    case Kind::Converted:
        break;
    }
    QString out;
    QString why;
    bool ok = true;
    if (!m_converter->wholeCodec.isEmpty()) {
        ok = iconvDecode(m_converter->wholeCodec.constData(), bytes, &out);
        if (!ok)
            why = QStringLiteral("bytes outside %1").arg(QString::fromLatin1(m_converter->wholeCodec));
    } else if (m_converter->jisX0201) {
        for (char c : bytes) {
            const uchar b = uchar(c);
            if (b < 0x80)
                out += romaji(b, freeText);
            else if (b >= 0xA1 && b <= 0xDF)
                out += QChar(char16_t(0xFF61 + (b - 0xA1)));
            else {
                out += QChar(QChar::ReplacementCharacter);
                ok = false;
                why = QStringLiteral("a byte outside JIS X 0201");
            }
        }
    } else {
        ok = m_converter->decode2022(bytes, kind == TextKind::PersonNames ? QStringLiteral("\\^=") : freeText ? QString() : QStringLiteral("\\"), freeText,
                                     &out, &why);
    }
    if (!ok) {
        if (m_problem.isEmpty())
            m_problem = QStringLiteral("a value in '%1' could not be read whole (%2)").arg(QString::fromLatin1(m_characterSet), why);
        if (!m_converter->wholeCodec.isEmpty())
            return asciiOnly(bytes);  // nothing half-converted from a whole-value set
    }
    return out;
}

bool DicomTextDecoder::encode(const QString &text, TextKind kind, QByteArray *bytes) const
{
    QByteArray out;
    bool ok = false;
    switch (m_kind) {
    case Kind::Latin1:
        ok = std::all_of(text.begin(), text.end(), [](QChar c) { return c.unicode() < 0x100; });
        out = text.toLatin1();
        break;
    case Kind::Utf8:
        ok = true;
        out = text.toUtf8();
        break;
    case Kind::Converted:
        ok = !m_converter->wholeCodec.isEmpty() && iconvEncode(m_converter->wholeCodec.constData(), text, &out);
        break;
    case Kind::Unsupported:
        break;
    }
    // Only bytes that read back as the very text: no set whose conversion would lose or change a character, no
    // escape or NUL a value cannot hold, and in values no 05/12 byte but the backslashes the text has.
    if (!ok || out.contains('\0') || out.contains('\x1b'))
        return false;
    if (kind != TextKind::FreeText && out.count('\\') != text.count(QLatin1Char('\\')))
        return false;
    const DicomTextDecoder check(m_characterSet);
    if (check.decodeExact(out, kind) != text || !check.problem().isEmpty())
        return false;
    *bytes = out;
    return true;
}

QString DicomTextDecoder::problem() const
{
    return m_problem;
}

QByteArray DicomTextDecoder::characterSetFor(const QString &text)
{
    bool latin1 = true, ascii = true;
    for (QChar c : text) {
        if (c.unicode() >= 0x80)
            ascii = false;
        if (c.unicode() >= 0x100)
            latin1 = false;
    }
    return ascii ? QByteArray() : latin1 ? QByteArrayLiteral("ISO_IR 100") : QByteArrayLiteral("ISO_IR 192");
}

} // namespace spectrum
