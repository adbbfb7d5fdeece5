// How a study query matches what the workstation holds (DicomQuery::matchesStudy): DICOM wildcards, case, names
// in component groups, dates, and many stars.

#include "spectrum/core/dicomquery.h"

#include <QTest>

using namespace spectrum;

class tst_DicomQuery : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void patientNames_data();
    void patientNames();
    void otherFieldsAndDates();
    void manyStars();
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

QTEST_GUILESS_MAIN(tst_DicomQuery)
#include "tst_dicomquery.moc"
