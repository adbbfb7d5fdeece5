// SPDX-License-Identifier: Apache-2.0
// Saved searches: relative dates resolved on the day they run, the file read whole or refused with the search and
// the field named, and the runner's timers following the file.
#include "spectrum/stores/reading/savedsearch.h"
#include "spectrum/stores/reading/savedsearchrunner.h"

#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;

class tst_SavedSearch : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void periodsAreResolvedOnTheDayTheSearchRuns();
    void periodsReadBackAsWritten_data();
    void periodsReadBackAsWritten();
    void malformedPeriodsAreRefused_data();
    void malformedPeriodsAreRefused();
    void theFileReadsBackWhatWasSaved();
    void aBrokenFileNamesTheSearchAndTheField_data();
    void aBrokenFileNamesTheSearchAndTheField();
    void aMissingFileIsNoSearchesAndAnUnreadableOneIsAnError();
    void putReplacesByNameAndRefusesInvalidSearches();
    void searchesThatRunByThemselvesHaveTheirTimer();
};

void tst_SavedSearch::periodsAreResolvedOnTheDayTheSearchRuns()
{
    SavedSearch s;
    s.name = QStringLiteral("Today's CT");
    s.modality = QStringLiteral("CT");
    s.dates.kind = DatePeriod::Today;
    const QDate tuesday(2026, 3, 3);
    DicomQuery q = s.query(tuesday);
    QCOMPARE(q.dateFrom, tuesday);
    QCOMPARE(q.dateTo, tuesday);
    QCOMPARE(q.modality, QStringLiteral("CT"));
    QCOMPARE(s.query(tuesday.addDays(1)).dateFrom, tuesday.addDays(1));  // saved Monday, run Wednesday: Wednesday's
    s.dates.kind = DatePeriod::Yesterday;
    QCOMPARE(s.query(QDate(2026, 3, 1)).dateFrom, QDate(2026, 2, 28));
    QCOMPARE(s.query(QDate(2026, 3, 1)).dateTo, QDate(2026, 2, 28));
    s.dates.kind = DatePeriod::LastDays;
    s.dates.days = 7;
    q = s.query(tuesday);
    QCOMPARE(q.dateFrom, QDate(2026, 2, 25));  // seven days, today included
    QCOMPARE(q.dateTo, tuesday);
    QCOMPARE(q.dicomDateRange(), QStringLiteral("20260225-20260303"));
    s.dates.kind = DatePeriod::Between;
    s.dates.from = QDate(2024, 1, 1);
    s.dates.to = QDate();
    q = s.query(tuesday);
    QCOMPARE(q.dicomDateRange(), QStringLiteral("20240101-"));  // an open end stays open
    s.dates.kind = DatePeriod::Any;
    QVERIFY(s.query(tuesday).dateFrom.isNull() && s.query(tuesday).dateTo.isNull());
}

void tst_SavedSearch::periodsReadBackAsWritten_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("written");
    QTest::newRow("any") << "any" << "any";
    QTest::newRow("empty is any") << "" << "any";
    QTest::newRow("today") << "Today" << "today";
    QTest::newRow("yesterday") << "yesterday" << "yesterday";
    QTest::newRow("last 7") << "last 7 days" << "last 7 days";
    QTest::newRow("last 1") << "last 1 day" << "last 1 days";
    QTest::newRow("range") << "20240101-20240131" << "20240101-20240131";
    QTest::newRow("from") << "20240101-" << "20240101-";
    QTest::newRow("until") << "-20240131" << "-20240131";
}

void tst_SavedSearch::periodsReadBackAsWritten()
{
    QFETCH(QString, text);
    QFETCH(QString, written);
    const Result<DatePeriod> p = DatePeriod::fromText(text);
    QVERIFY2(p.isOk(), qPrintable(p.isOk() ? QString() : p.error().message()));
    QCOMPARE(p.value().toText(), written);
    QVERIFY(DatePeriod::fromText(written).value() == p.value());
}

void tst_SavedSearch::malformedPeriodsAreRefused_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("says");
    QTest::newRow("words") << "this week" << "not a period";
    QTest::newRow("no day") << "20240230-" << "real days";
    QTest::newRow("reversed") << "20240201-20240101" << "ends before it begins";
    QTest::newRow("zero days") << "last 0 days" << "the last 1 to";
    QTest::newRow("too many days") << "last 9999 days" << "the last 1 to";
    QTest::newRow("just a dash") << "-" << "not a period";
    QTest::newRow("short date") << "2024-" << "not a period";
}

void tst_SavedSearch::malformedPeriodsAreRefused()
{
    QFETCH(QString, text);
    QFETCH(QString, says);
    const Result<DatePeriod> p = DatePeriod::fromText(text);
    QVERIFY(!p.isOk());
    QCOMPARE(p.error().code(), ErrorCode::InvalidArgument);
    QVERIFY2(p.error().message().contains(says), qPrintable(p.error().message()));
}

void tst_SavedSearch::theFileReadsBackWhatWasSaved()
{
    SavedSearches all;
    SavedSearch ct;
    ct.name = QStringLiteral("Today's CT at the main PACS");
    ct.modality = QStringLiteral("CT");
    ct.dates.kind = DatePeriod::Today;
    ct.stores = {QStringLiteral("pacs")};
    ct.prefetch = SavedSearch::Prefetch::Priors;
    ct.priorsPerStudy = 2;
    ct.everyMinutes = 15;
    SavedSearch mine;
    mine.name = QStringLiteral("Ärztin Müller's chests");  // not only ASCII
    mine.description = QStringLiteral("*THORAX*");
    mine.patientName = QStringLiteral("M?LLER*");
    mine.accessionNumber = QStringLiteral("A1*");
    mine.patientId = QStringLiteral("P-1");
    mine.dates.kind = DatePeriod::Between;
    mine.dates.from = QDate(2025, 1, 1);
    mine.prefetch = SavedSearch::Prefetch::StudiesAndPriors;
    QVERIFY(!all.put(ct).isError());
    QVERIFY(!all.put(mine).isError());
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("sub/saved-searches.json"));  // its folder made when missing
    QVERIFY(!all.save(path).isError());
    const Result<SavedSearches> read = SavedSearches::load(path);
    QVERIFY2(read.isOk(), qPrintable(read.isOk() ? QString() : read.error().message()));
    QCOMPARE(read.value().searches.size(), 2);
    QVERIFY(read.value().searches[0] == ct);
    QVERIFY(read.value().searches[1] == mine);
    QVERIFY(read.value().find(mine.name));
    QVERIFY(!read.value().find(QStringLiteral("nothing")));
    // The file is what an admin can read and write by hand.
    const QByteArray json = all.toJson();
    QVERIFY(json.contains("\"dates\": \"today\""));
    QVERIFY(json.contains("\"prefetch\": \"studies and priors\""));
    QVERIFY(json.contains("\"everyMinutes\": 15"));
}

void tst_SavedSearch::aBrokenFileNamesTheSearchAndTheField_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("says");
    const QByteArray head = "{\"format\":\"spectrum-saved-searches/1\",\"searches\":[";
    QTest::newRow("not json") << QByteArray("{\"searches\": [") << "not JSON";
    QTest::newRow("not an object") << QByteArray("[]") << "not an object";
    QTest::newRow("future format") << QByteArray("{\"format\":\"spectrum-saved-searches/7\",\"searches\":[]}") << "the format is \"spectrum-saved-searches/7\"";
    QTest::newRow("no format") << QByteArray("{\"searches\":[]}") << "the format is \"\"";
    QTest::newRow("no list") << head.chopped(1) + "{}}" << "not a list";
    QTest::newRow("entry not an object") << head + "3]}" << "search 1 is not an object";
    QTest::newRow("unknown field") << head + "{\"name\":\"A\",\"modality\":\"CT\",\"colour\":\"red\"}]}" << "\"A\": unknown field \"colour\"";
    QTest::newRow("no name") << head + "{\"modality\":\"CT\"}]}" << "needs a name";
    QTest::newRow("name not text") << head + "{\"name\":5,\"modality\":\"CT\"}]}" << "search 1: \"name\" is not text";
    QTest::newRow("everything") << head + "{\"name\":\"All\"}]}" << "\"All\" would list every study";
    QTest::newRow("bad dates") << head + "{\"name\":\"B\",\"dates\":\"soon\"}]}" << "\"B\": dates";
    QTest::newRow("bad prefetch") << head + "{\"name\":\"C\",\"modality\":\"CT\",\"prefetch\":\"all\"}]}" << "\"C\": prefetch \"all\"";
    QTest::newRow("too often") << head + "{\"name\":\"D\",\"modality\":\"CT\",\"everyMinutes\":1}]}" << "\"D\": it runs every 5 to 1440 minutes";
    QTest::newRow("fraction") << head + "{\"name\":\"E\",\"modality\":\"CT\",\"priors\":1.5}]}" << "\"E\": \"priors\" is not a whole number";
    QTest::newRow("too many priors") << head + "{\"name\":\"F\",\"modality\":\"CT\",\"priors\":50}]}" << "priors per study is 1 to 10";
    QTest::newRow("stores not a list") << head + "{\"name\":\"G\",\"modality\":\"CT\",\"stores\":\"pacs\"}]}" << "\"G\": \"stores\" is not a list";
    QTest::newRow("twice") << head + "{\"name\":\"H\",\"modality\":\"CT\"},{\"name\":\"H\",\"modality\":\"MR\"}]}" << "two searches are named \"H\"";
    QTest::newRow("a backslash in an ID") << head + "{\"name\":\"I\",\"patientId\":\"a\\\\b\"}]}" << "\"I\":";
}

void tst_SavedSearch::aBrokenFileNamesTheSearchAndTheField()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, says);
    const Result<SavedSearches> read = SavedSearches::fromJson(json);
    QVERIFY(!read.isOk());
    QCOMPARE(read.error().code(), ErrorCode::InvalidArgument);
    QVERIFY2(read.error().message().contains(says), qPrintable(read.error().message()));
}

void tst_SavedSearch::aMissingFileIsNoSearchesAndAnUnreadableOneIsAnError()
{
    QTemporaryDir dir;
    const Result<SavedSearches> none = SavedSearches::load(dir.filePath(QStringLiteral("absent.json")));
    QVERIFY(none.isOk());
    QVERIFY(none.value().searches.isEmpty());
    const QString broken = dir.filePath(QStringLiteral("broken.json"));
    QFile f(broken);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"format\":\"spectrum-saved-searches/1\",\"searches\":[{\"name\":\"x\"");
    f.close();
    const Result<SavedSearches> read = SavedSearches::load(broken);
    QVERIFY(!read.isOk());
    QVERIFY2(read.error().message().startsWith(broken), qPrintable(read.error().message()));  // which file
}

void tst_SavedSearch::putReplacesByNameAndRefusesInvalidSearches()
{
    SavedSearches all;
    SavedSearch s;
    s.name = QStringLiteral("MR");
    s.modality = QStringLiteral("MR");
    QVERIFY(!all.put(s).isError());
    s.everyMinutes = 30;
    QVERIFY(!all.put(s).isError());
    QCOMPARE(all.searches.size(), 1);
    QCOMPARE(all.searches[0].everyMinutes, 30);
    SavedSearch unbounded;
    unbounded.name = QStringLiteral("All");
    QVERIFY(all.put(unbounded).isError());
    QCOMPARE(all.searches.size(), 1);
    QVERIFY(all.remove(QStringLiteral("MR")));
    QVERIFY(!all.remove(QStringLiteral("MR")));
    QVERIFY(all.searches.isEmpty());
}

void tst_SavedSearch::searchesThatRunByThemselvesHaveTheirTimer()
{
    SavedSearchRunner runner(nullptr, nullptr);
    SavedSearches all;
    SavedSearch quarter;
    quarter.name = QStringLiteral("Every quarter hour");
    quarter.modality = QStringLiteral("CT");
    quarter.everyMinutes = 15;
    SavedSearch byHand = quarter;
    byHand.name = QStringLiteral("By hand");
    byHand.everyMinutes = 0;
    QVERIFY(!all.put(quarter).isError());
    QVERIFY(!all.put(byHand).isError());
    const QDateTime before = QDateTime::currentDateTime();
    runner.setSearches(all);
    const QDateTime next = runner.nextRun(quarter.name);
    QVERIFY(next.isValid());
    QVERIFY2(next >= before.addSecs(15 * 60 - 5) && next <= QDateTime::currentDateTime().addSecs(15 * 60 + 1), qPrintable(next.toString()));
    QVERIFY(!runner.nextRun(byHand.name).isValid());
    QVERIFY(!runner.lastRun(quarter.name).isValid());
    // Made to run by hand: no timer any more; removed: gone.
    all.searches[0].everyMinutes = 0;
    runner.setSearches(all);
    QVERIFY(!runner.nextRun(quarter.name).isValid());
    all.searches[0].everyMinutes = 60;
    runner.setSearches(all);
    QVERIFY(runner.nextRun(quarter.name) > QDateTime::currentDateTime().addSecs(59 * 60));
    all.remove(quarter.name);
    runner.setSearches(all);
    QVERIFY(!runner.nextRun(quarter.name).isValid());
    QVERIFY(!runner.run(quarter.name));  // none of that name
}

QTEST_GUILESS_MAIN(tst_SavedSearch)
#include "tst_savedsearch.moc"
