// SPDX-License-Identifier: Apache-2.0
#pragma once
// How many connections a pull with `--streams auto` opens, converging in a few round trips (the NLM seeds'
// multisocket idea, without knowing the path beforehand).
//
// The open request's round trip says what path this is: two streams on a LAN, four on a path of 2 ms or more (a
// wide-area path, where each stream is held to its window per round trip and streams add up). Once a step's streams
// are attached and their first requests had a round trip to come back, the job measures the total rate over
// max(2 round trips, 30 ms) and asks next(): the count is then multiplied by four on a wide path (two on a LAN), and
// doubled while the rate grows at least half as much as the streams did (×1.5 for ×2, ×2.5 for ×4). The first step
// that does not is the last: the link, not the streams, is the limit then. (Adding one stream at a time every
// 250 ms took seconds to reach the eight a 40 ms path needs: 1.69× the time of eight from the start.)
//
// Only the decisions live here; StreamAdaptation (streamadaptation.h) keeps the timers, the job its streams.

namespace spectrum::blobwire {

class StreamSteps
{
public:
    /// A path whose round trip is this long or longer is wide: each stream is held to its window.
    static constexpr double kWidePathMs = 2.0;

    /// At most `maxStreams`, on a path of `roundTripMs`.
    StreamSteps(int maxStreams, double roundTripMs) : m_max(maxStreams), m_roundTripMs(roundTripMs) {}

    /// The streams a pull opens first (before any measurement), at most `maxStreams`.
    static int first(int maxStreams, double roundTripMs);

    /// `rate` (bytes per second) was measured with `streams` attached: the streams of the next step, or 0 when
    /// this one is the last (done() from then on).
    int next(int streams, double rate);

    /// No step follows: the count reached is kept (also after stop()).
    bool done() const { return m_done; }
    /// Stops stepping (the session was lost, nothing is left to ask for).
    void stop() { m_done = true; }

    /// Milliseconds to wait once a step's streams are attached before measuring (their first requests' round
    /// trip), and how long to measure.
    int settleMs() const;
    int measureMs() const;

private:
    int m_max;
    double m_roundTripMs;
    bool m_done = false;
    double m_rateBefore = 0;
    int m_streamsBefore = 0;
    int m_steps = 0;  ///< measurements taken
};

} // namespace spectrum::blobwire
