// The built-in filters: MedJava's set (sharpen, despeckle, edge detect, emboss, oil paint, pixelize, spread) and
// the everyday ones (blur, Gaussian, unsharp mask, invert, flip, rotate, zoom), on native-depth samples. Edges
// replicate the nearest pixel. Every output row is a function of the input rows alone, which is what makes band
// processing exact (see filter.h).

#include "builtinfilters.h"
#include "kernels.h"

#include <array>
#include <cmath>

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

/// The 3×3 neighbourhood filters: op(above, here, below, c) gets pointers to the sample in three padded rows
/// (its neighbours are at ±c) and returns the new value before clamping.
template <typename T, typename Acc, typename Op>
void run3x3(const RowsIn &in, int begin, int end, const RowsOut &out, Op op)
{
    const int c = in.format.channels;
    const qsizetype n = in.format.samplesPerRow();
    std::vector<Acc> r0, r1, r2;
    paddedRow<T, Acc>(in, begin - 1, 1, r0);
    paddedRow<T, Acc>(in, begin, 1, r1);
    for (int y = begin; y < end; ++y) {
        paddedRow<T, Acc>(in, y + 1, 1, r2);
        T *dst = out.row<T>(y);
        const Acc *a = r0.data() + c, *b = r1.data() + c, *d = r2.data() + c;
        for (qsizetype i = 0; i < n; ++i)
            dst[i] = T(clampValue(op(a + i, b + i, d + i, c), out.format));
        std::swap(r0, r1);  // the next row's "above" and "here": the same values, not recomputed
        std::swap(r1, r2);
    }
}

// ---- point and geometric filters ---------------------------------------------------------------------------

class InvertFilter : public BuiltinFilter
{
public:
    using BuiltinFilter::BuiltinFilter;
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withSampleType(in.format.type, [&](auto t) {
            using T = decltype(t);
            const int sum = in.format.minValue + in.format.maxValue;
            for (int y = begin; y < end; ++y) {
                const T *src = in.row<T>(y);
                T *dst = out.row<T>(y);
                for (qsizetype i = 0; i < in.format.samplesPerRow(); ++i)
                    dst[i] = T(std::clamp(sum - int(src[i]), in.format.minValue, in.format.maxValue));
            }
        });
    }
};

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
        const int c = in.format.channels, w = in.format.width, h = in.format.height;
        withSampleType(in.format.type, [&](auto t) {
            using T = decltype(t);
            for (int y = begin; y < end; ++y) {
                T *dst = out.row<T>(y);
                if (m_vertical) {
                    const T *src = in.row<T>(h - 1 - y);
                    std::copy(src, src + in.format.samplesPerRow(), dst);
                } else {
                    const T *src = in.row<T>(y);
                    for (int x = 0; x < w; ++x)
                        for (int k = 0; k < c; ++k)
                            dst[x * c + k] = src[(w - 1 - x) * c + k];
                }
            }
        });
    }

private:
    bool m_vertical;
};

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
        const int c = in.format.channels, w = in.format.width, h = in.format.height;
        withSampleType(in.format.type, [&](auto t) {
            using T = decltype(t);
            if (m_degrees == 180) {
                for (int y = begin; y < end; ++y) {
                    const T *src = in.row<T>(h - 1 - y);
                    T *dst = out.row<T>(y);
                    for (int x = 0; x < w; ++x)
                        for (int k = 0; k < c; ++k)
                            dst[x * c + k] = src[(w - 1 - x) * c + k];
                }
                return;
            }
            std::vector<const T *> rows(static_cast<size_t>(h));
            for (int y = 0; y < h; ++y)
                rows[size_t(y)] = in.row<T>(y);
            const int outWidth = h;
            for (int y = begin; y < end; ++y) {  // clockwise 90: out(x, y) = in(y, h-1-x); 270: in(w-1-y, x)
                T *dst = out.row<T>(y);
                for (int x = 0; x < outWidth; ++x) {
                    const T *src = m_degrees == 90 ? rows[size_t(h - 1 - x)] + qsizetype(y) * c : rows[size_t(x)] + qsizetype(w - 1 - y) * c;
                    for (int k = 0; k < c; ++k)
                        dst[x * c + k] = src[k];
                }
            }
        });
    }

private:
    int m_degrees;
};

/// Resampling by `factor` (output size rounded), pixel centres aligned as OpenCV's resize does:
/// source = (destination + 0.5) / scale − 0.5. Bilinear, or bicubic with a = −0.75 (OpenCV's).
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
        const int c = in.format.channels, w = in.format.width, h = in.format.height, ow = out.format.width;
        const double sy = double(h) / out.format.height, sx = double(w) / ow;
        const int taps = m_bicubic ? 4 : 2;
        // Horizontal taps and weights, the same for every row.
        std::vector<int> xIndex(size_t(ow) * taps);
        std::vector<float> xWeight(size_t(ow) * taps);
        for (int x = 0; x < ow; ++x) {
            const double s = (x + 0.5) * sx - 0.5;
            const int x0 = int(std::floor(s));
            const double f = s - x0;
            for (int t = 0; t < taps; ++t) {
                xIndex[size_t(x * taps + t)] = std::clamp(x0 + t - (m_bicubic ? 1 : 0), 0, w - 1);
                xWeight[size_t(x * taps + t)] = float(weight(f, t));
            }
        }
        std::vector<float> column(size_t(w) * c);
        withSampleType(in.format.type, [&](auto t) {
            using T = decltype(t);
            for (int y = begin; y < end; ++y) {
                const double s = (y + 0.5) * sy - 0.5;
                const int y0 = int(std::floor(s));
                const double f = s - y0;
                std::fill(column.begin(), column.end(), 0.0f);
                for (int tap = 0; tap < taps; ++tap) {
                    const T *src = in.row<T>(y0 + tap - (m_bicubic ? 1 : 0));
                    const float wy = float(weight(f, tap));
                    for (qsizetype i = 0; i < qsizetype(w) * c; ++i)
                        column[size_t(i)] += wy * float(src[i]);
                }
                T *dst = out.row<T>(y);
                for (int x = 0; x < ow; ++x) {
                    for (int k = 0; k < c; ++k) {
                        float v = 0;
                        for (int tap = 0; tap < taps; ++tap)
                            v += xWeight[size_t(x * taps + tap)] * column[size_t(xIndex[size_t(x * taps + tap)] * c + k)];
                        dst[x * c + k] = T(clampValue(v, out.format));
                    }
                }
            }
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
    }

private:
    int m_radius;
    quint64 m_seed;
};

// ---- neighbourhood filters ---------------------------------------------------------------------------------

class BoxBlurFilter : public BuiltinFilter
{
public:
    BoxBlurFilter(QString d) : BuiltinFilter(std::move(d), 1) {}
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withSampleType(in.format.type, [&](auto t) {
            using T = decltype(t);
            run3x3<T, int>(in, begin, end, out, [](const int *a, const int *b, const int *d, int c) {
                const long long sum = a[-c] + a[0] + a[c] + b[-c] + b[0] + b[c] + d[-c] + d[0] + d[c];
                return divRound(sum, 9);
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
        const float p = m_p, scale = 1.0f / (1.0f - m_p);
        withSampleType(in.format.type, [&](auto t) {
            using T = decltype(t);
            run3x3<T, int>(in, begin, end, out, [p, scale](const int *a, const int *b, const int *d, int c) {
                const int sum = a[-c] + a[0] + a[c] + b[-c] + b[0] + b[c] + d[-c] + d[0] + d[c];
                return (float(b[0]) - p * (float(sum) / 9.0f)) * scale;
            });
        });
    }

private:
    float m_p;
};

/// The median of the 3×3 neighbourhood (MedJava's despeckle), by a 19-exchange sorting network.
class DespeckleFilter : public BuiltinFilter
{
public:
    DespeckleFilter(QString d) : BuiltinFilter(std::move(d), 1) {}
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withSampleType(in.format.type, [&](auto t) {
            using T = decltype(t);
            run3x3<T, int>(in, begin, end, out, [](const int *a, const int *b, const int *d, int c) {
                int p[9] = {a[-c], a[0], a[c], b[-c], b[0], b[c], d[-c], d[0], d[c]};
                auto s = [&p](int i, int j) {
                    const int lo = std::min(p[i], p[j]), hi = std::max(p[i], p[j]);
                    p[i] = lo;
                    p[j] = hi;
                };
                s(1, 2); s(4, 5); s(7, 8); s(0, 1); s(3, 4); s(6, 7); s(1, 2); s(4, 5); s(7, 8);
                s(0, 3); s(5, 8); s(4, 7); s(3, 6); s(1, 4); s(2, 5); s(4, 7); s(4, 2); s(6, 4); s(4, 2);
                return (long long)(p[4]);
            });
        });
    }
};

/// Sobel gradient magnitude, √(gx² + gy²), per channel (MedJava's edge detect).
class EdgeFilter : public BuiltinFilter
{
public:
    EdgeFilter(QString d) : BuiltinFilter(std::move(d), 1) {}
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withSampleType(in.format.type, [&](auto t) {
            using T = decltype(t);
            run3x3<T, int>(in, begin, end, out, [](const int *a, const int *b, const int *d, int c) {
                const float gx = float((a[c] + 2 * b[c] + d[c]) - (a[-c] + 2 * b[-c] + d[-c]));
                const float gy = float((d[-c] + 2 * d[0] + d[c]) - (a[-c] + 2 * a[0] + a[c]));
                return std::sqrt(gx * gx + gy * gy);
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
        const long long mid = divRound(qint64(in.format.minValue) + in.format.maxValue, 2);
        withSampleType(in.format.type, [&](auto t) {
            using T = decltype(t);
            run3x3<T, int>(in, begin, end, out, [mid](const int *a, const int *b, const int *d, int c) {
                return mid + (-a[-c] - a[0] - b[-c] + b[c] + d[0] + d[c]);
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
        const int lo = in.format.minValue;
        withSampleType(in.format.type, [&](auto t) {
            using T = decltype(t);
            run3x3<T, int>(in, begin, end, out, [shift, lo](const int *a, const int *b, const int *d, int c) {
                const int v[9] = {a[-c], a[0], a[c], b[-c], b[0], b[c], d[-c], d[0], d[c]};
                int bins[9];
                for (int i = 0; i < 9; ++i)
                    bins[i] = (v[i] - lo) >> shift;
                int bestBin = 0, bestCount = 0;
                for (int i = 0; i < 9; ++i) {
                    int count = 0;
                    for (int j = 0; j < 9; ++j)
                        count += bins[j] == bins[i];
                    if (count > bestCount || (count == bestCount && bins[i] < bestBin)) {
                        bestCount = count;
                        bestBin = bins[i];
                    }
                }
                long long sum = 0;
                for (int i = 0; i < 9; ++i)
                    sum += bins[i] == bestBin ? v[i] : 0;
                return divRound(sum, bestCount);
            });
        });
    }
};

/// Separable Gaussian of `sigma` (radius ⌈3σ⌉) into a float row; the base of blur and unsharp mask.
class GaussianBase : public BuiltinFilter
{
public:
    GaussianBase(QString d, double sigma) : BuiltinFilter(std::move(d), std::max(1, int(std::ceil(3 * sigma))))
    {
        const int r = halo();
        double total = 0;
        for (int k = -r; k <= r; ++k)
            total += std::exp(-(k * k) / (2 * sigma * sigma));
        for (int k = -r; k <= r; ++k)
            m_weights.push_back(float(std::exp(-(k * k) / (2 * sigma * sigma)) / total));
    }

protected:
    /// Row y blurred, into `blurred` (samplesPerRow floats); `vertical` and `padded` are scratch.
    template <typename T>
    void blurRow(const RowsIn &in, int y, std::vector<float> &vertical, std::vector<float> &blurred) const
    {
        const int r = halo(), c = in.format.channels, w = in.format.width;
        const qsizetype n = qsizetype(w) * c;
        vertical.assign(size_t(w + 2 * r) * c, 0.0f);
        float *v = vertical.data() + qsizetype(r) * c;
        for (int k = -r; k <= r; ++k) {
            const T *src = in.row<T>(y + k);
            const float wk = m_weights[size_t(k + r)];
            for (qsizetype i = 0; i < n; ++i)
                v[i] += wk * float(src[i]);
        }
        for (int p = 0; p < r; ++p) {  // replicate the edge columns
            for (int k = 0; k < c; ++k) {
                vertical[size_t(p * c + k)] = v[k];
                vertical[size_t((w + r + p) * c + k)] = v[(w - 1) * c + k];
            }
        }
        blurred.assign(size_t(n), 0.0f);
        for (int k = -r; k <= r; ++k) {
            const float wk = m_weights[size_t(k + r)];
            const float *s = v + qsizetype(k) * c;
            for (qsizetype i = 0; i < n; ++i)
                blurred[size_t(i)] += wk * s[i];
        }
    }

private:
    std::vector<float> m_weights;
};

class GaussianFilter : public GaussianBase
{
public:
    using GaussianBase::GaussianBase;
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        withSampleType(in.format.type, [&](auto t) {
            using T = decltype(t);
            std::vector<float> vertical, blurred;
            for (int y = begin; y < end; ++y) {
                blurRow<T>(in, y, vertical, blurred);
                T *dst = out.row<T>(y);
                for (qsizetype i = 0; i < in.format.samplesPerRow(); ++i)
                    dst[i] = T(clampValue(blurred[size_t(i)], out.format));
            }
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
        withSampleType(in.format.type, [&](auto t) {
            using T = decltype(t);
            std::vector<float> vertical, blurred;
            for (int y = begin; y < end; ++y) {
                blurRow<T>(in, y, vertical, blurred);
                const T *src = in.row<T>(y);
                T *dst = out.row<T>(y);
                for (qsizetype i = 0; i < in.format.samplesPerRow(); ++i) {
                    const float v = float(src[i]);
                    dst[i] = T(clampValue(v + m_amount * (v - blurred[size_t(i)]), out.format));
                }
            }
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
FilterFactoryPtr factory(const QString &name, const QString &description, QList<FilterParameter> params, F make)
{
    return std::make_shared<BuiltinFactory>(FilterInfo{name, description, std::move(params), {}}, make);
}

} // namespace

QList<FilterFactoryPtr> builtinFilters()
{
    using V = const QVariantMap &;
    using D = const QString &;
    return {
        factory(QStringLiteral("blur"), QStringLiteral("3×3 box blur"), {},
                [](D d, V) { return std::make_unique<BoxBlurFilter>(d); }),
        factory(QStringLiteral("despeckle"), QStringLiteral("3×3 median: removes isolated specks"), {},
                [](D d, V) { return std::make_unique<DespeckleFilter>(d); }),
        factory(QStringLiteral("edge"), QStringLiteral("edge detect: Sobel gradient magnitude"), {},
                [](D d, V) { return std::make_unique<EdgeFilter>(d); }),
        factory(QStringLiteral("emboss"), QStringLiteral("3×3 emboss around mid-gray"), {},
                [](D d, V) { return std::make_unique<EmbossFilter>(d); }),
        factory(QStringLiteral("flip"), QStringLiteral("mirror the image"),
                {choice(QStringLiteral("axis"), QStringLiteral("horizontal (left–right) or vertical (top–bottom)"), {QStringLiteral("horizontal"), QStringLiteral("vertical")})},
                [](D d, V v) { return std::make_unique<FlipFilter>(d, v.value(QStringLiteral("axis")).toString() == QLatin1String("vertical")); }),
        factory(QStringLiteral("gaussian"), QStringLiteral("Gaussian blur"),
                {number(QStringLiteral("sigma"), QStringLiteral("standard deviation in pixels"), 1.0, 0.1, 20)},
                [](D d, V v) { return std::make_unique<GaussianFilter>(d, v.value(QStringLiteral("sigma")).toDouble()); }),
        factory(QStringLiteral("invert"), QStringLiteral("invert within the stored value range"), {},
                [](D d, V) { return std::make_unique<InvertFilter>(d, 0); }),
        factory(QStringLiteral("oilpaint"), QStringLiteral("3×3 histogram mode (MedJava's oil paint; 16-bit binned into 256 ranges)"), {},
                [](D d, V) { return std::make_unique<OilPaintFilter>(d); }),
        factory(QStringLiteral("pixelize"), QStringLiteral("mean of N×N blocks"),
                {number(QStringLiteral("size"), QStringLiteral("block side in pixels"), 4, 2, 256, true)},
                [](D d, V v) { return std::make_unique<PixelizeFilter>(d, v.value(QStringLiteral("size")).toInt()); }),
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
                [](D d, V v) { return std::make_unique<UnsharpFilter>(d, v.value(QStringLiteral("radius")).toDouble(), v.value(QStringLiteral("amount")).toDouble()); }),
        factory(QStringLiteral("zoom"), QStringLiteral("resize by a factor"),
                {number(QStringLiteral("factor"), QStringLiteral("scale"), 2.0, 0.05, 16),
                 choice(QStringLiteral("method"), QStringLiteral("interpolation"), {QStringLiteral("bilinear"), QStringLiteral("bicubic")})},
                [](D d, V v) { return std::make_unique<ZoomFilter>(d, v.value(QStringLiteral("factor")).toDouble(), v.value(QStringLiteral("method")).toString() == QLatin1String("bicubic")); }),
    };
}

} // namespace spectrum::filters
