#include "spectrum/imaging/arrivingvolume.h"

#include <QObject>
#include <QSet>

#include <algorithm>
#include <cmath>

namespace spectrum {

using namespace vec;

ArrivingVolume::ArrivingVolume(Expect expect) : m_expect(std::move(expect)) {}

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
    const Vector3 offset = minus(info.imagePosition, g.origin);
    const double at = dot(offset, g.normal) / g.spacing[2];
    const long slot = std::lround(at);
    if (std::abs(at - double(slot)) > 0.1 || slot < 0 || slot >= g.slotCount)
        return -1;
    // In the plane, the slice's first pixel where the slot's is (a sheared stack is not one volume).
    const double across = std::abs(dot(offset, g.rowDirection)), down = std::abs(dot(offset, g.columnDirection));
    if (std::max(across, down) > 0.1 * std::min(g.spacing[0], g.spacing[1]))
        return -1;
    return int(slot);
}

ArrivingVolume::Added ArrivingVolume::add(const QString &key, const DecodedImage &image)
{
    const DicomIdentity &id = image.info.identity;
    if (id.seriesInstanceUid != m_expect.seriesInstanceUid)
        return {Outcome::Ignored, QObject::tr("of another series")};
    if (id.studyInstanceUid != m_expect.studyInstanceUid || id.patientId != m_expect.patientId)
        return {Outcome::Ignored, QObject::tr("it names another study or patient (%1) than the series'").arg(id.patientId)};
    std::lock_guard<std::mutex> lock(m_lock);
    if (!m_conflict.isEmpty())
        return {Outcome::Waiting, m_conflict};
    if (std::any_of(m_slices.begin(), m_slices.end(), [&](const Slice &s) { return s.key == key; }))
        return {Outcome::Ignored, QObject::tr("come already")};
    auto pixels = std::make_shared<const DecodedImage>(image);
    const int first = int(m_slices.size());
    for (const VolumeSlice &s : volumeSlices(key, image.info)) {
        // Two slices at one place: the series holds more than one stack (phases, echoes); which slice belongs to
        // which is for the listing to settle. Until then no volume: a plane would mix them.
        for (const Slice &known : std::as_const(m_slices)) {
            if (!known.info.hasPosition || !s.info.hasPosition || known.info.imageOrientation != s.info.imageOrientation)
                continue;
            const Vector3 d = minus(known.info.imagePosition, s.info.imagePosition);
            if (std::sqrt(dot(d, d)) < 0.01) {
                m_conflict = QObject::tr("two of its slices lie at one place (%1 and %2): the series holds more than one stack, and is not "
                                         "made into a volume before the archive lists it")
                                 .arg(known.key, key);
                m_volume.reset();
                m_slices.clear();
                m_slot.clear();
                m_headers.clear();
                return {Outcome::Waiting, m_conflict};
            }
        }
        m_slices << Slice{key, s.frame, s.info, pixels};
        m_slot << -1;
    }
    m_headers.insert(key, image.info);
    if (m_volume) {
        bool all = true;
        for (int i = first; i < m_slices.size(); ++i) {
            const int slot = slotFor(m_volume->geometry(), m_slices[i].info);
            if (slot < 0 || m_slot.contains(slot) || m_volume->geometry().slotSlice[slot] >= 0) {
                all = false;
                continue;
            }
            m_slot[i] = slot;
            if (Error e = m_volume->fillSlot(slot, pixels->pixels, m_slices[i].frame, m_slices[i].info); e.isError())
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

void ArrivingVolume::extend(VolumeGeometry &g) const
{
    QSet<QString> keys;
    for (const Slice &s : m_slices)
        keys.insert(s.key);
    const int toCome = m_expect.instances > 0 ? std::max(0, m_expect.instances - int(keys.size())) : -1;
    if (toCome == 0)
        return;  // all here: the layout is the series'
    int low = 0, high = 0;  // awaited slots to add below the first and above the last
    // Instance Numbers along the stack: the slice numbered n lies at a + n × per slots.
    const Slice *lo = nullptr, *hi = nullptr;
    bool numbered = m_expect.instances > 0 && keys.size() == m_slices.size();  // single-frame images only
    for (const Slice &s : m_slices) {
        const int n = s.info.identity.instanceNumber;
        numbered = numbered && n > 0;
        if (!lo || n < lo->info.identity.instanceNumber)
            lo = &s;
        if (!hi || n > hi->info.identity.instanceNumber)
            hi = &s;
    }
    auto slotOf = [&g](const Slice &s) { return dot(minus(s.info.imagePosition, g.origin), g.normal) / g.spacing[2]; };
    if (numbered && hi->info.identity.instanceNumber > lo->info.identity.instanceNumber) {
        const int nLo = lo->info.identity.instanceNumber, nHi = hi->info.identity.instanceNumber;
        const double per = (slotOf(*hi) - slotOf(*lo)) / (nHi - nLo);
        for (const Slice &s : m_slices)
            numbered = numbered && std::abs(slotOf(s) - (slotOf(*lo) + (s.info.identity.instanceNumber - nLo) * per)) <= 0.1;
        if (numbered && std::abs(per) >= 0.5) {
            // The series' numbers span instances − 1 (numbered from 1, as is usual; never more than that).
            const int span = std::max(0, m_expect.instances - 1 - (nHi - nLo));
            const int before = std::min(nLo - 1, span), after = span - before;
            const int beforeSlots = int(std::lround(before * std::abs(per))), afterSlots = int(std::lround(after * std::abs(per)));
            low = per > 0 ? beforeSlots : afterSlots;
            high = per > 0 ? afterSlots : beforeSlots;
        } else {
            numbered = false;
        }
    } else {
        numbered = false;
    }
    if (!numbered) {
        // In no order the numbers tell: as far again as the slices come so far, on each side (no further than the
        // instances still to come could lie, when the archive said how many).
        const int reach = toCome > 0 ? std::min(g.slotCount, toCome) : g.slotCount;
        low = high = reach;
    }
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

bool ArrivingVolume::layOut()
{
    // Three slices at least (unless that is the whole series): the spacing of two far apart would be a guess.
    const int come = int(m_headers.size());
    if (come < 3 && !(m_expect.instances > 0 && come >= m_expect.instances) && m_slices.size() < 3) {
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
        // A slice off the places of the spacing the slices so far give: the spacing is a guess yet (more will
        // settle it), or the series is unevenly spaced (its listing will say). Never put a slice off its place.
        m_waiting = QObject::tr("its slices so far do not share one spacing");
        return false;
    }
    // Not absurd: a few slices far apart with two close together would ask for a slot every hair's breadth.
    const int slicesCome = int(m_slices.size());
    if (g.slotCount > 4 * slicesCome + 16 && !(m_expect.instances > 0 && g.slotCount <= 2 * m_expect.instances + 16)) {
        m_waiting = QObject::tr("its %1 slices so far are spread over %2 places: too sparse to lay out yet").arg(slicesCome).arg(g.slotCount);
        return false;
    }
    extend(g);
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
    m_waiting.clear();
    ++m_layouts;
    return true;
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
