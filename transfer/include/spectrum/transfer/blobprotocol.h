// SPDX-License-Identifier: Apache-2.0
#pragma once
// The blob protocol's wire format (see transfer/PROTOCOL.md): connection preface, control frames carrying CBOR
// maps, and the fixed 32-byte data headers. Pure encoding and decoding with bounds checks; no sockets.

#include "spectrum/core/result.h"

#include <QByteArray>
#include <QCborMap>

#include <optional>

class QIODevice;
class QAbstractSocket;

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
    quint64 checksum = 0;  ///< DATA: XXH3-64 of the payload
    quint32 status = 0;    ///< ACK and ERROR: 0 ok, else a reason (kAck…)
};

/// ACK statuses.
constexpr quint32 kAckOk = 0;
constexpr quint32 kAckDamaged = 1;   ///< the checksum did not match: send the frame again
constexpr quint32 kAckDiskFull = 2;  ///< the server could not store the frame: its disk is full
constexpr quint32 kAckIoError = 3;   ///< the server could not store the frame: another write error

QByteArray encodeHeader(const Header &header);
/// Decodes 32 bytes; Protocol error for an unknown kind, nonzero padding or an overflowing range.
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

/// Reads a data connection's frames, one at a time, for both ends of it: a header, then — for a DATA frame — its
/// payload into memory the owner names once it has looked at the header (the destination, its own buffer,
/// scratch), from what the socket object buffered and, when allowed, straight from the kernel.
class FrameReader
{
public:
    /// Between frames: the next header once its 32 bytes are buffered (nothing: not yet), or why it is not one.
    /// A DATA header with a payload starts the frame: inFrame() until receive() has it all. An owner that refuses
    /// the header must reset() or drop the connection, or its next bytes would be read as that payload.
    std::optional<Result<Header>> nextHeader(QAbstractSocket *socket);
    /// Reads more of the current payload into `payload` (the payload's first byte; received() are there already).
    /// `direct`: from the kernel once the socket object's buffer is empty (receiveDirect; not for TLS). Returns
    /// the bytes read (0: none waiting), or the connection's error; inFrame() is false once the last one is in.
    Result<qint64> receive(QAbstractSocket *socket, char *payload, bool direct);
    bool inFrame() const { return m_inFrame; }
    const Header &header() const { return m_header; }
    qint64 received() const { return m_received; }
    /// Drops the frame under way (the connection is being abandoned or its requests requeued).
    void reset() { m_inFrame = false; }

private:
    Header m_header;
    qint64 m_received = 0;
    bool m_inFrame = false;
};

/// Receives up to `length` bytes straight from a connected socket's descriptor into `to`, bypassing the
/// socket object's own buffer (one copy less). Call only when socket->bytesAvailable() is 0. Returns the bytes
/// read (0: none waiting now), or an error when the peer closed or the connection broke.
Result<qint64> receiveDirect(QAbstractSocket *socket, char *to, qint64 length);
/// Sends up to `length` bytes straight to the descriptor; only when socket->bytesToWrite() is 0. Returns the
/// bytes the kernel took (0: its buffer is full).
Result<qint64> sendDirect(QAbstractSocket *socket, const char *from, qint64 length);

/// The per-frame checksum: XXH3, 64 bits — tens of GB/s, so checking every byte costs next to nothing.
quint64 checksum(const char *data, qint64 length);

/// Error codes on the wire, both ways.
QString wireCode(ErrorCode code);
ErrorCode fromWireCode(const QString &code);

QCborMap errorMessage(qint64 id, const Error &error);
QCborMap okMessage(qint64 id);
/// The Error carried by an answer (ErrorCode::None for "ok").
Error errorFrom(const QCborMap &answer);

} // namespace spectrum::blobproto
