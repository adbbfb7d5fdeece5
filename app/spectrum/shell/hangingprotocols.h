// SPDX-License-Identifier: Apache-2.0
#pragma once
// HangingProtocols: the reading room's hanging protocols at work — the one that matches a study laid out when it
// opens (its most recent comparable prior read from the cache first, and opened beside it when the protocol says),
// the next and previous ones (N, Shift+N), the layout on screen saved as a new one, the dialog that edits them, and
// the file they are kept in. `window->hangingProtocols()->step(1)`.

#include "spectrum/core/error.h"
#include "spectrum/stores/reading/hangingprotocol.h"

#include <QObject>
#include <QString>

#include <functional>

class QMenu;

namespace spectrum {

class MainWindow;
class StudyViewer;
class Workstation;
struct StudySummary;

class HangingProtocols : public QObject
{
    Q_OBJECT
public:
    HangingProtocols(MainWindow *window, Workstation *workstation);

    /// The protocols studies are laid out by (the built-ins until a file is loaded).
    const ProtocolSet &protocols() const { return m_protocols; }
    void setProtocols(const ProtocolSet &protocols) { m_protocols = protocols; }
    /// Reads the protocols from `path` (the built-ins when it does not exist) and saves changes there; a broken
    /// file keeps the built-ins in use and says why (returned, and in the status bar).
    Error loadFile(const QString &path);
    QString file() const { return m_file; }
    /// Lays `viewer` out by protocol `index` of protocols(), or (−1) by the first that matches its study and
    /// whether its most recent comparable prior is here; the prior opens beside it when the protocol says.
    /// `unlessMoved`: not if the reader has laid the viewer out or moved in it (StudyViewer::isAsOpened()) by the
    /// time the prior is read.
    void apply(StudyViewer *viewer, int index = -1, bool unlessMoved = false);
    /// The next (+1) or previous (−1) protocol that matches the study in view (N, Shift+N).
    void step(int step);
    /// "Save current layout as protocol": the study in view's layout, series and windows as a new protocol
    /// `name`, first in the list, saved to file().
    Error saveLayout(const QString &name);
    /// The dialog that lists, orders, edits and tests the protocols.
    void edit();
    /// View ▸ Hanging protocols: next, previous, again, save the layout, edit.
    void addMenu(QMenu *view);

private:
    /// apply() and step() once the comparable prior is read (readComparablePriorFirst()).
    void applyNow(StudyViewer *viewer, int index);
    void stepNow(StudyViewer *viewer, int step);
    /// When `viewer`'s most recent comparable prior is in the cache but its instances are not read yet: reads them
    /// and then calls `then` (on the GUI thread, while the viewer lives), and returns true. Else false, at once.
    bool readComparablePriorFirst(StudyViewer *viewer, const std::function<void()> &then);
    /// The most recent comparable prior of `viewer`'s study when all of it is here and read (else null).
    const StudySummary *cachedComparablePrior(StudyViewer *viewer) const;

    MainWindow *m_window;
    Workstation *m_workstation;
    ProtocolSet m_protocols = ProtocolSet::builtIn();
    QString m_file;
};

} // namespace spectrum
