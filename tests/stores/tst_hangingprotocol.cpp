// SPDX-License-Identifier: Apache-2.0
// Hanging protocols (hangingprotocol.h): the built-ins match the studies they are for, by real series
// descriptions as scanners write them; series are placed by description, plane, thickness, view position and as
// "the same series of the prior"; the file goes both ways and a broken one says what and where.
#include "spectrum/stores/reading/hangingprotocol.h"

#include "testsupport.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;

namespace {

SeriesSummary series(const QString &modality, const QString &description, int images, const QString &plane = QString(), double thickness = 0,
                     const QString &view = QString(), const QString &bodyPart = QString())
{
    SeriesSummary s;
    s.modality = modality;
    s.description = description;
    s.plane = plane;
    s.sliceThickness = thickness;
    s.viewPosition = view;
    s.bodyPart = bodyPart;
    s.instances.resize(images);
    return s;
}

StudySummary study(const QString &description, const QList<SeriesSummary> &list, const QString &date = QStringLiteral("20250101"))
{
    StudySummary s;
    s.identity.studyDescription = description;
    s.identity.studyDate = date;
    s.series = list;
    for (const SeriesSummary &x : list) {
        if (!s.modalities.contains(x.modality))
            s.modalities << x.modality;
    }
    return s;
}

QString nameOf(const ProtocolSet &set, const HangingPlan &plan)
{
    return plan.protocol >= 0 ? set.protocols[plan.protocol].name : QStringLiteral("(none)");
}

} // namespace

class tst_HangingProtocol : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void headCtByRealDescriptions();
    void chestCtWithPriorPlacesTheSameSeriesOfThePrior();
    void mrBrainBySequenceNames();
    void chestRadiographsByViewPosition();
    void withoutAMatchTheSeriesInOrder();
    void theFileGoesBothWaysAndBrokenOnesSayWhy();
    void patterns();
};

void tst_HangingProtocol::headCtByRealDescriptions()
{
    const ProtocolSet set = ProtocolSet::builtIn();
    // A Siemens-style head CT: a thick and a thin axial, a bone kernel, a coronal and a sagittal reformat, a scout.
    const StudySummary head = study(QStringLiteral("CT Kopf nativ"), {series(QStringLiteral("CT"), QStringLiteral("Topogram 0.6 T20s"), 1),
                                                                      series(QStringLiteral("CT"), QStringLiteral("Head 5.0 H30s"), 30, QStringLiteral("Axial"), 5.0, {}, QStringLiteral("HEAD")),
                                                                      series(QStringLiteral("CT"), QStringLiteral("Head 0.75 H30s"), 200, QStringLiteral("Axial"), 0.75),
                                                                      series(QStringLiteral("CT"), QStringLiteral("Head 2.0 H60s bone"), 80, QStringLiteral("Axial"), 2.0),
                                                                      series(QStringLiteral("CT"), QStringLiteral("COR 3.0 H30s"), 60, QStringLiteral("Coronal"), 3.0),
                                                                      series(QStringLiteral("CT"), QStringLiteral("SAG 3.0 H30s"), 60)});
    HangingPlan plan = set.planFor(head, nullptr);
    QCOMPARE(nameOf(set, plan), QStringLiteral("CT head"));  // by body part; the description is German
    QCOMPARE(plan.rows * plan.columns, 2);
    QCOMPARE(plan.panes[0].series, 1);  // brain on the thickest axial (not the coronal, not the scout)
    QCOMPARE(plan.panes[0].window, QStringLiteral("brain"));
    QCOMPARE(plan.panes[1].series, 2);  // bone on the thinnest
    QCOMPARE(plan.panes[1].window, QStringLiteral("bone"));
    // With a prior (thin slices of another thickness, other names): the same series of the prior beside it.
    const StudySummary prior = study(QStringLiteral("CT HEAD W/O"), {series(QStringLiteral("CT"), QStringLiteral("Scout"), 2),
                                                                    series(QStringLiteral("CT"), QStringLiteral("AXIAL 5mm"), 28, QStringLiteral("Axial"), 5.0),
                                                                    series(QStringLiteral("CT"), QStringLiteral("AXIAL 1.25mm"), 150, QStringLiteral("Axial"), 1.25)},
                                     QStringLiteral("20240101"));
    plan = set.planFor(head, &prior);
    QCOMPARE(nameOf(set, plan), QStringLiteral("CT head with prior"));
    QVERIFY(plan.usesPrior());
    QCOMPARE(plan.panes[1].study, 1);
    QCOMPARE(plan.panes[1].series, 2);  // axial, the nearest thickness
    QVERIFY(plan.linkScroll && plan.linkWindow);
    // Described only by words: "AX" in the description says axial when the geometry is not known.
    StudySummary remote = head;
    for (SeriesSummary &s : remote.series)
        s.plane.clear();
    remote.series[2].description = QStringLiteral("AX 0.75 H30s");
    plan = set.planFor(remote, nullptr);
    QCOMPARE(plan.panes[1].series, 2);
}

void tst_HangingProtocol::chestCtWithPriorPlacesTheSameSeriesOfThePrior()
{
    const ProtocolSet set = ProtocolSet::builtIn();
    const StudySummary chest = study(QStringLiteral("CT THORAX MIT KM"), {series(QStringLiteral("CT"), QStringLiteral("Thorax 5.0 B31f"), 60, QStringLiteral("Axial"), 5),
                                                                           series(QStringLiteral("CT"), QStringLiteral("Thorax 1.0 B70f"), 300, QStringLiteral("Axial"), 1)});
    const StudySummary prior = study(QStringLiteral("CT THORAX"), {series(QStringLiteral("CT"), QStringLiteral("Thorax 1.0 B70f"), 280, QStringLiteral("Axial"), 1),
                                                                   series(QStringLiteral("CT"), QStringLiteral("Thorax 5.0 B31f"), 58, QStringLiteral("Axial"), 5)},
                                     QStringLiteral("20240101"));
    QVERIFY(set.matching(chest, false).isEmpty());  // the chest protocol wants its prior
    const HangingPlan plan = set.planFor(chest, &prior);
    QCOMPARE(nameOf(set, plan), QStringLiteral("CT chest with prior"));
    QCOMPARE(plan.rows, 2);
    QCOMPARE(plan.columns, 2);
    QCOMPARE(plan.panes[0].series, 1);  // thin, lung window
    QCOMPARE(plan.panes[0].window, QStringLiteral("lung"));
    QCOMPARE(plan.panes[1].series, 0);  // the other axial (a series not on screen yet before one that is)
    QCOMPARE(plan.panes[1].window, QStringLiteral("mediastinum"));
    QCOMPARE(plan.panes[2].study, 1);
    QCOMPARE(plan.panes[2].series, 0);  // the prior's series of that description
    QCOMPARE(plan.panes[3].study, 1);
    QCOMPARE(plan.panes[3].series, 1);
}

void tst_HangingProtocol::mrBrainBySequenceNames()
{
    const ProtocolSet set = ProtocolSet::builtIn();
    const StudySummary mr = study(QStringLiteral("MRT Schädel"), {series(QStringLiteral("MR"), QStringLiteral("localizer"), 3, {}, 0, {}, QStringLiteral("BRAIN")),
                                                                 series(QStringLiteral("MR"), QStringLiteral("t1_mprage_sag_p2_iso"), 176),
                                                                 series(QStringLiteral("MR"), QStringLiteral("ep2d_diff_3scan_trace_p2_TRACEW"), 75),
                                                                 series(QStringLiteral("MR"), QStringLiteral("t2_tse_tra_512"), 25),
                                                                 series(QStringLiteral("MR"), QStringLiteral("AX T2 FLAIR"), 25)});
    const HangingPlan plan = set.planFor(mr, nullptr);
    QCOMPARE(nameOf(set, plan), QStringLiteral("MR brain"));
    QCOMPARE(plan.panes[0].series, 3);  // T2 (not the FLAIR, which has T2 in its name too: it is used below)
    QCOMPARE(plan.panes[1].series, 1);  // T1
    QCOMPARE(plan.panes[2].series, 4);  // FLAIR
    QCOMPARE(plan.panes[3].series, 2);  // diffusion
}

void tst_HangingProtocol::chestRadiographsByViewPosition()
{
    const ProtocolSet set = ProtocolSet::builtIn();
    const StudySummary current = study(QStringLiteral("XR CHEST 2 VIEWS"), {series(QStringLiteral("DX"), QStringLiteral("LATERAL"), 1, {}, 0, QStringLiteral("LL"), QStringLiteral("CHEST")),
                                                                            series(QStringLiteral("DX"), QStringLiteral("PA"), 1, {}, 0, QStringLiteral("PA"))});
    const StudySummary prior = study(QStringLiteral("XR CHEST 2 VIEWS"), {series(QStringLiteral("DX"), QStringLiteral("Chest PA"), 1),
                                                                          series(QStringLiteral("DX"), QStringLiteral("Chest Lat"), 1)},
                                     QStringLiteral("20240101"));
    HangingPlan plan = set.planFor(current, &prior);
    QCOMPARE(nameOf(set, plan), QStringLiteral("Chest X-ray PA and lateral with prior"));
    QCOMPARE(plan.panes.size(), 4);
    QCOMPARE(plan.panes[0].series, 1);  // PA by its view position
    QCOMPARE(plan.panes[1].series, 0);  // LL is a lateral
    QCOMPARE(plan.panes[2].study, 1);
    QCOMPARE(plan.panes[2].series, 0);  // by the words, no view position recorded
    QCOMPARE(plan.panes[3].series, 1);
    QVERIFY(!plan.linkScroll);
    plan = set.planFor(current, nullptr);
    QCOMPARE(nameOf(set, plan), QStringLiteral("Chest X-ray PA and lateral"));
    QCOMPARE(plan.rows * plan.columns, 2);
    QVERIFY(!plan.usesPrior());
}

void tst_HangingProtocol::withoutAMatchTheSeriesInOrder()
{
    const ProtocolSet set = ProtocolSet::builtIn();
    const StudySummary us = study(QStringLiteral("US ABDOMEN"), {series(QStringLiteral("US"), QStringLiteral("Liver"), 10), series(QStringLiteral("US"), QStringLiteral("Kidneys"), 12),
                                                                 series(QStringLiteral("US"), QStringLiteral("Spleen"), 4)});
    const HangingPlan plan = set.planFor(us, nullptr);
    QCOMPARE(plan.protocol, -1);
    QCOMPARE(plan.rows * plan.columns, 1);
    QCOMPARE(plan.panes.size(), 1);
    QCOMPARE(plan.panes[0].series, 0);
    // A protocol whose panes cannot all be filled shrinks to what it has: MR brain on a study of one series.
    const StudySummary one = study(QStringLiteral("MR BRAIN"), {series(QStringLiteral("MR"), QStringLiteral("T2 axial"), 24)});
    const HangingPlan mr = set.planFor(one, nullptr);
    QCOMPARE(nameOf(set, mr), QStringLiteral("MR brain"));
    QCOMPARE(mr.rows * mr.columns, 1);
    // Documents are no pictures: a report, key images and a presentation state (listed first here) are never hung,
    // not by a rule, not to fill a pane, not as the first series.
    const StudySummary docs = study(QStringLiteral("MR BRAIN"), {series(QStringLiteral("SR"), QStringLiteral("Findings"), 1),
                                                                 series(QStringLiteral("KO"), QStringLiteral("Key images"), 1),
                                                                 series(QStringLiteral("PR"), QStringLiteral("View"), 1),
                                                                 series(QStringLiteral("MR"), QStringLiteral("T2 axial"), 24)});
    const HangingPlan withDocs = set.planFor(docs, nullptr);
    QCOMPARE(withDocs.panes.size(), 1);
    QCOMPARE(withDocs.panes[0].series, 3);
    const StudySummary usDocs = study(QStringLiteral("US ABDOMEN"), {series(QStringLiteral("KO"), QStringLiteral("Key images"), 1),
                                                                     series(QStringLiteral("US"), QStringLiteral("Liver"), 10)});
    const HangingPlan plainDocs = set.planFor(usDocs, nullptr);
    QCOMPARE(plainDocs.protocol, -1);
    QCOMPARE(plainDocs.panes[0].series, 1);
}

void tst_HangingProtocol::theFileGoesBothWaysAndBrokenOnesSayWhy()
{
    const ProtocolSet set = ProtocolSet::builtIn();
    Result<ProtocolSet> again = ProtocolSet::fromJson(set.toJson());
    QVERIFY2(again.isOk(), qPrintable(again.isOk() ? QString() : again.error().toString()));
    QCOMPARE(again.value().protocols, set.protocols);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("protocols.json"));
    QCOMPARE(ProtocolSet::load(path).value().protocols, set.protocols);  // no file: the built-ins
    QVERIFY(!set.save(path).isError());
    QCOMPARE(ProtocolSet::load(path).value().protocols, set.protocols);
    const struct
    {
        const char *json;
        const char *says;
    } broken[] = {
        {"not json", "not JSON"},
        {R"({"format":"something else","protocols":[]})", "not a hanging protocol file"},
        {R"({"format":"spectrum-hanging-protocols/1","protocols":[{"name":"A","layout":[5,1]}]})", "protocol 'A': layout"},
        {R"({"format":"spectrum-hanging-protocols/1","protocols":[{"name":"B","layout":[1,1],"panes":[{},{}]}]})", "2 panes do not fit"},
        {R"({"format":"spectrum-hanging-protocols/1","protocols":[{"name":"C","layout":[1,2],"panes":[{"window":"purple"}]}]})", "window 'purple'"},
        {R"({"format":"spectrum-hanging-protocols/1","protocols":[{"name":"D","layout":[1,2],"panes":[{"series":{"sameAs":0}}]}]})", "sameAs must name an earlier pane"},
        {R"({"format":"spectrum-hanging-protocols/1","protocols":[{"name":"E","layout":[1,1],"match":{"priors":"maybe"}}]})", "match.priors"},
        {R"({"format":"spectrum-hanging-protocols/1","protocols":[{"name":"F","layout":[1,1],"panes":[{"series":{"thickness":"fat"}}]}]})", "thickness is 'fat'"},
    };
    for (const auto &b : broken) {
        QVERIFY(spectrum::test::writeFile(path, b.json));
        const Result<ProtocolSet> r = ProtocolSet::load(path);
        QVERIFY2(!r.isOk(), b.json);
        QVERIFY2(r.error().message().contains(QLatin1String(b.says)), qPrintable(r.error().message()));
        QVERIFY(r.error().message().contains(path));
    }
}

void tst_HangingProtocol::patterns()
{
    QVERIFY(protocolPatternMatches(QStringLiteral("*HEAD*|*BRAIN*"), QStringLiteral("DEMO CT HEAD (Shepp-Logan phantom)")));
    QVERIFY(protocolPatternMatches(QStringLiteral("head"), QStringLiteral("HEAD")));
    QVERIFY(!protocolPatternMatches(QStringLiteral("HEAD"), QStringLiteral("HEAD AND NECK")));
    QVERIFY(protocolPatternMatches(QStringLiteral("T?"), QStringLiteral("T2")));
    QVERIFY(!protocolPatternMatches(QString(), QStringLiteral("x")));
    QCOMPARE(protocolWindow(QStringLiteral("Brain")), (std::pair<double, double>{40, 80}));
    QCOMPARE(protocolWindow(QStringLiteral("-600/1500")), (std::pair<double, double>{-600, 1500}));
    QVERIFY(!protocolWindow(QStringLiteral("40/0")));
}

QTEST_GUILESS_MAIN(tst_HangingProtocol)
#include "tst_hangingprotocol.moc"
