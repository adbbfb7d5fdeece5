// SPDX-License-Identifier: Apache-2.0
#pragma once
// Points and directions in patient coordinates (LPS, mm), and the few operations the volume code needs on them.

#include <array>
#include <cmath>

namespace spectrum {

using Vector3 = std::array<double, 3>;

namespace vec {
inline double dot(const Vector3 &a, const Vector3 &b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline Vector3 cross(const Vector3 &a, const Vector3 &b) { return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}; }
inline Vector3 plus(const Vector3 &a, const Vector3 &b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
inline Vector3 minus(const Vector3 &a, const Vector3 &b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline Vector3 scaled(const Vector3 &a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
/// `a` made one long (itself when it has no length).
inline Vector3 unit(const Vector3 &a)
{
    const double n = std::sqrt(dot(a, a));
    return n > 0 ? scaled(a, 1 / n) : a;
}
} // namespace vec

} // namespace spectrum
