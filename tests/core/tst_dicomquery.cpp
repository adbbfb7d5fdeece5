// SPDX-License-Identifier: Apache-2.0
// How a study query matches what the workstation holds (DicomQuery::matchesStudy): DICOM wildcards, case, names
// in component groups, dates, and many stars.

#include "spectrum/core/dicomquery.h"

#include <QTest>

using namespace spectrum;

namespace {
/// Whether an archive applying DICOM's wildcards to `pattern` returns `name`.
bool wildcardLike(const QString &pattern, const QString &name)
{
    DicomQuery q;
    q.patientName = pattern;
    DicomIdentity id;
    id.patientName = name;
    return q.matchesStudy(id, {});
}
} // namespace

class tst_DicomQuery : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void patientNames_data();
    void patientNames();
    void otherFieldsAndDates();
    void manyStars();
    void namesAsPeopleTypeThem_data();
    void namesAsPeopleTypeThem();
    void archivesAreAskedForTheLongestWord();
    void descriptionsRoundLongDecimals();
};

void tst_DicomQuery::patientNames_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("matches");
    QTest::newRow("empty matches all") << QString() << QStringLiteral("DOE^JOHN") << true;
    QTest::newRow("exact") << QStringLiteral("DOE^JOHN") << QStringLiteral("DOE^JOHN") << true;
    QTest::newRow("exact needs all") << QStringLiteral("DOE^JOHN") << QStringLiteral("DOE^JOHNNY") << false;
    QTest::newRow("prefix star") << QStringLiteral("DOE*") << QStringLiteral("DOE^JOHN") << true;
    QTest::newRow("case") << QStringLiteral("doe*") << QStringLiteral("Doe^John") << true;
    QTest::newRow("inner star") << QStringLiteral("D*JOHN") << QStringLiteral("DOE^JOHN") << true;
    QTest::newRow("star backtracks") << QStringLiteral("*O*N") << QStringLiteral("DOE^JOHN") << true;
    QTest::newRow("star at the end only") << QStringLiteral("*JO") << QStringLiteral("DOE^JOHN") << false;
    QTest::newRow("question mark") << QStringLiteral("D?E^JOHN") << QStringLiteral("DOE^JOHN") << true;
    QTest::newRow("question mark is one") << QStringLiteral("D?^JOHN") << QStringLiteral("DOE^JOHN") << false;
    QTest::newRow("dot is literal") << QStringLiteral("DOE.") << QStringLiteral("DOEX") << false;
    QTest::newRow("brackets literal") << QStringLiteral("[A]*") << QStringLiteral("[A]BC") << true;
    QTest::newRow("ideographic group") << QStringLiteral("山田*") << QStringLiteral("Yamada^Tarou=山田^太郎=やまだ^たろう") << true;
    QTest::newRow("group must match whole") << QStringLiteral("田*") << QStringLiteral("Yamada^Tarou=山田^太郎") << false;
    QTest::newRow("? over a surrogate pair") << QStringLiteral("A?B") << QStringLiteral("A\U0001F600B") << true;
    QTest::newRow("accented case") << QStringLiteral("müller*") << QStringLiteral("MÜLLER^HANS") << true;
}

void tst_DicomQuery::patientNames()
{
    QFETCH(QString, pattern);
    QFETCH(QString, name);
    QFETCH(bool, matches);
    DicomQuery q;
    q.patientName = pattern;
    DicomIdentity id;
    id.patientName = name;
    QCOMPARE(q.matchesStudy(id, {}), matches);
}

void tst_DicomQuery::otherFieldsAndDates()
{
    DicomIdentity id;
    id.patientId = QStringLiteral("PID-0042");
    id.accessionNumber = QStringLiteral("ACC77");
    id.studyDescription = QStringLiteral("CT Chest");
    id.studyDate = QStringLiteral("20260315");
    DicomQuery q;
    q.patientId = QStringLiteral("PID-00*");
    q.description = QStringLiteral("*chest");
    QVERIFY(q.matchesStudy(id, {QStringLiteral("CT")}));
    q.modality = QStringLiteral("MR");
    QVERIFY(!q.matchesStudy(id, {QStringLiteral("CT")}));
    q.modality = QStringLiteral("ct");
    QVERIFY(q.matchesStudy(id, {QStringLiteral("CT")}));
    q.dateFrom = QDate(2026, 3, 16);
    QVERIFY(!q.matchesStudy(id, {QStringLiteral("CT")}));
    q.dateFrom = QDate(2026, 3, 15);
    q.dateTo = QDate(2026, 3, 15);
    QVERIFY(q.matchesStudy(id, {QStringLiteral("CT")}));
    id.studyDate.clear();  // no date: never inside a range
    QVERIFY(!q.matchesStudy(id, {QStringLiteral("CT")}));
}

// Many stars against a long name that almost matches: each star gives the matcher a way back, and none may let a
// name through that the pattern does not describe, nor keep one out that it does.
void tst_DicomQuery::manyStars()
{
    DicomQuery q;
    q.patientName = QStringLiteral("*A*A*A*A*A*A*A*A*A*A*A*A*B");
    DicomIdentity id;
    id.patientName = QString(200, QLatin1Char('A'));
    QVERIFY(!q.matchesStudy(id, {}));
    id.patientName += QLatin1Char('b');
    QVERIFY(q.matchesStudy(id, {}));
    id.patientName = QStringLiteral("AAAAAAAAAAAB");  // eleven A: one short
    QVERIFY(!q.matchesStudy(id, {}));
}

void tst_DicomQuery::namesAsPeopleTypeThem_data()
{
    QTest::addColumn<QString>("typed");
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("matches");
    QTest::newRow("family, lower case") << QStringLiteral("demo") << QStringLiteral("DEMO^HEAD PHANTOM") << true;
    QTest::newRow("a word of the given name") << QStringLiteral("phantom") << QStringLiteral("DEMO^HEAD PHANTOM") << true;
    QTest::newRow("a prefix") << QStringLiteral("phan") << QStringLiteral("DEMO^HEAD PHANTOM") << true;
    QTest::newRow("inside a word: no") << QStringLiteral("hantom") << QStringLiteral("DEMO^HEAD PHANTOM") << false;
    QTest::newRow("two words, any order") << QStringLiteral("john doe") << QStringLiteral("DOE^JOHN") << true;
    QTest::newRow("comma as written") << QStringLiteral("Doe, J") << QStringLiteral("DOE^JOHN") << true;
    QTest::newRow("one word not there") << QStringLiteral("doe jane") << QStringLiteral("DOE^JOHN") << false;
    QTest::newRow("accents either way") << QStringLiteral("jose") << QStringLiteral("MÜLLER^JOSÉ") << true;
    QTest::newRow("accents typed") << QStringLiteral("müller") << QStringLiteral("MULLER^JOSE") << true;
    QTest::newRow("ideographic group") << QStringLiteral("山田") << QStringLiteral("Yamada^Tarou=山田^太郎=やまだ^たろう") << true;
    QTest::newRow("a wildcard: DICOM's rules") << QStringLiteral("DOE*") << QStringLiteral("DOE^JOHN") << true;
    QTest::newRow("a wildcard anchors") << QStringLiteral("OE*") << QStringLiteral("DOE^JOHN") << false;
    QTest::newRow("nothing typed") << QStringLiteral("") << QStringLiteral("ANY^ONE") << true;
    QTest::newRow("a double name's second part") << QStringLiteral("jones") << QStringLiteral("SMITH-JONES^ANN") << true;
    QTest::newRow("a double name whole") << QStringLiteral("smith-jo") << QStringLiteral("SMITH-JONES^ANN") << true;
    QTest::newRow("an apostrophe left out") << QStringLiteral("obrien") << QStringLiteral("O'BRIEN^SEAN") << true;
    QTest::newRow("after the apostrophe") << QStringLiteral("brien") << QStringLiteral("O'BRIEN^SEAN") << true;
    QTest::newRow("after a stop") << QStringLiteral("john") << QStringLiteral("ST.JOHN^MARY") << true;
}

void tst_DicomQuery::namesAsPeopleTypeThem()
{
    QFETCH(QString, typed);
    QFETCH(QString, name);
    QFETCH(bool, matches);
    QCOMPARE(DicomQuery::nameMatchesTyped(typed, name), matches);
}

void tst_DicomQuery::archivesAreAskedForTheLongestWord()
{
    // All lower case: asked in upper case, as archives that match case by case mostly hold names; with capitals,
    // as typed; a letter beyond ASCII left to a wildcard (stored with its accent or without).
    QCOMPARE(DicomQuery::nameQueryFor(QStringLiteral("demo")), QStringLiteral("*DEMO*"));
    QCOMPARE(DicomQuery::nameQueryFor(QStringLiteral("Doe, Jonathan")), QStringLiteral("*Jonathan*"));
    QCOMPARE(DicomQuery::nameQueryFor(QStringLiteral("müller")), QStringLiteral("*M*LLER*"));
    QCOMPARE(DicomQuery::nameQueryFor(QStringLiteral("strauß")), QStringLiteral("*STRAU*"));  // never "STRAUSS"
    QCOMPARE(DicomQuery::nameQueryFor(QStringLiteral("山田")), QStringLiteral("*山田*"));  // another script: as typed, never "*"
    QCOMPARE(DicomQuery::nameQueryFor(QStringLiteral("DOE*")), QStringLiteral("DOE*"));
    QCOMPARE(DicomQuery::nameQueryFor(QStringLiteral("  ")), QString());
    // What an archive answers to the wide query is matched again here.
    QVERIFY(wildcardLike(DicomQuery::nameQueryFor(QStringLiteral("john doe")), QStringLiteral("DOE^JOHN")));
    QVERIFY(wildcardLike(DicomQuery::nameQueryFor(QStringLiteral("müller")), QStringLiteral("MÜLLER^JOSÉ")));
    QVERIFY(wildcardLike(DicomQuery::nameQueryFor(QStringLiteral("müller")), QStringLiteral("MULLER^JOSE")));
}

void tst_DicomQuery::descriptionsRoundLongDecimals()
{
    QCOMPARE(DicomIdentity::displayDescription(QStringLiteral("Axial 0.8333333333 mm")), QStringLiteral("Axial 0.83 mm"));
    QCOMPARE(DicomIdentity::displayDescription(QStringLiteral("Axial 1.25 mm")), QStringLiteral("Axial 1.25 mm"));
    QCOMPARE(DicomIdentity::displayDescription(QStringLiteral("Axial 2.0000001 mm")), QStringLiteral("Axial 2 mm"));
    QCOMPARE(DicomIdentity::displayDescription(QStringLiteral("1.2.840.10008.5")), QStringLiteral("1.2.840.10008.5"));  // not a number
    QCOMPARE(DicomIdentity::displayDescription(QStringLiteral("v3.14159 / 0.50000")), QStringLiteral("v3.14 / 0.5"));
    QCOMPARE(DicomIdentity::displayDescription(QStringLiteral("Axial 0.625 mm")), QStringLiteral("Axial 0.625 mm"));  // as written
    QCOMPARE(DicomIdentity::displayDescription(QStringLiteral("dose 0.000012345 Gy")), QStringLiteral("dose 0.000012345 Gy"));  // never 0
}

QTEST_GUILESS_MAIN(tst_DicomQuery)
#include "tst_dicomquery.moc"
