// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the built-in filters share (the filters themselves are in one file per family):
//   geometric.cpp       invert, flip, rotate, zoom: point and geometric filters, large outputs written around the caches
//   neighbourhood.cpp   blur, sharpen, despeckle, edge: 3×3 neighbourhoods
//   gaussian.cpp        Gaussian and unsharp mask: separable, symmetric kernels
//   effects.cpp         emboss, oil paint, pixelize, spread: MedJava's effects
//   dispatch.cpp        which instruction set the kernels run with, and when stores bypass the caches
//   catalog.cpp         every built-in filter, with its parameters and the other names users know it by
// Edges replicate the nearest pixel. Every output row is a function of the input rows alone, which is what makes
// band processing exact (see filter.h).

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

/// The byte size from which a plane's output is written with non-temporal stores (dispatch.cpp).
qint64 &cacheBypassLimit();
/// Whether a point or geometric filter writes `out` around the caches: a plane in memory too large for L2.
bool writeAroundCaches(const RowsOut &out);

// ---- the catalog's entries ----------------------------------------------------------------------------------

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

inline FilterParameter number(const QString &name, const QString &description, double def, double min, double max, bool integer = false)
{
    return FilterParameter{name, description, def, min, max, integer, {}};
}

inline FilterParameter choice(const QString &name, const QString &description, const QStringList &choices)
{
    return FilterParameter{name, description, choices.value(0), 0, 0, false, choices};
}

template <typename F>
FilterFactoryPtr factory(const QString &name, const QString &description, QList<FilterParameter> params, F make, QStringList aliases = {})
{
    return std::make_shared<BuiltinFactory>(FilterInfo{name, description, std::move(params), {}, std::move(aliases)}, make);
}

inline QStringList names(std::initializer_list<const char *> list)
{
    QStringList out;
    for (const char *n : list)
        out << QString::fromLatin1(n);
    return out;
}

/// The families' entries (catalog.cpp lists them all).
QList<FilterFactoryPtr> geometricFilters();
QList<FilterFactoryPtr> neighbourhoodFilters();
QList<FilterFactoryPtr> gaussianFilters();
QList<FilterFactoryPtr> effectFilters();

} // namespace spectrum::filters
