// SPDX-License-Identifier: Apache-2.0
// Names in other alphabets, byte for byte as the standard's own examples write them (PS3.5 Annexes H, I, J) and
// as single-byte sets hold them: decoded to what a reader must see, never to mojibake; what cannot be read shows
// as U+FFFD with a reason. DicomIdentity shows a name's alphabetic and ideographic groups together.

#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/dicomtext.h"

#include <QTest>

using namespace spectrum;

namespace {
QByteArray hex(const char *h)
{
    return QByteArray::fromHex(h);
}
} // namespace

class tst_DicomText : public QObject
{
    Q_OBJECT
    /// The row's bytes, read as a person name in its character set, are its text, with no problem reported.
    void decodesAsTheStandardSays()
    {
        QFETCH(QByteArray, charset);
        QFETCH(QByteArray, bytes);
        QFETCH(QString, text);
        const DicomTextDecoder decoder(charset);
        QCOMPARE(decoder.decode(bytes, true), text);
        QVERIFY2(decoder.problem().isEmpty(), qPrintable(decoder.problem()));
    }

private Q_SLOTS:
    void singleByteSets_data()
    {
        QTest::addColumn<QByteArray>("charset");
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("text");
        QTest::newRow("none: ASCII") << QByteArray() << QByteArray("DOE^JOHN  ") << QStringLiteral("DOE^JOHN");
        QTest::newRow("none, Latin-1 bytes anyway") << QByteArray() << hex("4dfc6c6c6572") << QStringLiteral("Müller");
        QTest::newRow("ISO_IR 100") << QByteArray("ISO_IR 100") << hex("4dfc6c6c6572") << QStringLiteral("Müller");
        // Cyrillic in ISO 8859-5: read as Latin-1, these bytes made the "»îÚæÕÝÑÕàÓ" a reader was shown.
        QTest::newRow("ISO_IR 144") << QByteArray("ISO_IR 144") << hex("bbeedae6d5ddd1d5e0d35eb8d2d0dd") << QStringLiteral("Люкценберг^Иван");
        QTest::newRow("ISO_IR 126") << QByteArray("ISO_IR 126") << hex("c4e9efedf5f3e9eff2") << QStringLiteral("Διονυσιος");
        QTest::newRow("ISO_IR 192") << QByteArray("ISO_IR 192") << QStringLiteral("Gößl^Zoë").toUtf8() << QStringLiteral("Gößl^Zoë");
        QTest::newRow("GB18030 (PS3.5 J.3)") << QByteArray("GB18030") << hex("57616e675e5869616f446f6e673dcdf55ed0a1b6ab3d")
                                             << QStringLiteral("Wang^XiaoDong=王^小东=");
        QTest::newRow("ISO_IR 13 (half-width katakana)") << QByteArray("ISO_IR 13") << hex("d4cfc0de5ec0dbb3") << QStringLiteral("ﾔﾏﾀﾞ^ﾀﾛｳ");
        // 05/12 separates values in every set (JIS X 0201 would draw a yen sign): two values stay two, as in ASCII.
        QTest::newRow("ISO_IR 13, two values") << QByteArray("ISO_IR 13") << hex("d4cfc0de5cc0dbb37e") << QStringLiteral("ﾔﾏﾀﾞ\\ﾀﾛｳ~");
    }
    void singleByteSets() { decodesAsTheStandardSays(); }

    void codeExtensions_data()
    {
        QTest::addColumn<QByteArray>("charset");
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("text");
        // PS3.5 H.3.1: ISO 2022 IR 87, each ideographic and phonetic component escaped into JIS X 0208 and back.
        QTest::newRow("H.3.1 Japanese") << QByteArray("\\ISO 2022 IR 87")
                                        << hex("59616d6164615e5461726f75" "3d1b24423b3345441b2842" "5e1b244242404f3a1b2842" "3d1b24422464245e24401b2842"
                                               "5e1b2442243f246d24261b2842")
                                        << QStringLiteral("Yamada^Tarou=山田^太郎=やまだ^たろう");
        // PS3.5 H.3.2: half-width katakana in G1 (ISO 2022 IR 13) as the initial set, kanji escaped in.
        QTest::newRow("H.3.2 Japanese") << QByteArray("ISO 2022 IR 13\\ISO 2022 IR 87")
                                        << hex("d4cfc0de5ec0dbb33d1b24423b3345441b284a5e1b244242404f3a1b284a3d1b2442246424" "5e24401b284a5e1b2442243f246d24261b284a")
                                        << QStringLiteral("ﾔﾏﾀﾞ^ﾀﾛｳ=山田^太郎=やまだ^たろう");
        // Two values, the kanji set left before the delimiter as the standard asks: the delimiter is a backslash.
        QTest::newRow("ISO 2022 IR 13, two values") << QByteArray("ISO 2022 IR 13\\ISO 2022 IR 87")
                                                    << hex("1b24423b3345441b284a5c1b244242404f3a1b284a") << QStringLiteral("山田\\太郎");
        // PS3.5 I.2: Korean, KS X 1001 designated to G1 in each component.
        QTest::newRow("I.2 Korean") << QByteArray("\\ISO 2022 IR 149")
                                    << hex("486f6e675e47696c646f6e673d1b242943fbf35e1b242943d1ced4d73d1b242943c8ab5e1b242943b1e6b5bf")
                                    << QStringLiteral("Hong^Gildong=洪^吉洞=홍^길동");
        // GB2312 in G1 (ISO 2022 IR 58).
        QTest::newRow("ISO 2022 IR 58 Chinese") << QByteArray("\\ISO 2022 IR 58")
                                                << hex("5a68616e675e5869616f446f6e673d1b242941d5c55e1b242941d0a1b6ab3d")
                                                << QStringLiteral("Zhang^XiaoDong=张^小东=");
        // Cyrillic through code extensions: ESC - L designates ISO 8859-5 to G1.
        QTest::newRow("ISO 2022 IR 144") << QByteArray("\\ISO 2022 IR 144") << hex("1b2d4cbbeeda") << QStringLiteral("Люк");
    }
    void codeExtensions() { decodesAsTheStandardSays(); }

    void whatCannotBeReadIsNeverGuessed()
    {
        const DicomTextDecoder unknown("ISO_IR 999");
        QCOMPARE(unknown.decode(hex("414243e9"), true), QStringLiteral("ABC\uFFFD"));
        QVERIFY(unknown.problem().contains(QStringLiteral("ISO_IR 999")));

        const DicomTextDecoder gb("GB18030");
        QCOMPARE(gb.decode(hex("4142ff"), true), QStringLiteral("AB\uFFFD"));  // a lone lead byte
        QVERIFY(!gb.problem().isEmpty());

        const DicomTextDecoder japanese("\\ISO 2022 IR 87");
        const QString broken = japanese.decode(hex("41801b2442"), true);  // a high byte with nothing in G1
        QVERIFY2(broken.startsWith(QStringLiteral("A\uFFFD")), qPrintable(broken));
        QVERIFY(!japanese.problem().isEmpty());
    }

    void queriesAreWrittenInASetThatHoldsThem()
    {
        QCOMPARE(DicomTextDecoder::characterSetFor(QStringLiteral("DOE*")), QByteArray());
        QCOMPARE(DicomTextDecoder::characterSetFor(QStringLiteral("Müller*")), QByteArray("ISO_IR 100"));
        QCOMPARE(DicomTextDecoder::characterSetFor(QStringLiteral("山田*")), QByteArray("ISO_IR 192"));
    }

    void textIsWrittenInItsOwnSetOnlyWhenItReadsBackTheSame()
    {
        using Kind = DicomTextDecoder::TextKind;
        QByteArray bytes;
        const DicomTextDecoder cyrillic("ISO_IR 144");
        QVERIFY(cyrillic.encode(QStringLiteral("КТ головы"), Kind::Values, &bytes));
        QCOMPARE(bytes, hex("bac220d3dedbded2eb"));
        QVERIFY(!cyrillic.encode(QStringLiteral("КТ 胸部"), Kind::Values, &bytes));  // not in ISO 8859-5
        const DicomTextDecoder latin1("ISO_IR 100");
        QVERIFY(latin1.encode(QStringLiteral("Schädel"), Kind::Values, &bytes));
        QCOMPARE(bytes, hex("536368e464656c"));
        QVERIFY(!latin1.encode(QStringLiteral("Люк"), Kind::Values, &bytes));
        // GB18030 holds 誠, as D5 5C: a value split at the 5C by any reader. Not in a value; in free text, yes.
        const DicomTextDecoder gb("GB18030");
        QVERIFY(!gb.encode(QStringLiteral("誠"), Kind::Values, &bytes));
        QVERIFY(gb.encode(QStringLiteral("誠"), Kind::FreeText, &bytes));
        QCOMPARE(bytes, hex("d55c"));
        QVERIFY(gb.encode(QStringLiteral("王\\小东"), Kind::Values, &bytes));  // a backslash the text has is a delimiter
        // Sets with code extensions, and JIS X 0201, are not written here (UTF-8 is, elsewhere).
        QVERIFY(!DicomTextDecoder("ISO_IR 13").encode(QStringLiteral("ﾔﾏﾀﾞ"), Kind::Values, &bytes));
        QVERIFY(!DicomTextDecoder("\\ISO 2022 IR 87").encode(QStringLiteral("山田"), Kind::PersonNames, &bytes));
        QVERIFY(DicomTextDecoder("ISO_IR 192").encode(QStringLiteral("山田"), Kind::Values, &bytes));
        // Nothing trimmed in an exact decode: leading spaces and line breaks are text.
        QCOMPARE(cyrillic.decodeExact(hex("2020bac20d0abbee"), Kind::FreeText), QStringLiteral("  КТ\r\nЛю"));
        // JIS X 0201's 05/12: a delimiter in values, a yen sign in free text.
        const DicomTextDecoder romaji("ISO_IR 13");
        QCOMPARE(romaji.decodeExact(hex("b15cb2"), Kind::Values), QStringLiteral("ｱ\\ｲ"));
        QCOMPARE(romaji.decodeExact(hex("b15cb27e"), Kind::FreeText), QStringLiteral("ｱ¥ｲ‾"));
        QCOMPARE(romaji.decodeExact(QByteArray("100\\"), Kind::FreeText), QStringLiteral("100¥"));
    }

    void namesShowTheirGroups()
    {
        QCOMPARE(DicomIdentity::displayName(QStringLiteral("Yamada^Tarou=山田^太郎=やまだ^たろう")), QStringLiteral("Yamada, Tarou (山田 太郎)"));
        QCOMPARE(DicomIdentity::displayName(QStringLiteral("=山田^太郎")), QStringLiteral("山田 太郎"));
        QCOMPARE(DicomIdentity::displayName(QStringLiteral("Wang^XiaoDong=王^小东=")), QStringLiteral("Wang, XiaoDong (王 小东)"));
        QCOMPARE(DicomIdentity::displayName(QStringLiteral("DOE^JOHN^^DR")), QStringLiteral("DOE, JOHN DR"));
        QCOMPARE(DicomIdentity::displayName(QStringLiteral("Люкценберг^Иван")), QStringLiteral("Люкценберг, Иван"));
    }
};

QTEST_GUILESS_MAIN(tst_DicomText)
#include "tst_dicomtext.moc"
