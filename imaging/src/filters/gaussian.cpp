// SPDX-License-Identifier: Apache-2.0
// Separable Gaussian blur and unsharp mask: symmetric kernels, a horizontal pass kept per band, then vertical sums.

#include "filters/builtinfilter.h"

namespace spectrum::filters {

namespace {

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

} // namespace

QList<FilterFactoryPtr> gaussianFilters()
{
    using V = const QVariantMap &;
    using D = const QString &;
    return {
        factory(QStringLiteral("gaussian"), QStringLiteral("Gaussian blur"),
                {number(QStringLiteral("sigma"), QStringLiteral("standard deviation in pixels"), 1.0, 0.1, 20)},
                [](D d, V v) { return std::make_unique<GaussianFilter>(d, v.value(QStringLiteral("sigma")).toDouble()); }, names({"gauss"})),
        factory(QStringLiteral("unsharp"), QStringLiteral("unsharp mask: v + amount·(v − Gaussian(v))"),
                {number(QStringLiteral("amount"), QStringLiteral("how much of the detail to add"), 1.0, 0, 10),
                 number(QStringLiteral("radius"), QStringLiteral("Gaussian sigma in pixels"), 2.0, 0.1, 20)},
                [](D d, V v) { return std::make_unique<UnsharpFilter>(d, v.value(QStringLiteral("radius")).toDouble(), v.value(QStringLiteral("amount")).toDouble()); }, names({"unsharpmask", "usm"})),
    };
}

} // namespace spectrum::filters
