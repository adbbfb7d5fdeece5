// SPDX-License-Identifier: Apache-2.0
// Which of a patient's other studies are offered to read against (priorsearch.h): merged from the cache and the
// stores, newest first, the comparable ones marked — and nothing offered that is not plainly the same patient's.
#include "spectrum/stores/reading/priorsearch.h"

#include <QTest>

using namespace spectrum;

namespace {

DicomIdentity patient(const QString &studyUid, const QString &date)
{
    DicomIdentity id;
    id.patientName = QStringLiteral("DOE^JANE");
    id.patientId = QStringLiteral("P-1");
    id.issuerOfPatientId = QStringLiteral("HOSPITAL A");
    id.patientBirthDate = QStringLiteral("19600101");
    id.patientSex = QStringLiteral("F");
    id.studyInstanceUid = studyUid;
    id.studyDate = date;
    id.studyDescription = QStringLiteral("CT CHEST");
    return id;
}

StudySummary cached(const DicomIdentity &id, const QString &modality, const QString &bodyPart, int instances = 10)
{
    StudySummary s;
    s.identity = id;
    s.modalities = {modality};
    s.instanceCount = instances;
    SeriesSummary series;
    series.modality = modality;
    series.bodyPart = bodyPart;
    series.instances.resize(instances);
    s.series << series;
    return s;
}

StudyHit hit(const DicomIdentity &id, const QString &modality, const QString &store, int instances = 10)
{
    StudyHit h;
    h.study.identity = id;
    h.study.modalitiesInStudy = {modality};
    h.study.relatedInstances = instances;
    h.stores = {store};
    return h;
}

} // namespace

class tst_PriorSearch : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void mergesCacheAndStoresNewestFirst()
    {
        const StudySummary current = cached(patient(QStringLiteral("1.1"), QStringLiteral("20250301")), QStringLiteral("CT"), QStringLiteral("CHEST"));
        const StudySummary cachedPrior = cached(patient(QStringLiteral("1.2"), QStringLiteral("20240301")), QStringLiteral("CT"), QStringLiteral("CHEST"), 8);
        DicomIdentity mr = patient(QStringLiteral("1.3"), QStringLiteral("20250401"));
        mr.studyDescription = QStringLiteral("MR BRAIN");
        DicomIdentity older = patient(QStringLiteral("1.4"), QStringLiteral("20200101"));
        older.issuerOfPatientId.clear();  // the archive does not say: proves nothing either way
        const PriorList list = arrangePriors(current, {current, cachedPrior},
                                             {{QStringLiteral("pacs"), {hit(cachedPrior.identity, QStringLiteral("CT"), QStringLiteral("pacs"), 12),
                                                                        hit(mr, QStringLiteral("MR"), QStringLiteral("pacs")),
                                                                        hit(current.identity, QStringLiteral("CT"), QStringLiteral("pacs"))}},
                                              {QStringLiteral("vna"), {hit(older, QStringLiteral("CT"), QStringLiteral("vna"))}}});
        QCOMPARE(list.studies.size(), 3);  // the current study is not its own prior
        QCOMPARE(list.studies[0].identity.studyInstanceUid, QStringLiteral("1.3"));  // newest first, later ones too
        QCOMPARE(list.studies[1].identity.studyInstanceUid, QStringLiteral("1.2"));
        QCOMPARE(list.studies[2].identity.studyInstanceUid, QStringLiteral("1.4"));
        const PriorStudy &both = list.studies[1];
        QCOMPARE(both.stores, QStringList{QStringLiteral("pacs")});
        QCOMPARE(both.cachedInstances, 8);
        QCOMPARE(both.instances, 12);
        QVERIFY(!both.isCached());  // the archive has more of it than the cache
        QVERIFY(both.comparable);
        QVERIFY(!list.studies[0].comparable);  // MR
        QVERIFY(list.studies[2].comparable);   // same modality and description; body part unknown
        QCOMPARE(list.mostRecentComparable(current.identity), 1);  // the MR is later and not comparable
        QVERIFY(list.withheld.isEmpty());
    }

    void comparableByBodyPartWhereKnownElseByDescription()
    {
        const StudySummary current = cached(patient(QStringLiteral("1.1"), QStringLiteral("20250301")), QStringLiteral("CT"), QStringLiteral("CHEST"));
        DicomIdentity abdomen = patient(QStringLiteral("1.2"), QStringLiteral("20240301"));
        abdomen.studyDescription = QStringLiteral("CT CHEST");  // the same words, another body part recorded
        DicomIdentity renamed = patient(QStringLiteral("1.3"), QStringLiteral("20230301"));
        renamed.studyDescription = QStringLiteral("Thorax CT");
        const PriorList list = arrangePriors(current, {cached(abdomen, QStringLiteral("CT"), QStringLiteral("ABDOMEN")),
                                                       cached(renamed, QStringLiteral("CT"), QStringLiteral("chest"))}, {});
        QCOMPARE(list.studies.size(), 2);
        QVERIFY(!list.studies[0].comparable);
        QVERIFY(list.studies[1].comparable);  // CHEST = chest
        QCOMPARE(list.mostRecentComparable(current.identity), 1);
    }

    void neverOffersAnotherPatient_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("why");
        QTest::newRow("issuer") << QStringLiteral("issuer") << QStringLiteral("HOSPITAL B") << QStringLiteral("issued by HOSPITAL B");
        QTest::newRow("name") << QStringLiteral("name") << QStringLiteral("DOE^JOHN") << QStringLiteral("another patient name (DOE, JOHN)");
        QTest::newRow("birth date") << QStringLiteral("birth") << QStringLiteral("19610101") << QStringLiteral("another birth date (1961-01-01)");
        QTest::newRow("sex") << QStringLiteral("sex") << QStringLiteral("M") << QStringLiteral("another sex (M)");
    }

    void neverOffersAnotherPatient()
    {
        QFETCH(QString, field);
        QFETCH(QString, value);
        QFETCH(QString, why);
        const StudySummary current = cached(patient(QStringLiteral("1.1"), QStringLiteral("20250301")), QStringLiteral("CT"), QStringLiteral("CHEST"));
        DicomIdentity other = patient(QStringLiteral("1.2"), QStringLiteral("20240301"));
        if (field == QLatin1String("issuer"))
            other.issuerOfPatientId = value;
        else if (field == QLatin1String("name"))
            other.patientName = value;
        else if (field == QLatin1String("birth"))
            other.patientBirthDate = value;
        else
            other.patientSex = value;
        for (bool fromCache : {true, false}) {
            const PriorList list = fromCache ? arrangePriors(current, {cached(other, QStringLiteral("CT"), QStringLiteral("CHEST"))}, {})
                                             : arrangePriors(current, {}, {{QStringLiteral("pacs"), {hit(other, QStringLiteral("CT"), QStringLiteral("pacs"))}}});
            QVERIFY(list.studies.isEmpty());
            QCOMPARE(list.withheld.size(), 1);
            QVERIFY2(list.withheld.first().contains(why), qPrintable(list.withheld.first()));
            QVERIFY2(list.withheld.first().contains(fromCache ? QStringLiteral("this workstation") : QStringLiteral("pacs")), qPrintable(list.withheld.first()));
            QCOMPARE(list.mostRecentComparable(current.identity), -1);
        }
        // Spelling and spacing of one name are the same name.
        DicomIdentity same = patient(QStringLiteral("1.2"), QStringLiteral("20240301"));
        same.patientName = QStringLiteral("Doe^Jane^^^");
        QCOMPARE(arrangePriors(current, {cached(same, QStringLiteral("CT"), QStringLiteral("CHEST"))}, {}).studies.size(), 1);
    }

    void neverAcrossAStudyUidTwoPatientsClaim()
    {
        const StudySummary current = cached(patient(QStringLiteral("1.1"), QStringLiteral("20250301")), QStringLiteral("CT"), QStringLiteral("CHEST"));
        const DicomIdentity prior = patient(QStringLiteral("1.2"), QStringLiteral("20240301"));
        // In the cache: the study browser's flag.
        StudySummary flagged = cached(prior, QStringLiteral("CT"), QStringLiteral("CHEST"));
        flagged.identityConflict = true;
        PriorList list = arrangePriors(current, {flagged}, {});
        QVERIFY(list.studies.isEmpty());
        QCOMPARE(list.withheld.size(), 1);
        QVERIFY2(list.withheld.first().contains(QStringLiteral("belongs to another patient")), qPrintable(list.withheld.first()));
        // In a store: the registry's conflict, even when the cache holds it cleanly.
        StudyHit conflicting = hit(prior, QStringLiteral("CT"), QStringLiteral("pacs"));
        conflicting.conflicts << QStringLiteral("vna says Patient ID OTHER");
        list = arrangePriors(current, {cached(prior, QStringLiteral("CT"), QStringLiteral("CHEST"))}, {{QStringLiteral("pacs"), {conflicting}}});
        QVERIFY(list.studies.isEmpty());
        QCOMPARE(list.withheld.size(), 1);
    }

    void neverAStudyTheCacheHoldsUnderAnotherPatientOrAPlaceDisagreesOn()
    {
        const StudySummary current = cached(patient(QStringLiteral("1.1"), QStringLiteral("20250301")), QStringLiteral("CT"), QStringLiteral("CHEST"));
        const DicomIdentity prior = patient(QStringLiteral("1.2"), QStringLiteral("20240301"));
        // The archive lists 1.2 for this patient; the cache holds 1.2 under someone else: the cache would show
        // that patient's instances under this one's name. Not offered, and said.
        DicomIdentity someoneElse = prior;
        someoneElse.patientId = QStringLiteral("P-2");
        someoneElse.patientName = QStringLiteral("ROE^RICHARD");
        PriorList list = arrangePriors(current, {current, cached(someoneElse, QStringLiteral("CT"), QStringLiteral("CHEST"))},
                                       {{QStringLiteral("pacs"), {hit(prior, QStringLiteral("CT"), QStringLiteral("pacs"))}}});
        QVERIFY(list.studies.isEmpty());
        QCOMPARE(list.withheld.size(), 1);
        QVERIFY2(list.withheld.first().contains(QStringLiteral("another patient")), qPrintable(list.withheld.first()));
        // One archive agrees, another gives the same study another birth date: offered by neither.
        DicomIdentity otherBirth = prior;
        otherBirth.patientBirthDate = QStringLiteral("19700101");
        list = arrangePriors(current, {}, {{QStringLiteral("pacs"), {hit(prior, QStringLiteral("CT"), QStringLiteral("pacs"))}},
                                           {QStringLiteral("vna"), {hit(otherBirth, QStringLiteral("CT"), QStringLiteral("vna"))}}});
        QVERIFY(list.studies.isEmpty());
        QCOMPARE(list.withheld.size(), 1);
        QVERIFY(list.withheld.first().contains(QStringLiteral("another birth date")) && list.withheld.first().contains(QStringLiteral("vna")));
        // Another patient's studies in the cache are nobody's business here: nothing said about them.
        DicomIdentity unrelated = someoneElse;
        unrelated.studyInstanceUid = QStringLiteral("9.9");
        list = arrangePriors(current, {current, cached(unrelated, QStringLiteral("CT"), QStringLiteral("CHEST"))}, {});
        QVERIFY(list.withheld.isEmpty());
    }

    void anUndatedStudyIsNeverThePrior()
    {
        const StudySummary current = cached(patient(QStringLiteral("1.1"), QStringLiteral("20250301")), QStringLiteral("CT"), QStringLiteral("CHEST"));
        const PriorList list = arrangePriors(current, {cached(patient(QStringLiteral("1.2"), QString()), QStringLiteral("CT"), QStringLiteral("CHEST"))}, {});
        QCOMPARE(list.studies.size(), 1);  // listed: the reader may open it
        QCOMPARE(list.mostRecentComparable(current.identity), -1);  // but not taken for the prior
    }

    void aStudyWithoutPatientIdHasNoPriors()
    {
        StudySummary current = cached(patient(QStringLiteral("1.1"), QStringLiteral("20250301")), QStringLiteral("CT"), QStringLiteral("CHEST"));
        current.identity.patientId.clear();
        StudySummary other = cached(patient(QStringLiteral("1.2"), QStringLiteral("20240301")), QStringLiteral("CT"), QStringLiteral("CHEST"));
        other.identity.patientId.clear();
        const PriorList list = arrangePriors(current, {other}, {});
        QVERIFY(list.studies.isEmpty());
        QCOMPARE(list.withheld.size(), 1);
    }
};

QTEST_GUILESS_MAIN(tst_PriorSearch)
#include "tst_priorsearch.moc"
