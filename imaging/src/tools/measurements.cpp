// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/tools/measurements.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>
#include <vector>

namespace spectrum {

std::optional<QPoint> pixelAt(const ImageInfo &info, QPointF position)
{
    const double x = std::floor(position.x()), y = std::floor(position.y());
    if (!(x >= 0 && y >= 0 && x < info.columns && y < info.rows))
        return std::nullopt;
    return QPoint(int(x), int(y));
}

double modalityValueAt(const DecodedImage &image, int frame, QPoint pixel)
{
    return image.info.toModalityValue(image.pixels.sampleAt(pixel.x(), pixel.y(), frame));
}

double distancePixels(QPointF a, QPointF b)
{
    return std::hypot(b.x() - a.x(), b.y() - a.y());
}

double distanceMm(const ImageInfo &info, QPointF a, QPointF b)
{
    if (!(info.rowSpacing > 0 && info.columnSpacing > 0))
        return -1;
    return std::hypot((b.x() - a.x()) * info.columnSpacing, (b.y() - a.y()) * info.rowSpacing);
}

namespace {

RegionStatistics summarize(RegionStatistics s, const std::vector<double> &values)
{
    if (values.empty())
        return s;
    s.pixels = qint64(values.size());
    double sum = 0;
    s.minimum = s.maximum = values.front();
    for (double v : values) {
        sum += v;
        s.minimum = std::min(s.minimum, v);
        s.maximum = std::max(s.maximum, v);
    }
    s.mean = sum / double(values.size());
    double squares = 0;
    for (double v : values)
        squares += (v - s.mean) * (v - s.mean);
    s.standardDeviation = std::sqrt(squares / double(values.size()));
    return s;
}

} // namespace

RegionStatistics regionStatistics(const DecodedImage &image, int frame, RegionShape shape, const QRectF &bounds)
{
    RegionStatistics s;
    const QRectF r = bounds.normalized();
    s.areaPixels = shape == RegionShape::Ellipse ? M_PI * r.width() / 2 * r.height() / 2 : r.width() * r.height();
    if (image.info.rowSpacing > 0 && image.info.columnSpacing > 0)
        s.areaMm2 = s.areaPixels * image.info.rowSpacing * image.info.columnSpacing;
    if (image.pixels.isNull() || frame < 0 || frame >= image.pixels.frames())
        return s;
    // Pixels whose centre (x + 0.5, y + 0.5) lies inside; the sums in double (Welford would not be needed for
    // the ranges of modality values, but the mean is subtracted first all the same for accuracy).
    const int x0 = std::max(0, int(std::ceil(r.left() - 0.5)));
    const int x1 = std::min(image.pixels.width() - 1, int(std::floor(r.right() - 0.5)));
    const int y0 = std::max(0, int(std::ceil(r.top() - 0.5)));
    const int y1 = std::min(image.pixels.height() - 1, int(std::floor(r.bottom() - 0.5)));
    const double cx = r.center().x(), cy = r.center().y();
    const double rx = r.width() / 2, ry = r.height() / 2;
    std::vector<double> values;
    for (int y = y0; y <= y1; ++y) {
        for (int x = x0; x <= x1; ++x) {
            if (shape == RegionShape::Ellipse) {
                if (rx <= 0 || ry <= 0)
                    continue;
                const double dx = (x + 0.5 - cx) / rx, dy = (y + 0.5 - cy) / ry;
                if (dx * dx + dy * dy > 1.0)
                    continue;
            }
            values.push_back(modalityValueAt(image, frame, QPoint(x, y)));
        }
    }
    return summarize(s, values);
}

RegionStatistics regionStatistics(const DecodedImage &image, int frame, const QList<QPointF> &polygon)
{
    RegionStatistics s;
    if (polygon.size() < 3)
        return s;
    double twice = 0;
    for (qsizetype i = 0; i < polygon.size(); ++i) {
        const QPointF &p = polygon[i], &q = polygon[(i + 1) % polygon.size()];
        twice += p.x() * q.y() - q.x() * p.y();
    }
    s.areaPixels = std::fabs(twice) / 2;
    if (image.info.rowSpacing > 0 && image.info.columnSpacing > 0)
        s.areaMm2 = s.areaPixels * image.info.rowSpacing * image.info.columnSpacing;
    if (image.pixels.isNull() || frame < 0 || frame >= image.pixels.frames())
        return s;
    double left = polygon[0].x(), right = left, top = polygon[0].y(), bottom = top;
    for (const QPointF &p : polygon) {
        left = std::min(left, p.x());
        right = std::max(right, p.x());
        top = std::min(top, p.y());
        bottom = std::max(bottom, p.y());
    }
    const QRectF r(QPointF(left, top), QPointF(right, bottom));
    // Even-odd rule: a pixel centre is inside when a ray to its right crosses the outline an odd number of times.
    auto inside = [&polygon](double x, double y) {
        bool in = false;
        for (qsizetype i = 0, j = polygon.size() - 1; i < polygon.size(); j = i++) {
            const QPointF &a = polygon[i], &b = polygon[j];
            if ((a.y() > y) != (b.y() > y) && x < (b.x() - a.x()) * (y - a.y()) / (b.y() - a.y()) + a.x())
                in = !in;
        }
        return in;
    };
    const int x0 = std::max(0, int(std::ceil(r.left() - 0.5)));
    const int x1 = std::min(image.pixels.width() - 1, int(std::floor(r.right() - 0.5)));
    const int y0 = std::max(0, int(std::ceil(r.top() - 0.5)));
    const int y1 = std::min(image.pixels.height() - 1, int(std::floor(r.bottom() - 0.5)));
    std::vector<double> values;
    for (int y = y0; y <= y1; ++y)
        for (int x = x0; x <= x1; ++x)
            if (inside(x + 0.5, y + 0.5))
                values.push_back(modalityValueAt(image, frame, QPoint(x, y)));
    return summarize(s, values);
}

const QList<WindowPreset> &ctWindowPresets()
{
    static const QList<WindowPreset> presets = {
        {40, 80, QCoreApplication::translate("spectrum", "Brain")},
        {-600, 1500, QCoreApplication::translate("spectrum", "Lung")},
        {400, 1800, QCoreApplication::translate("spectrum", "Bone")},
        {50, 400, QCoreApplication::translate("spectrum", "Abdomen")},
        {50, 350, QCoreApplication::translate("spectrum", "Mediastinum")},
    };
    return presets;
}

VoiWindow autoWindow(const DecodedImage &image, int frame)
{
    if (image.pixels.isNull() || !image.pixels.isGray() || frame < 0 || frame >= image.pixels.frames())
        return minMaxWindow(image, std::max(0, frame));
    if (image.pixels.format() == PixelFormat::Float64) {
        // Real values: the percentiles by selection (a histogram over every possible value would not fit).
        std::vector<double> v;
        const double *p = reinterpret_cast<const double *>(image.pixels.frameData(frame));
        for (qsizetype i = 0, n = qsizetype(image.pixels.width()) * image.pixels.height(); i < n; ++i)
            if (std::isfinite(p[i]))
                v.push_back(image.info.toModalityValue(p[i]));
        if (v.empty())
            return minMaxWindow(image, frame);
        auto at = [&v](double fraction) {
            const size_t k = size_t(std::floor(fraction * double(v.size() - 1)));
            std::nth_element(v.begin(), v.begin() + qsizetype(k), v.end());
            return v[k];
        };
        const double a = at(0.005), b = at(0.995);
        return VoiWindow{(a + b) / 2, std::max(b - a, 1e-9)};
    }
    int lo = 0, hi = 0;
    image.pixels.minMax(frame, &lo, &hi);
    // A histogram of stored values (at most 65 536 bins for 16-bit), then the two percentiles.
    std::vector<qint64> histogram(size_t(hi - lo) + 1, 0);
    const int w = image.pixels.width(), h = image.pixels.height();
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            ++histogram[size_t(image.pixels.valueAt(x, y, frame) - lo)];
    const qint64 total = qint64(w) * h;
    auto percentile = [&](double fraction) {
        const qint64 rank = std::clamp<qint64>(qint64(std::floor(fraction * double(total - 1))), 0, total - 1);
        qint64 seen = 0;
        for (size_t i = 0; i < histogram.size(); ++i) {
            seen += histogram[i];
            if (seen > rank)
                return lo + int(i);
        }
        return hi;
    };
    const double a = image.info.toModalityValue(percentile(0.005));
    const double b = image.info.toModalityValue(percentile(0.995));
    const double mn = std::min(a, b), mx = std::max(a, b);
    return VoiWindow{(mn + mx + 1) / 2, std::max(1.0, mx - mn + 1)};
}

} // namespace spectrum
