// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/tools/annotation.h"

#include "spectrum/imaging/tools/measurementtool.h"

#include <QCoreApplication>

#include <cmath>

namespace spectrum {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("spectrum::Annotation", text);
}

} // namespace

ImageRef ImageRef::of(const ImageInfo &info)
{
    ImageRef r;
    r.studyInstanceUid = info.identity.studyInstanceUid;
    r.seriesInstanceUid = info.identity.seriesInstanceUid;
    r.sopClassUid = info.identity.sopClassUid;
    r.sopInstanceUid = info.identity.sopInstanceUid;
    r.frame = info.frames > 1 ? info.frameIndex + 1 : 0;
    return r;
}

int pointCount(AnnotationKind kind)
{
    return measurementTool(kind).pointCount();
}

bool isWellFormed(const Annotation &a)
{
    const int n = pointCount(a.kind);
    if (n > 0 ? a.points.size() != n : a.points.size() < -n)
        return false;
    for (const QPointF &p : a.points)
        if (!std::isfinite(p.x()) || !std::isfinite(p.y()))
            return false;
    return true;
}

bool isRegion(AnnotationKind kind)
{
    return measurementTool(kind).isRegion();
}

QString kindName(AnnotationKind kind)
{
    return measurementTool(kind).name();
}

QString quantityName(Quantity q)
{
    switch (q) {
    case Quantity::Length: return tr("Length");
    case Quantity::LongAxis: return tr("Long axis");
    case Quantity::ShortAxis: return tr("Short axis");
    case Quantity::Angle: return tr("Angle");
    case Quantity::CobbAngle: return tr("Cobb angle");
    case Quantity::Area: return tr("Area");
    case Quantity::Mean: return tr("Mean");
    case Quantity::StandardDeviation: return tr("SD");
    case Quantity::Minimum: return tr("Min");
    case Quantity::Maximum: return tr("Max");
    case Quantity::Value: return tr("Value");
    }
    return QString();
}

QList<QPointF> outline(const Annotation &a, int ellipseSteps)
{
    return measurementTool(a.kind).outline(a, ellipseSteps);
}

Annotation withPointMoved(const Annotation &a, int index, QPointF to)
{
    return measurementTool(a.kind).withPointMoved(a, index, to);
}

Annotation translated(const Annotation &a, QPointF delta)
{
    Annotation moved = a;
    for (QPointF &p : moved.points)
        p += delta;
    return moved;
}

QList<MeasuredValue> measure(const Annotation &a, const DecodedImage &image, int frame, int valueRows, const QByteArray &noValue)
{
    if (!isWellFormed(a))
        return {};
    return measurementTool(a.kind).measure(a, MeasureInput{image, frame, valueRows, noValue});
}

QString describeValues(const QList<MeasuredValue> &values, bool realValued)
{
    auto number = [realValued](const MeasuredValue &v, int decimals) {
        return realValued && v.unit != QLatin1String("mm") && v.unit != QLatin1String("mm2") && v.unit != QLatin1String("deg")
                   ? QString::number(v.value, 'g', 5)
                   : QString::number(v.value, 'f', decimals);
    };
    auto unit = [](const MeasuredValue &v) {
        return v.unitMeaning.isEmpty() ? QString() : (v.unitMeaning == QStringLiteral("°") ? v.unitMeaning : QLatin1Char(' ') + v.unitMeaning);
    };
    const MeasuredValue *mean = nullptr, *sd = nullptr, *mn = nullptr, *mx = nullptr, *area = nullptr;
    QStringList lines;
    for (const MeasuredValue &v : values) {
        switch (v.quantity) {
        case Quantity::Mean: mean = &v; break;
        case Quantity::StandardDeviation: sd = &v; break;
        case Quantity::Minimum: mn = &v; break;
        case Quantity::Maximum: mx = &v; break;
        case Quantity::Area: area = &v; break;
        case Quantity::Length:
            lines << number(v, 1) + unit(v);
            break;
        case Quantity::LongAxis:
        case Quantity::ShortAxis:
            lines << quantityName(v.quantity) + QLatin1Char(' ') + number(v, 1) + unit(v);
            break;
        case Quantity::Angle:
        case Quantity::CobbAngle:
            lines << (v.quantity == Quantity::CobbAngle ? quantityName(v.quantity) + QLatin1Char(' ') : QString()) + number(v, 1) + unit(v);
            break;
        case Quantity::Value:
            lines << number(v, 1) + unit(v);
            break;
        }
    }
    // Whatever a report gave of the statistics is shown, in the usual pairs where both are there.
    if (mean && sd)
        lines << tr("Mean %1 SD %2%3").arg(number(*mean, 1), number(*sd, 1), unit(*mean));
    else if (mean)
        lines << tr("Mean %1%2").arg(number(*mean, 1), unit(*mean));
    else if (sd)
        lines << tr("SD %1%2").arg(number(*sd, 1), unit(*sd));
    if (mn && mx)
        lines << tr("Min %1 Max %2").arg(number(*mn, 0), number(*mx, 0));
    else if (mn)
        lines << tr("Min %1").arg(number(*mn, 0));
    else if (mx)
        lines << tr("Max %1").arg(number(*mx, 0));
    if (area)
        lines << tr("Area %1").arg(number(*area, area->unit == QLatin1String("mm2") ? 1 : 0) + unit(*area));
    return lines.join(QLatin1Char('\n'));
}

} // namespace spectrum
