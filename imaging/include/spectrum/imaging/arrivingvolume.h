#pragma once
// ArrivingVolume: a series made into a volume while its slices arrive, before the archive has listed it. The volume
// is laid out from the slices come so far, each placed by its own header (position, orientation, spacing, frame of
// reference), and reaches as far as the rest of the series will lie, its places awaited (arriving, hatched — never
// gaps). A slice that lies on an awaited place goes straight in. One that lies off every place (outside the layout,
// or between the places of a spacing guessed from too few slices) has the volume laid out again around every slice
// come so far, what the old one held copied over.
//
// How far the rest lies: when the slices come in Instance Number order along the stack (the usual stream) and the
// archive said how many the series has, the numbers place the rest, and the first layout is the last; otherwise the
// layout reaches as far again as the slices come so far on each side, so a stream in any order is laid out only a few
// times. Only slices of the series, study and patient expected go in. Thread-safe: add() from any thread.

#include "spectrum/imaging/dicomdecoder.h"
#include "spectrum/imaging/volume.h"

#include <QHash>
#include <QString>

#include <memory>
#include <mutex>

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

    /// The decoded instance `key` (every frame of it).
    Added add(const QString &key, const DecodedImage &image);

    /// The volume laid out so far (null before two slices agree on one) and the slot each slice come so far lies in.
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
    /// Awaited places added on either side of `g` (laid out from the slices come so far) for the rest of the series.
    void extend(VolumeGeometry &g) const;

    Expect m_expect;
    mutable std::mutex m_lock;
    QList<Slice> m_slices;                ///< every frame come so far, as slices
    QHash<QString, QString> m_refused;    ///< key → why its slot was refused (kept through layouts)
    QHash<QString, ImageInfo> m_headers;  ///< key → its header (the whole image's)
    std::shared_ptr<Volume> m_volume;
    QList<int> m_slot;                    ///< per slice: its slot in m_volume, -1 none
    QString m_waiting;
    QString m_conflict;                   ///< two slices at one place: no volume until the series is listed
    int m_layouts = 0;
};

} // namespace spectrum
