// spectrum-cli: Spectrum without the GUI — generate demo data, look into the workstation's cache, import and
// render DICOM files. Wiring only: the work is done by the libraries.

#include "archivecommands.h"
#include "blobtarget.h"
#include "imagefile.h"
#include "imagingcommands.h"
#include "output.h"

#include "spectrum/core/settings.h"
#include "spectrum/imaging/converter.h"
#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/dicomdecoder.h"
#include "spectrum/imaging/windowlevel.h"
#include "spectrum/stores/filestore.h"
#include "spectrum/stores/importservice.h"
#include "spectrum/stores/dicomimport.h"
#include "spectrum/stores/studycatalog.h"
#include "spectrum/stores/diskfill.h"
#include "spectrum/transfer/blobclient.h"
#include "spectrum/transfer/buffersink.h"
#include "spectrum/transfer/filesink.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <cstdio>

#include <unistd.h>

using namespace spectrum;
using spectrum::cli::BlobTarget;
using spectrum::cli::addTransferOptions;
using spectrum::cli::target;
using spectrum::cli::fail;
using spectrum::cli::writeImageFile;
using spectrum::cli::out;

namespace {

Result<std::unique_ptr<FileStore>> openCache()
{
    return FileStore::open(WorkstationPaths::cacheDirectory(), WorkstationPaths::diskBudgetBytes());
}

int cmdDemo(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Writes the demo studies (head CT, chest CR, head MR) as DICOM files."));
    p.addHelpOption();
    p.addOption({QStringLiteral("out"), QStringLiteral("Folder to write into (created if needed)."), QStringLiteral("DIR")});
    p.addOption({QStringLiteral("ct-slices"), QStringLiteral("CT slices (default 200)."), QStringLiteral("N"), QStringLiteral("200")});
    p.addOption({QStringLiteral("ct-slab"), QStringLiteral("Also a thick-slice CT series, every N thin slices averaged (0, the default: none)."),
                 QStringLiteral("N"), QStringLiteral("0")});
    p.addOption({QStringLiteral("only"), QStringLiteral("Only this study: demo-ct, demo-cr or demo-mr (repeatable)."), QStringLiteral("ALIAS")});
    p.process(args);
    if (!p.isSet(QStringLiteral("out")))
        return fail(QStringLiteral("demo: --out DIR is required"), 2);
    DemoOptions options;
    options.ctSlices = p.value(QStringLiteral("ct-slices")).toInt();
    if (options.ctSlices < 1)
        return fail(QStringLiteral("demo: --ct-slices must be a positive number"), 2);
    options.ctSlabSlices = p.value(QStringLiteral("ct-slab")).toInt();
    if (options.ctSlabSlices < 0 || options.ctSlabSlices > options.ctSlices)
        return fail(QStringLiteral("demo: --ct-slab must be between 0 and the number of CT slices"), 2);
    if (p.isSet(QStringLiteral("only"))) {
        options.studies.clear();
        for (const QString &alias : p.values(QStringLiteral("only"))) {
            const auto study = DemoArchive::fromAlias(alias);
            if (!study)
                return fail(QStringLiteral("demo: unknown study '%1' (demo-ct, demo-cr, demo-mr)").arg(alias), 2);
            options.studies << *study;
        }
    }
    const QDir dir(p.value(QStringLiteral("out")));
    QElapsedTimer timer;
    timer.start();
    qint64 bytes = 0;
    int count = 0;
    const int total = DemoArchive::instanceCount(options);
    const Error e = DemoArchive::generate(options, [&](DemoInstance &&inst) -> Error {
        const QString path = dir.filePath(inst.relativePath);
        if (!QDir().mkpath(QFileInfo(path).absolutePath()))
            return Error(ErrorCode::Io, QStringLiteral("cannot create %1").arg(QFileInfo(path).absolutePath()));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(inst.bytes) != inst.bytes.size())
            return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
        bytes += inst.bytes.size();
        ++count;
        if (isatty(fileno(stderr)))
            std::fprintf(stderr, "\r%d/%d instances", count, total);
        return Error();
    });
    if (isatty(fileno(stderr)))
        std::fprintf(stderr, "\n");
    if (e.isError())
        return fail(e.toString());
    for (DemoStudy s : options.studies)
        out(QStringLiteral("%1  %2").arg(DemoArchive::alias(s), DemoArchive::studyUid(s)));
    out(QStringLiteral("%1 instances, %2 MB in %3 s → %4")
            .arg(count).arg(bytes / 1e6, 0, 'f', 1).arg(timer.elapsed() / 1000.0, 0, 'f', 2).arg(dir.absolutePath()));
    return 0;
}

int cmdStudies(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Lists the studies in the workstation's disk cache."));
    p.addHelpOption();
    p.process(args);
    auto cache = openCache();
    if (!cache.isOk())
        return fail(cache.error().toString());
    Result<QList<StudySummary>> studies = runSync(loadStudies(cache.value().get()));
    if (!studies.isOk())
        return fail(studies.error().toString());
    for (const StudySummary &s : studies.value()) {
        out(QStringLiteral("%1\t%2\t%3\t%4\t%5\t%6 images\t%7%8")
                .arg(DicomIdentity::displayName(s.identity.patientName), s.identity.patientId, s.identity.studyDate,
                     s.modalities.join(QLatin1Char('/')), s.identity.studyDescription)
                .arg(s.instanceCount)
                .arg(s.identity.studyInstanceUid, s.identityConflict ? QStringLiteral("\tIDENTITY CONFLICT") : QString()));
    }
    const StoreUsage u = cache.value()->usage();
    std::fprintf(stderr, "%lld blobs, %.1f MB of %.1f MB in %s\n", qlonglong(u.blobs), u.bytes / 1e6, u.budget / 1e6,
                 qPrintable(cache.value()->root()));
    return 0;
}

int cmdImport(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Copies DICOM files into the workstation's disk cache: files, folders (walked whole) and "
                                               "DICOMDIR files (their folder). While the workstation runs, it takes the import over."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("files"), QStringLiteral("DICOM Part 10 files, folders or a DICOMDIR."), QStringLiteral("FILE..."));
    p.process(args);
    if (p.positionalArguments().isEmpty())
        return fail(QStringLiteral("import: name at least one file"), 2);
    for (const QString &path : p.positionalArguments()) {
        if (!QFileInfo::exists(path))
            return fail(QStringLiteral("import: %1: no such file or folder").arg(path), 2);
    }
    auto report = [](const ImportSummary &s) {
        for (const QString &f : s.notDicom)
            std::fprintf(stderr, "%s: not a DICOM instance, left out\n", qPrintable(f));
        for (const auto &[file, why] : s.failed)
            std::fprintf(stderr, "%s: %s\n", qPrintable(file), qPrintable(why));
        out(QStringLiteral("%1 imported (%2 studies), %3 not DICOM, %4 failed").arg(s.imported).arg(s.studies.size()).arg(s.notDicom.size()).arg(s.failed.size()));
        return s.failed.isEmpty() && s.imported > 0 ? 0 : 1;  // nothing imported at all is a failure too
    };
    auto progress = [](int done, int total) {
        if (done == total || done % 100 == 0)
            std::fprintf(stderr, "%d of %d files\n", done, total);
    };
    auto cache = openCache();
    if (!cache.isOk()) {
        if (cache.error().code() != ErrorCode::Busy)
            return fail(cache.error().toString());
        // The workstation holds the cache: it imports, we watch.
        Result<ImportSummary> handed = ImportService::handOver(WorkstationPaths::cacheDirectory(), p.positionalArguments(), progress);
        if (!handed.isOk())
            return fail(cache.error().toString() + QStringLiteral("; ") + handed.error().toString());
        std::fprintf(stderr, "imported by the running workstation\n");
        return report(handed.value());
    }
    DicomImport import(cache.value().get(), p.positionalArguments());
    ImportSummary summary;
    QEventLoop loop;
    QObject::connect(&import, &DicomImport::progress, &loop, progress);
    QObject::connect(&import, &DicomImport::finished, &loop, [&](const ImportSummary &s) {
        summary = s;
        loop.quit();
    });
    import.start();
    loop.exec();
    return report(summary);
}

int cmdConvert(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Rewrites a DICOM file as uncompressed explicit VR little endian, decoded by Spectrum's decoder."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("in"), QStringLiteral("A DICOM file in any transfer syntax Spectrum decodes."));
    p.addPositionalArgument(QStringLiteral("out"), QStringLiteral("Where to write the uncompressed file."));
    p.process(args);
    if (p.positionalArguments().size() != 2)
        return fail(QStringLiteral("convert: IN OUT"), 2);
    QFile in(p.positionalArguments().at(0));
    if (!in.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("cannot read %1: %2").arg(in.fileName(), in.errorString()));
    Result<QByteArray> converted = convertToExplicitLittleEndian(ByteView(in.readAll()));
    if (!converted.isOk())
        return fail(QStringLiteral("%1: %2").arg(in.fileName(), converted.error().toString()));
    QSaveFile file(p.positionalArguments().at(1));
    if (!file.open(QIODevice::WriteOnly) || file.write(converted.value()) != converted.value().size() || !file.commit())
        return fail(QStringLiteral("cannot write %1: %2").arg(file.fileName(), file.errorString()));
    out(QStringLiteral("%1 → %2 (explicit VR little endian)").arg(in.fileName(), p.positionalArguments().at(1)));
    return 0;
}

int cmdRender(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Renders one frame of a DICOM file to an 8-bit image (PNG, PGM or PPM)."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("in"), QStringLiteral("DICOM file."));
    p.addPositionalArgument(QStringLiteral("out"), QStringLiteral("Image file: .png, .pgm (gray), .ppm (colour) or .pnm."));
    p.addOption({QStringLiteral("window"), QStringLiteral("Window as CENTER,WIDTH in modality units (default: the file's first preset, else min/max)."), QStringLiteral("C,W")});
    p.addOption({QStringLiteral("frame"), QStringLiteral("Frame number, from 0."), QStringLiteral("N"), QStringLiteral("0")});
    p.process(args);
    if (p.positionalArguments().size() != 2)
        return fail(QStringLiteral("render: IN and OUT are required"), 2);
    Result<DecodedImage> image = decodeDicomFile(p.positionalArguments().at(0));
    if (!image.isOk())
        return fail(image.error().toString());
    const int frame = p.value(QStringLiteral("frame")).toInt();
    if (frame < 0 || frame >= image.value().info.frames)
        return fail(QStringLiteral("render: frame %1 out of 0…%2").arg(frame).arg(image.value().info.frames - 1), 2);
    VoiWindow window = defaultWindow(image.value(), frame);
    if (p.isSet(QStringLiteral("window"))) {
        const QStringList cw = p.value(QStringLiteral("window")).split(QLatin1Char(','));
        bool okC = false, okW = false;
        if (cw.size() == 2)
            window = VoiWindow{cw[0].toDouble(&okC), cw[1].toDouble(&okW)};
        if (!okC || !okW)
            return fail(QStringLiteral("render: --window takes CENTER,WIDTH"), 2);
    }
    if (Error e = writeImageFile(renderFrame(image.value(), frame, window), p.positionalArguments().at(1)); e.isError())
        return fail(e.toString(), e.code() == ErrorCode::InvalidArgument ? 2 : 1);
    const ImageInfo &info = image.value().info;
    out(QStringLiteral("%1×%2, %3 frame(s), %4, window %5/%6 → %7")
            .arg(info.columns).arg(info.rows).arg(info.frames).arg(info.photometricName)
            .arg(window.center).arg(window.width).arg(p.positionalArguments().at(1)));
    return 0;
}

// ---- blob:// commands ----

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
    p.process(args);
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
                 pr.verified ? ", SHA-256 verified" : "");
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
    out(QStringLiteral("%1: %2 bytes in the cache at %3").arg(target.key).arg(r.value().end - r.value().begin).arg(cache.value()->root()));
    return 0;
}

int cmdGet(const QStringList &args)
{
    QCommandLineParser p;
    p.addOption({QStringLiteral("range"), QStringLiteral("Only bytes [BEGIN, END)."), QStringLiteral("BEGIN-END")});
    p.addOption({QStringLiteral("no-sha256"), QStringLiteral("Skip the whole-blob SHA-256 check (~0.7 CPU-s per GiB); every frame's XXH3 is still checked.")});
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
            auto file = FileSink::createOrResume(out, end - begin, identity);
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
    printPullSummary(r.value());
    return 0;
}

int cmdPut(const QStringList &args)
{
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

void usage()
{
    std::fprintf(stderr,
                 "usage: spectrum-cli COMMAND [options]   (COMMAND --help for its options)\n"
                 "  demo --out DIR      write the demo studies as DICOM files\n"
                 "  studies             list the studies in the workstation's disk cache\n"
                 "  import FILE...      DICOM files, folders or a DICOMDIR into the disk cache (handed to a running workstation)\n"
                 "  render IN OUT       render a DICOM frame to PNG/PGM with a window\n"
                 "  convert IN OUT      rewrite as uncompressed explicit VR little endian (our decoder)\n"
                 "  filters             the filters (built-in and plugins) and their parameters\n"
                 "  filter IN OUT --filter NAME[:p=v,...]...   filter a DICOM file into a derived instance\n"
                 "  bench filters       time the filters against OpenCV and ImageMagick\n"
                 "  get URL FILE|-      fetch blob://HOST:PORT/KEY or blobs:// (TLS) (--streams N, --range B-E)\n"
                 "  get URL --cache     the same into the disk cache (resumable, even after kill -9)\n"
                 "  put URL FILE        store a file as blob://HOST:PORT/KEY\n"
                 "  stat URL            size, version and SHA-256 of a blob\n"
                 "  ls URL-PREFIX       blobs whose key starts with the prefix\n"
                 "  stores add|list|test|remove   the configured archives (dicomweb, dimse, blobd, local)\n"
                 "  find [--store NAME] [--patient-name P] [--patient-id I] [--date FROM-TO] [--modality M] [--json]\n"
                 "  fetch --store NAME STUDY_UID [--out DIR]   a study into the cache (or a folder)\n"
                 "  export --store NAME FILE...   send DICOM files to a store\n"
                 "  listen [--aet A] [--port P]   the Storage SCP, headless\n"
                 "environment: SPECTRUM_CACHE_DIR (cache folder), SPECTRUM_CACHE_BUDGET_MB, SPECTRUM_TOKEN, SPECTRUM_CONFIG (stores)\n");
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);  // no GUI library at all: images are written with libpng (imagefile.h)
    QCoreApplication::setOrganizationName(QStringLiteral("Spectrum"));
    QCoreApplication::setApplicationName(QStringLiteral("Spectrum"));
    QCoreApplication::setApplicationVersion(QStringLiteral(SPECTRUM_VERSION));
    QStringList args = app.arguments();
    if (args.size() < 2 || args.at(1) == QLatin1String("--help") || args.at(1) == QLatin1String("-h")) {
        usage();
        return args.size() < 2 ? 2 : 0;
    }
    const QString command = args.at(1);
    // Meanwhile the store is opened and asked, so the first instance need not wait. Not for a fetch: over DICOMweb
    // or from a blob store it indexes instances without DCMTK (identityscan.h); over DIMSE it preloads itself.
    if (command != QLatin1String("stores") && command != QLatin1String("filters") && command != QLatin1String("fetch"))
        preloadDicomDictionary();
    args.removeAt(1);  // leaves "spectrum-cli <options…>" for the sub-command's parser
    args[0] = QStringLiteral("spectrum-cli ") + command;
    if (command == QLatin1String("demo")) return cmdDemo(args);
    if (command == QLatin1String("studies")) return cmdStudies(args);
    if (command == QLatin1String("import")) return cmdImport(args);
    if (command == QLatin1String("render")) return cmdRender(args);
    if (command == QLatin1String("convert")) return cmdConvert(args);
    if (command == QLatin1String("filters")) return spectrum::cli::cmdFilters(args);
    if (command == QLatin1String("filter")) return spectrum::cli::cmdFilter(args);
    if (command == QLatin1String("bench")) return spectrum::cli::cmdBench(args);
    if (command == QLatin1String("get")) return cmdGet(args);
    if (command == QLatin1String("put")) return cmdPut(args);
    if (command == QLatin1String("stat")) return cmdStat(args);
    if (command == QLatin1String("ls")) return cmdLs(args);
    if (command == QLatin1String("stores")) return spectrum::cli::cmdStores(args);
    if (command == QLatin1String("find")) return spectrum::cli::cmdFind(args);
    if (command == QLatin1String("fetch")) return spectrum::cli::cmdFetch(args);
    if (command == QLatin1String("export")) return spectrum::cli::cmdExport(args);
    if (command == QLatin1String("listen")) return spectrum::cli::cmdListen(args);
    usage();
    return fail(QStringLiteral("unknown command '%1'").arg(command), 2);
}
