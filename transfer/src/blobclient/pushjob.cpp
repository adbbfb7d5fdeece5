// SPDX-License-Identifier: Apache-2.0
// The blob client's push: a blob sent as DATA frames over several data streams, each acknowledged by the server
// (checked there), a damaged or lost frame sent again, then committed by the server as one new version.

#include "blobclient/transferjob.h"

#include "spectrum/core/threadpools.h"
#include "spectrum/transfer/sha256.h"

#include <QFuture>
#include <QtConcurrent/QtConcurrentRun>

namespace spectrum::blobwire {

namespace {

class PushJob : public TransferJob<RemoteBlobInfo>
{
public:
    PushJob(BlobEndpoint ep, QString key, ByteView data, TransferOptions opt)
        : TransferJob(std::move(ep), std::move(key), opt), m_data(std::move(data)) {}

protected:
    void doStart() override
    {
        m_clock.start();
        // The digest is computed on the pool while the bytes are on the wire; commit sends it, and the server
        // checks the blob against it before committing.
        const ByteView data = m_data;
        std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(this);
        m_shaFuture = QtConcurrent::run(computePool(), [this, data, toJob] {
            const QByteArray digest = Sha256::hash(data.data(), data.size());
            Sha256::releaseThreadState();
            toJob->post([this, digest] {
                m_sha = digest;
                if (m_commitWaitsForDigest)
                    commit();
            });
            return digest;
        });
        openControl([this](const QCborMap &) { reserve(); });
    }

    ~PushJob() override { m_shaFuture.waitForFinished(); }

    void reserve()
    {
        m_control->send(QCborMap{{QStringLiteral("t"), QStringLiteral("reserve")}, {QStringLiteral("key"), m_key},
                                 {QStringLiteral("size"), m_data.size()}},
                        [this](const Error &e, const QCborMap &answer) {
            if (e.isError())
                return fail(e.withContext(m_key));
            m_transfer = quint32(answer.value(QStringLiteral("transfer")).toInteger());
            for (qint64 at = 0; at < m_data.size(); at += kMaxDataFrame)
                m_pending.push_back({at, std::min(m_data.size(), at + kMaxDataFrame)});
            setProgress(0, m_data.size());
            if (m_pending.empty())
                return commit();
            const qint64 chunks = (m_data.size() + m_opt.chunkSize - 1) / m_opt.chunkSize;
            const int streams = int(std::min<qint64>(m_adaptive ? 4 : m_opt.streams, chunks));
            for (int i = 0; i < streams; ++i)
                addStream();
        });
    }

    void streamReady(DataStream *s) override { fill(s); }

    void fill(DataStream *s)
    {
        // Unacknowledged bytes per connection stay under pipelineDepth × chunkSize: memory stays bounded.
        qint64 inFlight = 0;
        for (const Range &r : s->outstanding)
            inFlight += r.end - r.begin;
        while (s->attached && !m_pending.empty() && inFlight < m_opt.pipelineDepth * m_opt.chunkSize) {
            const Range r = m_pending.front();
            m_pending.pop_front();
            Header h;
            h.kind = Kind::Data;
            h.transfer = m_transfer;
            h.offset = quint64(r.begin);
            h.length = quint64(r.end - r.begin);
            h.checksum = checksum(m_data.data() + r.begin, r.end - r.begin);
            s->socket->write(encodeHeader(h));
            s->socket->write(m_data.data() + r.begin, r.end - r.begin);
            s->outstanding.push_back(r);
            inFlight += r.end - r.begin;
        }
        if (s->outstanding.empty())
            s->idle->stop();
        else if (!s->idle->isActive())
            s->idle->start(m_opt.timeoutMs);
    }

    void streamReadable(DataStream *s) override
    {
        while (!isFinished() && s->socket->bytesAvailable() >= kHeaderSize) {
            char raw[kHeaderSize];
            s->socket->read(raw, kHeaderSize);
            Result<Header> h = decodeHeader(raw);
            if (!h.isOk())
                return streamFailed(s, h.error());
            const Header &a = h.value();
            if (a.kind == Kind::Error)
                return streamFailed(s, Error(ErrorCode::Protocol, QStringLiteral("the server refused data (status %1)").arg(a.status)));
            if (a.kind != Kind::Ack || s->outstanding.empty() || qint64(a.offset) != s->outstanding.front().begin)
                return streamFailed(s, Error(ErrorCode::Protocol, QStringLiteral("unexpected acknowledgement")));
            const Range r = s->outstanding.front();
            s->outstanding.pop_front();
            if (a.status == kAckDiskFull || a.status == kAckIoError) {
                return fail(Error(a.status == kAckDiskFull ? ErrorCode::DiskFull : ErrorCode::Io,
                                  QStringLiteral("the server could not store '%1': %2")
                                      .arg(m_key, a.status == kAckDiskFull ? QStringLiteral("its disk is full") : QStringLiteral("write error"))));
            }
            if (a.status != kAckOk) {
                ++m_refetched;
                m_pending.push_front(r);  // the server saw a damaged frame: send it again
            } else {
                m_acked += r.end - r.begin;
                setProgress(m_acked, m_data.size());
            }
            fill(s);
        }
        if (!isFinished() && m_acked == m_data.size() && !m_committing)
            commit();
    }

    void requeue(DataStream *s) override
    {
        for (auto it = s->outstanding.rbegin(); it != s->outstanding.rend(); ++it)
            m_pending.push_front(*it);
        s->outstanding.clear();
        for (auto &other : m_streams) {
            if (other.get() != s)
                fill(other.get());
        }
    }

    void commit()
    {
        if (m_sha.isEmpty()) {  // every byte is acknowledged, the digest is not ready yet
            m_commitWaitsForDigest = true;
            return;
        }
        m_commitWaitsForDigest = false;
        m_committing = true;
        m_streams.clear();
        m_control->send(QCborMap{{QStringLiteral("t"), QStringLiteral("commit")}, {QStringLiteral("transfer"), qint64(m_transfer)},
                                 {QStringLiteral("sha256"), m_sha}},
                        [this](const Error &e, const QCborMap &answer) {
            if (e.isError())
                return fail(e.withContext(m_key));
            RemoteBlobInfo info = infoFrom(m_key, answer);
            if (info.sha256 != m_sha || info.size != m_data.size())
                return fail(Error(ErrorCode::Corrupt, QStringLiteral("the server committed '%1' with a different digest").arg(m_key)));
            shutdown();
            finishWith(info);
        });
    }

private:
    ByteView m_data;
    QByteArray m_sha;
    QFuture<QByteArray> m_shaFuture;
    bool m_commitWaitsForDigest = false;
    quint32 m_transfer = 0;
    std::deque<Range> m_pending;
    qint64 m_acked = 0;
    int m_refetched = 0;
    bool m_committing = false;
};

} // namespace

ResultJob<RemoteBlobInfo> *makePushJob(BlobEndpoint ep, QString key, ByteView data, TransferOptions opt)
{
    return new PushJob(std::move(ep), std::move(key), std::move(data), opt);
}

} // namespace spectrum::blobwire
