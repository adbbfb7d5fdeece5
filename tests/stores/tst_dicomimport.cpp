// DicomImport, the import of DICOM files from outside (a folder, a CD): many files at once, what is not DICOM and
// what cannot be read named in file order, two files of one instance stored one after the other, and — the point of
// storing many at once without a sync each — nothing said to be imported before it is on the disk: the import ends
// with one sync of the whole, which the index notes: no blob is left that a sync does not cover.

#include "spectrum/stores/dicomimport.h"
#include "spectrum/stores/filestore.h"
#include "testsupport.h"
#include "cacheindex.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;
using namespace spectrum::test;

class tst_DicomImport : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void aFolderComesInWholeAndSynced();
    void killedMidwayKeepsWholeInstancesAndImportsTheRestAgain();
};

void tst_DicomImport::aFolderComesInWholeAndSynced()
{
    QTemporaryDir dir;
    const QString in = dir.filePath(QStringLiteral("in"));
    const ProcessResult demo = run(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("demo"), QStringLiteral("--out"), in,
                                                                          QStringLiteral("--only"), QStringLiteral("demo-mr")});
    QVERIFY2(demo.ok(), demo.err.constData());
    const QDir mr(in + QStringLiteral("/demo-mr"));
    const QStringList files = mr.entryList(QDir::Files, QDir::Name);
    QVERIFY(files.size() > 16);  // more than the import takes at once
    // The same instance twice (a copy under another name), a file that is not DICOM, and one that is gone.
    QVERIFY(QFile::copy(mr.filePath(files[3]), in + QStringLiteral("/zz-copy.dcm")));
    QVERIFY(writeFile(in + QStringLiteral("/README.TXT"), "not an image\n"));
    const QString gone = dir.filePath(QStringLiteral("gone.dcm"));

    const QString root = dir.filePath(QStringLiteral("cache"));
    auto cache = FileStore::open(root, 0);
    QVERIFY(cache.isOk());
    DicomImport import(cache.value().get(), {in, gone});
    QSignalSpy finished(&import, &DicomImport::finished);
    QSignalSpy progress(&import, &DicomImport::progress);
    import.start();
    QVERIFY(finished.wait(60000));
    const ImportSummary s = finished.first().first().value<ImportSummary>();
    QCOMPARE(s.imported, int(files.size()));  // the copy is one instance: kept once, the other file named
    QCOMPARE(s.duplicates.size(), 1);
    QVERIFY2(s.duplicates[0].second.contains(QStringLiteral("an exact copy")), qPrintable(s.duplicates[0].second));
    QCOMPARE(s.notDicomWhy, QStringList{QStringLiteral("not a DICOM file")});
    QCOMPARE(s.studies.size(), 1);
    QCOMPARE(s.notDicom, QStringList{QFileInfo(in + QStringLiteral("/README.TXT")).canonicalFilePath()});
    QCOMPARE(s.failed.size(), 1);
    QCOMPARE(s.failed[0].first, QFileInfo(gone).absoluteFilePath());
    QCOMPARE(progress.last().at(0).toInt(), int(files.size()) + 3);

    // Every instance is in the cache, whole; and the index records each as synced.
    Result<QList<BlobInfo>> all = runSync(cache.value()->query(BlobQuery()));
    QVERIFY(all.isOk());
    QCOMPARE(all.value().size(), files.size());
    for (const QString &f : files) {
        const QByteArray original = readFile(mr.filePath(f));
        bool found = false;
        for (const BlobInfo &b : all.value()) {
            Result<ByteView> bytes = runSync(cache.value()->read(b.key));
            QVERIFY(bytes.isOk());
            found = found || bytes.value().toByteArray() == original;
        }
        QVERIFY2(found, qPrintable(f));
    }
    // Synced: every blob written without a sync is covered by the sync the index noted.
    QCOMPARE(indexSql(root, QStringLiteral("SELECT count(*) FROM blobs")), QStringList{QString::number(files.size())});
    QCOMPARE(indexSql(root, kUnsyncedBlobs), QStringList{QStringLiteral("0")});
}

void tst_DicomImport::killedMidwayKeepsWholeInstancesAndImportsTheRestAgain()
{
    // 600 small instances written by pydicom; `spectrum-cli import` killed -9 once it has said it is a sixth through.
    QTemporaryDir dir;
    const QString in = dir.filePath(QStringLiteral("in"));
    const ProcessResult made = run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(IMPORT_FILES_SCRIPT), in, QStringLiteral("600")});
    QVERIFY2(made.ok(), made.err.constData());
    const QString root = dir.filePath(QStringLiteral("cache"));
    QProcess cli;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_CACHE_DIR"), root);
    cli.setProcessEnvironment(env);
    cli.setProcessChannelMode(QProcess::MergedChannels);
    QByteArray said;
    cli.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("import"), in});
    QVERIFY(cli.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT((said += cli.readAll()).contains(" of 600 files") || cli.state() != QProcess::Running, 30000);
    QVERIFY2(cli.state() == QProcess::Running, said.constData());  // killed midway, not after the end
    cli.kill();
    cli.waitForFinished();
    qInfo() << "killed after:" << said.trimmed().split('\n').last();

    {
        // Whatever the kill left: the cache opens, and every instance it holds is whole (checked when read).
        auto cache = FileStore::open(root, 0);
        QVERIFY2(cache.isOk(), qPrintable(cache.error().toString()));
        Result<QList<BlobInfo>> kept = runSync(cache.value()->query(BlobQuery()));
        QVERIFY(kept.isOk());
        QVERIFY(kept.value().size() <= 600);
        for (const BlobInfo &b : kept.value())
            QVERIFY2(runSync(cache.value()->read(b.key)).isOk(), qPrintable(b.key));
        qInfo() << kept.value().size() << "instances kept after the kill";
    }
    // The same import again: all of them.
    QProcess second;
    second.setProcessEnvironment(env);
    second.setProcessChannelMode(QProcess::MergedChannels);
    second.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("import"), in});
    QVERIFY(second.waitForFinished(60000));
    const QByteArray out = second.readAll();
    QVERIFY2(second.exitCode() == 0 && out.contains("600 imported"), out.constData());
    auto cache = FileStore::open(root, 0);
    QVERIFY(cache.isOk());
    Result<QList<BlobInfo>> all = runSync(cache.value()->query(BlobQuery()));
    QVERIFY(all.isOk());
    QCOMPARE(all.value().size(), 600);
}

QTEST_GUILESS_MAIN(tst_DicomImport)
#include "tst_dicomimport.moc"
