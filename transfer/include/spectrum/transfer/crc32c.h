// SPDX-License-Identifier: Apache-2.0
#pragma once
// CRC32C (Castagnoli, iSCSI's and S3's x-amz-checksum-crc32c): a checksum at memory speed with the CPU's CRC
// instruction (SSE 4.2), a table walk without it. Like XXH3 (xxh3.h) it tells damaged bytes from good ones, not
// forged ones; unlike XXH3 an S3 store computes it too, so a store can refuse a damaged upload and give back what it
// checked (decision 0025).

#include <QByteArray>

#include <cstdint>

namespace spectrum {

class Crc32c
{
public:
    void add(const char *data, qint64 length);
    /// The CRC of everything added so far.
    std::uint32_t value() const { return ~m_state; }
    /// As S3 writes it: base64 of the four bytes, most significant first.
    QByteArray toBase64() const;
    static QByteArray toBase64(std::uint32_t crc);

    /// The CRC of A followed by B from the CRC of each and B's length: ranges that land in any order, each summed
    /// as it comes, make the whole object's CRC without its bytes gathered.
    static std::uint32_t combine(std::uint32_t crcA, std::uint32_t crcB, qint64 lengthB);

    static std::uint32_t of(const char *data, qint64 length);
    /// The same by the table walk a CPU without the instruction takes (tests hold the two together).
    static std::uint32_t ofWithoutInstruction(const char *data, qint64 length);

private:
    std::uint32_t m_state = 0xFFFFFFFFu;
};

} // namespace spectrum
