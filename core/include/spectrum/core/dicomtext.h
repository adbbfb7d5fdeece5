// SPDX-License-Identifier: Apache-2.0
#pragma once
// Text values of DICOM data as Unicode, honouring Specific Character Set (0008,0005): a Cyrillic name in
// ISO_IR 144, a Japanese one in ISO 2022 IR 87 with its escape sequences, Chinese in GB18030 — as a reader should
// see them, in the study list, the tab, the overlay and searches. Escape sequences of the code extensions are
// followed here and each set's bytes decoded by the C library's iconv (DCMTK 3.6.7 over iconv refuses ISO 2022
// IR 87, the Japanese kanji set).
//
// No Specific Character Set means ASCII by the standard; files that carry Latin-1 bytes without saying so are
// common, so they read as Latin-1. A value that cannot be converted (an unknown character set, an illegal byte
// sequence) is never shown as mojibake: its ASCII characters stay, everything else becomes U+FFFD, and problem()
// says why.

#include <QByteArray>
#include <QString>

#include <memory>

namespace spectrum {

class DicomTextDecoder
{
public:
    /// `specificCharacterSet`: the element's value as written, e.g. "ISO_IR 144" or "\ISO 2022 IR 87" (empty: none).
    explicit DicomTextDecoder(const QByteArray &specificCharacterSet = QByteArray());
    ~DicomTextDecoder();
    DicomTextDecoder(DicomTextDecoder &&) noexcept;
    DicomTextDecoder &operator=(DicomTextDecoder &&) noexcept;

    /// What a value is: a string of values (05/12 separates them whatever the set), person names (whose component
    /// groups (=) and components (^) may each switch character set under ISO 2022), or one free text (ST, LT, UT:
    /// 05/12 is a character, in JIS X 0201 a yen sign).
    enum class TextKind { Values, PersonNames, FreeText };

    /// One value (or several, separated by backslashes) as Unicode, trimmed of DICOM padding. `personName`:
    /// a PN value, whose component groups (=) and components (^) may each switch character set (ISO 2022).
    QString decode(const QByteArray &raw, bool personName = false) const;
    /// Every character of `raw` (up to a NUL) as it is, nothing trimmed: for re-encoding a value, whose padding
    /// DCMTK has taken off already.
    QString decodeExact(const QByteArray &raw, TextKind kind) const;
    /// `text` as bytes of this character set, when it holds every character of it (single-byte sets, GB18030,
    /// GBK, UTF-8; not the ISO 2022 code extensions), they read back as exactly `text`, and — for values — no
    /// byte 05/12 lies inside a character (GB18030 has such characters; readers split values on the byte): true,
    /// else false.
    bool encode(const QString &text, TextKind kind, QByteArray *bytes) const;
    /// Why a value could not be converted (the first problem met), or empty.
    QString problem() const;
    /// The character set as written.
    QByteArray characterSet() const { return m_characterSet; }

    /// The bytes to write `text` as, with the Specific Character Set to declare: ASCII text needs none (empty),
    /// Latin-1 text "ISO_IR 100", anything else "ISO_IR 192" (UTF-8).
    static QByteArray characterSetFor(const QString &text);

private:
    QString decodeUnchecked(const QByteArray &raw, TextKind kind) const;

    enum class Kind { Latin1, Utf8, Converted, Unsupported };
    Kind m_kind = Kind::Latin1;
    QByteArray m_characterSet;
    struct Converter;
    std::unique_ptr<Converter> m_converter;
    mutable QString m_problem;
};

} // namespace spectrum
