// SPDX-License-Identifier: Apache-2.0
#include "spectrum/transfer/blobprotocol.h"

#include <QCborValue>
#include <QAbstractSocket>
#include <QIODevice>
#include <QtEndian>

#include <xxhash.h>

#include <cerrno>
#include <cstring>

#include <sys/socket.h>

namespace spectrum::blobproto {

QByteArray preface(Channel channel)
{
    QByteArray p("SPBS", 4);
    p.append(char(kVersion));
    p.append(char(channel));
    p.append(2, '\0');
    return p;
}

Result<Channel> parsePreface(const QByteArray &bytes)
{
    if (bytes.size() != kPrefaceSize || !bytes.startsWith("SPBS") || bytes.at(6) != 0 || bytes.at(7) != 0)
        return Error(ErrorCode::Protocol, QStringLiteral("not a Spectrum blob protocol connection"));
    if (quint8(bytes.at(4)) != kVersion)
        return Error(ErrorCode::Unsupported, QStringLiteral("protocol version %1, this server speaks %2").arg(quint8(bytes.at(4))).arg(kVersion));
    const quint8 channel = quint8(bytes.at(5));
    if (channel != quint8(Channel::Control) && channel != quint8(Channel::Data))
        return Error(ErrorCode::Protocol, QStringLiteral("unknown channel kind %1").arg(channel));
    return Channel(channel);
}

QByteArray encodeHeader(const Header &h)
{
    QByteArray out(kHeaderSize, '\0');
    uchar *p = reinterpret_cast<uchar *>(out.data());
    p[0] = uchar(h.kind);
    qToBigEndian<quint32>(h.transfer, p + 4);
    qToBigEndian<quint64>(h.offset, p + 8);
    qToBigEndian<quint64>(h.length, p + 16);
    if (h.kind == Kind::Data)
        qToBigEndian<quint64>(h.checksum, p + 24);
    else
        qToBigEndian<quint32>(h.status, p + 24);
    return out;
}

Result<Header> decodeHeader(const char *bytes)
{
    const uchar *p = reinterpret_cast<const uchar *>(bytes);
    if (p[0] < quint8(Kind::Read) || p[0] > quint8(Kind::Error))
        return Error(ErrorCode::Protocol, QStringLiteral("unknown data frame kind %1").arg(p[0]));
    const bool data = p[0] == quint8(Kind::Data);
    if (p[1] || p[2] || p[3] || (!data && (p[28] || p[29] || p[30] || p[31])))
        return Error(ErrorCode::Protocol, QStringLiteral("nonzero reserved bytes in a data frame header"));
    Header h;
    h.kind = Kind(p[0]);
    h.transfer = qFromBigEndian<quint32>(p + 4);
    h.offset = qFromBigEndian<quint64>(p + 8);
    h.length = qFromBigEndian<quint64>(p + 16);
    if (data)
        h.checksum = qFromBigEndian<quint64>(p + 24);
    else
        h.status = qFromBigEndian<quint32>(p + 24);
    if (h.offset > quint64(std::numeric_limits<qint64>::max()) || h.length > quint64(std::numeric_limits<qint64>::max())
        || h.offset + h.length < h.offset)
        return Error(ErrorCode::Protocol, QStringLiteral("data frame range overflows"));
    return h;
}

QByteArray encodeControl(const QCborMap &message)
{
    const QByteArray body = message.toCborValue().toCbor();
    QByteArray out(4, '\0');
    qToBigEndian<quint32>(quint32(body.size()), reinterpret_cast<uchar *>(out.data()));
    return out + body;
}

std::optional<Result<QCborMap>> ControlReader::next(QIODevice *device)
{
    if (m_expected < 0) {
        if (device->bytesAvailable() < 4)
            return std::nullopt;
        uchar len[4];
        device->read(reinterpret_cast<char *>(len), 4);
        m_expected = qFromBigEndian<quint32>(len);
        if (m_expected < 1 || m_expected > kMaxControlFrame) {
            return Result<QCborMap>(Error(ErrorCode::Protocol, QStringLiteral("control frame of %1 bytes (1 … %2 allowed)")
                                                                   .arg(m_expected).arg(kMaxControlFrame)));
        }
        m_buffer.clear();
        m_buffer.reserve(m_expected);
    }
    m_buffer += device->read(m_expected - m_buffer.size());
    if (m_buffer.size() < m_expected)
        return std::nullopt;
    m_expected = -1;
    QCborParserError err;
    const QCborValue value = QCborValue::fromCbor(m_buffer, &err);
    m_buffer.clear();
    if (err.error != QCborError::NoError || !value.isMap())
        return Result<QCborMap>(Error(ErrorCode::Protocol, QStringLiteral("control frame is not a CBOR map")));
    return Result<QCborMap>(value.toMap());
}

std::optional<Result<Header>> FrameReader::nextHeader(QAbstractSocket *socket)
{
    if (m_inFrame || socket->bytesAvailable() < kHeaderSize)
        return std::nullopt;
    char raw[kHeaderSize];
    if (socket->read(raw, kHeaderSize) != kHeaderSize)
        return Result<Header>(Error(ErrorCode::Network, QStringLiteral("the connection broke in a frame header")));
    Result<Header> h = decodeHeader(raw);
    if (h.isOk()) {
        m_header = h.value();
        m_received = 0;
        m_inFrame = m_header.kind == Kind::Data && m_header.length > 0;
    }
    return h;
}

Result<qint64> FrameReader::receive(QAbstractSocket *socket, char *payload, bool direct)
{
    if (!m_inFrame)
        return qint64(0);
    char *to = payload + m_received;
    const qint64 want = qint64(m_header.length) - m_received;
    qint64 got = 0;
    if (socket->bytesAvailable() > 0 || !direct) {
        got = std::max<qint64>(0, socket->read(to, want));
    } else {
        Result<qint64> r = receiveDirect(socket, to, want);
        if (!r.isOk())
            return r.error();
        got = r.value();
    }
    m_received += got;
    if (m_received == qint64(m_header.length))
        m_inFrame = false;
    return got;
}

Result<qint64> receiveDirect(QAbstractSocket *socket, char *to, qint64 length)
{
    const qintptr fd = socket->socketDescriptor();
    if (fd < 0)
        return Error(ErrorCode::Network, QStringLiteral("the connection is closed"));
    while (true) {
        const ssize_t n = ::recv(int(fd), to, size_t(length), MSG_DONTWAIT);
        if (n > 0)
            return qint64(n);
        if (n == 0)
            return Error(ErrorCode::Network, QStringLiteral("the peer closed the connection"));
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return qint64(0);
        return Error(ErrorCode::Network, QStringLiteral("receive failed: %1").arg(QString::fromLocal8Bit(std::strerror(errno))));
    }
}

Result<qint64> sendDirect(QAbstractSocket *socket, const char *from, qint64 length)
{
    const qintptr fd = socket->socketDescriptor();
    if (fd < 0)
        return Error(ErrorCode::Network, QStringLiteral("the connection is closed"));
    while (true) {
        const ssize_t n = ::send(int(fd), from, size_t(length), MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n >= 0)
            return qint64(n);
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return qint64(0);
        return Error(ErrorCode::Network, QStringLiteral("send failed: %1").arg(QString::fromLocal8Bit(std::strerror(errno))));
    }
}

quint64 checksum(const char *data, qint64 length)
{
    return XXH3_64bits(data, size_t(length));
}

namespace {
struct CodeName { ErrorCode code; const char *name; };
const CodeName kCodes[] = {
    {ErrorCode::None, "ok"},
    {ErrorCode::Authentication, "auth"},
    {ErrorCode::NotFound, "not-found"},
    {ErrorCode::InvalidKey, "invalid-key"},
    {ErrorCode::OutOfRange, "out-of-range"},
    {ErrorCode::InvalidArgument, "invalid-argument"},
    {ErrorCode::Busy, "busy"},
    {ErrorCode::NotAllowed, "not-allowed"},
    {ErrorCode::DiskFull, "disk-full"},
    {ErrorCode::Corrupt, "corrupt"},
    {ErrorCode::Protocol, "protocol"},
    {ErrorCode::Unsupported, "version"},
    {ErrorCode::Cancelled, "cancelled"},
    {ErrorCode::Timeout, "timeout"},
    {ErrorCode::Io, "io"},
};
} // namespace

QString wireCode(ErrorCode code)
{
    for (const CodeName &c : kCodes) {
        if (c.code == code)
            return QString::fromLatin1(c.name);
    }
    return QStringLiteral("internal");
}

ErrorCode fromWireCode(const QString &code)
{
    for (const CodeName &c : kCodes) {
        if (code == QLatin1String(c.name))
            return c.code;
    }
    return ErrorCode::Internal;
}

QCborMap errorMessage(qint64 id, const Error &error)
{
    return QCborMap{{QStringLiteral("t"), QStringLiteral("error")}, {QStringLiteral("id"), id},
                    {QStringLiteral("code"), wireCode(error.code())}, {QStringLiteral("message"), error.message()}};
}

QCborMap okMessage(qint64 id)
{
    return QCborMap{{QStringLiteral("t"), QStringLiteral("ok")}, {QStringLiteral("id"), id}};
}

Error errorFrom(const QCborMap &answer)
{
    const QString t = answer.value(QStringLiteral("t")).toString();
    if (t == QLatin1String("ok"))
        return Error();
    if (t == QLatin1String("error")) {
        return Error(fromWireCode(answer.value(QStringLiteral("code")).toString()),
                     answer.value(QStringLiteral("message")).toString());
    }
    return Error(ErrorCode::Protocol, QStringLiteral("unexpected answer '%1'").arg(t));
}

} // namespace spectrum::blobproto
