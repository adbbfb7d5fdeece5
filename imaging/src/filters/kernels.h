#pragma once
// Helpers shared by the built-in filters: edge-replicated rows widened to int or float, rounding and clamping.

#include "spectrum/imaging/filter.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace spectrum::filters {

/// Row y of the input as `Acc` values with `pad` pixels replicated on either side: pixel x of the row is at
/// (x + pad) * channels.
template <typename T, typename Acc>
void paddedRow(const RowsIn &in, int y, int pad, std::vector<Acc> &out)
{
    const int c = in.format.channels, w = in.format.width;
    out.resize(size_t(w + 2 * pad) * size_t(c));
    const T *src = in.row<T>(y);
    Acc *dst = out.data() + size_t(pad) * size_t(c);
    for (qsizetype i = 0; i < qsizetype(w) * c; ++i)
        dst[i] = Acc(src[i]);
    for (int p = 0; p < pad; ++p) {
        for (int k = 0; k < c; ++k) {
            out[size_t(p * c + k)] = dst[k];
            out[size_t((w + pad + p) * c + k)] = dst[(w - 1) * c + k];
        }
    }
}

inline int clampValue(long long v, const PlaneFormat &f) { return int(std::clamp<long long>(v, f.minValue, f.maxValue)); }
inline int clampValue(float v, const PlaneFormat &f)
{
    // Round to nearest (ties to even, the default mode), then clamp; NaN cannot occur from finite kernels.
    const float lo = float(f.minValue), hi = float(f.maxValue);
    return int(std::lrint(std::clamp(v, lo, hi)));
}

/// a / b rounded to nearest, halves away from zero; b > 0.
inline long long divRound(long long a, long long b) { return a >= 0 ? (a + b / 2) / b : -((-a + b / 2) / b); }

/// A well-mixed 64-bit hash (splitmix64's finaliser): per-pixel randomness that does not depend on order.
inline std::uint64_t mix64(std::uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

} // namespace spectrum::filters
