// SPDX-License-Identifier: Apache-2.0
#include "blobs/blobsession.h"

#include "spectrum/transfer/blobprotocol.h"
#include "spectrum/transfer/hashtree.h"

namespace spectrum::blobsession {

using namespace blobproto;

QString versionString(const BlobInfo &info)
{
    return QString::number(info.version) + QLatin1Char('-') + QString::fromLatin1(info.sha256.left(4).toHex());
}

QCborMap describe(QCborMap m, const BlobInfo &info)
{
    m.insert(QStringLiteral("size"), info.size);
    m.insert(QStringLiteral("version"), versionString(info));
    if (!info.sha256.isEmpty())
        m.insert(QStringLiteral("sha256"), info.sha256);
    if (info.dicom.isValid())
        m.insert(QStringLiteral("dicom"), QCborMap::fromJsonObject(info.dicom.toJson()));
    return m;
}

QCborMap infoAnswer(qint64 id, const BlobInfo &info, bool withTree)
{
    QCborMap m = describe(okMessage(id), info);
    if (withTree && !info.tree.isEmpty() && hashtree::fits(info.tree, info.size) && info.tree.size() <= kMaxControlFrame / 2)
        m.insert(QStringLiteral("tree"), info.tree);
    return m;
}

} // namespace spectrum::blobsession
