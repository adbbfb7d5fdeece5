// SPDX-License-Identifier: Apache-2.0
// DicomImport, the import of DICOM files from outside (a folder, a CD): many files at once, what is not DICOM and
// what cannot be read named in file order, two files of one instance stored one after the other, and — the point of
// storing many at once without a sync each — nothing said to be imported before it is on the disk: the import ends
// with one sync of the whole, which the index notes: no blob is left that a sync does not cover.

#include "spectrum/stores/exchange/dicomimport.h"
#include "spectrum/stores/blobs/filestore.h"
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

#include <algorithm>

using namespace spectrum;
using namespace spectrum::test;

namespace {
/// The demo head MR written as files by the CLI under `folder`: the folder of its images (empty when it failed).
QString demoMr(const QString &folder)
{
    const ProcessResult demo = run(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("demo"), QStringLiteral("--out"), folder,
                                                                          QStringLiteral("--only"), QStringLiteral("demo-mr")});
    if (!demo.ok())
        qWarning("%s", demo.err.constData());
    return demo.ok() ? folder + QStringLiteral("/demo-mr") : QString();
}
} // namespace

class tst_DicomImport : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void aFolderComesInWholeAndSynced();
    void killedMidwayKeepsWholeInstancesAndImportsTheRestAgain();
    void filesOfOneInstanceEndAlikeInAnyOrder();
};

void tst_DicomImport::aFolderComesInWholeAndSynced()
{
    QTemporaryDir dir;
    const QString in = dir.filePath(QStringLiteral("in"));
    const QString mrFolder = demoMr(in);
    QVERIFY(!mrFolder.isEmpty());
    const QDir mr(mrFolder);
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

void tst_DicomImport::filesOfOneInstanceEndAlikeInAnyOrder()
{
    // Three files of one instance changed at the same moment: b.dcm and c.dcm the same bytes, a.dcm another version
    // of them. Checks finish in any order; what is kept, and what is said of the others, must not follow that order.
    QTemporaryDir dir;
    const QString in = dir.filePath(QStringLiteral("in"));
    const QString mrFolder = demoMr(in);
    QVERIFY(!mrFolder.isEmpty());
    const QDir mr(mrFolder);
    const QStringList files = mr.entryList({QStringLiteral("*.dcm")}, QDir::Files, QDir::Name);
    QVERIFY(!files.isEmpty());
    const QString three = dir.filePath(QStringLiteral("three"));
    QVERIFY(QDir().mkpath(three));
    for (const char *name : {"a.dcm", "b.dcm", "c.dcm"})
        QVERIFY(QFile::copy(mr.filePath(files[0]), three + QLatin1Char('/') + QLatin1String(name)));
    const ProcessResult edited = run(QStringLiteral(DCMODIFY_EXECUTABLE), {QStringLiteral("-nb"), QStringLiteral("-m"), QStringLiteral("(0008,1030)=Edited"),
                                                                            three + QStringLiteral("/a.dcm")});
    QVERIFY2(edited.ok(), edited.err.constData());
    const QDateTime when = QDateTime::currentDateTime().addSecs(-60);
    for (const char *name : {"a.dcm", "b.dcm", "c.dcm"}) {
        QFile f(three + QLatin1Char('/') + QLatin1String(name));
        QVERIFY(f.open(QIODevice::ReadWrite) && f.setFileTime(when, QFileDevice::FileModificationTime));
    }
    const QByteArray first = readFile(three + QStringLiteral("/a.dcm"));
    for (int round = 0; round < 8; ++round) {
        const QString root = dir.filePath(QStringLiteral("cache%1").arg(round));
        auto cache = FileStore::open(root, 0);
        QVERIFY(cache.isOk());
        // The same folder named in another order each round: the order of arrival changes, never the outcome.
        QStringList paths;
        for (const char *name : {"c.dcm", "b.dcm", "a.dcm"})
            paths << three + QLatin1Char('/') + QLatin1String(name);
        std::rotate(paths.begin(), paths.begin() + round % 3, paths.end());
        if (round >= 3)
            paths = {three};
        DicomImport import(cache.value().get(), paths);
        QSignalSpy finished(&import, &DicomImport::finished);
        import.start();
        QVERIFY(finished.wait(30000));
        const ImportSummary s = finished.first().first().value<ImportSummary>();
        QCOMPARE(s.imported, 1);
        QStringList said;
        for (const auto &[file, why] : s.duplicates)
            said << QFileInfo(file).fileName() + QStringLiteral(": ") + why;
        said.sort();
        const QStringList expected = {
            QStringLiteral("b.dcm: another version of the image in a.dcm (the same SOP Instance UID), changed at the same time; a.dcm, the first by name, was kept"),
            QStringLiteral("c.dcm: another version of the image in a.dcm (the same SOP Instance UID), changed at the same time; a.dcm, the first by name, was kept")};
        QCOMPARE(said, expected);
        Result<QList<BlobInfo>> all = runSync(cache.value()->query(BlobQuery()));
        QVERIFY(all.isOk());
        QCOMPARE(all.value().size(), 1);
        Result<ByteView> kept = runSync(cache.value()->read(all.value().first().key));
        QVERIFY(kept.isOk());
        QVERIFY2(kept.value().toByteArray() == first, "the file kept is a.dcm, the first by name");
    }
}
