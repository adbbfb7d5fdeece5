// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the workstation's GUI suites share: synthetic input events and a look at rendered pixels.

#include "shell/mainwindow.h"
#include "browser/studybrowser.h"
#include "viewer/studyviewer.h"
#include "shell/workstation.h"

#include <QApplication>
#include <QDialog>
#include <QLayout>
#include <QLineEdit>
#include <QTableView>
#include <QMimeData>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>
#include <QUrl>

#include <functional>
#include <memory>

#include <optional>
#include <QImage>
#include <QMouseEvent>
#include <QWheelEvent>
#include <QWidget>

namespace spectrum::test {

inline double meanGrey(const QImage &img)
{
    double sum = 0;
    for (int y = 0; y < img.height(); ++y) {
        const uchar *line = img.constScanLine(y);
        for (int x = 0; x < img.width(); ++x)
            sum += line[x];
    }
    return sum / (double(img.width()) * img.height());
}

inline void sendWheel(QWidget *w, int delta, Qt::KeyboardModifiers mods = Qt::NoModifier)
{
    const QPointF pos(w->width() / 2.0, w->height() / 2.0);
    QWheelEvent e(pos, w->mapToGlobal(pos), QPoint(), QPoint(0, delta), Qt::NoButton, mods, Qt::NoScrollPhase, false);
    QApplication::sendEvent(w, &e);
}

inline void sendMouse(QWidget *w, QEvent::Type type, QPoint pos, Qt::MouseButton button, Qt::MouseButtons buttons)
{
    QMouseEvent e(type, QPointF(pos), w->mapToGlobal(QPointF(pos)), button, buttons, Qt::NoModifier);
    QApplication::sendEvent(w, &e);
}

/// A left-button drag from `from` to `to`, through the middle.
inline void drag(QWidget *w, QPoint from, QPoint to)
{
    sendMouse(w, QEvent::MouseButtonPress, from, Qt::LeftButton, Qt::LeftButton);
    sendMouse(w, QEvent::MouseMove, (from + to) / 2, Qt::NoButton, Qt::LeftButton);
    sendMouse(w, QEvent::MouseMove, to, Qt::NoButton, Qt::LeftButton);
    sendMouse(w, QEvent::MouseButtonRelease, to, Qt::LeftButton, Qt::NoButton);
}

/// `open` opens a modal dialog (a shortcut pressed, a menu chosen): `fill` is given it, laid out, once it shows —
/// from within the dialog's own event loop, as a person would fill it — and closes it. False when no dialog came.
inline bool withModalDialog(const std::function<void()> &open, const std::function<void(QDialog *)> &fill)
{
    bool seen = false;
    int tries = 0;
    const auto alive = std::make_shared<bool>(true);  // never looked for after this returns
    const auto gone = qScopeGuard([alive] { *alive = false; });
    std::function<void()> look = [&] {
        auto *dialog = qobject_cast<QDialog *>(QApplication::activeModalWidget());
        if (!dialog || !dialog->isVisible())
            return void(++tries < 250 ? QTimer::singleShot(20, [alive, &look] { if (*alive) look(); }) : void());
        dialog->layout()->activate();  // laid out: each button where a click finds it
        seen = true;
        fill(dialog);
    };
    QTimer::singleShot(0, [alive, &look] { if (*alive) look(); });
    open();
    return seen;
}

/// Files dropped on `target` as from a file manager; whether it took the drag when it entered.
inline bool dropFiles(QWidget *target, const QList<QUrl> &urls)
{
    QMimeData data;
    data.setUrls(urls);
    const QPointF at(target->width() / 2.0, target->height() / 2.0);
    QDragEnterEvent enter(at.toPoint(), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &enter);
    if (!enter.isAccepted())
        return false;
    QDropEvent drop(at, Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &drop);
    return true;
}

/// The cursor moved to `at`, then a left click there.
inline void click(QWidget *w, QPoint at)
{
    sendMouse(w, QEvent::MouseMove, at, Qt::NoButton, Qt::NoButton);
    sendMouse(w, QEvent::MouseButtonPress, at, Qt::LeftButton, Qt::LeftButton);
    sendMouse(w, QEvent::MouseButtonRelease, at, Qt::LeftButton, Qt::NoButton);
}

/// MainWindow::openStudy() and the wait for its viewer: the study's instances are read from the cache off the GUI
/// thread. nullptr when it does not open.
inline StudyViewer *openAndWait(MainWindow *window, const QString &uidOrAlias, int timeoutMs = 20000)
{
    qRegisterMetaType<StudyViewer *>();
    QSignalSpy opened(window, &MainWindow::studyOpened);
    if (StudyViewer *open = window->openStudy(uidOrAlias))
        return open;  // open already
    if (opened.isEmpty() && !opened.wait(timeoutMs))
        return nullptr;
    return opened.first().first().value<StudyViewer *>();
}

/// A study found in the study browser as a reader does — Ctrl+F, `typed` in the patient's name field, Enter —
/// and opened with a double-click on its row, the only one listed. The viewer that opened, or nullptr (with the
/// test failed) when the search did not list exactly one study or nothing opened.
inline StudyViewer *openFromBrowser(MainWindow *window, const QString &typed, int timeoutMs = 30000)
{
    qRegisterMetaType<StudyViewer *>();
    QTest::keySequence(window, QKeySequence::Find);
    auto *browser = window->findChild<StudyBrowser *>();
    if (!browser || !QTest::qWaitFor([&] { return browser->patientNameField()->hasFocus(); }, 5000)) {
        QTest::qFail("Ctrl+F did not reach the browser's name field", __FILE__, __LINE__);
        return nullptr;
    }
    browser->patientNameField()->selectAll();
    QTest::keyClicks(browser->patientNameField(), typed);
    QTest::keyClick(browser->patientNameField(), Qt::Key_Return);
    QTableView *table = browser->table();
    if (!QTest::qWaitFor([&] { return table->model()->rowCount() == 1; }, timeoutMs)) {
        QTest::qFail(qPrintable(QStringLiteral("the search listed %1 studies, not 1").arg(table->model()->rowCount())), __FILE__, __LINE__);
        return nullptr;
    }
    QSignalSpy opened(window, &MainWindow::studyOpened);
    const QPoint row = table->visualRect(table->model()->index(0, 0)).center();
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, row);
    QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, row);
    if (opened.isEmpty() && !opened.wait(timeoutMs)) {
        QTest::qFail("a double-click on the study opened nothing", __FILE__, __LINE__);
        return nullptr;
    }
    return opened.first().first().value<StudyViewer *>();
}

/// Workstation::loadStudy() waited for: `listed` (from Workstation::studies()) with its instances; nullopt when it
/// cannot be read.
inline std::optional<StudySummary> readStudy(Workstation *ws, const StudySummary &listed, int timeoutMs = 20000)
{
    std::optional<StudySummary> read;
    bool done = false;
    QObject context;
    whenDone(ws->loadStudy(listed), &context, [&](const Result<StudySummary> &r) {
        done = true;
        if (r.isOk())
            read = r.value();
    });
    if (!QTest::qWaitFor([&] { return done; }, timeoutMs))
        return std::nullopt;
    return read;
}

} // namespace spectrum::test
