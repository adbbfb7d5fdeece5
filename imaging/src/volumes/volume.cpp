// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/volumes/volume.h"

#include <QDir>
#include <QFile>
#include <QObject>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace spectrum {

namespace {

/// A slot being written: read as arriving (SlotState has no such state for readers).
constexpr quint8 kWriting = 0x80;

bool same(double a, double b)
{
    return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

/// The offset (in voxel units) that brings a slice's stored values to the volume's rescale, when it is a whole
/// number: voxel = stored + offset.
bool wholeOffset(double intercept, double volumeIntercept, double slope, long long *offset)
{
    const double o = (intercept - volumeIntercept) / slope;
    *offset = std::llround(o);
    return std::abs(o - double(*offset)) <= 1e-6;
}

} // namespace

Result<std::shared_ptr<Volume>> Volume::create(const VolumeGeometry &geometry, const QList<VolumeSlice> &slices, qint64 memoryLimit,
                                               const QString &spillFolder)
{
    if (!geometry.ok)
        return Error(ErrorCode::InvalidArgument, geometry.refusal);
    if (geometry.columns < 2 || geometry.rows < 2)
        return Error(ErrorCode::Unsupported, QObject::tr("its slices are %1 × %2 pixels: too small to reformat").arg(geometry.columns).arg(geometry.rows));
    const int filledSlots = int(geometry.slotCount - geometry.missing.size());
    if (!geometry.awaiting && geometry.slotCount > 4 * filledSlots + 16)
        return Error(ErrorCode::Unsupported, QObject::tr("its %1 slices are spread over %2 places: too sparse to be one volume")
                                                 .arg(filledSlots).arg(geometry.slotCount));
    std::shared_ptr<Volume> v(new Volume);
    v->m_geometry = geometry;
    v->m_sliceSlot.assign(size_t(slices.size()), -1);
    for (int s = 0; s < geometry.slotCount; ++s)
        if (geometry.slotSlice[s] >= 0)
            v->m_sliceSlot[size_t(geometry.slotSlice[s])] = s;
    for (const VolumeSlice &s : slices)
        v->m_slices << s.info;

    // One rescale for all: the first slice's; the others must share its slope and differ by whole voxel steps.
    const ImageInfo *first = nullptr;
    for (int slot = 0; slot < geometry.slotCount && !first; ++slot)
        if (geometry.slotSlice[slot] >= 0)
            first = &slices[geometry.slotSlice[slot]].info;
    Q_ASSERT(first);
    v->m_slope = first->rescaleSlope;
    v->m_intercept = first->rescaleIntercept;
    v->m_rescaleType = first->rescaleType;
    if (v->m_slope == 0 || !std::isfinite(v->m_slope) || !std::isfinite(v->m_intercept))
        return Error(ErrorCode::Unsupported, QObject::tr("its Rescale Slope is %1: its values have no meaning").arg(v->m_slope));
    for (int slot = 0; slot < geometry.slotCount; ++slot) {
        if (geometry.slotSlice[slot] < 0)
            continue;
        const ImageInfo &info = slices[geometry.slotSlice[slot]].info;
        if (!info.isMonochrome() || info.samplesPerPixel != 1)
            return Error(ErrorCode::Unsupported, QObject::tr("it is not a gray image (%1): only gray images are reformatted").arg(info.photometricName));
        if (info.floatSamples || info.bitsAllocated > 16)
            return Error(ErrorCode::Unsupported, QObject::tr("its pixels are %1-bit%2: only images of up to 16 bits are reformatted")
                                                     .arg(info.bitsAllocated).arg(info.floatSamples ? QObject::tr(" real numbers") : QString()));
        long long offset = 0;
        if (!same(info.rescaleSlope, v->m_slope) || !wholeOffset(info.rescaleIntercept, v->m_intercept, v->m_slope, &offset))
            return Error(ErrorCode::Unsupported, QObject::tr("its slices are rescaled differently (slope %1, intercept %2 and slope %3, intercept %4): "
                                                             "one 16-bit volume cannot hold all their values exactly")
                                                     .arg(v->m_slope).arg(v->m_intercept).arg(info.rescaleSlope).arg(info.rescaleIntercept));
        if (info.rescaleType != v->m_rescaleType)
            return Error(ErrorCode::Unsupported, QObject::tr("its slices' values are in different units (%1 and %2)").arg(v->m_rescaleType, info.rescaleType));
        if (info.isSigned || offset != 0)
            v->m_signed = v->m_signed || info.isSigned || offset < 0;
    }
    v->m_valueInfo = *first;
    v->m_valueInfo.frames = 1;
    v->m_valueInfo.perFrame.clear();
    v->m_valueInfo.frameTimeVectorMs.clear();
    v->m_valueInfo.notes.clear();
    v->m_valueInfo.isSigned = v->m_signed;
    v->m_valueInfo.bitsAllocated = 16;
    v->m_valueInfo.bitsStored = 16;
    v->m_valueInfo.highBit = 15;

    v->m_slotVoxels = qsizetype(geometry.columns) * geometry.rows;
    v->m_bytes = PixelBuffer::checkedByteCount(PixelFormat::Gray16, geometry.columns, geometry.rows, geometry.slotCount);
    if (v->m_bytes < 0)
        return Error(ErrorCode::Unsupported, QObject::tr("the volume would be too large (%1 × %2 × %3)").arg(geometry.columns).arg(geometry.rows).arg(geometry.slotCount));
    if (v->m_bytes <= memoryLimit) {
        void *p = mmap(nullptr, size_t(v->m_bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return Error(ErrorCode::Io, QObject::tr("no memory for the volume (%1 MB): %2").arg(v->m_bytes >> 20).arg(QString::fromLocal8Bit(std::strerror(errno))));
        // Huge pages where the system gives them (transparent huge pages, "madvise"): a plane across the slots
        // touches a new 4 KiB page at nearly every sample, and the page walks cost more than the reads.
        madvise(p, size_t(v->m_bytes), MADV_HUGEPAGE);
        v->m_voxels = static_cast<quint16 *>(p);
        v->m_mapping = std::shared_ptr<void>(p, [bytes = size_t(v->m_bytes)](void *m) { munmap(m, bytes); });
    } else {
        // Larger than it may take: in a file the system pages. Space is reserved now, so a full disk is an error
        // here and never a fault while a slice is written.
        const QString folder = spillFolder.isEmpty() ? QDir::tempPath() : spillFolder;
        QByteArray path = QFile::encodeName(QDir(folder).filePath(QStringLiteral("volume-XXXXXX")));
        const int fd = mkstemp(path.data());
        if (fd < 0)
            return Error(ErrorCode::Io, QObject::tr("cannot make the volume's file in %1: %2").arg(folder, QString::fromLocal8Bit(std::strerror(errno))));
        unlink(path.constData());
        const int reserved = posix_fallocate(fd, 0, off_t(v->m_bytes));
        void *p = reserved == 0 ? mmap(nullptr, size_t(v->m_bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
        const int why = reserved != 0 ? reserved : errno;
        close(fd);
        if (p == MAP_FAILED)
            return Error(ErrorCode::Io, QObject::tr("cannot keep the volume (%1 MB) in %2: %3")
                                            .arg(v->m_bytes >> 20).arg(folder, QString::fromLocal8Bit(std::strerror(why))));
        v->m_voxels = static_cast<quint16 *>(p);
        v->m_mapping = std::shared_ptr<void>(p, [bytes = size_t(v->m_bytes)](void *m) { munmap(m, bytes); });
        v->m_spilled = true;
    }
    v->m_state.reset(new std::atomic<quint8>[size_t(geometry.slotCount)]);
    for (int s = 0; s < geometry.slotCount; ++s)
        v->m_state[size_t(s)].store(quint8(geometry.slotSlice[s] >= 0 || geometry.awaiting ? SlotState::Arriving : SlotState::Missing), std::memory_order_relaxed);
    return v;
}

Volume::~Volume() = default;  // the voxels' mapping goes with the last volume holding it

bool Volume::adoptVoxels(const Volume &from, const std::vector<bool> &keep)
{
    const VolumeGeometry &a = m_geometry, &b = from.m_geometry;
    const double tolerance = 0.01 * std::min({a.spacing[0], a.spacing[1], a.spacing[2]});
    double off = 0;
    for (int k = 0; k < 3; ++k)
        off = std::max(off, std::abs(a.origin[size_t(k)] - b.origin[size_t(k)]));
    const bool same = a.columns == b.columns && a.rows == b.rows && a.slotCount == b.slotCount && off <= tolerance
                      && vec::dot(a.rowDirection, b.rowDirection) > 1 - 1e-9 && vec::dot(a.columnDirection, b.columnDirection) > 1 - 1e-9
                      && std::abs(a.spacing[0] - b.spacing[0]) <= 1e-6 && std::abs(a.spacing[1] - b.spacing[1]) <= 1e-6
                      && std::abs(a.spacing[2] - b.spacing[2]) <= 1e-6 && m_signed == from.m_signed && m_slope == from.m_slope
                      && m_intercept == from.m_intercept && m_rescaleType == from.m_rescaleType && m_bytes == from.m_bytes;
    if (!same || m_filled.load() != 0 || keep.size() != size_t(slotCount()))
        return false;
    for (int s = 0; s < slotCount(); ++s)
        if (from.slotState(s) == SlotState::Filled && (!keep[size_t(s)] || a.slotSlice[s] < 0))
            return false;  // its voxels there would be overwritten while it still calls them filled: copied instead
    m_mapping = from.m_mapping;
    m_voxels = from.m_voxels;
    m_spilled = from.m_spilled;
    // Its filled slots are filled here where `keep` says the same slice lies (any other slot stays what this
    // volume's geometry says, its voxels written when its slice comes).
    int filled = 0;
    for (int s = 0; s < slotCount(); ++s) {
        if (a.slotSlice[s] >= 0 && keep[size_t(s)] && from.slotState(s) == SlotState::Filled) {
            m_state[size_t(s)].store(quint8(SlotState::Filled), std::memory_order_release);
            ++filled;
        }
    }
    m_filled.store(filled, std::memory_order_release);
    return true;
}

void Volume::note(const QString &text)
{
    std::lock_guard<std::mutex> lock(m_notesLock);
    m_notes << text;
}

void Volume::refuse(int slice, const QString &why)
{
    if (slice < 0 || slice >= int(m_sliceSlot.size()) || m_sliceSlot[size_t(slice)] < 0)
        return;
    refuseSlot(m_sliceSlot[size_t(slice)], why);
}

Error Volume::fill(int slice, const PixelBuffer &pixels, int frame, const ImageInfo *decoded)
{
    if (slice < 0 || slice >= int(m_sliceSlot.size()) || m_sliceSlot[size_t(slice)] < 0)
        return Error(ErrorCode::InvalidArgument, QObject::tr("slice %1 is not in the volume").arg(slice));
    const int slot = m_sliceSlot[size_t(slice)];
    const ImageInfo &info = m_slices[slice];
    if (decoded) {
        const ImageInfo actual = decoded->frame(frame);
        double offPlace = 0;
        for (int k = 0; k < 3; ++k)
            offPlace = std::max(offPlace, std::abs(actual.imagePosition[size_t(k)] - info.imagePosition[size_t(k)]));
        bool sameOrientation = true;
        for (int k = 0; k < 6; ++k)
            sameOrientation = sameOrientation && std::abs(actual.imageOrientation[size_t(k)] - info.imageOrientation[size_t(k)]) <= 1e-3;
        if (!actual.hasPosition || offPlace > 0.1 * std::min(info.rowSpacing, info.columnSpacing) || !sameOrientation
            || !same(actual.rowSpacing, info.rowSpacing) || !same(actual.columnSpacing, info.columnSpacing)
            || !same(actual.rescaleSlope, info.rescaleSlope) || !same(actual.rescaleIntercept, info.rescaleIntercept)) {
            const QString why = QObject::tr("its header (place, orientation, spacing or rescale) is not the one the study's listing gave");
            refuseSlot(slot, why);
            return Error(ErrorCode::InvalidArgument, why);
        }
    }
    return put(slot, pixels, frame, info);
}

Error Volume::fillSlot(int slot, const PixelBuffer &pixels, int frame, const ImageInfo &info)
{
    if (slot < 0 || slot >= slotCount() || m_geometry.slotSlice[slot] >= 0)
        return Error(ErrorCode::InvalidArgument, QObject::tr("slot %1 is not awaited").arg(slot + 1));
    auto refused = [&](const QString &why) {
        refuseSlot(slot, why);
        return Error(ErrorCode::InvalidArgument, why);
    };
    if (!info.isMonochrome() || info.samplesPerPixel != 1 || info.floatSamples || info.bitsAllocated > 16)
        return refused(QObject::tr("it is not a gray image of up to 16 bits"));
    long long offset = 0;
    if (!same(info.rescaleSlope, m_slope) || !wholeOffset(info.rescaleIntercept, m_intercept, m_slope, &offset) || info.rescaleType != m_rescaleType)
        return refused(QObject::tr("it is rescaled differently from the volume's other slices (slope %1, intercept %2)")
                           .arg(info.rescaleSlope).arg(info.rescaleIntercept));
    return put(slot, pixels, frame, info);
}

Error Volume::copySlot(int slot, const Volume &from, int fromSlot)
{
    if (slot < 0 || slot >= slotCount() || fromSlot < 0 || fromSlot >= from.slotCount() || from.slotState(fromSlot) != SlotState::Filled)
        return Error(ErrorCode::InvalidArgument, QObject::tr("nothing to copy into slot %1").arg(slot + 1));
    // Not copied: the slot stays arriving, for its slice to be decoded into it and checked there.
    auto refused = [](const QString &why) { return Error(ErrorCode::InvalidArgument, why); };
    // Only the same plane: both slots at one place, with the same rows, columns and pixel spacing.
    const Vector3 here = m_geometry.patientPoint(0, 0, slot), there = from.m_geometry.patientPoint(0, 0, fromSlot);
    double off = 0;
    for (int k = 0; k < 3; ++k)
        off = std::max(off, std::abs(here[size_t(k)] - there[size_t(k)]));
    if (from.columns() != columns() || from.rows() != rows() || off > 0.1 * std::min(m_geometry.spacing[0], m_geometry.spacing[1])
        || vec::dot(from.m_geometry.rowDirection, m_geometry.rowDirection) < 1 - 1e-6
        || vec::dot(from.m_geometry.columnDirection, m_geometry.columnDirection) < 1 - 1e-6
        || !same(from.m_geometry.spacing[0], m_geometry.spacing[0]) || !same(from.m_geometry.spacing[1], m_geometry.spacing[1]))
        return refused(QObject::tr("its slice does not lie where this volume has it"));
    long long offset = 0;
    if (!same(from.m_slope, m_slope) || !wholeOffset(from.m_intercept, m_intercept, m_slope, &offset) || from.m_rescaleType != m_rescaleType)
        return refused(QObject::tr("it is rescaled differently from the volume's other slices"));
    return put(slot, reinterpret_cast<const uchar *>(from.slotData(fromSlot)), from.m_signed ? PixelFormat::Gray16Signed : PixelFormat::Gray16,
               from.m_intercept);
}

int Volume::slotOf(int slice) const
{
    return slice >= 0 && slice < int(m_sliceSlot.size()) ? m_sliceSlot[size_t(slice)] : -1;
}

void Volume::refuseSlot(int slot, const QString &why)
{
    quint8 arriving = quint8(SlotState::Arriving);
    if (!m_state[size_t(slot)].compare_exchange_strong(arriving, quint8(SlotState::Refused), std::memory_order_acq_rel))
        return;  // filled already (or refused): a later problem with another copy does not take it back
    std::lock_guard<std::mutex> lock(m_notesLock);
    m_notes << QObject::tr("slice %1 left out: %2").arg(slot + 1).arg(why);
}

Error Volume::put(int slot, const PixelBuffer &pixels, int frame, const ImageInfo &info)
{
    if (pixels.width() != columns() || pixels.height() != rows() || frame < 0 || frame >= pixels.frames()) {
        const QString why = QObject::tr("its pixels (%1 × %2) are not those its header gave (%3 × %4)")
                                .arg(pixels.width()).arg(pixels.height()).arg(columns()).arg(rows());
        refuseSlot(slot, why);
        return Error(ErrorCode::InvalidArgument, why);
    }
    return put(slot, pixels.frameData(frame), pixels.format(), info.rescaleIntercept);
}

Error Volume::put(int slot, const uchar *src, PixelFormat format, double intercept)
{
    auto refused = [&](const QString &why) {
        refuseSlot(slot, why);
        return Error(ErrorCode::InvalidArgument, why);
    };
    // One writer per slot: whoever moves it from arriving to being written (a second copy of the slice, or a
    // second slice at its place, finds it taken).
    quint8 arriving = quint8(SlotState::Arriving);
    if (!m_state[size_t(slot)].compare_exchange_strong(arriving, kWriting, std::memory_order_acq_rel))
        return {};  // already in (planes may be reading it), being written, or refused
    long long offset = 0;
    wholeOffset(intercept, m_intercept, m_slope, &offset);
    const long long lo = m_signed ? -32768 : 0, hi = m_signed ? 32767 : 65535;
    quint16 *dst = m_voxels + qsizetype(slot) * m_slotVoxels;
    const qsizetype n = m_slotVoxels;
    bool inRange = true;
    auto copy = [&](const auto *s) {
        for (qsizetype i = 0; i < n; ++i) {
            const long long value = (long long)(s[i]) + offset;
            inRange = inRange && value >= lo && value <= hi;
            dst[i] = quint16(value);
        }
    };
    bool gray = true;
    switch (format) {
    case PixelFormat::Gray8: copy(reinterpret_cast<const quint8 *>(src)); break;
    case PixelFormat::Gray8Signed: copy(reinterpret_cast<const qint8 *>(src)); break;
    case PixelFormat::Gray16:
        if (offset == 0 && !m_signed)
            std::memcpy(dst, src, size_t(n) * 2);
        else
            copy(reinterpret_cast<const quint16 *>(src));
        break;
    case PixelFormat::Gray16Signed:
        if (offset == 0 && m_signed)
            std::memcpy(dst, src, size_t(n) * 2);
        else
            copy(reinterpret_cast<const qint16 *>(src));
        break;
    default: gray = false; break;
    }
    if (!gray || !inRange) {
        m_state[size_t(slot)].store(quint8(SlotState::Arriving), std::memory_order_release);
        return refused(!gray ? QObject::tr("its pixels are not gray integers") : QObject::tr("its values do not fit the volume's 16 bits"));
    }
    m_state[size_t(slot)].store(quint8(SlotState::Filled), std::memory_order_release);
    m_filled.fetch_add(1, std::memory_order_acq_rel);
    return {};
}

std::vector<SlotState> Volume::slotStates() const
{
    std::vector<SlotState> states(static_cast<size_t>(slotCount()));
    for (int s = 0; s < slotCount(); ++s)
        states[size_t(s)] = slotState(s);
    return states;
}

QStringList Volume::notes() const
{
    QStringList n = m_geometry.notes + m_geometry.unevenSpacing;
    if (m_geometry.awaiting)
        n << QObject::tr("laid out from the slices come so far: the archive has not listed the series yet");
    else if (!m_geometry.missing.isEmpty())
        n << QObject::tr("%n slice(s) missing from the series' run (shown as missing, never interpolated)", nullptr, int(m_geometry.missing.size()));
    if (m_spilled)
        n << QObject::tr("the volume (%1 MB) is larger than the memory it may take: kept on disk").arg(m_bytes >> 20);
    std::lock_guard<std::mutex> lock(m_notesLock);
    return n + m_notes;
}

} // namespace spectrum
