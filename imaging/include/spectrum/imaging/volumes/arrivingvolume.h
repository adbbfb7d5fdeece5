// SPDX-License-Identifier: Apache-2.0
#pragma once
// ArrivingVolume: a series made into a volume while its slices arrive, before the archive has listed it. The volume
// is laid out from the slices come so far, each placed by its own header (position, orientation, spacing, frame of
// reference), and reaches as far as the rest of the series will lie, its places awaited (arriving, hatched — never
// gaps). A slice that lies on an awaited place goes straight in; one that lies off every place has the volume laid
// out again around every slice come so far, what the old one held copied over.
//
// Nothing is placed or drawn by a guess. The slot spacing is the finest step between the slices so far, and it is
// taken for the series' only when their Instance Numbers confirm it (numbers one apart lie one slot apart, all on
// one line — the usual stream, in number order) or every instance the archive counted is here: a spacing twice the
// series' would draw planes across slices not come yet as if they did not exist. The numbers and the archive's
// count also give the layout its reach, so in the usual stream the first layout is the last. Two slices at one
// place, or a slice whose number does not put it where it lies, mean more than one stack: nothing is laid out until
// the listing. Only slices of the series, study and patient expected go in. Thread-safe: add() from any thread.

#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/volumes/volume.h"

#include <QHash>
#include <QString>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

namespace spectrum {

class ArrivingVolume
{
public:
    struct Expect
    {
        QString seriesInstanceUid, studyInstanceUid, patientId;
        int instances = -1;             ///< how many instances the archive says the series has; -1: not said
        qint64 memoryLimit = qint64(1) << 62;
        QString spillFolder;            ///< see Volume::create
    };
    enum class Outcome {
        Placed,    ///< into the volume as laid out
        LaidOut,   ///< the volume was laid out again (volume() is a new one) with it
        Waiting,   ///< kept: no volume can be laid out yet (why says why: one slice so far, or the slices disagree)
        Ignored,   ///< not of the series, study and patient expected, or a slice already come (why says which)
    };
    struct Added
    {
        Outcome outcome = Outcome::Waiting;
        QString why;
    };

    explicit ArrivingVolume(Expect expect);

    /// From now on add() takes nothing (the series is laid out from its listing instead): once snapshot() has
    /// returned after it, the volume is never written again.
    void cancel();

    /// The decoded instance `key` (every frame of it).
    Added add(const QString &key, const DecodedImage &image);

    /// The volume laid out so far: null before one can be (waits for the lock only while a new one is published).
    std::shared_ptr<Volume> volume() const;

    /// The volume laid out so far, the slot each slice come so far lies in and their headers (waits while a slice is
    /// added or a layout made: for the listing's layout, once).
    struct Snapshot
    {
        std::shared_ptr<Volume> volume;
        QHash<QString, QList<int>> placed;  ///< key → slot of each frame (-1: not in this volume)
        QHash<QString, ImageInfo> headers; ///< key → its header as decoded (the whole image's, every frame)
        QString waiting;                   ///< why there is no volume yet
        int layouts = 0;                   ///< how many times it was laid out
    };
    Snapshot snapshot() const;

private:
    struct Slice
    {
        QString key;
        int frame = 0;
        ImageInfo info;
        std::shared_ptr<const DecodedImage> pixels;  ///< kept only until it is in a volume
    };
    /// The slot `info` lies on in `geometry` (within a tenth of a spacing, the same plane), -1 when none.
    static int slotFor(const VolumeGeometry &geometry, const ImageInfo &info);
    bool layOut();
    /// The line of Instance Number against slot in `g` the slices so far lie on — slot = a + n × per, per ±1 —, when
    /// they all do (single-frame and numbered).
    std::optional<std::pair<double, double>> numberLine(const VolumeGeometry &g) const;
    /// Awaited places added on either side of `g` for the rest of the series, as far as `line` and the archive's
    /// count place its numbers 1 … count.
    void extend(VolumeGeometry &g, const std::pair<double, double> &line) const;
    void publish();

    Expect m_expect;
    mutable std::mutex m_lock;
    QList<Slice> m_slices;                ///< every frame come so far, as slices
    QHash<QString, QString> m_refused;    ///< key → why its slot was refused (kept through layouts)
    QHash<QString, ImageInfo> m_headers;  ///< key → its header (the whole image's)
    std::shared_ptr<Volume> m_volume;
    QList<int> m_slot;                    ///< per slice: its slot in m_volume, -1 none
    QString m_waiting;
    QString m_conflict;                   ///< not one stack: no volume until the series is listed
    std::optional<std::pair<double, double>> m_line;  ///< the number line m_volume was laid out by
    int m_layouts = 0;
    std::atomic<bool> m_cancelled{false};
    mutable std::mutex m_publishLock;
    std::shared_ptr<Volume> m_published; ///< m_volume, for volume()
};

} // namespace spectrum
