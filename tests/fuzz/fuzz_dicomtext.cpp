// SPDX-License-Identifier: Apache-2.0
// Text in any Specific Character Set, on any bytes: the first line is the character set as written, the rest a
// value. Decoded as a person name and as plain text, it never crashes, never leaves an escape character in the
// text (what cannot be read is U+FFFD), and says why whenever it had to replace something.
#include "fuzztarget.h"

#include "spectrum/core/dicomtext.h"

#include <QByteArray>

#include <cstdlib>

SPECTRUM_FUZZ_TARGET(dicomtext)
{
    using namespace spectrum;
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    const qsizetype newline = bytes.indexOf('\n');
    const QByteArray charset = newline < 0 ? QByteArray() : bytes.left(newline);
    const QByteArray value = newline < 0 ? bytes : bytes.mid(newline + 1);
    for (bool personName : {true, false}) {
        const DicomTextDecoder decoder(charset);
        const QString text = decoder.decode(value, personName);
        if (text.contains(QChar(0x1B)))
            std::abort();  // an escape sequence shown as text
        if (text.contains(QChar(QChar::ReplacementCharacter)) && !value.contains(char(0xEF)) && decoder.problem().isEmpty()
            && decoder.characterSet() != "ISO_IR 192")
            std::abort();  // something replaced without a reason
    }
    return 0;
}
