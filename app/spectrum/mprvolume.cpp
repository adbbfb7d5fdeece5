#include "mprvolume.h"

#include "spectrum/core/job.h"
#include "spectrum/core/resultjob.h"
#include "spectrum/core/threadpools.h"
#include "spectrum/imaging/dicomdecoder.h"
#include "spectrum/stores/blobstore.h"

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
    if (!m_store->readsOnAnyThread()) {
        m_refusal = tr("the series is not in this workstation's cache");
        emit refused(m_refusal);
        return;
    }
    BlobStore *store = m_store;
    const QList<InstanceRef> instances = m_series.instances;
    runOnPool<QList<Header>>(blockingPool(), this, [store, instances] {
        // Every slice placed by the listing (the cache's index, or the archive's answer), in one plane and frame of
        // reference: one header is read for the rest of what a slice is, and each slice's own is checked against it
        // when its pixels are decoded. Otherwise (multi-frame images, slices the listing does not place) every header.
        QList<Header> headers;
        for (const InstanceRef &ref : instances)
            headers << Header{ref.key, std::nullopt, ref};
        auto read = [&](Header &h) {
            if (Result<ByteView> bytes = runSync(store->read(h.key)); bytes.isOk())
                if (Result<ImageInfo> info = readDicomImageInfo(bytes.value()); info.isOk() && info.value().rows > 0)
                    h.info = info.value();
            return h.info.has_value();
        };
        const Header *model = nullptr;
        for (Header &h : headers)
            if (read(h)) {
                model = &h;
                break;
            }
        const bool placedByListing = model && model->info->frames == 1 && std::all_of(headers.begin(), headers.end(), [&](const Header &h) {
            const auto n = model->info->sliceNormal();
            return h.ref.hasPlace && h.ref.frameOfReferenceUid == model->info->frameOfReferenceUid
                && std::abs(vec::dot(h.ref.normal, n)) > 0.9999;
        });
        if (!placedByListing)
            for (Header &h : headers)
                if (!h.info)
                    read(h);
        return headers;
    },
                             [this](QList<Header> &&headers) { makeVolume(std::move(headers)); });
}

void MprVolume::makeVolume(QList<Header> headers)
{
    // The slices: every frame of every image read; instances not here yet placed where the listing says, with the
    // rest of their header taken from one that is (checked when their pixels come).
    const ImageInfo *model = nullptr;
    for (const Header &h : std::as_const(headers))
        if (h.info && h.info->frames == 1)
            model = &*h.info;
    QList<VolumeSlice> slices;
    QList<std::pair<QString, int>> origin;  // per slice: instance key, frame
    QSet<QString> laidOutByListing;
    int unplaced = 0;
    for (const Header &h : std::as_const(headers)) {
        if (h.info) {
            for (const VolumeSlice &s : volumeSlices(h.key, *h.info)) {
                slices << s;
                origin << std::make_pair(h.key, s.frame);
            }
        } else if (model && h.ref.hasPlace && h.ref.frameOfReferenceUid == model->frameOfReferenceUid
                   && std::abs(vec::dot(h.ref.normal, model->sliceNormal())) > 0.9999) {
            // Lies in the stack's plane, by the listing: placed there, its header checked when it comes.
            VolumeSlice s{h.key, 0, *model};
            s.info.imagePosition = h.ref.position;
            s.info.identity.sopInstanceUid = h.ref.sopInstanceUid;
            s.info.frameOfReferenceUid = h.ref.frameOfReferenceUid;
            slices << s;
            origin << std::make_pair(h.key, 0);
            laidOutByListing << h.key;
        } else {
            ++unplaced;
        }
    }
    // One patient, one study, one series: a header that names another is never made part of the volume.
    for (const Header &h : std::as_const(headers)) {
        if (!h.info)
            continue;
        const DicomIdentity &id = h.info->identity;
        if (id.seriesInstanceUid != m_series.seriesInstanceUid || (model && (id.patientId != model->identity.patientId
                                                                             || id.studyInstanceUid != model->identity.studyInstanceUid))) {
            m_refusal = tr("its images name other patients, studies or series (%1): not made into one volume").arg(id.sopInstanceUid);
            emit refused(m_refusal);
            return;
        }
    }
    if (!model && std::count_if(headers.begin(), headers.end(), [](const Header &h) { return !h.info && h.ref.hasPlace; }) >= 2) {
        // Listed, placed, but none here yet to say the rest of a header: laid out when the first one comes.
        m_waitingForFirst = true;
        return;
    }
    const VolumeGeometry geometry = volumeGeometry(slices);
    Result<std::shared_ptr<Volume>> made = geometry.ok ? Volume::create(geometry, slices, m_memoryLimit, m_spillFolder)
                                                       : Result<std::shared_ptr<Volume>>(Error(ErrorCode::Unsupported, geometry.refusal));
    if (!made.isOk()) {
        m_refusal = made.error().message();
        emit refused(m_refusal);
        return;
    }
    m_volume = made.value();
    if (unplaced > 0)
        m_volume->note(tr("%n slice(s) left out: not in the cache yet, and the study's listing does not say where they lie", nullptr, unplaced));
    for (int i = 0; i < slices.size(); ++i)
        m_slicesOf[origin[i].first] << std::make_pair(i, origin[i].second);
    m_msToReady = m_clock.elapsed();
    emit ready();
    // Every slice in the cache now, from the memory cache where it is decoded already.
    for (const Header &h : std::as_const(headers))
        if (m_slicesOf.contains(h.key) && !laidOutByListing.contains(h.key))
            fillFrom(h.key);
    // Those placed by the listing: filled if they are here by now (else they stay arriving until they come).
    for (const QString &key : std::as_const(laidOutByListing))
        fillFrom(key);
    for (const QString &key : std::exchange(m_early, {}))
        fillFrom(key);
    const QHash<QString, QString> failures = std::exchange(m_earlyFailures, {});
    for (auto it = failures.begin(); it != failures.end(); ++it)
        onInstanceFailed(it.key(), it.value());
}

void MprVolume::fillFrom(const QString &key)
{
    if (!m_volume || !m_slicesOf.contains(key) || m_filling.contains(key) || m_done.contains(key))
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
                       [this, key](Outcome &&outcome) {
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
    if (!m_volume || !m_filling.isEmpty())
        return false;
    for (int s = 0; s < m_volume->slotCount(); ++s)
        if (m_volume->slotState(s) == SlotState::Arriving)
            return false;
    return true;
}

void MprVolume::onInstanceCached(const QString &key)
{
    if (m_waitingForFirst && std::any_of(m_series.instances.begin(), m_series.instances.end(), [&](const InstanceRef &i) { return i.key == key; })) {
        m_waitingForFirst = false;
        start();  // the headers again, this one among them
        return;
    }
    if (!m_volume && m_refusal.isEmpty())
        m_early << key;  // the headers are being read: filled once the volume is made
    else
        fillFrom(key);
}

void MprVolume::onInstanceFailed(const QString &key, const QString &why)
{
    if (!m_volume && m_refusal.isEmpty())
        m_earlyFailures.insert(key, why);
    if (!m_volume || !m_slicesOf.contains(key) || m_done.contains(key))
        return;
    for (const auto &[slice, frame] : m_slicesOf.value(key))
        m_volume->refuse(slice, why);
    m_done << key;
    noteFilled();
}

} // namespace spectrum
