// SPDX-License-Identifier: Apache-2.0
// The 3×3 neighbourhood filters: blur (box), sharpen (MedJava's), despeckle (median of nine), edge (Sobel).

#include "filters/builtinfilter.h"

namespace spectrum::filters {

namespace {

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

} // namespace

QList<FilterFactoryPtr> neighbourhoodFilters()
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
        factory(QStringLiteral("sharpen"), QStringLiteral("MedJava's sharpen: (v − p·mean) / (1 − p) over 3×3"),
                {number(QStringLiteral("p"), QStringLiteral("strength (0: none)"), 0.5, 0, 0.95)},
                [](D d, V v) { return std::make_unique<SharpenFilter>(d, v.value(QStringLiteral("p")).toDouble()); }),
    };
}

} // namespace spectrum::filters
