// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the blob server keeps of a client's session and says about a blob: a session (its id, its transfers by
// handle, its data streams, whether it wants hash trees), a transfer (a read pinned to one version, or a write's
// reservation until it is committed against its SHA-256), a read queued on a data stream; a blob described on the
// control channel (size, version, SHA-256, DICOM summary, the hash tree when asked for and small enough).

#include "spectrum/stores/blobs/blobstore.h"

#include <QByteArray>
#include <QCborMap>
#include <QHash>
#include <QString>

#include <memory>

namespace spectrum::blobsession {

struct Transfer
{
    QString key;
    bool isRead = true;
    BlobSnapshot snapshot;  // read: the pinned version
    BlobWriterPtr writer;   // write: the reservation
    QByteArray expectedSha;
    qint64 size = 0;
    bool committing = false;
};

struct Session
{
    QString id;
    QHash<quint32, std::shared_ptr<Transfer>> transfers;
    quint32 nextTransfer = 1;
    int dataStreams = 0;
    bool tree = false;  ///< the client asked for hash trees (the hello's feature "tree")
};

struct SendItem
{
    std::shared_ptr<Transfer> transfer;
    quint32 id;
    qint64 offset;
    qint64 end;
};

/// "3-a1b2c3d4": versions count up within one store; the digest's start tells two stores' "version 1" apart.
QString versionString(const BlobInfo &info);
/// `m` with a blob's description. A listing may lack the SHA-256 of a blob whose digest the store has not computed
/// yet (BlobInfo::sha256); stat and open always carry it, and only they are compared when a transfer resumes.
QCborMap describe(QCborMap m, const BlobInfo &info);
/// stat and open (request `id`): the description, and the hash tree when the client asked for it and the store
/// keeps one. A tree past half a control frame (a blob of more than 16 GiB: 32 bytes per MiB) is left out — the
/// answer must fit a control frame — and such a blob is checked whole, as by servers without trees.
QCborMap infoAnswer(qint64 id, const BlobInfo &info, bool withTree);

} // namespace spectrum::blobsession
