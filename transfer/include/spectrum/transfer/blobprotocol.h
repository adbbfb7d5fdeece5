#pragma once
// The blob protocol's wire format (see transfer/PROTOCOL.md): connection preface, control frames carrying CBOR
// maps, and the fixed 32-byte data headers. Pure encoding and decoding with bounds checks; no sockets.

#include "spectrum/core/result.h"

#include <QByteArray>
#include <QCborMap>

#include <optional>

class QIODevice;

namespace spectrum::blobproto {

constexpr quint8 kVersion = 1;
constexpr int kPrefaceSize = 8;
constexpr qint64 kMaxControlFrame = 1 << 20;   ///< bytes of one CBOR control frame
constexpr qint64 kMaxDataFrame = 1 << 20;      ///< payload bytes of one DATA frame
constexpr qint64 kDefaultMaxChunk = 64 << 20;  ///< the largest READ a server accepts by default
constexpr int kHeaderSize = 32;

enum class Channel : quint8 { Control = 1, Data = 2 };
enum class Kind : quint8 { Read = 1, Data = 2, Ack = 3, Error = 4 };

QByteArray preface(Channel channel);
/// Parses a preface. Error Protocol (not ours) or Unsupported (another version).
Result<Channel> parsePreface(const QByteArray &bytes);

struct Header
{
    Kind kind = Kind::Read;
    quint32 transfer = 0;
    quint64 offset = 0;
    quint64 length = 0;
    quint32 crcOrStatus = 0;  ///< CRC-32 of the payload for DATA; a status for ACK and ERROR (0: ok)
};

QByteArray encodeHeader(const Header &header);
/// Decodes 32 bytes; Protocol error for an unknown kind or nonzero padding.
Result<Header> decodeHeader(const char *bytes);

/// A length-prefixed CBOR map.
QByteArray encodeControl(const QCborMap &message);

/// Reads control frames from a device as bytes arrive. next() returns a message when a whole frame is buffered,
/// nothing when more bytes are needed, or an error (oversized frame, not a CBOR map) after which the
/// connection must be closed.
class ControlReader
{
public:
    std::optional<Result<QCborMap>> next(QIODevice *device);

private:
    qint64 m_expected = -1;
    QByteArray m_buffer;
};

/// CRC-32 (zlib's polynomial) of a payload.
quint32 crc32(const char *data, qint64 length);

/// Error codes on the wire, both ways.
QString wireCode(ErrorCode code);
ErrorCode fromWireCode(const QString &code);

QCborMap errorMessage(qint64 id, const Error &error);
QCborMap okMessage(qint64 id);
/// The Error carried by an answer (ErrorCode::None for "ok").
Error errorFrom(const QCborMap &answer);

} // namespace spectrum::blobproto
