// SPDX-License-Identifier: Apache-2.0
// Which instruction set the filters' kernels run with (x86-64-v3 or v4 when the CPU has it, the baseline when
// SPECTRUM_FILTER_ISA=baseline), and from which output size stores bypass the caches.

#include "filters/builtinfilter.h"

#include <unistd.h>

namespace spectrum::filters {

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

} // namespace spectrum::filters
