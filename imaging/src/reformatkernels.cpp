#include "reformatkernels.h"

#include "filters/kernels.h"

#include <algorithm>
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
    const float sx = float(start[0]), sy = float(start[1]), sz = float(start[2]);
    const float dx = float(job.columnStep[0]), dy = float(job.columnStep[1]), dz = float(job.columnStep[2]);
    const float topX = float(job.nx - 1), topY = float(job.ny - 1), topZ = float(job.nz - 1);
    const int lastX = job.nx - 2, lastY = job.ny - 2, lastZ = job.nz - 2;
    for (int i = a; i < b; ++i) {
        const float x = std::clamp(sx + float(i) * dx, 0.0f, topX);
        const float y = std::clamp(sy + float(i) * dy, 0.0f, topY);
        const float z = std::clamp(sz + float(i) * dz, 0.0f, topZ);
        const int ix = std::min(int(x), lastX), iy = std::min(int(y), lastY), iz = std::min(int(z), lastZ);
        const float fx = x - float(ix), fy = y - float(iy), fz = z - float(iz);
        const T *p = vox + ix + iy * rowStride + iz * slotStride;
        const float c00 = float(p[0]) + fx * float(p[1] - p[0]);
        const float c10 = float(p[rowStride]) + fx * float(p[rowStride + 1] - p[rowStride]);
        const float c01 = float(p[slotStride]) + fx * float(p[slotStride + 1] - p[slotStride]);
        const float c11 = float(p[slotStride + rowStride]) + fx * float(p[slotStride + rowStride + 1] - p[slotStride + rowStride]);
        const float c0 = c00 + fy * (c10 - c00), c1 = c01 + fy * (c11 - c01);
        value[i] = c0 + fz * (c1 - c0);
        state[i] = job.allSlotsIn ? 0 : std::max(fz < 1.0f - kWeight ? use[iz] : quint8(0), fz > kWeight ? use[iz + 1] : quint8(0));
    }
}

/// Rounds half away from zero and clamps to the volume's 16 bits.
inline int toVoxel(float v, bool isSigned)
{
    const float r = std::round(v);
    return int(isSigned ? std::clamp(r, -32768.0f, 32767.0f) : std::clamp(r, 0.0f, 65535.0f));
}

template <typename T>
void cutRowsOf(const CutJob &job, int first, int last, quint16 *out, quint8 *absence)
{
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
            for (int i = 0; i < w; ++i)
                o[i] = quint16(ab[i] ? job.padding : toVoxel(value[i], job.isSigned));
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
            const float v = job.mode == SlabMode::Average && count[i] ? acc[i] / float(count[i]) : acc[i];
            o[i] = quint16(why ? job.padding : toVoxel(v, job.isSigned));
        }
    }
}

} // namespace

void cutRows(const CutJob &job, int first, int last, quint16 *out, quint8 *absence)
{
    filters::withBestIsa([&] {
        if (job.isSigned)
            cutRowsOf<qint16>(job, first, last, out, absence);
        else
            cutRowsOf<quint16>(job, first, last, out, absence);
    });
}

} // namespace spectrum::reformatting
