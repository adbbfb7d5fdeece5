// SPDX-License-Identifier: Apache-2.0
// S3: our AWS Signature V4 against botocore's signer (not ours) at a fixed time — keys with spaces, '+', '=' and
// non-ASCII, listings' query strings, header values with runs of spaces, path and virtual-host style, signed and
// unsigned payloads —; then S3Client against a real S3 server started here on loopback (versitygw, which checks
// signatures): a bucket made, objects put, read whole and by range, listed by prefix and page, conditional reads
// and writes, removed; and what a site gets wrong — a wrong secret, an unknown access key, a clock 20 minutes off,
// a bucket that does not exist — each a clear error; and what goes wrong between (tests/support/s3faultproxy.py): a
// store that asks to slow down, waited out, and a bit flipped on the way, caught by the store's own checksum.

#include "spectrum/transfer/crc32c.h"
#include "spectrum/transfer/progressrecord.h"
#include "spectrum/transfer/s3client.h"
#include "spectrum/transfer/stssession.h"
#include "spectrum/transfer/sha256.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"

#include "s3server.h"
#include "testsupport.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QtTest>

using namespace spectrum;
using namespace spectrum::test;

namespace {

const QString kAccess = S3Server::accessKey();
const QString kSecret = S3Server::secretKey();

S3Endpoint endpointOf(quint16 port, const QString &bucket)
{
    S3Endpoint e;
    e.endpoint = QUrl(QStringLiteral("http://127.0.0.1:%1").arg(port));
    e.bucket = bucket;
    e.credentials.accessKey = kAccess;
    e.credentials.secretKey = kSecret;
    e.backoffMs = 20;
    return e;
}

/// download() of `key` into `into` (sized to the object), counting the ranges that came.
Result<S3Object> downloadInto(S3Client &client, const QString &key, QByteArray *into, const S3DownloadOptions &options = {}, int *ranges = nullptr)
{
    return runSync(client.download(
        key,
        [into, ranges](qint64 offset, const QByteArray &bytes) {
            std::memcpy(into->data() + offset, bytes.constData(), size_t(bytes.size()));
            if (ranges)
                ++*ranges;
            return Error();
        },
        options));
}

/// What spectrum-cli needs to reach the test server (or a proxy before it) at `port`, as the AWS tools take it.
QProcessEnvironment awsEnvironment(quint16 port)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("AWS_ACCESS_KEY_ID"), kAccess);
    env.insert(QStringLiteral("AWS_SECRET_ACCESS_KEY"), kSecret);
    env.insert(QStringLiteral("AWS_ENDPOINT_URL"), QStringLiteral("http://127.0.0.1:%1").arg(port));
    return env;
}

/// A process stopped with the test that started it.
struct FaultProxy : QProcess
{
    ~FaultProxy() override
    {
        kill();
        waitForFinished();
    }
};

/// s3faultproxy.py in front of the test server, going wrong as `args` say; its port, 0 when it did not start.
quint16 startFaultProxy(QProcess &proxy, quint16 upstream, const QStringList &args)
{
    proxy.start(QStringLiteral(PYTHON3_EXECUTABLE), QStringList{QStringLiteral(S3_FAULT_PROXY_SCRIPT), QString::number(upstream)} + args);
    if (!proxy.waitForStarted() || !proxy.waitForReadyRead(20000))
        return 0;
    const QByteArray line = proxy.readLine().trimmed();
    return line.startsWith("listening ") ? quint16(line.mid(10).toUInt()) : 0;
}

/// Through a proxy that flips one bit of the first GET answer, the whole object `key` is refused as damaged, the
/// error saying `why`; the next answer is whole and taken.
void flippedGetIsRefused(quint16 server, const QString &key, const QByteArray &whole, const QString &why)
{
    FaultProxy proxy;
    const quint16 port = startFaultProxy(proxy, server, {QStringLiteral("--flip-get"), QStringLiteral("1")});
    QVERIFY(port);
    S3Client through(endpointOf(port, QStringLiteral("spectrum-test")));
    const Result<QByteArray> damaged = runSync(through.get(key));
    QCOMPARE(damaged.error().code(), ErrorCode::Corrupt);
    QVERIFY2(damaged.error().message().contains(why), qPrintable(damaged.error().toString()));
    QCOMPARE(runSync(through.get(key)).value(), whole);
}

} // namespace

class tst_S3 : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void signaturesAreBotocores();
    void objectsGoInAndComeBack();
    void listingsFollowPrefixesAndPages();
    void changedObjectsAreNeverMixed();
    void bigObjectsGoUpInPartsAndComeBackOverSeveralConnections();
    void aFailedUploadLeavesNoPartsBehind();
    void wrongSettingsSayWhatIsWrong();
    void listingsThatAreNotListingsAreRefused();
    void keysAreSentAsWritten();
    void theCommandLineSpeaksS3();
    void studiesGoInAndComeBackThroughAnS3Store();
    void aThrottlingStoreIsWaitedOut();
    void aByteFlippedOnTheWayIsCaught();
    void crc32cIsCastagnolis();
    void checksumsAreComparedAsDigests();
    void objectsPutWithACrc32cAreCheckedAgainstIt();
    void aPutKilledMidwayResumesOrIsAborted();
    void aGetKilledMidwayResumesAndIsChecked();
    void tokenServiceAnswersAreReadStrictly();

private:
    S3Server m_server;
    std::unique_ptr<S3Client> m_client;
};

void tst_S3::initTestCase()
{
    QVERIFY2(m_server.start(), "the S3 test server did not start");
    m_client = std::make_unique<S3Client>(endpointOf(m_server.port(), QStringLiteral("spectrum-test")));
    const Result<Done> made = runSync(m_client->createBucket());
    QVERIFY2(made.isOk(), qPrintable(made.isOk() ? QString() : made.error().toString()));
}

void tst_S3::signaturesAreBotocores()
{
    const ProcessResult venv = run(QStringLiteral(PYVENV_SCRIPT), {QStringLiteral(TEST_VENV_DIR), QStringLiteral(TEST_PEERS_REQUIREMENTS)}, 600000);
    QVERIFY2(venv.ok(), venv.err.constData());
    const QDateTime when(QDate(2026, 11, 25), QTime(12, 0, 0), Qt::UTC);
    struct Case
    {
        QString scheme;
        bool virtualHosted;
        QByteArray method;
        QString key;
        QList<QPair<QString, QString>> query;
        QList<QPair<QByteArray, QByteArray>> headers;
        QByteArray body;
    };
    const QList<Case> cases{
        {QStringLiteral("http"), false, "GET", QStringLiteral("studies/1.2.3/a b+c=d/ü 胸部.dcm"), {}, {{"range", "bytes=100-199"}}, {}},
        {QStringLiteral("http"), false, "PUT", QStringLiteral("x/y.dcm"), {}, {{"content-type", "application/dicom"}, {"if-none-match", "*"}}, "some bytes"},
        {QStringLiteral("https"), false, "PUT", QStringLiteral("x/y.dcm"), {}, {{"content-type", "application/octet-stream"}, {"x-amz-meta-note", "  two   spaces  "}}, "payload"},
        {QStringLiteral("http"), false, "GET", QString(),
         {{QStringLiteral("list-type"), QStringLiteral("2")}, {QStringLiteral("prefix"), QStringLiteral("studies/a b/ü")},
          {QStringLiteral("continuation-token"), QStringLiteral("1/2+3=4==")}, {QStringLiteral("max-keys"), QStringLiteral("1000")}},
         {}, {}},
        {QStringLiteral("https"), true, "HEAD", QStringLiteral("a~b_c-d.e"), {}, {{"if-match", "\"0123abcd\""}}, {}},
    };
    QJsonArray requests;
    QList<S3Client::Prepared> ours;
    for (const Case &c : cases) {
        S3Endpoint e = endpointOf(9000, QStringLiteral("my-bucket"));
        e.endpoint = QUrl(QStringLiteral("%1://store.example.org:9000").arg(c.scheme));
        e.virtualHosted = c.virtualHosted;
        e.credentials.region = QStringLiteral("eu-central-1");
        const S3Client client(e);
        ours << client.prepare(c.method, c.key, c.query, c.headers, c.body, when);
        QJsonArray query, headers;
        for (const auto &[name, value] : c.query)
            query.append(QJsonArray{name, value});
        for (const auto &[name, value] : c.headers)
            headers.append(QJsonArray{QString::fromLatin1(name), QString::fromLatin1(value)});
        requests.append(QJsonObject{{QStringLiteral("method"), QString::fromLatin1(c.method)},
                                    {QStringLiteral("scheme"), c.scheme},
                                    {QStringLiteral("host"), c.virtualHosted ? QStringLiteral("my-bucket.store.example.org:9000") : QStringLiteral("store.example.org:9000")},
                                    {QStringLiteral("bucket"), e.bucket},
                                    {QStringLiteral("key"), c.key},
                                    {QStringLiteral("virtual"), c.virtualHosted},
                                    {QStringLiteral("query"), query},
                                    {QStringLiteral("headers"), headers},
                                    {QStringLiteral("body"), QString::fromLatin1(c.body)},
                                    {QStringLiteral("unsigned"), c.scheme == QLatin1String("https")},
                                    {QStringLiteral("access"), kAccess},
                                    {QStringLiteral("secret"), kSecret},
                                    {QStringLiteral("region"), e.credentials.region},
                                    {QStringLiteral("timestamp"), QStringLiteral("20261125T120000Z")}});
    }
    QProcess botocore;
    botocore.start(QStringLiteral(TEST_VENV_DIR "/bin/python"), {QStringLiteral(S3_SIGN_CHECK_SCRIPT)});
    QVERIFY(botocore.waitForStarted());
    botocore.write(QJsonDocument(requests).toJson());
    botocore.closeWriteChannel();
    QVERIFY(botocore.waitForFinished(60000));
    QVERIFY2(botocore.exitCode() == 0, botocore.readAllStandardError().constData());
    const QJsonArray theirs = QJsonDocument::fromJson(botocore.readAllStandardOutput()).array();
    QCOMPARE(theirs.size(), cases.size());
    for (int i = 0; i < cases.size(); ++i) {
        QByteArray authorization;
        for (const auto &[name, value] : ours[i].headers)
            if (name == "Authorization")
                authorization = value;
        QCOMPARE(QString::fromLatin1(authorization), theirs[i].toObject().value(QStringLiteral("authorization")).toString());
        // The URL we send is the one signed: its path and query as botocore encoded them.
        const QStringList canonical = theirs[i].toObject().value(QStringLiteral("canonical")).toString().split(QLatin1Char('\n'));
        QCOMPARE(QString::fromLatin1(ours[i].url.toEncoded(QUrl::RemoveScheme | QUrl::RemoveAuthority | QUrl::RemoveQuery)), canonical[1]);
        QCOMPARE(QString::fromLatin1(ours[i].url.query(QUrl::FullyEncoded).toLatin1()), canonical[2]);
    }
}

void tst_S3::objectsGoInAndComeBack()
{
    const QByteArray blob = randomBytes(3 * 1024 * 1024 + 17, 7);
    const QString key = QStringLiteral("studies/1.2.840.1/séries 2/inst+1=a.dcm");
    const Result<S3Object> put = runSync(m_client->put(key, blob));
    QVERIFY2(put.isOk(), qPrintable(put.isOk() ? QString() : put.error().toString()));
    QVERIFY(!put.value().etag.isEmpty());
    const Result<S3Object> head = runSync(m_client->head(key));
    QVERIFY2(head.isOk(), qPrintable(head.isOk() ? QString() : head.error().toString()));
    QCOMPARE(head.value().size, blob.size());
    QCOMPARE(head.value().etag, put.value().etag);
    const Result<QByteArray> whole = runSync(m_client->get(key));
    QVERIFY(whole.isOk());
    QVERIFY(whole.value() == blob);
    // Ranges: in the middle, to the end, and one reaching past the end (the object's tail).
    S3GetOptions middle;
    middle.offset = 1000003, middle.length = 65536;
    const Result<QByteArray> part = runSync(m_client->get(key, middle));
    QVERIFY2(part.isOk(), qPrintable(part.isOk() ? QString() : part.error().toString()));
    QVERIFY(part.value() == blob.mid(1000003, 65536));
    S3GetOptions tail;
    tail.offset = blob.size() - 100;
    QVERIFY(runSync(m_client->get(key, tail)).value() == blob.right(100));
    S3GetOptions past;
    past.offset = blob.size() - 10, past.length = 1000;
    QVERIFY(runSync(m_client->get(key, past)).value() == blob.right(10));
    S3GetOptions beyond;
    beyond.offset = blob.size() + 10, beyond.length = 5;
    QCOMPARE(runSync(m_client->get(key, beyond)).error().code(), ErrorCode::OutOfRange);
    // Gone when removed.
    QVERIFY(runSync(m_client->remove(key)).isOk());
    const Result<QByteArray> gone = runSync(m_client->get(key));
    QCOMPARE(gone.error().code(), ErrorCode::NotFound);
}

void tst_S3::listingsFollowPrefixesAndPages()
{
    for (int i = 0; i < 7; ++i)
        QVERIFY(runSync(m_client->put(QStringLiteral("list/s1/i%1.dcm").arg(i), QByteArray(i + 1, 'x'))).isOk());
    QVERIFY(runSync(m_client->put(QStringLiteral("list/s2/a.dcm"), "y")).isOk());
    QVERIFY(runSync(m_client->put(QStringLiteral("listing-not/b.dcm"), "z")).isOk());
    // Folders under a prefix.
    const Result<S3Listing> folders = runSync(m_client->list(QStringLiteral("list/"), QStringLiteral("/")));
    QVERIFY2(folders.isOk(), qPrintable(folders.isOk() ? QString() : folders.error().toString()));
    QCOMPARE(folders.value().prefixes, (QStringList{QStringLiteral("list/s1/"), QStringLiteral("list/s2/")}));
    QVERIFY(folders.value().objects.isEmpty());
    // Pages of three: every object once, in key order, with its size.
    QStringList keys;
    QString token;
    int pages = 0;
    do {
        const Result<S3Listing> page = runSync(m_client->list(QStringLiteral("list/s1/"), {}, token, 3));
        QVERIFY2(page.isOk(), qPrintable(page.isOk() ? QString() : page.error().toString()));
        QVERIFY(page.value().objects.size() <= 3);
        for (const S3Object &o : page.value().objects) {
            keys << o.key;
            QCOMPARE(o.size, qint64(o.key.mid(9, 1).toInt() + 1));
            QVERIFY(!o.etag.isEmpty());
        }
        token = page.value().truncated ? page.value().nextToken : QString();
        ++pages;
    } while (!token.isEmpty() && pages < 10);
    QCOMPARE(pages, 3);
    QCOMPARE(keys.size(), 7);
    QCOMPARE(keys.first(), QStringLiteral("list/s1/i0.dcm"));
    QCOMPARE(keys.last(), QStringLiteral("list/s1/i6.dcm"));
}

void tst_S3::changedObjectsAreNeverMixed()
{
    const QString key = QStringLiteral("conditional/blob");
    const Result<S3Object> first = runSync(m_client->put(key, "first version"));
    QVERIFY(first.isOk());
    // Written only when absent: refused once it exists.
    S3PutOptions absent;
    absent.ifNoneMatch = true;
    const Result<S3Object> again = runSync(m_client->put(key, "would overwrite", absent));
    QCOMPARE(again.error().code(), ErrorCode::Changed);
    // A range read bound to the first version's ETag: fine, then refused once the object changed.
    S3GetOptions bound;
    bound.offset = 0, bound.length = 5, bound.ifMatch = first.value().etag;
    QCOMPARE(runSync(m_client->get(key, bound)).value(), QByteArray("first"));
    const Result<S3Object> second = runSync(m_client->put(key, "second version"));
    QVERIFY(second.isOk());
    QVERIFY(second.value().etag != first.value().etag);
    bound.offset = 6, bound.length = 7;
    const Result<QByteArray> spliced = runSync(m_client->get(key, bound));
    QVERIFY2(spliced.error().code() == ErrorCode::Changed, qPrintable(spliced.error().toString()));
    // A write bound to a version that is no longer there is refused too.
    S3PutOptions over;
    over.ifMatch = first.value().etag;
    QCOMPARE(runSync(m_client->put(key, "third", over)).error().code(), ErrorCode::Changed);
    over.ifMatch = second.value().etag;
    QVERIFY(runSync(m_client->put(key, "third", over)).isOk());
}

void tst_S3::bigObjectsGoUpInPartsAndComeBackOverSeveralConnections()
{
    // 23 MiB + 5 bytes in 5 MiB parts: 5 parts, the last short; three in flight at once.
    const QByteArray blob = randomBytes((23 << 20) + 5, 11);
    S3UploadOptions up;
    up.partSize = 5 << 20;
    up.parallel = 3;
    ResultJob<S3Object> *job = m_client->upload(QStringLiteral("big/study.bin"), S3Source::of(blob), up);
    qint64 lastProgress = 0;
    connect(job, &Job::progress, this, [&](qint64 done, qint64 total) {
        QVERIFY(done >= lastProgress && total == blob.size());
        lastProgress = done;
    });
    const Result<S3Object> uploaded = runSync(job);
    QVERIFY2(uploaded.isOk(), qPrintable(uploaded.isOk() ? QString() : uploaded.error().toString()));
    QCOMPARE(lastProgress, qint64(blob.size()));
    // The store's checksum of the whole is the composite of the parts' SHA-256s, as we computed it.
    QList<QByteArray> digests;
    for (qint64 at = 0; at < blob.size(); at += 5 << 20)
        digests << QCryptographicHash::hash(blob.mid(at, 5 << 20), QCryptographicHash::Sha256);
    QCOMPARE(digests.size(), 5);
    QCOMPARE(uploaded.value().checksumSha256, s3::compositeChecksum(digests));
    QVERIFY(uploaded.value().etag.endsWith("-5\""));  // a multipart ETag: its number of parts
    const Result<S3Object> head = runSync(m_client->head(QStringLiteral("big/study.bin")));
    QVERIFY2(head.isOk(), qPrintable(head.isOk() ? QString() : head.error().toString()));
    QCOMPARE(head.value().size, qint64(blob.size()));
    QVERIFY(std::abs(head.value().lastModified.secsTo(QDateTime::currentDateTimeUtc())) < 300);
    QCOMPARE(head.value().checksumSha256, s3::compositeChecksum(digests));  // as the store keeps it, not our copy
    QVERIFY(runSync(m_client->pendingUploads(QStringLiteral("big/"))).value().isEmpty());

    // Back over four connections, into place as each range comes: checked, no range crosses a part (5 MiB, the
    // last shorter), each part is hashed once its ranges are in, and their composite held against the store's.
    QByteArray back(blob.size(), '\0');
    int ranges = 0;
    S3DownloadOptions down;
    down.streams = 4;
    down.chunk = 3 << 20;
    const Result<S3Object> downloaded = downloadInto(*m_client, QStringLiteral("big/study.bin"), &back, down, &ranges);
    QVERIFY2(downloaded.isOk(), qPrintable(downloaded.isOk() ? QString() : downloaded.error().toString()));
    int expected = 0;  // 3 MiB ranges, none across a part: 3 + 2 MiB per part
    for (qint64 part = 0; part < blob.size(); part += 5 << 20)
        expected += int((std::min<qint64>(5 << 20, blob.size() - part) + (3 << 20) - 1) / (3 << 20));
    QCOMPARE(ranges, expected);
    QVERIFY(downloaded.value().verified);
    QVERIFY(back == blob);
    // Unchecked (asked so), in the 3 MiB ranges asked for.
    down.verify = false;
    ranges = 0;
    back.fill('\0');
    const Result<S3Object> unchecked = downloadInto(*m_client, QStringLiteral("big/study.bin"), &back, down, &ranges);
    QVERIFY(unchecked.isOk());
    QVERIFY(!unchecked.value().verified);
    QCOMPARE(ranges, int((blob.size() + (3 << 20) - 1) / (3 << 20)));
    QVERIFY(back == blob);

    // An object smaller than one part goes up in one PUT.
    const Result<S3Object> small = runSync(m_client->upload(QStringLiteral("big/small.bin"), S3Source::of("tiny")));
    QVERIFY(small.isOk());
    QCOMPARE(runSync(m_client->get(QStringLiteral("big/small.bin"))).value(), QByteArray("tiny"));

    // The object replaced while a download runs: a range of the new version is never put beside the old.
    QVERIFY(runSync(m_client->put(QStringLiteral("big/changing.bin"), randomBytes(4 << 20, 1))).isOk());
    S3DownloadOptions oneByOne;
    oneByOne.streams = 1;
    oneByOne.chunk = 1 << 20;

    int taken = 0;
    const Result<S3Object> spliced = runSync(m_client->download(
        QStringLiteral("big/changing.bin"),
        [&](qint64, const QByteArray &) {
            if (++taken == 1)
                runSync(m_client->put(QStringLiteral("big/changing.bin"), randomBytes(4 << 20, 2)));
            return Error();
        },
        oneByOne));
    QCOMPARE(spliced.error().code(), ErrorCode::Changed);
    QCOMPARE(taken, 1);
}

void tst_S3::aFailedUploadLeavesNoPartsBehind()
{
    // The source fails while the third part is read: the upload fails with that error, and the parts sent are
    // aborted at the store — none left pending.
    const QByteArray blob = randomBytes(16 << 20, 3);
    S3Source failing = S3Source::of(blob);
    failing.read = [blob](qint64 offset, qint64 length) -> Result<QByteArray> {
        if (offset >= 10 << 20)
            return Error(ErrorCode::Io, QStringLiteral("the disk went away"));
        return blob.mid(offset, length);
    };
    S3UploadOptions up;
    up.partSize = 5 << 20;
    up.parallel = 3;  // two parts in flight when the third cannot be read: they are stopped, then the upload aborted
    const Result<S3Object> failed = runSync(m_client->upload(QStringLiteral("aborted/x.bin"), failing, up));
    QCOMPARE(failed.error().code(), ErrorCode::Io);
    QTRY_VERIFY_WITH_TIMEOUT(runSync(m_client->pendingUploads(QStringLiteral("aborted/"))).isOk()
                                 && runSync(m_client->pendingUploads(QStringLiteral("aborted/"))).value().isEmpty(),
                             10000);
    QCOMPARE(runSync(m_client->head(QStringLiteral("aborted/x.bin"))).error().code(), ErrorCode::NotFound);

    // An upload begun elsewhere (a workstation killed mid-upload) is found and aborted.
    S3UploadOptions slow;
    slow.partSize = 5 << 20;
    ResultJob<S3Object> *job = m_client->upload(QStringLiteral("aborted/killed.bin"), S3Source::of(blob), slow);
    QSignalSpy progress(job, &Job::progress);
    job->start(ExecutionPolicy::Async);
    QVERIFY(progress.wait(20000));  // a part is in
    const Result<QList<QPair<QString, QString>>> pending = runSync(m_client->pendingUploads(QStringLiteral("aborted/")));
    QVERIFY(pending.isOk());
    QCOMPARE(pending.value().size(), 1);
    job->cancel();  // cancelling aborts it too; the listing above found it first
    QTRY_VERIFY_WITH_TIMEOUT(runSync(m_client->pendingUploads(QStringLiteral("aborted/"))).value().isEmpty(), 10000);
}

void tst_S3::wrongSettingsSayWhatIsWrong()
{
    auto errorOf = [&](const S3Endpoint &e, qint64 skewMs = 0) {
        S3Client client(e);
        client.setClockOffsetMs(skewMs);
        return runSync(client.get(QStringLiteral("any"))).error();
    };
    S3Endpoint wrongSecret = endpointOf(m_server.port(), QStringLiteral("spectrum-test"));
    wrongSecret.credentials.secretKey = QStringLiteral("not the secret");
    Error e = errorOf(wrongSecret);
    QCOMPARE(e.code(), ErrorCode::Authentication);
    QVERIFY2(e.message().contains(QLatin1String("secret key is wrong")), qPrintable(e.message()));
    QVERIFY2(!e.message().contains(QLatin1String("not the secret")), qPrintable(e.message()));  // never the secret itself

    S3Endpoint unknownKey = endpointOf(m_server.port(), QStringLiteral("spectrum-test"));
    unknownKey.credentials.accessKey = QStringLiteral("AKIANOBODY");
    e = errorOf(unknownKey);
    QCOMPARE(e.code(), ErrorCode::Authentication);
    QVERIFY2(e.message().contains(QLatin1String("does not know this access key")), qPrintable(e.message()));

    e = errorOf(endpointOf(m_server.port(), QStringLiteral("spectrum-test")), 20 * 60 * 1000);
    QCOMPARE(e.code(), ErrorCode::Authentication);
    QVERIFY2(e.message().contains(QLatin1String("clock")), qPrintable(e.message()));

    // A HEAD's refusal has no body to say why: the message names the likely causes.
    S3Client wrong(wrongSecret);
    e = runSync(wrong.head(QStringLiteral("any"))).error();
    QCOMPARE(e.code(), ErrorCode::Authentication);
    QVERIFY2(e.message().contains(QLatin1String("wrong secret")), qPrintable(e.message()));

    e = errorOf(endpointOf(m_server.port(), QStringLiteral("no-such-bucket")));
    QCOMPARE(e.code(), ErrorCode::NotFound);
    QVERIFY2(e.message().contains(QLatin1String("bucket 'no-such-bucket' does not exist")), qPrintable(e.message()));

    // Nobody listening: a network error, not a hang.
    e = errorOf(endpointOf(freePort(), QStringLiteral("spectrum-test")));
    QCOMPARE(e.code(), ErrorCode::Network);
}

void tst_S3::listingsThatAreNotListingsAreRefused()
{
    QCOMPARE(s3::parseListing("<Error><Code>X</Code></Error>").error().code(), ErrorCode::Protocol);
    QCOMPARE(s3::parseListing("<ListBucketResult><Contents><Key>a</Key><Size>-4</Size></Contents></ListBucketResult>").error().code(), ErrorCode::Protocol);
    QCOMPARE(s3::parseListing("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>").error().code(), ErrorCode::Protocol);
    QCOMPARE(s3::parseListing("<ListBucketResult><Contents><Key>a</Key>").error().code(), ErrorCode::Protocol);
    QCOMPARE(s3::parseListing("").error().code(), ErrorCode::Protocol);
    const Result<S3Listing> fine = s3::parseListing(
        "<?xml version=\"1.0\"?><ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Contents><Key>a&amp;b</Key><Size>5</Size>"
        "<ETag>&quot;x&quot;</ETag></Contents><IsTruncated>false</IsTruncated></ListBucketResult>");
    QVERIFY(fine.isOk());
    QCOMPARE(fine.value().objects.size(), 1);
    QCOMPARE(fine.value().objects[0].key, QStringLiteral("a&b"));
    QCOMPARE(fine.value().objects[0].etag, QByteArray("\"x\""));
    const S3ErrorAnswer slow = s3::parseError("<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>");
    QCOMPARE(slow.code, QStringLiteral("SlowDown"));
    // What each answer means for whoever decides to try again: damaged bytes and timeouts may pass next time,
    // refusals never do.
    auto code = [](int status, const char *body) { return s3::errorFor(status, body, QStringLiteral("GET"), QStringLiteral("b")).code(); };
    QCOMPARE(code(503, "<Error><Code>SlowDown</Code></Error>"), ErrorCode::Busy);
    QCOMPARE(code(429, ""), ErrorCode::Busy);
    QCOMPARE(code(400, "<Error><Code>BadDigest</Code></Error>"), ErrorCode::Corrupt);
    QCOMPARE(code(400, "<Error><Code>XAmzContentSHA256Mismatch</Code></Error>"), ErrorCode::Corrupt);
    QCOMPARE(code(400, "<Error><Code>RequestTimeout</Code></Error>"), ErrorCode::Timeout);
    QCOMPARE(code(301, "<Error><Code>PermanentRedirect</Code></Error>"), ErrorCode::InvalidArgument);
    QCOMPARE(code(501, ""), ErrorCode::Unsupported);
    QCOMPARE(code(409, "<Error><Code>BucketAlreadyOwnedByYou</Code></Error>"), ErrorCode::InvalidArgument);
    QCOMPARE(code(404, ""), ErrorCode::NotFound);
    QCOMPARE(code(502, ""), ErrorCode::Network);
    // A completion answered 200 with an error inside: busy (asked again), or refused.
    QCOMPARE(s3::parseCompleted("<Error><Code>InternalError</Code></Error>").error().code(), ErrorCode::Busy);
    QCOMPARE(s3::parseCompleted("<Error><Code>InvalidPart</Code></Error>").error().code(), ErrorCode::InvalidArgument);
    QCOMPARE(s3::parseListing("<ListBucketResult><Contents><Key>a</Key></Contents></ListBucketResult>").error().code(), ErrorCode::Protocol);  // no size
}

void tst_S3::keysAreSentAsWritten()
{
    // Parts a proxy or server may normalise away, so the request would not be the one signed: refused here.
    for (const QString &key : {QStringLiteral("a/../b"), QStringLiteral("./a"), QStringLiteral("a//b"), QStringLiteral("/a"), QStringLiteral("a\nb")}) {
        QCOMPARE(runSync(m_client->put(key, "x")).error().code(), ErrorCode::InvalidKey);
        QCOMPARE(runSync(m_client->get(key)).error().code(), ErrorCode::InvalidKey);
    }
    // Everything else goes as it is, and comes back under the same key.
    const QString odd = QStringLiteral("k/!*'();:@&=+$,?#[] ~%ü.dcm");
    QVERIFY(runSync(m_client->put(odd, "odd")).isOk());
    QCOMPARE(runSync(m_client->get(odd)).value(), QByteArray("odd"));
    const Result<S3Listing> listed = runSync(m_client->list(QStringLiteral("k/")));
    QVERIFY(listed.isOk());
    QCOMPARE(listed.value().objects.size(), 1);
    QCOMPARE(listed.value().objects[0].key, odd);
}

void tst_S3::theCommandLineSpeaksS3()
{
    // spectrum-cli get, put, stat and ls with s3:// addresses, the store and credentials from the AWS tools'
    // variables (never on the command line).
    QTemporaryDir dir;
    const QByteArray blob = randomBytes((20 << 20) + 3, 21);
    QVERIFY(writeFile(dir.filePath(QStringLiteral("in.bin")), blob));
    auto cli = [&](const QStringList &args, const QString &secret = kSecret) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("AWS_ENDPOINT_URL"), QStringLiteral("http://127.0.0.1:%1").arg(m_server.port()));
        env.insert(QStringLiteral("AWS_ACCESS_KEY_ID"), kAccess);
        env.insert(QStringLiteral("AWS_SECRET_ACCESS_KEY"), secret);
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), args);
        p.waitForFinished(120000);
        return std::make_tuple(p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError());
    };
    const QString url = QStringLiteral("s3://spectrum-test/cli/in.bin");
    auto [rc, out, err] = cli({QStringLiteral("put"), url, dir.filePath(QStringLiteral("in.bin")), QStringLiteral("--chunk"), QStringLiteral("5")});
    QVERIFY2(rc == 0, err.constData());
    QVERIFY2(out.contains("=-5 (checked by the store)"), out.constData());  // five parts, the composite checksum
    std::tie(rc, out, err) = cli({QStringLiteral("stat"), url});
    QVERIFY2(rc == 0 && out.contains(QByteArray::number(blob.size()) + " bytes"), out.constData());
    std::tie(rc, out, err) = cli({QStringLiteral("ls"), QStringLiteral("s3://spectrum-test/cli/")});
    QVERIFY2(rc == 0 && out.contains("cli/in.bin"), out.constData());
    std::tie(rc, out, err) = cli({QStringLiteral("get"), url, dir.filePath(QStringLiteral("back.bin")), QStringLiteral("--chunk"), QStringLiteral("3")});
    QVERIFY2(rc == 0, err.constData());
    QVERIFY(readFile(dir.filePath(QStringLiteral("back.bin"))) == blob);
    std::tie(rc, out, err) = cli({QStringLiteral("get"), url, QStringLiteral("-")});
    QVERIFY2(rc == 0, err.constData());
    QVERIFY(out == blob);  // standard output in order, whatever order the ranges came in
    // A refusal is said, and no file is left half-written.
    std::tie(rc, out, err) = cli({QStringLiteral("get"), url, dir.filePath(QStringLiteral("refused.bin"))}, QStringLiteral("wrong"));
    QCOMPARE(rc, 1);
    QVERIFY2(err.contains("refused access"), err.constData());
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("refused.bin"))));
}

void tst_S3::studiesGoInAndComeBackThroughAnS3Store()
{
    // An s3 store in the configuration (its secret sealed), tested, sent a study by two workstations at once (each
    // half of it: the study's index keeps both halves), found, listed and fetched back byte for byte.
    QTemporaryDir dir;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_CONFIG"), dir.filePath(QStringLiteral("stores.json")));
    env.insert(QStringLiteral("SPECTRUM_CACHE_DIR"), dir.filePath(QStringLiteral("cache")));
    auto start = [&](const QStringList &args) {
        auto *p = new QProcess(this);
        p->setProcessEnvironment(env);
        p->start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), args);
        return p;
    };
    auto cli = [&](const QStringList &args) {
        std::unique_ptr<QProcess> p(start(args));
        p->waitForFinished(120000);
        return std::make_tuple(p->exitCode(), p->readAllStandardOutput(), p->readAllStandardError());
    };
    QVERIFY(writePrivateFile(dir.filePath(QStringLiteral("secret")), kSecret.toUtf8()));
    auto [rc, out, err] = cli({QStringLiteral("stores"), QStringLiteral("add"), QStringLiteral("bucket"), QStringLiteral("--kind"), QStringLiteral("s3"),
                               QStringLiteral("--url"), QStringLiteral("http://127.0.0.1:%1").arg(m_server.port()), QStringLiteral("--bucket"),
                               QStringLiteral("spectrum-test"), QStringLiteral("--prefix"), QStringLiteral("archive/"), QStringLiteral("--access-key"), kAccess,
                               QStringLiteral("--secret-key-file"), dir.filePath(QStringLiteral("secret"))});
    QVERIFY2(rc == 0, err.constData());
    QVERIFY(!readFile(dir.filePath(QStringLiteral("stores.json"))).contains(kSecret.toUtf8()));  // sealed, never in clear
    std::tie(rc, out, err) = cli({QStringLiteral("stores"), QStringLiteral("test")});
    QVERIFY2(rc == 0 && out.contains("ok"), out.constData());
    std::tie(rc, out, err) = cli({QStringLiteral("demo"), QStringLiteral("--out"), dir.filePath(QStringLiteral("demo")), QStringLiteral("--ct-slices"),
                                  QStringLiteral("12"), QStringLiteral("--only"), QStringLiteral("demo-ct")});
    QVERIFY2(rc == 0, err.constData());
    const QDir demo(dir.filePath(QStringLiteral("demo/demo-ct")));
    const QStringList files = demo.entryList({QStringLiteral("*.dcm")}, QDir::Files, QDir::Name);
    QCOMPARE(files.size(), 12);
    QStringList first{QStringLiteral("export"), QStringLiteral("--store"), QStringLiteral("bucket")}, second = first;
    for (int i = 0; i < files.size(); ++i)
        (i % 2 ? second : first) << demo.filePath(files[i]);
    std::unique_ptr<QProcess> a(start(first)), b(start(second));
    QVERIFY(a->waitForFinished(120000) && b->waitForFinished(120000));
    QVERIFY2(a->exitCode() == 0 && b->exitCode() == 0, (a->readAllStandardError() + b->readAllStandardError()).constData());
    const Result<DicomIdentity> one = readDicomIdentity(ByteView(readFile(demo.filePath(files[0]))));
    QVERIFY(one.isOk());
    const QString study = one.value().studyInstanceUid;
    std::tie(rc, out, err) = cli({QStringLiteral("find"), QStringLiteral("--store"), QStringLiteral("bucket")});
    QVERIFY2(rc == 0 && out.contains(study.toLatin1()) && out.contains("12 instance(s)"), out.constData());  // both halves in the index
    std::tie(rc, out, err) = cli({QStringLiteral("fetch"), QStringLiteral("--store"), QStringLiteral("bucket"), study, QStringLiteral("--out"), dir.filePath(QStringLiteral("back"))});
    QVERIFY2(rc == 0, err.constData());
    int same = 0;
    for (const QString &f : files) {
        const QByteArray original = readFile(demo.filePath(f));
        const Result<DicomIdentity> id = readDicomIdentity(ByteView(original));
        same += readFile(dir.filePath(QStringLiteral("back/%1.dcm").arg(id.value().sopInstanceUid))) == original;
    }
    QCOMPARE(same, 12);
    // They went up with a CRC32C, which every fetch checks (decision 0025).
    const Result<S3Object> kept = runSync(m_client->head(QStringLiteral("archive/%1/%2/%3.dcm").arg(study, one.value().seriesInstanceUid, one.value().sopInstanceUid)));
    QVERIFY2(kept.isOk() && !kept.value().checksumCrc32c.isEmpty(), qPrintable(kept.isOk() ? QStringLiteral("no CRC32C") : kept.error().toString()));
}

// A store that asks to slow down (503 SlowDown) is asked again after a backoff, and the request goes through; one
// that keeps asking is given up on with its words, not hammered.
void tst_S3::aThrottlingStoreIsWaitedOut()
{
    FaultProxy proxy;
    const quint16 port = startFaultProxy(proxy, m_server.port(), {QStringLiteral("--slowdown"), QStringLiteral("2")});
    QVERIFY(port);
    S3Client client(endpointOf(port, QStringLiteral("spectrum-test")));  // four tries, from 20 ms on
    const QByteArray bytes = randomBytes(5000, 21);
    const Result<S3Object> put = runSync(client.put(QStringLiteral("throttled/a.bin"), bytes));
    QVERIFY2(put.isOk(), qPrintable(put.isOk() ? QString() : put.error().toString()));
    QCOMPARE(runSync(client.get(QStringLiteral("throttled/a.bin"))).value(), bytes);
    QByteArray said;
    QTRY_COMPARE((said += proxy.readAllStandardError()).count("503 SlowDown"), qsizetype(2));

    FaultProxy stubborn;
    const quint16 busy = startFaultProxy(stubborn, m_server.port(), {QStringLiteral("--slowdown"), QStringLiteral("100")});
    QVERIFY(busy);
    S3Client patient(endpointOf(busy, QStringLiteral("spectrum-test")));
    const Result<QByteArray> refused = runSync(patient.get(QStringLiteral("throttled/a.bin")));
    QCOMPARE(refused.error().code(), ErrorCode::Busy);
    QVERIFY2(refused.error().message().contains(QLatin1String("SlowDown")) || refused.error().message().contains(QLatin1String("slow down")),
             qPrintable(refused.error().toString()));
    QByteArray stubbornSaid;
    QTRY_COMPARE((stubbornSaid += stubborn.readAllStandardError()).count("503 SlowDown"), qsizetype(4));  // the four tries
    QTest::qWait(300);
    QCOMPARE((stubbornSaid += stubborn.readAllStandardError()).count("503 SlowDown"), qsizetype(4));  // and no more
}

// One bit flipped between the store and us, where nothing else would see it (plain HTTP): a whole object is
// checked against the SHA-256 the store keeps of it before anyone gets its bytes; a multipart download's parts
// are hashed as they land and their composite held against the store's — the download fails, and a file it was
// writing is never left behind.
void tst_S3::aByteFlippedOnTheWayIsCaught()
{
    const QByteArray small = randomBytes(300000, 22), big = randomBytes((12 << 20) + 3, 23);
    QVERIFY(runSync(m_client->put(QStringLiteral("flipped/small.bin"), small)).isOk());
    S3UploadOptions parts;
    parts.partSize = 5 << 20;
    QVERIFY(runSync(m_client->upload(QStringLiteral("flipped/big.bin"), S3Source::of(big), parts)).isOk());

    flippedGetIsRefused(m_server.port(), QStringLiteral("flipped/small.bin"), small, QStringLiteral("do not match the SHA-256 the store keeps"));
    if (QTest::currentTestFailed())
        return;

    FaultProxy second;
    const quint16 port2 = startFaultProxy(second, m_server.port(), {QStringLiteral("--flip-get"), QStringLiteral("2")});
    QVERIFY(port2);
    S3Client through2(endpointOf(port2, QStringLiteral("spectrum-test")));
    QByteArray back(big.size(), '\0');
    const Result<S3Object> download = downloadInto(through2, QStringLiteral("flipped/big.bin"), &back);
    QCOMPARE(download.error().code(), ErrorCode::Corrupt);
    QVERIFY(back != big);  // the flipped bit did reach the sink: only the check stood between it and use
    QByteArray secondSaid;
    QTRY_VERIFY2((secondSaid += second.readAllStandardError()).contains("flipped a bit"), secondSaid.constData());

    // The command line writes beside the file and renames it only once checked: nothing is left.
    QTemporaryDir dir;
    QProcess cli;
    FaultProxy third;
    const quint16 port3 = startFaultProxy(third, m_server.port(), {QStringLiteral("--flip-get"), QStringLiteral("3")});
    QVERIFY(port3);
    const QProcessEnvironment env = awsEnvironment(port3);
    cli.setProcessEnvironment(env);
    const QString out = dir.filePath(QStringLiteral("big.bin"));
    cli.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("get"), QStringLiteral("s3://spectrum-test/flipped/big.bin"), out});
    QVERIFY(cli.waitForFinished(60000));
    QVERIFY(cli.exitCode() != 0);
    QVERIFY2(cli.readAllStandardError().contains("do not match the SHA-256"), "the command line did not say why");
    QVERIFY(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).isEmpty());
    // Straight from the store: whole and checked.
    QByteArray direct(big.size(), '\0');
    const Result<S3Object> clean = downloadInto(*m_client, QStringLiteral("flipped/big.bin"), &direct);
    QVERIFY(clean.isOk() && clean.value().verified);
    QVERIFY(direct == big);
}

// CRC32C as iSCSI defines it (RFC 3720, B.4) and S3 writes it (base64 of the four bytes, most significant first);
// the CPU's instruction and the table walk of CPUs without it give the same, at every length and alignment.
void tst_S3::checksumsAreComparedAsDigests()
{
    // A store's checksum is its digest however the base64 is spelt (padded or not); a composite's part count must
    // agree too; anything that is no digest matches nothing.
    const QByteArray sha = Sha256::hash("spectrum", 8).toBase64();
    QVERIFY(s3::sameChecksum(sha, sha));
    QVERIFY(sha.endsWith('='));
    QVERIFY(s3::sameChecksum(QByteArray(sha).replace('=', ""), sha));
    QVERIFY(s3::sameChecksum(" " + sha + " ", sha));
    QVERIFY(!s3::sameChecksum(Sha256::hash("spectrun", 8).toBase64(), sha));
    QVERIFY(s3::sameChecksum("4waSgw==", "4waSgw"));  // the CRC32C of "123456789"
    QVERIFY(!s3::sameChecksum("4waSgw==", "4waSgA=="));
    const QByteArray composite = s3::compositeChecksum(QList<QByteArray>{Sha256::hash("a", 1), Sha256::hash("b", 1)});
    QVERIFY(composite.endsWith("-2"));
    QVERIFY(s3::sameChecksum(composite, composite));
    QVERIFY(!s3::sameChecksum(QByteArray(composite).replace("-2", "-3"), composite));
    QVERIFY(!s3::sameChecksum(QByteArray(composite).replace("-2", ""), composite));
    QVERIFY(!s3::sameChecksum(QByteArray(), QByteArray()));
    QVERIFY(!s3::sameChecksum("not base64!", "not base64!"));
}

void tst_S3::crc32cIsCastagnolis()
{
    const QByteArray zeros(32, '\0'), ones(32, '\xff');
    QByteArray ascending, descending;
    for (int i = 0; i < 32; ++i)
        ascending += char(i), descending += char(31 - i);
    QCOMPARE(Crc32c::of(zeros.constData(), zeros.size()), 0x8A9136AAu);
    QCOMPARE(Crc32c::of(ones.constData(), ones.size()), 0x62A8AB43u);
    QCOMPARE(Crc32c::of(ascending.constData(), ascending.size()), 0x46DD794Eu);
    QCOMPARE(Crc32c::of(descending.constData(), descending.size()), 0x113FDB5Cu);
    QCOMPARE(Crc32c::of("123456789", 9), 0xE3069283u);
    QCOMPARE(Crc32c::ofWithoutInstruction("123456789", 9), 0xE3069283u);
    Crc32c sum;
    sum.add("1234", 4);
    sum.add("56789", 5);
    QCOMPARE(sum.toBase64(), QByteArray("4waSgw=="));
    // Two parts' CRCs make the whole's, wherever it is cut (ranges that land in any order).
    QCOMPARE(Crc32c::combine(Crc32c::of("1234", 4), Crc32c::of("56789", 5), 5), 0xE3069283u);
    QCOMPARE(Crc32c::combine(Crc32c::of("123456789", 9), Crc32c::of("", 0), 0), 0xE3069283u);
    QCOMPARE(Crc32c::combine(Crc32c::of("", 0), Crc32c::of("123456789", 9), 9), 0xE3069283u);
    {
        const QByteArray data = randomBytes(300007, 5);
        const std::uint32_t whole = Crc32c::of(data.constData(), data.size());
        for (qint64 cut : {qint64(1), qint64(4095), qint64(65536), qint64(300006)})
            QCOMPARE(Crc32c::combine(Crc32c::of(data.constData(), cut), Crc32c::of(data.constData() + cut, data.size() - cut), data.size() - cut), whole);
    }
    const QByteArray random = randomBytes(100003, 31);
    for (int from : {0, 1, 3, 7}) {
        for (int length : {0, 1, 7, 8, 31, 32, 33, 1000, 65536 + 5}) {
            const char *at = random.constData() + from;
            QCOMPARE(Crc32c::of(at, length), Crc32c::ofWithoutInstruction(at, length));
        }
    }
    Crc32c pieces;
    for (qint64 at = 0; at < random.size(); at += 4099)
        pieces.add(random.constData() + at, std::min<qint64>(4099, random.size() - at));
    QCOMPARE(pieces.value(), Crc32c::of(random.constData(), random.size()));
}

// An object put with a CRC32C (as a study's instances are) is kept by the store with the CRC32C we sent — the store
// checked the body against it, so ours and the store's agree — and every GET of it is checked against it: a bit
// flipped on the way is caught whole or in ranges, and the clean answer passes.
void tst_S3::objectsPutWithACrc32cAreCheckedAgainstIt()
{
    const QByteArray small = randomBytes(300001, 41), big = randomBytes((3 << 20) + 11, 42);
    S3PutOptions crc;
    crc.checksum = S3Checksum::Crc32c;
    const Result<S3Object> put = runSync(m_client->put(QStringLiteral("crc/small.dcm"), small, crc));
    QVERIFY2(put.isOk(), qPrintable(put.isOk() ? QString() : put.error().toString()));
    QVERIFY(runSync(m_client->put(QStringLiteral("crc/big.dcm"), big, crc)).isOk());
    const Result<S3Object> head = runSync(m_client->head(QStringLiteral("crc/small.dcm")));
    QVERIFY(head.isOk());
    Crc32c ours;
    ours.add(small.constData(), small.size());
    QCOMPARE(head.value().checksumCrc32c, ours.toBase64());
    QVERIFY(head.value().checksumSha256.isEmpty());
    QCOMPARE(runSync(m_client->get(QStringLiteral("crc/small.dcm"))).value(), small);
    // The command line names it.
    QProcess stat;
    const QProcessEnvironment env = awsEnvironment(m_server.port());
    stat.setProcessEnvironment(env);
    stat.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("stat"), QStringLiteral("s3://spectrum-test/crc/small.dcm")});
    QVERIFY(stat.waitForFinished(60000) && stat.exitCode() == 0);
    const QByteArray said = stat.readAllStandardOutput();
    QVERIFY2(said.contains("crc32c " + ours.toBase64()), said.constData());

    flippedGetIsRefused(m_server.port(), QStringLiteral("crc/small.dcm"), small, QStringLiteral("do not match the CRC32C the store keeps"));
    if (QTest::currentTestFailed())
        return;

    // In ranges over several connections: each range summed as it lands, the sums combined into the whole's.
    S3DownloadOptions ranged;
    ranged.chunk = 1 << 20;
    QByteArray back(big.size(), '\0');
    const Result<S3Object> clean = downloadInto(*m_client, QStringLiteral("crc/big.dcm"), &back, ranged);
    QVERIFY2(clean.isOk() && clean.value().verified, qPrintable(clean.isOk() ? QStringLiteral("not checked") : clean.error().toString()));
    QVERIFY(back == big);
    FaultProxy second;
    const quint16 port2 = startFaultProxy(second, m_server.port(), {QStringLiteral("--flip-get"), QStringLiteral("2")});
    QVERIFY(port2);
    S3Client through2(endpointOf(port2, QStringLiteral("spectrum-test")));
    back.fill('\0');
    const Result<S3Object> download = downloadInto(through2, QStringLiteral("crc/big.dcm"), &back, ranged);
    QCOMPARE(download.error().code(), ErrorCode::Corrupt);
    QVERIFY2(download.error().message().contains(QLatin1String("CRC32C")), qPrintable(download.error().toString()));
}

void tst_S3::aPutKilledMidwayResumesOrIsAborted()
{
    // `spectrum-cli put` killed (-9) in the middle of a multipart upload, over a link slow enough to be caught
    // midway: the store keeps the parts sent. Run again, the command carries that upload on — the parts the store
    // holds with our SHA-256 are not sent again — and completes it, checked. Left instead, `spectrum-cli uploads`
    // lists it and --abort deletes its parts.
    QTemporaryDir dir;
    const QByteArray blob = randomBytes((30 << 20) + 7, 24);
    const QString file = dir.filePath(QStringLiteral("in.bin"));
    QVERIFY(writeFile(file, blob));
    LinkEmulator link(m_server.port(), 2, 256, 80);  // 10 MB/s: some three seconds for the whole
    QVERIFY(link.waitUntilListening());
    const QProcessEnvironment env = awsEnvironment(link.port());
    auto killMidway = [&](const QString &url, const QString &key) -> bool {
        QProcess put;
        put.setProcessEnvironment(env);
        put.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("put"), url, file, QStringLiteral("--chunk"), QStringLiteral("5"),
                                                            QStringLiteral("--streams"), QStringLiteral("1")});
        // Two parts at the store, then the kill.
        const bool midway = QTest::qWaitFor([&] {
            const Result<QList<QPair<QString, QString>>> pending = runSync(m_client->pendingUploads(key));
            if (!pending.isOk() || pending.value().isEmpty())
                return false;
            const Result<S3PartListing> parts = runSync(m_client->uploadedParts(key, pending.value().first().second));
            return parts.isOk() && parts.value().parts.size() >= 2;
        }, 30000);
        put.kill();
        put.waitForFinished();
        return midway && put.exitStatus() == QProcess::CrashExit;
    };
    auto cli = [&](const QStringList &args) {
        QProcess p;
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), args);
        p.waitForFinished(120000);
        return std::make_tuple(p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError());
    };

    const QString key = QStringLiteral("killed/resumed.bin"), url = QStringLiteral("s3://spectrum-test/") + key;
    QVERIFY(killMidway(url, key));
    QCOMPARE(runSync(m_client->head(key)).error().code(), ErrorCode::NotFound);  // nothing half-made at the key
    auto [rc, out, err] = cli({QStringLiteral("uploads"), QStringLiteral("s3://spectrum-test/killed/")});
    QVERIFY2(rc == 0 && out.startsWith(key.toUtf8() + '\t'), out.constData());
    std::tie(rc, out, err) = cli({QStringLiteral("put"), url, file, QStringLiteral("--chunk"), QStringLiteral("5")});
    QVERIFY2(rc == 0, err.constData());
    const QRegularExpressionMatch kept = QRegularExpression(QStringLiteral("resumed: (\\d+) bytes")).match(QString::fromUtf8(err));
    QVERIFY2(kept.hasMatch(), err.constData());
    QVERIFY(kept.captured(1).toLongLong() >= 2 * (5 << 20) && kept.captured(1).toLongLong() < blob.size());
    QVERIFY2(out.contains("=-7 (checked by the store)"), out.constData());  // seven parts, their composite checksum ours
    QByteArray back(blob.size(), '\0');
    const Result<S3Object> download = downloadInto(*m_client, key, &back);
    QVERIFY(download.isOk() && download.value().verified);
    QVERIFY(back == blob);
    QVERIFY(runSync(m_client->pendingUploads(QStringLiteral("killed/"))).value().isEmpty());

    // Another one killed, then given up: aborted, its parts gone, no object made.
    const QString left = QStringLiteral("killed/abandoned.bin");
    QVERIFY(killMidway(QStringLiteral("s3://spectrum-test/") + left, left));
    std::tie(rc, out, err) = cli({QStringLiteral("uploads"), QStringLiteral("s3://spectrum-test/killed/"), QStringLiteral("--abort")});
    QVERIFY2(rc == 0 && out.contains(left.toUtf8()) && out.contains("\taborted"), out.constData());
    QVERIFY(runSync(m_client->pendingUploads(QStringLiteral("killed/"))).value().isEmpty());
    QCOMPARE(runSync(m_client->head(left)).error().code(), ErrorCode::NotFound);
}

void tst_S3::aGetKilledMidwayResumesAndIsChecked()
{
    // `spectrum-cli get` killed (-9) midway over a slow link: FILE is not there, FILE.part holds what came. Run
    // again, it fetches only the rest, reads the kept bytes back and checks them with the rest against the store's
    // SHA-256, and renames the file into place. Kept bytes damaged on the disk meanwhile are caught, the partial
    // file dropped, and the next run fetches everything.
    const QByteArray blob = randomBytes((30 << 20) + 11, 25);
    const QString key = QStringLiteral("killedget/big.bin"), url = QStringLiteral("s3://spectrum-test/") + key;
    S3UploadOptions parts;
    parts.partSize = 5 << 20;
    QVERIFY(runSync(m_client->upload(key, S3Source::of(blob), parts)).isOk());
    const Result<S3Object> head = runSync(m_client->head(key));
    QVERIFY(head.isOk());
    const QString identity = QStringLiteral("s3 %1 %2").arg(QString::fromLatin1(head.value().etag)).arg(blob.size());
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("big.bin")), part = out + QStringLiteral(".part");
    LinkEmulator link(m_server.port(), 2, 256, 80);  // 10 MB/s
    QVERIFY(link.waitUntilListening());
    const QProcessEnvironment env = awsEnvironment(link.port());
    const QStringList args{QStringLiteral("get"), url, out, QStringLiteral("--chunk"), QStringLiteral("1"), QStringLiteral("--streams"), QStringLiteral("2")};
    auto killMidway = [&] {
        QProcess get;
        get.setProcessEnvironment(env);
        get.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), args);
        if (!get.waitForStarted())
            return false;
        // A third of it recorded as come (the record spectrum-cli keeps beside FILE.part), then the kill.
        const bool midway = QTest::qWaitFor([&] {
            ProgressRecord record(part + QStringLiteral(".partial"), identity, blob.size());
            qint64 have = 0;
            if (record.load())
                for (const auto &[begin, end] : record.ranges())
                    have += end - begin;
            return have >= blob.size() / 3 || get.state() != QProcess::Running;
        }, 30000);
        get.kill();
        get.waitForFinished();
        return midway && get.exitStatus() == QProcess::CrashExit;
    };
    auto cli = [&] {
        QProcess p;
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), args);
        p.waitForFinished(120000);
        return std::make_tuple(p.exitCode(), p.readAllStandardError());
    };

    QVERIFY(killMidway());
    QVERIFY(!QFile::exists(out));  // never a half-received file under its name
    QVERIFY(QFile::exists(part));
    auto [rc, err] = cli();
    QVERIFY2(rc == 0, err.constData());
    const QRegularExpressionMatch kept = QRegularExpression(QStringLiteral("resumed: (\\d+) bytes")).match(QString::fromUtf8(err));
    QVERIFY2(kept.hasMatch(), err.constData());
    QVERIFY(kept.captured(1).toLongLong() >= (1 << 20) && kept.captured(1).toLongLong() < blob.size());
    QVERIFY(readFile(out) == blob);
    QVERIFY(!QFile::exists(part) && !QFile::exists(part + QStringLiteral(".partial")));

    // Killed again; a kept byte damaged on the disk before the next run: caught by the store's checksum, nothing
    // renamed into place, the partial file gone — and the run after fetches it whole.
    QVERIFY(QFile::remove(out));
    QVERIFY(killMidway());
    {
        QFile f(part);
        QVERIFY(f.open(QIODevice::ReadWrite) && f.seek(100) && f.putChar(char(blob.at(100) ^ 0x20)));
    }
    std::tie(rc, err) = cli();
    QCOMPARE(rc, 1);
    QVERIFY2(err.contains("do not match the SHA-256"), err.constData());
    QVERIFY(!QFile::exists(out) && !QFile::exists(part) && !QFile::exists(part + QStringLiteral(".partial")));
    std::tie(rc, err) = cli();
    QVERIFY2(rc == 0 && !err.contains("resumed"), err.constData());
    QVERIFY(readFile(out) == blob);
}

void tst_S3::tokenServiceAnswersAreReadStrictly()
{
    // AssumeRoleWithWebIdentity's answer as SeaweedFS gives it (AWS's has the same elements).
    const QByteArray answer =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
        "<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIA86a66b7125b953ef</AccessKeyId>"
        "<SecretAccessKey>aHTa3C0chrTIq+w0Fw8sDuOCZae5BLKbMHGJAx9wmq8=</SecretAccessKey><SessionToken>eyJ.e30.sig</SessionToken>"
        "<Expiration>2026-11-30T13:37:11Z</Expiration></Credentials><SubjectFromWebIdentityToken>asmith</SubjectFromWebIdentityToken>"
        "<AssumedRoleUser><Arn>arn:aws:sts::123:assumed-role/Readers/asmith</Arn></AssumedRoleUser></AssumeRoleWithWebIdentityResult>"
        "<ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></AssumeRoleWithWebIdentityResponse>";
    const Result<StsCredentials> got = s3::parseAssumedRole(answer);
    QVERIFY2(got.isOk(), qPrintable(got.isOk() ? QString() : got.error().message()));
    QCOMPARE(got.value().credentials.accessKey, QStringLiteral("ASIA86a66b7125b953ef"));
    QCOMPARE(got.value().credentials.secretKey, QStringLiteral("aHTa3C0chrTIq+w0Fw8sDuOCZae5BLKbMHGJAx9wmq8="));
    QCOMPARE(got.value().credentials.sessionToken, QStringLiteral("eyJ.e30.sig"));
    QCOMPARE(got.value().expires, QDateTime(QDate(2026, 11, 30), QTime(13, 37, 11), Qt::UTC));
    QCOMPARE(got.value().subject, QStringLiteral("asmith"));
    QCOMPARE(got.value().assumedRole, QStringLiteral("arn:aws:sts::123:assumed-role/Readers/asmith"));
    // Without one of its parts, or an expiry to hold them to: refused, never half-used.
    QByteArray noToken = answer;
    noToken.replace("<SessionToken>eyJ.e30.sig</SessionToken>", "");
    QCOMPARE(s3::parseAssumedRole(noToken).error().code(), ErrorCode::Protocol);
    QByteArray noExpiry = answer;
    noExpiry.replace("2026-11-30T13:37:11Z", "soon");
    QCOMPARE(s3::parseAssumedRole(noExpiry).error().code(), ErrorCode::Protocol);
    QCOMPARE(s3::parseAssumedRole("<Error><Code>X</Code></Error>").error().code(), ErrorCode::Protocol);
    // Its refusals (wrapped in ErrorResponse), in words to act on.
    const QByteArray expired = "<ErrorResponse><Error><Type>Sender</Type><Code>ExpiredTokenException</Code><Message>token has expired</Message></Error>"
                               "<RequestId>1</RequestId></ErrorResponse>";
    QCOMPARE(s3::parseError(expired).code, QStringLiteral("ExpiredTokenException"));
    const Error e = s3::stsErrorFor(400, expired, QStringLiteral("objects.hospital.test"), {});
    QCOMPARE(e.code(), ErrorCode::Authentication);
    QVERIFY2(e.message().contains(QStringLiteral("sign in again")) && e.message().contains(QStringLiteral("token has expired")), qPrintable(e.message()));
    const Error denied = s3::stsErrorFor(403, "<ErrorResponse><Error><Code>AccessDenied</Code></Error></ErrorResponse>", QStringLiteral("s"),
                                         QStringLiteral("arn:aws:iam::role/Readers"));
    QVERIFY2(denied.message().contains(QStringLiteral("refused this reader the role arn:aws:iam::role/Readers")), qPrintable(denied.message()));
    QCOMPARE(s3::stsErrorFor(503, "", QStringLiteral("s"), {}).code(), ErrorCode::Busy);
    // Who took the role, as the services accept it.
    QCOMPARE(s3::roleSessionName(QStringLiteral("Dr. Anna Smith")), QStringLiteral("Dr.-Anna-Smith"));
    QCOMPARE(s3::roleSessionName(QStringLiteral("a")), QStringLiteral("a-"));
    QCOMPARE(s3::roleSessionName(QString(100, QLatin1Char('x'))).size(), 64);
}

QTEST_GUILESS_MAIN(tst_S3)
#include "tst_s3.moc"
