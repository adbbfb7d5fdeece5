// SPDX-License-Identifier: Apache-2.0
#include "shell/mainwindow.h"

// What the main window remembers across starts (geometry, docks, presets, tool, cine rate, magnification), and
// the cache settings dialog (the disk and memory budgets, their usage, Clear).

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
    settings.setValue(QStringLiteral("reading/tool"), m_tool.id());
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
    QString tool = settings.value(QStringLiteral("reading/tool")).toString();
    // Before the tools were kept by name, their number in the menu's old order.
    static const QStringList numbered = {QStringLiteral("Pan"), QStringLiteral("Distance"), QStringLiteral("Rectangle"),
                                         QStringLiteral("Ellipse"), QStringLiteral("Crosshair"), QStringLiteral("Angle"),
                                         QStringLiteral("CobbAngle"), QStringLiteral("Bidirectional"), QStringLiteral("Arrow"),
                                         QStringLiteral("Text"), QStringLiteral("Polygon"), QStringLiteral("Freehand"), QStringLiteral("Point")};
    bool isNumber = false;
    if (const int n = tool.toInt(&isNumber); isNumber)
        tool = numbered.value(n);
    for (QAction *a : m_toolActions) {
        if (a->data().toString() == tool)
            a->trigger();
    }
    m_cineRate = std::clamp(settings.value(QStringLiteral("reading/cineRate"), 15).toInt(), 1, 60);
    if (settings.value(QStringLiteral("reading/smoothMagnification"), true).toBool() != m_smoothAction->isChecked())
        m_smoothAction->trigger();
    if (const qint64 mb = settings.value(QStringLiteral("cache/memoryBudgetMB"), 0).toLongLong(); mb > 0)
        m_workstation->images()->setBudget(mb * 1'000'000);
}

void MainWindow::showCacheSettings()
{
    FileStore *cache = m_workstation->cache();
    ImageMemoryCache *images = m_workstation->images();
    if (!cache)
        return;
    QDialog dialog(this);
    dialog.setObjectName(QStringLiteral("cacheDialog"));
    dialog.setWindowTitle(tr("Cache"));
    auto *usage = new QLabel;
    usage->setObjectName(QStringLiteral("diskUsage"));
    auto *memoryUsage = new QLabel;
    memoryUsage->setObjectName(QStringLiteral("memoryUsage"));
    auto refresh = [cache, images, usage, memoryUsage] {
        const StoreUsage u = cache->usage();
        usage->setText(u.budget > 0 ? tr("%n image(s), %1 MB of a %2 MB budget, in %3", nullptr, int(u.blobs))
                                          .arg(u.bytes / 1e6, 0, 'f', 0).arg(u.budget / 1e6, 0, 'f', 0).arg(cache->root())
                                    : tr("%n image(s), %1 MB (no budget), in %2", nullptr, int(u.blobs)).arg(u.bytes / 1e6, 0, 'f', 0).arg(cache->root()));
        memoryUsage->setText(tr("%n decoded image(s), %1 MB of a %2 MB budget", nullptr, images->count())
                                 .arg(images->usage() / 1e6, 0, 'f', 0).arg(images->budget() / 1e6, 0, 'f', 0));
    };
    refresh();
    auto *budget = new QSpinBox;
    budget->setObjectName(QStringLiteral("diskBudget"));
    budget->setRange(0, 10'000'000);
    budget->setSuffix(tr(" MB"));
    budget->setSpecialValueText(tr("no budget"));  // 0: the cache grows as long as the disk has room
    budget->setValue(int(std::clamp<qint64>((cache->usage().budget + 999'999) / 1'000'000, 0, 10'000'000)));
    auto *memoryBudget = new QSpinBox;
    memoryBudget->setObjectName(QStringLiteral("memoryBudget"));
    memoryBudget->setRange(16, 1'000'000);
    memoryBudget->setSuffix(tr(" MB"));
    memoryBudget->setValue(int(std::max<qint64>(16, images->budget() / 1'000'000)));
    auto *apply = new QPushButton(tr("Set budgets"));
    apply->setObjectName(QStringLiteral("applyBudgets"));
    connect(apply, &QPushButton::clicked, &dialog, [cache, images, budget, memoryBudget, refresh] {
        cache->setBudget(qint64(budget->value()) * 1'000'000);  // evicts the least recently read at once if over it
        images->setBudget(qint64(memoryBudget->value()) * 1'000'000);
        refresh();
    });
    auto *clear = new QPushButton(tr("Clear the cache…"));
    clear->setObjectName(QStringLiteral("clearCache"));
    connect(clear, &QPushButton::clicked, &dialog, [this, cache, images, refresh, &dialog] {
        if (QMessageBox::question(&dialog, tr("Clear the cache"), tr("Remove every image from this workstation's cache, on disk and in "
                                                                      "memory? Studies stay in their archives and are fetched again when opened."))
            != QMessageBox::Yes)
            return;
        images->clear();
        whenDone(cache->query(BlobQuery()), this, [cache, refresh](const Result<QList<BlobInfo>> &all) {
            if (!all.isOk())
                return;
            for (const BlobInfo &b : all.value())
                cache->remove(b.key)->start(ExecutionPolicy::Async);
            refresh();
        });
    });
    connect(m_workstation, &Workstation::studiesChanged, &dialog, refresh);  // removals land, the line follows
    connect(images, &ImageMemoryCache::usageChanged, &dialog, refresh);
    auto *form = new QFormLayout(&dialog);
    form->addRow(tr("On disk"), usage);
    form->addRow(tr("In memory"), memoryUsage);
    auto *budgetRow = new QHBoxLayout;
    budgetRow->addWidget(new QLabel(tr("Disk")));
    budgetRow->addWidget(budget);
    budgetRow->addWidget(new QLabel(tr("Memory")));
    budgetRow->addWidget(memoryBudget);
    budgetRow->addWidget(apply);
    form->addRow(tr("Budgets"), budgetRow);
    form->addRow(QString(), clear);
    auto *close = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(close, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    form->addRow(close);
    dialog.exec();
}

} // namespace spectrum
