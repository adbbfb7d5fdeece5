// SPDX-License-Identifier: Apache-2.0
// MultipartReader: DICOMweb's multipart/related bodies parsed as they arrive, split anywhere.

#include "testsupport.h"

#include "spectrum/transfer/multipart.h"

#include <QRandomGenerator>
#include <QTest>

using namespace spectrum;
using spectrum::test::randomBytes;

namespace {

struct Part
{
    QByteArray contentType;
    QByteArray bytes;
};

struct Collected
{
    QList<Part> parts;
    QList<int> ended;
    Error error;
    bool complete = false;
};

/// Parts with a Content-Length header are taken by their length, the others by searching for the delimiter.
enum class Lengths { Declared, Absent };

QByteArray body(const QByteArray &boundary, const QList<QByteArray> &payloads, const QByteArray &preamble = {}, bool close = true,
                Lengths lengths = Lengths::Declared)
{
    QByteArray b = preamble;
    for (const QByteArray &p : payloads) {
        b += "--" + boundary + "\r\nContent-Type: application/dicom\r\n";
        if (lengths == Lengths::Declared)
            b += "Content-Length: " + QByteArray::number(p.size()) + "\r\n";
        b += "\r\n" + p + "\r\n";
    }
    if (close)
        b += "--" + boundary + "--\r\nepilogue";
    return b;
}

/// Feeds `bytes` in pieces cut at `cuts` (sorted offsets).
Collected parse(const QByteArray &boundary, const QByteArray &bytes, const QList<qint64> &cuts)
{
    Collected c;
    MultipartReader r(boundary);
    r.onPartBegin = [&](int index, const MultipartHeaders &h) {
        QCOMPARE(index, c.parts.size());
        c.parts.append({h.value("content-type"), {}});
    };
    r.onPartData = [&](int index, const char *data, qint64 n) { c.parts[index].bytes.append(data, n); };
    r.onPartEnd = [&](int index) { c.ended.append(index); return Error(); };
    qint64 at = 0;
    for (qint64 cut : cuts + QList<qint64>{bytes.size()}) {
        if (Error e = r.feed(bytes.constData() + at, cut - at); e.isError()) {
            c.error = e;
            return c;
        }
        at = cut;
    }
    c.error = r.finish();
    c.complete = r.isComplete();
    return c;
}

} // namespace

Q_DECLARE_METATYPE(Lengths)

class tst_Multipart : public QObject
{
    Q_OBJECT
    static void bothWays()
    {
        QTest::addColumn<Lengths>("lengths");
        QTest::newRow("by Content-Length") << Lengths::Declared;
        QTest::newRow("by searching for the delimiter") << Lengths::Absent;
    }
private Q_SLOTS:
    void boundaryFromContentType_data();
    void boundaryFromContentType();
    void wholeBody();
    void everySplitPointOfASmallBody_data() { bothWays(); }
    void everySplitPointOfASmallBody();
    void randomSplitsOfLargeParts_data() { bothWays(); }
    void randomSplitsOfLargeParts();
    void partEndsAsSoonAsTheNextDelimiterArrives();
    void dataThatAlmostLooksLikeADelimiter();
    void truncatedBodyIsAnError_data() { bothWays(); }
    void truncatedBodyIsAnError();
    void contentLengthThatLiesIsAnError_data();
    void contentLengthThatLiesIsAnError();
    void oversizedHeadersAreAnError();
    void garbageAfterDelimiterIsAnError();
    void errorFromConsumerStopsTheReader();
    void bodyTakenStraightFromTheSource();
};

void tst_Multipart::boundaryFromContentType_data()
{
    QTest::addColumn<QByteArray>("contentType");
    QTest::addColumn<QByteArray>("boundary");
    QTest::newRow("orthanc") << QByteArray("multipart/related; type=\"application/dicom\"; boundary=7a2c1f9e-2bde-4e3a") << QByteArray("7a2c1f9e-2bde-4e3a");
    QTest::newRow("quoted") << QByteArray("Multipart/Related; boundary=\"a b:c\"; type=application/dicom") << QByteArray("a b:c");
    QTest::newRow("not multipart") << QByteArray("application/dicom; boundary=x") << QByteArray();
    QTest::newRow("no boundary") << QByteArray("multipart/related; type=application/dicom") << QByteArray();
    QTest::newRow("orthanc's 105 characters") << QByteArray("multipart/related; boundary=" + QByteArray(105, 'x')) << QByteArray(105, 'x');
    QTest::newRow("too long") << QByteArray("multipart/related; boundary=" + QByteArray(201, 'x')) << QByteArray();
    QTest::newRow("bad character") << QByteArray("multipart/related; boundary=a\r\nb") << QByteArray();
}

void tst_Multipart::boundaryFromContentType()
{
    QFETCH(QByteArray, contentType);
    QFETCH(QByteArray, boundary);
    const Result<QByteArray> b = MultipartReader::boundaryOf(contentType);
    if (boundary.isEmpty()) {
        QVERIFY(!b.isOk());
        QCOMPARE(b.error().code(), ErrorCode::InvalidArgument);
    } else {
        QVERIFY(b.isOk());
        QCOMPARE(b.value(), boundary);
    }
}

void tst_Multipart::wholeBody()
{
    const QList<QByteArray> payloads{randomBytes(1000, 1), QByteArray(), randomBytes(5, 2)};
    const Collected c = parse("b0und", body("b0und", payloads, "a preamble\r\n"), {});
    QCOMPARE(c.error, Error());
    QVERIFY(c.complete);
    QCOMPARE(c.parts.size(), 3);
    for (int i = 0; i < 3; ++i) {
        QCOMPARE(c.parts[i].contentType, QByteArray("application/dicom"));
        QCOMPARE(c.parts[i].bytes, payloads[i]);
    }
    QCOMPARE(c.ended, (QList<int>{0, 1, 2}));
}

void tst_Multipart::everySplitPointOfASmallBody()
{
    QFETCH(Lengths, lengths);
    const QByteArray boundary = "xyz";
    const QList<QByteArray> payloads{"hello\r\n--xy", "\r\n-", "world"};
    const QByteArray b = body(boundary, payloads, {}, true, lengths);
    for (qint64 i = 0; i <= b.size(); ++i) {
        for (qint64 j = i; j <= b.size(); j += 3) {
            const Collected c = parse(boundary, b, {i, j});
            QVERIFY2(!c.error.isError(), qPrintable(QStringLiteral("cut at %1, %2: %3").arg(i).arg(j).arg(c.error.toString())));
            QCOMPARE(c.parts.size(), 3);
            for (int k = 0; k < 3; ++k)
                QCOMPARE(c.parts[k].bytes, payloads[k]);
        }
    }
}

void tst_Multipart::randomSplitsOfLargeParts()
{
    const QByteArray boundary = "DICOMwebBoundary-1234567890";
    QList<QByteArray> payloads;
    for (int i = 0; i < 5; ++i)
        payloads << randomBytes(300000 + i * 7777, 10 + i);
    QFETCH(Lengths, lengths);
    const QByteArray b = body(boundary, payloads, {}, true, lengths);
    QRandomGenerator g(99);
    for (int round = 0; round < 50; ++round) {
        QList<qint64> cuts;
        qint64 at = 0;
        while (true) {
            at += 1 + g.bounded(round % 2 ? 64 : 70000);  // tiny and large pieces
            if (at >= b.size())
                break;
            cuts << at;
        }
        const Collected c = parse(boundary, b, cuts);
        QCOMPARE(c.error, Error());
        QVERIFY(c.complete);
        QCOMPARE(c.parts.size(), payloads.size());
        for (int k = 0; k < payloads.size(); ++k)
            QVERIFY(c.parts[k].bytes == payloads[k]);
    }
}

void tst_Multipart::partEndsAsSoonAsTheNextDelimiterArrives()
{
    MultipartReader r("bb");
    QList<int> ended;
    qint64 dataSeen = 0;
    r.onPartData = [&](int, const char *, qint64 n) { dataSeen += n; };
    r.onPartEnd = [&](int index) { ended << index; return Error(); };
    QCOMPARE(r.feed(QByteArray("--bb\r\n\r\n0123456789")), Error());
    QVERIFY(ended.isEmpty());
    QVERIFY(dataSeen >= 10 - 5);  // all but what could still be the start of a delimiter
    QCOMPARE(r.feed(QByteArray("\r\n--bb\r\n")), Error());
    QCOMPARE(ended, QList<int>{0});  // the first part is complete before the second arrives
    QCOMPARE(dataSeen, qint64(10));
    QCOMPARE(r.feed(QByteArray("\r\nx\r\n--bb--")), Error());
    QCOMPARE(r.finish(), Error());
    QCOMPARE(r.partsCompleted(), 2);
}

void tst_Multipart::dataThatAlmostLooksLikeADelimiter()
{
    const QList<QByteArray> payloads{"\r\n--boundar", "--boundary\r\n", "\r\n--boundaryX\r\n"};
    for (Lengths lengths : {Lengths::Declared, Lengths::Absent}) {
        const Collected ok = parse("boundary", body("boundary", payloads.mid(0, 2), {}, true, lengths), {7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
        QCOMPARE(ok.error, Error());
        QCOMPARE(ok.parts.size(), 2);
        QCOMPARE(ok.parts[0].bytes, payloads[0]);
        QCOMPARE(ok.parts[1].bytes, payloads[1]);
    }
    // The last one contains the full delimiter followed by a character: RFC 2046 forbids that in content. Found
    // by searching, it is a delimiter followed by garbage, which is an error rather than a wrong part…
    const Collected bad = parse("boundary", body("boundary", payloads, {}, true, Lengths::Absent), {});
    QVERIFY(bad.error.isError());
    // …and a part taken by its declared length is all of its bytes, whatever they look like.
    const Collected byLength = parse("boundary", body("boundary", payloads), {});
    QCOMPARE(byLength.error, Error());
    QCOMPARE(byLength.parts.size(), 3);
    QCOMPARE(byLength.parts[2].bytes, payloads[2]);
}

void tst_Multipart::truncatedBodyIsAnError()
{
    QFETCH(Lengths, lengths);
    const QByteArray b = body("bnd", {randomBytes(5000, 3), randomBytes(5000, 4)}, {}, true, lengths);
    for (qint64 cut : {qint64(0), qint64(10), qint64(3000), qint64(5100), b.size() - 12}) {
        const Collected c = parse("bnd", b.left(cut), {});
        QVERIFY2(c.error.isError(), qPrintable(QString::number(cut)));
        QCOMPARE(c.error.code(), ErrorCode::Protocol);
        QVERIFY(!c.complete);
        // A part cut short is never reported as complete.
        for (int i : c.ended)
            QCOMPARE(c.parts[i].bytes.size(), 5000);
    }
}

void tst_Multipart::contentLengthThatLiesIsAnError_data()
{
    QTest::addColumn<int>("declared");
    QTest::addColumn<int>("actual");
    QTest::newRow("shorter than the part") << 900 << 1000;
    QTest::newRow("longer than the part") << 1000 << 900;
    QTest::newRow("longer than the body") << 100000 << 1000;
}

void tst_Multipart::contentLengthThatLiesIsAnError()
{
    QFETCH(int, declared);
    QFETCH(int, actual);
    const QByteArray payload = randomBytes(actual, 7);
    const QByteArray b = "--bnd\r\nContent-Length: " + QByteArray::number(declared) + "\r\n\r\n" + payload + "\r\n--bnd\r\n\r\nnext\r\n--bnd--";
    for (QList<qint64> cuts : {QList<qint64>{}, QList<qint64>{20, 500, 950, 1020}}) {
        cuts.removeIf([&b](qint64 cut) { return cut >= b.size(); });  // pieces inside the body only
        const Collected c = parse("bnd", b, cuts);
        QVERIFY(c.error.isError());
        QCOMPARE(c.error.code(), ErrorCode::Protocol);
        QVERIFY(c.ended.isEmpty());  // the lying part is never reported complete
    }
}

void tst_Multipart::oversizedHeadersAreAnError()
{
    MultipartReader r("b", 1024);
    QByteArray b = "--b\r\nX-Long: " + QByteArray(4000, 'a');
    const Error e = r.feed(b);
    QVERIFY(e.isError());
    QVERIFY(e.message().contains(QStringLiteral("headers")));
    QCOMPARE(r.feed(QByteArray("\r\n\r\n")), e);  // stays failed
}

void tst_Multipart::garbageAfterDelimiterIsAnError()
{
    const Collected c = parse("b", "--b junk\r\n\r\nx\r\n--b--", {});
    QVERIFY(c.error.isError());
}

void tst_Multipart::errorFromConsumerStopsTheReader()
{
    MultipartReader r("b");
    int begun = 0;
    r.onPartBegin = [&](int, const MultipartHeaders &) { ++begun; };
    r.onPartEnd = [&](int) { return Error(ErrorCode::DiskFull, QStringLiteral("cache full")); };
    const Error e = r.feed(body("b", {"one", "two"}));
    QCOMPARE(e.code(), ErrorCode::DiskFull);
    QCOMPARE(begun, 1);
    QCOMPARE(r.finish().code(), ErrorCode::DiskFull);
}

void tst_Multipart::bodyTakenStraightFromTheSource()
{
    // What the WADO-RS client does: a part of known length is copied by the caller straight from the reply into
    // its buffer (takeBody), everything else goes through feed(), in pieces of any size.
    const QByteArray boundary = "b0undary";
    QList<QByteArray> payloads;
    for (int i = 0; i < 6; ++i)
        payloads << randomBytes(i == 2 ? 0 : 20000 + i * 3001, 40 + i);
    const QByteArray b = body(boundary, payloads);
    QRandomGenerator g(7);
    for (int round = 0; round < 40; ++round) {
        Collected c;
        MultipartReader r(boundary);
        r.onPartBegin = [&](int, const MultipartHeaders &) { c.parts.append(Part()); };
        r.onPartData = [&](int index, const char *data, qint64 n) { c.parts[index].bytes.append(data, n); };
        r.onPartEnd = [&](int index) { c.ended.append(index); return Error(); };
        qint64 at = 0, direct = 0;
        while (at < b.size()) {
            const qint64 available = std::min<qint64>(b.size() - at, 1 + g.bounded(round % 2 ? 100 : 9000));
            if (const qint64 wanted = r.bodyBytesWanted(); wanted > 0) {
                QVERIFY(r.isInPartBody());
                const qint64 n = std::min(available, wanted);
                c.parts.last().bytes.append(b.constData() + at, n);
                QCOMPARE(r.takeBody(n), Error());
                direct += n;
                at += n;
                continue;
            }
            const qint64 n = r.isInPartBody() ? available : std::min<qint64>(available, 64);
            QCOMPARE(r.feed(b.constData() + at, n), Error());
            at += n;
        }
        QCOMPARE(r.finish(), Error());
        QVERIFY(r.isComplete());
        QCOMPARE(c.parts.size(), payloads.size());
        QCOMPARE(c.ended.size(), payloads.size());
        qint64 total = 0;
        for (int k = 0; k < payloads.size(); ++k) {
            QVERIFY(c.parts[k].bytes == payloads[k]);
            total += payloads[k].size();
        }
        QVERIFY2(direct > total * 8 / 10, qPrintable(QStringLiteral("%1 of %2 bytes taken straight").arg(direct).arg(total)));
    }

    // Taking more than the part has left is an error, and stays one.
    MultipartReader r(boundary);
    const QByteArray one = body(boundary, {randomBytes(100, 1)});
    const qint64 headerEnd = one.indexOf("\r\n\r\n") + 4;
    QCOMPARE(r.feed(one.constData(), headerEnd), Error());
    QCOMPARE(r.bodyBytesWanted(), 100);
    QCOMPARE(r.takeBody(101).code(), ErrorCode::Protocol);
    QCOMPARE(r.feed(one.constData() + headerEnd, one.size() - headerEnd).code(), ErrorCode::Protocol);
}

QTEST_GUILESS_MAIN(tst_Multipart)
#include "tst_multipart.moc"
