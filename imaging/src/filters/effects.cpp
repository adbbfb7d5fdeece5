// SPDX-License-Identifier: Apache-2.0
// MedJava's effects: emboss, oil paint (histogram mode), pixelize (block means), spread (seeded random neighbours).

#include "filters/builtinfilter.h"

namespace spectrum::filters {

namespace {

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

} // namespace

QList<FilterFactoryPtr> effectFilters()
{
    using V = const QVariantMap &;
    using D = const QString &;
    return {
        factory(QStringLiteral("emboss"), QStringLiteral("3×3 emboss around mid-gray"), {},
                [](D d, V) { return std::make_unique<EmbossFilter>(d); }),
        factory(QStringLiteral("oilpaint"), QStringLiteral("3×3 histogram mode (MedJava's oil paint; 16-bit binned into 256 ranges)"), {},
                [](D d, V) { return std::make_unique<OilPaintFilter>(d); }, names({"oil"})),
        factory(QStringLiteral("pixelize"), QStringLiteral("mean of N×N blocks"),
                {number(QStringLiteral("size"), QStringLiteral("block side in pixels"), 4, 2, 256, true)},
                [](D d, V v) { return std::make_unique<PixelizeFilter>(d, v.value(QStringLiteral("size")).toInt()); }, names({"pixelate", "mosaic"})),
        factory(QStringLiteral("spread"), QStringLiteral("each pixel from a random neighbour (seeded: reproducible)"),
                {number(QStringLiteral("radius"), QStringLiteral("how far a neighbour may be, in pixels"), 1, 1, 16, true),
                 number(QStringLiteral("seed"), QStringLiteral("random seed"), 1, 0, 4294967295.0, true)},
                [](D d, V v) { return std::make_unique<SpreadFilter>(d, v.value(QStringLiteral("radius")).toInt(), quint64(v.value(QStringLiteral("seed")).toDouble())); }),
    };
}

} // namespace spectrum::filters
