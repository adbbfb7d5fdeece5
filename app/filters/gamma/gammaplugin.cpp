// SPDX-License-Identifier: Apache-2.0
// A filter shipped as a plugin, to show (and test) that filters load at run time: gamma correction within the
// image's stored value range, out = min + (max − min) · ((v − min) / (max − min))^(1/γ), through a lookup table.

#include "spectrum/imaging/filters/filter.h"

#include <QObject>

#include <cmath>
#include <vector>

namespace {

using namespace spectrum;

class GammaFilter : public Filter
{
public:
    GammaFilter(QString description, double gamma) : m_description(std::move(description)), m_gamma(gamma) {}
    QString description() const override { return m_description; }
    void run(const RowsIn &in, int begin, int end, const RowsOut &out) const override
    {
        const int lo = in.format.minValue, hi = in.format.maxValue;
        std::vector<int> table(size_t(hi - lo + 1));
        for (int v = lo; v <= hi; ++v) {
            const double t = hi > lo ? double(v - lo) / (hi - lo) : 0;
            table[size_t(v - lo)] = lo + int(std::lround((hi - lo) * std::pow(t, 1 / m_gamma)));
        }
        withSampleType(in.format.type, [&](auto t) {
            using T = decltype(t);
            for (int y = begin; y < end; ++y) {
                const T *src = in.row<T>(y);
                T *dst = out.row<T>(y);
                for (qsizetype i = 0; i < in.format.samplesPerRow(); ++i)
                    dst[i] = T(table[size_t(std::clamp(int(src[i]), lo, hi) - lo)]);
            }
        });
    }

private:
    QString m_description;
    double m_gamma;
};

class GammaFactory : public FilterFactory
{
public:
    FilterInfo info() const override
    {
        return FilterInfo{QStringLiteral("gamma"), QStringLiteral("gamma correction within the stored value range (plugin)"),
                          {FilterParameter{QStringLiteral("gamma"), QStringLiteral("above 1 brightens the darks, below 1 darkens"), 2.2, 0.1, 10, false, {}}},
                          {}, {QStringLiteral("gammacorrection")}};
    }
    std::unique_ptr<Filter> create(const QVariantMap &values) const override
    {
        return std::make_unique<GammaFilter>(describeFilter(QStringLiteral("gamma"), info().parameters, values), values.value(QStringLiteral("gamma")).toDouble());
    }
};

} // namespace

class GammaPlugin : public QObject, public spectrum::FilterPlugin
{
    Q_OBJECT
    Q_PLUGIN_METADATA(IID SPECTRUM_FILTER_PLUGIN_IID)
    Q_INTERFACES(spectrum::FilterPlugin)
public:
    QList<spectrum::FilterFactoryPtr> filters() const override { return {std::make_shared<GammaFactory>()}; }
};

#include "gammaplugin.moc"
