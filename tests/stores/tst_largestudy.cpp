// SPDX-License-Identifier: Apache-2.0
// A study of 10,000 instances streamed into the workstation's cache (issue 42): the work the GUI thread is given per
// arrival is counted — never timed. Each instance is announced once; no event announces more than a bounded number
// (what the stream brought before the listing is absorbed in slices, not in the listing's event); progress() is
// said at most ten times a second, the last before finished(); finished() after the last instance.
// The study is tiny images (4 × 4 pixels) in a folder archive (a cache folder configured as a store), so that the
// 10,000 are made and streamed in seconds.

#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/reading/studystreamer.h"
#include "testsupport.h"
#include "tinystudy.h"


#include <QDir>
#include <QElapsedTimer>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;

namespace {

constexpr int kInstances = 10000;

/// An event counter: every event the application delivers on this thread moves it on.
class EventCounter : public QObject
{
public:
    bool eventFilter(QObject *, QEvent *) override
    {
        ++serial;
        return false;
    }
    quint64 serial = 0;
};

} // namespace

class tst_LargeStudy : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void tenThousandInstancesAreAnnouncedOnceEachInBoundedEvents();

private:
    QTemporaryDir m_dir;
};

void tst_LargeStudy::tenThousandInstancesAreAnnouncedOnceEachInBoundedEvents()
{
    const QString files = m_dir.filePath(QStringLiteral("files"));
    QVERIFY(QDir().mkpath(files));
    QString studyUid;
    const QStringList written = spectrum::test::writeTinyStudy(files, kInstances, &studyUid);
    QCOMPARE(written.size(), kInstances);

    // The folder archive: a cache folder of its own, the study imported into it as a hospital's disk would hold it.
    const QString folder = m_dir.filePath(QStringLiteral("folder-archive"));
    QVERIFY(FileStore::open(folder, 0).isOk());
    StoreConfig archive(QStringLiteral("folder"), LocalSettings());
    archive.as<LocalSettings>().path = folder;
    StoreConfigFile config;
    QCOMPARE(config.add(archive), Error());
    {
        StoreRegistry importer(config, nullptr);
        Result<ExportSummary> imported = runSync(importer.exportFiles(QStringLiteral("folder"), written));
        QVERIFY2(imported.isOk(), imported.isOk() ? "" : qPrintable(imported.error().toString()));
        QVERIFY(imported.value().failed.isEmpty());
    }

    auto opened = FileStore::open(m_dir.filePath(QStringLiteral("cache")), 0);
    QVERIFY(opened.isOk());
    std::shared_ptr<FileStore> cache(opened.takeValue());
    StoreRegistry registry(config, cache);
    StudyStreamer streamer(&registry, cache.get(), QStringLiteral("folder"), studyUid);

    EventCounter events;
    qApp->installEventFilter(&events);
    const auto uninstall = qScopeGuard([&] { qApp->removeEventFilter(&events); });
    QHash<QString, int> kept;           // key → times announced
    QHash<quint64, int> keptPerEvent;   // event serial → instances announced in it
    int stored = 0, keptAtFinish = -1, finishedCount = 0;
    quint64 listedIn = 0;  // the event the study was listed in
    QList<QPair<int, int>> progress;
    connect(&streamer, &StudyStreamer::instanceUpdated, this, [&](const InstanceUpdate &u) {
        if (u.step == InstanceUpdate::Stored)
            ++stored;
        if (u.step == InstanceUpdate::Kept) {
            ++kept[u.key];
            ++keptPerEvent[events.serial];
        }
    });
    connect(&streamer, &StudyStreamer::listed, this, [&] { listedIn = events.serial; });
    connect(&streamer, &StudyStreamer::progress, this, [&](int cached, int total) { progress << qMakePair(cached, total); });
    connect(&streamer, &StudyStreamer::finished, this, [&] {
        ++finishedCount;
        keptAtFinish = int(kept.size());
    });
    QElapsedTimer clock;
    clock.start();
    streamer.start();
    QTRY_VERIFY_WITH_TIMEOUT(finishedCount > 0, 240000);
    const qint64 elapsedMs = clock.elapsed();
    QTest::qWait(200);  // nothing more is said after finished()

    // Each instance announced once, all of them before finished(), finished() once.
    QCOMPARE(streamer.total(), kInstances);
    QCOMPARE(streamer.cachedCount(), kInstances);
    QCOMPARE(int(kept.size()), kInstances);
    for (auto it = kept.cbegin(); it != kept.cend(); ++it)
        QVERIFY2(it.value() == 1, qPrintable(QStringLiteral("%1 announced %2 times").arg(it.key()).arg(it.value())));
    QCOMPARE(keptAtFinish, kInstances);
    QCOMPARE(finishedCount, 1);

    // What came before the listing is not announced in the listing's own event, nor all in any one event. (From a
    // folder archive the listing usually comes first: what the stream brought before it is then a few instances.)
    QVERIFY(listedIn > 0);
    QCOMPARE(keptPerEvent.value(listedIn), 0);
    int most = 0;
    for (int n : std::as_const(keptPerEvent))
        most = std::max(most, n);
    qInfo("%d instances arrived before the listing; %d events announced the %d; at most %d in one (bound %d); %lld ms",
          stored, int(keptPerEvent.size()), kInstances, most, StudyStreamer::kAnnouncedPerEvent, elapsedMs);
    QVERIFY2(most <= StudyStreamer::kAnnouncedPerEvent, qPrintable(QStringLiteral("%1 instances announced in one event").arg(most)));

    // progress(): at most one every 100 ms besides the few said at once (the first, the last); the last says all.
    QVERIFY(!progress.isEmpty());
    QCOMPARE(progress.last(), qMakePair(kInstances, kInstances));
    QVERIFY2(progress.size() <= elapsedMs / 100 + 6,
             qPrintable(QStringLiteral("%1 progress signals in %2 ms").arg(progress.size()).arg(elapsedMs)));
}

QTEST_GUILESS_MAIN(tst_LargeStudy)
#include "tst_largestudy.moc"
