// SPDX-License-Identifier: Apache-2.0
// The blob client's pull: a blob (or a range of it) over several data streams, each with requests in flight;
// resumed where an earlier attempt stopped, re-fetched frame by frame when a checksum fails, reconnected when the
// server goes away, its last requests asked for twice when a stream stalls (endgame). Every leaf of the server's
// hash tree is hashed on the pool as soon as its bytes are here and checked before anyone hears of them; from a
// server that keeps no tree, the whole blob's SHA-256 is computed as the received prefix grows.

#include "blobclient/pullchecks.h"
#include "blobclient/streamadaptation.h"
#include "blobclient/transferjob.h"

#include "spectrum/core/threadpools.h"
#include "spectrum/transfer/hashtree.h"

#include <QPointer>

#include <cstring>
#include <optional>
#include <set>

namespace spectrum::blobwire {

namespace {

class PullJob : public TransferJob<PullResult>
{
public:
    PullJob(BlobEndpoint ep, QString key, BlobClient::SinkFactory factory, ByteRange range, TransferOptions opt)
        : TransferJob(std::move(ep), std::move(key), opt), m_factory(std::move(factory)), m_range(range)
    {
        m_checks.onLeaf = [this](qint64 leaf, bool matched) {
            leafChecked(leaf, matched);
            return !isFinished();
        };
        m_checks.onHashed = [this] {
            hashAhead();
            maybeFinish();
        };
    }

protected:
    void doStart() override
    {
        m_clock.start();
        openControl([this](const QCborMap &) {
            const qint64 sent = m_clock.nsecsElapsed();
            const double helloMs = sent / 1e6 / 2;  // the TCP handshake and the hello: two round trips
            m_control->send(QCborMap{{QStringLiteral("t"), QStringLiteral("open")}, {QStringLiteral("key"), m_key}},
                            [this, sent, helloMs](const Error &e, const QCborMap &answer) {
                if (e.isError())
                    return fail(e.withContext(m_key));
                // The path's round trip: the open's includes the server's time to open (a first open may hash the
                // blob), the hello's the connection's set-up (TLS: more round trips). The smaller says more.
                m_roundTripMs = std::min(helloMs, (m_clock.nsecsElapsed() - sent) / 1e6);
                opened(answer);
            });
        });
    }

    /// The server went away: reconnect, open the blob again, and fetch only what is still missing — unless
    /// the blob changed meanwhile, in which case everything starts over (never splice two versions).
    void controlLost(const Error &e) override
    {
        if (m_transfer == 0 || m_reconnectsLeft <= 0)
            return TransferJob::controlLost(e);
        --m_reconnectsLeft;
        ++m_reconnects;
        qCInfo(lcTransfer) << "lost the session for" << m_key << "(" << e.toString() << "); reconnecting";
        m_adaptation.stop();  // the count reached so far is kept
        m_transfer = 0;      // until the blob is open again: no stream may ask for the old handle
        for (auto &s : m_streams)
            requeueOnly(s.get());
        m_streams.clear();
        m_control->m_lost = nullptr;
        m_control->deleteLater();
        m_control = nullptr;
        QTimer::singleShot(backoffMs(), this, [this] {
            if (isFinished())
                return;
            openControl([this](const QCborMap &) {
                m_control->send(QCborMap{{QStringLiteral("t"), QStringLiteral("open")}, {QStringLiteral("key"), m_key}},
                                [this](const Error &e, const QCborMap &answer) {
                    if (e.code() == ErrorCode::Network || e.code() == ErrorCode::Timeout)
                        return controlLost(e);
                    if (e.isError())
                        return fail(e.withContext(m_key));
                    reopened(answer);
                });
            }, [this](const Error &e) { controlLost(e); });
        });
    }

    void reopened(const QCborMap &answer)
    {
        const RemoteBlobInfo now = infoFrom(m_key, answer);
        m_transfer = quint32(answer.value(QStringLiteral("transfer")).toInteger());
        if (now.version != m_result.blob.version || now.size != m_result.blob.size || now.sha256 != m_result.blob.sha256) {
            qCInfo(lcTransfer) << m_key << "changed on the server; starting over";
            if (now.size != m_result.blob.size)
                return fail(Error(ErrorCode::Corrupt, QStringLiteral("'%1' changed size on the server during the transfer").arg(m_key)));
            m_checks.restart(now.tree);
            m_result.blob = now;
            m_done.clear();
            if (m_checkTree && !useTree(now))
                return fail(Error(ErrorCode::Protocol, QStringLiteral("'%1' changed on the server and came back without a hash tree").arg(m_key)));
            m_announced = m_result.begin;
            m_leafRefetched.clear();
            m_pending.clear();
            for (qint64 at = m_result.begin; at < m_result.end; at += m_opt.chunkSize)
                m_pending.push_back({at, std::min(m_result.end, at + m_opt.chunkSize)});
            ++m_result.restarts;
        }
        const int wanted = m_adaptive ? std::max(2, m_result.streams) : m_opt.streams;
        const int streams = int(std::min<qint64>(wanted, std::max<qint64>(1, qint64(m_pending.size()))));
        for (int i = 0; i < streams; ++i)
            addStream();
    }

    void opened(const QCborMap &answer)
    {
        m_result.blob = infoFrom(m_key, answer);
        m_transfer = quint32(answer.value(QStringLiteral("transfer")).toInteger());
        if (Error e = m_range.resolve(m_result.blob.size, &m_result.begin, &m_result.end); e.isError())
            return fail(e.withContext(m_key));
        Result<ByteSink *> sink = m_factory(m_result.blob, m_result.begin, m_result.end);
        if (!sink.isOk())
            return fail(sink.error());
        m_sink = sink.value();
        const qint64 length = m_result.end - m_result.begin;
        if (!m_sink || m_sink->size() != length)
            return fail(Error(ErrorCode::InvalidArgument, QStringLiteral("the destination does not hold %1 bytes").arg(length)));
        m_dest = m_sink->data();
        m_inPlace = m_sink->receivesInPlace();
        if (!m_dest && length > 0)
            return fail(Error(ErrorCode::InvalidArgument, QStringLiteral("the destination of %1 bytes has no memory to read back").arg(length)));
        const bool whole = m_result.begin == 0 && m_result.end == m_result.blob.size && m_opt.verifySha256;
        if (!m_result.blob.tree.isEmpty() && !hashtree::fits(m_result.blob.tree, m_result.blob.size))
            return fail(Error(ErrorCode::Protocol, QStringLiteral("the server's hash tree of '%1' does not fit its %2 bytes").arg(m_key).arg(m_result.blob.size)));
        m_announced = m_result.begin;
        m_checkTree = whole && m_opt.hashTree && useTree(m_result.blob);
        m_checkSha = whole && !m_checkTree;
        if (m_checkTree)
            m_checks.checkTree(m_result.blob.tree, m_result.blob.size, m_dest);
        else if (m_checkSha)
            m_checks.checkSha256(m_dest);
        // What an earlier attempt left in the destination is not fetched again.
        for (const auto &[b, e] : m_sink->completedRanges())
            m_done.add(m_result.begin + std::clamp<qint64>(b, 0, length), m_result.begin + std::clamp<qint64>(e, 0, length));
        m_result.resumedBytes = m_done.covered();
        // Small blobs get smaller chunks, so that every stream has work: at least two rounds of requests each.
        const qint64 perRound = qint64(m_opt.streams) * m_opt.pipelineDepth * 2;
        const qint64 missing = length - m_result.resumedBytes;
        m_opt.chunkSize = std::clamp<qint64>((missing + perRound - 1) / perRound, 64 * 1024, m_opt.chunkSize);
        for (qint64 at = m_result.begin; at < m_result.end; at += m_opt.chunkSize) {
            for (const Range &gap : m_done.gaps(at, std::min(m_result.end, at + m_opt.chunkSize)))
                m_pending.push_back(gap);
        }
        if (m_result.resumedBytes > 0) {
            qCInfo(lcTransfer) << "resuming" << m_key << "with" << m_result.resumedBytes << "of" << length << "bytes already here";
            // Bytes kept from before are checked like any others: a leaf damaged meanwhile is fetched again.
            const qint64 prefix = m_done.prefixEnd(m_result.begin);
            if (m_checkTree)
                m_checks.leavesArrived(m_result.begin, m_result.end, m_done);
            else if (prefix > m_result.begin) {
                m_announced = prefix;
                emitDataAvailable(0, prefix - m_result.begin);
            }
            hashAhead();
            if (m_pending.empty())
                return maybeFinish();
        }
        setProgress(0, length);
        if (length == 0)
            return maybeFinish();
        const int streams = int(std::min<qint64>(m_adaptive ? StreamSteps::first(m_opt.streams, m_roundTripMs) : m_opt.streams, qint64(m_pending.size())));
        for (int i = 0; i < streams; ++i)
            addStream();
        m_result.streams = streams;
        if (m_adaptive)
            m_adaptation.start(m_opt.streams, m_roundTripMs, int(m_streams.size()));
    }

    void streamReady(DataStream *s) override
    {
        fill(s);
        m_adaptation.attached();
    }

    void sendRead(DataStream *s, const Range &r)
    {
        if (s->outstanding.empty())
            s->nextExpected = r.begin;
        s->outstanding.push_back(r);
        Header h;
        h.kind = Kind::Read;
        h.transfer = m_transfer;
        h.offset = quint64(r.begin);
        h.length = quint64(r.end - r.begin);
        s->socket->write(encodeHeader(h));
    }

    void fill(DataStream *s)
    {
        while (s->attached && int(s->outstanding.size()) < m_opt.pipelineDepth && !m_pending.empty()) {
            const Range r = m_pending.front();
            m_pending.pop_front();
            sendRead(s, r);
        }
        if (s->attached && s->outstanding.empty() && m_pending.empty())
            scheduleEndgame();
        if (s->outstanding.empty())
            s->idle->stop();
        else if (!s->idle->isActive())
            s->idle->start(m_opt.timeoutMs);
    }

    /// Nothing is left to hand out. If a stream that still waits for requests has been silent for a while,
    /// an idle stream asks for the largest of its requests a second time; whichever copy arrives first counts,
    /// the other is read and dropped. A slow or stalled connection then no longer holds back the end of the
    /// transfer, and healthy transfers never fetch anything twice.
    void scheduleEndgame()
    {
        if (!m_endgameTimer) {
            m_endgameTimer = new QTimer(this);
            m_endgameTimer->setSingleShot(true);
            QObject::connect(m_endgameTimer, &QTimer::timeout, this, [this] {
                bool waiting = false;
                for (const auto &s : m_streams) {
                    if (s->attached && s->outstanding.empty())
                        endgame(s.get());
                    waiting = waiting || !s->outstanding.empty();
                }
                if (waiting && !isFinished())
                    m_endgameTimer->start(kEndgameSilenceMs);
            });
        }
        if (!m_endgameTimer->isActive())
            m_endgameTimer->start(kEndgameSilenceMs);
    }

    static constexpr int kEndgameSilenceMs = 250;

    void endgame(DataStream *idle)
    {
        const Range *best = nullptr;
        for (const auto &other : m_streams) {
            if (other.get() == idle || other->quiet.elapsed() < kEndgameSilenceMs)
                continue;
            for (const Range &r : other->outstanding) {
                const bool duplicated = m_duplicated.count(r.begin) > 0;
                if (!duplicated && (!best || r.end - r.begin > best->end - best->begin))
                    best = &r;
            }
        }
        if (!best)
            return;
        m_duplicated.insert(best->begin);
        ++m_result.endgameRequests;
        m_result.bytesDuplicated += best->end - best->begin;
        sendRead(idle, *best);
    }

    void streamReadable(DataStream *s) override
    {
        QSslSocket *sock = s->socket.get();
        while (!isFinished()) {
            if (!s->frames.inFrame()) {
                std::optional<Result<Header>> h = s->frames.nextHeader(sock);
                if (!h)
                    return;
                if (!h->isOk())
                    return streamFailed(s, h->error());
                const Header &f = h->value();
                if (f.kind == Kind::Error)
                    return streamFailed(s, Error(ErrorCode::Protocol, QStringLiteral("the server refused a read (status %1)").arg(f.status)));
                const bool expected = f.kind == Kind::Data && f.transfer == m_transfer && !s->outstanding.empty()
                    && qint64(f.offset) == s->nextExpected && f.length > 0 && qint64(f.length) <= kMaxDataFrame
                    && qint64(f.offset + f.length) <= s->outstanding.front().end;
                if (!expected)
                    return streamFailed(s, Error(ErrorCode::Protocol, QStringLiteral("unexpected data frame [%1, +%2)").arg(f.offset).arg(f.length)));
                // A duplicate of bytes already received and checked goes to scratch memory, never over them
                // (the hash may be reading them right now). A frame none of whose bytes are here lands in place;
                // one that overlaps bytes already here goes through the frame buffer, and only what is still
                // missing is copied from there once it checked.
                const qint64 fb = qint64(f.offset), fe = fb + qint64(f.length);
                s->discarding = m_done.covers(fb, fe);
                s->inPlace = !s->discarding && m_inPlace && m_done.gaps(fb, fe).size() == 1 && m_done.gaps(fb, fe).front().begin == fb
                    && m_done.gaps(fb, fe).front().end == fe;
                if (s->discarding && m_scratch.size() < kMaxDataFrame)
                    m_scratch.resize(kMaxDataFrame);
                if (!s->discarding && !s->inPlace && s->frameBuffer.size() < size_t(kMaxDataFrame))
                    s->frameBuffer.resize(size_t(kMaxDataFrame));
            }
            // Into the destination's memory (or, for a file, the stream's frame buffer): first what the socket
            // object buffered, then straight from the kernel (TLS: only the socket can decrypt).
            const Header &f = s->frames.header();
            char *payload = s->discarding ? m_scratch.data()
                : s->inPlace              ? m_dest + (qint64(f.offset) - m_result.begin)
                                          : s->frameBuffer.data();
            Result<qint64> got = s->frames.receive(sock, payload, !m_endpoint.tls);
            if (!got.isOk())
                return streamFailed(s, got.error());
            if (got.value() <= 0)
                return;
            m_result.bytesReceived += got.value();
            if (s->frames.inFrame())
                return;
            if (!frameDone(s))
                return;  // the stream is gone (its signals' receivers may run anything, even an event loop)
        }
    }

    bool alive(const DataStream *s) const
    {
        for (const auto &x : m_streams) {
            if (x.get() == s)
                return !isFinished();
        }
        return false;
    }

    /// Returns whether `s` still exists afterwards.
    bool frameDone(DataStream *s)
    {
        const Header &frame = s->frames.header();
        const qint64 b = qint64(frame.offset), e = b + qint64(frame.length);
        if (s->discarding) {  // the other copy won
            s->discarding = false;
            // A frame stopped midway (stopWritingOver) may reach past what the other copy brought: that part again.
            for (const Range &gap : m_done.gaps(b, e))
                m_pending.push_front(gap);
            advance(s, e);
            fill(s);
            maybeFinish();
            return alive(s);
        }
        const bool inPlace = s->inPlace;
        s->inPlace = false;
        const char *bytes = inPlace ? m_dest + (b - m_result.begin) : s->frameBuffer.data();
        const bool crcOk = checksum(bytes, e - b) == frame.checksum;
        if (crcOk && !inPlace) {
            // Only what is still missing: another copy may have brought the rest, and its leaf may be being hashed.
            for (const Range &gap : m_done.gaps(b, e)) {
                const char *from = bytes + (gap.begin - b);
                if (m_inPlace) {
                    std::memcpy(m_dest + (gap.begin - m_result.begin), from, size_t(gap.end - gap.begin));
                } else if (Error err = m_sink->writeAt(gap.begin - m_result.begin, from, gap.end - gap.begin); err.isError()) {
                    fail(err.withContext(m_key));  // a full disk: nothing more can land
                    return false;
                }
            }
        }
        if (crcOk)
            stopWritingOver(b, e, s);
        if (!crcOk) {
            ++m_result.framesRefetched;
            m_pending.push_front({b, e});  // only this frame again, before anything else
            qCInfo(lcTransfer) << "checksum mismatch in" << m_key << "at" << b << "- fetching that frame again";
        }
        advance(s, e);
        fill(s);
        if (crcOk && m_checkTree) {
            // Nobody hears of these bytes before their leaf is checked against the tree (leafChecked). A resumable
            // sink records them at once, as it did before trees: a later attempt checks kept bytes against the tree
            // before it uses them (opened()), so what a cut or a kill interrupts is not fetched again.
            m_sink->rangeVerified(b - m_result.begin, e - m_result.begin);
            m_done.add(b, e);
            m_checks.leavesArrived(b, e, m_done);
            QPointer<QObject> self(this);
            setProgress(m_done.covered(), m_result.end - m_result.begin);
            if (!self)
                return false;
        } else {
            if (crcOk) {
                m_sink->rangeVerified(b - m_result.begin, e - m_result.begin);
                m_done.add(b, e);
            }
            // Tell the world last: its slots may re-enter us.
            const qint64 after = m_done.prefixEnd(m_result.begin);
            hashAhead();
            QPointer<QObject> self(this);
            setProgress(m_done.covered(), m_result.end - m_result.begin);
            if (self && after > m_announced) {
                m_announced = after;
                emitDataAvailable(0, after - m_result.begin);
            }
            if (!self)
                return false;
        }
        maybeFinish();
        return alive(s);
    }

    /// The head request of `s` has been received up to `e`.
    void advance(DataStream *s, qint64 e)
    {
        s->nextExpected = e;
        if (e == s->outstanding.front().end) {
            s->outstanding.pop_front();
            if (!s->outstanding.empty())
                s->nextExpected = s->outstanding.front().begin;
        }
    }

    void requeue(DataStream *s) override
    {
        requeueOnly(s);
        for (auto &other : m_streams) {
            if (other.get() != s)
                fill(other.get());
        }
    }

    /// Puts what `s` had asked for and not yet received back at the front of the queue.
    void requeueOnly(DataStream *s)
    {
        bool first = true;
        for (auto it = s->outstanding.rbegin(); it != s->outstanding.rend(); ++it) {
            const bool head = std::next(it) == s->outstanding.rend();
            const Range r{head ? s->nextExpected : it->begin, it->end};
            if (r.begin < r.end && !m_done.covers(r.begin, r.end)) {
                m_pending.push_front(r);
                if (first && head && s->nextExpected > it->begin)
                    ++m_result.framesRefetched;
            }
            first = false;
        }
        s->outstanding.clear();
        s->frames.reset();
    }

    /// Bytes [b, e) are here now (checked by their frame's XXH3). A stream in the middle of a frame it writes in
    /// place over any of them — the stalled copy of a request the endgame asked for again — must not write there
    /// any more: the rest of its frame goes to scratch, and what of it is still missing is asked for again when it
    /// ends. So no byte changes after it was checked, and none while a leaf of it is hashed.
    void stopWritingOver(qint64 b, qint64 e, const DataStream *done)
    {
        for (const auto &s : m_streams) {
            if (s.get() == done || !s->inPlace || !s->frames.inFrame())
                continue;
            const qint64 fb = qint64(s->frames.header().offset), fe = fb + qint64(s->frames.header().length);
            if (fb < e && b < fe) {
                s->inPlace = false;
                s->discarding = true;
                if (m_scratch.size() < kMaxDataFrame)
                    m_scratch.resize(kMaxDataFrame);
            }
        }
    }

    static bool useTree(const RemoteBlobInfo &blob) { return !blob.tree.isEmpty() && hashtree::fits(blob.tree, blob.size); }

    /// A leaf's bytes matched its digest, or did not: then it is fetched once more (bytes kept from an earlier
    /// attempt may have been damaged on this disk), and a second mismatch fails the pull — the server's copy is
    /// damaged or forged, and nothing from that leaf on was handed to anyone.
    void leafChecked(qint64 leaf, bool ok)
    {
        if (isFinished())
            return;
        const qint64 lb = hashtree::leafBegin(leaf), le = hashtree::leafEnd(leaf, m_result.blob.size);
        if (!ok) {
            if (m_leafRefetched.count(leaf)) {
                return fail(Error(ErrorCode::Corrupt, QStringLiteral("bytes %1 to %2 of '%3' do not match the server's hash tree (leaf %4, twice): "
                                                                     "its copy is damaged or not what it says; nothing from byte %1 on was used")
                                                          .arg(lb).arg(le).arg(m_key).arg(leaf)));
            }
            qCInfo(lcTransfer) << "leaf" << leaf << "of" << m_key << "does not match the hash tree; fetching it again";
            m_leafRefetched.insert(leaf);
            ++m_result.framesRefetched;
            m_checks.leafAgain(leaf);
            m_done.remove(lb, le);
            for (qint64 at = le; at > lb;) {  // in pieces the server takes (its maxChunk), first piece first
                const qint64 from = std::max(lb, at - m_opt.chunkSize);
                m_pending.push_front({from, at});
                at = from;
            }
            if (m_streams.empty() && m_control && m_transfer != 0)
                addStream();  // everything was kept from before: no connection was needed until now
            for (auto &s : m_streams)
                fill(s.get());
            return;
        }
        const qint64 before = m_checks.verified().prefixEnd(0);
        m_checks.leafMatched(leaf);
        const qint64 after = m_checks.verified().prefixEnd(0);
        QPointer<QObject> self(this);
        if (after > before)
            emitDataAvailable(0, after);
        if (self)
            maybeFinish();
    }

    /// The whole blob's SHA-256 goes on over the prefix received (a server without a tree).
    void hashAhead()
    {
        if (m_checkSha)
            m_checks.hashAhead(m_done.prefixEnd(0));
    }

    void maybeFinish()
    {
        // Every byte received and checked is enough: duplicates still on the wire are abandoned.
        if (isFinished() || m_done.covered() != m_result.end - m_result.begin)
            return;
        if (m_checkSha && !m_checks.hashedUpTo(m_result.end))
            return;
        if (m_checkTree && m_checks.verified().covered() != m_result.blob.size)
            return;
        if (m_checkTree) {
            m_result.verified = true;
            m_result.verifiedByTree = true;
        }
        if (m_checkSha) {
            if (m_checks.sha256() != m_result.blob.sha256) {
                return fail(Error(ErrorCode::Corrupt, QStringLiteral("'%1' arrived whole but its SHA-256 does not match the server's")
                                                          .arg(m_key)));
            }
            m_result.verified = true;
        }
        if (!m_adaptive)
            m_result.streams = m_opt.streams;
        m_result.streams = std::min(m_result.streams, m_streamsOpened);
        m_result.reconnects = m_reconnects;
        m_result.seconds = m_clock.nsecsElapsed() / 1e9;
        shutdown();
        finishWith(m_result);
    }

    void shutdown() override
    {
        TransferJob::shutdown();
        // A hash step may still read the destination: the caller may free it once we finish. Steps are short.
        m_checks.waitForHashing();
    }
    void doCancel() override { shutdown(); }

    ~PullJob() override { m_checks.waitForHashing(); }

private:
    BlobClient::SinkFactory m_factory;
    ByteRange m_range;
    PullResult m_result;
    quint32 m_transfer = 0;
    ByteSink *m_sink = nullptr;
    char *m_dest = nullptr;
    bool m_inPlace = true;  ///< received straight into m_dest; else through each stream's frame buffer
    bool m_checkSha = false;   ///< the whole blob's SHA-256 (a server without a hash tree)
    bool m_checkTree = false;  ///< leaf by leaf against the server's hash tree
    qint64 m_announced = 0;    ///< the prefix reported so far (without a tree)
    std::set<qint64> m_leafRefetched;
    std::deque<Range> m_pending;
    RangeSet m_done;
    PullChecks m_checks{this};
    std::set<qint64> m_duplicated;  ///< request starts asked for twice in the endgame
    QTimer *m_endgameTimer = nullptr;
    QByteArray m_scratch;           ///< where duplicate frames land
    double m_roundTripMs = 0;        ///< of the open request: the path's round trip (and the server's open)
    /// With --streams auto, once the blob is open: more streams while they bring more.
    StreamAdaptation m_adaptation{this, {[this] { return m_result.bytesReceived; },
                                         [this] { return int(std::count_if(m_streams.begin(), m_streams.end(), [](const auto &s) { return s->attached; })); },
                                         [this] { return isFinished(); },
                                         [this] { return !m_pending.empty() && m_control; },
                                         [this](int n) {
                                             while (int(m_streams.size()) < n)
                                                 addStream();
                                             m_result.streams = std::max(m_result.streams, int(m_streams.size()));
                                         }}};
};

} // namespace

ResultJob<PullResult> *makePullJob(BlobEndpoint ep, QString key, BlobClient::SinkFactory factory, ByteRange range, TransferOptions opt)
{
    return new PullJob(std::move(ep), std::move(key), std::move(factory), range, opt);
}

} // namespace spectrum::blobwire
