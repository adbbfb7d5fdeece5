// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the workstation suites start from: a workstation seeded with the demo studies (checked whole when the
// seeding says it has finished), its main window shown and active before each test.

#include "viewport/displayimage.h"
#include "viewport/imageviewport.h"
#include "viewer/filterpanel.h"
#include "shell/mainwindow.h"
#include "browser/studybrowser.h"
#include "stores/storesdialog.h"
#include "viewer/studyviewer.h"
#include "viewer/tagviewer.h"
#include "stores/transferspanel.h"
#include "shell/workstation.h"
#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/tools/measurements.h"
#include "spectrum/stores/reading/imageloader.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "guisupport.h"
#include "testsupport.h"
#include <QAction>
#include <QApplication>
#include <QListWidget>
#include <QTimer>
#include <QSpinBox>
#include <QPushButton>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSettings>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QDockWidget>
#include <QComboBox>
#include <QTest>
#include <QTreeWidget>
#include <cstring>

namespace spectrum::test {

using namespace spectrum;

class DemoWorkstationSuite : public QObject
{
protected:
    void initTestCase()
    {
        Workstation::Options options;
        options.cacheDirectory = m_dir.filePath(QStringLiteral("cache"));
        m_ws = std::make_unique<Workstation>(options);
        QSignalSpy seeded(m_ws.get(), &Workstation::seedingFinished);
        QSignalSpy started(m_ws.get(), &Workstation::started);
        m_ws->start();
        QVERIFY(!m_ws->isStarted());  // opening the cache does not block the caller
        QVERIFY(started.wait(10000));
        QVERIFY(m_ws->isSeeding());
        m_window = std::make_unique<MainWindow>(m_ws.get());
        // No hanging protocols: these suites try the viewer's own layouts, links and keys on a study opened
        // plainly (one pane, its first series); tst_protocols tries the protocols.
        m_window->hangingProtocols()->setProtocols(ProtocolSet());
        m_window->show();
        // When seeding is announced finished, the study list already holds all of it (the screenshot tool and a
        // user opening a study at that moment must not get a CT with only the slices committed so far).
        int ctSlicesAtFinish = -1;
        const QMetaObject::Connection noteFinish = connect(m_ws.get(), &Workstation::seedingFinished, this, [&] {
            const StudySummary *ct = m_ws->findStudy(QStringLiteral("demo-ct"));
            ctSlicesAtFinish = ct ? ct->instanceCount : 0;
        });
        const auto forgetFinish = qScopeGuard([&] { disconnect(noteFinish); });  // it captures this function's locals
        QVERIFY(seeded.wait(120000));
        QCOMPARE(ctSlicesAtFinish, 200);
        QVERIFY(!m_ws->isSeeding());
    }

    void init()
    {
        if (!m_window)
            return;
        m_window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    }

    QTemporaryDir m_dir;
    std::unique_ptr<Workstation> m_ws;
    std::unique_ptr<MainWindow> m_window;
};

} // namespace spectrum::test
