#include "spectrum/stores/importservice.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QFile>
#include <QStandardPaths>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalServer>
#include <QLocalSocket>

#include <unistd.h>

namespace spectrum {

namespace {
QJsonObject toJson(const ImportSummary &s)
{
    QJsonArray notDicom, notDicomWhy, failed, duplicates, flagged;
    for (const QString &f : s.notDicom)
        notDicom.append(f);
    for (const QString &w : s.notDicomWhy)
        notDicomWhy.append(w);
    for (const auto &[file, why] : s.failed)
        failed.append(QJsonArray{file, why});
    for (const auto &[file, why] : s.duplicates)
        duplicates.append(QJsonArray{file, why});
    for (const auto &[study, why] : s.flagged)
        flagged.append(QJsonArray{study, why});
    QJsonArray studies;
    for (const QString &uid : s.studies)
        studies.append(uid);
    return QJsonObject{{QStringLiteral("imported"), s.imported}, {QStringLiteral("notDicom"), notDicom}, {QStringLiteral("notDicomWhy"), notDicomWhy},
                       {QStringLiteral("failed"), failed}, {QStringLiteral("duplicates"), duplicates}, {QStringLiteral("flagged"), flagged},
                       {QStringLiteral("studies"), studies}, {QStringLiteral("cancelled"), s.cancelled}};
}

ImportSummary fromJson(const QJsonObject &o)
{
    ImportSummary s;
    s.imported = o.value(QStringLiteral("imported")).toInt();
    for (const QJsonValue &v : o.value(QStringLiteral("notDicom")).toArray())
        s.notDicom << v.toString();
    for (const QJsonValue &v : o.value(QStringLiteral("notDicomWhy")).toArray())
        s.notDicomWhy << v.toString();
    for (const QJsonValue &v : o.value(QStringLiteral("failed")).toArray())
        s.failed.append({v.toArray().at(0).toString(), v.toArray().at(1).toString()});
    for (const QJsonValue &v : o.value(QStringLiteral("duplicates")).toArray())
        s.duplicates.append({v.toArray().at(0).toString(), v.toArray().at(1).toString()});
    for (const QJsonValue &v : o.value(QStringLiteral("flagged")).toArray())
        s.flagged.append({v.toArray().at(0).toString(), v.toArray().at(1).toString()});
    for (const QJsonValue &v : o.value(QStringLiteral("studies")).toArray())
        s.studies.insert(v.toString());
    s.cancelled = o.value(QStringLiteral("cancelled")).toBool();
    return s;
}

QByteArray line(const QJsonObject &o)
{
    return QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
}
} // namespace

ImportService::ImportService(FileStore *cache, QObject *parent) : QObject(parent), m_cache(cache), m_server(new QLocalServer(this))
{
    m_server->setSocketOptions(QLocalServer::UserAccessOption);  // this user's processes only
    connect(m_server, &QLocalServer::newConnection, this, &ImportService::serve);
}

ImportService::~ImportService() = default;

QString ImportService::serverName(const QString &cacheRoot)
{
    const QString canonical = QFileInfo(cacheRoot).canonicalFilePath();
    const QByteArray hash = QCryptographicHash::hash((canonical.isEmpty() ? QDir::cleanPath(QFileInfo(cacheRoot).absoluteFilePath()) : canonical).toUtf8(),
                                                     QCryptographicHash::Sha256).toHex().left(16);
    // A full path in a folder only this user may enter (the runtime folder, else one of our own under the temp
    // folder, made 0700): another user cannot take the name first and answer in the workstation's place.
    QString folder = QStandardPaths::writableLocation(QStandardPaths::RuntimeLocation);
    if (folder.isEmpty()) {
        folder = QDir::tempPath() + QStringLiteral("/spectrum-") + QString::number(::getuid());
        QDir().mkpath(folder);
        QFile::setPermissions(folder, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }
    return folder + QStringLiteral("/spectrum-import-") + QString::fromLatin1(hash);
}

Error ImportService::listen(const QString &cacheRoot)
{
    const QString name = serverName(cacheRoot);
    if (m_server->listen(name))
        return Error();
    // A socket left by a workstation that died: nobody answers on it, so it may go.
    QLocalSocket probe;
    probe.connectToServer(name);
    if (probe.waitForConnected(500))
        return Error(ErrorCode::Busy, QStringLiteral("another workstation takes imports for %1").arg(cacheRoot));
    QLocalServer::removeServer(name);
    if (!m_server->listen(name))
        return Error(ErrorCode::Io, QStringLiteral("cannot listen for imports: %1").arg(m_server->errorString()));
    return Error();
}

void ImportService::serve()
{
    while (QLocalSocket *socket = m_server->nextPendingConnection()) {
        connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
        connect(socket, &QLocalSocket::readyRead, this, [this, socket] {
            if (!socket->canReadLine() || socket->property("asked").toBool())
                return;
            socket->setProperty("asked", true);
            const QJsonObject ask = QJsonDocument::fromJson(socket->readLine()).object();
            QStringList paths;
            for (const QJsonValue &v : ask.value(QStringLiteral("import")).toArray()) {
                if (QFileInfo(v.toString()).isAbsolute())
                    paths << v.toString();
            }
            auto *import = new DicomImport(m_cache, paths, socket);
            connect(import, &DicomImport::progress, socket, [socket](int done, int total) {
                socket->write(line({{QStringLiteral("done"), done}, {QStringLiteral("total"), total}}));
            });
            connect(import, &DicomImport::finished, socket, [this, socket](const ImportSummary &summary) {
                socket->write(line({{QStringLiteral("summary"), toJson(summary)}}));
                socket->disconnectFromServer();
                Q_EMIT imported(summary);
            });
            connect(socket, &QLocalSocket::disconnected, import, &DicomImport::cancel);  // the CLI was interrupted
            import->start();
        });
    }
}

Result<ImportSummary> ImportService::handOver(const QString &cacheRoot, const QStringList &paths, const std::function<void(int, int)> &progress)
{
    QLocalSocket socket;
    socket.connectToServer(serverName(cacheRoot));
    if (!socket.waitForConnected(2000))
        return Error(ErrorCode::Busy, QStringLiteral("the workstation holding the cache does not take imports (%1)").arg(socket.errorString()));
    QJsonArray absolute;
    for (const QString &p : paths)
        absolute.append(QFileInfo(p).absoluteFilePath());
    socket.write(line({{QStringLiteral("import"), absolute}}));
    socket.flush();
    for (;;) {
        while (socket.canReadLine()) {
            const QJsonObject o = QJsonDocument::fromJson(socket.readLine()).object();
            if (o.contains(QStringLiteral("summary")))
                return fromJson(o.value(QStringLiteral("summary")).toObject());
            if (progress)
                progress(o.value(QStringLiteral("done")).toInt(), o.value(QStringLiteral("total")).toInt());
        }
        if (socket.state() != QLocalSocket::ConnectedState && socket.bytesAvailable() == 0)
            return Error(ErrorCode::Network, QStringLiteral("the workstation closed the connection before the import ended"));
        socket.waitForReadyRead(1000);
    }
}

} // namespace spectrum
