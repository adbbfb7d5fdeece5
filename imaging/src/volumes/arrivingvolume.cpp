// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/volumes/arrivingvolume.h"

#include <QObject>
#include <QSet>

#include <algorithm>
#include <cmath>

namespace spectrum {

using namespace vec;

namespace {

bool sameOrientation(const std::array<double, 6> &a, const std::array<double, 6> &b)
{
    for (int i = 0; i < 6; ++i)
        if (std::abs(a[size_t(i)] - b[size_t(i)]) > 1e-4)
            return false;
    return true;
}

/// Where `info` lies along `g`'s normal, in slots from its first (a fraction when off the grid).
double slotAlong(const VolumeGeometry &g, const ImageInfo &info)
{
    return dot(minus(info.imagePosition, g.origin), g.normal) / g.spacing[2];
}

} // namespace

ArrivingVolume::ArrivingVolume(Expect expect) : m_expect(std::move(expect)) {}

void ArrivingVolume::cancel()
{
    m_cancelled.store(true, std::memory_order_release);
}

std::shared_ptr<Volume> ArrivingVolume::volume() const
{
    std::lock_guard<std::mutex> lock(m_publishLock);
    return m_published;
}

void ArrivingVolume::publish()
{
    std::lock_guard<std::mutex> lock(m_publishLock);
    m_published = m_volume;
}

int ArrivingVolume::slotFor(const VolumeGeometry &g, const ImageInfo &info)
{
    if (!info.hasPosition || info.columns != g.columns || info.rows != g.rows || info.frameOfReferenceUid != g.frameOfReferenceUid)
        return -1;
    const Vector3 row{info.imageOrientation[0], info.imageOrientation[1], info.imageOrientation[2]};
    const Vector3 column{info.imageOrientation[3], info.imageOrientation[4], info.imageOrientation[5]};
    if (dot(unit(row), g.rowDirection) < 1 - 1e-6 || dot(unit(column), g.columnDirection) < 1 - 1e-6)
        return -1;
    if (std::abs(info.columnSpacing - g.spacing[0]) > 1e-4 * g.spacing[0] || std::abs(info.rowSpacing - g.spacing[1]) > 1e-4 * g.spacing[1])
        return -1;
    const double at = slotAlong(g, info);
    const long slot = std::lround(at);
    if (std::abs(at - double(slot)) > 0.1 || slot < 0 || slot >= g.slotCount)
        return -1;
    // In the plane, the slice's first pixel where the slot's is (a sheared stack is not one volume).
    const Vector3 offset = minus(info.imagePosition, g.origin);
    const double across = std::abs(dot(offset, g.rowDirection)), down = std::abs(dot(offset, g.columnDirection));
    if (std::max(across, down) > 0.1 * std::min(g.spacing[0], g.spacing[1]))
        return -1;
    return int(slot);
}

ArrivingVolume::Added ArrivingVolume::add(const QString &key, const DecodedImage &image)
{
    if (m_cancelled.load(std::memory_order_acquire))
        return {Outcome::Ignored, QObject::tr("laid out from the listing now")};
    const DicomIdentity &id = image.info.identity;
    if (id.seriesInstanceUid != m_expect.seriesInstanceUid)
        return {Outcome::Ignored, QObject::tr("of another series")};
    if (id.studyInstanceUid != m_expect.studyInstanceUid || id.patientId != m_expect.patientId)
        return {Outcome::Ignored, QObject::tr("it names another study or patient (%1) than the series'").arg(id.patientId)};
    std::lock_guard<std::mutex> lock(m_lock);
    if (m_cancelled.load(std::memory_order_acquire))
        return {Outcome::Ignored, QObject::tr("laid out from the listing now")};  // its volume is no longer written
    if (!m_conflict.isEmpty())
        return {Outcome::Waiting, m_conflict};
    if (m_headers.contains(key))
        return {Outcome::Ignored, QObject::tr("come already")};
    auto conflict = [&](const QString &why) {
        // Not one stack as far as can be told before the listing: nothing shown until it says what the series is.
        m_conflict = why;
        m_volume.reset();
        m_slices.clear();
        m_slot.clear();
        m_headers.clear();
        m_line.reset();
        publish();
        return Added{Outcome::Waiting, m_conflict};
    };
    auto pixels = std::make_shared<const DecodedImage>(image);
    const int first = int(m_slices.size());
    for (const VolumeSlice &s : volumeSlices(key, image.info)) {
        // Two slices at one place: the series holds more than one stack (phases, echoes); which slice belongs to
        // which is for the listing to settle. Until then no volume: a plane would mix them.
        for (const Slice &known : std::as_const(m_slices)) {
            if (!known.info.hasPosition || !s.info.hasPosition || !sameOrientation(known.info.imageOrientation, s.info.imageOrientation))
                continue;
            const Vector3 d = minus(known.info.imagePosition, s.info.imagePosition);
            if (std::sqrt(dot(d, d)) < 0.01)
                return conflict(QObject::tr("two of its slices lie at one place (%1 and %2): the series holds more than one stack, and is "
                                            "made into a volume once the archive has listed it")
                                    .arg(known.key, key));
        }
        m_slices << Slice{key, s.frame, s.info, pixels};
        m_slot << -1;
    }
    m_headers.insert(key, image.info);
    if (m_volume) {
        bool all = true;
        for (int i = first; i < m_slices.size(); ++i) {
            const Slice &s = m_slices[i];
            const VolumeGeometry &g = m_volume->geometry();
            const double at = slotAlong(g, s.info);
            if (m_line) {
                // Laid out by the Instance Numbers: a slice whose number does not put it where it lies (on a slot,
                // between two, or beyond) belongs to another run of the series (another stack, numbers in
                // acquisition order) — the spacing laid out may not be the series'.
                const double predicted = m_line->first + s.info.identity.instanceNumber * m_line->second;
                if (s.info.identity.instanceNumber <= 0 || std::abs(predicted - at) > 0.1)
                    return conflict(QObject::tr("its slices' Instance Numbers and places disagree (%1): it is made into a volume once the "
                                                "archive has listed it")
                                        .arg(key));
            } else if (at > -0.5 && at < g.slotCount - 0.5 && std::abs(at - std::nearbyint(at)) > 0.1) {
                // Between two places of the spacing laid out: that spacing was not the series'.
                return conflict(QObject::tr("a slice (%1) lies between the places of the spacing its first slices gave: it is made into a "
                                            "volume once the archive has listed it")
                                    .arg(key));
            }
            const int slot = slotFor(g, s.info);
            if (slot < 0 || m_slot.contains(slot) || m_volume->geometry().slotSlice[slot] >= 0) {
                all = false;
                continue;
            }
            m_slot[i] = slot;
            if (Error e = m_volume->fillSlot(slot, pixels->pixels, s.frame, s.info); e.isError())
                m_refused.insert(key, e.message());
        }
        if (all) {
            for (int i = first; i < m_slices.size(); ++i)
                m_slices[i].pixels.reset();  // in the volume now
            return {Outcome::Placed, {}};
        }
    }
    if (layOut())
        return {Outcome::LaidOut, {}};
    return {Outcome::Waiting, m_waiting};
}

bool ArrivingVolume::layOut()
{
    const int come = int(m_headers.size());
    const bool allHere = m_expect.instances > 0 && come >= m_expect.instances;
    if (m_slices.size() < 2) {
        m_waiting = QObject::tr("%n slice(s) come so far", nullptr, come);
        return false;
    }
    QList<VolumeSlice> slices;
    for (const Slice &s : std::as_const(m_slices))
        slices << VolumeSlice{s.key, s.frame, s.info};
    VolumeGeometry g = volumeGeometry(slices, SlotSpacing::Finest);
    if (!g.ok) {
        m_waiting = g.refusal;  // the volume so far (if any) stays: every slot in it is where its slice lies
        return false;
    }
    if (!g.unevenSpacing.isEmpty()) {
        // A slice off the places of the finest step so far: never put off its place. More slices settle it, or
        // the listing says the series is unevenly spaced.
        m_waiting = QObject::tr("its slices so far do not share one spacing");
        return false;
    }
    // The spacing must be the series', not a multiple of it: were it twice the series', a plane would be drawn
    // across the places of slices that have not come as if they did not exist. The Instance Numbers say so (two
    // numbers one apart lie one slot apart), or every instance the archive counted is here.
    std::optional<std::pair<double, double>> line;
    if (!allHere) {
        line = numberLine(g);
        if (!line) {
            m_waiting = come < 3 ? QObject::tr("%n slice(s) come so far", nullptr, come)
                                 : QObject::tr("the slices so far do not show the series' spacing (their Instance Numbers do not place them "
                                               "one slot apart): laid out once more have come, or once listed");
            return false;
        }
    }
    if (line)
        extend(g, *line);
    // Not absurd: a few slices far apart would ask for a slot every hair's breadth.
    if (g.slotCount > 4 * int(m_slices.size()) + 16 && !(m_expect.instances > 0 && g.slotCount <= 2 * m_expect.instances + 16)) {
        m_waiting = QObject::tr("its %1 slices so far are spread over %2 places: too sparse to lay out yet").arg(m_slices.size()).arg(g.slotCount);
        return false;
    }
    g.awaiting = true;
    Result<std::shared_ptr<Volume>> made = Volume::create(g, slices, m_expect.memoryLimit, m_expect.spillFolder);
    if (!made.isOk()) {
        m_waiting = made.error().message();
        return false;
    }
    std::shared_ptr<Volume> volume = made.value();
    QList<int> placed;
    for (int i = 0; i < m_slices.size(); ++i) {
        Slice &s = m_slices[i];
        const int slot = volume->slotOf(i);
        placed << slot;
        if (slot < 0)
            continue;  // left out (said in the volume's notes)
        if (m_refused.contains(s.key))
            volume->refuse(i, m_refused.value(s.key));
        else if (s.pixels)
            volume->fill(i, s.pixels->pixels, s.frame);  // laid out from its own header
        else if (m_volume && m_slot[i] >= 0)
            volume->copySlot(slot, *m_volume, m_slot[i]);
        s.pixels.reset();
    }
    m_volume = volume;
    m_slot = placed;
    m_line = line ? std::optional<std::pair<double, double>>(numberLine(volume->geometry())) : std::nullopt;
    m_waiting.clear();
    ++m_layouts;
    publish();
    return true;
}

std::optional<std::pair<double, double>> ArrivingVolume::numberLine(const VolumeGeometry &g) const
{
    // Single-frame images, each numbered, lying on one line of number against slot with one slot per number.
    const Slice *lo = nullptr, *hi = nullptr;
    for (const Slice &s : m_slices) {
        const int n = s.info.identity.instanceNumber;
        if (n <= 0 || s.info.frames > 1)
            return std::nullopt;
        if (!lo || n < lo->info.identity.instanceNumber)
            lo = &s;
        if (!hi || n > hi->info.identity.instanceNumber)
            hi = &s;
    }
    if (!lo || hi->info.identity.instanceNumber == lo->info.identity.instanceNumber)
        return std::nullopt;
    const int nLo = lo->info.identity.instanceNumber, nHi = hi->info.identity.instanceNumber;
    const double per = (slotAlong(g, hi->info) - slotAlong(g, lo->info)) / (nHi - nLo);
    if (std::abs(std::abs(per) - 1) > 0.01)
        return std::nullopt;
    const double a = slotAlong(g, lo->info) - nLo * per;
    for (const Slice &s : m_slices)
        if (std::abs(slotAlong(g, s.info) - (a + s.info.identity.instanceNumber * per)) > 0.1)
            return std::nullopt;
    return std::make_pair(a, per);
}

void ArrivingVolume::extend(VolumeGeometry &g, const std::pair<double, double> &line) const
{
    // Numbered from 1, as is usual (never reaching past as many numbers as the archive counted): the slice numbered
    // n lies at slot a + n × per.
    const int n = m_expect.instances;
    if (n <= 0)
        return;
    // Only numbers 1 … count: a series numbered otherwise (from 1001) is not reached for; it grows as it comes.
    for (const Slice &s : m_slices)
        if (s.info.identity.instanceNumber < 1 || s.info.identity.instanceNumber > n)
            return;
    const double a = line.first, per = line.second;
    const double at1 = a + per, atN = a + n * per;
    const int low = std::max(0, int(std::lround(-std::min(at1, atN))));
    const int high = std::max(0, int(std::lround(std::max(at1, atN))) - (g.slotCount - 1));
    if (low == 0 && high == 0)
        return;
    for (int k = 0; k < 3; ++k)
        g.origin[size_t(k)] -= low * g.spacing[2] * g.normal[size_t(k)];
    QList<int> slotSlice(low, -1);
    slotSlice += g.slotSlice;
    slotSlice += QList<int>(high, -1);
    g.slotSlice = slotSlice;
    g.slotCount = int(slotSlice.size());
    g.missing.clear();
    for (int s = 0; s < g.slotCount; ++s)
        if (g.slotSlice[s] < 0)
            g.missing << s;
}

ArrivingVolume::Snapshot ArrivingVolume::snapshot() const
{
    std::lock_guard<std::mutex> lock(m_lock);
    Snapshot s;
    s.volume = m_volume;
    s.waiting = m_conflict.isEmpty() ? m_waiting : m_conflict;
    s.layouts = m_layouts;
    for (int i = 0; i < m_slices.size(); ++i) {
        const Slice &slice = m_slices[i];
        QList<int> &frames = s.placed[slice.key];
        while (frames.size() <= slice.frame)
            frames << -1;
        frames[slice.frame] = m_volume ? m_slot[i] : -1;
    }
    s.headers = m_headers;
    return s;
}

} // namespace spectrum
