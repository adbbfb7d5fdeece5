// SPDX-License-Identifier: Apache-2.0
// Point and geometric filters: invert, flip, rotate, zoom. Large outputs are written around the caches, and
// 16-bit rotations go through 8×8 transposes in vector registers.

#include "filters/builtinfilter.h"

namespace spectrum::filters {

namespace {

/// hi + lo − clamp(x, lo, hi) for n 16-bit samples (either signedness: the result is in range, so arithmetic modulo
/// 2¹⁶ gives it exactly), stored around the caches. x86-64-v3 only (writeAroundCaches() says so).
template <typename T>
[[gnu::target("arch=x86-64-v3")]] void invertAroundCaches(const T *src, T *dst, qsizetype n, T lo, T hi)
{
    static_assert(sizeof(T) == 2);
    const quint16 sum = quint16(quint16(lo) + quint16(hi));
    qsizetype i = 0;
    for (; i < n && (reinterpret_cast<quintptr>(dst + i) & 31) != 0; ++i)
        dst[i] = T(quint16(sum - quint16(std::clamp(src[i], lo, hi))));
    const __m256i l = _mm256_set1_epi16(short(lo)), h = _mm256_set1_epi16(short(hi)), s = _mm256_set1_epi16(short(sum));
    for (; i + 16 <= n; i += 16) {
        __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + i));
        if constexpr (std::is_signed_v<T>)
            x = _mm256_min_epi16(_mm256_max_epi16(x, l), h);
        else
            x = _mm256_min_epu16(_mm256_max_epu16(x, l), h);
        _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + i), _mm256_sub_epi16(s, x));
    }
    for (; i < n; ++i)
        dst[i] = T(quint16(sum - quint16(std::clamp(src[i], lo, hi))));
    _mm_sfence();  // the streamed stores are seen by whoever reads the output next, on any thread
}

/// A row of w 16-bit samples reversed, stored around the caches. x86-64-v3 only.
[[gnu::target("arch=x86-64-v3")]] void reverseAroundCaches(const quint16 *src, quint16 *dst, int w)
{
    int x = 0;
    for (; x < w && (reinterpret_cast<quintptr>(dst + x) & 31) != 0; ++x)
        dst[x] = src[w - 1 - x];
    // Words reversed within each 128-bit lane, then the two lanes swapped.
    const __m256i words = _mm256_setr_epi8(14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1,
                                           14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1);
    for (; x + 16 <= w; x += 16) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + (w - 16 - x)));
        _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + x), _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, words), 0x4E));
    }
    for (; x < w; ++x)
        dst[x] = src[w - 1 - x];
}

class InvertFilter : public BuiltinFilter
{
public:
    using BuiltinFilter::BuiltinFilter;
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withBestIsa([&] {
            withSampleType(in.format.type, [&](auto t) {
                using T = decltype(t);
                const int sum = in.format.minValue + in.format.maxValue;
                const T lo = T(in.format.minValue), hi = T(in.format.maxValue);
                auto invert = [&](const T *src, T *dst, qsizetype n) {
                    if (std::is_unsigned_v<T> && lo == 0) {
                        // hi − clamp(x, 0, hi) is a saturating subtraction: one instruction per register.
                        for (qsizetype i = 0; i < n; ++i)
                            dst[i] = T(src[i] < hi ? hi - src[i] : 0);
                        return;
                    }
                    // Clamped into the range first, so the difference stays in it: narrow arithmetic throughout.
                    for (qsizetype i = 0; i < n; ++i)
                        dst[i] = T(sum - std::clamp(src[i], lo, hi));
                };
                const qsizetype n = in.format.samplesPerRow();
                const T *from = in.contiguous<T>(begin);
                T *to = out.contiguous<T>(begin);
                if constexpr (sizeof(T) == 2) {
                    if (from && to && writeAroundCaches(out)) {
                        invertAroundCaches(from, to, n * (end - begin), lo, hi);
                        return;
                    }
                }
                if (from && to) {  // one loop over the band: no per-row start and end
                    invert(from, to, n * (end - begin));
                    return;
                }
                for (int y = begin; y < end; ++y)
                    invert(in.row<T>(y), out.row<T>(y), n);
            });
        });
    }
};

/// Reverses the pixels of a row, keeping each pixel's channels in order.
template <typename T, int C>
void reversePixels(const T *src, T *dst, int w)
{
    for (int x = 0; x < w; ++x)
        for (int k = 0; k < C; ++k)
            dst[x * C + k] = src[(w - 1 - x) * C + k];
}

class FlipFilter : public BuiltinFilter
{
public:
    FlipFilter(QString d, bool vertical) : BuiltinFilter(std::move(d), 0), m_vertical(vertical) {}
    RowSpan inputRows(int begin, int end, const PlaneFormat &in) const override
    {
        return m_vertical ? RowSpan{in.height - end, in.height - begin} : RowSpan{begin, end};
    }
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withBestIsa([&] {
            const int w = in.format.width, h = in.format.height;
            withSampleType(in.format.type, [&](auto t) {
                using T = decltype(t);
                if constexpr (sizeof(T) == 2) {
                    if (!m_vertical && in.format.channels == 1 && writeAroundCaches(out)) {
                        for (int y = begin; y < end; ++y)
                            reverseAroundCaches(reinterpret_cast<const quint16 *>(in.row<T>(y)), reinterpret_cast<quint16 *>(out.row<T>(y)), w);
                        _mm_sfence();
                        return;
                    }
                }
                for (int y = begin; y < end; ++y) {
                    T *dst = out.row<T>(y);
                    if (m_vertical) {
                        const T *src = in.row<T>(h - 1 - y);
                        std::copy(src, src + in.format.samplesPerRow(), dst);
                    } else if (in.format.channels == 1) {
                        reversePixels<T, 1>(in.row<T>(y), dst, w);
                    } else {
                        reversePixels<T, 3>(in.row<T>(y), dst, w);
                    }
                }
            });
        });
    }

private:
    bool m_vertical;
};

/// dst[i][j] = src[j][i] for an 8 × 8 block of 16-bit samples, in vector registers (GCC vector extensions:
/// unpack steps of 16, 32 and 64 bits).
inline void transpose8x8(const quint16 *const src[8], quint16 *const dst[8])
{
    typedef short V16 __attribute__((vector_size(16)));
    typedef int V32 __attribute__((vector_size(16)));
    typedef long long V64 __attribute__((vector_size(16)));
    V16 r[8];
    for (int j = 0; j < 8; ++j)
        std::memcpy(&r[j], src[j], 16);
#ifdef __clang__
    auto lo16 = [](V16 a, V16 b) { return __builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3, 11); };
    auto hi16 = [](V16 a, V16 b) { return __builtin_shufflevector(a, b, 4, 12, 5, 13, 6, 14, 7, 15); };
    auto lo32 = [](V16 a, V16 b) { return V16(__builtin_shufflevector(V32(a), V32(b), 0, 4, 1, 5)); };
    auto hi32 = [](V16 a, V16 b) { return V16(__builtin_shufflevector(V32(a), V32(b), 2, 6, 3, 7)); };
    auto lo64 = [](V16 a, V16 b) { return V16(__builtin_shufflevector(V64(a), V64(b), 0, 2)); };
    auto hi64 = [](V16 a, V16 b) { return V16(__builtin_shufflevector(V64(a), V64(b), 1, 3)); };
#else
    auto lo16 = [](V16 a, V16 b) { return __builtin_shuffle(a, b, V16{0, 8, 1, 9, 2, 10, 3, 11}); };
    auto hi16 = [](V16 a, V16 b) { return __builtin_shuffle(a, b, V16{4, 12, 5, 13, 6, 14, 7, 15}); };
    auto lo32 = [](V16 a, V16 b) { return V16(__builtin_shuffle(V32(a), V32(b), V32{0, 4, 1, 5})); };
    auto hi32 = [](V16 a, V16 b) { return V16(__builtin_shuffle(V32(a), V32(b), V32{2, 6, 3, 7})); };
    auto lo64 = [](V16 a, V16 b) { return V16(__builtin_shuffle(V64(a), V64(b), V64{0, 2})); };
    auto hi64 = [](V16 a, V16 b) { return V16(__builtin_shuffle(V64(a), V64(b), V64{1, 3})); };
#endif
    const V16 t0 = lo16(r[0], r[1]), t1 = hi16(r[0], r[1]), t2 = lo16(r[2], r[3]), t3 = hi16(r[2], r[3]);
    const V16 t4 = lo16(r[4], r[5]), t5 = hi16(r[4], r[5]), t6 = lo16(r[6], r[7]), t7 = hi16(r[6], r[7]);
    const V16 u0 = lo32(t0, t2), u1 = hi32(t0, t2), u2 = lo32(t1, t3), u3 = hi32(t1, t3);
    const V16 u4 = lo32(t4, t6), u5 = hi32(t4, t6), u6 = lo32(t5, t7), u7 = hi32(t5, t7);
    const V16 c[8] = {lo64(u0, u4), hi64(u0, u4), lo64(u1, u5), hi64(u1, u5), lo64(u2, u6), hi64(u2, u6), lo64(u3, u7), hi64(u3, u7)};
    for (int i = 0; i < 8; ++i)
        std::memcpy(dst[i], &c[i], 16);
}

/// The same with AVX-512: the block's 8 rows in two 512-bit registers, each output half by one two-register word
/// permute (vpermt2w) — 4 shuffles where the unpack ladder takes 24. Only called where the processor has
/// x86-64-v4 (useWidestVectors()), from code compiled for it.
[[gnu::target("arch=x86-64-v4")]] inline void transpose8x8Avx512(const quint16 *const src[8], quint16 *const dst[8])
{
    // No lambdas here: they would not have this function's target.
    __m512i a = _mm512_zextsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i *>(src[0])));
    __m512i b = _mm512_zextsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i *>(src[4])));
    a = _mm512_inserti32x4(a, _mm_loadu_si128(reinterpret_cast<const __m128i *>(src[1])), 1);
    b = _mm512_inserti32x4(b, _mm_loadu_si128(reinterpret_cast<const __m128i *>(src[5])), 1);
    a = _mm512_inserti32x4(a, _mm_loadu_si128(reinterpret_cast<const __m128i *>(src[2])), 2);
    b = _mm512_inserti32x4(b, _mm_loadu_si128(reinterpret_cast<const __m128i *>(src[6])), 2);
    a = _mm512_inserti32x4(a, _mm_loadu_si128(reinterpret_cast<const __m128i *>(src[3])), 3);
    b = _mm512_inserti32x4(b, _mm_loadu_si128(reinterpret_cast<const __m128i *>(src[7])), 3);
    // Word j·8 + i of (a, b) is row j's sample i.
    // Output row i, sample j, is word j·8 + i: rows 0–3 from one permute, rows 4–7 from the other.
    const __m512i lowRows = _mm512_set_epi16(59, 51, 43, 35, 27, 19, 11, 3, 58, 50, 42, 34, 26, 18, 10, 2, 57, 49, 41, 33, 25, 17, 9, 1, 56, 48, 40,
                                             32, 24, 16, 8, 0);
    const __m512i highRows = _mm512_add_epi16(lowRows, _mm512_set1_epi16(4));
    const __m512i lo = _mm512_permutex2var_epi16(a, lowRows, b), hi = _mm512_permutex2var_epi16(a, highRows, b);
    // Lane k of a 512-bit register (vector extensions: the extract intrinsic trips GCC 12's uninitialised check).
    typedef long long Lanes __attribute__((vector_size(64)));
#define SPECTRUM_STORE_LANE(p, v, k) \
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), __m128i(__builtin_shufflevector(Lanes(v), Lanes(v), 2 * (k), 2 * (k) + 1)))
    SPECTRUM_STORE_LANE(dst[0], lo, 0);
    SPECTRUM_STORE_LANE(dst[1], lo, 1);
    SPECTRUM_STORE_LANE(dst[2], lo, 2);
    SPECTRUM_STORE_LANE(dst[3], lo, 3);
    SPECTRUM_STORE_LANE(dst[4], hi, 0);
    SPECTRUM_STORE_LANE(dst[5], hi, 1);
    SPECTRUM_STORE_LANE(dst[6], hi, 2);
    SPECTRUM_STORE_LANE(dst[7], hi, 3);
#undef SPECTRUM_STORE_LANE
}

class RotateFilter : public BuiltinFilter
{
public:
    RotateFilter(QString d, int degrees) : BuiltinFilter(std::move(d), 0), m_degrees(degrees) {}
    PlaneFormat outputFormat(const PlaneFormat &in) const override
    {
        PlaneFormat f = in;
        if (m_degrees != 180)
            std::swap(f.width, f.height);
        return f;
    }
    RowSpan inputRows(int begin, int end, const PlaneFormat &in) const override
    {
        // A quarter turn makes every output row out of one input column: it needs them all.
        return m_degrees == 180 ? RowSpan{in.height - end, in.height - begin} : RowSpan{0, in.height};
    }
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withBestIsa([&] {
            const int c = in.format.channels, w = in.format.width, h = in.format.height;
            withSampleType(in.format.type, [&](auto t) {
                using T = decltype(t);
                if (m_degrees == 180) {
                    for (int y = begin; y < end; ++y) {
                        if (c == 1)
                            reversePixels<T, 1>(in.row<T>(h - 1 - y), out.row<T>(y), w);
                        else
                            reversePixels<T, 3>(in.row<T>(h - 1 - y), out.row<T>(y), w);
                    }
                    return;
                }
                // Clockwise 90: out(x, y) = in(y, h−1−x); 270: in(w−1−y, x). In tiles of 32 × 32, so that the
                // rows read and written stay in the cache.
                std::vector<const T *> rows(static_cast<size_t>(h));
                for (int y = 0; y < h; ++y)
                    rows[size_t(y)] = in.row<T>(y);
                std::vector<T *> outRows(static_cast<size_t>(end - begin));
                for (int y = begin; y < end; ++y)
                    outRows[size_t(y - begin)] = out.row<T>(y);
                constexpr int tile = 32;
                const int outWidth = h;
                int blockedRows = begin;  // rows done 8 × 8 at a time, by register transposes (16-bit gray only)
                if constexpr (sizeof(T) == 2) {
                    if (c == 1) {
                        // In tiles of 64 × 64 (of 8 × 8 blocks): the source rows a tile reads stay in the cache and
                        // the TLB while its 64 output rows are written.
                        blockedRows = begin + (end - begin) / 8 * 8;
                        auto blocks = [&](auto transpose) {
                            // Row pointers copied into locals: read through the vectors, they would be loaded
                            // again for every block (the stores could alias them, as far as the compiler knows).
                            const T *const *in = rows.data();
                            for (int ty = begin; ty < blockedRows; ty += 64)
                            for (int tx = 0; tx + 8 <= outWidth; tx += 64)
                            for (int y = ty; y < std::min(ty + 64, blockedRows); y += 8) {
                                quint16 *outBase[8];
                                for (int i = 0; i < 8; ++i)
                                    outBase[i] = reinterpret_cast<quint16 *>(outRows[size_t(y - begin + (m_degrees == 90 ? i : 7 - i))]);
                                const int column = m_degrees == 90 ? y : w - 8 - y;
                                for (int x = tx; x < std::min(tx + 64, outWidth / 8 * 8); x += 8) {
                                    const quint16 *src[8];
                                    for (int j = 0; j < 8; ++j)
                                        src[j] = reinterpret_cast<const quint16 *>(in[m_degrees == 90 ? h - 1 - x - j : x + j] + column);
                                    quint16 *dst[8];
                                    for (int i = 0; i < 8; ++i)
                                        dst[i] = outBase[i] + x;
                                    transpose(src, dst);
                                }
                            }
                        };
                        if (useWidestVectors())
                            runWidest([&] { blocks([](const quint16 *const s[8], quint16 *const d[8]) { transpose8x8Avx512(s, d); }); });
                        else
                            blocks([](const quint16 *const s[8], quint16 *const d[8]) { transpose8x8(s, d); });
                    }
                }
                // The rest (and whatever the blocks left at the right edge), by tiles of single samples.
                for (int y = begin; y < blockedRows; ++y) {
                    T *dst = outRows[size_t(y - begin)];
                    const qsizetype column = qsizetype(m_degrees == 90 ? y : w - 1 - y) * c;
                    for (int x = outWidth / 8 * 8; x < outWidth; ++x) {
                        const T *src = rows[size_t(m_degrees == 90 ? h - 1 - x : x)] + column;
                        for (int k = 0; k < c; ++k)
                            dst[x * c + k] = src[k];
                    }
                }
                for (int y0 = blockedRows; y0 < end; y0 += tile) {
                    const int y1 = std::min(end, y0 + tile);
                    for (int x0 = 0; x0 < outWidth; x0 += tile) {
                        const int x1 = std::min(outWidth, x0 + tile);
                        for (int y = y0; y < y1; ++y) {
                            T *dst = outRows[size_t(y - begin)];
                            const qsizetype column = qsizetype(m_degrees == 90 ? y : w - 1 - y) * c;
                            for (int x = x0; x < x1; ++x) {
                                const T *src = rows[size_t(m_degrees == 90 ? h - 1 - x : x)] + column;
                                for (int k = 0; k < c; ++k)
                                    dst[x * c + k] = src[k];
                            }
                        }
                    }
                }
            });
        });
    }

private:
    int m_degrees;
};

/// Outputs of a phased zoom row (see ZoomFilter) for periods of 1 to 4 outputs, period by period so that
/// the stores are contiguous and vectorise; false for longer periods.
template <int Taps, int Period>
void phasedPeriods(float *__restrict o, const float *__restrict source, const int *start, const float *weights, int ow, int step)
{
    const int full = ow / Period;
    for (int k = 0; k < full; ++k) {
        for (int ph = 0; ph < Period; ++ph) {
            const float *s = source + start[ph] + k * step;
            float v = 0;
            for (int t = 0; t < Taps; ++t)
                v += weights[ph * Taps + t] * s[t];
            o[k * Period + ph] = v;
        }
    }
    for (int x = full * Period; x < ow; ++x) {
        const int ph = x - full * Period;
        const float *s = source + start[ph] + full * step;
        float v = 0;
        for (int t = 0; t < Taps; ++t)
            v += weights[ph * Taps + t] * s[t];
        o[x] = v;
    }
}

template <int Taps>
bool phasedRow(int period, float *o, const float *source, const int *start, const float *weights, int ow, int step)
{
    switch (period) {
    case 1: phasedPeriods<Taps, 1>(o, source, start, weights, ow, step); return true;
    case 2: phasedPeriods<Taps, 2>(o, source, start, weights, ow, step); return true;
    case 3: phasedPeriods<Taps, 3>(o, source, start, weights, ow, step); return true;
    case 4: phasedPeriods<Taps, 4>(o, source, start, weights, ow, step); return true;
    default: return false;
    }
}

/// Resampling by `factor` (output size rounded), pixel centres aligned as OpenCV's resize does:
/// source = (destination + 0.5) / scale − 0.5. Bilinear, or bicubic with a = −0.75 (OpenCV's). Each source row
/// is resampled horizontally once per band and kept while output rows need it; then output rows are vertical
/// combinations of those. (A row's result does not depend on the band: the same rows, the same arithmetic.)
class ZoomFilter : public BuiltinFilter
{
public:
    ZoomFilter(QString d, double factor, bool bicubic) : BuiltinFilter(std::move(d), 0), m_factor(factor), m_bicubic(bicubic) {}
    PlaneFormat outputFormat(const PlaneFormat &in) const override
    {
        PlaneFormat f = in;
        f.width = std::max(1, int(std::lround(in.width * m_factor)));
        f.height = std::max(1, int(std::lround(in.height * m_factor)));
        return f;
    }
    RowSpan inputRows(int begin, int end, const PlaneFormat &in) const override
    {
        const int outHeight = outputFormat(in).height;
        const double scale = double(in.height) / outHeight;
        const int first = int(std::floor((begin + 0.5) * scale - 0.5)) - (m_bicubic ? 1 : 0);
        const int last = int(std::floor((std::max(begin, end - 1) + 0.5) * scale - 0.5)) + (m_bicubic ? 3 : 2);
        return RowSpan{std::clamp(first, 0, in.height), std::clamp(last, 0, in.height)};
    }
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withBestIsa([&] {
            const int c = in.format.channels, w = in.format.width, h = in.format.height, ow = out.format.width;
            const double sy = double(h) / out.format.height, sx = double(w) / ow;
            const int taps = m_bicubic ? 4 : 2, back = m_bicubic ? 1 : 0;
            const qsizetype on = qsizetype(ow) * c;
            // Per output sample: its source samples (tap-major, so the loops below run over contiguous arrays).
            std::vector<int> index(size_t(taps) * size_t(on));
            std::vector<float> weights(size_t(taps) * size_t(on));
            for (int x = 0; x < ow; ++x) {
                const double s = (x + 0.5) * sx - 0.5;
                const int x0 = int(std::floor(s));
                for (int t = 0; t < taps; ++t) {
                    for (int k = 0; k < c; ++k) {
                        index[size_t(t * on + x * c + k)] = std::clamp(x0 + t - back, 0, w - 1) * c + k;
                        weights[size_t(t * on + x * c + k)] = float(weight(s - x0, t));
                    }
                }
            }
            // Horizontally resampled source rows, by source row (clamped), computed when first needed.
            std::vector<std::vector<float>> cache(static_cast<size_t>(taps + 2));
            std::vector<int> cachedRow(static_cast<size_t>(taps + 2), -1);
            // Small rational scales (2×, 3/2×, ½×…) of gray images repeat every `period` outputs, `step` inputs.
            const int divisor = std::gcd(w, ow), period = ow / divisor, step = w / divisor;
            constexpr int kPad = 4;
            const bool phased = c == 1 && period <= 16 && step <= 16;
            std::vector<int> phaseStart(static_cast<size_t>(period));
            std::vector<float> phaseWeights(static_cast<size_t>(period * taps));
            for (int phase = 0; phase < period && phased; ++phase) {
                const double s = (phase + 0.5) * sx - 0.5;
                const int x0 = int(std::floor(s));
                phaseStart[size_t(phase)] = x0 - back;
                for (int t = 0; t < taps; ++t)
                    phaseWeights[size_t(phase * taps + t)] = float(weight(s - x0, t));
            }
            std::vector<float> sourceFloats(size_t(w) * size_t(c) + 2 * kPad);
            withSampleType(in.format.type, [&](auto t) {
                using T = decltype(t);
                auto resampled = [&](int sourceRow) -> const float * {
                    sourceRow = std::clamp(sourceRow, 0, h - 1);
                    const size_t slot = size_t(sourceRow % int(cache.size()));
                    if (cachedRow[slot] != sourceRow) {
                        std::vector<float> &row = cache[slot];
                        row.assign(size_t(on), 0.0f);
                        const T *src = in.row<T>(sourceRow);
                        if (phased) {
                            // Period by period: phase φ's outputs φ, φ + p, … read source pixels q apart with the
                            // same weights — strided loads, no gathers. Edges replicated by padding.
                            float *pf = sourceFloats.data();
                            for (int i = 0; i < w; ++i)
                                pf[kPad + i] = float(src[i]);
                            for (int i = 0; i < kPad; ++i) {
                                pf[i] = pf[kPad];
                                pf[kPad + w + i] = pf[kPad + w - 1];
                            }
                            float *__restrict o = row.data();
                            const float *pw0 = phaseWeights.data();
                            const int *ps = phaseStart.data();
                            const bool done = taps == 2 ? phasedRow<2>(period, o, pf + kPad, ps, pw0, ow, step)
                                                        : phasedRow<4>(period, o, pf + kPad, ps, pw0, ow, step);
                            for (int phase = 0; phase < period && !done; ++phase) {
                                const int count = (ow - phase + period - 1) / period;
                                const float *__restrict b0 = pf + kPad + phaseStart[size_t(phase)];
                                const float *pw = phaseWeights.data() + phase * taps;
                                if (taps == 2) {
                                    const float w0 = pw[0], w1 = pw[1];
                                    for (int k = 0; k < count; ++k)
                                        o[phase + k * period] = w0 * b0[k * step] + w1 * b0[k * step + 1];
                                } else {
                                    const float w0 = pw[0], w1 = pw[1], w2 = pw[2], w3 = pw[3];
                                    for (int k = 0; k < count; ++k)
                                        o[phase + k * period] = w0 * b0[k * step] + w1 * b0[k * step + 1] + w2 * b0[k * step + 2] + w3 * b0[k * step + 3];
                                }
                            }
                            cachedRow[slot] = sourceRow;
                            return cache[slot].data();
                        }
                        for (qsizetype i = 0; i < qsizetype(w) * c; ++i)
                            sourceFloats[size_t(i)] = float(src[i]);
                        const float *__restrict sf = sourceFloats.data();
                        float *__restrict acc = row.data();
                        for (int tap = 0; tap < taps; ++tap) {
                            const int *__restrict ix = index.data() + tap * on;
                            const float *__restrict wt = weights.data() + tap * on;
                            for (qsizetype i = 0; i < on; ++i)
                                acc[i] += wt[i] * sf[ix[i]];
                        }
                        cachedRow[slot] = sourceRow;
                    }
                    return cache[slot].data();
                };
                for (int y = begin; y < end; ++y) {
                    const double s = (y + 0.5) * sy - 0.5;
                    const int y0 = int(std::floor(s));
                    const float *r[4] = {};
                    float wy[4] = {};
                    for (int tap = 0; tap < taps; ++tap) {
                        r[tap] = resampled(y0 + tap - back);
                        wy[tap] = float(weight(s - y0, tap));
                    }
                    // The vertical combination, rounded and stored in one pass.
                    T *dst = out.row<T>(y);
                    if (taps == 2) {
                        const float *__restrict r0 = r[0], *__restrict r1 = r[1];
                        for (qsizetype i = 0; i < on; ++i)
                            dst[i] = T(clampValue(wy[0] * r0[i] + wy[1] * r1[i], out.format));
                    } else {
                        const float *__restrict r0 = r[0], *__restrict r1 = r[1], *__restrict r2 = r[2], *__restrict r3 = r[3];
                        for (qsizetype i = 0; i < on; ++i)
                            dst[i] = T(clampValue(wy[0] * r0[i] + wy[1] * r1[i] + wy[2] * r2[i] + wy[3] * r3[i], out.format));
                    }
                }
            });
        });
    }

private:
    /// Weight of tap t for a sample at fraction f past the first of the central taps.
    double weight(double f, int t) const
    {
        if (!m_bicubic)
            return t == 0 ? 1 - f : f;
        const double a = -0.75;
        const double d = std::abs(f - (t - 1));  // distance to taps −1, 0, 1, 2
        return d <= 1 ? ((a + 2) * d - (a + 3)) * d * d + 1 : ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    }
    double m_factor;
    bool m_bicubic;
};

} // namespace

QList<FilterFactoryPtr> geometricFilters()
{
    using V = const QVariantMap &;
    using D = const QString &;
    return {
        factory(QStringLiteral("flip"), QStringLiteral("mirror the image"),
                {choice(QStringLiteral("axis"), QStringLiteral("horizontal (left–right) or vertical (top–bottom)"), {QStringLiteral("horizontal"), QStringLiteral("vertical")})},
                [](D d, V v) { return std::make_unique<FlipFilter>(d, v.value(QStringLiteral("axis")).toString() == QLatin1String("vertical")); }),
        factory(QStringLiteral("invert"), QStringLiteral("invert within the stored value range"), {},
                [](D d, V) { return std::make_unique<InvertFilter>(d, 0); }, names({"negate", "negative"})),
        factory(QStringLiteral("rotate"), QStringLiteral("rotate clockwise"),
                {choice(QStringLiteral("angle"), QStringLiteral("degrees clockwise"), {QStringLiteral("90"), QStringLiteral("180"), QStringLiteral("270")})},
                [](D d, V v) { return std::make_unique<RotateFilter>(d, v.value(QStringLiteral("angle")).toString().toInt()); }),
        factory(QStringLiteral("zoom"), QStringLiteral("resize by a factor"),
                {number(QStringLiteral("factor"), QStringLiteral("scale"), 2.0, 0.05, 16),
                 choice(QStringLiteral("method"), QStringLiteral("interpolation"), {QStringLiteral("bilinear"), QStringLiteral("bicubic")})},
                [](D d, V v) { return std::make_unique<ZoomFilter>(d, v.value(QStringLiteral("factor")).toDouble(), v.value(QStringLiteral("method")).toString() == QLatin1String("bicubic")); }, names({"resize", "scale"})),
    };
}

} // namespace spectrum::filters
