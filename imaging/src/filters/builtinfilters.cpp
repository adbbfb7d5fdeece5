// The built-in filters: MedJava's set (sharpen, despeckle, edge detect, emboss, oil paint, pixelize, spread) and
// the everyday ones (blur, Gaussian, unsharp mask, invert, flip, rotate, zoom), on native-depth samples. Edges
// replicate the nearest pixel. Every output row is a function of the input rows alone, which is what makes band
// processing exact (see filter.h).

#include "builtinfilters.h"
#include "kernels.h"

#include <array>
#include <climits>
#include <cstring>
#include <type_traits>
#include <utility>
#include <cmath>
#include <numeric>

#include <immintrin.h>
#include <unistd.h>

namespace spectrum::filters {

namespace {

class BuiltinFilter : public Filter
{
public:
    BuiltinFilter(QString description, int halo) : m_description(std::move(description)), m_halo(halo) {}
    QString description() const override { return m_description; }

protected:
    int halo() const override { return m_halo; }

private:
    QString m_description;
    int m_halo;
};

/// The 3×3 neighbourhood filters, in the offset domain (kernels.h): op(above, here, below) gets pointers to the
/// sample in three padded rows, its neighbours at ±C, and returns the new offset-domain value before clamping.
/// C, the channel count, is a template argument so that the neighbours' offsets are constants.
template <typename T, typename Acc, int C, typename Op>
void run3x3(const RowsIn &in, int begin, int end, const RowsOut &out, Op op)
{
    const qsizetype n = in.format.samplesPerRow();
    const int lo = in.format.minValue;
    std::vector<Acc> r0, r1, r2;
    paddedRow<T, Acc>(in, begin - 1, 1, r0);
    paddedRow<T, Acc>(in, begin, 1, r1);
    for (int y = begin; y < end; ++y) {
        paddedRow<T, Acc>(in, y + 1, 1, r2);
        T *dst = out.row<T>(y);
        const Acc *a = r0.data() + C, *b = r1.data() + C, *d = r2.data() + C;
        for (qsizetype i = 0; i < n; ++i)
            dst[i] = T(clampValue(op(a + i, b + i, d + i) + decltype(op(a, b, d))(lo), out.format));
        std::swap(r0, r1);  // the next row's "above" and "here": the same values, not recomputed
        std::swap(r1, r2);
    }
}

/// run3x3 for the input's sample type and channel count (1 or 3).
template <typename Acc, typename Op>
void each3x3(const RowsIn &in, int begin, int end, const RowsOut &out, Op op)
{
    withSampleType(in.format.type, [&](auto t) {
        using T = decltype(t);
        if (in.format.channels == 1)
            run3x3<T, Acc, 1>(in, begin, end, out, [&](const Acc *a, const Acc *b, const Acc *d) { return op(a, b, d, std::integral_constant<int, 1>()); });
        else
            run3x3<T, Acc, 3>(in, begin, end, out, [&](const Acc *a, const Acc *b, const Acc *d) { return op(a, b, d, std::integral_constant<int, 3>()); });
    });
}

// ---- point and geometric filters ---------------------------------------------------------------------------

// ---- large outputs: written around the caches ----------------------------------------------------------------

/// Whether a point or geometric filter should write its output with non-temporal stores, which go to memory without
/// first reading each cache line they fill: when the output is a plane in memory (not rows the next filter of a
/// chain reads at once) too large to stay in this core's L2 cache anyway. Measured here (bench filters): invert
/// +15–50 % from 1024² on, −35 % at 512², where the image stays in L2 and ordinary stores win.
qint64 &cacheBypassLimit()
{
    static qint64 limit = [] {
        const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
        return l2 > 0 ? qint64(l2) / 2 : qint64(1) << 20;
    }();
    return limit;
}

bool writeAroundCaches(const RowsOut &out)
{
    return out.base && useWideVectors() && out.format.rowBytes() * out.format.height >= cacheBypassLimit();
}

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

/// The mean of each N×N block (aligned at the top left; edge blocks are smaller) in all its pixels.
class PixelizeFilter : public BuiltinFilter
{
public:
    PixelizeFilter(QString d, int size) : BuiltinFilter(std::move(d), 0), m_size(size) {}
    RowSpan inputRows(int begin, int end, const PlaneFormat &in) const override
    {
        return RowSpan{begin / m_size * m_size, std::min(in.height, ((std::max(begin, end - 1)) / m_size + 1) * m_size)};
    }
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withBestIsa([&] {
            const int c = in.format.channels, w = in.format.width, h = in.format.height, n = m_size;
            std::vector<long long> sums(size_t(w) * c);
            withSampleType(in.format.type, [&](auto t) {
                using T = decltype(t);
                for (int y = begin; y < end; ++y) {
                    const int top = y / n * n, bottom = std::min(h, top + n);
                    std::fill(sums.begin(), sums.end(), 0);
                    for (int yy = top; yy < bottom; ++yy) {
                        const T *src = in.row<T>(yy);
                        for (qsizetype i = 0; i < qsizetype(w) * c; ++i)
                            sums[size_t(i)] += src[i];
                    }
                    T *dst = out.row<T>(y);
                    for (int left = 0; left < w; left += n) {
                        const int right = std::min(w, left + n);
                        for (int k = 0; k < c; ++k) {
                            long long total = 0;
                            for (int x = left; x < right; ++x)
                                total += sums[size_t(x * c + k)];
                            const T v = T(clampValue(divRound(total, qint64(right - left) * (bottom - top)), out.format));
                            for (int x = left; x < right; ++x)
                                dst[x * c + k] = v;
                        }
                    }
                }
            });
        });
    }

private:
    int m_size;
};

/// Each pixel replaced by a neighbour at most `radius` away, chosen by a hash of (seed, x, y): random-looking,
/// reproducible, and independent of how the image was cut into bands.
class SpreadFilter : public BuiltinFilter
{
public:
    SpreadFilter(QString d, int radius, quint64 seed) : BuiltinFilter(std::move(d), radius), m_radius(radius), m_seed(seed) {}
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withBestIsa([&] {
            const int c = in.format.channels, w = in.format.width, r = m_radius, side = 2 * r + 1;
            withSampleType(in.format.type, [&](auto t) {
                using T = decltype(t);
                std::vector<const T *> rows(static_cast<size_t>(side));
                for (int y = begin; y < end; ++y) {
                    for (int k = 0; k < side; ++k)
                        rows[size_t(k)] = in.row<T>(y - r + k);
                    T *dst = out.row<T>(y);
                    for (int x = 0; x < w; ++x) {
                        const std::uint64_t hsh = mix64(m_seed ^ (std::uint64_t(std::uint32_t(y)) << 32 | std::uint32_t(x)));
                        const int dx = int(hsh % std::uint64_t(side)) - r;
                        const int dy = int((hsh >> 32) % std::uint64_t(side));
                        const T *src = rows[size_t(dy)] + qsizetype(std::clamp(x + dx, 0, w - 1)) * c;
                        for (int k = 0; k < c; ++k)
                            dst[x * c + k] = src[k];
                    }
                }
            });
        });
    }

private:
    int m_radius;
    quint64 m_seed;
};

// ---- neighbourhood filters ---------------------------------------------------------------------------------

/// 3×3 mean, separable: column sums of three rows, then sums of three columns; (sum + 4) / 9 in the offset
/// domain, where everything is unsigned.
class BoxBlurFilter : public BuiltinFilter
{
public:
    BoxBlurFilter(QString d) : BuiltinFilter(std::move(d), 1) {}
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withBestIsa([&] {
            const int c = in.format.channels, lo = in.format.minValue;
            const qsizetype n = in.format.samplesPerRow();
            withSampleType(in.format.type, [&](auto t) {
                using T = decltype(t);
                std::vector<quint16> r0, r1, r2;
                std::vector<quint32> columns;
                paddedRow<T, quint16>(in, begin - 1, 1, r0);
                paddedRow<T, quint16>(in, begin, 1, r1);
                for (int y = begin; y < end; ++y) {
                    paddedRow<T, quint16>(in, y + 1, 1, r2);
                    columns.resize(r0.size());
                    for (size_t i = 0; i < r0.size(); ++i)
                        columns[i] = quint32(r0[i]) + r1[i] + r2[i];
                    T *dst = out.row<T>(y);
                    const quint32 *s = columns.data();
                    for (qsizetype i = 0; i < n; ++i)
                        dst[i] = T(int((s[i] + s[i + c] + s[i + 2 * c] + 4u) / 9u) + lo);
                    std::swap(r0, r1);
                    std::swap(r1, r2);
                }
            });
        });
    }
};

/// MedJava's (xv's) sharpen: (v − p·mean) / (1 − p), mean over the 3×3 neighbourhood, 0 ≤ p < 1.
class SharpenFilter : public BuiltinFilter
{
public:
    SharpenFilter(QString d, double strength) : BuiltinFilter(std::move(d), 1), m_p(float(strength)) {}
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        const float p = m_p / 9.0f, scale = 1.0f / (1.0f - m_p);
        withBestIsa([&] {
            each3x3<quint16>(in, begin, end, out, [p, scale](const quint16 *a, const quint16 *b, const quint16 *d, auto ch) {
                constexpr int c = decltype(ch)::value;
                const int sum = a[-c] + a[0] + a[c] + b[-c] + b[0] + b[c] + d[-c] + d[0] + d[c];
                return (float(b[0]) - p * float(sum)) * scale;
            });
        });
    }

private:
    float m_p;
};

/// The median of the 3×3 neighbourhood (MedJava's despeckle). Each column of three is sorted once per row;
/// the median of the nine is then the median of (the largest of the three lows, the median of the three middles,
/// the smallest of the three highs) — exact, and a third of a full sorting network's work. Two output rows are
/// made per pass: their columns share two samples, sorted once, and each input row is read twice, not three times.
class DespeckleFilter : public BuiltinFilter
{
public:
    DespeckleFilter(QString d) : BuiltinFilter(std::move(d), 1) {}
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withWidestIsa([&] {
            const int c = in.format.channels, lo = in.format.minValue;
            const qsizetype n = in.format.samplesPerRow();
            withSampleType(in.format.type, [&](auto t) {
                using T = decltype(t);
                constexpr qsizetype chunk = 1024;  // keeps the sorted columns in the first-level cache
                const size_t stride = size_t(chunk + 2 * c);
                std::vector<quint16> sorted(6 * stride);  // low, mid, high of the upper row's columns, then the lower's
                quint16 *low0 = sorted.data(), *mid0 = low0 + stride, *high0 = mid0 + stride;
                quint16 *low1 = high0 + stride, *mid1 = low1 + stride, *high1 = mid1 + stride;
                for (int y = begin; y < end; y += 2) {
                    const bool two = y + 1 < end;
                    const T *r0 = in.row<T>(y - 1), *r1 = in.row<T>(y), *r2 = in.row<T>(y + 1);
                    const T *r3 = two ? in.row<T>(y + 2) : r2;  // a last single row reads no further than it needs
                    T *dst0 = out.row<T>(y), *dst1 = two ? out.row<T>(y + 1) : nullptr;
                    // Columns of samples s … s + count − 1 into slots at …: rows y−1…y+1 for the upper output, y…y+2
                    // for the lower.
                    auto sort = [&](qsizetype at, qsizetype s, qsizetype count) {
                        sortColumns(r0 + s, r1 + s, r2 + s, r3 + s, count, lo, low0 + at, mid0 + at, high0 + at, low1 + at, mid1 + at, high1 + at);
                    };
                    for (qsizetype i0 = 0; i0 < n; i0 += chunk) {
                        const qsizetype len = std::min(chunk, n - i0);
                        // Samples i0 − c … i0 + len + c; outside the row, the edge pixel's (replicated).
                        const qsizetype first = i0 - c, last = i0 + len + c;
                        const qsizetype inFirst = std::max<qsizetype>(first, 0), inLast = std::min<qsizetype>(last, n);
                        sort(inFirst - first, inFirst, inLast - inFirst);
                        for (qsizetype s0 = first; s0 < inFirst; ++s0)
                            sort(s0 - first, s0 + c, 1);
                        for (qsizetype s0 = inLast; s0 < last; ++s0)
                            sort(s0 - first, s0 - c, 1);
                        medians(low0, mid0, high0, c, len, lo, dst0 + i0);
                        if (two)
                            medians(low1, mid1, high1, c, len, lo, dst1 + i0);
                    }
                }
            });
        });
    }

private:
    // By value: GCC turns nested std::min/std::max of references into compare-and-blend, not pminuw/pmaxuw.
    static quint16 mn(quint16 a, quint16 b) { return a < b ? a : b; }
    static quint16 mx(quint16 a, quint16 b) { return a < b ? b : a; }

    template <typename T>
    static void sortColumns(const T *__restrict r0, const T *__restrict r1, const T *__restrict r2, const T *__restrict r3, qsizetype count,
                            int lo, quint16 *__restrict low0, quint16 *__restrict mid0, quint16 *__restrict high0,
                            quint16 *__restrict low1, quint16 *__restrict mid1, quint16 *__restrict high1)
    {
        for (qsizetype i = 0; i < count; ++i) {
            const quint16 a = quint16(int(r0[i]) - lo), b = quint16(int(r1[i]) - lo);
            const quint16 d = quint16(int(r2[i]) - lo), e = quint16(int(r3[i]) - lo);
            const quint16 p = mn(b, d), P = mx(b, d);  // shared by both columns
            low0[i] = mn(p, a);
            high0[i] = mx(P, a);
            mid0[i] = mx(p, mn(P, a));
            low1[i] = mn(p, e);
            high1[i] = mx(P, e);
            mid1[i] = mx(p, mn(P, e));
        }
    }

    /// Output samples 0 … len − 1 from the sorted columns at slots j, j + c, j + 2c.
    template <typename T>
    static void medians(const quint16 *__restrict low, const quint16 *__restrict mid, const quint16 *__restrict high, int c, qsizetype len,
                        int lo, T *__restrict dst)
    {
        for (qsizetype j = 0; j < len; ++j) {
            const quint16 maxLow = mx(mx(low[j], low[j + c]), low[j + 2 * c]);
            const quint16 minHigh = mn(mn(high[j], high[j + c]), high[j + 2 * c]);
            const quint16 m0 = mid[j], m1 = mid[j + c], m2 = mid[j + 2 * c];
            const quint16 midMid = mx(mn(m0, m1), mn(mx(m0, m1), m2));
            const quint16 result = mx(mn(maxLow, midMid), mn(mx(maxLow, midMid), minHigh));
            dst[j] = T(int(result) + lo);
        }
    }
};

/// Sobel gradient magnitude, √(gx² + gy²), per channel (MedJava's edge detect).
class EdgeFilter : public BuiltinFilter
{
public:
    EdgeFilter(QString d) : BuiltinFilter(std::move(d), 1) {}
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        // The magnitude is the same in the offset domain (differences only); the minimum added back by run3x3 is
        // taken away again, so a flat image gives 0 (clamped up to the minimum for signed data).
        const float lo = float(in.format.minValue);
        withBestIsa([&] {
            each3x3<quint16>(in, begin, end, out, [lo](const quint16 *a, const quint16 *b, const quint16 *d, auto ch) {
                constexpr int c = decltype(ch)::value;
                const float gx = float((a[c] + 2 * b[c] + d[c]) - (a[-c] + 2 * b[-c] + d[-c]));
                const float gy = float((d[-c] + 2 * d[0] + d[c]) - (a[-c] + 2 * a[0] + a[c]));
                return std::sqrt(gx * gx + gy * gy) - lo;
            });
        });
    }
};

/// The 3×3 emboss kernel (−1 −1 0 / −1 0 1 / 0 1 1) around mid-gray of the value range.
class EmbossFilter : public BuiltinFilter
{
public:
    EmbossFilter(QString d) : BuiltinFilter(std::move(d), 1) {}
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        // Mid-gray, in the offset domain.
        const int mid = int(divRound(qint64(in.format.maxValue) - in.format.minValue, 2));
        withBestIsa([&] {
            each3x3<quint16>(in, begin, end, out, [mid](const quint16 *a, const quint16 *b, const quint16 *d, auto ch) {
                constexpr int c = decltype(ch)::value;
                return mid - a[-c] - a[0] - b[-c] + b[c] + d[0] + d[c];
            });
        });
    }
};

/// MedJava's oil paint: the most frequent value of the 3×3 neighbourhood. Deeper images are binned into 256
/// ranges of their value range; the winning bin (the lowest on a tie) gives the mean of its values.
class OilPaintFilter : public BuiltinFilter
{
public:
    OilPaintFilter(QString d) : BuiltinFilter(std::move(d), 1) {}
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        const int range = in.format.maxValue - in.format.minValue + 1;
        int shift = 0;
        while ((range - 1) >> shift >= 256)
            ++shift;
        withBestIsa([&] {
            each3x3<quint16>(in, begin, end, out, [shift](const quint16 *a, const quint16 *b, const quint16 *d, auto ch) {
                constexpr int c = decltype(ch)::value;
                const int v[9] = {a[-c], a[0], a[c], b[-c], b[0], b[c], d[-c], d[0], d[c]};
                int bins[9];
                for (int i = 0; i < 9; ++i)
                    bins[i] = v[i] >> shift;
                // Without branches, so that it vectorises across pixels: score = count · 512 + (511 − bin); the
                // highest score is the most frequent bin, the lowest bin on a tie.
                // The 36 pairs once each (written out: a loop nest this size would not be unrolled, and then the
                // loop over pixels would not vectorise).
                int counts[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
#define SPECTRUM_PAIR(i, j) { const int e = bins[i] == bins[j] ? 1 : 0; counts[i] += e; counts[j] += e; }
                SPECTRUM_PAIR(0, 1) SPECTRUM_PAIR(0, 2) SPECTRUM_PAIR(0, 3) SPECTRUM_PAIR(0, 4) SPECTRUM_PAIR(0, 5) SPECTRUM_PAIR(0, 6)
                SPECTRUM_PAIR(0, 7) SPECTRUM_PAIR(0, 8) SPECTRUM_PAIR(1, 2) SPECTRUM_PAIR(1, 3) SPECTRUM_PAIR(1, 4) SPECTRUM_PAIR(1, 5)
                SPECTRUM_PAIR(1, 6) SPECTRUM_PAIR(1, 7) SPECTRUM_PAIR(1, 8) SPECTRUM_PAIR(2, 3) SPECTRUM_PAIR(2, 4) SPECTRUM_PAIR(2, 5)
                SPECTRUM_PAIR(2, 6) SPECTRUM_PAIR(2, 7) SPECTRUM_PAIR(2, 8) SPECTRUM_PAIR(3, 4) SPECTRUM_PAIR(3, 5) SPECTRUM_PAIR(3, 6)
                SPECTRUM_PAIR(3, 7) SPECTRUM_PAIR(3, 8) SPECTRUM_PAIR(4, 5) SPECTRUM_PAIR(4, 6) SPECTRUM_PAIR(4, 7) SPECTRUM_PAIR(4, 8)
                SPECTRUM_PAIR(5, 6) SPECTRUM_PAIR(5, 7) SPECTRUM_PAIR(5, 8) SPECTRUM_PAIR(6, 7) SPECTRUM_PAIR(6, 8) SPECTRUM_PAIR(7, 8)
#undef SPECTRUM_PAIR
                int best = 0;
                for (int i = 0; i < 9; ++i)
                    best = std::max(best, counts[i] * 512 + (511 - bins[i]));
                const int bestBin = 511 - (best & 511), count = best >> 9;
                int sum = 0;
                for (int i = 0; i < 9; ++i)
                    sum += bins[i] == bestBin ? v[i] : 0;
                // The rounded mean, (2·sum + count) / (2·count) ≥ 0: in float, exact here (far from the next integer).
                return int(float(2 * sum + count) / float(2 * count));
            });
        });
    }
};

/// Separable Gaussian of `sigma` (radius ⌈3σ⌉), horizontal pass first: each input row is filtered across once
/// per band and kept while output rows need it, then each output row is the vertical sum of 2r + 1 of those.
/// The kernel is symmetric, so pairs of samples share a multiplication. The base of blur and unsharp mask.
/// out[i] = w[0]·t[0][i] + Σ k = 1 … R of w[k]·(t[2k − 1][i] + t[2k][i]), summed in that order: a symmetric
/// kernel of radius R in one pass over the rows it reads (t[0] the centre, t[2k − 1] and t[2k] at distance k).
/// The outputs never overlap the taps.
template <int R>
void symmetricTapsFixed(const float *const *t, const float *w, float *out, qsizetype n)
{
    SPECTRUM_IVDEP
    for (qsizetype i = 0; i < n; ++i) {
        float acc = w[0] * t[0][i];
        for (int k = 1; k <= R; ++k)
            acc += w[k] * (t[2 * k - 1][i] + t[2 * k][i]);
        out[i] = acc;
    }
}

inline void symmetricTaps(int r, const float *const *t, const float *w, float *out, qsizetype n)
{
    switch (r) {
    case 1: return symmetricTapsFixed<1>(t, w, out, n);
    case 2: return symmetricTapsFixed<2>(t, w, out, n);
    case 3: return symmetricTapsFixed<3>(t, w, out, n);
    case 4: return symmetricTapsFixed<4>(t, w, out, n);
    case 5: return symmetricTapsFixed<5>(t, w, out, n);
    case 6: return symmetricTapsFixed<6>(t, w, out, n);
    default:
        break;
    }
    for (qsizetype i = 0; i < n; ++i)
        out[i] = w[0] * t[0][i];
    for (int k = 1; k <= r; ++k) {
        const float wk = w[k], *left = t[2 * k - 1], *right = t[2 * k];
        for (qsizetype i = 0; i < n; ++i)
            out[i] += wk * (left[i] + right[i]);
    }
}

class GaussianBase : public BuiltinFilter
{
public:
    GaussianBase(QString d, double sigma) : BuiltinFilter(std::move(d), std::max(1, int(std::ceil(3 * sigma))))
    {
        const int r = halo();
        double total = 0;
        for (int k = -r; k <= r; ++k)
            total += std::exp(-(k * k) / (2 * sigma * sigma));
        for (int k = 0; k <= r; ++k)
            m_weights.push_back(float(std::exp(-(k * k) / (2 * sigma * sigma)) / total));
    }

protected:
    /// Calls deliver(y, blurred) for each output row y of [begin, end): its samples blurred, in the offset domain.
    template <typename T, typename Deliver>
    void blurRows(const RowsIn &in, int begin, int end, Deliver deliver) const
    {
        const int r = halo(), c = in.format.channels;
        const qsizetype n = in.format.samplesPerRow();
        const int ring = 2 * r + 1;
        std::vector<std::vector<float>> rows(static_cast<size_t>(ring));
        std::vector<int> rowOf(static_cast<size_t>(ring), INT_MIN);
        std::vector<float> padded, blurred(static_cast<size_t>(n));
        std::vector<const float *> taps(static_cast<size_t>(ring)), rowTaps(static_cast<size_t>(ring));
        const float *w = m_weights.data();
        auto across = [&](int y) -> const float * {  // input row y (clamped), filtered horizontally
            y = std::clamp(y, 0, in.format.height - 1);
            const size_t slot = size_t(y % ring);
            if (rowOf[slot] != y) {
                paddedRow<T, float>(in, y, r, padded);
                std::vector<float> &dst = rows[slot];
                dst.resize(size_t(n));
                const float *p = padded.data() + qsizetype(r) * c;
                taps[0] = p;
                for (int k = 1; k <= r; ++k) {
                    taps[size_t(2 * k - 1)] = p - k * c;
                    taps[size_t(2 * k)] = p + k * c;
                }
                symmetricTaps(r, taps.data(), w, dst.data(), n);
                rowOf[slot] = y;
            }
            return rows[slot].data();
        };
        for (int y = begin; y < end; ++y) {
            rowTaps[0] = across(y);
            for (int k = 1; k <= r; ++k) {
                rowTaps[size_t(2 * k - 1)] = across(y - k);
                rowTaps[size_t(2 * k)] = across(y + k);
            }
            symmetricTaps(r, rowTaps.data(), w, blurred.data(), n);
            deliver(y, blurred.data());
        }
    }

private:
    std::vector<float> m_weights;  ///< centre, then distance 1, 2, … r
};

class GaussianFilter : public GaussianBase
{
public:
    using GaussianBase::GaussianBase;
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withBestIsa([&] {
            withSampleType(in.format.type, [&](auto t) {
                using T = decltype(t);
                const float lo = float(in.format.minValue);
                blurRows<T>(in, begin, end, [&](int y, const float *blurred) {
                    T *dst = out.row<T>(y);
                    for (qsizetype i = 0; i < in.format.samplesPerRow(); ++i)
                        dst[i] = T(clampValue(blurred[i] + lo, out.format));
                });
            });
        });
    }
};

/// v + amount · (v − Gaussian(v)).
class UnsharpFilter : public GaussianBase
{
public:
    UnsharpFilter(QString d, double sigma, double amount) : GaussianBase(std::move(d), sigma), m_amount(float(amount)) {}
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withBestIsa([&] {
            withSampleType(in.format.type, [&](auto t) {
                using T = decltype(t);
                const float lo = float(in.format.minValue), amount = m_amount;
                blurRows<T>(in, begin, end, [&](int y, const float *blurred) {
                    const T *src = in.row<T>(y);
                    T *dst = out.row<T>(y);
                    for (qsizetype i = 0; i < in.format.samplesPerRow(); ++i) {
                        const float v = float(int(src[i])) - lo;
                        dst[i] = T(clampValue(v + amount * (v - blurred[i]) + lo, out.format));
                    }
                });
            });
        });
    }

private:
    float m_amount;
};

// ---- factories ---------------------------------------------------------------------------------------------

class BuiltinFactory : public FilterFactory
{
public:
    using Make = std::function<std::unique_ptr<Filter>(const QString &description, const QVariantMap &values)>;
    BuiltinFactory(FilterInfo info, Make make) : m_info(std::move(info)), m_make(std::move(make)) { m_info.origin = QStringLiteral("built-in"); }
    FilterInfo info() const override { return m_info; }
    std::unique_ptr<Filter> create(const QVariantMap &values) const override
    {
        return m_make(describeFilter(m_info.name, m_info.parameters, values), values);
    }

private:
    FilterInfo m_info;
    Make m_make;
};

FilterParameter number(const QString &name, const QString &description, double def, double min, double max, bool integer = false)
{
    return FilterParameter{name, description, def, min, max, integer, {}};
}

FilterParameter choice(const QString &name, const QString &description, const QStringList &choices)
{
    return FilterParameter{name, description, choices.value(0), 0, 0, false, choices};
}

template <typename F>
FilterFactoryPtr factory(const QString &name, const QString &description, QList<FilterParameter> params, F make, QStringList aliases = {})
{
    return std::make_shared<BuiltinFactory>(FilterInfo{name, description, std::move(params), {}, std::move(aliases)}, make);
}

QStringList names(std::initializer_list<const char *> list)
{
    QStringList out;
    for (const char *n : list)
        out << QString::fromLatin1(n);
    return out;
}

} // namespace

namespace {
// Clang (the fuzzing build) knows the features, not GCC's x86-64 level names.
bool cpuHasV3()
{
    __builtin_cpu_init();
#ifdef __clang__
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
#else
    return __builtin_cpu_supports("x86-64-v3");
#endif
}

bool cpuHasV4()
{
    __builtin_cpu_init();
#ifdef __clang__
    return cpuHasV3() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq")
        && __builtin_cpu_supports("avx512vl");
#else
    return __builtin_cpu_supports("x86-64-v4");
#endif
}

int &wideSetting()
{
    static int wide = [] { return cpuHasV3() && qEnvironmentVariable("SPECTRUM_FILTER_ISA") != QLatin1String("baseline") ? 1 : 0; }();
    return wide;
}
} // namespace

bool useWideVectors() { return wideSetting() != 0; }

bool useWidestVectors()
{
    static const bool has = cpuHasV4();
    return has && useWideVectors();
}

qint64 setCacheBypassLimit(qint64 bytes) { return std::exchange(cacheBypassLimit(), bytes); }

void setWideVectors(bool wide)
{
    wideSetting() = wide && cpuHasV3() ? 1 : 0;
}

QList<FilterFactoryPtr> builtinFilters()
{
    using V = const QVariantMap &;
    using D = const QString &;
    return {
        factory(QStringLiteral("blur"), QStringLiteral("3×3 box blur"), {},
                [](D d, V) { return std::make_unique<BoxBlurFilter>(d); }, names({"box", "mean"})),
        factory(QStringLiteral("despeckle"), QStringLiteral("3×3 median: removes isolated specks"), {},
                [](D d, V) { return std::make_unique<DespeckleFilter>(d); }, names({"median"})),
        factory(QStringLiteral("edge"), QStringLiteral("edge detect: Sobel gradient magnitude"), {},
                [](D d, V) { return std::make_unique<EdgeFilter>(d); }, names({"sobel"})),
        factory(QStringLiteral("emboss"), QStringLiteral("3×3 emboss around mid-gray"), {},
                [](D d, V) { return std::make_unique<EmbossFilter>(d); }),
        factory(QStringLiteral("flip"), QStringLiteral("mirror the image"),
                {choice(QStringLiteral("axis"), QStringLiteral("horizontal (left–right) or vertical (top–bottom)"), {QStringLiteral("horizontal"), QStringLiteral("vertical")})},
                [](D d, V v) { return std::make_unique<FlipFilter>(d, v.value(QStringLiteral("axis")).toString() == QLatin1String("vertical")); }),
        factory(QStringLiteral("gaussian"), QStringLiteral("Gaussian blur"),
                {number(QStringLiteral("sigma"), QStringLiteral("standard deviation in pixels"), 1.0, 0.1, 20)},
                [](D d, V v) { return std::make_unique<GaussianFilter>(d, v.value(QStringLiteral("sigma")).toDouble()); }, names({"gauss"})),
        factory(QStringLiteral("invert"), QStringLiteral("invert within the stored value range"), {},
                [](D d, V) { return std::make_unique<InvertFilter>(d, 0); }, names({"negate", "negative"})),
        factory(QStringLiteral("oilpaint"), QStringLiteral("3×3 histogram mode (MedJava's oil paint; 16-bit binned into 256 ranges)"), {},
                [](D d, V) { return std::make_unique<OilPaintFilter>(d); }, names({"oil"})),
        factory(QStringLiteral("pixelize"), QStringLiteral("mean of N×N blocks"),
                {number(QStringLiteral("size"), QStringLiteral("block side in pixels"), 4, 2, 256, true)},
                [](D d, V v) { return std::make_unique<PixelizeFilter>(d, v.value(QStringLiteral("size")).toInt()); }, names({"pixelate", "mosaic"})),
        factory(QStringLiteral("rotate"), QStringLiteral("rotate clockwise"),
                {choice(QStringLiteral("angle"), QStringLiteral("degrees clockwise"), {QStringLiteral("90"), QStringLiteral("180"), QStringLiteral("270")})},
                [](D d, V v) { return std::make_unique<RotateFilter>(d, v.value(QStringLiteral("angle")).toString().toInt()); }),
        factory(QStringLiteral("sharpen"), QStringLiteral("MedJava's sharpen: (v − p·mean) / (1 − p) over 3×3"),
                {number(QStringLiteral("p"), QStringLiteral("strength (0: none)"), 0.5, 0, 0.95)},
                [](D d, V v) { return std::make_unique<SharpenFilter>(d, v.value(QStringLiteral("p")).toDouble()); }),
        factory(QStringLiteral("spread"), QStringLiteral("each pixel from a random neighbour (seeded: reproducible)"),
                {number(QStringLiteral("radius"), QStringLiteral("how far a neighbour may be, in pixels"), 1, 1, 16, true),
                 number(QStringLiteral("seed"), QStringLiteral("random seed"), 1, 0, 4294967295.0, true)},
                [](D d, V v) { return std::make_unique<SpreadFilter>(d, v.value(QStringLiteral("radius")).toInt(), quint64(v.value(QStringLiteral("seed")).toDouble())); }),
        factory(QStringLiteral("unsharp"), QStringLiteral("unsharp mask: v + amount·(v − Gaussian(v))"),
                {number(QStringLiteral("amount"), QStringLiteral("how much of the detail to add"), 1.0, 0, 10),
                 number(QStringLiteral("radius"), QStringLiteral("Gaussian sigma in pixels"), 2.0, 0.1, 20)},
                [](D d, V v) { return std::make_unique<UnsharpFilter>(d, v.value(QStringLiteral("radius")).toDouble(), v.value(QStringLiteral("amount")).toDouble()); }, names({"unsharpmask", "usm"})),
        factory(QStringLiteral("zoom"), QStringLiteral("resize by a factor"),
                {number(QStringLiteral("factor"), QStringLiteral("scale"), 2.0, 0.05, 16),
                 choice(QStringLiteral("method"), QStringLiteral("interpolation"), {QStringLiteral("bilinear"), QStringLiteral("bicubic")})},
                [](D d, V v) { return std::make_unique<ZoomFilter>(d, v.value(QStringLiteral("factor")).toDouble(), v.value(QStringLiteral("method")).toString() == QLatin1String("bicubic")); }, names({"resize", "scale"})),
    };
}

} // namespace spectrum::filters
