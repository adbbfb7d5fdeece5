// SPDX-License-Identifier: Apache-2.0
#include "httpanswer.h"

#include <algorithm>
#include <cstring>

namespace spectrum {

QByteArray HttpHead::value(const QByteArray &lowerCaseName) const
{
    for (const auto &[name, v] : fields)
        if (name == lowerCaseName)
            return v;
    return {};
}

namespace {

constexpr qint64 kMaxHeaderBytes = 64 * 1024;
constexpr qint64 kMaxChunkLine = 4096;

/// The body's framing (RFC 9112 section 6): a length, chunks, or everything until the connection closes.
class Body
{
public:
    enum class Framing { None, Length, Chunked, UntilClose };

    Body(Framing framing, qint64 length, HttpBodyConsumer &consumer) : m_framing(framing), m_left(length), m_consumer(consumer) {}

    bool isComplete() const { return m_framing == Framing::None || (m_framing == Framing::Length && m_left == 0) || m_state == State::Done; }
    /// How many bytes may now be read straight into the consumer's memory (0: the next bytes are framing).
    qint64 dataWanted() const
    {
        switch (m_framing) {
        case Framing::None: return 0;
        case Framing::Length: return m_left;
        case Framing::UntilClose: return qint64(1) << 40;
        case Framing::Chunked: return m_state == State::Data ? m_left : 0;
        }
        return 0;
    }
    Error tookDirect(qint64 n)
    {
        if (m_framing != Framing::UntilClose) {
            m_left -= n;
            if (m_framing == Framing::Chunked && m_left == 0)
                m_state = State::DataEnd;
        }
        return m_consumer.tookDirect(n);
    }

    /// Bytes as they came off the socket.
    Error take(const char *data, qint64 n)
    {
        while (n > 0 && !isComplete()) {
            if (const qint64 wanted = dataWanted(); wanted > 0) {
                const qint64 k = std::min(wanted, n);
                if (m_framing != Framing::UntilClose) {
                    m_left -= k;
                    if (m_framing == Framing::Chunked && m_left == 0)
                        m_state = State::DataEnd;
                }
                if (Error e = m_consumer.feed(data, k); e.isError())
                    return e;
                data += k;
                n -= k;
                continue;
            }
            // Chunk framing, a line at a time: "SIZE[;ext]" CRLF, the data's CRLF, trailer lines, an empty line.
            const char *nl = static_cast<const char *>(std::memchr(data, '\n', size_t(n)));
            const qint64 k = nl ? nl - data + 1 : n;
            m_line.append(data, k);
            data += k;
            n -= k;
            if (m_line.size() > kMaxChunkLine)
                return Error(ErrorCode::Network, QStringLiteral("a chunk header longer than %1 bytes").arg(kMaxChunkLine));
            if (!nl)
                continue;
            const QByteArray line = m_line.trimmed();
            m_line.clear();
            if (Error e = chunkLine(line); e.isError())
                return e;
        }
        if (n > 0 && m_framing != Framing::UntilClose)
            return Error(ErrorCode::Network, QStringLiteral("%1 bytes after the end of the answer").arg(n));
        return Error();
    }

    /// The connection closed.
    Error closed(qint64 received)
    {
        if (m_framing == Framing::UntilClose)
            m_state = State::Done;
        if (!isComplete())
            return Error(ErrorCode::Network, QStringLiteral("the answer broke off after %1 bytes").arg(received));
        return Error();
    }

private:
    enum class State { Size, Data, DataEnd, Trailer, Done };

    Error chunkLine(const QByteArray &line)
    {
        switch (m_state) {
        case State::Size: {
            // 1*HEXDIG, then extensions after ';' (RFC 9112 section 7.1): no sign, no "0x", no more than fits.
            const QByteArray digits = line.left(line.indexOf(';') < 0 ? line.size() : line.indexOf(';')).trimmed();
            const bool hex = !digits.isEmpty() && digits.size() <= 15 && std::all_of(digits.cbegin(), digits.cend(), [](char c) {
                return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
            });
            bool ok = false;
            const qint64 size = hex ? digits.toLongLong(&ok, 16) : -1;
            if (!ok || size < 0)
                return Error(ErrorCode::Network, QStringLiteral("a broken chunk size in the answer"));
            m_left = size;
            m_state = size == 0 ? State::Trailer : State::Data;
            return Error();
        }
        case State::DataEnd:
            if (!line.isEmpty())
                return Error(ErrorCode::Network, QStringLiteral("a chunk longer than its size"));
            m_state = State::Size;
            return Error();
        case State::Trailer:
            if (line.isEmpty())
                m_state = State::Done;
            return Error();
        case State::Data:
        case State::Done:
            break;
        }
        return Error();
    }

    Framing m_framing;
    qint64 m_left;
    HttpBodyConsumer &m_consumer;
    State m_state = State::Size;
    QByteArray m_line;
};

Result<HttpHead> parseHead(const QByteArray &bytes)
{
    const QList<QByteArray> lines = bytes.split('\n');
    HttpHead head;
    // "HTTP/1.x SP 3DIGIT SP reason" (RFC 9112 section 4)
    const QList<QByteArray> status = lines.value(0).trimmed().split(' ');
    const QByteArray code = status.value(1);
    const bool digits = code.size() == 3 && std::all_of(code.cbegin(), code.cend(), [](char c) { return c >= '0' && c <= '9'; });
    head.status = digits ? code.toInt() : 0;
    if ((status.value(0) != "HTTP/1.1" && status.value(0) != "HTTP/1.0") || head.status < 100)
        return Error(ErrorCode::Network, QStringLiteral("not an HTTP answer: %1").arg(QString::fromLatin1(lines.value(0).left(80).trimmed())));
    head.http11 = status.value(0) == "HTTP/1.1";
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray line = lines[i].trimmed();
        const qsizetype colon = line.indexOf(':');
        if (colon > 0)
            head.fields.append({line.left(colon).trimmed().toLower(), line.mid(colon + 1).trimmed()});
    }
    return head;
}

} // namespace

HttpAnswerEnd readHttpAnswer(HttpAnswerSource &source, const QByteArray &method, const QString &peer, HttpBodyConsumer &consumer, const HttpCancel *cancel)
{
    const auto failed = [](const Error &e) { return HttpAnswerEnd{e, false, false}; };
    // The head, then whatever of the body came with it. Interim answers (1xx: "100 Continue", "103 Early Hints")
    // come before the final one and are passed over.
    QByteArray answer;
    qsizetype headEnd = -1;
    char chunk[64 * 1024];
    Result<HttpHead> parsed = Error(ErrorCode::Network, QStringLiteral("no answer yet"));
    for (;;) {
        headEnd = answer.indexOf("\r\n\r\n");
        if (headEnd >= 0) {
            parsed = parseHead(answer.left(headEnd));
            if (!parsed.isOk())
                return failed(parsed.error());
            if (parsed.value().status == 101)  // we never ask to switch protocols
                return failed(Error(ErrorCode::Network, QStringLiteral("%1 switched protocols, which was not asked for").arg(peer)));
            if (parsed.value().status >= 200)
                break;
            answer.remove(0, headEnd + 4);
            continue;
        }
        const Result<qint64> n = source.receive(chunk, sizeof chunk, false);
        if (!n.isOk())
            return HttpAnswerEnd{n.error(), answer.isEmpty(), false};
        if (n.value() == 0) {
            return HttpAnswerEnd{Error(ErrorCode::Network, QStringLiteral("%1 closed the connection without an answer").arg(peer)), answer.isEmpty(), false};
        }
        answer.append(chunk, n.value());
        if (answer.indexOf("\r\n\r\n") < 0 && answer.size() > kMaxHeaderBytes)
            return failed(Error(ErrorCode::Network, QStringLiteral("the answer's header is longer than %1 bytes").arg(kMaxHeaderBytes)));
    }
    const HttpHead &h = parsed.value();
    if (Error e = consumer.head(h); e.isError())
        return failed(e);

    // The body's framing (RFC 9112 section 6.3). Every Content-Length the answer has must say one length in
    // digits; a transfer coding other than chunked (last) would hand coded bytes on: refused.
    Body::Framing framing = Body::Framing::UntilClose;
    qint64 length = -1;
    bool lengthAndCoding = false;  // both framings named: read by the coding, the connection not kept
    QByteArray codings;
    for (const auto &[name, value] : h.fields) {
        if (name == "transfer-encoding") {
            codings += (codings.isEmpty() ? "" : ",") + value.toLower();
        } else if (name == "content-length") {
            for (const QByteArray &one : value.split(',')) {
                const QByteArray digits = one.trimmed();
                bool ok = !digits.isEmpty() && digits.size() <= 18
                          && std::all_of(digits.cbegin(), digits.cend(), [](char c) { return c >= '0' && c <= '9'; });
                const qint64 n = ok ? digits.toLongLong(&ok) : -1;
                if (!ok || (length >= 0 && n != length))
                    return failed(Error(ErrorCode::Network, QStringLiteral("a broken or contradictory Content-Length in the answer")));
                length = n;
            }
        }
    }
    if (method == "HEAD" || h.status == 204 || h.status == 304 || h.status < 200) {
        framing = Body::Framing::None;
    } else if (!codings.isEmpty()) {
        QList<QByteArray> named = codings.split(',');
        for (QByteArray &c : named)
            c = c.trimmed();
        named.removeAll(QByteArray());
        if (named != QList<QByteArray>{"chunked"})
            return failed(Error(ErrorCode::Network, QStringLiteral("the answer comes in a transfer coding this client does not read (%1)")
                                                        .arg(QString::fromLatin1(codings.left(80)))));
        framing = Body::Framing::Chunked;
        lengthAndCoding = length >= 0;
    } else if (length >= 0) {
        framing = Body::Framing::Length;
    }
    if (length < 0)
        length = 0;
    Body body(framing, length, consumer);
    qint64 received = answer.size() - headEnd - 4;
    if (Error e = body.take(answer.constData() + headEnd + 4, received); e.isError())
        return failed(e);
    answer = QByteArray();

    while (!body.isComplete()) {
        if (cancel && cancel->isCancelled())
            return failed(Error(ErrorCode::Cancelled, QStringLiteral("cancelled")));
        qint64 capacity = 0;
        const qint64 wanted = body.dataWanted();
        char *direct = wanted > 0 ? consumer.directBuffer(wanted, &capacity) : nullptr;
        if (direct && capacity > 0) {
            const Result<qint64> n = source.receive(direct, std::min(capacity, wanted), true);
            if (!n.isOk())
                return failed(n.error());
            if (Error e = n.value() > 0 ? body.tookDirect(n.value()) : consumer.tookDirect(0); e.isError())
                return failed(e);
            received += n.value();
            if (n.value() == 0) {
                if (Error e = body.closed(received); e.isError())
                    return failed(e);
            }
            continue;
        }
        const Result<qint64> n = source.receive(chunk, sizeof chunk, false);
        if (!n.isOk())
            return failed(n.error());
        received += n.value();
        if (Error e = n.value() > 0 ? body.take(chunk, n.value()) : body.closed(received); e.isError())
            return failed(e);
    }
    // Fit for another exchange when the answer ended by its framing and the peer did not ask to close (HTTP/1.0:
    // asked to keep it).
    const QByteArray connection = h.value("connection").toLower();
    const bool kept = h.http11 ? !connection.contains("close") : connection.contains("keep-alive");
    const bool reusable = framing != Body::Framing::UntilClose && !lengthAndCoding && kept && h.status >= 200;
    Error end = consumer.end();
    return HttpAnswerEnd{end, false, reusable && !end.isError()};
}

} // namespace spectrum
