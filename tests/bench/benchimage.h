// SPDX-License-Identifier: Apache-2.0
#pragma once
// The benchmarks' test image (tests/bench/filterbench.cpp, memorybench.cpp).

#include <QByteArray>
#include <QRandomGenerator>

#include <algorithm>
#include <cmath>

namespace spectrum::bench {

/// A 12-bit CT-like test image: an ellipse of soft tissue with a bright rim and an insert, plus noise.
inline QByteArray benchImage(int n)
{
    QByteArray bytes(qsizetype(n) * n * 2, Qt::Uninitialized);
    auto *p = reinterpret_cast<quint16 *>(bytes.data());
    QRandomGenerator g(n);
    for (int y = 0; y < n; ++y) {
        for (int x = 0; x < n; ++x) {
            const double u = (x - n / 2.0) / (0.40 * n), v = (y - n / 2.0) / (0.46 * n);
            const double r = u * u + v * v, insert = std::pow((x - 0.45 * n) / (0.08 * n), 2) + std::pow((y - 0.35 * n) / (0.1 * n), 2);
            const int base = r > 1 ? 24 : r > 0.9 ? 2600 : insert < 1 ? 1300 : 1064;
            p[qsizetype(y) * n + x] = quint16(std::clamp(base + int(g.bounded(61)) - 30, 0, 4095));
        }
    }
    return bytes;
}

} // namespace spectrum::bench
