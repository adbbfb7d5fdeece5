// SPDX-License-Identifier: Apache-2.0
#include "volumes/mprvolume.h"

#include "spectrum/core/job.h"
#include "spectrum/core/resultjob.h"
#include "spectrum/core/threadpools.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/stores/blobs/blobstore.h"

#include <algorithm>
#include <cmath>

namespace spectrum {

/// An instance of the series as its header says, or — not in the cache yet — as the listing places it.
struct MprVolume::Header
{
    QString key;
    std::optional<ImageInfo> info;
    InstanceRef ref;
};

/// A listed series laid out: made on the pool, applied on the GUI thread.
struct MprVolume::Layout
{
    int generation = 0;
    std::shared_ptr<Volume> volume;
    QString refusal;
    bool waitingForFirst = false;                      ///< listed and placed, none here yet to say the rest
    QHash<QString, QList<std::pair<int, int>>> slicesOf;
    QStringList toFill;                                ///< read from the cache first, those placed by the listing after
    QSet<QString> carried;                             ///< copied from the volume laid out while the series arrived
    QSet<QString> leftOut;                             ///< neither placed by the listing nor in the cache yet
    bool permanent = false;                            ///< a refusal no slice still coming can undo
    QHash<QString, ImageInfo> headers;                 ///< every header read or carried (laid out again: not read again)
};

namespace {

const QString kNotRead = QStringLiteral("not in the cache (yet)");

bool inStackPlane(const InstanceRef &ref, const ImageInfo &model)
{
    return ref.hasPlace && ref.frameOfReferenceUid == model.frameOfReferenceUid && std::abs(vec::dot(ref.normal, model.sliceNormal())) > 0.9999;
}

} // namespace

MprVolume::MprVolume(BlobStore *store, ImageMemoryCache *images, const SeriesSummary &series, qint64 memoryLimit, const QString &spillFolder,
                     QObject *parent)
    : QObject(parent), m_store(store), m_images(images), m_series(series), m_memoryLimit(memoryLimit), m_spillFolder(spillFolder)
{
    m_notify.setSingleShot(true);
    m_notify.setInterval(40);
    connect(&m_notify, &QTimer::timeout, this, &MprVolume::filled);
}

MprVolume::~MprVolume() = default;  // pool tasks hold the volume themselves; their reports to a gone object are dropped

void MprVolume::start()
{
    m_clock.start();
    layOutListed({});
}

void MprVolume::relist(const SeriesSummary &series)
{
    m_series = series;
    ArrivingVolume::Snapshot arrived;
    if (m_arriving) {
        m_arriving->cancel();  // slices still queued for it are not decoded for nothing
        arrived = m_arriving->snapshot();
    }
    m_arriving.reset();  // what it decodes from now on is dropped: the listed volume reads it from the cache
    m_arrivingKeys.clear();
    m_waiting.clear();
    m_refusal.clear();
    m_waitingForFirst = false;
    layOutListed(arrived);  // the volume laid out so far stays on screen meanwhile
}

void MprVolume::layOutListed(const ArrivingVolume::Snapshot &arrived, bool adopt)
{
    if (!m_store->readsOnAnyThread()) {
        m_refusal = tr("the series is not in this workstation's cache");
        emit refused(m_refusal);
        return;
    }
    m_layingOut = true;
    const int generation = ++m_generation;
    BlobStore *store = m_store;
    const QList<InstanceRef> instances = m_series.instances;
    const QString seriesUid = m_series.seriesInstanceUid;
    const qint64 memoryLimit = m_memoryLimit;
    const QString spillFolder = m_spillFolder;
    runOnPool<Layout>(blockingPool(), this, [=] {
        Layout layout;
        layout.generation = generation;
        // The headers: those come while the series arrived, as decoded. The rest, when every slice is placed by the
        // listing (the cache's index, or the archive's answer) in one plane and frame of reference: one header is
        // read for the rest of what a slice is, and each slice's own is checked against it when its pixels come.
        // Otherwise (multi-frame images, slices the listing does not place) every header.
        QList<Header> headers;
        for (const InstanceRef &ref : instances) {
            Header h{ref.key, std::nullopt, ref};
            if (arrived.headers.contains(ref.key))
                h.info = arrived.headers.value(ref.key);
            headers << h;
        }
        QSet<QString> absent;                // read, and not in the cache (yet)
        QHash<QString, QString> unreadable;  // read, and no image header in it: why
        auto read = [&](Header &h) {
            if (Result<ByteView> bytes = runSync(store->read(h.key)); bytes.isOk()) {
                if (Result<ImageInfo> info = readDicomImageInfo(bytes.value()); !info.isOk())
                    unreadable.insert(h.key, info.error().message());
                else if (info.value().rows <= 0)
                    unreadable.insert(h.key, tr("not an image"));
                else
                    h.info = info.value();
            } else if (bytes.error().code() == ErrorCode::NotFound) {
                absent << h.key;
            } else {
                unreadable.insert(h.key, bytes.error().message());
            }
            return h.info.has_value();
        };
        const ImageInfo *model = nullptr;
        for (Header &h : headers)
            if (h.info || read(h)) {
                model = &*h.info;
                break;
            }
        const bool placedByListing = model && model->frames == 1
                                     && std::all_of(headers.begin(), headers.end(), [&](const Header &h) { return h.info || inStackPlane(h.ref, *model); });
        if (!placedByListing)
            for (Header &h : headers)
                if (!h.info)
                    read(h);

        // The slices: every frame of every image read; instances not here yet placed where the listing says, with
        // the rest of their header taken from one that is (checked when their pixels come).
        model = nullptr;
        for (const Header &h : std::as_const(headers))
            if (h.info && h.info->frames == 1)
                model = &*h.info;
        QList<VolumeSlice> slices;
        QList<std::pair<QString, int>> origin;  // per slice: instance key, frame
        QStringList laidOutByListing;
        QStringList unplaced;  // neither placed by the listing nor by a header, nor coming
        for (const Header &h : std::as_const(headers)) {
            if (h.info) {
                for (const VolumeSlice &s : volumeSlices(h.key, *h.info)) {
                    slices << s;
                    origin << std::make_pair(h.key, s.frame);
                }
            } else if (model && inStackPlane(h.ref, *model)) {
                // Lies in the stack's plane, by the listing: placed there, its header checked when it comes.
                VolumeSlice s{h.key, 0, *model};
                s.info.imagePosition = h.ref.position;
                s.info.identity.sopInstanceUid = h.ref.sopInstanceUid;
                s.info.frameOfReferenceUid = h.ref.frameOfReferenceUid;
                slices << s;
                origin << std::make_pair(h.key, 0);
                laidOutByListing << h.key;
            } else if (absent.contains(h.key)) {
                layout.leftOut << h.key;  // laid out again when it comes
            } else {
                unplaced << h.key;  // said below, with why
            }
        }
        for (const Header &h : std::as_const(headers))
            if (h.info)
                layout.headers.insert(h.key, *h.info);
        // One patient, one study, one series: a header that names another is never made part of the volume.
        for (const Header &h : std::as_const(headers)) {
            if (!h.info)
                continue;
            const DicomIdentity &id = h.info->identity;
            if (id.seriesInstanceUid != seriesUid
                || (model && (id.patientId != model->identity.patientId || id.studyInstanceUid != model->identity.studyInstanceUid))) {
                layout.refusal = tr("its images name other patients, studies or series (%1): not made into one volume").arg(id.sopInstanceUid);
                layout.permanent = true;
                return layout;
            }
        }
        if (!model && std::count_if(headers.begin(), headers.end(), [](const Header &h) { return !h.info && h.ref.hasPlace; }) >= 2) {
            layout.waitingForFirst = true;  // listed, placed, but none here yet to say the rest of a header
            return layout;
        }
        const VolumeGeometry geometry = volumeGeometry(slices);
        Result<std::shared_ptr<Volume>> made = geometry.ok ? Volume::create(geometry, slices, memoryLimit, spillFolder)
                                                           : Result<std::shared_ptr<Volume>>(Error(ErrorCode::Unsupported, geometry.refusal));
        if (!made.isOk()) {
            layout.refusal = made.error().message();
            return layout;
        }
        layout.volume = made.value();
        if (!layout.leftOut.isEmpty())
            layout.volume->note(tr("%n slice(s) left out: not in the cache yet, and the study's listing does not say where they lie "
                                   "(the volume is laid out again as they come)",
                                   nullptr, int(layout.leftOut.size())));
        int unsaid = 0;
        for (const QString &key : std::as_const(unplaced)) {
            if (unreadable.contains(key))
                layout.volume->note(tr("%1 left out: %2").arg(key, unreadable.value(key)));
            else
                ++unsaid;
        }
        if (unsaid > 0)
            layout.volume->note(tr("%n slice(s) left out: neither the study's listing nor the headers read say where they lie", nullptr, unsaid));
        for (int i = 0; i < slices.size(); ++i)
            layout.slicesOf[origin[i].first] << std::make_pair(i, origin[i].second);
        // What came while the series arrived: its voxels taken over when it was laid out as the listing lays it
        // out (the usual case: no copy), else copied slot by slot where the listing agrees (the same place; a slot
        // the listing places elsewhere is decoded into its slot and checked there).
        std::vector<bool> sameSlice;  // per slot: the listing puts there the very slice (and frame) that came there
        if (arrived.volume) {
            sameSlice.assign(size_t(layout.volume->slotCount()), false);
            for (auto it = layout.slicesOf.cbegin(); it != layout.slicesOf.cend(); ++it) {
                const QList<int> from = arrived.placed.value(it.key());
                for (const auto &[slice, frame] : it.value()) {
                    const int slot = layout.volume->slotOf(slice);
                    if (slot >= 0 && frame < from.size() && from[frame] == slot)
                        sameSlice[size_t(slot)] = true;
                }
            }
        }
        if (arrived.volume && adopt && layout.volume->adoptVoxels(*arrived.volume, sameSlice)) {
            for (auto it = layout.slicesOf.cbegin(); it != layout.slicesOf.cend(); ++it)
                if (std::all_of(it.value().begin(), it.value().end(),
                                [&](const std::pair<int, int> &s) { return layout.volume->slotState(layout.volume->slotOf(s.first)) == SlotState::Filled; }))
                    layout.carried << it.key();
        } else if (arrived.volume) {
            for (auto it = layout.slicesOf.cbegin(); it != layout.slicesOf.cend(); ++it) {
                const QList<int> from = arrived.placed.value(it.key());
                bool all = !from.isEmpty();
                for (const auto &[slice, frame] : it.value()) {
                    const int slot = frame < from.size() ? from[frame] : -1;
                    if (slot < 0 || arrived.volume->slotState(slot) != SlotState::Filled) {
                        all = false;
                        continue;
                    }
                    if (layout.volume->copySlot(layout.volume->slotOf(slice), *arrived.volume, slot).isError())
                        all = false;  // the listing places it elsewhere: decoded into its slot and checked there
                }
                if (all)
                    layout.carried << it.key();
            }
        }
        // Every slice in the cache now, from the memory cache where it is decoded already; those placed by the
        // listing after (filled if they are here by now, else they stay arriving until they come).
        for (const Header &h : std::as_const(headers))
            if (layout.slicesOf.contains(h.key) && !laidOutByListing.contains(h.key) && !layout.carried.contains(h.key))
                layout.toFill << h.key;
        layout.toFill << laidOutByListing;
        return layout;
    },
                      [this](Layout &&layout) { apply(std::move(layout)); });
}

void MprVolume::apply(Layout &&layout)
{
    if (layout.generation != m_generation)
        return;  // laid out again since
    m_layingOut = false;
    m_leftOut.clear();
    if (!layout.refusal.isEmpty() && (layout.permanent || layout.leftOut.isEmpty())) {
        m_refusal = layout.refusal;
        m_volume.reset();
        emit refused(m_refusal);
        return;
    }
    if (!layout.refusal.isEmpty()) {
        // Not a volume of what is in (one slice so far…), with slices the listing does not place still coming:
        // laid out again as each comes.
        m_volume.reset();
        m_refusal.clear();
        m_headers = layout.headers;
        m_leftOut = layout.leftOut;
        m_refusalUnlessMoreCome = layout.refusal;
        m_waiting = tr("%1; %n slice(s) still coming", nullptr, int(m_leftOut.size())).arg(layout.refusal);
        emit waiting(m_waiting);
    } else if (layout.waitingForFirst) {
        m_waitingForFirst = true;
    } else {
        m_volume = layout.volume;
        m_headers = layout.headers;
        m_slicesOf = layout.slicesOf;
        m_done = layout.carried;
        m_leftOut = layout.leftOut;
        m_waiting.clear();
        m_refusal.clear();
        m_filling.clear();  // fills under way are into the volume before: their slices are filled again here
        if (m_msToReady < 0)
            m_msToReady = m_clock.elapsed();
        emit ready();
        const QHash<QString, QString> failed = m_failed;
        for (auto it = failed.cbegin(); it != failed.cend(); ++it)
            onInstanceFailed(it.key(), it.value());  // refused in this layout too, never waited for
        for (const QString &key : std::as_const(layout.toFill))
            fillFrom(key);
    }
    // What came or failed while it was laid out. A slice it could not place that came meanwhile: laid out again.
    bool cameSince = false;
    for (const QString &key : std::exchange(m_early, {})) {
        cameSince = cameSince || m_leftOut.contains(key)
                    || (m_waitingForFirst && isOfSeries(key));
        fillFrom(key);
    }
    const QHash<QString, QString> failures = std::exchange(m_earlyFailures, {});
    for (auto it = failures.begin(); it != failures.end(); ++it)
        onInstanceFailed(it.key(), it.value());
    if (cameSince) {
        m_waitingForFirst = false;
        layOutAgain();
    } else if (m_volume) {
        noteFilled();
    }
}

bool MprVolume::isOfSeries(const QString &key) const
{
    return std::any_of(m_series.instances.begin(), m_series.instances.end(), [&](const InstanceRef &i) { return i.key == key; });
}

void MprVolume::layOutAgain()
{
    ArrivingVolume::Snapshot filled;  // the slots filled so far, as where they are in this volume
    filled.headers = m_headers;        // and the headers read for it
    if (m_volume) {
        filled.volume = m_volume;
        for (auto it = m_slicesOf.cbegin(); it != m_slicesOf.cend(); ++it) {
            if (!m_done.contains(it.key()))
                continue;
            QList<int> slotsOfFrames;
            for (const auto &[slice, frame] : it.value()) {
                while (slotsOfFrames.size() <= frame)
                    slotsOfFrames << -1;
                slotsOfFrames[frame] = m_volume->slotOf(slice);
            }
            filled.placed.insert(it.key(), slotsOfFrames);
        }
    }
    layOutListed(filled, false);  // fills under way still write into the volume on screen: copied, never shared
}

void MprVolume::startArriving(const DicomIdentity &study)
{
    m_clock.start();
    ArrivingVolume::Expect expect;
    expect.seriesInstanceUid = m_series.seriesInstanceUid;
    expect.studyInstanceUid = study.studyInstanceUid;
    expect.patientId = study.patientId;
    expect.instances = m_series.listedInstances;
    expect.memoryLimit = m_memoryLimit;
    expect.spillFolder = m_spillFolder;
    m_arriving = std::make_shared<ArrivingVolume>(expect);
    m_waiting = tr("waiting for the series' slices");
    emit waiting(m_waiting);
    if (!m_store->readsOnAnyThread())
        return;
    // What the cache holds of the series already (come before MPR was asked for): read from it.
    BlobQuery q;
    q.studyInstanceUid = study.studyInstanceUid;
    q.seriesInstanceUid = m_series.seriesInstanceUid;
    whenDone(m_store->query(q), this, [this, arriving = m_arriving](const Result<QList<BlobInfo>> &held) {
        if (arriving != m_arriving || !held.isOk())
            return;
        for (const BlobInfo &b : held.value())
            onInstanceBytes(b.key, ByteView());
    });
}

void MprVolume::onInstanceBytes(const QString &key, const ByteView &bytes)
{
    if (!m_arriving || m_arrivingKeys.contains(key))
        return;
    m_arrivingKeys.insert(key);
    std::shared_ptr<ArrivingVolume> arriving = m_arriving;
    std::shared_ptr<const DecodedImage> decoded = m_images->peek(key);
    BlobStore *store = m_store;
    const QString seriesUid = m_series.seriesInstanceUid;
    runOnPool<ArrivingVolume::Added>(computePool(), this, [arriving, decoded, bytes, store, key, seriesUid] {
        if (decoded)
            return arriving->add(key, *decoded);
        ByteView data = bytes;
        if (data.isEmpty()) {  // in the cache
            Result<ByteView> read = runSync(store->read(key));
            if (!read.isOk())
                return ArrivingVolume::Added{ArrivingVolume::Outcome::Ignored, kNotRead};
            data = read.value();
        }
        // The header first: the study's other series come too, and are not decoded for nothing.
        if (Result<DicomIdentity> id = readDicomIdentity(data); !id.isOk() || id.value().seriesInstanceUid != seriesUid)
            return ArrivingVolume::Added{ArrivingVolume::Outcome::Ignored, tr("of another series")};
        Result<DecodedImage> image = decodeDicom(data);
        if (!image.isOk())
            return ArrivingVolume::Added{ArrivingVolume::Outcome::Ignored, image.error().message()};
        return arriving->add(key, image.value());
    },
                                     [this, arriving, key](ArrivingVolume::Added &&added) {
                                         if (arriving != m_arriving)
                                             return;
                                         if (added.outcome == ArrivingVolume::Outcome::Ignored && added.why == kNotRead)
                                             m_arrivingKeys.remove(key);  // not readable yet: taken when it is said again
                                         onAdded(added);
                                     });
}

void MprVolume::onAdded(const ArrivingVolume::Added &added)
{
    switch (added.outcome) {
    case ArrivingVolume::Outcome::Placed:
        noteFilled();
        break;
    case ArrivingVolume::Outcome::LaidOut:
    case ArrivingVolume::Outcome::Waiting:
        // What it holds now (a slice added since may have laid it out again, or found it is not one stack).
        if (std::shared_ptr<Volume> now = m_arriving->volume(); now && now != m_volume) {
            m_volume = now;
            m_waiting.clear();
            if (m_msToReady < 0)
                m_msToReady = m_clock.elapsed();
            emit ready();
            noteFilled();
        } else if (!now) {
            m_waiting = added.outcome == ArrivingVolume::Outcome::Waiting ? added.why : tr("laying out again");
            m_volume.reset();  // not one stack after all (two slices at one place): nothing shown until it is listed
            emit waiting(m_waiting);
        } else {
            noteFilled();
        }
        break;
    case ArrivingVolume::Outcome::Ignored:
        break;
    }
}

std::optional<Vector3> MprVolume::focusPoint() const
{
    if (!m_volume || m_focus.isEmpty())
        return std::nullopt;
    const VolumeGeometry &g = m_volume->geometry();
    if (m_arriving) {
        // Where the slice lies (by the listing or the first look), at the middle of the volume's rows and columns.
        const auto ref = std::find_if(m_series.instances.begin(), m_series.instances.end(), [&](const InstanceRef &i) { return i.key == m_focus; });
        if (ref == m_series.instances.end() || !ref->hasPlace)
            return std::nullopt;
        const double along = vec::dot(vec::minus(ref->position, g.origin), g.normal) / g.spacing[2];
        return g.patientPoint((g.columns - 1) / 2.0, (g.rows - 1) / 2.0, along);
    }
    const int slot = m_slicesOf.contains(m_focus) ? m_volume->slotOf(m_slicesOf.value(m_focus).first().first) : -1;
    if (slot < 0)
        return std::nullopt;
    return g.patientPoint((g.columns - 1) / 2.0, (g.rows - 1) / 2.0, slot);
}

void MprVolume::fillFrom(const QString &key)
{
    if (!m_volume || m_arriving || !m_slicesOf.contains(key) || m_filling.contains(key) || m_done.contains(key))
        return;
    m_filling << key;
    std::shared_ptr<Volume> volume = m_volume;
    const QList<std::pair<int, int>> slices = m_slicesOf.value(key);
    std::shared_ptr<const DecodedImage> decoded = m_images->peek(key);
    BlobStore *store = m_store;
    const QString seriesUid = m_series.seriesInstanceUid;
    const QString patientId = volume->valueInfo().identity.patientId;
    enum class Outcome { Filled, NotHere };
    runOnPool<Outcome>(computePool(), this, [volume, slices, decoded, store, key, seriesUid, patientId] {
        std::shared_ptr<const DecodedImage> image = decoded;
        QString why;
        if (!image) {
            Result<ByteView> bytes = runSync(store->read(key));
            if (!bytes.isOk() && bytes.error().code() == ErrorCode::NotFound)
                return Outcome::NotHere;  // still arriving
            Result<DecodedImage> d = bytes.isOk() ? decodeDicom(bytes.value()) : Result<DecodedImage>(bytes.error());
            if (d.isOk())
                image = std::make_shared<const DecodedImage>(d.takeValue());
            else
                why = d.error().message();
        }
        if (image && (image->info.identity.seriesInstanceUid != seriesUid || image->info.identity.patientId != patientId)) {
            why = QObject::tr("it is of another patient or series than the listing said");
            image.reset();
        }
        for (const auto &[slice, frame] : slices) {
            if (image)
                volume->fill(slice, image->pixels, frame, &image->info);
            else
                volume->refuse(slice, why);
        }
        return Outcome::Filled;
    },
                       [this, key, volume](Outcome &&outcome) {
                           if (volume != m_volume)
                               return;  // laid out again meanwhile: filled there anew
                           m_filling.remove(key);
                           if (outcome == Outcome::Filled)
                               m_done << key;
                           noteFilled();
                       });
}

void MprVolume::noteFilled()
{
    if (isComplete()) {
        m_notify.stop();
        emit filled();
    } else if (!m_notify.isActive()) {
        m_notify.start();
    }
}

bool MprVolume::isComplete() const
{
    if (!m_volume || m_arriving || m_layingOut || !m_filling.isEmpty() || !m_leftOut.isEmpty())
        return false;
    for (int s = 0; s < m_volume->slotCount(); ++s)
        if (m_volume->slotState(s) == SlotState::Arriving)
            return false;
    return true;
}

void MprVolume::onInstanceCached(const QString &key)
{
    const bool failedBefore = m_failed.remove(key) > 0;  // fetched after all
    if (m_waitingForFirst && isOfSeries(key)) {
        m_waitingForFirst = false;
        layOutListed({});  // the headers again, this one among them
        return;
    }
    if (m_layingOut || m_arriving)
        m_early << key;  // filled once the volume is laid out for good
    else if (m_leftOut.contains(key)
             || (failedBefore && !m_slicesOf.contains(key)
                 && isOfSeries(key)))
        layOutAgain();  // the listing did not place it: its own header does
    else
        fillFrom(key);
}

void MprVolume::onInstanceFailed(const QString &key, const QString &why)
{
    if (m_layingOut || m_arriving) {
        m_earlyFailures.insert(key, why);
        return;
    }
    m_failed.insert(key, why);
    if (m_leftOut.remove(key)) {  // left out, and it will not come
        if (m_volume) {
            m_volume->note(tr("%1 could not be fetched: %2").arg(key, why));
            noteFilled();
        } else if (m_leftOut.isEmpty()) {
            m_refusal = m_refusalUnlessMoreCome;  // none of those still coming will come: no volume after all
            emit refused(m_refusal);
        }
        return;
    }
    if (!m_volume || !m_slicesOf.contains(key) || m_done.contains(key))
        return;
    for (const auto &[slice, frame] : m_slicesOf.value(key))
        m_volume->refuse(slice, why);
    m_done << key;
    noteFilled();
}

} // namespace spectrum
