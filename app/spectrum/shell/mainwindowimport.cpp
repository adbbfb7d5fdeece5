// SPDX-License-Identifier: Apache-2.0
#include "shell/mainwindow.h"
#include "browser/importreport.h"

// The main window's imports: File ▸ Import, files and folders dropped on the window, and opening what came in.

#include "viewer/filterpanel.h"
#include "viewer/tagviewer.h"
#include "stores/storesdialog.h"
#include "stores/transferspanel.h"
#include "browser/studybrowser.h"
#include "viewer/studyviewer.h"

#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/archives/storeregistry.h"
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

void MainWindow::importFiles(const QStringList &paths)
{
    DicomImport *import = m_workstation->importFiles(paths);
    if (!import) {
        statusBar()->showMessage(tr("The cache is not open yet: nothing imported"));
        return;
    }
    statusBar()->showMessage(tr("Importing…"));
    connect(import, &DicomImport::finished, this, [this](const ImportSummary &summary) {
        // One study brought in on purpose: it opens, once the study list holds all of it.
        if (summary.studies.size() == 1 && summary.imported > 0)
            m_openAfterImport = *summary.studies.begin();
        openImportedWhenListed();
        // Something left out: a report of what and why, file by file (the status line says only how many).
        if (ImportReport::worthShowing(summary)) {
            auto *report = new ImportReport(summary, m_workstation, this);
            report->setAttribute(Qt::WA_DeleteOnClose);
            report->setAttribute(Qt::WA_ShowWithoutActivating);  // beside the study that opens, not in its way
            report->show();
        }
        Q_EMIT importFinished(summary);
    });
}

void MainWindow::openImportedWhenListed()
{
    if (m_openAfterImport.isEmpty())
        return;
    const StudySummary *study = m_workstation->findStudy(m_openAfterImport);
    if (!study)
        return;  // the list refreshes after the commits: tried again then (onStudiesChanged)
    const QString uid = std::exchange(m_openAfterImport, QString());
    // The same study UID under two patients (an outside CD reusing a UID): nothing opens by itself.
    const int sameUid = int(std::count_if(m_workstation->studies().begin(), m_workstation->studies().end(),
                                          [&uid](const StudySummary &s) { return s.identity.studyInstanceUid == uid; }));
    if (sameUid > 1 || study->identityConflict) {
        statusBar()->showMessage(tr("Imported, but study %1 is in the cache under more than one patient: choose it in the study list (⚠)").arg(uid));
        return;
    }
    openStudy(uid);
}

void MainWindow::dragEnterEvent(QDragEnterEvent *event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (!urls.isEmpty() && std::all_of(urls.begin(), urls.end(), [](const QUrl &u) { return u.isLocalFile(); }))
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *event)
{
    QStringList paths;
    for (const QUrl &u : event->mimeData()->urls())
        paths << u.toLocalFile();
    event->acceptProposedAction();
    importFiles(paths);
}

} // namespace spectrum
