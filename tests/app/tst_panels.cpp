// SPDX-License-Identifier: Apache-2.0
// The workstation's panels a reader or IT opens beside the images: the transfers panel and the stores dialog.

#include "viewport/displayimage.h"
#include "viewport/imageviewport.h"
#include "viewer/filterpanel.h"
#include "shell/mainwindow.h"
#include "browser/studybrowser.h"
#include "stores/storesdialog.h"
#include "viewer/studyviewer.h"
#include "viewer/tagviewer.h"
#include "stores/transferspanel.h"
#include "spectrum/core/jobtracker.h"
#include "shell/workstation.h"

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/tools/measurements.h"
#include "spectrum/stores/reading/imageloader.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "guisupport.h"
#include "testsupport.h"

#include <QAction>
#include <QApplication>
#include <QFormLayout>
#include <QListWidget>
#include <QTimer>
#include <QSpinBox>
#include <QPushButton>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QProgressBar>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSettings>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QDockWidget>
#include <QComboBox>
#include <QTest>
#include <QTreeWidget>

#include <cstring>

using namespace spectrum;
using namespace spectrum::test;

/// A study's arrival as the panel sees it, moved by the test: nine of ten images, then the last one fails for good.
class StalledTransfer : public Job
{
public:
    StalledTransfer() { setAutoDelete(false); }
    Capabilities capabilities() const override { return Cancellable | Suspendable | Retryable; }
    void stall()
    {
        setProgress(9, 10);
        setStatusText(QStringLiteral("9 of 10 images · 1 failed"));
        setCanRetry(true);
        setStalled(true);
    }
    int retries = 0;

protected:
    void doStart() override {}
    bool doSuspend() override { return true; }
    bool doResume() override { return true; }
    bool doRetry() override
    {
        ++retries;
        setStalled(false);
        return true;
    }
};

/// A send that goes on until the test ends it (deletes itself then, as sends do).
class LongSend : public Job
{
public:
    void end() { emitResult(); }

protected:
    void doStart() override {}
};

class tst_Panels : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void theTransfersPanelScrollsAndClearsWhatEnded();
    void theStoresDialogKeepsWhatItHoldsAndFollowsTheFile();
    void theStoresDialogSetsUpASignIn();
};

/// Forty ended sends never grow the panel past a screen: it scrolls inside itself; Clear finished empties it. A day
/// of sends keeps the newest that went well and the failures, not all.
void tst_Panels::theTransfersPanelScrollsAndClearsWhatEnded()
{
    JobTracker tracker;
    TransfersPanel panel(&tracker);
    panel.resize(300, 400);
    const int emptyHeight = panel.minimumSizeHint().height();
    for (int i = 0; i < 40; ++i) {
        auto *job = failedJob<ExportSummary>(Error(ErrorCode::Network, QStringLiteral("the archive is away")));
        job->setTitle(QStringLiteral("Send %1").arg(i));
        describeSend(job);
        tracker.add(job, JobTracker::Direction::Outgoing);
        job->start(ExecutionPolicy::Sync);
    }
    QCOMPARE(panel.count(), 40);
    QTRY_VERIFY(tracker.jobs().isEmpty());  // the sends deleted themselves
    QCOMPARE(panel.details(0), QStringLiteral("failed: network error: the archive is away"));  // their words stay
    QCOMPARE(panel.title(39), QStringLiteral("Send 39"));
    if (const QString shots = qEnvironmentVariable("SPECTRUM_TEST_SHOTS"); !shots.isEmpty()) {
        panel.show();
        panel.grab().save(shots + QStringLiteral("/transfers-panel.png"));
    }
    QVERIFY2(panel.minimumSizeHint().height() < emptyHeight + 200, qPrintable(QString::number(panel.minimumSizeHint().height())));
    auto *clear = panel.findChild<QPushButton *>(QStringLiteral("clearFinished"));
    QVERIFY(clear);
    clear->click();
    QCOMPARE(panel.count(), 0);

    // A working day: hundreds of sends (and priors prefetched) that went well. The panel keeps the newest
    // kKeptSucceeded of them beside the failures (kept longer: the reader has to see those), so it does not grow
    // for the whole day; the older ones leave by themselves.
    for (int i = 0; i < 3; ++i) {
        auto *job = failedJob<ExportSummary>(Error(ErrorCode::Network, QStringLiteral("the archive is away")));
        job->setTitle(QStringLiteral("Failed send %1").arg(i));
        describeSend(job);
        tracker.add(job, JobTracker::Direction::Outgoing);
        job->start(ExecutionPolicy::Sync);
    }
    auto *longSend = new LongSend;  // begun before the day's sends, ended after them: its end is shown
    longSend->setTitle(QStringLiteral("Long send"));
    tracker.add(longSend, JobTracker::Direction::Outgoing);
    longSend->start();
    for (int i = 0; i < 300; ++i) {
        auto *job = makeJob<ExportSummary>([](const CancelToken &) { return Result<ExportSummary>(ExportSummary{{QStringLiteral("1.2.3")}, {}}); },
                                           RunOn::Caller);
        job->setTitle(QStringLiteral("Send %1").arg(i));
        describeSend(job);
        tracker.add(job, JobTracker::Direction::Outgoing);
        job->start(ExecutionPolicy::Sync);
    }
    QCOMPARE(panel.count(), 3 + 1 + TransfersPanel::kKeptSucceeded);  // the long send still at work
    longSend->end();
    QTRY_VERIFY(tracker.jobs().isEmpty());
    QCOMPARE(panel.count(), 3 + TransfersPanel::kKeptSucceeded);
    QCOMPARE(panel.title(0), QStringLiteral("Failed send 0"));
    QCOMPARE(panel.title(3), QStringLiteral("Long send"));  // ended last: kept, though added before them all
    QCOMPARE(panel.title(4), QStringLiteral("Send %1").arg(300 - TransfersPanel::kKeptSucceeded + 1));
    QCOMPARE(panel.title(panel.count() - 1), QStringLiteral("Send 299"));
    QCOMPARE(panel.details(panel.count() - 1), QStringLiteral("1 image(s) stored"));
    QTRY_COMPARE(panel.findChildren<QProgressBar *>().size(), panel.count());  // the widgets of those gone, deleted
    clear->click();
    QCOMPARE(panel.count(), 0);

    // A transfer whose every remaining image failed waits for the reader: Retry failed, no Pause; Clear finished
    // takes it away as it did the ended ones.
    StalledTransfer stalled;
    stalled.setTitle(QStringLiteral("CT from pacs"));
    tracker.add(&stalled);
    stalled.start();
    QCOMPARE(panel.count(), 1);
    const QList<QPushButton *> buttons = panel.findChildren<QPushButton *>();
    auto button = [&buttons](const QString &text) {
        for (QPushButton *b : buttons) {
            if (b->text() == text)
                return b;
        }
        return static_cast<QPushButton *>(nullptr);
    };
    QVERIFY(button(QStringLiteral("Pause")) && button(QStringLiteral("Pause"))->isEnabled());
    QVERIFY(!button(QStringLiteral("Retry failed"))->isEnabled());
    QCOMPARE(panel.clearFinished(), 0);  // still at work
    stalled.stall();
    QVERIFY(!button(QStringLiteral("Pause"))->isEnabled());
    QVERIFY(button(QStringLiteral("Retry failed"))->isEnabled());
    QCOMPARE(panel.details(0), QStringLiteral("9 of 10 images · 1 failed"));
    QCOMPARE(tracker.summary(), QString());  // nothing moves
    button(QStringLiteral("Retry failed"))->click();
    QCOMPARE(stalled.retries, 1);
    QVERIFY(!stalled.isStalled());
    stalled.stall();
    clear->click();
    QCOMPARE(panel.count(), 0);
}

/// The stores dialog: New never overwrites, a rename moves, only the chosen kind's fields show, edits are tracked;
/// the workstation's own AE title and port are set there and its Storage SCP starts as soon as a configuration
/// exists; a store added by `spectrum-cli stores add` meanwhile appears without a restart.
void tst_Panels::theStoresDialogSetsUpASignIn()
{
    // An admin gives a DICOMweb archive the hospital's sign-in: its fields show, no password or token is kept.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("config/stores.json"));
    Workstation::Options options;
    options.cacheDirectory = dir.filePath(QStringLiteral("cache"));
    options.seedDemoWhenEmpty = false;
    options.stores = StoreConfigFile::load(path).value();
    options.storesFile = path;
    Workstation ws(options);
    QSignalSpy started(&ws, &Workstation::started);
    ws.start();
    QVERIFY(started.wait(10000));
    StoresDialog dialog(&ws);
    dialog.show();
    dialog.newStore();
    dialog.kindField()->setCurrentIndex(dialog.kindField()->findData(int(StoreKind::DicomWeb)));
    QTest::keyClicks(dialog.nameField(), QStringLiteral("sso-pacs"));
    dialog.urlField()->setText(QStringLiteral("https://pacs.hospital.test/dicom-web"));
    QVERIFY(!dialog.isFieldShown(dialog.issuerField()));
    dialog.authField()->setCurrentIndex(dialog.authField()->findData(QStringLiteral("oidc")));
    QVERIFY(dialog.isFieldShown(dialog.issuerField()));
    QVERIFY(dialog.isFieldShown(dialog.clientIdField()));
    QVERIFY(dialog.isFieldShown(dialog.audienceField()));
    QVERIFY(!dialog.isFieldShown(dialog.secretField()));
    QVERIFY(!dialog.isFieldShown(dialog.userField()));
    dialog.secretField()->setText(QStringLiteral("left-over-token"));  // typed before the switch: not kept
    dialog.issuerField()->setText(QStringLiteral("https://sso.hospital.test/realms/radiology"));
    dialog.clientIdField()->setText(QStringLiteral("spectrum"));
    dialog.audienceField()->setText(QStringLiteral("https://pacs.hospital.test"));
    dialog.saveStore();
    QVERIFY2(dialog.status().contains(QStringLiteral("saved")), qPrintable(dialog.status()));
    const StoreConfigFile file = StoreConfigFile::load(path).value();
    const StoreConfig *saved = file.find(QStringLiteral("sso-pacs"));
    QVERIFY(saved);
    const DicomWebSettings &web = saved->as<DicomWebSettings>();
    QCOMPARE(web.auth, QStringLiteral("oidc"));
    QCOMPARE(web.issuer, QStringLiteral("https://sso.hospital.test/realms/radiology"));
    QCOMPARE(web.clientId, QStringLiteral("spectrum"));
    QCOMPARE(web.audience, QStringLiteral("https://pacs.hospital.test"));
    QVERIFY(!web.token.isSet() && !web.password.isSet());
    // Chosen again in the list, it is shown as a sign-in (an edit never turns it into another kind of login).
    auto *list = dialog.findChild<QListWidget *>();
    QVERIFY(list);
    const QList<QListWidgetItem *> items = list->findItems(QStringLiteral("sso-pacs"), Qt::MatchStartsWith);
    QVERIFY(!items.isEmpty());
    list->setCurrentItem(items.first());
    QCOMPARE(dialog.authField()->currentData().toString(), QStringLiteral("oidc"));
    QCOMPARE(dialog.issuerField()->text(), QStringLiteral("https://sso.hospital.test/realms/radiology"));

    // An S3 bucket: its own ways (keys, or the sign-in traded at the store's token service); no key is kept.
    dialog.newStore();
    dialog.kindField()->setCurrentIndex(dialog.kindField()->findData(int(StoreKind::S3)));
    QCOMPARE(dialog.authField()->count(), 2);
    QCOMPARE(dialog.authField()->currentData().toString(), QStringLiteral("keys"));
    QVERIFY(dialog.isFieldShown(dialog.accessKeyField()));
    QVERIFY(dialog.isFieldShown(dialog.secretField()));
    QVERIFY(!dialog.isFieldShown(dialog.stsUrlField()));
    QTest::keyClicks(dialog.nameField(), QStringLiteral("teaching-files"));
    dialog.urlField()->setText(QStringLiteral("https://objects.hospital.test"));
    dialog.bucketField()->setText(QStringLiteral("teaching"));
    dialog.accessKeyField()->setText(QStringLiteral("AKIALEFTOVER"));
    dialog.authField()->setCurrentIndex(dialog.authField()->findData(QStringLiteral("oidc")));
    for (QWidget *shown : {static_cast<QWidget *>(dialog.issuerField()), static_cast<QWidget *>(dialog.clientIdField()),
                           static_cast<QWidget *>(dialog.stsUrlField()), static_cast<QWidget *>(dialog.roleArnField())})
        QVERIFY(dialog.isFieldShown(shown));
    QVERIFY(!dialog.isFieldShown(dialog.accessKeyField()));
    QVERIFY(!dialog.isFieldShown(dialog.secretField()));
    dialog.issuerField()->setText(QStringLiteral("https://sso.hospital.test/realms/radiology"));
    dialog.clientIdField()->setText(QStringLiteral("spectrum"));
    dialog.roleArnField()->setText(QStringLiteral("arn:aws:iam::123456789012:role/radiology-readers"));
    dialog.saveStore();
    QVERIFY2(dialog.status().contains(QStringLiteral("saved")), qPrintable(dialog.status()));
    const StoreConfigFile withBucket = StoreConfigFile::load(path).value();
    const StoreConfig *bucket = withBucket.find(QStringLiteral("teaching-files"));
    QVERIFY(bucket);
    const S3Settings &s3 = bucket->as<S3Settings>();
    QCOMPARE(s3.auth, QStringLiteral("oidc"));
    QCOMPARE(s3.roleArn, QStringLiteral("arn:aws:iam::123456789012:role/radiology-readers"));
    QVERIFY(s3.stsUrl.isEmpty());  // the store's own
    QVERIFY(s3.accessKey.isEmpty() && !s3.secretKey.isSet());
    // Back on the DICOMweb store, its own four ways again.
    const QList<QListWidgetItem *> again = list->findItems(QStringLiteral("sso-pacs"), Qt::MatchStartsWith);
    QVERIFY(!again.isEmpty());
    list->setCurrentItem(again.first());
    QCOMPARE(dialog.authField()->count(), 4);
    QCOMPARE(dialog.authField()->currentData().toString(), QStringLiteral("oidc"));
}

void tst_Panels::theStoresDialogKeepsWhatItHoldsAndFollowsTheFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("config/stores.json"));
    Workstation::Options options;
    options.cacheDirectory = dir.filePath(QStringLiteral("cache"));
    options.seedDemoWhenEmpty = false;
    options.stores = StoreConfigFile::load(path).value();  // no file yet
    options.storesFile = path;
    options.listenWhenConfigured = true;
    Workstation ws(options);
    QSignalSpy started(&ws, &Workstation::started);
    ws.start();
    QVERIFY(started.wait(10000));
    QVERIFY(!ws.isListening());  // nothing configured yet

    StoresDialog dialog(&ws);
    dialog.show();  // as the reader sees it: the list with the focus, the file's changes coming back while one edits
    dialog.workstationAeTitleField()->setText(QStringLiteral("READROOM2"));
    const quint16 port = freePort();
    dialog.workstationPortField()->setValue(port);
    dialog.saveWorkstation();
    QVERIFY2(QFile::exists(path), qPrintable(dialog.status()));
    QTRY_VERIFY(ws.isListening());  // the first configuration: the Storage SCP listens
    QCOMPARE(ws.storeConfig().workstation.aeTitle, QStringLiteral("READROOM2"));
    // Nobody may call it yet; once the file names a caller (as an admin writes it), that caller may, at once.
    const QStringList echoArgs{QStringLiteral("-aec"), QStringLiteral("READROOM2"), QStringLiteral("127.0.0.1"), QString::number(port)};
    QVERIFY(!run(QStringLiteral(ECHOSCU_EXECUTABLE), echoArgs).ok());
    StoreConfigFile named = StoreConfigFile::load(path).value();
    named.workstation.callers = {{QStringLiteral("ECHOSCU"), QStringLiteral("127.0.0.1")}};
    QVERIFY(!named.save().isError());
    QTRY_COMPARE(ws.storeConfig().workstation.callers.size(), 1);
    const ProcessResult echo = run(QStringLiteral(ECHOSCU_EXECUTABLE), echoArgs);
    QVERIFY2(echo.ok(), echo.err.constData());

    // Only the fields of the chosen kind.
    dialog.newStore();
    dialog.kindField()->setCurrentIndex(dialog.kindField()->findData(int(StoreKind::DicomWeb)));
    QVERIFY(dialog.isFieldShown(dialog.urlField()));
    QVERIFY(!dialog.isFieldShown(dialog.hostField()));
    dialog.kindField()->setCurrentIndex(dialog.kindField()->findData(int(StoreKind::Dimse)));
    QVERIFY(!dialog.isFieldShown(dialog.urlField()));
    QVERIFY(dialog.isFieldShown(dialog.hostField()));
    QVERIFY(dialog.isFieldShown(dialog.aeTitleField()));
    dialog.kindField()->setCurrentIndex(dialog.kindField()->findData(int(StoreKind::DicomWeb)));

    // A new store, then New with the same name: refused, the first one kept.
    QTest::keyClicks(dialog.nameField(), QStringLiteral("archive"));
    QVERIFY(dialog.hasUnsavedChanges());
    dialog.urlField()->setText(QStringLiteral("http://127.0.0.1:1/dicom-web"));
    QVERIFY(dialog.isFieldShown(dialog.mirrorsField()));  // a DICOMweb archive may have several servers
    dialog.mirrorsField()->setText(QStringLiteral("http://127.0.0.1:3/dicom-web,  http://127.0.0.1:4/dicom-web"));
    dialog.timeoutField()->setValue(45);
    dialog.saveStore();
    QVERIFY2(dialog.status().contains(QStringLiteral("saved")), qPrintable(dialog.status()));
    QVERIFY(!dialog.hasUnsavedChanges());
    QCOMPARE(ws.storeConfig().find(QStringLiteral("archive"))->timeoutSeconds, 45);
    QCOMPARE(ws.storeConfig().find(QStringLiteral("archive"))->as<DicomWebSettings>().mirrors,
             (QStringList{QStringLiteral("http://127.0.0.1:3/dicom-web"), QStringLiteral("http://127.0.0.1:4/dicom-web")}));
    // On screen, the rows this kind does not use leave no band between those it does (they were hidden after the
    // form's first layout: an empty URL shows the CA file's row, an http one hides it).
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QFormLayout *form = nullptr;
    for (QFormLayout *f : dialog.findChildren<QFormLayout *>())
        if (f->indexOf(dialog.urlField()) >= 0)
            form = f;
    QVERIFY(form);
    int previousBottom = -1;
    for (int row = 0; row < form->rowCount(); ++row) {
        if (!form->isRowVisible(row))
            continue;
        const QRect field = form->itemAt(row, QFormLayout::FieldRole)->geometry();
        if (previousBottom >= 0)
            QVERIFY2(field.top() - previousBottom - 1 <= form->verticalSpacing() + 2,
                     qPrintable(QStringLiteral("a band of %1 px above row %2").arg(field.top() - previousBottom - 1).arg(row)));
        previousBottom = field.bottom();
    }
    if (const QString shots = qEnvironmentVariable("SPECTRUM_TEST_SHOTS"); !shots.isEmpty()) {
        dialog.grab().save(shots + QStringLiteral("/stores-dialog-mirrors.png"));  // to look at, as an admin would
    }
    dialog.newStore();
    dialog.nameField()->setText(QStringLiteral("archive"));
    dialog.urlField()->setText(QStringLiteral("http://127.0.0.1:2/dicom-web"));
    dialog.saveStore();
    QVERIFY2(dialog.status().contains(QStringLiteral("exists already")), qPrintable(dialog.status()));
    QCOMPARE(ws.storeConfig().find(QStringLiteral("archive"))->as<DicomWebSettings>().url, QStringLiteral("http://127.0.0.1:1/dicom-web"));

    // Chosen in the list and renamed: one store, under its new name.
    dialog.newStore();
    auto *list = dialog.findChild<QListWidget *>();
    QVERIFY(list);
    list->setCurrentRow(0);
    QCOMPARE(dialog.editing(), QStringLiteral("archive"));
    dialog.nameField()->setText(QStringLiteral("archive-2"));
    dialog.saveStore();
    QVERIFY(ws.storeConfig().find(QStringLiteral("archive-2")));
    QVERIFY(!ws.storeConfig().find(QStringLiteral("archive")));
    QCOMPARE(ws.storeConfig().stores().size(), 1);

    // An S3 store: its own fields; the secret key sealed, never in the file; shown again with its fields, and saved
    // again with the secret kept when none is typed.
    dialog.newStore();
    dialog.kindField()->setCurrentIndex(dialog.kindField()->findData(int(StoreKind::S3)));
    QVERIFY(dialog.isFieldShown(dialog.bucketField()) && dialog.isFieldShown(dialog.accessKeyField()) && dialog.isFieldShown(dialog.regionField()));
    QVERIFY(!dialog.isFieldShown(dialog.mirrorsField()));
    QVERIFY(!dialog.isFieldShown(dialog.hostField()) && !dialog.isFieldShown(dialog.userField()));
    dialog.nameField()->setText(QStringLiteral("objects"));
    dialog.urlField()->setText(QStringLiteral("http://127.0.0.1:9000"));
    dialog.bucketField()->setText(QStringLiteral("radiology"));
    dialog.prefixField()->setText(QStringLiteral("spectrum/"));
    dialog.accessKeyField()->setText(QStringLiteral("AKIADIALOG"));
    dialog.secretField()->setText(QStringLiteral("dialog-secret-key"));
    QSignalSpy changed(&ws, &Workstation::storeConfigChanged);
    dialog.saveStore();
    QVERIFY2(dialog.status().contains(QStringLiteral("saved")), qPrintable(dialog.status()));
    const StoreConfig *objects = ws.storeConfig().find(QStringLiteral("objects"));
    QVERIFY(objects && objects->kind() == StoreKind::S3);
    const S3Settings &s3 = objects->as<S3Settings>();
    QVERIFY(s3.bucket == QLatin1String("radiology") && s3.prefix == QLatin1String("spectrum/"));
    QVERIFY(s3.secretKey.source == Secret::Source::Sealed);
    QCOMPARE(ws.storeConfig().reveal(s3.secretKey).value(), QStringLiteral("dialog-secret-key"));
    QVERIFY(!readFile(path).contains("dialog-secret-key"));
    dialog.newStore();
    for (int i = 0; i < list->count(); ++i)
        if (list->item(i)->text().startsWith(QLatin1String("objects")))
            list->setCurrentRow(i);
    QCOMPARE(dialog.editing(), QStringLiteral("objects"));
    QCOMPARE(dialog.bucketField()->text(), QStringLiteral("radiology"));
    QCOMPARE(dialog.accessKeyField()->text(), QStringLiteral("AKIADIALOG"));
    dialog.regionField()->setText(QStringLiteral("eu-central-1"));
    QTRY_VERIFY(changed.count() > 0);  // the file's change after the save came back (the list refilled) …
    QCoreApplication::processEvents();  // … and the list view settled: the form stays on this store
    QCOMPARE(dialog.editing(), QStringLiteral("objects"));
    QCOMPARE(dialog.bucketField()->text(), QStringLiteral("radiology"));
    dialog.saveStore();
    QVERIFY2(dialog.status().contains(QStringLiteral("saved")), qPrintable(dialog.status()));
    QCOMPARE(ws.storeConfig().find(QStringLiteral("objects"))->as<S3Settings>().region, QStringLiteral("eu-central-1"));
    QCOMPARE(ws.storeConfig().reveal(ws.storeConfig().find(QStringLiteral("objects"))->as<S3Settings>().secretKey).value(), QStringLiteral("dialog-secret-key"));

    // Added from the command line while all this runs: there at once, in the workstation and in the dialog.
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECTRUM_CONFIG"), path);
    QProcess cli;
    cli.setProcessEnvironment(env);
    cli.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("stores"), QStringLiteral("add"), QStringLiteral("from-cli"), QStringLiteral("--kind"),
                                                      QStringLiteral("dicomweb"), QStringLiteral("--url"), QStringLiteral("http://127.0.0.1:3/dicom-web")});
    QVERIFY(cli.waitForFinished(30000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    QTRY_VERIFY(ws.storeConfig().find(QStringLiteral("from-cli")));
    QTRY_COMPARE(list->count(), 3);
    QVERIFY(ws.storeConfig().find(QStringLiteral("archive-2")));

    // A folder archive, a kind the dialog does not offer for new stores: chosen in the list, it shows its own
    // fields (no URL), and saved with a longer timeout it stays a folder archive, its folder kept.
    const QString folder = dir.filePath(QStringLiteral("folder-archive"));
    cli.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), {QStringLiteral("stores"), QStringLiteral("add"), QStringLiteral("folder"), QStringLiteral("--kind"),
                                                      QStringLiteral("local"), QStringLiteral("--path"), folder});
    QVERIFY(cli.waitForFinished(30000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    QTRY_COMPARE(list->count(), 4);
    dialog.newStore();
    for (int i = 0; i < list->count(); ++i)
        if (list->item(i)->text().startsWith(QLatin1String("folder")))
            list->setCurrentRow(i);
    QCOMPARE(dialog.editing(), QStringLiteral("folder"));
    QVERIFY(!dialog.isFieldShown(dialog.urlField()) && !dialog.isFieldShown(dialog.hostField()));
    dialog.timeoutField()->setValue(90);
    dialog.saveStore();
    QVERIFY2(dialog.status().contains(QStringLiteral("saved")), qPrintable(dialog.status()));
    const StoreConfig *kept = ws.storeConfig().find(QStringLiteral("folder"));
    QVERIFY(kept && kept->kind() == StoreKind::Local);
    QCOMPARE(kept->as<LocalSettings>().path, folder);
    QCOMPARE(kept->timeoutSeconds, 90);
}

QTEST_MAIN(tst_Panels)
#include "tst_panels.moc"
