#include "mainwindow.h"

// What the main window remembers across starts: geometry, docks, presets, tool, cine rate, magnification.

#include "filterpanel.h"
#include "tagviewer.h"
#include "storesdialog.h"
#include "transferspanel.h"
#include "studybrowser.h"
#include "studyviewer.h"

#include "spectrum/stores/filestore.h"
#include "spectrum/stores/storeregistry.h"
#include "spectrum/stores/studystreamer.h"

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

void MainWindow::savePresets(QSettings &settings) const
{
    const QList<FilterPreset> presets = m_filters->presets();
    settings.beginWriteArray(QStringLiteral("filterPresets"), int(presets.size()));
    for (int i = 0; i < presets.size(); ++i) {
        settings.setArrayIndex(i);
        settings.setValue(QStringLiteral("name"), presets[i].name);
        settings.setValue(QStringLiteral("chain"), presets[i].specs);
        settings.setValue(QStringLiteral("modality"), presets[i].modality);
    }
    settings.endArray();
}

void MainWindow::saveSettings(QSettings &settings) const
{
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    // A working chain is the study's, never kept for the next start; presets are kept (as they are saved).
    settings.remove(QStringLiteral("filters"));
    savePresets(settings);
    settings.setValue(QStringLiteral("reading/tool"), int(m_tool));
    settings.setValue(QStringLiteral("reading/cineRate"), m_cineRate);
    settings.setValue(QStringLiteral("reading/smoothMagnification"), m_smoothAction->isChecked());
    settings.setValue(QStringLiteral("cache/memoryBudgetMB"), m_workstation->images()->budget() / 1'000'000);
}

void MainWindow::restoreSettings(QSettings &settings)
{
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    QList<FilterPreset> presets;
    QSettings &readable = settings;
    const int count = readable.beginReadArray(QStringLiteral("filterPresets"));
    for (int i = 0; i < count; ++i) {
        readable.setArrayIndex(i);
        presets << FilterPreset{readable.value(QStringLiteral("name")).toString(), readable.value(QStringLiteral("chain")).toStringList(),
                                readable.value(QStringLiteral("modality")).toString()};
    }
    readable.endArray();
    m_filters->setPresets(presets);
    const int tool = settings.value(QStringLiteral("reading/tool"), 0).toInt();
    for (QAction *a : m_toolActions) {
        if (a->data().toInt() == tool)
            a->trigger();
    }
    m_cineRate = std::clamp(settings.value(QStringLiteral("reading/cineRate"), 15).toInt(), 1, 60);
    if (settings.value(QStringLiteral("reading/smoothMagnification"), true).toBool() != m_smoothAction->isChecked())
        m_smoothAction->trigger();
    if (const qint64 mb = settings.value(QStringLiteral("cache/memoryBudgetMB"), 0).toLongLong(); mb > 0)
        m_workstation->images()->setBudget(mb * 1'000'000);
}

} // namespace spectrum
