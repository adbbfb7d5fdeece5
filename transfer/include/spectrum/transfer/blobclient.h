// SPDX-License-Identifier: Apache-2.0
#pragma once
// BlobClient: the client side of the blob protocol (transfer/PROTOCOL.md). Pulls a blob over several data
// connections at once, chunks handed out dynamically and received straight into the destination's memory;
// pushes one with an end-to-end acknowledgement after the server's durable commit.
//
// Every operation is a Job (core/job.h), so callers choose Async or Sync. Jobs open their own connections and
// close them when they finish. A BlobClient is cheap; it only holds the endpoint and defaults.

#include "spectrum/core/bytes.h"
#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/resultjob.h"

#include <QUrl>

#include <functional>

namespace spectrum {

struct BlobEndpoint
{
    QString host = QStringLiteral("127.0.0.1");
    quint16 port = 0;
    QString token;
    bool tls = false;   ///< every connection encrypted (blobs://), the server's certificate verified
    QString caFile;     ///< PEM certificates to trust besides the system's (a hospital's own CA)

    /// "blob://HOST:PORT/KEY" or "blobs://…" (TLS) → endpoint and key (empty, or a prefix for listings).
    static Result<std::pair<BlobEndpoint, QString>> fromUrl(const QUrl &url);
};

struct RemoteBlobInfo
{
    QString key;
    qint64 size = 0;
    QString version;     ///< opaque; changes whenever the blob does
    QByteArray sha256;   ///< 32 bytes
    /// The blob's hash tree (hashtree.h: the SHA-256 of every 1 MiB leaf), from stat and open of a server that
    /// keeps one; empty from older servers and in listings.
    QByteArray tree;
    DicomIdentity dicom; ///< what the server indexed, when the blob is a DICOM instance
};

/// Which blobs a listing returns: by key prefix and DICOM identity (empty fields match everything).
struct RemoteQuery
{
    QString keyPrefix;
    QString patientId;
    QString studyInstanceUid;
    QString seriesInstanceUid;
    QString sopInstanceUid;
    int limit = 10000;
};

struct TransferOptions
{
    /// Data connections (1 … the server's maximum), or 0: adaptive — two on a LAN, four on a path whose round
    /// trip is 2 ms or more, doubled every few round trips while the total rate grows with them, up to maxStreams
    /// (pulls; pushes use 4).
    int streams = 0;
    int maxStreams = 16;
    qint64 chunkSize = 4 << 20;             ///< bytes asked for by one READ (pull) or sent between ACKs (push)
    int pipelineDepth = 2;                  ///< requests outstanding per connection, to hide the round trip
    int timeoutMs = 30000;                  ///< a connection that moves no byte this long has failed
    int maxReconnects = 8;                  ///< data connections re-opened after failures, in all
    int socketBufferBytes = 0;              ///< SO_RCVBUF / SO_SNDBUF; 0: the system's auto-tuning
    /// Whole-blob pulls: check every byte against the server's digests. With the server's hash tree (hashTree),
    /// each 1 MiB leaf is hashed on the pool as it lands and checked before it is reported (dataAvailable; a
    /// resumable sink records frames as they pass their XXH3, and kept bytes are hashed when resumed), so the
    /// first leaf that differs fails the pull; from a server without one, the whole
    /// blob's SHA-256 is checked at the end. Off, only the per-frame XXH3 checks remain (they catch transport
    /// damage, not a forged or rotten blob). SHA-256 costs ~0.7 CPU-seconds per GiB with the CPU's SHA instructions.
    bool verifySha256 = true;
    /// Ask the server for its hash tree (the hello's feature "tree"); off, it is verified as by servers that
    /// keep none (the whole blob's SHA-256).
    bool hashTree = true;
};

struct PullResult
{
    RemoteBlobInfo blob;
    qint64 begin = 0;              ///< the range received: [begin, end)
    qint64 end = 0;
    qint64 bytesReceived = 0;      ///< payload bytes off the wire, refetches included
    int framesRefetched = 0;       ///< frames whose CRC failed, or that a dropped connection lost, fetched again
    int streams = 0;               ///< data connections used (at the most, at once)
    int reconnects = 0;            ///< data or control connections re-opened after failures
    int restarts = 0;              ///< times the blob changed on the server mid-transfer and was fetched anew
    int endgameRequests = 0;       ///< requests of stalled connections asked for again on idle ones at the end
    qint64 resumedBytes = 0;       ///< already in the destination from an interrupted attempt: not fetched
    qint64 bytesDuplicated = 0;    ///< bytes those repeated requests asked for (part of bytesReceived, at most)
    bool verified = false;         ///< every byte matched the server's digests (only for a whole-blob pull)
    bool verifiedByTree = false;   ///< … leaf by leaf against its hash tree (else against its whole-blob SHA-256)
    double seconds = 0;
};

class BlobClient : public QObject
{
    Q_OBJECT
public:
    explicit BlobClient(BlobEndpoint endpoint, QObject *parent = nullptr);

    const BlobEndpoint &endpoint() const { return m_endpoint; }
    TransferOptions defaults() const { return m_defaults; }
    void setDefaults(const TransferOptions &options) { m_defaults = options; }

    ResultJob<RemoteBlobInfo> *stat(const QString &key);
    ResultJob<QList<RemoteBlobInfo>> *list(const QString &prefix, int limit = 10000);
    ResultJob<QList<RemoteBlobInfo>> *list(const RemoteQuery &query);
    ResultJob<Done> *remove(const QString &key);

    /// Called once the blob's size is known; returns where [range begin, end) goes: a sink of exactly
    /// end − begin bytes, owned by the caller and alive until the job finishes.
    using SinkFactory = std::function<Result<ByteSink *>(const RemoteBlobInfo &blob, qint64 begin, qint64 end)>;

    /// Pulls `range` of `key`. dataAvailable(0, n) reports the contiguous prefix of the range received and
    /// checked so far; progress() counts bytes of the range.
    ResultJob<PullResult> *pull(const QString &key, SinkFactory sink, ByteRange range = ByteRange::all());
    ResultJob<PullResult> *pull(const QString &key, SinkFactory sink, ByteRange range, const TransferOptions &options);

    /// Pushes `data` as `key`; finishes only after the server committed it durably and checked its SHA-256.
    ResultJob<RemoteBlobInfo> *push(const QString &key, const ByteView &data);
    ResultJob<RemoteBlobInfo> *push(const QString &key, const ByteView &data, const TransferOptions &options);

private:
    BlobEndpoint m_endpoint;
    TransferOptions m_defaults;
};

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::RemoteBlobInfo)
