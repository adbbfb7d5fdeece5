// SPDX-License-Identifier: Apache-2.0
#include "viewport/screenorientation.h"

#include <QTransform>

#include <algorithm>
#include <cmath>

namespace spectrum {

QString patientDirectionLabel(const std::array<double, 3> &v)
{
    // L, P, H along +x, +y, +z of the patient coordinate system (LPS); the strongest component first, and any
    // other that counts (obliques read "LA", "HFP"…).
    const char positive[3] = {'L', 'P', 'H'}, negative[3] = {'R', 'A', 'F'};
    std::array<int, 3> order{0, 1, 2};
    std::sort(order.begin(), order.end(), [&v](int a, int b) { return std::abs(v[size_t(a)]) > std::abs(v[size_t(b)]); });
    QString label;
    const double strongest = std::abs(v[size_t(order[0])]);
    for (int axis : order) {
        const double c = v[size_t(axis)];
        if (strongest > 0 && std::abs(c) >= 0.25 * strongest && std::abs(c) > 1e-3)
            label += QLatin1Char(c > 0 ? positive[axis] : negative[axis]);
    }
    return label;
}

ScreenDirections screenDirections(const ImageInfo &info, const ViewGeometry &view)
{
    ScreenDirections d;
    if (!view.hasExtent() || !info.hasPosition)
        return d;
    bool invertible = false;
    const QTransform back = view.imageToWidget().inverted(&invertible);
    if (!invertible)
        return d;
    // A step right (and down) on screen in image columns and rows, then in the patient: rows run along the row
    // direction cosines, columns along the column ones.
    auto patient = [&](QPointF screenStep) {
        const QPointF step = back.map(screenStep) - back.map(QPointF(0, 0));
        std::array<double, 3> v{};
        for (int i = 0; i < 3; ++i)
            v[size_t(i)] = step.x() * info.imageOrientation[size_t(i)] * std::max(info.columnSpacing, 1e-6)
                         + step.y() * info.imageOrientation[size_t(i) + 3] * std::max(info.rowSpacing, 1e-6);
        return v;
    };
    const std::array<double, 3> right = patient(QPointF(1, 0)), down = patient(QPointF(0, 1));
    d.right = patientDirectionLabel(right);
    d.down = patientDirectionLabel(down);
    d.left = patientDirectionLabel({-right[0], -right[1], -right[2]});
    d.up = patientDirectionLabel({-down[0], -down[1], -down[2]});
    return d;
}

std::optional<std::pair<double, double>> scaleBar(const ImageInfo &info, const ViewGeometry &view)
{
    if (!view.hasExtent() || !(info.rowSpacing > 0 && info.columnSpacing > 0))
        return std::nullopt;
    bool invertible = false;
    const QTransform back = view.imageToWidget().inverted(&invertible);
    if (!invertible)
        return std::nullopt;
    const QPointF step = back.map(QPointF(1, 0)) - back.map(QPointF(0, 0));
    const double mmPerPixel = std::hypot(step.x() * info.columnSpacing, step.y() * info.rowSpacing);
    if (!(mmPerPixel > 0))
        return std::nullopt;
    // The longest round length (1, 2, 5 × 10^n mm) that fits in 120 screen pixels.
    double best = 0;
    for (double decade = 0.01; decade <= 1000; decade *= 10)
        for (double m : {1.0, 2.0, 5.0})
            if (m * decade / mmPerPixel <= 120)
                best = m * decade;
    if (best <= 0)
        return std::nullopt;
    return std::make_pair(best, best / mmPerPixel);
}

} // namespace spectrum
