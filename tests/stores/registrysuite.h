// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the registry suites start from: Orthanc holding the demo studies (a reader's account for DICOMweb, our AE
// title known to it for C-MOVE), store configurations naming it, and spectrum-cli run against them.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/imaging/documents/derivedinstance.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/transfer/dicomweb.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/blobs/memorystore.h"
#include "spectrum/transfer/blobclient.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/transfer/dimse.h"
#include "archives.h"
#include "testsupport.h"
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <sys/stat.h>

namespace spectrum::test {

using namespace spectrum;

inline const QString kUser = QStringLiteral("reader");
inline const QString kPassword = QStringLiteral("pa55-w0rd-x");

class RegistrySuite : public QObject
{
protected:
    StoreConfigFile config(const QString &name)
    {
        Result<StoreConfigFile> f = StoreConfigFile::load(m_dir.filePath(name + QStringLiteral("/stores.json")));
        if (!f.isOk())
            qFatal("%s", qPrintable(f.error().toString()));
        StoreConfigFile c = f.value();
        c.workstation.aeTitle = m_ourAe;
        StoreConfig web = dicomWebStore(QStringLiteral("web"), m_orthanc.dicomWebUrl());
        web.as<DicomWebSettings>().auth = QStringLiteral("basic");
        web.as<DicomWebSettings>().user = kUser;
        web.as<DicomWebSettings>().password = c.seal(kPassword).value();
        const StoreConfig pacs = dimseStore(QStringLiteral("pacs"), m_orthanc.dicomPort(), m_orthanc.aeTitle());
        for (const StoreConfig &s : {web, pacs}) {
            if (Error e = c.add(s); e.isError())
                qFatal("%s", qPrintable(e.toString()));
        }
        return c;
    }

    ProcessResult cli(const QStringList &arguments, const QString &configPath)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("SPECTRUM_CONFIG"), configPath);
        env.insert(QStringLiteral("SPECTRUM_CACHE_DIR"), m_dir.filePath(QStringLiteral("cli-cache")));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(SPECTRUM_CLI_EXECUTABLE), arguments);
        ProcessResult r;
        if (!p.waitForFinished(120000)) {
            p.kill();
            p.waitForFinished();
            return r;
        }
        r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
        r.out = p.readAllStandardOutput();
        r.err = p.readAllStandardError();
        return r;
    }

    void initTestCase()
    {
        QVERIFY2(QFile::exists(QStringLiteral(ORTHANC_EXECUTABLE)), "Orthanc is not installed (make test installs it)");
        m_scpPort = freePort();
        OrthancProcess::Options options;
        options.users = {{kUser, kPassword}};
        options.modalities = {{m_ourAe, QStringLiteral("127.0.0.1"), m_scpPort}};
        QVERIFY(m_orthanc.start(options));
        DemoOptions demo;
        demo.ctSlices = 6;
        demo.mrSlices = 3;
        QVERIFY(!DemoArchive::generate(demo, [&](DemoInstance &&i) { m_instances << std::move(i); return Error(); }).isError());
        for (const DemoInstance &i : m_instances)
            QVERIFY(!m_orthanc.upload(i.bytes).isEmpty());
    }

    QTemporaryDir m_dir;
    OrthancProcess m_orthanc;
    QList<DemoInstance> m_instances;
    const QString m_ourAe = QStringLiteral("SPECTRUMREG");
    quint16 m_scpPort = 0;
};

} // namespace spectrum::test
