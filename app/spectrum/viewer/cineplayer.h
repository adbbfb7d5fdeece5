// SPDX-License-Identifier: Apache-2.0
#pragma once
// CinePlayer: a study viewer's cine on its active pane — through the frames of a multi-frame image at the rate it
// was acquired (Frame Time, Frame Time Vector, Cine Rate) unless the reader chose a rate, through the series'
// instances otherwise, round and round until stopped. A slow load holds it back; it never skips an image.
// `viewer->cine()->setPlaying(true)`.

#include <QObject>
#include <QTimer>

namespace spectrum {

class StudyViewer;

class CinePlayer : public QObject
{
    Q_OBJECT
public:
    explicit CinePlayer(StudyViewer *viewer);

    void setPlaying(bool playing);
    bool isPlaying() const { return m_timer.isActive(); }
    /// 1…60 images per second; `chosen`: the reader's own choice (+/−), which overrides the acquired rate.
    void setRate(int perSecond, bool chosen = true);
    int rate() const { return m_rate; }
    /// The rate cine runs at now (the acquired one for a multi-frame image that gives it) and whether it is the
    /// acquired one.
    double framesPerSecond(bool *acquired = nullptr) const;

Q_SIGNALS:
    void changed(bool playing, int framesPerSecond);

private:
    /// One step; the timer's next interval from the frame now shown.
    void step();

    StudyViewer *m_viewer;
    QTimer m_timer;
    int m_rate = 15;
    bool m_rateChosen = false;
};

} // namespace spectrum
