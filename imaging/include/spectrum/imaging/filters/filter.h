// SPDX-License-Identifier: Apache-2.0
#pragma once
// Filter: an image filter that works on rows as they arrive (MedJava's filters, `../shared/seeds/002_…`, on native
// pixels and in bands). A filter says which input rows an output band needs; BandProcessor feeds it bands as soon as
// those rows are in, on several threads at once, and chains filters. Because every output row is computed from the
// same input rows by the same code whichever band it falls in, band-by-band processing gives exactly the pixels of
// whole-image processing.
//
// This header is the whole contract with filter plugins (FilterPlugin, below): everything in it is inline, so a
// plugin needs Qt and these headers, not Spectrum's libraries.

#include <QList>
#include <QString>
#include <QStringList>
#include <QVariantMap>
#include <QtPlugin>

#include <algorithm>
#include <functional>
#include <memory>

namespace spectrum {

/// How one sample is stored. Gray images have one channel; colour images three, interleaved (R G B).
enum class SampleType { U8, S8, U16, S16 };

/// The shape and value range of the rows a filter reads or writes.
struct PlaneFormat
{
    SampleType type = SampleType::U16;
    int channels = 1;
    int width = 0;
    int height = 0;
    int minValue = 0;      ///< smallest valid stored value (from Bits Stored and Pixel Representation)
    int maxValue = 65535;  ///< largest; filters clamp their results to [minValue, maxValue]

    int bytesPerSample() const { return type == SampleType::U8 || type == SampleType::S8 ? 1 : 2; }
    qsizetype rowBytes() const { return qsizetype(width) * channels * bytesPerSample(); }
    qsizetype samplesPerRow() const { return qsizetype(width) * channels; }
    bool sameLayout(const PlaneFormat &o) const
    {
        return type == o.type && channels == o.channels && width == o.width && height == o.height;
    }
};

/// Rows [first, last).
struct RowSpan
{
    int first = 0;
    int last = 0;
};

/// Read access to a filter's input rows. row(y) clamps y into the image, so kernels replicate the edge rows.
struct RowsIn
{
    PlaneFormat format;
    std::function<const void *(int y)> rowAt;  ///< y inside [0, height)
    /// Set when the rows lie in one block of memory, row y at base + y × stride bytes (a PixelBuffer's frame);
    /// null when they are scattered. Lets a filter run one long loop where it does not care about rows.
    const char *base = nullptr;
    qsizetype stride = 0;

    template <typename T>
    const T *row(int y) const
    {
        y = std::clamp(y, 0, format.height - 1);
        return base ? reinterpret_cast<const T *>(base + y * stride) : static_cast<const T *>(rowAt(y));
    }
    /// Row `begin` and the rows after it as one run of samples without gaps, or null when the rows are scattered.
    template <typename T>
    const T *contiguous(int begin) const
    {
        return base && stride == format.rowBytes() ? reinterpret_cast<const T *>(base + begin * stride) : nullptr;
    }
};

/// Write access to a filter's output rows.
struct RowsOut
{
    PlaneFormat format;
    std::function<void *(int y)> rowAt;
    char *base = nullptr;  ///< as RowsIn::base
    qsizetype stride = 0;

    template <typename T>
    T *row(int y) const { return base ? reinterpret_cast<T *>(base + y * stride) : static_cast<T *>(rowAt(y)); }
    template <typename T>
    T *contiguous(int begin) const
    {
        return base && stride == format.rowBytes() ? reinterpret_cast<T *>(base + begin * stride) : nullptr;
    }
};

/// A configured filter. Stateless once made: run() is called concurrently for disjoint output rows.
class Filter
{
public:
    virtual ~Filter() = default;

    /// What was done, for the Derivation Description: "gaussian:sigma=2".
    virtual QString description() const = 0;
    /// The output rows' format for an input format: the same unless the filter changes the size (zoom, rotate).
    virtual PlaneFormat outputFormat(const PlaneFormat &in) const { return in; }
    /// Input rows needed for output rows [begin, end). Must not shrink as `end` grows. Default: the rows
    /// themselves and halo() rows either side.
    virtual RowSpan inputRows(int begin, int end, const PlaneFormat &in) const
    {
        return RowSpan{std::max(0, begin - halo()), std::min(in.height, end + halo())};
    }
    /// Output rows [begin, end), reading only inputRows(begin, end).
    virtual void run(const RowsIn &in, int begin, int end, const RowsOut &out) const = 0;

protected:
    /// Rows of context above and below an output row (1 for a 3×3 kernel).
    virtual int halo() const { return 0; }
};

/// One parameter of a filter: a number in [minimum, maximum], or (when `choices` is set) one of the names.
struct FilterParameter
{
    QString name;
    QString description;
    QVariant defaultValue;
    double minimum = 0;
    double maximum = 0;
    bool integer = false;
    QStringList choices;
};

struct FilterInfo
{
    QString name;          ///< lower case, no spaces: what `--filter NAME` takes
    QString description;
    QList<FilterParameter> parameters;
    QString origin;        ///< "built-in", or the plugin file it came from (set by the registry)
    QStringList aliases;   ///< other names users know it by (median for despeckle); `--filter` takes them too
};

/// Makes configured filters of one kind. `values` holds every parameter, validated and with defaults filled in:
/// numbers as double, choices as QString.
class FilterFactory
{
public:
    virtual ~FilterFactory() = default;
    virtual FilterInfo info() const = 0;
    virtual std::unique_ptr<Filter> create(const QVariantMap &values) const = 0;
};
using FilterFactoryPtr = std::shared_ptr<const FilterFactory>;

/// What a filter plugin's root object implements (QPluginLoader; MedJava's Service Configurator).
class FilterPlugin
{
public:
    virtual ~FilterPlugin() = default;
    virtual QList<FilterFactoryPtr> filters() const = 0;
};

/// "name:key=value,key=value": the form the CLI takes and the Derivation Description records.
inline QString describeFilter(const QString &name, const QList<FilterParameter> &parameters, const QVariantMap &values)
{
    QStringList parts;
    for (const FilterParameter &p : parameters) {
        const QVariant v = values.value(p.name);
        parts << p.name + QLatin1Char('=') + (v.typeId() == QMetaType::Double ? QString::number(v.toDouble(), 'g', 6) : v.toString());
    }
    return parts.isEmpty() ? name : name + QLatin1Char(':') + parts.join(QLatin1Char(','));
}

/// Calls f(T{}) with the C++ type of `type`: for filters written once as templates.
template <typename F>
void withSampleType(SampleType type, F &&f)
{
    switch (type) {
    case SampleType::U8: f(quint8{}); break;
    case SampleType::S8: f(qint8{}); break;
    case SampleType::U16: f(quint16{}); break;
    case SampleType::S16: f(qint16{}); break;
    }
}

} // namespace spectrum

#define SPECTRUM_FILTER_PLUGIN_IID "org.spectrum.FilterPlugin/2"  // 2: FilterInfo::aliases
Q_DECLARE_INTERFACE(spectrum::FilterPlugin, SPECTRUM_FILTER_PLUGIN_IID)
