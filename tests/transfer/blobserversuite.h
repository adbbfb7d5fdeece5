// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the blob-protocol suites start from: a spectrum-blobd on loopback with the tests' token, and clients of it.

#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/blobs/diskfill.h"
#include "spectrum/transfer/blobclient.h"
#include "spectrum/transfer/blobprotocol.h"
#include "spectrum/transfer/buffersink.h"
#include "blobsupport.h"
#include "testsupport.h"
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QDir>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <sys/types.h>
#include <QTimer>
#include <QScopeGuard>

namespace spectrum::test {

using namespace spectrum;

class BlobServerSuite : public QObject
{
protected:
    void initTestCase()
    {
        m_blobd = std::make_unique<Blobd>(m_dir.filePath(QStringLiteral("root")));
        QVERIFY(m_blobd->start());
    }

    std::unique_ptr<BlobClient> makeClient(quint16 port, TransferOptions opt = TransferOptions()) const
    {
        BlobEndpoint ep;
        ep.port = port;
        ep.token = kToken;
        auto c = std::make_unique<BlobClient>(ep);
        c->setDefaults(opt);
        return c;
    }
    Error put(quint16 port, const QString &key, const QByteArray &bytes, TransferOptions opt = TransferOptions())
    {
        return runSync(makeClient(port, opt)->push(key, ByteView(bytes))).error();
    }

    QTemporaryDir m_dir;
    std::unique_ptr<Blobd> m_blobd;
};

} // namespace spectrum::test
