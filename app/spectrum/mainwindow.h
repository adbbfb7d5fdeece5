#pragma once
// The main window: the study list in the first tab, one tab per open study.

#include "imageviewport.h"
#include "workstation.h"

#include <QMainWindow>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;

namespace spectrum {

class StudyListModel;
class StudyViewer;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(Workstation *workstation, QWidget *parent = nullptr);

    /// Opens (or switches to) the study with this UID or demo alias. Returns the viewer, or nullptr.
    StudyViewer *openStudy(const QString &uidOrAlias);
    StudyViewer *currentViewer() const;
    QTableView *studyTable() const { return m_table; }

Q_SIGNALS:
    void studyOpened(spectrum::StudyViewer *viewer);

private:
    void onStudiesChanged();
    void openSelected();
    void closeTab(int index);

    Workstation *m_workstation;
    StudyListModel *m_model;
    QSortFilterProxyModel *m_filter;
    QTableView *m_table;
    QLineEdit *m_search;
    QTabWidget *m_tabs;
    QLabel *m_cacheLabel;
    QAction *m_cineAction = nullptr;
    ImageViewport::Tool m_tool = ImageViewport::Tool::Pan;  ///< given to every study opened
};

} // namespace spectrum
