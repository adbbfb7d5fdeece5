#include "mainwindow.h"

#include "studylistmodel.h"
#include "studyviewer.h"

#include <QAction>
#include <QApplication>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace spectrum {

MainWindow::MainWindow(Workstation *workstation, QWidget *parent)
    : QMainWindow(parent), m_workstation(workstation), m_model(new StudyListModel(this)),
      m_filter(new QSortFilterProxyModel(this)), m_table(new QTableView), m_search(new QLineEdit),
      m_tabs(new QTabWidget), m_cacheLabel(new QLabel)
{
    setWindowTitle(tr("Spectrum"));
    resize(1400, 900);

    m_filter->setSourceModel(m_model);
    m_filter->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_filter->setFilterKeyColumn(-1);  // any column: name, ID, description, modality…
    m_table->setModel(m_filter);
    m_table->setObjectName(QStringLiteral("studyTable"));
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(StudyListModel::Date, Qt::DescendingOrder);
    m_table->verticalHeader()->hide();
    m_table->setAlternatingRowColors(true);
    m_table->setShowGrid(false);
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->horizontalHeader()->setSectionResizeMode(StudyListModel::Description, QHeaderView::Stretch);
    m_table->setColumnWidth(StudyListModel::Patient, 260);
    m_table->setColumnWidth(StudyListModel::PatientId, 160);
    m_table->setColumnWidth(StudyListModel::Date, 120);
    m_table->setColumnWidth(StudyListModel::Modality, 100);
    connect(m_table, &QTableView::doubleClicked, this, &MainWindow::openSelected);
    connect(m_table, &QTableView::activated, this, &MainWindow::openSelected);

    m_search->setPlaceholderText(tr("Search patient, ID, description, modality…"));
    m_search->setClearButtonEnabled(true);
    connect(m_search, &QLineEdit::textChanged, m_filter, &QSortFilterProxyModel::setFilterFixedString);

    auto *listPage = new QWidget;
    auto *listLayout = new QVBoxLayout(listPage);
    listLayout->addWidget(m_search);
    listLayout->addWidget(m_table, 1);
    m_tabs->addTab(listPage, tr("Studies"));
    m_tabs->setTabsClosable(true);
    m_tabs->setDocumentMode(true);
    m_tabs->tabBar()->setTabButton(0, QTabBar::RightSide, nullptr);  // the study list cannot be closed
    m_tabs->tabBar()->setTabButton(0, QTabBar::LeftSide, nullptr);
    connect(m_tabs, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTab);
    setCentralWidget(m_tabs);
    statusBar()->addPermanentWidget(m_cacheLabel);

    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *open = file->addAction(tr("&Open study"), this, &MainWindow::openSelected);
    open->setShortcut(Qt::Key_Return);
    open->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_table->addAction(open);
    QAction *find = file->addAction(tr("&Find study"), this, [this] {
        m_tabs->setCurrentIndex(0);
        m_search->setFocus();
        m_search->selectAll();
    });
    find->setShortcut(QKeySequence::Find);
    QAction *closeStudy = file->addAction(tr("&Close study"), this, [this] { closeTab(m_tabs->currentIndex()); });
    closeStudy->setShortcut(QKeySequence::Close);
    file->addSeparator();
    file->addAction(tr("&Quit"), qApp, &QApplication::quit)->setShortcut(QKeySequence::Quit);
    QMenu *view = menuBar()->addMenu(tr("&View"));
    QAction *reset = view->addAction(tr("&Reset view"), this, [this] {
        if (StudyViewer *v = currentViewer())
            v->resetView();
    });
    reset->setShortcut(Qt::Key_R);
    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Mouse and keys"), this, [this] {
        QMessageBox::information(this, tr("Mouse and keys"),
                                 tr("Wheel, ↑ ↓, Page Up/Down, Home/End: step through slices\n"
                                    "Right-drag: window (left/right) and level (up/down)\n"
                                    "Ctrl+wheel: zoom    Left- or middle-drag: pan\n"
                                    "R: reset view    Ctrl+F: find study    Ctrl+W: close study"));
    });

    connect(m_workstation, &Workstation::studiesChanged, this, &MainWindow::onStudiesChanged);
    connect(m_workstation, &Workstation::statusMessage, this, [this](const QString &m) { statusBar()->showMessage(m, 8000); });
    connect(m_workstation, &Workstation::errorOccurred, this, [this](const Error &e) {
        statusBar()->showMessage(tr("Error: %1").arg(e.toString()));
    });
    onStudiesChanged();
}

void MainWindow::onStudiesChanged()
{
    m_model->setStudies(m_workstation->studies());
    if (m_table->selectionModel()->selectedRows().isEmpty() && m_filter->rowCount() > 0)
        m_table->selectRow(0);
    if (BlobStore *store = m_workstation->localStore()) {
        const StoreUsage u = store->usage();
        m_cacheLabel->setText(tr("Local cache: %1 images, %2 MB").arg(u.blobs).arg(u.bytes / 1e6, 0, 'f', 0));
    }
}

void MainWindow::openSelected()
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return;
    openStudy(rows.first().data(StudyListModel::StudyUidRole).toString());
}

StudyViewer *MainWindow::openStudy(const QString &uidOrAlias)
{
    const StudySummary *study = m_workstation->findStudy(uidOrAlias);
    if (!study)
        return nullptr;
    for (int i = 1; i < m_tabs->count(); ++i) {
        auto *viewer = qobject_cast<StudyViewer *>(m_tabs->widget(i));
        if (viewer && viewer->study().identity.studyInstanceUid == study->identity.studyInstanceUid
            && viewer->study().identity.patientId == study->identity.patientId) {
            m_tabs->setCurrentIndex(i);
            return viewer;
        }
    }
    auto *viewer = new StudyViewer(m_workstation->localStore(), *study);
    connect(viewer, &StudyViewer::errorOccurred, this, [this](const Error &e) {
        statusBar()->showMessage(tr("Error: %1").arg(e.toString()));
    });
    const QString title = QStringLiteral("%1 — %2 %3")
                              .arg(DicomIdentity::displayName(study->identity.patientName),
                                   study->modalities.join(QLatin1Char('/')), StudyListModel::formatDate(study->identity.studyDate));
    m_tabs->setCurrentIndex(m_tabs->addTab(viewer, title));
    viewer->setFocus();
    Q_EMIT studyOpened(viewer);
    return viewer;
}

StudyViewer *MainWindow::currentViewer() const
{
    return qobject_cast<StudyViewer *>(m_tabs->currentWidget());
}

void MainWindow::closeTab(int index)
{
    if (index <= 0)  // the study list stays
        return;
    QWidget *w = m_tabs->widget(index);
    m_tabs->removeTab(index);
    w->deleteLater();
}

} // namespace spectrum
