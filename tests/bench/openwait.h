// SPDX-License-Identifier: Apache-2.0
#pragma once
// For the GUI benchmarks: a study opened from the cache (its instances are read off the GUI thread, so the viewer
// comes through MainWindow::studyOpened), and a study's instances read, each waited for in a local event loop.

#include "shell/mainwindow.h"
#include "viewer/studyviewer.h"
#include "shell/workstation.h"

#include <QEventLoop>
#include <QTimer>

namespace spectrum::bench {

inline StudyViewer *openNow(MainWindow &window, const QString &uidOrAlias)
{
    QEventLoop loop;
    StudyViewer *opened = nullptr;
    QObject::connect(&window, &MainWindow::studyOpened, &loop, [&](StudyViewer *v) {
        opened = v;
        loop.quit();
    });
    if (StudyViewer *open = window.openStudy(uidOrAlias))
        return open;
    QTimer::singleShot(60000, &loop, &QEventLoop::quit);
    if (!opened)
        loop.exec();
    return opened;
}

inline StudySummary loadNow(Workstation &ws, const StudySummary &listed)
{
    QEventLoop loop;
    StudySummary read = listed;
    whenDone(ws.loadStudy(listed), &loop, [&](const Result<StudySummary> &r) {
        if (r.isOk())
            read = r.value();
        loop.quit();
    });
    loop.exec();
    return read;
}

} // namespace spectrum::bench
