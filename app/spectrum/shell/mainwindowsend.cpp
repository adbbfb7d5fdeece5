// SPDX-License-Identifier: Apache-2.0
#include "shell/mainwindow.h"

// The main window's Send to archive: the dialog, and the derived series made and sent.

#include "viewer/filterpanel.h"
#include "viewer/tagviewer.h"
#include "stores/storesdialog.h"
#include "stores/transferspanel.h"
#include "browser/studybrowser.h"
#include "viewer/studyviewer.h"

#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/reading/studyfetchjob.h"
#include "spectrum/stores/reading/studystreamer.h"

#include <QAction>
#include <QActionGroup>

#include <tuple>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QFormLayout>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QApplication>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QFileDialog>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QTextBrowser>
#include <QDateTime>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace spectrum {

void MainWindow::chooseAndSend()
{
    StudyViewer *viewer = currentViewer();
    StoreRegistry *registry = m_workstation->registry();
    QStringList stores;
    if (registry) {
        for (const StoreConfig &s : registry->config().stores()) {
            if (!s.isTheCache())
                stores << s.name;
        }
    }
    if (!viewer || stores.isEmpty()) {
        QMessageBox::information(this, tr("Send to archive"), !viewer ? tr("Open a study first.")
                                                                      : tr("No archive is configured (spectrum-cli stores add …)."));
        return;
    }
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Send to archive"));
    auto *storeBox = new QComboBox;
    storeBox->addItems(stores);
    // The archive the study came from, when it came from one.
    if (viewer->streamer() && stores.contains(viewer->streamer()->storeName()))
        storeBox->setCurrentText(viewer->streamer()->storeName());
    auto *image = new QRadioButton(tr("This image"));
    auto *series = new QRadioButton(tr("The whole series (%n image(s))", nullptr, viewer->sliceCount()));
    image->setChecked(true);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Send"));
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto *form = new QFormLayout(&dialog);
    form->addRow(tr("To"), storeBox);
    form->addRow(tr("What"), image);
    form->addRow(QString(), series);
    const ImageInfo &shown = viewer->viewport()->image().info;
    const bool deepColour = viewer->settings()->isFiltering() && shown.samplesPerPixel == 3 && shown.bitsStored > 8;
    form->addRow(new QLabel(viewer->settings()->isFiltering() ? tr("As a new derived series, through the filters in use.%1")
                                                        .arg(deepColour ? tr("\nIts %1-bit colour is filtered, and sent, at 8 bits a sample (it says so).").arg(shown.bitsStored) : QString())
                                                  : tr("As a new derived series (no filter is on: an unprocessed copy).")));
    form->addRow(buttons);
    if (dialog.exec() == QDialog::Accepted)
        sendToArchive(storeBox->currentText(), series->isChecked());
}

void MainWindow::sendToArchive(const QString &store, bool wholeSeries)
{
    StudyViewer *viewer = currentViewer();
    StoreRegistry *registry = m_workstation->registry();
    auto fail = [this](const Error &e) {
        statusBar()->showMessage(tr("Not sent: %1").arg(e.toString()));
        Q_EMIT sendFinished(0, 0, e);
    };
    if (!viewer || !registry || viewer->seriesIndex() < 0)
        return fail(Error(ErrorCode::InvalidArgument, tr("no image to send")));
    const QList<InstanceRef> &instances = viewer->activeStudy().series[viewer->seriesIndex()].instances;
    QStringList keys;
    if (wholeSeries) {
        for (const InstanceRef &i : instances)
            keys << i.key;
    } else {
        keys << instances[viewer->sliceIndex()].key;
    }
    if (StudyStreamer *streamer = viewer->streamer()) {
        const qsizetype missing = std::count_if(keys.begin(), keys.end(), [streamer](const QString &k) { return !streamer->isCached(k); });
        if (missing > 0)
            return fail(Error(ErrorCode::Busy, tr("%n image(s) of it are still arriving; send when they are here", nullptr, int(missing))));
    }
    const FilterChain chain = m_filters->isApplied() ? m_filters->chain() : FilterChain();
    // A series number no series of the study has, and a description that tells this send from the others.
    Derivation naming;
    int highest = 0;
    for (const SeriesSummary &s : viewer->activeStudy().series)
        highest = std::max(highest, s.seriesNumber);
    naming.seriesNumber = highest + 1;
    const SeriesSummary &source = viewer->activeStudy().series[viewer->seriesIndex()];
    // What it was made from and how, whole in DICOM's 64 characters: the original's name shortened, never the
    // derivation (the series list would show a copy just as its original).
    const QString how = tr(" (%1, %2)").arg(chain.isEmpty() ? tr("copy") : m_filters->description(),
                                             QDateTime::currentDateTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
    QString from = source.description.isEmpty() ? tr("Series %1").arg(source.seriesNumber) : source.description;  // the archive's words
    const qsizetype room = std::max<qsizetype>(8, 64 - how.size());
    if (from.size() > room)
        from = from.left(room - 3).trimmed() + QStringLiteral("...");
    naming.seriesDescription = (from + how).left(64);
    auto *job = registry->exportDerivedSeries(store, keys, chain, naming);
    statusBar()->showMessage(tr("Sending %n image(s) to %1…", nullptr, int(keys.size())).arg(store));
    const SeriesSummary &shown = viewer->activeStudy().series[viewer->seriesIndex()];
    trackSend(job, tr("%1 — %2 image(s) of series %3 to %4%5", nullptr, int(keys.size()))
                                  .arg(DicomIdentity::displayName(viewer->activeStudy().identity.patientName)).arg(keys.size())
                                  .arg(shown.description.isEmpty() ? QString::number(shown.seriesNumber) : shown.description, store,
                                       chain.isEmpty() ? QString() : tr(", filtered")));
    connect(job, &Job::progress, this, [this, store](qint64 done, qint64 total) {
        statusBar()->showMessage(tr("Sending to %1: %2 of %3 made").arg(store).arg(done).arg(total));
    });
    whenDone(job, this, [this, store](const Result<ExportSummary> &r) {
        if (!r.isOk()) {
            statusBar()->showMessage(tr("Not sent to %1: %2").arg(store, r.error().toString()));
            return Q_EMIT sendFinished(0, 0, r.error());
        }
        const ExportSummary &s = r.value();
        statusBar()->showMessage(s.failed.isEmpty() ? tr("%1 stored %n image(s) as a new series", nullptr, int(s.stored.size())).arg(store)
                                                    : tr("%1 stored %2, refused %3: %4").arg(store).arg(s.stored.size()).arg(s.failed.size())
                                                          .arg(s.failed.first().second));
        Q_EMIT sendFinished(int(s.stored.size()), int(s.failed.size()), Error());
    });
}

void MainWindow::trackStudy(StudyStreamer *streamer, const QString &title)
{
    auto *job = new StudyFetchJob(streamer, title);  // the streamer's: it goes when the study is closed
    m_workstation->jobs()->add(job, JobTracker::Direction::Incoming);
    job->start();
}

void MainWindow::trackSend(ResultJob<ExportSummary> *job, const QString &title)
{
    job->setTitle(title);
    describeSend(job);
    m_workstation->jobs()->add(job, JobTracker::Direction::Outgoing);
}

} // namespace spectrum
