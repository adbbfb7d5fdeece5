// SPDX-License-Identifier: Apache-2.0
#pragma once
// A series' slices as one block of voxels: what reformatting (MPR) samples. One 16-bit copy of the volume, filled
// slot by slot as slices decode — any order, from any thread — while planes are cut from the slots already in.
// Voxels keep the slices' stored values under one rescale (modality value = voxel × slope + intercept); slices whose
// rescale differs are brought to it exactly or the volume is refused. A volume larger than the memory it may take is
// kept in a file in the given folder (the disk cache) and paged in and out by the system: streamed, not refused.

#include "spectrum/core/error.h"
#include "spectrum/core/result.h"
#include "spectrum/imaging/pixelbuffer.h"
#include "spectrum/imaging/volumes/volumegeometry.h"

#include <QString>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace spectrum {

/// What a slot of the volume holds.
enum class SlotState : quint8 {
    Arriving,  ///< its slice is in the series but not decoded yet
    Filled,    ///< its voxels are in
    Missing,   ///< no slice of the series lies there (a gap)
    Refused,   ///< its slice came but could not be put in (said in notes())
};

class Volume
{
public:
    /// A volume for `geometry` (ok) and the slices it was made from (their infos give each slot's rescale and
    /// format). `memoryLimit`: the bytes it may take in memory; larger volumes live in a file in `spillFolder`
    /// (empty: the system's temporary folder). Refused, with the reason, when the slices cannot share one 16-bit
    /// rescale, are not gray integer images, or the volume would be absurd (more gaps than slices).
    static Result<std::shared_ptr<Volume>> create(const VolumeGeometry &geometry, const QList<VolumeSlice> &slices,
                                                  qint64 memoryLimit = qint64(1) << 62, const QString &spillFolder = QString());
    ~Volume();
    Volume(const Volume &) = delete;
    Volume &operator=(const Volume &) = delete;

    const VolumeGeometry &geometry() const { return m_geometry; }
    int columns() const { return m_geometry.columns; }
    int rows() const { return m_geometry.rows; }
    int slotCount() const { return m_geometry.slotCount; }
    bool isSigned() const { return m_signed; }
    /// Modality value = voxel × slope + intercept.
    double rescaleSlope() const { return m_slope; }
    double rescaleIntercept() const { return m_intercept; }
    QString rescaleType() const { return m_rescaleType; }
    /// An info describing the voxels' values (rescale, type, windows of the first slice, the series' identity).
    const ImageInfo &valueInfo() const { return m_valueInfo; }
    /// Whether the voxels live in a file (the volume was larger than its memory limit).
    bool isSpilled() const { return m_spilled; }
    qint64 byteCount() const { return m_bytes; }

    /// Puts the decoded pixels of `slice` (an index into the slices given to create(); `frame` of `pixels`) into its
    /// slot. Thread-safe for different slots; readers see a slot only once it is whole. An error (and the slot marked
    /// Refused) when the pixels do not match the slice's header or a value cannot be held. `decoded`: the header
    /// the pixels came with, when the slice was laid out from another (a listing's position): it must agree — place,
    /// orientation, spacing, rescale — or the slot is refused.
    Error fill(int slice, const PixelBuffer &pixels, int frame = 0, const ImageInfo *decoded = nullptr);
    /// Puts the pixels of a slice no slice given to create() was laid out for into an awaited slot (a volume laid
    /// out while its series arrives: VolumeGeometry::awaiting), `info` being that slice's own header (frame-specific):
    /// its rescale must be the volume's or differ by whole voxel steps. The caller has checked that it lies there.
    Error fillSlot(int slot, const PixelBuffer &pixels, int frame, const ImageInfo &info);
    /// Copies slot `fromSlot` of `from` (Filled) into `slot`: both must be the same plane (place, orientation,
    /// spacing) and the rescales compatible, else an error and the slot stays arriving (for its slice to be decoded
    /// into it). How a volume laid out again keeps what the one before it held.
    Error copySlot(int slot, const Volume &from, int fromSlot);
    /// Takes over the voxels of `from`, laid out exactly as this volume (the same grid and rescale) and no longer
    /// written (a volume laid out while its series arrived, now laid out again from the listing): each slot filled
    /// there is filled here, without a copy, where `keep` (one per slot) says this volume's slice there is the one
    /// that filled it. False, nothing changed, when the two differ or this one holds slots.
    bool adoptVoxels(const Volume &from, const std::vector<bool> &keep);
    /// The slot `slice` (an index into the slices given to create()) lies in, -1 when none.
    int slotOf(int slice) const;
    /// Adds `text` to the notes (what the reader should know about the volume: slices left out before it was made).
    void note(const QString &text);
    /// Marks the slot of `slice` Refused (its slice could not be decoded): `why` goes to the notes.
    void refuse(int slice, const QString &why);

    SlotState slotState(int slot) const
    {
        const quint8 s = m_state[size_t(slot)].load(std::memory_order_acquire);
        return s > quint8(SlotState::Refused) ? SlotState::Arriving : SlotState(s);  // being written: still arriving
    }
    /// Every slot's state at one moment: what a plane cut now may read (Filled slots only).
    std::vector<SlotState> slotStates() const;
    int filledSlots() const { return m_filled.load(std::memory_order_acquire); }
    /// Slots that will never fill: gaps and refused slices.
    QStringList notes() const;

    /// The voxels of `slot` (rows × columns, row after row): quint16, or qint16 when isSigned(). Read only Filled slots.
    const quint16 *slotData(int slot) const { return m_voxels + qsizetype(slot) * m_slotVoxels; }
    qsizetype slotVoxels() const { return m_slotVoxels; }

private:
    Volume() = default;
    void refuseSlot(int slot, const QString &why);
    Error put(int slot, const PixelBuffer &pixels, int frame, const ImageInfo &info);
    /// The one writer of `slot`: `src` (rows × columns of `format`) under `intercept`, brought to the volume's rescale.
    Error put(int slot, const uchar *src, PixelFormat format, double intercept);
    VolumeGeometry m_geometry;
    QList<ImageInfo> m_slices;       ///< each slice's info (frame-specific)
    std::vector<int> m_sliceSlot;    ///< slice → slot (-1: not in the volume)
    std::unique_ptr<std::atomic<quint8>[]> m_state;
    std::atomic<int> m_filled{0};
    bool m_signed = false;
    double m_slope = 1, m_intercept = 0;
    QString m_rescaleType;
    ImageInfo m_valueInfo;
    qsizetype m_slotVoxels = 0;
    qint64 m_bytes = 0;
    quint16 *m_voxels = nullptr;
    std::shared_ptr<void> m_mapping;  ///< owns the voxels' mapping (shared with a volume that adopted them)
    bool m_spilled = false;
    mutable std::mutex m_notesLock;
    QStringList m_notes;
};

} // namespace spectrum
