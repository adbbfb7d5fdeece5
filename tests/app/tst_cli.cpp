// SPDX-License-Identifier: Apache-2.0
// spectrum-cli as a user runs it: demo files, import into the cache, list studies, render; clear errors.

#include "spectrum/core/error.h"
#include "testsupport.h"

#include "spectrum/imaging/demostudies.h"

#include <QDir>
#include <QImage>

#include <cstring>
#include <QFileInfo>
#include <QProcess>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum::test;

namespace {
ProcessResult cli(const QStringList &args, const QString &cacheDir)
{
    return runCli(args, {{QStringLiteral("SPECTRUM_CACHE_DIR"), cacheDir}});
}

/// The demo MR's fifth slice (written under `dir`), put on a blob server started there under `key`.
struct SliceOnBlobd
{
    std::unique_ptr<BlobdProcess> blobd;
    QString original;     ///< the slice's file
    QString url;          ///< blob://…/key
    QStringList token;    ///< the options that hand the token over
};

SliceOnBlobd putSlice(const QTemporaryDir &dir, const QString &cache, const QString &key)
{
    SliceOnBlobd s;
    if (!cli({QStringLiteral("demo"), QStringLiteral("--out"), dir.path(), QStringLiteral("--only"), QStringLiteral("demo-mr")}, cache).ok())
        return s;
    s.original = dir.filePath(QStringLiteral("demo-mr/IM0005.dcm"));
    s.blobd = std::make_unique<BlobdProcess>(dir.filePath(QStringLiteral("blobs")));
    if (!s.blobd->start() || !writePrivateFile(dir.filePath(QStringLiteral("token")), s.blobd->token().toUtf8()))
        return s;
    s.url = QStringLiteral("blob://127.0.0.1:%1/%2").arg(s.blobd->port()).arg(key);
    s.token = {QStringLiteral("--token-file"), dir.filePath(QStringLiteral("token"))};
    if (!cli(QStringList{QStringLiteral("put"), s.url, s.original} + s.token, cache).ok())
        s.url.clear();
    return s;
}
} // namespace

class tst_Cli : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // Every executable answers --help (on standard output, exit 0: what help2man reads) and --version; the CLI's
    // usage is its command table, each command's own --help works, and a wrong command says how to find the right.
    void everyExecutableHasHelpAndVersion()
    {
        QTemporaryDir dir;
        const QByteArray version = SPECTRUM_VERSION;
        for (const char *exe : {SPECTRUM_CLI_EXECUTABLE, SPECTRUM_BLOBD_EXECUTABLE, SPECTRUM_GUI_EXECUTABLE}) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.remove(QStringLiteral("DISPLAY"));  // the workstation answers without a screen
            env.remove(QStringLiteral("WAYLAND_DISPLAY"));
            env.remove(QStringLiteral("QT_QPA_PLATFORM"));
            p.setProcessEnvironment(env);
            p.start(QString::fromUtf8(exe), {QStringLiteral("--version")});
            QVERIFY(p.waitForFinished(30000));
            QCOMPARE(p.exitCode(), 0);
            QVERIFY2(p.readAllStandardOutput().trimmed().endsWith(" " + version), exe);
            p.start(QString::fromUtf8(exe), {QStringLiteral("--help")});
            QVERIFY(p.waitForFinished(30000));
            QCOMPARE(p.exitCode(), 0);
            QVERIFY2(p.readAllStandardOutput().startsWith("Usage: "), exe);
        }
        ProcessResult r = cli({QStringLiteral("--help")}, dir.path());
        QVERIFY(r.ok());
        for (const char *command : {"demo", "studies", "import", "render", "convert", "filters", "filter", "get", "put", "stat", "ls",
                                    "stores", "find", "fetch", "export", "listen"}) {
            QVERIFY2(r.out.contains("\n  " + QByteArray(command) + " ") || r.out.contains("\n  " + QByteArray(command) + "\n"), command);
            const ProcessResult own = cli({QString::fromLatin1(command), QStringLiteral("--help")}, dir.path());
            // The usage names the command, not the program alone (a parser's default).
            QVERIFY2(own.ok() && own.out.startsWith("Usage: spectrum-cli " + QByteArray(command) + " "), own.out.left(80).constData());
        }
        const ProcessResult sub = cli({QStringLiteral("stores"), QStringLiteral("edit"), QStringLiteral("--help")}, dir.path());
        QVERIFY2(sub.ok() && sub.out.startsWith("Usage: spectrum-cli stores edit [options]"), sub.out.left(80).constData());
        // --help-all (Qt's companion of --help) is help too, never the command run.
        const ProcessResult all = cli({QStringLiteral("cache"), QStringLiteral("clear"), QStringLiteral("--yes"), QStringLiteral("--help-all")}, dir.path());
        QVERIFY2(all.ok() && all.out.startsWith("Usage: spectrum-cli cache ") && !all.out.contains("removed"), all.out.constData());
        // An unknown option is wrong usage (2), and the message says where the right ones are.
        const ProcessResult wrong = cli({QStringLiteral("find"), QStringLiteral("--stor"), QStringLiteral("x")}, dir.path());
        QCOMPARE(wrong.exitCode, 2);
        QVERIFY2(wrong.err.contains("spectrum-cli find: Unknown option 'stor'.") && wrong.err.contains("spectrum-cli find --help"), wrong.err.constData());
        QVERIFY(!r.out.contains("bench"));  // the benchmarks are not the product's (tests/bench)
        r = cli({QStringLiteral("fecth")}, dir.path());
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("unknown command 'fecth' (spectrum-cli --help lists them)"), r.err.constData());
        r = cli({}, dir.path());
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.startsWith("Usage: spectrum-cli"));
    }

    void demoImportStudiesRender()
    {
        QTemporaryDir dir;
        const QString cache = dir.filePath(QStringLiteral("cache"));
        const QString out = dir.filePath(QStringLiteral("demo"));
        ProcessResult r = cli({QStringLiteral("demo"), QStringLiteral("--out"), out, QStringLiteral("--ct-slices"), QStringLiteral("5"),
                               QStringLiteral("--only"), QStringLiteral("demo-ct"), QStringLiteral("--only"), QStringLiteral("demo-mr")}, cache);
        QVERIFY2(r.ok(), r.err.constData());
        QVERIFY(r.out.contains("demo-ct  2.25."));
        QCOMPARE(QDir(out + QStringLiteral("/demo-ct")).entryList(QDir::Files).size(), 5);
        QCOMPARE(QDir(out + QStringLiteral("/demo-mr")).entryList(QDir::Files).size(), 24);
        QVERIFY(!QDir(out + QStringLiteral("/demo-cr")).exists());

        r = cli({QStringLiteral("import"), out + QStringLiteral("/demo-ct"), out + QStringLiteral("/demo-mr")}, cache);
        QVERIFY2(r.ok(), r.err.constData());
        QVERIFY2(r.out.contains("29 imported (2 studies), 0 not DICOM, 0 failed"), r.out.constData());

        r = cli({QStringLiteral("studies")}, cache);
        QVERIFY2(r.ok(), r.err.constData());
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        QVERIFY(lines[0].contains("DEMO, HEAD PHANTOM") && lines[0].contains("MR") && lines[0].contains("24 images"));
        QVERIFY(lines[1].contains("CT") && lines[1].contains("5 images"));
        // A name as a person says it, as the study browser reads it: the start of any part, any case; a DICOM
        // pattern as it is; the middle of a word is no name.
        for (const auto &[typed, count] : {std::pair<const char *, int>{"demo", 2}, {"head phan", 2}, {"Phantom DEMO", 2}, {"DEMO*", 2}, {"emo", 0}, {"smith", 0}}) {
            r = cli({QStringLiteral("studies"), QStringLiteral("--patient-name"), QString::fromUtf8(typed)}, cache);
            QVERIFY2(r.ok() && r.out.count('\n') == count, qPrintable(QStringLiteral("%1: %2").arg(QString::fromUtf8(typed), QString::fromUtf8(r.out))));
        }

        const QString png = dir.filePath(QStringLiteral("slice.png"));
        r = cli({QStringLiteral("render"), out + QStringLiteral("/demo-ct/IM0003.dcm"), png, QStringLiteral("--window"), QStringLiteral("40,80")}, cache);
        QVERIFY2(r.ok(), r.err.constData());
        const QImage img(png);
        QCOMPARE(img.size(), QSize(512, 512));
        QCOMPARE(img.format(), QImage::Format_Grayscale8);
        QCOMPARE(qGray(img.pixel(0, 0)), 0);  // air, below the brain window
        // The same pixels as a binary PGM; a format it does not write is a usage error that names the ones it does.
        const QString pgm = dir.filePath(QStringLiteral("slice.pgm"));
        r = cli({QStringLiteral("render"), out + QStringLiteral("/demo-ct/IM0003.dcm"), pgm, QStringLiteral("--window"), QStringLiteral("40,80")}, cache);
        QVERIFY2(r.ok(), r.err.constData());
        QVERIFY(readFile(pgm).startsWith("P5\n512 512\n255\n"));
        const QImage fromPgm = QImage(pgm).convertToFormat(QImage::Format_Grayscale8);
        QCOMPARE(fromPgm.size(), img.size());
        for (int y = 0; y < img.height(); ++y)  // the pixels (the PNG also says its colour space)
            QVERIFY(std::memcmp(fromPgm.constScanLine(y), img.constScanLine(y), size_t(img.width())) == 0);
        r = cli({QStringLiteral("render"), out + QStringLiteral("/demo-ct/IM0003.dcm"), dir.filePath(QStringLiteral("slice.gif"))}, cache);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(".png, .pgm, .ppm or .pnm"), r.err.constData());
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("slice.gif"))));
    }

    void workstationScreenshotShowsTheDemoCt()
    {
        QTemporaryDir dir;
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("SPECTRUM_CACHE_DIR"), dir.filePath(QStringLiteral("cache")));
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        p.setProcessEnvironment(env);
        const QString png = dir.filePath(QStringLiteral("ct.png"));
        p.start(QStringLiteral(SPECTRUM_GUI_EXECUTABLE), {QStringLiteral("--screenshot"), png, QStringLiteral("--open"),
                                                          QStringLiteral("demo-ct"), QStringLiteral("--slice"), QStringLiteral("120")});
        QVERIFY(p.waitForFinished(180000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const QImage shot(png);
        QCOMPARE(shot.size(), QSize(1400, 900));
        // Laid out by its protocol: the CT and its prior side by side, each pane's middle the phantom — brain
        // grey, not the empty black of a missing image.
        for (const double x : {0.38, 0.78}) {
            const QColor centre = shot.pixelColor(int(shot.width() * x), shot.height() / 2 + 200);  // below the ventricles
            QVERIFY2(qGray(centre.rgb()) > 60 && qGray(centre.rgb()) < 200, qPrintable(QStringLiteral("%1 at %2").arg(centre.name()).arg(x)));
        }
        // An unknown study is a clear error, not a hang.
        p.start(QStringLiteral(SPECTRUM_GUI_EXECUTABLE), {QStringLiteral("--screenshot"), png, QStringLiteral("--open"), QStringLiteral("2.25.999")});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(p.readAllStandardError().contains("no study '2.25.999'"));
    }

    /// What the screenshot drew (--measure) saved as File > Save findings does (--save-findings local), read back by
    /// `spectrum-cli findings` as the workstation reads it; then the study, report and view with it, copied
    /// de-identified by `spectrum-cli deidentify`.
    void findingsSavedByTheScreenshotAndReadBack()
    {
        QTemporaryDir dir;
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("SPECTRUM_CACHE_DIR"), dir.filePath(QStringLiteral("cache")));
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("HOME"), dir.path());  // its own settings: the reader's name unset
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.filePath(QStringLiteral("config")));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(SPECTRUM_GUI_EXECUTABLE), {QStringLiteral("--screenshot"), dir.filePath(QStringLiteral("ct.png")), QStringLiteral("--open"),
                                                          QStringLiteral("demo-ct"), QStringLiteral("--measure"), QStringLiteral("--save-findings"),
                                                          QStringLiteral("local")});
        QVERIFY(p.waitForFinished(180000));
        const QByteArray err = p.readAllStandardError();
        QVERIFY2(p.exitCode() == 0, err.constData());
        QVERIFY2(err.contains("findings saved: 2 document(s)"), err.constData());  // the report and the view
        const QString ct = spectrum::DemoArchive::studyUid(spectrum::DemoStudy::HeadCt);
        const ProcessResult findings = cli({QStringLiteral("findings"), ct}, dir.filePath(QStringLiteral("cache")));
        QVERIFY2(findings.ok(), findings.err.constData());
        const QString text = QString::fromUtf8(findings.out);
        for (const char *line : {"Imaging Measurement Report (TID 1500)", "  Distance: 150.0 mm", "  Ellipse: Mean ", "  Angle: ",
                                 "  Arrow \"lesion, compare with prior\""})
            QVERIFY2(text.contains(QString::fromUtf8(line)), qPrintable(text));
        const ProcessResult json = cli({QStringLiteral("findings"), ct, QStringLiteral("--json")}, dir.filePath(QStringLiteral("cache")));
        QVERIFY(json.ok());
        const QJsonArray reports = QJsonDocument::fromJson(json.out).array();
        QCOMPARE(reports.size(), 1);
        QCOMPARE(reports[0][QStringLiteral("findings")].toArray().size(), 4);
        QCOMPARE(reports[0][QStringLiteral("findings")].toArray()[0][QStringLiteral("values")].toArray()[0][QStringLiteral("value")].toDouble(), 150.0);

        const QString out = dir.filePath(QStringLiteral("anonymous"));
        const ProcessResult copy = cli({QStringLiteral("deidentify"), ct, QStringLiteral("--out"), out}, dir.filePath(QStringLiteral("cache")));
        QVERIFY2(copy.ok(), copy.err.constData());
        QVERIFY2(copy.out.contains("de-identified instance(s)"), copy.out.constData());
        const QStringList files = QDir(out).entryList({QStringLiteral("*.dcm")});
        QVERIFY(files.size() > 200);
        // The copied report reads, and names no one.
        const ProcessResult again = cli(QStringList{QStringLiteral("findings")} + [&] {
            QStringList paths;
            for (const QString &f : files)
                paths << QDir(out).filePath(f);
            return paths;
        }(), dir.filePath(QStringLiteral("cache")));
        QVERIFY2(!again.out.contains("DEMO, HEAD PHANTOM") && again.out.contains("patient ANONYMOUS"), again.out.left(2000).constData());
        QVERIFY(again.out.contains("Distance: 150.0 mm"));
    }

    /// The folders STORES.md and docs/READING.md name: the configuration in ~/.config/Spectrum, the cache in
    /// ~/.local/share/Spectrum/cache (through $XDG_CONFIG_HOME and $XDG_DATA_HOME).
    void pathsAreWhereTheDocumentsSay()
    {
        QTemporaryDir home;
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const QString &v : {QStringLiteral("SPECTRUM_CACHE_DIR"), QStringLiteral("SPECTRUM_CONFIG")})
            env.remove(v);
        env.insert(QStringLiteral("HOME"), home.path());
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
        env.insert(QStringLiteral("XDG_DATA_HOME"), home.filePath(QStringLiteral("data")));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("stores"), QStringLiteral("add"), QStringLiteral("pacs"), QStringLiteral("--kind"),
                                                         QStringLiteral("dicomweb"), QStringLiteral("--url"), QStringLiteral("http://127.0.0.1:1/dicom-web")});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QVERIFY(QFileInfo::exists(home.filePath(QStringLiteral("config/Spectrum/stores.json"))));
        // An option of another kind is refused, named, and nothing is written.
        const QByteArray before = readFile(home.filePath(QStringLiteral("config/Spectrum/stores.json")));
        p.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("stores"), QStringLiteral("edit"), QStringLiteral("pacs"), QStringLiteral("--bucket"),
                                                         QStringLiteral("radiology")});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(p.readAllStandardError().contains("--bucket is not an option of a dicomweb store"));
        QCOMPARE(readFile(home.filePath(QStringLiteral("config/Spectrum/stores.json"))), before);
        p.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("studies")});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QVERIFY(QFileInfo(home.filePath(QStringLiteral("data/Spectrum/cache"))).isDir());
    }

    void errorsAreClearAndNonZero()
    {
        QTemporaryDir dir;
        const QString cache = dir.filePath(QStringLiteral("cache"));
        const QString junk = dir.filePath(QStringLiteral("junk.dcm"));
        QVERIFY(writeFile(junk, QByteArray(300, 'j')));
        ProcessResult r = cli({QStringLiteral("import"), junk}, cache);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("junk.dcm: not a DICOM file, left out"), r.err.constData());
        r = cli({QStringLiteral("render"), junk, dir.filePath(QStringLiteral("x.png"))}, cache);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("invalid DICOM"), r.err.constData());
        r = cli({QStringLiteral("frobnicate")}, cache);
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("unknown command 'frobnicate'"));
        r = cli({QStringLiteral("demo")}, cache);
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("--out DIR is required"));
        for (const QString &port : {QStringLiteral("0"), QStringLiteral("70000"), QStringLiteral("abc")}) {
            // Port 0 would listen on a port the kernel picks and nobody is told.
            r = cli({QStringLiteral("listen"), QStringLiteral("--port"), port}, cache);
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains("is not a TCP port"), r.err.constData());
        }
    }
    void convertWritesUncompressedPixelForPixel_data()
    {
        QTest::addColumn<QString>("tool");
        QTest::addColumn<QStringList>("options");
        QTest::newRow("JPEG-LS lossless") << QStringLiteral(DCMCJPLS_EXECUTABLE) << QStringList{QStringLiteral("+el")};
        QTest::newRow("JPEG lossless SV1") << QStringLiteral(DCMCJPEG_EXECUTABLE) << QStringList{QStringLiteral("+e1")};
        QTest::newRow("RLE") << QStringLiteral(DCMCRLE_EXECUTABLE) << QStringList();
    }

    void convertWritesUncompressedPixelForPixel()
    {
        QFETCH(QString, tool);
        QFETCH(QStringList, options);
        QTemporaryDir dir;
        const QString cache = dir.filePath(QStringLiteral("cache"));
        ProcessResult r = cli({QStringLiteral("demo"), QStringLiteral("--out"), dir.path(), QStringLiteral("--only"), QStringLiteral("demo-mr")}, cache);
        QVERIFY2(r.ok(), r.err.constData());
        const QString original = dir.filePath(QStringLiteral("demo-mr/IM0005.dcm"));
        const QString compressed = dir.filePath(QStringLiteral("compressed.dcm")), converted = dir.filePath(QStringLiteral("converted.dcm"));
        const ProcessResult c = run(tool, options + QStringList{original, compressed});
        QVERIFY2(c.ok(), c.err.constData());
        r = cli({QStringLiteral("convert"), compressed, converted}, cache);
        QVERIFY2(r.ok(), r.err.constData());
        const ProcessResult dump = run(QStringLiteral(DCMDUMP_EXECUTABLE), {converted});
        QVERIFY(dump.ok());
        QVERIFY(dump.out.contains("=LittleEndianExplicit"));
        QVERIFY(dump.out.contains("(0028,0101) US 12"));  // the original's precision is kept
        // Lossless in, so the pixels are the original's, byte for byte (Pixel Data ends both files).
        const QByteArray before = readFile(original), after = readFile(converted);
        const qsizetype pixelBytes = 256 * 256 * 2;
        QVERIFY(after.size() > pixelBytes);
        QVERIFY(after.right(pixelBytes) == before.right(pixelBytes));
    }

    void convertKeepsEverySampleDepth_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("codec");  // compressed first by this DCMTK tool (lossless), or not
        for (const char *name : {"rtdose", "signed32", "float", "double", "rgb16", "rgb16-planar", "rgb32", "seg"})
            QTest::newRow(name) << QString::fromLatin1(name) << QString();
        QTest::newRow("signed32, RLE") << QStringLiteral("signed32") << QStringLiteral(DCMCRLE_EXECUTABLE);
        QTest::newRow("rgb16, RLE") << QStringLiteral("rgb16") << QStringLiteral(DCMCRLE_EXECUTABLE);
        QTest::newRow("rgb32, RLE") << QStringLiteral("rgb32") << QStringLiteral(DCMCRLE_EXECUTABLE);
        QTest::newRow("rgb16, JPEG-LS") << QStringLiteral("rgb16") << QStringLiteral(DCMCJPLS_EXECUTABLE);
        QTest::newRow("rgb16, JPEG 2000 (YBR_RCT)") << QStringLiteral("rgb16") << QStringLiteral("j2k");  // OpenJPEG's opj_compress, pydicom
    }

    /// RT Dose, 32-bit integers, Float and Double Float Pixel Data, 16-bit colour (also from JPEG 2000, which our
    /// decoder shows at 8 bits) and 1-bit segmentations come out of `convert` with the very values they went in
    /// with, as pydicom reads both files.
    void convertKeepsEverySampleDepth()
    {
        QFETCH(QString, name);
        QFETCH(QString, codec);
        QTemporaryDir dir;
        const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(DEPTH_FILES_SCRIPT), dir.path()});
        QVERIFY2(made.ok(), made.err.constData());
        const QString original = dir.filePath(name + QStringLiteral(".dcm"));
        QString in = original;
        if (!codec.isEmpty()) {
            in = dir.filePath(QStringLiteral("compressed.dcm"));
            const ProcessResult c = codec == QLatin1String("j2k")
                ? run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(J2K_COLOUR_SCRIPT), original, in, QStringLiteral(OPJ_COMPRESS_EXECUTABLE)})
                : run(codec, {original, in});
            QVERIFY2(c.ok(), c.err.constData());
        }
        const QString out = dir.filePath(QStringLiteral("converted.dcm"));
        const ProcessResult r = cli({QStringLiteral("convert"), in, out}, dir.filePath(QStringLiteral("cache")));
        QVERIFY2(r.ok(), r.err.constData());
        const ProcessResult same = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(SAME_PIXELS_SCRIPT), original, out});
        QVERIFY2(same.ok(), (same.out + same.err).constData());
        const ProcessResult dump = run(QStringLiteral(DCMDUMP_EXECUTABLE), {out});
        QVERIFY(dump.ok() && dump.out.contains("=LittleEndianExplicit"));
    }

    void convertRefusesWhatItCannotRead()
    {
        QTemporaryDir dir;
        const QString junk = dir.filePath(QStringLiteral("junk.dcm"));
        QVERIFY(writeFile(junk, QByteArray(300, 'j')));
        const ProcessResult r = cli({QStringLiteral("convert"), junk, dir.filePath(QStringLiteral("out.dcm"))}, dir.filePath(QStringLiteral("cache")));
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("junk.dcm") && r.err.contains("invalid DICOM"), r.err.constData());
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("out.dcm"))));
    }

    void filtersListsBuiltInsAndPlugins()
    {
        QTemporaryDir dir;
        const ProcessResult r = cli({QStringLiteral("filters")}, dir.filePath(QStringLiteral("cache")));
        QVERIFY2(r.ok(), r.err.constData());
        QVERIFY(r.out.contains("unsharp ") && r.out.contains("amount=N") && r.out.contains("method=NAME"));
        QVERIFY2(r.out.contains("spectrum-gamma.so]"), r.out.constData());  // found next to the executable, in filters/
    }

    void filterWritesADerivedInstance()
    {
        QTemporaryDir dir;
        const QString cache = dir.filePath(QStringLiteral("cache"));
        ProcessResult r = cli({QStringLiteral("demo"), QStringLiteral("--out"), dir.path(), QStringLiteral("--only"), QStringLiteral("demo-mr")}, cache);
        QVERIFY2(r.ok(), r.err.constData());
        const QString original = dir.filePath(QStringLiteral("demo-mr/IM0005.dcm")), derived = dir.filePath(QStringLiteral("derived.dcm"));
        r = cli({QStringLiteral("filter"), original, derived, QStringLiteral("--filter"), QStringLiteral("invert"), QStringLiteral("--filter"),
                 QStringLiteral("rotate:angle=90")}, cache);
        QVERIFY2(r.ok(), r.err.constData());
        const ProcessResult dump = run(QStringLiteral(DCMDUMP_EXECUTABLE), {derived});
        QVERIFY(dump.ok());
        QVERIFY2(dump.out.contains("[DERIVED\\SECONDARY\\M\\ND]"), dump.out.constData());  // the MR's own values after the first two kept
        QVERIFY2(dump.out.contains("[invert; rotate:angle=90]"), dump.out.constData());
        QVERIFY(dump.out.contains("(0028,0101) US 12"));
        // The pixels, computed here independently: 12-bit inversion, then a quarter turn clockwise.
        const QByteArray before = readFile(original), after = readFile(derived);
        const int n = 256;
        const auto *in = reinterpret_cast<const quint16 *>(before.constData() + before.size() - n * n * 2);
        const auto *out = reinterpret_cast<const quint16 *>(after.constData() + after.size() - n * n * 2);
        int mismatches = 0;
        for (int y = 0; y < n; ++y)
            for (int x = 0; x < n; ++x)
                mismatches += out[y * n + x] != 4095 - in[(n - 1 - x) * n + y];
        QCOMPARE(mismatches, 0);
    }

    void filterWhileABlobStreamsIn()
    {
        QTemporaryDir dir;
        const QString cache = dir.filePath(QStringLiteral("cache"));
        const SliceOnBlobd slice = putSlice(dir, cache, QStringLiteral("mr5"));
        QVERIFY(!slice.url.isEmpty());
        const QString &original = slice.original, &url = slice.url;
        const QStringList &token = slice.token;
        ProcessResult r;
        const QString fromFile = dir.filePath(QStringLiteral("file.dcm")), fromBlob = dir.filePath(QStringLiteral("blob.dcm"));
        const QStringList chain{QStringLiteral("--filter"), QStringLiteral("unsharp:amount=2"), QStringLiteral("--filter"), QStringLiteral("edge")};
        r = cli(QStringList{QStringLiteral("filter"), original, fromFile} + chain, cache);
        QVERIFY2(r.ok(), r.err.constData());
        r = cli(QStringList{QStringLiteral("filter"), url, fromBlob} + chain + token, cache);
        QVERIFY2(r.ok(), r.err.constData());
        QVERIFY2(r.out.contains("first rows at"), r.out.constData());
        // Filtered while streaming or from the file: the same pixels (Pixel Data ends both files).
        const QByteArray a = readFile(fromFile), b = readFile(fromBlob);
        const qsizetype pixelBytes = 256 * 256 * 2;
        QVERIFY(a.size() > pixelBytes && b.size() > pixelBytes);
        QVERIFY(a.right(pixelBytes) == b.right(pixelBytes));
        QVERIFY(a.right(pixelBytes) != readFile(original).right(pixelBytes));
    }

    void anInstanceGotByItsBlobKeyIsOneImage()
    {
        // An instance fetched by `get blob://…/KEY --cache` under a key of its own, then brought again by an
        // import (its file): the cache holds it once, under its SOP Instance UID — one image, not two.
        QTemporaryDir dir;
        const QString cache = dir.filePath(QStringLiteral("cache"));
        const SliceOnBlobd slice = putSlice(dir, cache, QStringLiteral("teaching-mr-slice-5"));
        QVERIFY(!slice.url.isEmpty());
        const QString &original = slice.original, &url = slice.url;
        const QStringList &token = slice.token;
        ProcessResult r = cli(QStringList{QStringLiteral("get"), url, QStringLiteral("--cache")} + token, cache);
        QVERIFY2(r.ok(), r.err.constData());
        QVERIFY2(r.out.contains("as instance "), r.out.constData());
        r = cli({QStringLiteral("studies")}, cache);
        QVERIFY2(r.ok() && r.out.contains("\t1 images\t"), r.out.constData());
        r = cli({QStringLiteral("import"), original}, cache);
        QVERIFY2(r.ok(), r.err.constData());
        r = cli({QStringLiteral("studies")}, cache);
        QVERIFY2(r.ok() && r.out.contains("\t1 images\t") && r.out.count('\n') == 1, r.out.constData());
        // And got again: kept once.
        r = cli(QStringList{QStringLiteral("get"), url, QStringLiteral("--cache")} + token, cache);
        QVERIFY2(r.ok() && r.out.contains("which the cache holds already"), (r.out + r.err).constData());
        r = cli({QStringLiteral("studies")}, cache);
        QVERIFY2(r.ok() && r.out.contains("\t1 images\t"), r.out.constData());
    }

    void filterRefusesWhatItCannotDo()
    {
        QTemporaryDir dir;
        const QString cache = dir.filePath(QStringLiteral("cache")), target = dir.filePath(QStringLiteral("out.dcm"));
        ProcessResult r = cli({QStringLiteral("demo"), QStringLiteral("--out"), dir.path(), QStringLiteral("--only"), QStringLiteral("demo-mr")}, cache);
        QVERIFY(r.ok());
        const QString original = dir.filePath(QStringLiteral("demo-mr/IM0005.dcm"));
        r = cli({QStringLiteral("filter"), original, target, QStringLiteral("--filter"), QStringLiteral("nope")}, cache);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("no filter 'nope'"), r.err.constData());
        r = cli({QStringLiteral("filter"), original, target, QStringLiteral("--filter"), QStringLiteral("gaussian:sigma=-1")}, cache);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("sigma must be between"), r.err.constData());
        const QString junk = dir.filePath(QStringLiteral("junk.dcm"));
        QVERIFY(writeFile(junk, QByteArray(300, 'j')));
        r = cli({QStringLiteral("filter"), junk, target, QStringLiteral("--filter"), QStringLiteral("blur")}, cache);
        QCOMPARE(r.exitCode, 1);
        QVERIFY(!QFile::exists(target));
    }
};

QTEST_GUILESS_MAIN(tst_Cli)
#include "tst_cli.moc"
