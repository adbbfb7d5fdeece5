// SPDX-License-Identifier: Apache-2.0
#include "volumes/reformatkernels.h"

#include "filters/kernels.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>
#include <type_traits>
#include <limits>
#include <cmath>
#include <vector>

namespace spectrum::reformatting {

namespace {

constexpr double kSnap = 1e-4;    // index coordinates this close to a whole number are on a voxel centre
constexpr float kWeight = 1e-5f;  // an interpolation weight below this does not need its voxel

/// The columns [a, b) of a row c(i) = c0 + i·d whose coordinate lies within [0, n − 1] (every axis), clamped to
/// [0, width).
void insideRange(const double c0[3], const double d[3], const int n[3], int width, int *a, int *b)
{
    double lo = 0, hi = width - 1;
    for (int k = 0; k < 3; ++k) {
        const double top = n[k] - 1;
        if (std::abs(d[k]) < 1e-12) {
            if (c0[k] < -kSnap || c0[k] > top + kSnap)
                hi = -1;
            continue;
        }
        double t0 = (-kSnap - c0[k]) / d[k], t1 = (top + kSnap - c0[k]) / d[k];
        if (t0 > t1)
            std::swap(t0, t1);
        lo = std::max(lo, std::ceil(t0));
        hi = std::min(hi, std::floor(t1));
    }
    *a = hi < lo ? 0 : int(lo);
    *b = hi < lo ? 0 : int(hi) + 1;
}

bool whole(double v) { return std::abs(v - std::nearbyint(v)) < kSnap; }

/// A weight across slots so small that its slot is not needed is none at all: the value then takes nothing from a
/// slot that may be missing, refused or still being written.
inline float snapped(float fz) { return fz < kWeight ? 0.0f : fz > 1.0f - kWeight ? 1.0f : fz; }

/// The slots a trilinear sample at slot coordinate iz + fz needs, as a PixelAbsence (0: all in).
inline quint8 slotsNeeded(const quint8 *use, int iz, float fz)
{
    return std::max(fz < 1.0f - kWeight ? use[iz] : quint8(0), fz > kWeight ? use[iz + 1] : quint8(0));
}

/// A row of trilinear samples: its start and step in index space, the grid's bounds and strides.
struct Trilinear
{
    static constexpr int ahead = 32;  ///< samples: the voxels a sample needs are asked for this far ahead
    Trilinear(const CutJob &job, const double start[3])
        : job(job), sx(float(start[0])), sy(float(start[1])), sz(float(start[2])), dx(float(job.columnStep[0])), dy(float(job.columnStep[1])),
          dz(float(job.columnStep[2])), topX(float(job.nx - 1)), topY(float(job.ny - 1)), topZ(float(job.nz - 1)), lastX(job.nx - 2),
          lastY(job.ny - 2), lastZ(job.nz - 2), rowStride(job.nx), slotStride(qsizetype(job.nx) * job.ny),
          wideIndexFits(qsizetype(job.nx) * job.ny * job.nz < (qsizetype(1) << 31) - 2)
    {
    }
    /// The first of the eight voxels sample `i` needs.
    template <typename T>
    const T *voxel(int i) const
    {
        const float x = std::clamp(sx + float(i) * dx, 0.0f, topX), y = std::clamp(sy + float(i) * dy, 0.0f, topY),
                    z = std::clamp(sz + float(i) * dz, 0.0f, topZ);
        return reinterpret_cast<const T *>(job.voxels) + std::min(int(x), lastX) + std::min(int(y), lastY) * rowStride + std::min(int(z), lastZ) * slotStride;
    }
    const CutJob &job;
    float sx, sy, sz, dx, dy, dz, topX, topY, topZ;
    int lastX, lastY, lastZ;
    qsizetype rowStride, slotStride;
    bool wideIndexFits;  ///< voxel indices fit the 32-bit lanes of the wide version
};

#ifndef SPECTRUM_FILTERS_ONE_ISA
/// Voxel pairs (a voxel and its neighbour along the row, as one 32-bit lane) interpolated at `f` along the row.
template <typename T>
[[gnu::target("arch=x86-64-v3"), gnu::always_inline]] inline __m256 lerpPairs(__m256i pair, __m256 f)
{
    const __m256i low = std::is_signed_v<T> ? _mm256_srai_epi32(_mm256_slli_epi32(pair, 16), 16) : _mm256_and_si256(pair, _mm256_set1_epi32(0xffff));
    const __m256i high = std::is_signed_v<T> ? _mm256_srai_epi32(pair, 16) : _mm256_srli_epi32(pair, 16);
    const __m256 p0 = _mm256_cvtepi32_ps(low), p1 = _mm256_cvtepi32_ps(high);
    return _mm256_add_ps(p0, _mm256_mul_ps(f, _mm256_sub_ps(p1, p0)));
}

/// Trilinear samples in blocks (AVX2), without gathers: where each sample's voxels lie and its weights, eight at a time;
/// then its four voxel pairs (a voxel and its neighbour along the row, one 32-bit load each), one sample at a
/// time — plain loads, many in flight, where the processor's gathers are slow; then the interpolation, eight at a
/// time. The same arithmetic, in the same order, as the scalar loop: the same values. Returns where the scalar
/// loop carries on.
template <typename T>
[[gnu::target("arch=x86-64-v3")]] int trilinearWide(const Trilinear &t, int a, int b, float *value, quint8 *state)
{
    constexpr int block = 64;
    alignas(32) int atLow[block], atHigh[block], slotOf[block];
    alignas(32) float fracX[block], fracY[block], fracZ[block];
    alignas(32) quint32 pair[4][block];
    const __m256 sx = _mm256_set1_ps(t.sx), sy = _mm256_set1_ps(t.sy), sz = _mm256_set1_ps(t.sz);
    const __m256 dx = _mm256_set1_ps(t.dx), dy = _mm256_set1_ps(t.dy), dz = _mm256_set1_ps(t.dz);
    const __m256 zero = _mm256_setzero_ps(), topX = _mm256_set1_ps(t.topX), topY = _mm256_set1_ps(t.topY), topZ = _mm256_set1_ps(t.topZ);
    const __m256i lastX = _mm256_set1_epi32(t.lastX), lastY = _mm256_set1_epi32(t.lastY), lastZ = _mm256_set1_epi32(t.lastZ);
    const __m256i rowStride = _mm256_set1_epi32(int(t.rowStride)), slotStride = _mm256_set1_epi32(int(t.slotStride));
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const T *vox = reinterpret_cast<const T *>(t.job.voxels);
    const qsizetype r = t.rowStride;
    const bool allIn = t.job.allSlotsIn;
    int i = a;
    while (i + 8 <= b) {
        const int m = std::min(block, (b - i) & ~7);
        for (int j = 0; j < m; j += 8) {
            const __m256 fi = _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_set1_epi32(i + j), lanes));
            const __m256 x = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(sx, _mm256_mul_ps(fi, dx)), zero), topX);
            const __m256 y = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(sy, _mm256_mul_ps(fi, dy)), zero), topY);
            const __m256 z = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(sz, _mm256_mul_ps(fi, dz)), zero), topZ);
            const __m256i ix = _mm256_min_epi32(_mm256_cvttps_epi32(x), lastX), iy = _mm256_min_epi32(_mm256_cvttps_epi32(y), lastY),
                          iz = _mm256_min_epi32(_mm256_cvttps_epi32(z), lastZ);
            __m256 fz = _mm256_sub_ps(z, _mm256_cvtepi32_ps(iz));
            fz = _mm256_blendv_ps(fz, zero, _mm256_cmp_ps(fz, _mm256_set1_ps(kWeight), _CMP_LT_OQ));
            fz = _mm256_blendv_ps(fz, _mm256_set1_ps(1.0f), _mm256_cmp_ps(fz, _mm256_set1_ps(1.0f - kWeight), _CMP_GT_OQ));
            _mm256_store_ps(fracX + j, _mm256_sub_ps(x, _mm256_cvtepi32_ps(ix)));
            _mm256_store_ps(fracY + j, _mm256_sub_ps(y, _mm256_cvtepi32_ps(iy)));
            _mm256_store_ps(fracZ + j, fz);
            _mm256_store_si256(reinterpret_cast<__m256i *>(slotOf + j), iz);
            // As the scalar loop: a slot whose weight snapped to none is not read (the other one is, twice).
            const __m256i at = _mm256_add_epi32(ix, _mm256_add_epi32(_mm256_mullo_epi32(iy, rowStride), _mm256_mullo_epi32(iz, slotStride)));
            const __m256i upper = _mm256_castps_si256(_mm256_cmp_ps(fz, _mm256_set1_ps(1.0f), _CMP_EQ_OQ));
            const __m256i lower = _mm256_castps_si256(_mm256_cmp_ps(fz, zero, _CMP_EQ_OQ));
            _mm256_store_si256(reinterpret_cast<__m256i *>(atLow + j), _mm256_add_epi32(at, _mm256_and_si256(upper, slotStride)));
            _mm256_store_si256(reinterpret_cast<__m256i *>(atHigh + j), _mm256_add_epi32(at, _mm256_andnot_si256(lower, slotStride)));
        }
        for (int j = 0; j < m; ++j) {
            const T *low = vox + atLow[j], *high = vox + atHigh[j];
            std::memcpy(&pair[0][j], low, 4);
            std::memcpy(&pair[1][j], low + r, 4);
            std::memcpy(&pair[2][j], high, 4);
            std::memcpy(&pair[3][j], high + r, 4);
        }
        for (int j = 0; j < m; j += 8) {
            const __m256 fx = _mm256_load_ps(fracX + j), fy = _mm256_load_ps(fracY + j), fz = _mm256_load_ps(fracZ + j);
            const __m256 c00 = lerpPairs<T>(_mm256_load_si256(reinterpret_cast<const __m256i *>(pair[0] + j)), fx);
            const __m256 c10 = lerpPairs<T>(_mm256_load_si256(reinterpret_cast<const __m256i *>(pair[1] + j)), fx);
            const __m256 c01 = lerpPairs<T>(_mm256_load_si256(reinterpret_cast<const __m256i *>(pair[2] + j)), fx);
            const __m256 c11 = lerpPairs<T>(_mm256_load_si256(reinterpret_cast<const __m256i *>(pair[3] + j)), fx);
            const __m256 c0 = _mm256_add_ps(c00, _mm256_mul_ps(fy, _mm256_sub_ps(c10, c00)));
            const __m256 c1 = _mm256_add_ps(c01, _mm256_mul_ps(fy, _mm256_sub_ps(c11, c01)));
            _mm256_storeu_ps(value + i + j, _mm256_add_ps(c0, _mm256_mul_ps(fz, _mm256_sub_ps(c1, c0))));
        }
        if (allIn)
            std::memset(state + i, 0, size_t(m));
        else
            for (int j = 0; j < m; ++j)
                state[i + j] = slotsNeeded(t.job.slotAbsence, slotOf[j], fracZ[j]);
        i += m;
    }
    return i;
}
#endif

/// One sample row: value and state (PixelAbsence) per output pixel, from voxels of type T.
template <typename T>
void sampleRow(const CutJob &job, const double start[3], float *value, quint8 *state)
{
    const int n[3] = {job.nx, job.ny, job.nz};
    int a = 0, b = 0;
    insideRange(start, job.columnStep, n, job.width, &a, &b);
    std::fill(state, state + a, quint8(PixelAbsence::Outside));
    std::fill(state + b, state + job.width, quint8(PixelAbsence::Outside));
    if (a >= b)
        return;
    const T *vox = reinterpret_cast<const T *>(job.voxels);
    const qsizetype rowStride = job.nx, slotStride = qsizetype(job.nx) * job.ny;
    const quint8 *use = job.slotAbsence;
    const bool integral = whole(start[0]) && whole(start[1]) && whole(start[2]) && whole(job.columnStep[0]) && whole(job.columnStep[1])
        && whole(job.columnStep[2]);
    if (integral || job.interpolation == Interpolation::Nearest) {
        // Whole voxels: a strided copy when the row runs along the grid, the nearest voxel otherwise.
        if (integral) {
            const qsizetype x0 = qsizetype(std::nearbyint(start[0])), y0 = qsizetype(std::nearbyint(start[1])), z0 = qsizetype(std::nearbyint(start[2]));
            const qsizetype dx = qsizetype(std::nearbyint(job.columnStep[0])), dy = qsizetype(std::nearbyint(job.columnStep[1])),
                            dz = qsizetype(std::nearbyint(job.columnStep[2]));
            const T *p = vox + x0 + y0 * rowStride + z0 * slotStride;
            const qsizetype stride = dx + dy * rowStride + dz * slotStride;
            if (dz == 0) {
                const quint8 s = job.allSlotsIn ? 0 : use[z0 + a * dz];
                std::fill(state + a, state + b, s);
                if (stride == 1) {
                    const T *q = p + a;
                    SPECTRUM_IVDEP
                    for (int i = a; i < b; ++i)
                        value[i] = float(q[i - a]);
                } else {
                    for (int i = a; i < b; ++i)
                        value[i] = float(p[qsizetype(i) * stride]);
                }
            } else {
                for (int i = a; i < b; ++i) {
                    value[i] = float(p[qsizetype(i) * stride]);
                    state[i] = job.allSlotsIn ? 0 : use[z0 + i * dz];
                }
            }
            return;
        }
        for (int i = a; i < b; ++i) {
            const int x = std::clamp(int(std::lround(start[0] + i * job.columnStep[0])), 0, job.nx - 1);
            const int y = std::clamp(int(std::lround(start[1] + i * job.columnStep[1])), 0, job.ny - 1);
            const int z = std::clamp(int(std::lround(start[2] + i * job.columnStep[2])), 0, job.nz - 1);
            value[i] = float(vox[x + y * rowStride + z * slotStride]);
            state[i] = job.allSlotsIn ? 0 : use[z];
        }
        return;
    }
    // Trilinear. Coordinates in float from the row's start (no running sum: no drift), clamped into the grid.
    const Trilinear t(job, start);
    int i = a;
#ifndef SPECTRUM_FILTERS_ONE_ISA
    if (filters::useWideVectors() && t.wideIndexFits)
        i = trilinearWide<T>(t, a, b, value, state);
#endif
    for (; i < b; ++i) {
        {
            // Across slots, nearly every sample needs cache lines no sample before it did: asked for early, many
            // at once, they come in parallel instead of one miss after another.
            const T *q = t.voxel<T>(i + Trilinear::ahead);
            __builtin_prefetch(q);
            __builtin_prefetch(q + t.rowStride);
            __builtin_prefetch(q + t.slotStride);
            __builtin_prefetch(q + t.slotStride + t.rowStride);
        }
        const float x = std::clamp(t.sx + float(i) * t.dx, 0.0f, t.topX);
        const float y = std::clamp(t.sy + float(i) * t.dy, 0.0f, t.topY);
        const float z = std::clamp(t.sz + float(i) * t.dz, 0.0f, t.topZ);
        const int ix = std::min(int(x), t.lastX), iy = std::min(int(y), t.lastY), iz = std::min(int(z), t.lastZ);
        const float fx = x - float(ix), fy = y - float(iy), fz = snapped(z - float(iz));
        const T *p = vox + ix + iy * t.rowStride + iz * t.slotStride;
        const qsizetype r = t.rowStride;
        // A slot whose weight snapped to none is not read — it may be missing, or being written — and the value is
        // then exactly the other slot's (both pairs read from it).
        const T *low = fz == 1.0f ? p + t.slotStride : p, *high = fz == 0.0f ? p : p + t.slotStride;
        const float c00 = float(low[0]) + fx * (float(low[1]) - float(low[0]));
        const float c10 = float(low[r]) + fx * (float(low[r + 1]) - float(low[r]));
        const float c01 = float(high[0]) + fx * (float(high[1]) - float(high[0]));
        const float c11 = float(high[r]) + fx * (float(high[r + 1]) - float(high[r]));
        const float c0 = c00 + fy * (c10 - c00), c1 = c01 + fy * (c11 - c01);
        value[i] = c0 + fz * (c1 - c0);
        state[i] = job.allSlotsIn ? 0 : slotsNeeded(use, iz, fz);
    }
}

/// Rounds to the nearest whole value (an interpolated sample; projections of whole voxels are whole already) and
/// clamps to the volume's 16 bits.
inline int toVoxel(float v, bool isSigned)
{
    const float r = std::nearbyint(v);
    return int(isSigned ? std::clamp(r, -32768.0f, 32767.0f) : std::clamp(r, 0.0f, 65535.0f));
}

/// The mean of `count` whole samples summing to `sum`, rounded half away from zero, exactly.
inline int meanOf(double sum, int count)
{
    const double q = sum / count;
    return int(q < 0 ? -std::floor(-q + 0.5) : std::floor(q + 0.5));
}

#ifndef SPECTRUM_FILTERS_ONE_ISA
/// The present pixels of a row of trilinear samples rounded to 16 bits, padding where absent: sixteen at a time,
/// the same values as toVoxel (round to nearest even, saturate). Returns where the scalar loop carries on.
[[gnu::target("arch=x86-64-v3")]] int finishWide(const float *value, const quint8 *ab, int w, bool isSigned, int padding, quint16 *o)
{
    const __m256i pad = _mm256_set1_epi16(short(padding));
    int i = 0;
    for (; i + 16 <= w; i += 16) {
        // Interpolated samples lie within the voxels' range: whole to 32 bits, then saturated to 16.
        const __m256i lo = _mm256_cvtps_epi32(_mm256_loadu_ps(value + i)), hi = _mm256_cvtps_epi32(_mm256_loadu_ps(value + i + 8));
        const __m256i packed = _mm256_permute4x64_epi64(isSigned ? _mm256_packs_epi32(lo, hi) : _mm256_packus_epi32(lo, hi), 0xd8);
        const __m256i absent = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(ab + i)));
        const __m256i present = _mm256_cmpeq_epi16(absent, _mm256_setzero_si256());
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(o + i), _mm256_blendv_epi8(pad, packed, present));
    }
    return i;
}

/// tallyRow thirty-two pixels at a time. Returns where the scalar loop carries on.
[[gnu::target("arch=x86-64-v3")]] int tallyWide(const quint16 *o, const quint8 *ab, int w, int padding, CutTally &t)
{
    const __m256i pad = _mm256_set1_epi16(short(padding)), zero = _mm256_setzero_si256();
    __m256i used = zero;
    qint64 kinds[4] = {};  // counted here, written once: the bands' tallies lie side by side
    int i = 0;
    for (; i + 32 <= w; i += 32) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(ab + i));
        for (int k = 1; k < 4; ++k)
            kinds[k] += __builtin_popcount(unsigned(_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, _mm256_set1_epi8(char(k))))));
        const __m256i lowPresent = _mm256_cmpeq_epi16(_mm256_cvtepu8_epi16(_mm256_castsi256_si128(a)), zero);
        const __m256i highPresent = _mm256_cmpeq_epi16(_mm256_cvtepu8_epi16(_mm256_extracti128_si256(a, 1)), zero);
        const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(o + i)), v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(o + i + 16));
        used = _mm256_or_si256(used, _mm256_and_si256(lowPresent, _mm256_cmpeq_epi16(v0, pad)));
        used = _mm256_or_si256(used, _mm256_and_si256(highPresent, _mm256_cmpeq_epi16(v1, pad)));
    }
    for (int k = 1; k < 4; ++k)
        t.pixels[k] += kinds[k];
    t.paddingUsed = t.paddingUsed || !_mm256_testz_si256(used, used);
    return i;
}
#endif

/// Adds a finished row to `t`: its pixels of each PixelAbsence, and whether a present one holds the padding value.
void tallyRow(const quint16 *o, const quint8 *ab, int w, int padding, CutTally &t)
{
    const qint64 before = t.pixels[1] + t.pixels[2] + t.pixels[3];
    int i = 0;
#ifndef SPECTRUM_FILTERS_ONE_ISA
    if (filters::useWideVectors())
        i = tallyWide(o, ab, w, padding, t);
#endif
    const quint16 pad = quint16(padding);
    qint64 kinds[4] = {};
    bool used = false;
    for (; i < w; ++i) {
        ++kinds[ab[i] & 3];
        used = used || (ab[i] == 0 && o[i] == pad);
    }
    for (int k = 1; k < 4; ++k)
        t.pixels[k] += kinds[k];
    t.paddingUsed = t.paddingUsed || used;
    t.pixels[0] += w - (t.pixels[1] + t.pixels[2] + t.pixels[3] - before);
}

/// A row of a plane on the voxel grid along one slot (the standard planes): where its samples lie and which slot.
struct GridRow
{
    int a = 0, b = 0;           ///< the columns inside the volume
    qsizetype base = 0;         ///< voxel index of column 0 (may lie outside: only [a, b) is read)
    qsizetype stride = 0;       ///< voxels from one column to the next
    int slot = 0;
};

GridRow gridRow(const CutJob &job, const double start[3])
{
    GridRow g;
    const int n[3] = {job.nx, job.ny, job.nz};
    insideRange(start, job.columnStep, n, job.width, &g.a, &g.b);
    const qsizetype x0 = qsizetype(std::nearbyint(start[0])), y0 = qsizetype(std::nearbyint(start[1]));
    const qsizetype dx = qsizetype(std::nearbyint(job.columnStep[0])), dy = qsizetype(std::nearbyint(job.columnStep[1]));
    g.slot = int(std::nearbyint(start[2]));
    g.stride = dx + dy * job.nx;
    g.base = x0 + y0 * job.nx + qsizetype(g.slot) * job.nx * job.ny;
    return g;
}

/// Whether every sample of `job` is a voxel centre and each output row runs within one slot: the standard planes,
/// read as voxels without interpolation, a row at a time.
bool onGrid(const CutJob &job)
{
    for (int k = 0; k < 3; ++k)
        if (!whole(job.origin[k]) || !whole(job.columnStep[k]) || !whole(job.rowStep[k]) || !whole(job.sampleStep[k]))
            return false;
    return std::nearbyint(job.columnStep[2]) == 0;
}

template <typename T>
void cutGridRows(const CutJob &job, int first, int last, quint16 *out, quint8 *absence, CutTally &tally)
{
    const int w = job.width;
    const T *vox = reinterpret_cast<const T *>(job.voxels);
    const size_t n = size_t(w);
    std::vector<int> acc(n);
    std::vector<quint8> worst(n);
    std::vector<quint16> count(n);
    for (int r = first; r < last; ++r) {
        T *o = reinterpret_cast<T *>(out + qsizetype(r - first) * w);
        quint8 *ab = absence + qsizetype(r - first) * w;
        double start[3];
        for (int k = 0; k < 3; ++k)
            start[k] = job.origin[k] + r * job.rowStep[k];
        if (job.samples == 1) {
            const GridRow g = gridRow(job, start);
            const quint8 why = g.a < g.b && !job.allSlotsIn ? job.slotAbsence[g.slot] : 0;
            std::fill(ab, ab + g.a, quint8(PixelAbsence::Outside));
            std::fill(ab + g.b, ab + w, quint8(PixelAbsence::Outside));
            std::fill(ab + g.a, ab + g.b, why);
            std::fill(o, o + w, T(job.padding));
            if (g.a < g.b && why == 0) {
                const T *p = vox + g.base;
                if (g.stride == 1)
                    std::copy(p + g.a, p + g.b, o + g.a);
                else
                    for (int i = g.a; i < g.b; ++i)
                        o[i] = p[qsizetype(i) * g.stride];
            }
            tallyRow(reinterpret_cast<const quint16 *>(o), ab, w, job.padding, tally);
            continue;
        }
        const int init = job.mode == SlabMode::Mip ? std::numeric_limits<int>::min() : job.mode == SlabMode::MinIp ? std::numeric_limits<int>::max() : 0;
        std::fill(acc.begin(), acc.end(), init);
        std::fill(worst.begin(), worst.end(), quint8(0));
        std::fill(count.begin(), count.end(), quint16(0));
        for (int s = 0; s < job.samples; ++s) {
            double at[3];
            for (int k = 0; k < 3; ++k)
                at[k] = start[k] + s * job.sampleStep[k];
            const GridRow g = gridRow(job, at);
            if (g.a >= g.b)
                continue;  // this sample row lies outside: it does not count
            const quint8 why = job.allSlotsIn ? 0 : job.slotAbsence[g.slot];
            quint16 *C = count.data();
            SPECTRUM_IVDEP
            for (int i = g.a; i < g.b; ++i)
                C[i] = quint16(C[i] + 1);
            if (why != 0) {
                for (int i = g.a; i < g.b; ++i)
                    worst[size_t(i)] = std::max(worst[size_t(i)], why);
                continue;
            }
            const T *p = vox + g.base;
            int *A = acc.data();
            if (g.stride == 1) {
                switch (job.mode) {
                case SlabMode::Mip:
                    SPECTRUM_IVDEP
                    for (int i = g.a; i < g.b; ++i)
                        A[i] = std::max(A[i], int(p[i]));
                    break;
                case SlabMode::MinIp:
                    SPECTRUM_IVDEP
                    for (int i = g.a; i < g.b; ++i)
                        A[i] = std::min(A[i], int(p[i]));
                    break;
                case SlabMode::Average:
                    SPECTRUM_IVDEP
                    for (int i = g.a; i < g.b; ++i)
                        A[i] += int(p[i]);
                    break;
                }
            } else {
                for (int i = g.a; i < g.b; ++i) {
                    const int v = p[qsizetype(i) * g.stride];
                    A[i] = job.mode == SlabMode::Mip ? std::max(A[i], v) : job.mode == SlabMode::MinIp ? std::min(A[i], v) : A[i] + v;
                }
            }
        }
        for (int i = 0; i < w; ++i) {
            const quint8 why = worst[size_t(i)] ? worst[size_t(i)] : count[size_t(i)] == 0 ? quint8(PixelAbsence::Outside) : quint8(0);
            ab[i] = why;
            o[i] = why ? T(job.padding) : T(job.mode == SlabMode::Average ? meanOf(double(acc[size_t(i)]), count[size_t(i)]) : acc[size_t(i)]);
        }
        tallyRow(reinterpret_cast<const quint16 *>(o), ab, w, job.padding, tally);
    }
}

template <typename T>
void cutRowsOf(const CutJob &job, int first, int last, quint16 *out, quint8 *absence, CutTally &tally)
{
    if (onGrid(job)) {
        cutGridRows<T>(job, first, last, out, absence, tally);
        return;
    }
    const int w = job.width;
    const size_t n = size_t(w);
    std::vector<float> value(n), acc(n);
    std::vector<quint8> state(n), worst(n);
    std::vector<quint16> count(n);
    for (int r = first; r < last; ++r) {
        quint16 *o = out + qsizetype(r - first) * w;
        quint8 *ab = absence + qsizetype(r - first) * w;
        double start[3];
        for (int k = 0; k < 3; ++k)
            start[k] = job.origin[k] + r * job.rowStep[k];
        if (job.samples == 1) {
            sampleRow<T>(job, start, value.data(), ab);
            int i = 0;
#ifndef SPECTRUM_FILTERS_ONE_ISA
            if (filters::useWideVectors())
                i = finishWide(value.data(), ab, w, job.isSigned, job.padding, o);
#endif
            for (; i < w; ++i)
                o[i] = quint16(ab[i] ? job.padding : toVoxel(value[i], job.isSigned));
            tallyRow(o, ab, w, job.padding, tally);
            continue;
        }
        // A slab: samples that fall outside the volume do not count; one that needs a slot not in makes the pixel
        // absent (a projection over a gap would hide it).
        std::fill(worst.begin(), worst.end(), quint8(0));
        std::fill(count.begin(), count.end(), quint16(0));
        const float init = job.mode == SlabMode::Mip ? -1e30f : job.mode == SlabMode::MinIp ? 1e30f : 0.0f;
        std::fill(acc.begin(), acc.end(), init);
        for (int s = 0; s < job.samples; ++s) {
            double at[3];
            for (int k = 0; k < 3; ++k)
                at[k] = start[k] + s * job.sampleStep[k];
            sampleRow<T>(job, at, value.data(), state.data());
            float *A = acc.data();
            const float *V = value.data();
            const quint8 *S = state.data();
            quint16 *C = count.data();
            quint8 *W = worst.data();
            switch (job.mode) {
            case SlabMode::Mip:
                SPECTRUM_IVDEP
                for (int i = 0; i < w; ++i)
                    A[i] = S[i] == 0 ? std::max(A[i], V[i]) : A[i];
                break;
            case SlabMode::MinIp:
                SPECTRUM_IVDEP
                for (int i = 0; i < w; ++i)
                    A[i] = S[i] == 0 ? std::min(A[i], V[i]) : A[i];
                break;
            case SlabMode::Average:
                SPECTRUM_IVDEP
                for (int i = 0; i < w; ++i)
                    A[i] += S[i] == 0 ? V[i] : 0.0f;
                break;
            }
            SPECTRUM_IVDEP
            for (int i = 0; i < w; ++i) {
                C[i] = quint16(C[i] + (S[i] == 0 ? 1 : 0));
                W[i] = S[i] > quint8(PixelAbsence::Outside) ? std::max(W[i], S[i]) : W[i];
            }
        }
        for (int i = 0; i < w; ++i) {
            const quint8 why = worst[i] ? worst[i] : count[i] == 0 ? quint8(PixelAbsence::Outside) : quint8(0);
            ab[i] = why;
            const int v = job.mode == SlabMode::Average && count[i] ? std::clamp(meanOf(double(acc[i]), count[i]), job.isSigned ? -32768 : 0, job.isSigned ? 32767 : 65535)
                                                                    : toVoxel(acc[i], job.isSigned);
            o[i] = quint16(why ? job.padding : v);
        }
        tallyRow(o, ab, w, job.padding, tally);
    }
}

} // namespace

void cutRows(const CutJob &job, int first, int last, quint16 *out, quint8 *absence, CutTally *tally)
{
    filters::withBestIsa([&] {
        if (job.isSigned)
            cutRowsOf<qint16>(job, first, last, out, absence, *tally);
        else
            cutRowsOf<quint16>(job, first, last, out, absence, *tally);
    });
}

} // namespace spectrum::reformatting
