// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/volumes/planegeometry.h"

#include <cmath>

namespace spectrum {

namespace {

using V = std::array<double, 3>;

V rowDirection(const ImageInfo &i) { return {i.imageOrientation[0], i.imageOrientation[1], i.imageOrientation[2]}; }
V columnDirection(const ImageInfo &i) { return {i.imageOrientation[3], i.imageOrientation[4], i.imageOrientation[5]}; }
double dot(const V &a, const V &b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
V cross(const V &a, const V &b) { return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}; }
V add(const V &a, const V &b, double k = 1) { return {a[0] + k * b[0], a[1] + k * b[1], a[2] + k * b[2]}; }
V sub(const V &a, const V &b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }

} // namespace

bool hasPlaneGeometry(const ImageInfo &info)
{
    const V n = cross(rowDirection(info), columnDirection(info));
    return info.hasPosition && info.rowSpacing > 0 && info.columnSpacing > 0 && dot(n, n) > 0.5;
}

std::optional<PatientPoint> patientPointAt(const ImageInfo &info, QPointF at)
{
    if (!hasPlaneGeometry(info))
        return std::nullopt;
    const V alongRow = rowDirection(info), alongColumn = columnDirection(info);
    return add(add(info.imagePosition, alongRow, (at.x() - 0.5) * info.columnSpacing), alongColumn, (at.y() - 0.5) * info.rowSpacing);
}

std::optional<QPointF> imagePointOf(const ImageInfo &info, const PatientPoint &point, double *distanceMm)
{
    if (!hasPlaneGeometry(info))
        return std::nullopt;
    const V d = sub(point, info.imagePosition);
    const V alongRow = rowDirection(info), alongColumn = columnDirection(info);
    if (distanceMm) {
        V n = cross(alongRow, alongColumn);
        const double length = std::sqrt(dot(n, n));
        *distanceMm = dot(d, n) / length;
    }
    return QPointF(dot(d, alongRow) / info.columnSpacing + 0.5, dot(d, alongColumn) / info.rowSpacing + 0.5);
}

std::optional<QLineF> referenceLine(const ImageInfo &image, const ImageInfo &slice)
{
    if (!hasPlaneGeometry(image) || !hasPlaneGeometry(slice) || image.frameOfReferenceUid.isEmpty()
        || image.frameOfReferenceUid != slice.frameOfReferenceUid)
        return std::nullopt;
    V n = cross(rowDirection(image), columnDirection(image));
    n = {n[0] / std::sqrt(dot(n, n)), n[1] / std::sqrt(dot(n, n)), n[2] / std::sqrt(dot(n, n))};
    V m = cross(rowDirection(slice), columnDirection(slice));
    const double mLength = std::sqrt(dot(m, m));
    if (std::abs(dot(n, m)) / mLength > 0.996)  // parallel within ~5°: no line to draw
        return std::nullopt;
    // The slice's rectangle (the outer edges of its pixels), cut by the image's plane: where its edges cross it.
    const QPointF corners[4] = {QPointF(0, 0), QPointF(slice.columns, 0), QPointF(slice.columns, slice.rows), QPointF(0, slice.rows)};
    std::array<V, 4> c;
    std::array<double, 4> side;
    for (int i = 0; i < 4; ++i) {
        c[i] = *patientPointAt(slice, corners[i]);
        side[i] = dot(sub(c[i], image.imagePosition), n);
    }
    QList<V> cuts;
    for (int i = 0; i < 4; ++i) {
        const int j = (i + 1) % 4;
        if ((side[i] <= 0 && side[j] > 0) || (side[i] > 0 && side[j] <= 0)) {
            const double t = side[i] / (side[i] - side[j]);
            cuts << add(c[i], sub(c[j], c[i]), t);
        }
    }
    if (cuts.size() < 2)
        return std::nullopt;
    const std::optional<QPointF> a = imagePointOf(image, cuts[0]), b = imagePointOf(image, cuts[1]);
    return QLineF(*a, *b);
}

} // namespace spectrum
