// SPDX-License-Identifier: Apache-2.0
// spectrum-cli's blob:// commands: get (to a file, standard output or the disk cache), put, stat, ls; s3:// addresses
// go to s3commands.cpp.

#include "blobtarget.h"
#include "commands.h"
#include "output.h"
#include "s3commands.h"

#include "spectrum/stores/blobs/diskfill.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/transfer/blobclient.h"
#include "spectrum/transfer/buffersink.h"
#include "spectrum/transfer/filesink.h"

#include <QCommandLineParser>

#include <cstring>
#include <QElapsedTimer>
#include <QFile>

#include <cstdio>

#include <unistd.h>

namespace spectrum::cli {

namespace {

/// The common start of the blob:// commands: description, transfer options, positional arguments (the URL
/// first; `names` as shown in errors), then the endpoint. Returns 0, or the exit code to return.
/// `optional`: how many of the last positionals may be left out.
int parseBlobCommand(QCommandLineParser &p, const QStringList &args, const QString &command, const QString &description,
                     const QList<QPair<QString, QString>> &positionals, BlobTarget *target_, int optional = 0)
{
    p.setApplicationDescription(description);
    p.addHelpOption();
    addTransferOptions(p);
    QStringList names;
    for (const auto &[name, help] : positionals) {
        p.addPositionalArgument(name, help);
        names << name.toUpper();
    }
    processArguments(p, args);
    if (p.positionalArguments().size() > positionals.size() || p.positionalArguments().size() < positionals.size() - optional)
        return fail(QStringLiteral("%1: %2 required").arg(command, names.join(QStringLiteral(" and "))), 2);
    auto t = target(p, p.positionalArguments().at(0));
    if (!t.isOk())
        return fail(t.error().toString(), 2);
    *target_ = t.takeValue();
    return 0;
}

/// A one-line progress bar on a terminal; nothing when stderr is a file or pipe.
void showProgress(Job *job)
{
    if (!isatty(fileno(stderr)))
        return;
    auto clock = std::make_shared<QElapsedTimer>();
    clock->start();
    QObject::connect(job, &Job::progress, job, [clock](qint64 done, qint64 total) {
        const double s = std::max(1e-3, clock->nsecsElapsed() / 1e9);
        const int width = 30;
        const int filled = total > 0 ? int(width * done / total) : width;
        std::fprintf(stderr, "\r[%s%s] %5.1f%%  %.1f MB/s ", QByteArray(filled, '#').constData(),
                     QByteArray(width - filled, ' ').constData(), total > 0 ? 100.0 * done / total : 100.0, done / s / 1e6);
    });
    QObject::connect(job, &Job::finished, job, [] { std::fprintf(stderr, "\n"); });
}

void printPullSummary(const PullResult &pr)
{
    const qint64 n = pr.end - pr.begin;
    std::fprintf(stderr, "%lld bytes in %.3f s, %.1f MB/s, %d stream(s), %lld fetched, %lld resumed, %d frame(s) re-fetched, %d reconnect(s)%s\n",
                 qlonglong(n), pr.seconds, (n - pr.resumedBytes) / std::max(1e-9, pr.seconds) / 1e6, pr.streams,
                 qlonglong(pr.bytesReceived), qlonglong(pr.resumedBytes), pr.framesRefetched, pr.reconnects,
                 pr.verifiedByTree ? ", every MiB checked against the server's hash tree" : pr.verified ? ", SHA-256 verified" : "");
}

/// get --cache: the blob into the workstation's disk cache under its key, the way the workstation fills it
/// (fillDiskFromRemote). Interrupted (even by kill -9), the same command continues where it stopped.
int getIntoCache(const BlobTarget &target, const TransferOptions &options)
{
    auto cache = openCache();
    if (!cache.isOk())
        return fail(cache.error().toString());
    RemoteBlobStore remote(target.client->endpoint(), options);
    CommitOptions commit;
    commit.durable = false;  // the cache can fetch it again: crash-safe without waiting for the disk (see FileStore)
    Result<PullResult> r = fillDiskFromRemote(*cache.value(), remote, target.key, commit, showProgress);
    if (!r.isOk()) {
        if (r.error().code() == ErrorCode::Network || r.error().code() == ErrorCode::Timeout)
            std::fprintf(stderr, "spectrum-cli: the same command resumes where this one stopped\n");
        return fail(r.error().toString());
    }
    printPullSummary(r.value());
    // A DICOM instance is one entry of the cache, under its SOP Instance UID, whatever path brought it: a study
    // fetched later would otherwise list it twice (under the blob's key and under its UID).
    FileStore &disk = *cache.value();
    const Result<BlobInfo> info = runSync(disk.stat(target.key));
    const QString sop = info.isOk() && info.value().dicom.isValid() ? info.value().dicom.sopInstanceUid : QString();
    if (!sop.isEmpty() && sop != target.key) {
        if (runSync(disk.stat(sop)).isOk()) {
            // Kept once; a copy that differs (a corrected re-send under the same UID) is said, never dropped silently.
            const Result<ByteView> got = runSync(disk.read(target.key)), held = runSync(disk.read(sop));
            const bool same = got.isOk() && held.isOk() && got.value().size() == held.value().size()
                && std::memcmp(got.value().data(), held.value().data(), size_t(got.value().size())) == 0;
            if (!same)
                return fail(QStringLiteral("%1 is instance %2, which the cache holds already with other bytes: both kept as they are (%1 under its "
                                           "key) until one is removed").arg(target.key, sop));
            if (Error e = runSync(disk.remove(target.key)).error(); e.isError())
                return fail(e.toString());
            out(QStringLiteral("%1: instance %2, which the cache holds already (kept once) at %3").arg(target.key, sop, disk.root()));
            return 0;
        }
        const Result<ByteView> bytes = runSync(disk.read(target.key));
        CommitOptions asInstance;
        asInstance.durable = true;  // the copy under the key goes next: this one must be on the disk first
        asInstance.knownIdentity = info.value().dicom;
        Error e = bytes.isOk() ? runSync(disk.put(sop, bytes.value(), asInstance)).error() : bytes.error();
        if (!e.isError())
            e = runSync(disk.remove(target.key)).error();
        if (e.isError())
            return fail(e.withContext(QStringLiteral("keeping %1 as instance %2").arg(target.key, sop)).toString());
        out(QStringLiteral("%1: %2 bytes in the cache at %3, as instance %4").arg(target.key).arg(r.value().end - r.value().begin).arg(disk.root(), sop));
        return 0;
    }
    out(QStringLiteral("%1: %2 bytes in the cache at %3").arg(target.key).arg(r.value().end - r.value().begin).arg(disk.root()));
    return 0;
}

int cmdGet(const QStringList &args)
{
    if (isS3Url(args))
        return s3Get(args);
    QCommandLineParser p;
    p.addOption({QStringLiteral("range"), QStringLiteral("Only bytes [BEGIN, END)."), QStringLiteral("BEGIN-END")});
    p.addOption({QStringLiteral("no-sha256"), QStringLiteral("Skip the SHA-256 checks (each MiB against the server's hash tree as it lands, or the whole blob from a server "
                                                                  "without trees; ~0.7 CPU-s per GiB, spread over the cores); every frame's XXH3 is still checked.")});
    p.addOption({QStringLiteral("cache"), QStringLiteral("Into the workstation's disk cache under its key (no FILE), resumable.")});
    BlobTarget target;
    if (int rc = parseBlobCommand(p, args, QStringLiteral("get"), QStringLiteral("Fetches a blob: spectrum-cli get blob://HOST:PORT/KEY FILE|-|--cache"),
                                  {{QStringLiteral("url"), QStringLiteral("blob://HOST:PORT/KEY")},
                                   {QStringLiteral("out"), QStringLiteral("Output file, or - for standard output.")}}, &target, 1))
        return rc;
    const bool intoCache = p.isSet(QStringLiteral("cache"));
    if (intoCache != (p.positionalArguments().size() == 1))
        return fail(QStringLiteral("get: either FILE (or -) or --cache"), 2);
    if (intoCache) {
        if (p.isSet(QStringLiteral("range")))
            return fail(QStringLiteral("get: --cache takes the whole blob, not --range"), 2);
        TransferOptions options = target.client->defaults();
        options.verifySha256 = !p.isSet(QStringLiteral("no-sha256"));
        return getIntoCache(target, options);
    }
    ByteRange range;
    if (p.isSet(QStringLiteral("range"))) {
        const QStringList be = p.value(QStringLiteral("range")).split(QLatin1Char('-'));
        bool okB = false, okE = false;
        if (be.size() == 2)
            range = ByteRange::of(be[0].toLongLong(&okB), be[1].toLongLong(&okE));
        if (!okB || !okE)
            return fail(QStringLiteral("get: --range takes BEGIN-END"), 2);
    }
    const QString out = p.positionalArguments().at(1);
    const bool toStdout = out == QLatin1String("-");
    // Received into OUT.part and renamed when whole and checked: a killed get leaves no file of the full length
    // under the name asked for that could be taken for the blob.
    const QString partPath = out + QStringLiteral(".part");
    std::unique_ptr<ByteSink> sink;
    auto factory = [&](const RemoteBlobInfo &blob, qint64 begin, qint64 end) -> Result<ByteSink *> {
        if (toStdout) {
            auto buffer = std::make_unique<BufferSink>(end - begin);
            if (!buffer->isValid())
                return Error(ErrorCode::DiskFull, QStringLiteral("cannot hold %1 bytes in memory").arg(end - begin));
            sink = std::move(buffer);
        } else {
            // Resumable: running the same command again after an interruption fetches only what is missing.
            const QString identity = QStringLiteral("%1 %2 %3-%4").arg(blob.version, QString::fromLatin1(blob.sha256.toHex())).arg(begin).arg(end);
            auto file = FileSink::createOrResume(partPath, end - begin, identity);
            if (!file.isOk())
                return file.error();
            sink = file.takeValue();
        }
        return sink.get();
    };
    TransferOptions options = target.client->defaults();
    options.verifySha256 = !p.isSet(QStringLiteral("no-sha256"));
    auto *job = target.client->pull(target.key, factory, range, options);
    qint64 written = 0;
    if (toStdout) {
        // Standard output gets the verified prefix as it grows: a pipe can start working at once.
        QObject::connect(job, &Job::dataAvailable, job, [&](qint64, qint64 end) {
            std::fwrite(sink->data() + written, 1, size_t(end - written), stdout);
            written = end;
        });
    }
    showProgress(job);
    Result<PullResult> r = runSync(job);
    if (!r.isOk()) {
        if (!toStdout && sink)
            std::fprintf(stderr, "spectrum-cli: the same command resumes where this one stopped\n");
        return fail(r.error().toString());
    }
    if (toStdout)
        std::fflush(stdout);
    else if (Error e = static_cast<FileSink *>(sink.get())->finish(); e.isError())
        return fail(e.toString());
    if (!toStdout) {
        sink.reset();
        if (::rename(QFile::encodeName(partPath).constData(), QFile::encodeName(out).constData()) != 0)
            return fail(QStringLiteral("cannot write %1: %2").arg(out, QString::fromLocal8Bit(std::strerror(errno))));
    }
    printPullSummary(r.value());
    return 0;
}

int cmdPut(const QStringList &args)
{
    if (isS3Url(args))
        return s3Put(args);
    QCommandLineParser p;
    BlobTarget target;
    if (int rc = parseBlobCommand(p, args, QStringLiteral("put"), QStringLiteral("Stores a file as a blob: spectrum-cli put blob://HOST:PORT/KEY FILE"),
                                  {{QStringLiteral("url"), QStringLiteral("blob://HOST:PORT/KEY")},
                                   {QStringLiteral("file"), QStringLiteral("The file to send.")}}, &target))
        return rc;
    auto file = std::make_shared<QFile>(p.positionalArguments().at(1));
    if (!file->open(QIODevice::ReadOnly))
        return fail(QStringLiteral("cannot read %1: %2").arg(file->fileName(), file->errorString()));
    ByteView data;
    if (file->size() > 0) {
        uchar *map = file->map(0, file->size());
        if (!map)
            return fail(QStringLiteral("cannot map %1").arg(file->fileName()));
        data = ByteView(reinterpret_cast<const char *>(map), file->size(), file);
    }
    QElapsedTimer clock;
    clock.start();
    auto *job = target.client->push(target.key, data);
    showProgress(job);
    Result<RemoteBlobInfo> r = runSync(job);
    if (!r.isOk())
        return fail(r.error().toString());
    const double s = clock.nsecsElapsed() / 1e9;
    std::fprintf(stderr, "%lld bytes in %.3f s, %.1f MB/s, committed as version %s\n", qlonglong(r.value().size), s,
                 r.value().size / std::max(1e-9, s) / 1e6, qPrintable(r.value().version));
    return 0;
}

int cmdStat(const QStringList &args)
{
    if (isS3Url(args))
        return s3Stat(args);
    QCommandLineParser p;
    BlobTarget target;
    if (int rc = parseBlobCommand(p, args, QStringLiteral("stat"), QStringLiteral("Describes a blob: spectrum-cli stat blob://HOST:PORT/KEY"),
                                  {{QStringLiteral("url"), QStringLiteral("blob://HOST:PORT/KEY")}}, &target))
        return rc;
    Result<RemoteBlobInfo> r = runSync(target.client->stat(target.key));
    if (!r.isOk())
        return fail(r.error().toString());
    out(QStringLiteral("%1\t%2 bytes\tversion %3\tsha256 %4").arg(r.value().key).arg(r.value().size)
            .arg(r.value().version, QString::fromLatin1(r.value().sha256.toHex())));
    return 0;
}

int cmdLs(const QStringList &args)
{
    if (isS3Url(args))
        return s3Ls(args);
    QCommandLineParser p;
    BlobTarget target;
    if (int rc = parseBlobCommand(p, args, QStringLiteral("ls"), QStringLiteral("Lists blobs: spectrum-cli ls blob://HOST:PORT/[PREFIX]"),
                                  {{QStringLiteral("url"), QStringLiteral("blob://HOST:PORT/PREFIX")}}, &target))
        return rc;
    Result<QList<RemoteBlobInfo>> r = runSync(target.client->list(target.key));
    if (!r.isOk())
        return fail(r.error().toString());
    for (const RemoteBlobInfo &b : r.value())
        out(QStringLiteral("%1\t%2").arg(b.size, 12).arg(b.key));
    return 0;
}

} // namespace

QList<Command> blobCommands()
{
    return {
        {"get", "URL FILE|-|--cache", "fetch blob://HOST:PORT/KEY (blobs:// with TLS) or s3://BUCKET/KEY to a file, standard output, or the disk cache (resumable)", cmdGet},
        {"put", "URL FILE", "store a file as blob://HOST:PORT/KEY or s3://BUCKET/KEY", cmdPut},
        {"stat", "URL", "size, version and checksum of a blob or S3 object", cmdStat},
        {"ls", "URL-PREFIX", "blobs or S3 objects whose key starts with the prefix", cmdLs},
        {"uploads", "s3://BUCKET/PREFIX [--abort]", "multipart uploads left unfinished in an S3 bucket (a killed put's parts): listed, or aborted", s3Uploads},
    };
}

} // namespace spectrum::cli
