// SPDX-License-Identifier: Apache-2.0
// `--streams auto`: how many connections a pull opens, step by step, from the path's round trip and the rates
// measured. The decisions alone (blobclient/streamsteps.h); the pulls that follow them run in tst_blobtransfer and
// are measured in tests/bench/autostreams.sh.
#include "blobclient/streamsteps.h"  // private to transfer

#include <QTest>

using spectrum::blobwire::StreamSteps;

class tst_StreamSteps : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void aWidePathStartsWithMoreStreams();
    void aLanDoublesWhileTheRateFollows();
    void aWidePathQuadruplesOnceThenDoubles();
    void theRateMustGrowHalfAsMuchAsTheStreams();
    void neverMoreThanTheMaximum();
    void stoppedStaysStopped();
    void measuresOverRoundTrips();
};

void tst_StreamSteps::aWidePathStartsWithMoreStreams()
{
    QCOMPARE(StreamSteps::first(64, 0.1), 2);                          // loopback, a LAN
    QCOMPARE(StreamSteps::first(64, StreamSteps::kWidePathMs), 4);     // 2 ms and more: wide
    QCOMPARE(StreamSteps::first(64, 40), 4);
    QCOMPARE(StreamSteps::first(3, 40), 3);                            // never more than allowed
    QCOMPARE(StreamSteps::first(1, 0.1), 1);
    QCOMPARE(StreamSteps::first(0, 0.1), 1);                           // always one
}

void tst_StreamSteps::aLanDoublesWhileTheRateFollows()
{
    StreamSteps steps(64, 0.2);
    QCOMPARE(steps.next(2, 100e6), 4);  // the first step: double on a LAN
    QCOMPARE(steps.next(4, 160e6), 8);  // ×1.6 for ×2 streams: more
    QVERIFY(!steps.done());
    QCOMPARE(steps.next(8, 170e6), 0);  // ×1.06: the link is the limit
    QVERIFY(steps.done());
}

void tst_StreamSteps::aWidePathQuadruplesOnceThenDoubles()
{
    StreamSteps steps(64, 40);
    QCOMPARE(steps.next(4, 10e6), 16);  // each stream held to its window: four times as many
    QCOMPARE(steps.next(16, 25e6), 32); // ×2.5 for ×4: they still add up
    QCOMPARE(steps.next(32, 50e6), 64); // ×2 for ×2
    QCOMPARE(steps.next(64, 100e6), 0); // at the maximum
    QVERIFY(steps.done());
}

void tst_StreamSteps::theRateMustGrowHalfAsMuchAsTheStreams()
{
    StreamSteps wide(64, 40);
    QCOMPARE(wide.next(4, 10e6), 16);
    QCOMPARE(wide.next(16, 24.9e6), 0);  // ×2.49 for ×4: not enough
    StreamSteps lan(64, 0.2);
    QCOMPARE(lan.next(2, 100e6), 4);
    QCOMPARE(lan.next(4, 149e6), 0);  // ×1.49 for ×2: not enough
    StreamSteps fewerAttached(64, 0.2);  // a step measured with fewer streams than asked for: growth by those attached
    QCOMPARE(fewerAttached.next(2, 100e6), 4);
    QCOMPARE(fewerAttached.next(3, 126e6), 6);  // ×1.26 for ×1.5 (≥ ×1.25)
}

void tst_StreamSteps::neverMoreThanTheMaximum()
{
    StreamSteps steps(6, 0.2);
    QCOMPARE(steps.next(2, 100e6), 4);
    QCOMPARE(steps.next(4, 200e6), 6);  // 8 wanted, 6 allowed
    QCOMPARE(steps.next(6, 300e6), 0);
    QVERIFY(steps.done());
    StreamSteps one(1, 40);
    QCOMPARE(one.next(1, 1e6), 0);
}

void tst_StreamSteps::stoppedStaysStopped()
{
    StreamSteps steps(64, 40);
    QCOMPARE(steps.next(4, 10e6), 16);
    steps.stop();  // the session was lost: the count reached is kept
    QVERIFY(steps.done());
    QCOMPARE(steps.next(16, 100e6), 0);
}

void tst_StreamSteps::measuresOverRoundTrips()
{
    QCOMPARE(StreamSteps(8, 40).settleMs(), 40);     // the first requests' round trip
    QCOMPARE(StreamSteps(8, 40).measureMs(), 80);    // two round trips
    QCOMPARE(StreamSteps(8, 0.1).settleMs(), 1);     // at least a millisecond
    QCOMPARE(StreamSteps(8, 0.1).measureMs(), 30);   // at least 30 ms: enough bytes to say a rate
    QCOMPARE(StreamSteps(8, 2000).settleMs(), 500);  // bounded on a path that slow
    QCOMPARE(StreamSteps(8, 2000).measureMs(), 1000);
}

QTEST_GUILESS_MAIN(tst_StreamSteps)
#include "tst_streamsteps.moc"
