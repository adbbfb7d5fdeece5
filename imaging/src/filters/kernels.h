// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers shared by the built-in filters: edge-replicated rows widened to int or float, rounding and clamping.

#include "spectrum/imaging/filters/filter.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace spectrum::filters {

/// Whether the filters run their x86-64-v3 (AVX2) versions: when the processor has it, unless
/// SPECTRUM_FILTER_ISA=baseline. Both versions give identical results (tested); only speed differs.
bool useWideVectors();
/// For tests: run the baseline (false) or the wide version (true, where the processor has it).
void setWideVectors(bool wide);
/// Outputs held as one plane of at least this many bytes are written around the caches by the filters that can
/// (non-temporal stores; by default from half this core's L2 cache on). For tests: 0 (always) or a huge value
/// (never). Returns the previous limit.
qint64 setCacheBypassLimit(qint64 bytes);

template <typename F>
[[gnu::flatten, gnu::target("arch=x86-64-v3")]] void runWide(const F &f) { f(); }
template <typename F>
[[gnu::flatten]] void runBaseline(const F &f) { f(); }
#ifdef __clang__
template <typename F>
[[gnu::flatten, gnu::target("arch=x86-64-v4")]] void runWidest(const F &f) { f(); }
#define SPECTRUM_IVDEP  // the Clang build is for fuzzing, not speed
#else
template <typename F>
[[gnu::flatten, gnu::target("arch=x86-64-v4,prefer-vector-width=512")]] void runWidest(const F &f) { f(); }
/// Before a loop whose iterations never depend on one another (no output overlaps an input).
#define SPECTRUM_IVDEP _Pragma("GCC ivdep")
#endif
/// Whether the processor has x86-64-v4 (AVX-512 F/BW/DQ/VL) and the wide versions are on.
bool useWidestVectors();

/// Runs `f` — a filter's loops over a band — compiled for the best instruction set this processor has. Everything
/// `f` calls is inlined into it (flatten), so the wide version holds no code the processor might lack elsewhere.
template <typename F>
void withBestIsa(const F &f)
{
#ifdef SPECTRUM_FILTERS_ONE_ISA
    f();
#else
    if (useWideVectors())
        runWide(f);
    else
        runBaseline(f);
#endif
}

/// Row y of the input in the offset domain — each sample minus the format's minimum, so 0 … 65535 whatever the
/// signedness — as `Acc` values, with `pad` pixels replicated on either side: pixel x is at (x + pad) * channels.
template <typename T, typename Acc>
void paddedRow(const RowsIn &in, int y, int pad, std::vector<Acc> &out)
{
    const int c = in.format.channels, w = in.format.width, lo = in.format.minValue;
    out.resize(size_t(w + 2 * pad) * size_t(c));
    const T *src = in.row<T>(y);
    Acc *dst = out.data() + size_t(pad) * size_t(c);
    for (qsizetype i = 0; i < qsizetype(w) * c; ++i)
        dst[i] = Acc(int(src[i]) - lo);
    for (int p = 0; p < pad; ++p) {
        for (int k = 0; k < c; ++k) {
            out[size_t(p * c + k)] = dst[k];
            out[size_t((w + pad + p) * c + k)] = dst[(w - 1) * c + k];
        }
    }
}

inline int clampValue(long long v, const PlaneFormat &f) { return int(std::clamp<long long>(v, f.minValue, f.maxValue)); }
inline int clampValue(int v, const PlaneFormat &f) { return std::clamp(v, f.minValue, f.maxValue); }
inline int clampValue(float v, const PlaneFormat &f)
{
    // Round to nearest (ties to even, the default mode), then clamp; NaN cannot occur from finite kernels.
    // nearbyint, not lrint: it stays in float registers, so GCC vectorises it (both round to nearest, ties to even).
    const float lo = float(f.minValue), hi = float(f.maxValue);
    return int(std::nearbyint(std::clamp(v, lo, hi)));
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

namespace spectrum::filters {
/// As withBestIsa, with 512-bit vectors where the processor has them: for the integer min/max loops that
/// gain from twice the lanes (the median), not for float code, where some processors slow their clock.
template <typename F>
void withWidestIsa(const F &f)
{
#ifdef SPECTRUM_FILTERS_ONE_ISA
    f();
#else
    if (useWidestVectors())
        runWidest(f);
    else
        withBestIsa(f);
#endif
}
} // namespace spectrum::filters
