// SPDX-License-Identifier: Apache-2.0
// BlobClient: the façade of the blob protocol's client. The work is in transfer/src/blobclient/: the connections
// (channels), what every job shares (transferjob.h), the pull and the push.

#include "spectrum/transfer/blobclient.h"

#include "blobclient/transferjob.h"

namespace spectrum {

using namespace blobwire;

Result<std::pair<BlobEndpoint, QString>> BlobEndpoint::fromUrl(const QUrl &url)
{
    if (url.scheme() != QLatin1String("blob") && url.scheme() != QLatin1String("blobs"))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not a blob:// or blobs:// URL").arg(url.toString()));
    if (url.host().isEmpty() || url.port() <= 0)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' needs a host and a port: blob://HOST:PORT/KEY").arg(url.toString()));
    BlobEndpoint ep;
    ep.host = url.host();
    ep.port = quint16(url.port());
    ep.tls = url.scheme() == QLatin1String("blobs");
    QString key = url.path();
    if (key.startsWith(QLatin1Char('/')))
        key.remove(0, 1);
    return std::make_pair(ep, key);
}

namespace blobwire {

RemoteBlobInfo infoFrom(const QString &key, const QCborMap &m)
{
    RemoteBlobInfo info;
    info.key = key;
    info.size = m.value(QStringLiteral("size")).toInteger();
    info.version = m.value(QStringLiteral("version")).toString();
    info.sha256 = m.value(QStringLiteral("sha256")).toByteArray();
    info.tree = m.value(QStringLiteral("tree")).toByteArray();
    if (m.contains(QStringLiteral("dicom")))
        info.dicom = DicomIdentity::fromJson(m.value(QStringLiteral("dicom")).toMap().toJsonObject());
    return info;
}

} // namespace blobwire

BlobClient::BlobClient(BlobEndpoint endpoint, QObject *parent) : QObject(parent), m_endpoint(std::move(endpoint)) {}

ResultJob<RemoteBlobInfo> *BlobClient::stat(const QString &key)
{
    return new RequestJob<RemoteBlobInfo>(m_endpoint,
                                          QCborMap{{QStringLiteral("t"), QStringLiteral("stat")}, {QStringLiteral("key"), key}},
                                          [key](const QCborMap &m) { return Result<RemoteBlobInfo>(infoFrom(key, m)); }, m_defaults);
}

ResultJob<QList<RemoteBlobInfo>> *BlobClient::list(const QString &prefix, int limit)
{
    RemoteQuery q;
    q.keyPrefix = prefix;
    q.limit = limit;
    return list(q);
}

ResultJob<QList<RemoteBlobInfo>> *BlobClient::list(const RemoteQuery &query)
{
    QCborMap request{{QStringLiteral("t"), QStringLiteral("list")}, {QStringLiteral("prefix"), query.keyPrefix},
                     {QStringLiteral("limit"), query.limit}};
    const std::pair<const char *, QString> filters[] = {{"patientId", query.patientId}, {"studyInstanceUid", query.studyInstanceUid},
                                                        {"seriesInstanceUid", query.seriesInstanceUid}, {"sopInstanceUid", query.sopInstanceUid}};
    for (const auto &[name, value] : filters) {
        if (!value.isEmpty())
            request.insert(QLatin1String(name), value);
    }
    return new RequestJob<QList<RemoteBlobInfo>>(m_endpoint, request, [](const QCborMap &m) {
        QList<RemoteBlobInfo> out;
        for (const QCborValue &v : m.value(QStringLiteral("items")).toArray()) {
            const QCborMap item = v.toMap();
            out << infoFrom(item.value(QStringLiteral("key")).toString(), item);
        }
        return Result<QList<RemoteBlobInfo>>(out);
    }, m_defaults);
}

ResultJob<Done> *BlobClient::remove(const QString &key)
{
    return new RequestJob<Done>(m_endpoint, QCborMap{{QStringLiteral("t"), QStringLiteral("remove")}, {QStringLiteral("key"), key}},
                                [](const QCborMap &) { return Result<Done>(Done{}); }, m_defaults);
}

ResultJob<PullResult> *BlobClient::pull(const QString &key, SinkFactory sink, ByteRange range)
{
    return pull(key, std::move(sink), range, m_defaults);
}

ResultJob<PullResult> *BlobClient::pull(const QString &key, SinkFactory sink, ByteRange range, const TransferOptions &options)
{
    return makePullJob(m_endpoint, key, std::move(sink), range, options);
}

ResultJob<RemoteBlobInfo> *BlobClient::push(const QString &key, const ByteView &data)
{
    return push(key, data, m_defaults);
}

ResultJob<RemoteBlobInfo> *BlobClient::push(const QString &key, const ByteView &data, const TransferOptions &options)
{
    return makePushJob(m_endpoint, key, data, options);
}

} // namespace spectrum
