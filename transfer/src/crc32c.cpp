// SPDX-License-Identifier: Apache-2.0
#include "spectrum/transfer/crc32c.h"

#include <algorithm>
#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define SPECTRUM_CRC32C_X86 1
#endif

namespace spectrum {

namespace {

constexpr std::uint32_t kReflectedPolynomial = 0x82F63B78u;

/// Eight tables of 256: eight bytes a step without the instruction ("slicing by eight").
struct Tables
{
    std::array<std::array<std::uint32_t, 256>, 8> t{};
    Tables()
    {
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k)
                c = (c >> 1) ^ (c & 1 ? kReflectedPolynomial : 0);
            t[0][i] = c;
        }
        for (std::uint32_t i = 0; i < 256; ++i)
            for (size_t s = 1; s < 8; ++s)
                t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    }
};

std::uint32_t bySoftware(std::uint32_t state, const unsigned char *p, size_t n)
{
    static const Tables tables;
    const auto &t = tables.t;
    for (; n >= 8; p += 8, n -= 8) {
        std::uint32_t low, high;
        std::memcpy(&low, p, 4);
        std::memcpy(&high, p + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        low = __builtin_bswap32(low);
        high = __builtin_bswap32(high);
#endif
        low ^= state;
        state = t[7][low & 0xFF] ^ t[6][(low >> 8) & 0xFF] ^ t[5][(low >> 16) & 0xFF] ^ t[4][low >> 24] ^ t[3][high & 0xFF]
                ^ t[2][(high >> 8) & 0xFF] ^ t[1][(high >> 16) & 0xFF] ^ t[0][high >> 24];
    }
    for (; n > 0; ++p, --n)
        state = (state >> 8) ^ t[0][(state ^ *p) & 0xFF];
    return state;
}

#ifdef SPECTRUM_CRC32C_X86
__attribute__((target("sse4.2"))) std::uint32_t byInstruction(std::uint32_t state, const unsigned char *p, size_t n)
{
#if defined(__x86_64__)
    std::uint64_t wide = state;
    for (; n >= 32; p += 32, n -= 32) {
        std::uint64_t v[4];
        std::memcpy(v, p, 32);
        wide = _mm_crc32_u64(wide, v[0]);
        wide = _mm_crc32_u64(wide, v[1]);
        wide = _mm_crc32_u64(wide, v[2]);
        wide = _mm_crc32_u64(wide, v[3]);
    }
    for (; n >= 8; p += 8, n -= 8) {
        std::uint64_t v;
        std::memcpy(&v, p, 8);
        wide = _mm_crc32_u64(wide, v);
    }
    state = std::uint32_t(wide);
#endif
    for (; n > 0; ++p, --n)
        state = _mm_crc32_u8(state, *p);
    return state;
}

bool hasInstruction()
{
    static const bool has = __builtin_cpu_supports("sse4.2");
    return has;
}
#endif

} // namespace

void Crc32c::add(const char *data, qint64 length)
{
    if (length <= 0)
        return;
    const auto *p = reinterpret_cast<const unsigned char *>(data);
#ifdef SPECTRUM_CRC32C_X86
    if (hasInstruction()) {
        m_state = byInstruction(m_state, p, size_t(length));
        return;
    }
#endif
    m_state = bySoftware(m_state, p, size_t(length));
}

QByteArray Crc32c::toBase64() const
{
    return toBase64(value());
}

QByteArray Crc32c::toBase64(std::uint32_t v)
{
    const char bytes[4] = {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
    return QByteArray(bytes, 4).toBase64();
}

namespace {

// Polynomials over GF(2) modulo the CRC's, in its bit order (the highest bit is x^0). Appending n zero bytes to a
// message multiplies its CRC register by x^(8n); the inversions before and after cancel out of A's part, so
// crc(A‖B) = crc(A)·x^(8·|B|) + crc(B).

/// a·b mod P.
std::uint32_t multiplyModP(std::uint32_t a, std::uint32_t b)
{
    std::uint32_t product = 0;
    for (std::uint32_t bit = 1u << 31; bit != 0; bit >>= 1) {
        if (a & bit)
            product ^= b;
        b = (b & 1) ? (b >> 1) ^ kReflectedPolynomial : b >> 1;  // b·x
    }
    return product;
}

/// x^(8n) mod P, by squaring: x^(2^k) for k = 3, 4, … as n's bits say.
std::uint32_t xPowerOfBytes(std::uint64_t n)
{
    std::uint32_t result = 1u << 31;  // x^0
    std::uint32_t square = 1u << 23;  // x^8
    while (n != 0) {
        if (n & 1)
            result = multiplyModP(result, square);
        square = multiplyModP(square, square);
        n >>= 1;
    }
    return result;
}

} // namespace

std::uint32_t Crc32c::combine(std::uint32_t crcA, std::uint32_t crcB, qint64 lengthB)
{
    if (lengthB <= 0)
        return crcA;
    return multiplyModP(crcA, xPowerOfBytes(std::uint64_t(lengthB))) ^ crcB;
}

std::uint32_t Crc32c::of(const char *data, qint64 length)
{
    Crc32c c;
    c.add(data, length);
    return c.value();
}

std::uint32_t Crc32c::ofWithoutInstruction(const char *data, qint64 length)
{
    return ~bySoftware(0xFFFFFFFFu, reinterpret_cast<const unsigned char *>(data), size_t(std::max<qint64>(length, 0)));
}

} // namespace spectrum
