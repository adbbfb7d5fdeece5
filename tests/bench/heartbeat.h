// SPDX-License-Identifier: Apache-2.0
#pragma once
// The GUI event loop's heartbeat, for the benchmarks that measure stalls: a precise timer every `tickMs`; each beat
// later than that is a stall of the difference. Shared by spectrum-stallbench, -priorsbench and -soakbench.

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QPointF>
#include <QTimer>
#include <QWheelEvent>
#include <QWidget>

#include <algorithm>
#include <vector>

namespace spectrum::bench {

class Heartbeat
{
public:
    explicit Heartbeat(int tickMs = 2) : m_tickMs(tickMs)
    {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(tickMs);
        QObject::connect(&m_timer, &QTimer::timeout, [this] {
            if (m_beat.isValid())
                m_gaps.push_back(std::max(0.0, m_beat.nsecsElapsed() / 1e6 - m_tickMs));
            m_beat.start();
        });
    }

    void start() { m_timer.start(); }
    void stop() { m_timer.stop(); }
    /// Forgets the beats so far (a new measurement from the next beat on).
    void reset()
    {
        m_gaps.clear();
        m_beat.invalidate();
    }
    bool isActive() const { return m_timer.isActive(); }
    int tickMs() const { return m_tickMs; }
    size_t beats() const { return m_gaps.size(); }
    /// The longest stall, ms (0 without beats).
    double worstMs() const { return m_gaps.empty() ? 0 : *std::max_element(m_gaps.begin(), m_gaps.end()); }
    /// The stall `fraction` of beats stay under (0.99: the 99th percentile), ms.
    double percentileMs(double fraction) const
    {
        if (m_gaps.empty())
            return 0;
        std::vector<double> sorted = m_gaps;
        std::sort(sorted.begin(), sorted.end());
        return sorted[size_t(fraction * double(sorted.size() - 1))];
    }
    long over(double ms) const { return long(std::count_if(m_gaps.begin(), m_gaps.end(), [ms](double g) { return g > ms; })); }

private:
    int m_tickMs;
    QTimer m_timer;
    QElapsedTimer m_beat;
    std::vector<double> m_gaps;
};

/// One wheel notch on `widget`'s centre (`direction` 1: down the stack).
inline void wheelNotch(QWidget *widget, int direction)
{
    const QPointF at(widget->width() / 2.0, widget->height() / 2.0);
    QWheelEvent e(at, widget->mapToGlobal(at), QPoint(), QPoint(0, -120 * direction), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(widget, &e);
}

} // namespace spectrum::bench
