// SPDX-License-Identifier: Apache-2.0
#include "spectrum/transfer/multipart.h"

#include <algorithm>
#include <cstring>

namespace spectrum {

namespace {

const char *find(const char *hay, qint64 hayLength, const QByteArray &needle)
{
    if (hayLength < needle.size())
        return nullptr;
    return static_cast<const char *>(::memmem(hay, size_t(hayLength), needle.constData(), size_t(needle.size())));
}

/// RFC 2046: 1 to 70 characters of a restricted set, not ending in a space. Real servers exceed the length
/// (Orthanc 1.10's WADO-RS boundaries have 105 characters), so up to 200 are taken.
bool validBoundary(const QByteArray &b)
{
    if (b.isEmpty() || b.size() > 200 || b.endsWith(' '))
        return false;
    for (const char c : b) {
        const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || std::strchr("'()+_,-./:=? ", c);
        if (!ok)
            return false;
    }
    return true;
}

} // namespace

QByteArray MultipartHeaders::value(const QByteArray &lowerCaseName) const
{
    for (const auto &[name, value] : fields) {
        if (name == lowerCaseName)
            return value;
    }
    return {};
}

Result<QByteArray> MultipartReader::boundaryOf(const QByteArray &contentType)
{
    const QList<QByteArray> params = contentType.split(';');
    if (!params.value(0).trimmed().toLower().startsWith("multipart/"))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("not a multipart body: %1").arg(QString::fromLatin1(contentType)));
    for (int i = 1; i < params.size(); ++i) {
        const QByteArray p = params[i].trimmed();
        const int eq = p.indexOf('=');
        if (eq < 0 || p.left(eq).trimmed().toLower() != "boundary")
            continue;
        QByteArray value = p.mid(eq + 1).trimmed();
        if (value.size() >= 2 && value.startsWith('"') && value.endsWith('"'))
            value = value.mid(1, value.size() - 2);
        if (!validBoundary(value))
            break;
        return value;
    }
    return Error(ErrorCode::InvalidArgument, QStringLiteral("no valid boundary in %1").arg(QString::fromLatin1(contentType)));
}

MultipartReader::MultipartReader(QByteArray boundary, qint64 maxHeaderBytes)
    : m_delimiter("\r\n--" + boundary), m_maxHeaderBytes(maxHeaderBytes)
{
    m_carry = "\r\n";  // so that a body starting with its first delimiter line matches like the others
}

Error MultipartReader::fail(const QString &message)
{
    m_state = State::Failed;
    m_error = Error(ErrorCode::Protocol, message);
    m_carry.clear();
    return m_error;
}

qint64 MultipartReader::bodyBytesWanted() const
{
    return m_state == State::Data && m_remaining > 0 && m_carry.isEmpty() ? m_remaining : 0;
}

Error MultipartReader::takeBody(qint64 length)
{
    if (m_state == State::Failed)
        return m_error;
    if (length < 0 || length > bodyBytesWanted())
        return fail(QStringLiteral("multipart: %1 bytes of part %2 taken where %3 were wanted").arg(length).arg(m_parts + 1).arg(bodyBytesWanted()));
    m_remaining -= length;
    if (m_remaining == 0) {
        m_remaining = -1;
        m_state = State::DelimiterExpected;
    }
    return Error();
}

Error MultipartReader::feed(const char *data, qint64 length)
{
    if (m_state == State::Failed)
        return m_error;
    const qint64 dl = m_delimiter.size();
    if (!m_carry.isEmpty() && length > 0) {
        if (m_state == State::DelimiterExpected) {
            // The part ended exactly here by its length, and its delimiter began in the tail: complete it.
            const qint64 need = std::min(length, dl - qint64(m_carry.size()));
            m_carry.append(data, need);
            data += need;
            length -= need;
            const qint64 used = parse(m_carry.constData(), m_carry.size());
            if (m_state == State::Failed)
                return m_error;
            m_carry.remove(0, used);
            if (!m_carry.isEmpty() || length == 0) {
                if (length > 0)
                    m_carry.append(data, length);
                return m_error;
            }
        } else if (m_state == State::Data && m_remaining < 0 && length >= dl - 1) {
            // Only a delimiter that starts in the carried tail needs the two joined: look at a small window.
            QByteArray window = m_carry;
            window.append(data, dl - 1);
            const char *hit = find(window.constData(), window.size(), m_delimiter);
            const qint64 at = hit ? hit - window.constData() : window.size();
            if (at >= m_carry.size()) {  // none starts in the tail: it is all data
                if (onPartData)
                    onPartData(m_parts, m_carry.constData(), m_carry.size());
                m_carry.clear();
            } else {
                if (at > 0 && onPartData)
                    onPartData(m_parts, m_carry.constData(), at);
                const qint64 used = at + dl - m_carry.size();
                m_carry.clear();
                data += used;
                length -= used;
                if (Error e = partEnded(); e.isError())
                    return e;
            }
        } else {
            m_carry.append(data, length);
            const qint64 used = parse(m_carry.constData(), m_carry.size());
            if (m_state != State::Failed)
                m_carry.remove(0, used);
            return m_error;
        }
    }
    if (length > 0) {
        const qint64 used = parse(data, length);
        if (m_state != State::Failed && used < length)
            m_carry = QByteArray(data + used, length - used);
    }
    return m_error;
}

qint64 MultipartReader::parse(const char *data, qint64 length)
{
    const qint64 dl = m_delimiter.size();
    qint64 at = 0;
    while (at < length && m_state != State::Failed) {
        const char *p = data + at;
        const qint64 n = length - at;
        switch (m_state) {
        case State::Preamble: {
            const char *hit = find(p, n, m_delimiter);
            if (!hit)
                return at + std::max<qint64>(0, n - (dl - 1));  // keep what may be a delimiter's start
            at += (hit - p) + dl;
            m_state = State::AfterDelimiter;
            break;
        }
        case State::AfterDelimiter: {
            if (n < 2)
                return at;
            if (p[0] == '-' && p[1] == '-') {
                m_state = State::Epilogue;
                return length;
            }
            const char *crlf = find(p, n, QByteArrayLiteral("\r\n"));
            if (!crlf)
                return n > 256 ? (fail(QStringLiteral("multipart: no line end after a delimiter")), at) : at;
            for (const char *c = p; c < crlf; ++c) {
                if (*c != ' ' && *c != '\t') {
                    fail(QStringLiteral("multipart: unexpected characters after a delimiter"));
                    return at;
                }
            }
            at += (crlf - p) + 2;
            m_state = State::Headers;
            break;
        }
        case State::Headers: {
            MultipartHeaders headers;
            qint64 headerLength = 0;
            if (n >= 2 && p[0] == '\r' && p[1] == '\n') {
                headerLength = 2;  // no header fields at all
            } else {
                const char *end = find(p, std::min(n, m_maxHeaderBytes + 4), QByteArrayLiteral("\r\n\r\n"));
                if (!end) {
                    if (n >= m_maxHeaderBytes + 4)
                        fail(QStringLiteral("multipart: part %1 has more than %2 bytes of headers").arg(m_parts + 1).arg(m_maxHeaderBytes));
                    return at;
                }
                headerLength = (end - p) + 4;
                for (const QByteArray &line : QByteArray(p, end - p).split('\n')) {
                    const QByteArray l = line.endsWith('\r') ? line.chopped(1) : line;
                    if (l.trimmed().isEmpty())
                        continue;
                    const int colon = l.indexOf(':');
                    if (colon <= 0) {
                        fail(QStringLiteral("multipart: malformed header line in part %1").arg(m_parts + 1));
                        return at;
                    }
                    headers.fields.append({l.left(colon).trimmed().toLower(), l.mid(colon + 1).trimmed()});
                }
            }
            at += headerLength;
            m_state = State::Data;
            bool known = false;
            const qint64 declared = headers.value("content-length").toLongLong(&known);
            m_remaining = known && declared >= 0 ? declared : -1;
            if (onPartBegin)
                onPartBegin(m_parts, headers);
            break;
        }
        case State::Data: {
            if (m_remaining >= 0) {  // by its length: no search
                const qint64 take = std::min(n, m_remaining);
                if (take > 0 && onPartData)
                    onPartData(m_parts, p, take);
                at += take;
                m_remaining -= take;
                if (m_remaining > 0)
                    return at;
                m_remaining = -1;
                m_state = State::DelimiterExpected;
                break;
            }
            const char *hit = find(p, n, m_delimiter);
            const qint64 take = hit ? hit - p : std::max<qint64>(0, n - (dl - 1));
            if (take > 0 && onPartData)
                onPartData(m_parts, p, take);
            at += take;
            if (!hit)
                return at;
            at += dl;
            if (partEnded().isError())
                return at;
            break;
        }
        case State::DelimiterExpected: {
            const qint64 k = std::min(n, dl);
            if (std::memcmp(p, m_delimiter.constData(), size_t(k)) != 0) {
                fail(QStringLiteral("multipart: part %1 does not end where its Content-Length says").arg(m_parts + 1));
                return at;
            }
            if (k < dl)
                return at;  // the rest of the delimiter is still on its way
            at += dl;
            if (partEnded().isError())
                return at;
            break;
        }
        case State::Epilogue:
            return length;
        case State::Failed:
            return at;
        }
    }
    return at;
}

Error MultipartReader::partEnded()
{
    const int index = m_parts++;
    m_state = State::AfterDelimiter;
    if (onPartEnd) {
        if (Error e = onPartEnd(index); e.isError()) {
            m_state = State::Failed;
            m_error = e;
            return e;
        }
    }
    return Error();
}

Error MultipartReader::finish()
{
    if (m_state == State::Failed)
        return m_error;
    if (m_state == State::Epilogue)
        return Error();
    if (m_state == State::Preamble)
        return fail(QStringLiteral("multipart: the body has no part"));
    return fail(QStringLiteral("multipart: the body ended before its closing delimiter (in part %1)").arg(m_parts + 1));
}

} // namespace spectrum
