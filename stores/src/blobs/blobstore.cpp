// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/blobs/blobstore.h"

#include "spectrum/transfer/hashtree.h"

#include <algorithm>

#include <QMetaMethod>

namespace spectrum {

void completeTree(BlobInfo *info)
{
    if (!hashtree::fits(info->tree, info->size) && hashtree::leafCount(info->size) <= 1 && info->sha256.size() == hashtree::kDigestSize)
        info->tree = info->size == 0 ? QByteArray() : info->sha256;
}

bool BlobQuery::matches(const BlobInfo &info) const
{
    if (!keyPrefix.isEmpty() && !info.key.startsWith(keyPrefix))
        return false;
    const DicomIdentity &d = info.dicom;
    return (patientId.isEmpty() || d.patientId == patientId)
        && (studyInstanceUid.isEmpty() || d.studyInstanceUid == studyInstanceUid)
        && (seriesInstanceUid.isEmpty() || d.seriesInstanceUid == seriesInstanceUid)
        && (sopInstanceUid.isEmpty() || d.sopInstanceUid == sopInstanceUid);
}

void BlobQuery::arrange(QList<BlobInfo> *matches) const
{
    std::sort(matches->begin(), matches->end(), [](const BlobInfo &a, const BlobInfo &b) { return a.key < b.key; });
    if (limit >= 0 && matches->size() > limit)
        matches->resize(limit);
}

BlobStore::BlobStore(QObject *parent) : QObject(parent), m_notifier(std::make_shared<StoreNotifier>())
{
    qRegisterMetaType<spectrum::BlobInfo>();
    // Queued: jobs announce from pool threads, listeners expect the store's thread.
    connect(m_notifier.get(), &StoreNotifier::committed, this, &BlobStore::blobCommitted, Qt::QueuedConnection);
    connect(m_notifier.get(), &StoreNotifier::removed, this, [this](const QStringList &keys) {
        for (const QString &k : keys)
            Q_EMIT blobRemoved(k);
    }, Qt::QueuedConnection);
}

BlobStore::~BlobStore() = default;

// Counted here: Qt may call these with its own mutex held, so they must not ask isSignalConnected(). Qt does not
// call disconnectNotify() for a listener destroyed without disconnecting: its count stays, and announcements go
// out as they always did.
void BlobStore::connectNotify(const QMetaMethod &signal)
{
    if (signal == QMetaMethod::fromSignal(&BlobStore::blobCommitted))
        ++m_commitListeners;
    else if (signal == QMetaMethod::fromSignal(&BlobStore::blobRemoved))
        ++m_removalListeners;
    m_notifier->setHeard(m_commitListeners > 0, m_removalListeners > 0);
}

void BlobStore::disconnectNotify(const QMetaMethod &signal)
{
    if (signal == QMetaMethod::fromSignal(&BlobStore::blobCommitted))
        --m_commitListeners;
    else if (signal == QMetaMethod::fromSignal(&BlobStore::blobRemoved))
        --m_removalListeners;
    else if (!signal.isValid())  // everything disconnected at once
        m_commitListeners = m_removalListeners = 0;
    m_notifier->setHeard(m_commitListeners > 0, m_removalListeners > 0);
}

Error BlobStore::validateKey(const QString &key)
{
    auto invalid = [&](const QString &why) {
        QString shown = key;
        shown.replace(QChar(0), QStringLiteral("\\0"));
        return Error(ErrorCode::InvalidKey, QStringLiteral("key '%1' %2").arg(shown.left(80), why));
    };
    if (key.isEmpty())
        return invalid(QStringLiteral("is empty"));
    if (key.size() > 200)
        return invalid(QStringLiteral("is longer than 200 characters"));
    if (key.startsWith(QLatin1Char('.')))
        return invalid(QStringLiteral("starts with '.'"));
    if (key.contains(QLatin1String("..")))
        return invalid(QStringLiteral("contains '..'"));
    for (QChar c : key) {
        const char16_t u = c.unicode();
        const bool ok = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '.'
            || u == '_' || u == '-';
        if (!ok)
            return invalid(QStringLiteral("contains a character other than letters, digits, '.', '_' and '-'"));
    }
    return Error();
}

ResultJob<Done> *BlobStore::write(const BlobWriterPtr &writer, qint64 offset, const ByteView &data)
{
    return makeJob<Done>([writer, offset, data](const CancelToken &) -> Result<Done> {
        if (!writer)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("write to no blob"));
        if (Error e = writer->writeAt(offset, data.data(), data.size()); e.isError())
            return e;
        return Done{};
    });
}

} // namespace spectrum
