// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the reading-room suites start from: Orthanc holding the demo studies over DICOMweb, and a workstation
// with an empty cache whose one archive it is, its main window shown.

#include "viewer/filterpanel.h"
#include "viewport/displayimage.h"
#include "viewport/imageviewport.h"
#include "shell/mainwindow.h"
#include "stores/storesdialog.h"
#include "stores/transferspanel.h"
#include "browser/studybrowser.h"
#include "viewer/studyviewer.h"
#include "shell/workstation.h"
#include "spectrum/imaging/codecs/decodecounts.h"
#include "spectrum/imaging/demostudies.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/reading/studystreamer.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/transfer/dimse.h"
#include "archives.h"
#include "testsupport.h"
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <cmath>
#include <cstring>
#include <limits>
#include <QLineEdit>
#include <QPushButton>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

namespace spectrum::test {

using namespace spectrum;

/// A workstation on a fresh cache in `dir` whose one archive is the DICOMweb store `name` at `url`; null when it
/// did not start.
inline std::unique_ptr<Workstation> workstationWithArchive(const QTemporaryDir &dir, const StoreConfig &archive)
{
    StoreConfigFile config;
    if (config.add(archive).isError())
        return nullptr;
    Workstation::Options o;
    o.cacheDirectory = dir.filePath(QStringLiteral("cache"));
    o.seedDemoWhenEmpty = false;
    o.stores = config;
    auto ws = std::make_unique<Workstation>(o);
    QSignalSpy started(ws.get(), &Workstation::started);
    ws->start();
    return started.wait(20000) ? std::move(ws) : nullptr;
}

/// `window` opens `studyUid` from the store `store`: the viewer it opened, with its streamer (null, with the test
/// failed, when it did not open within 20 s).
inline StudyViewer *openFrom(MainWindow &window, const QString &store, const QString &studyUid)
{
    QSignalSpy opened(&window, &MainWindow::studyOpened);
    window.openRemoteStudy(store, studyUid);
    if (!opened.wait(20000)) {
        QTest::qFail("the study did not open", __FILE__, __LINE__);
        return nullptr;
    }
    auto *viewer = opened.first().first().value<StudyViewer *>();
    if (!viewer || !viewer->streamer()) {
        QTest::qFail("the study opened without a viewer streaming it", __FILE__, __LINE__);
        return nullptr;
    }
    return viewer;
}

inline std::unique_ptr<Workstation> workstationWithArchive(const QTemporaryDir &dir, const QString &name, const QString &url)
{
    return workstationWithArchive(dir, dicomWebStore(name, url));
}

class ReadingRoomSuite : public QObject
{
protected:
    void initTestCase()
    {
        qRegisterMetaType<spectrum::StudyViewer *>();
        QVERIFY2(m_orthanc.start(), "Orthanc did not start (make test installs it)");
        DemoOptions demo;
        demo.ctSlices = 24;
        demo.mrSlices = 2;
        QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) {
                     if (m_orthanc.upload(i.bytes).isEmpty())
                         return Error(ErrorCode::Io, QStringLiteral("upload failed"));
                     m_bySop.insert(i.identity.sopInstanceUid, i);
                     return Error();
                 }).isError());

        StoreConfigFile config;  // in memory: the test's own, never the user's
        QVERIFY(!config.add(dicomWebStore(QStringLiteral("pacs"), m_orthanc.dicomWebUrl())).isError());

        Workstation::Options o;
        o.cacheDirectory = m_dir.filePath(QStringLiteral("cache"));
        o.seedDemoWhenEmpty = false;
        o.stores = config;
        m_ws = std::make_unique<Workstation>(o);
        QSignalSpy started(m_ws.get(), &Workstation::started);
        m_ws->start();
        QVERIFY(started.wait(20000));
        m_window = std::make_unique<MainWindow>(m_ws.get());
        m_window->show();
    }

    void cleanupTestCase()
    {
        m_window.reset();
        m_ws.reset();
    }

    int rowOf(const QString &studyUid) const
    {
        StudyBrowser *b = m_window->browser();
        for (int r = 0; r < b->table()->model()->rowCount(); ++r) {
            if (b->studyAtRow(r)->identity.studyInstanceUid == studyUid)
                return r;
        }
        return -1;
    }

    QTemporaryDir m_dir;
    OrthancProcess m_orthanc;
    QHash<QString, DemoInstance> m_bySop;  ///< what was uploaded, by SOP Instance UID
    std::unique_ptr<Workstation> m_ws;
    std::unique_ptr<MainWindow> m_window;
    const QString m_ctUid = DemoArchive::studyUid(DemoStudy::HeadCt);
};

} // namespace spectrum::test
