// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the filter suites share: planes of samples, made up and filtered with rows arriving in steps.

#include "spectrum/imaging/filters/bandprocessor.h"
#include "spectrum/imaging/filters/filterregistry.h"
#include "filters/kernels.h"  // private: to run the baseline and the wide versions side by side
#include <QDir>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace spectrum::test {

using namespace spectrum;

/// An image to filter: its format and its rows, one contiguous buffer.
struct Plane
{
    PlaneFormat format;
    QByteArray bytes;

    const char *row(int y) const { return bytes.constData() + y * format.rowBytes(); }
    template <typename T>
    T at(int x, int y, int k = 0) const { return reinterpret_cast<const T *>(row(y))[x * format.channels + k]; }
};

inline PlaneFormat format(SampleType type, int channels, int w, int h, int minValue, int maxValue)
{
    PlaneFormat f;
    f.type = type;
    f.channels = channels;
    f.width = w;
    f.height = h;
    f.minValue = minValue;
    f.maxValue = maxValue;
    return f;
}

/// Random samples in the format's range, with some structure (a gradient) so kernels see edges and plateaus.
inline Plane randomPlane(const PlaneFormat &f, quint32 seed)
{
    Plane p{f, QByteArray(f.rowBytes() * f.height, Qt::Uninitialized)};
    QRandomGenerator g(seed);
    withSampleType(f.type, [&](auto t) {
        using T = decltype(t);
        T *d = reinterpret_cast<T *>(p.bytes.data());
        for (qsizetype i = 0; i < f.samplesPerRow() * f.height; ++i) {
            const int noise = int(g.bounded(f.maxValue - f.minValue + 1)) + f.minValue;
            const int ramp = f.minValue + int(qint64(i % f.samplesPerRow()) * (f.maxValue - f.minValue) / std::max<qsizetype>(1, f.samplesPerRow()));
            d[i] = T(i % 7 == 0 ? noise : ramp);
        }
    });
    return p;
}

/// Runs `chain` with the input rows arriving in steps (`arrivals`: rows in so far). Rows not yet arrived hold
/// junk, as a buffer still being received would: a filter that read one too early would show in its result.
inline Plane run(const FilterChain &chain, const Plane &in, QThreadPool *pool, const QList<int> &arrivals = {})
{
    QByteArray arriving(in.bytes.size(), char(0xA5));
    const qsizetype rowBytes = in.format.rowBytes();
    BandProcessor bp(chain, in.format, [&arriving, rowBytes](int y) -> const void * { return arriving.constData() + y * rowBytes; }, pool);
    int rowsIn = 0;
    for (int rows : arrivals + QList<int>{in.format.height}) {
        std::copy(in.bytes.constData() + rowsIn * rowBytes, in.bytes.constData() + rows * rowBytes, arriving.data() + rowsIn * rowBytes);
        rowsIn = rows;
        bp.inputArrived(rows);
    }
    return Plane{bp.outputFormat(), bp.output()};
}

inline FilterChain chainOf(const QStringList &specs)
{
    Result<FilterChain> c = FilterRegistry().makeChain(specs);
    if (!c.isOk())
        qFatal("%s", qPrintable(c.error().toString()));
    return c.value();
}

} // namespace spectrum::test
