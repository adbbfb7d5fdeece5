// SPDX-License-Identifier: Apache-2.0
// The main window's menus, their keys, and the list of every binding (Help > Mouse and keys) made from them.

#include "shell/mainwindow.h"

#include "viewer/filterpanel.h"
#include "shell/manual.h"
#include "findings/findingspanel.h"
#include "viewer/tagviewer.h"
#include "stores/storesdialog.h"
#include "stores/transferspanel.h"
#include "browser/studybrowser.h"
#include "viewer/studyviewer.h"

#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/reading/savedsearchrunner.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/reading/priorprefetch.h"
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
#include <QInputDialog>
#include <QLineEdit>
#include <QMenuBar>
#include <QStatusBar>
#include <QUndoStack>
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

void MainWindow::buildMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *find = file->addAction(tr("&Find study"), this, [this] {
        m_tabs->setCurrentIndex(0);
        m_browser->patientNameField()->setFocus();
        m_browser->patientNameField()->selectAll();
    });
    find->setShortcut(QKeySequence::Find);
    QAction *importFilesAction = file->addAction(tr("&Import files…"), this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(this, tr("Import DICOM files"), QDir::homePath(),
                                                                tr("DICOM files (*.dcm *.DCM *.dicom DICOMDIR *);;All files (*)"));
        if (!files.isEmpty())
            importFiles(files);
    });
    importFilesAction->setShortcut(QKeySequence::Open);
    file->addAction(tr("Import &folder, CD or USB stick…"), this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Import a folder, or a CD or USB stick with a DICOMDIR"), QDir::homePath());
        if (!folder.isEmpty())
            importFiles({folder});
    });
    file->addSeparator();
    QAction *stores = file->addAction(tr("S&tores…"), this, [this] {
        StoresDialog dialog(m_workstation, this);
        dialog.exec();
    });
    stores->setMenuRole(QAction::PreferencesRole);
    file->addAction(tr("&Cache…"), this, &MainWindow::showCacheSettings);
    file->addAction(tr("Sign &in…"), this, &MainWindow::signIn);
    file->addAction(tr("Sign ou&t"), this, &MainWindow::signOut);
    QAction *saveFindingsAction = file->addAction(tr("Save &findings"), this, &MainWindow::saveFindings);
    saveFindingsAction->setShortcut(QKeySequence::Save);
    file->addAction(tr("Save &view (presentation state)"), this, &MainWindow::saveView)->setShortcut(QKeySequence(QStringLiteral("Ctrl+Alt+S")));
    file->addAction(tr("&Export images (PNG, JPEG, MP4)…"), this, &MainWindow::exportImages)->setShortcut(QKeySequence(QStringLiteral("Ctrl+E")));
    file->addAction(tr("Export &de-identified copy…"), this, &MainWindow::exportDeidentified);
    QAction *send = file->addAction(tr("&Send to archive…"), this, &MainWindow::chooseAndSend);
    send->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+S")));
    QAction *closeStudy = file->addAction(tr("&Close study"), this, [this] { closeTab(m_tabs->currentIndex()); });
    closeStudy->setShortcut(QKeySequence::Close);
    file->addSeparator();
    file->addAction(tr("&Quit"), qApp, &QApplication::quit)->setShortcut(QKeySequence::Quit);
    // Undo and redo the reader's edits of the findings, study by study (each open study keeps its own steps).
    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    auto stack = [this]() -> QUndoStack * { return currentViewer() ? currentViewer()->findings()->undoStack() : nullptr; };
    // One step back (or on), said in the status line: what was undone, or that there is nothing to undo.
    auto step = [this, stack](bool back) {
        QUndoStack *s = stack();
        if (!s || !(back ? s->canUndo() : s->canRedo()))
            return statusBar()->showMessage(back ? tr("Nothing to undo in this study's findings") : tr("Nothing to redo in this study's findings"), 4000);
        const QString what = back ? s->undoText() : s->redoText();
        back ? s->undo() : s->redo();
        statusBar()->showMessage((back ? tr("Undone: %1") : tr("Redone: %1")).arg(what), 4000);
    };
    QAction *undo = edit->addAction(tr("&Undo"), this, [step] { step(true); });
    undo->setShortcut(QKeySequence::Undo);
    QAction *redo = edit->addAction(tr("&Redo"), this, [step] { step(false); });
    redo->setShortcuts({QKeySequence(QStringLiteral("Ctrl+Shift+Z")), QKeySequence(QStringLiteral("Ctrl+Y"))});
    connect(edit, &QMenu::aboutToShow, this, [undo, redo, stack] {
        QUndoStack *s = stack();
        undo->setText(s && s->canUndo() ? tr("&Undo %1").arg(s->undoText()) : tr("&Undo"));
        redo->setText(s && s->canRedo() ? tr("&Redo %1").arg(s->redoText()) : tr("&Redo"));
    });
    // Everything frequent has a key, shown in the menus. Single keys act on the viewer; the search field keeps
    // its typing (line edits take printable keys before shortcuts see them).
    auto onViewport = [this](auto f) {
        return [this, f] {
            if (StudyViewer *v = currentViewer())
                f(v->toolViewport());
        };
    };
    auto add = [this](QMenu *menu, const QString &text, const QKeySequence &key, auto slot) {
        QAction *a = menu->addAction(text, this, slot);
        a->setShortcut(key);
        return a;
    };
    QMenu *view = menuBar()->addMenu(tr("&View"));
    add(view, tr("&Fit to window"), Qt::Key_F, onViewport([](ImageViewport *v) { v->setView(v->view().fitted()); }));
    add(view, tr("&Actual size (1:1)"), QKeySequence(QStringLiteral("Shift+F")), onViewport([](ImageViewport *v) { v->setView(v->view().atActualSize()); }));
    add(view, tr("Zoom &in"), QKeySequence::ZoomIn, onViewport([](ImageViewport *v) { v->setView(v->view().withZoom(v->view().zoom() * 1.25)); }));
    add(view, tr("Zoom &out"), QKeySequence::ZoomOut, onViewport([](ImageViewport *v) { v->setView(v->view().withZoom(v->view().zoom() / 1.25)); }));
    view->addSeparator();
    add(view, tr("Rotate &clockwise"), Qt::Key_BracketRight, onViewport([](ImageViewport *v) { v->setView(v->view().rotated(1)); }));
    add(view, tr("Rotate c&ounter-clockwise"), Qt::Key_BracketLeft, onViewport([](ImageViewport *v) { v->setView(v->view().rotated(-1)); }));
    add(view, tr("Flip &horizontally"), Qt::Key_H, onViewport([](ImageViewport *v) { v->setView(v->view().flippedHorizontally()); }));
    add(view, tr("Flip &vertically"), Qt::Key_V, onViewport([](ImageViewport *v) { v->setView(v->view().flippedVertically()); }));
    add(view, tr("&Invert"), Qt::Key_I, onViewport([](ImageViewport *v) { v->setInverted(!v->isInverted()); }));
    QAction *segmentations = add(view, tr("Se&gmentations"), Qt::Key_G, [this] {
        if (StudyViewer *v = currentViewer())
            v->settings()->setSegmentationsVisible(!v->settings()->segmentationsVisible());
    });
    segmentations->setToolTip(tr("Show or hide segmentations over the images they were drawn on"));
    // Shrunk images are always averaged (a thin line never vanishes); magnified ones smooth or pixel-exact.
    m_smoothAction = view->addAction(tr("S&mooth magnification"), this, [this](bool on) {
        for (int i = 1; i < m_tabs->count(); ++i) {
            if (auto *viewer = qobject_cast<StudyViewer *>(m_tabs->widget(i)))
                viewer->settings()->setSmoothMagnification(on);
        }
    });
    m_smoothAction->setCheckable(true);
    m_smoothAction->setChecked(true);
    add(view, tr("&Reset view"), Qt::Key_R, [this] {
        if (StudyViewer *v = currentViewer())
            v->activePane()->resetView();  // fit, centre, the image's own window
    });
    m_mprAction = add(view, tr("&MPR (axial, coronal, sagittal)"), Qt::Key_M, [this] {
        // On or off from what the viewer shows (a hanging protocol may have opened it).
        if (StudyViewer *v = currentViewer())
            v->setMprShown(!v->isMprShown());
        StudyViewer *v = currentViewer();
        m_mprAction->setChecked(v && v->isMprShown());
    });
    m_mprAction->setCheckable(true);
    m_mprAction->setToolTip(tr("The active pane's series reformatted in three planes, with a crosshair; again for the grid"));
    view->addSeparator();
    addCompareActions(view);
    m_hangingProtocols->addMenu(view);
    m_cineAction = add(view, tr("&Cine"), Qt::Key_C, [this] {
        if (StudyViewer *v = currentViewer())
            v->cine()->setPlaying(!v->cine()->isPlaying());
    });
    m_cineAction->setCheckable(true);
    add(view, tr("Cine &faster"), Qt::Key_Plus, [this] {
        if (StudyViewer *v = currentViewer())
            v->cine()->setRate(v->cine()->rate() + 5);
        if (StudyViewer *v = currentViewer())
            m_cineRate = v->cine()->rate();
    });
    add(view, tr("Cine &slower"), Qt::Key_Minus, [this] {
        if (StudyViewer *v = currentViewer())
            v->cine()->setRate(v->cine()->rate() - 5);
        if (StudyViewer *v = currentViewer())
            m_cineRate = v->cine()->rate();
    });

    QMenu *window = menuBar()->addMenu(tr("&Window/Level"));
    window->setObjectName(QStringLiteral("windowLevelMenu"));
    const QList<WindowPreset> &presets = ctWindowPresets();
    for (int i = 0; i < presets.size(); ++i) {
        add(window, tr("%1  (W %2 L %3)").arg(presets[i].name).arg(presets[i].width).arg(presets[i].center),
            QKeySequence(Qt::Key_1 + i), onViewport([i](ImageViewport *v) { v->applyPreset(i); }));
    }
    add(window, tr("&Auto (from the image)"), Qt::Key_A, onViewport([](ImageViewport *v) { v->autoWindowLevel(); }));
    add(window, tr("&Default (from the file)"), Qt::Key_0, onViewport([](ImageViewport *v) { v->setWindow(defaultWindow(v->image())); }));
    // The reader's own windows (stroke, subdural…) on 6 to 9, kept between sessions with the unit they are in.
    window->addSeparator();
    QList<QAction *> own;
    for (int slot = 6; slot <= 9; ++slot) {
        own << add(window, QString(), QKeySequence(Qt::Key_0 + slot), [this, slot] {
            StudyViewer *v = currentViewer();
            const std::optional<ReaderWindow> w = readerWindow(slot);
            if (!v || !v->toolViewport()->hasImage())
                return;
            if (!w)
                return statusBar()->showMessage(tr("No window saved as %1: Window/Level > Save this window as…").arg(slot), 5000);
            const QString unit = v->toolViewport()->image().info.valueUnit();
            if (w->unit != unit)
                return statusBar()->showMessage(tr("“%1” is a window in %2, this image's values are in %3: not applied")
                                                    .arg(w->name, w->unit.isEmpty() ? tr("stored values") : w->unit, unit.isEmpty() ? tr("stored values") : unit), 6000);
            v->toolViewport()->setWindow(VoiWindow{w->center, w->width});
        });
    }
    QMenu *saveAs = window->addMenu(tr("&Save this window as"));
    saveAs->setObjectName(QStringLiteral("saveWindowMenu"));
    for (int slot = 6; slot <= 9; ++slot) {
        saveAs->addAction(tr("Key %1…").arg(slot), this, [this, slot] {
            StudyViewer *v = currentViewer();
            if (!v || !v->toolViewport()->hasImage())
                return;
            const VoiWindow w = v->toolViewport()->window();
            bool ok = false;
            const QString name = QInputDialog::getText(this, tr("Save this window"), tr("Name of the window on key %1 (W %2 L %3):").arg(slot).arg(w.width).arg(w.center),
                                                       QLineEdit::Normal, readerWindow(slot) ? readerWindow(slot)->name : QString(), &ok).trimmed();
            if (!ok || name.isEmpty())
                return;
            saveReaderWindow(slot, ReaderWindow{name, w.center, w.width, v->toolViewport()->image().info.valueUnit()});
            statusBar()->showMessage(tr("“%1” saved on key %2").arg(name).arg(slot), 4000);
        });
    }
    auto label = [this, own] {
        for (int i = 0; i < own.size(); ++i) {
            const std::optional<ReaderWindow> w = readerWindow(6 + i);
            own[i]->setText(w ? tr("%1  (W %2 L %3)").arg(w->name).arg(w->width).arg(w->center) : tr("Your window %1 (not saved yet)").arg(6 + i));
        }
    };
    label();
    connect(window, &QMenu::aboutToShow, this, label);

    QMenu *filtersMenu = menuBar()->addMenu(tr("F&ilters"));
    QAction *showFilters = m_filterDock->toggleViewAction();
    showFilters->setText(tr("&Show the filter panel"));
    showFilters->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+F")));
    filtersMenu->addAction(showFilters);
    add(filtersMenu, tr("&Apply filters on/off"), Qt::Key_T, [this] { m_filters->toggle(); });
    QAction *showTags = m_tagDock->toggleViewAction();
    showTags->setText(tr("DICOM &tags"));
    showTags->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+D")));
    view->addAction(showTags);
    QAction *showFindings = m_findingsDock->toggleViewAction();
    showFindings->setText(tr("&Findings"));
    showFindings->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+M")));
    view->addAction(showFindings);
    QAction *showTransfers = m_transferDock->toggleViewAction();
    showTransfers->setText(tr("&Transfers"));
    showTransfers->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+T")));
    view->addSeparator();
    view->addAction(showTransfers);

    QMenu *tools = menuBar()->addMenu(tr("&Tools"));
    tools->setObjectName(QStringLiteral("toolsMenu"));
    auto *toolGroup = new QActionGroup(this);
    // Pan, every measurement tool a hand places (in the registry's order, each with its own entry and key), the
    // crosshair.
    QList<std::tuple<QString, ViewportTool, QKeySequence>> toolList = {{tr("&Pan"), ViewportTool::pan(), QKeySequence(Qt::Key_P)}};
    for (const MeasurementTool *m : measurementTools())
        if (m->placement() != Placement::None)
            toolList.append({m->menuText(), ViewportTool::measuring(m->kind()), QKeySequence(m->shortcut())});
    toolList.append({tr("&Crosshair"), ViewportTool::crosshair(), QKeySequence(Qt::Key_X)});
    for (const auto &[text, tool, key] : toolList) {
        QAction *a = add(tools, text, key, [this, tool = tool] {
            m_tool = tool;
            // The reader's tool, in every pane of every open study: a click on any pane uses it.
            for (StudyViewer *v : findChildren<StudyViewer *>())
                v->settings()->setTool(tool);
        });
        a->setCheckable(true);
        a->setChecked(tool.pans());
        a->setData(tool.id());
        toolGroup->addAction(a);
        m_toolActions << a;
    }
    tools->addSeparator();
    add(tools, tr("&Key image (mark or unmark)"), Qt::Key_K, onViewport([this](ImageViewport *v) {
        if (!v->hasImage())
            return;
        FindingsModel *model = v->findingsLayer()->model();
        model->setReaderName(observerName());
        const ImageRef ref = v->findingsLayer()->imageRef();
        if (ref.sopInstanceUid.isEmpty()) {  // a reformatted plane: no instance holds it
            statusBar()->showMessage(tr("Only acquired images can be key images: mark the slice in the grid (M)."), 6000);
            return;
        }
        if (!model->rejectionOf(ref).isEmpty()) {
            statusBar()->showMessage(tr("This image was rejected (%1): not a key image.").arg(model->rejectionOf(ref)), 6000);
            return;
        }
        if (!v->findingsLayer()->isKeyImage()) {
            v->findingsLayer()->setKeyImage(true);
            return statusBar()->showMessage(tr("Key image (saved with File > Save findings)."), 4000);
        }
        if (!model->canUnmarkKeyImage(ref)) {
            statusBar()->showMessage(tr("A key image of another reader's selection, or of one titled otherwise than \"Of Interest\": "
                                        "it stays one there."), 6000);
            return;
        }
        const bool markedHere = model->isMarkedKeyImage(ref);
        v->findingsLayer()->setKeyImage(false);
        statusBar()->showMessage(markedHere ? tr("No longer a key image (saved with File > Save findings).")
                                            : tr("No longer a key image: File > Save findings replaces the saved selection that lists it."), 6000);
    }));
    add(tools, tr("Delete the selected &finding"), QKeySequence::Delete, onViewport([](ImageViewport *v) { v->findingsLayer()->deleteSelectedMeasurement(); }));
    add(tools, tr("&Clear the findings on this image"), QKeySequence(QStringLiteral("Shift+Del")), onViewport([](ImageViewport *v) { v->findingsLayer()->clearMeasurements(); }));

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    add(help, tr("&Manual"), QKeySequence::HelpContents, [this] {
        auto *dialog = new QDialog(this);
        dialog->setObjectName(QStringLiteral("manualDialog"));
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->setWindowTitle(tr("Spectrum manual"));
        auto *text = new QTextBrowser;
        text->setHtml(manualHtml());
        auto *layout = new QVBoxLayout(dialog);
        layout->addWidget(text);
        auto *close = new QDialogButtonBox(QDialogButtonBox::Close);
        connect(close, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
        layout->addWidget(close);
        dialog->resize(680, 760);
        dialog->show();  // beside the images, not in front of them for good
    });
    help->addAction(tr("&Mouse and keys"), this, [this] {
        QDialog dialog(this);
        dialog.setWindowTitle(tr("Mouse and keys"));
        auto *text = new QTextBrowser;
        text->setHtml(keyBindingsHtml());
        auto *layout = new QVBoxLayout(&dialog);
        layout->addWidget(text);
        auto *close = new QDialogButtonBox(QDialogButtonBox::Close);
        connect(close, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
        layout->addWidget(close);
        dialog.resize(640, 720);
        dialog.exec();
    });
    help->addSeparator();
    QAction *about = help->addAction(tr("&About Spectrum"), this, [this] {
        QMessageBox::about(this, tr("About Spectrum"),
                           tr("<h3>Spectrum %1</h3><p>A diagnostic workstation: studies from PACS, DICOMweb and object stores, "
                              "shown while they arrive; filters, MPR, priors and findings as DICOM.</p>"
                              "<p>Licensed under the Apache License 2.0. Built with Qt %2 (LGPL), DCMTK, OpenJPEG, OpenSSL, "
                              "SQLite and xxHash; MP4 cines are made by the ffmpeg program when it is installed.</p>"
                              "<p>The cache is in <tt>%3</tt>.</p>")
                               .arg(QStringLiteral(SPECTRUM_VERSION), QString::fromLatin1(qVersion()), m_workstation->options().cacheDirectory.toHtmlEscaped()));
    });
    about->setMenuRole(QAction::AboutRole);
}

std::optional<MainWindow::ReaderWindow> MainWindow::readerWindow(int slot)
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("readerWindows/%1").arg(slot));
    if (!settings.contains(QStringLiteral("name")))
        return std::nullopt;
    return ReaderWindow{settings.value(QStringLiteral("name")).toString(), settings.value(QStringLiteral("center")).toDouble(),
                        settings.value(QStringLiteral("width")).toDouble(), settings.value(QStringLiteral("unit")).toString()};
}

void MainWindow::saveReaderWindow(int slot, const ReaderWindow &window)
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("readerWindows/%1").arg(slot));
    settings.setValue(QStringLiteral("name"), window.name);
    settings.setValue(QStringLiteral("center"), window.center);
    settings.setValue(QStringLiteral("width"), window.width);
    settings.setValue(QStringLiteral("unit"), window.unit);
}

void MainWindow::showPaneMenu(QPoint globalPosition)
{
    StudyViewer *v = currentViewer();
    if (!v)
        return;
    // What a right-click on a pane offers: the menus the menu bar has for it, and the pane's own.
    auto *menu = new QMenu(this);
    menu->setObjectName(QStringLiteral("paneMenu"));
    menu->setAttribute(Qt::WA_DeleteOnClose);
    for (const char *name : {"toolsMenu", "windowLevelMenu", "layoutMenu"})
        if (QMenu *m = findChild<QMenu *>(QLatin1String(name)))
            menu->addMenu(m);
    menu->addSeparator();
    if (v->paneCount() > 1) {
        const bool alone = v->maximisedPane() != nullptr;
        menu->addAction(alone ? tr("Back to the layout (double-click)") : tr("Maximise this pane (double-click)"), this, [this, alone] {
            if (StudyViewer *w = currentViewer())
                w->setMaximised(alone ? nullptr : w->activePane());
        });
    }
    menu->addAction(tr("&Reset view"), this, [this] {
        if (StudyViewer *w = currentViewer())
            w->activePane()->resetView();
    });
    menu->addAction(tr("&Export images…"), this, &MainWindow::exportImages);
    menu->addAction(tr("&Send to archive…"), this, &MainWindow::chooseAndSend);
    menu->popup(globalPosition);
}

QString MainWindow::keyBindingsHtml() const
{
    // Made from the menus themselves, so it lists every binding there is — and only those.
    QString html = tr("<h3>Mouse</h3><table>"
                      "<tr><td>Wheel</td><td>next / previous slice or frame</td></tr>"
                      "<tr><td>Ctrl+wheel</td><td>zoom</td></tr>"
                      "<tr><td>Right-drag</td><td>window (left/right) and level (up/down)</td></tr>"
                      "<tr><td>Right-click</td><td>the pane's menu: tools, windows, layout, reset, export, send</td></tr>"
                      "<tr><td>Double-click a pane</td><td>that pane alone; again for the layout</td></tr>"
                      "<tr><td>Drag the bar at a pane's right edge</td><td>anywhere in the stack</td></tr>"
                      "<tr><td>Middle-drag, or left-drag with the pan tool</td><td>pan</td></tr>"
                      "<tr><td>Left-drag with a measuring tool</td><td>draw it; drag an end point to move it</td></tr>"
                      "<tr><td>Click a pane</td><td>the pane keys act on</td></tr>"
                      "<tr><td>Drag a series onto a pane</td><td>show it there</td></tr>"
                      "<tr><td>Drop files or folders on the window</td><td>import them</td></tr></table>"
                      "<h3>Keys</h3><table>"
                      "<tr><td>↑ ↓ ← →, Page Up/Down, Home/End</td><td>step through slices and frames</td></tr>");
    for (QAction *menuAction : menuBar()->actions()) {
        QMenu *menu = menuAction->menu();
        if (!menu)
            continue;
        QList<QAction *> actions = menu->actions();
        for (int i = 0; i < actions.size(); ++i) {
            if (QMenu *sub = actions[i]->menu())
                actions << sub->actions();
        }
        for (QAction *a : actions) {
            if (a->shortcut().isEmpty())
                continue;
            html += QStringLiteral("<tr><td><b>%1</b></td><td>%2 (%3)</td></tr>")
                        .arg(a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped(), a->text().remove(QLatin1Char('&')).toHtmlEscaped(),
                             menu->title().remove(QLatin1Char('&')).toHtmlEscaped());
        }
    }
    return html + QStringLiteral("</table>");
}

} // namespace spectrum
