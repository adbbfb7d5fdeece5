// SPDX-License-Identifier: Apache-2.0
// spectrum-cli's s3:// forms of get, put, stat and ls: objects of an S3-compatible store (AWS S3, Ceph RGW,
// Garage…), signed with AWS Signature V4. The store and the credentials come as the AWS tools take them, so an
// admin's settings carry over: AWS_ENDPOINT_URL (or --endpoint), AWS_REGION / AWS_DEFAULT_REGION (or --region),
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN with temporary ones) — never on the command line, where other users could read them.

#include "commands.h"
#include "output.h"
#include "s3commands.h"

#include "spectrum/transfer/filesink.h"
#include "spectrum/transfer/s3client.h"

#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFile>
#include <QSaveFile>

#include <cstdio>
#include <cstring>
#include <map>

namespace spectrum::cli {

namespace {

struct S3Target
{
    std::unique_ptr<S3Client> client;
    QString key;
};

void addS3Options(QCommandLineParser &p)
{
    p.addOption({QStringLiteral("endpoint"), QStringLiteral("The store, e.g. https://s3.example.org (default: $AWS_ENDPOINT_URL, else AWS)."), QStringLiteral("URL")});
    p.addOption({QStringLiteral("region"), QStringLiteral("Its region (default: $AWS_REGION, $AWS_DEFAULT_REGION, else us-east-1)."), QStringLiteral("REGION")});
    p.addOption({QStringLiteral("virtual-host"), QStringLiteral("Address the bucket as BUCKET.HOST (AWS's default) instead of HOST/BUCKET.")});
    p.addOption({QStringLiteral("ca-file"), QStringLiteral("PEM certificates to trust besides the system's (a hospital's CA)."), QStringLiteral("FILE")});
    p.addOption({QStringLiteral("streams"), QStringLiteral("Requests at once (default 4)."), QStringLiteral("N")});
    p.addOption({QStringLiteral("chunk"), QStringLiteral("Bytes per range or part, in MiB (default 8 for get, 16 for put)."), QStringLiteral("MiB")});
}

/// s3://BUCKET/KEY and the options into a client; an error says what is missing.
Result<S3Target> s3Target(const QCommandLineParser &p, const QString &url)
{
    if (!url.startsWith(QLatin1String("s3://")))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not an s3://BUCKET/KEY address").arg(url));
    const QString rest = url.mid(5);
    const qsizetype slash = rest.indexOf(QLatin1Char('/'));
    S3Endpoint e;
    e.bucket = slash < 0 ? rest : rest.left(slash);
    if (e.bucket.isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' names no bucket").arg(url));
    const QString endpoint = p.isSet(QStringLiteral("endpoint")) ? p.value(QStringLiteral("endpoint")) : qEnvironmentVariable("AWS_ENDPOINT_URL");
    QString region = p.value(QStringLiteral("region"));
    if (region.isEmpty())
        region = qEnvironmentVariable("AWS_REGION", qEnvironmentVariable("AWS_DEFAULT_REGION", QStringLiteral("us-east-1")));
    e.endpoint = QUrl(endpoint.isEmpty() ? QStringLiteral("https://s3.%1.amazonaws.com").arg(region) : endpoint);
    if (!e.endpoint.isValid() || (e.endpoint.scheme() != QLatin1String("http") && e.endpoint.scheme() != QLatin1String("https")) || e.endpoint.host().isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("the endpoint '%1' is not an http:// or https:// address").arg(endpoint));
    e.virtualHosted = p.isSet(QStringLiteral("virtual-host")) || endpoint.isEmpty();
    e.caFile = p.value(QStringLiteral("ca-file"));
    e.credentials.region = region;
    e.credentials.accessKey = qEnvironmentVariable("AWS_ACCESS_KEY_ID");
    e.credentials.secretKey = qEnvironmentVariable("AWS_SECRET_ACCESS_KEY");
    e.credentials.sessionToken = qEnvironmentVariable("AWS_SESSION_TOKEN");  // temporary credentials (an STS's), as AWS's tools take them
    if (e.credentials.accessKey.isEmpty() || e.credentials.secretKey.isEmpty())
        return Error(ErrorCode::Authentication, QStringLiteral("no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"));
    S3Target t;
    t.client = std::make_unique<S3Client>(e);
    t.key = slash < 0 ? QString() : rest.mid(slash + 1);
    return t;
}

/// Parses the command line of an s3:// command; 0, or the exit code to return.
int parse(QCommandLineParser &p, const QStringList &args, const QString &description, const QList<QPair<QString, QString>> &positionals, S3Target *target)
{
    p.setApplicationDescription(description);
    p.addHelpOption();
    addS3Options(p);
    for (const auto &[name, help] : positionals)
        p.addPositionalArgument(name, help);
    processArguments(p, args);
    if (p.positionalArguments().size() != positionals.size())
        return fail(QStringLiteral("%1: %2 argument(s) required").arg(args.value(0)).arg(positionals.size()), 2);
    Result<S3Target> t = s3Target(p, p.positionalArguments().at(0));
    if (!t.isOk())
        return fail(t.error().toString(), 2);
    *target = t.takeValue();
    return 0;
}

int intOption(const QCommandLineParser &p, const char *name, int fallback)
{
    bool ok = false;
    const int v = p.value(QLatin1String(name)).toInt(&ok);
    return ok && v > 0 ? v : fallback;
}

void summary(const char *what, qint64 bytes, const QElapsedTimer &clock)
{
    const double s = clock.nsecsElapsed() / 1e9;
    std::fprintf(stderr, "%s %lld bytes in %.3f s, %.1f MB/s\n", what, qlonglong(bytes), s, bytes / std::max(1e-9, s) / 1e6);
}

} // namespace

bool isS3Url(const QStringList &args)
{
    for (int i = 1; i < args.size(); ++i)  // args[0] is "spectrum-cli COMMAND"
        if (!args[i].startsWith(QLatin1Char('-')))
            return args[i].startsWith(QLatin1String("s3://"));
    return false;
}

int s3Get(const QStringList &args)
{
    QCommandLineParser p;
    S3Target t;
    if (int rc = parse(p, args, QStringLiteral("Fetches an object: spectrum-cli get s3://BUCKET/KEY FILE|-"),
                       {{QStringLiteral("url"), QStringLiteral("s3://BUCKET/KEY")}, {QStringLiteral("out"), QStringLiteral("Output file, or - for standard output.")}}, &t))
        return rc;
    const QString outPath = p.positionalArguments().at(1);
    S3DownloadOptions options;
    options.streams = intOption(p, "streams", 4);
    options.chunk = qint64(intOption(p, "chunk", 8)) << 20;
    QElapsedTimer clock;
    clock.start();
    if (outPath == QLatin1String("-")) {
        // Standard output in order: ranges that come early wait for the ones before them.
        std::map<qint64, QByteArray> early;
        qint64 written = 0;
        const Result<S3Object> r = runSync(t.client->download(
            t.key,
            [&](qint64 offset, const QByteArray &bytes) -> Error {
                early[offset] = bytes;
                while (!early.empty() && early.begin()->first == written) {
                    const QByteArray &next = early.begin()->second;
                    if (std::fwrite(next.constData(), 1, size_t(next.size()), stdout) != size_t(next.size()))
                        return Error(ErrorCode::Io, QStringLiteral("standard output was closed"));
                    written += next.size();
                    early.erase(early.begin());
                }
                return Error();
            },
            options));
        if (!r.isOk())
            return fail(r.error().toString());
        std::fflush(stdout);
        summary("got", r.value().size, clock);
        return 0;
    }

    // A file appears whole and checked, or not at all: the bytes go to FILE.part (with a record of what is in it,
    // FILE.part.partial), renamed to FILE once the last range is in and the whole matches the store's checksum. Run
    // again after an interruption, the ranges of the same version that are there are not fetched again — read
    // back and checked with the rest.
    const Result<S3Object> head = runSync(t.client->head(t.key));
    if (!head.isOk())
        return fail(head.error().toString());
    if (head.value().size == 0) {
        QSaveFile empty(outPath);
        if (!empty.open(QIODevice::WriteOnly) || !empty.commit())
            return fail(QStringLiteral("cannot write %1: %2").arg(outPath, empty.errorString()));
        summary("got", 0, clock);
        return 0;
    }
    const QString partPath = outPath + QStringLiteral(".part");
    Result<std::unique_ptr<FileSink>> opened = FileSink::createOrResume(partPath, head.value().size,
                                                                      QStringLiteral("s3 %1 %2").arg(QString::fromLatin1(head.value().etag)).arg(head.value().size));
    if (!opened.isOk())
        return fail(opened.error().toString());
    std::unique_ptr<FileSink> sink = opened.takeValue();
    options.kept = sink->completedRanges();
    options.keptEtag = head.value().etag;
    options.readKept = [&sink](qint64 offset, qint64 length) { return QByteArray(sink->data() + offset, length); };
    auto dropPart = [&] {
        (void)sink->finish();  // its record first: nothing is resumed from these bytes
        sink.reset();
        QFile::remove(partPath);
    };
    const Result<S3Object> r = runSync(t.client->download(
        t.key,
        [&](qint64 offset, const QByteArray &bytes) -> Error {
            if (Error e = sink->writeAt(offset, bytes.constData(), bytes.size()); e.isError())
                return e;
            sink->rangeVerified(offset, offset + bytes.size());  // in the file (synced): not fetched again; checked at the end
            return Error();
        },
        options));
    if (!r.isOk()) {
        const ErrorCode code = r.error().code();
        if (code == ErrorCode::Corrupt || code == ErrorCode::Changed || code == ErrorCode::NotFound) {
            dropPart();  // damaged, or another version now: nothing of it is kept
        } else {
            std::fprintf(stderr, "spectrum-cli: the same command resumes where this one stopped\n");
        }
        return fail(r.error().toString());
    }
    if (Error e = sink->finish(); e.isError())
        return fail(e.toString());
    sink.reset();
    if (::rename(QFile::encodeName(partPath).constData(), QFile::encodeName(outPath).constData()) != 0)
        return fail(QStringLiteral("cannot write %1: %2").arg(outPath, QString::fromLocal8Bit(std::strerror(errno))));
    summary("got", r.value().size, clock);
    if (r.value().keptBytes > 0)
        std::fprintf(stderr, "resumed: %lld bytes were there from an interrupted get%s\n", qlonglong(r.value().keptBytes),
                     r.value().verified ? ", checked with the rest" : "");
    if (!r.value().verified)
        std::fprintf(stderr, "not checked: %s\n", qPrintable(r.value().unchecked.isEmpty() ? QStringLiteral("the store gave nothing to check it by") : r.value().unchecked));
    return 0;
}

int s3Put(const QStringList &args)
{
    QCommandLineParser p;
    S3Target t;
    if (int rc = parse(p, args, QStringLiteral("Stores a file as an object: spectrum-cli put s3://BUCKET/KEY FILE"),
                       {{QStringLiteral("url"), QStringLiteral("s3://BUCKET/KEY")}, {QStringLiteral("file"), QStringLiteral("The file to send.")}}, &t))
        return rc;
    auto file = std::make_shared<QFile>(p.positionalArguments().at(1));
    if (!file->open(QIODevice::ReadOnly))
        return fail(QStringLiteral("cannot read %1: %2").arg(file->fileName(), file->errorString()));
    S3Source source;
    source.size = file->size();
    source.read = [file](qint64 offset, qint64 length) -> Result<QByteArray> {
        if (!file->seek(offset))
            return Error(ErrorCode::Io, QStringLiteral("cannot read %1: %2").arg(file->fileName(), file->errorString()));
        QByteArray bytes = file->read(length);
        if (bytes.size() != length)
            return Error(ErrorCode::Io, QStringLiteral("%1 changed while it was sent").arg(file->fileName()));
        return bytes;
    };
    S3UploadOptions options;
    options.parallel = intOption(p, "streams", 4);
    options.partSize = qint64(intOption(p, "chunk", 16)) << 20;
    // Run again after an interruption (a kill, a power cut), the parts the store holds already — checked by their
    // SHA-256 — are not sent again.
    options.resume = true;
    QElapsedTimer clock;
    clock.start();
    const Result<S3Object> r = runSync(t.client->upload(t.key, source, options));
    if (!r.isOk())
        return fail(r.error().toString());
    summary("put", r.value().size, clock);
    if (r.value().keptBytes > 0)
        std::fprintf(stderr, "resumed: %lld bytes were at the store already (an upload begun before), checked by their SHA-256\n",
                     qlonglong(r.value().keptBytes));
    out(QStringLiteral("%1\t%2 bytes\tETag %3%4")
            .arg(t.key)
            .arg(r.value().size)
            .arg(QString::fromLatin1(r.value().etag),
                 r.value().checksumSha256.isEmpty() ? QString() : QStringLiteral("\tsha256 %1 (checked by the store)").arg(QString::fromLatin1(r.value().checksumSha256))));
    return 0;
}

int s3Stat(const QStringList &args)
{
    QCommandLineParser p;
    S3Target t;
    if (int rc = parse(p, args, QStringLiteral("Describes an object: spectrum-cli stat s3://BUCKET/KEY"), {{QStringLiteral("url"), QStringLiteral("s3://BUCKET/KEY")}}, &t))
        return rc;
    const Result<S3Object> r = runSync(t.client->head(t.key));
    if (!r.isOk())
        return fail(r.error().toString());
    out(QStringLiteral("%1\t%2 bytes\tETag %3\t%4%5")
            .arg(t.key)
            .arg(r.value().size)
            .arg(QString::fromLatin1(r.value().etag), r.value().lastModified.toString(Qt::ISODate),
                 !r.value().checksumSha256.isEmpty()   ? QStringLiteral("\tsha256 %1").arg(QString::fromLatin1(r.value().checksumSha256))
                 : !r.value().checksumCrc32c.isEmpty() ? QStringLiteral("\tcrc32c %1").arg(QString::fromLatin1(r.value().checksumCrc32c))
                                                       : QString()));
    return 0;
}

int s3Ls(const QStringList &args)
{
    QCommandLineParser p;
    S3Target t;
    if (int rc = parse(p, args, QStringLiteral("Lists objects: spectrum-cli ls s3://BUCKET/[PREFIX]"), {{QStringLiteral("url"), QStringLiteral("s3://BUCKET/PREFIX")}}, &t))
        return rc;
    QString token;
    do {
        const Result<S3Listing> page = runSync(t.client->list(t.key, {}, token));
        if (!page.isOk())
            return fail(page.error().toString());
        for (const S3Object &o : page.value().objects)
            out(QStringLiteral("%1\t%2").arg(o.size, 12).arg(o.key));
        token = page.value().truncated ? page.value().nextToken : QString();
    } while (!token.isEmpty());
    return 0;
}

int s3Uploads(const QStringList &args)
{
    QCommandLineParser p;
    p.addOption({QStringLiteral("abort"), QStringLiteral("Abort them: the store deletes their parts (a put run again then starts afresh).")});
    S3Target t;
    if (int rc = parse(p, args, QStringLiteral("Lists multipart uploads begun and neither completed nor aborted (the parts a killed put left, "
                                              "which the store keeps and bills): spectrum-cli uploads s3://BUCKET/[PREFIX] [--abort]"),
                       {{QStringLiteral("url"), QStringLiteral("s3://BUCKET/PREFIX")}}, &t))
        return rc;
    const Result<QList<QPair<QString, QString>>> pending = runSync(t.client->pendingUploads(t.key));
    if (!pending.isOk())
        return fail(pending.error().toString());
    int failed = 0;
    for (const auto &[key, id] : pending.value()) {
        if (!p.isSet(QStringLiteral("abort"))) {
            out(QStringLiteral("%1\t%2").arg(key, id));
            continue;
        }
        const Error e = runSync(t.client->abortUpload(key, id)).error();
        out(QStringLiteral("%1\t%2\t%3").arg(key, id, e.isError() ? QStringLiteral("not aborted: ") + e.toString() : QStringLiteral("aborted")));
        failed += e.isError() ? 1 : 0;
    }
    return failed > 0 ? 1 : 0;
}

} // namespace spectrum::cli
