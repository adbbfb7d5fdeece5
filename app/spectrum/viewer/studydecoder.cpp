// SPDX-License-Identifier: Apache-2.0
#include "viewer/studydecoder.h"

#include "spectrum/core/resultjob.h"
#include "spectrum/core/threadpools.h"
#include "spectrum/imaging/codecs/decodecounts.h"
#include "spectrum/imaging/codecs/progressiveimage.h"
#include "spectrum/stores/blobs/blobstore.h"
#include "spectrum/stores/reading/imageloader.h"
#include "spectrum/stores/reading/studystreamer.h"

namespace spectrum {

/// The slice in view while it arrives: decoded (and filtered) as its bytes come; the image it ends with is the one
/// shown and kept once the instance is checked and cached — it is never decoded again.
struct StudyDecoder::Arriving
{
    quint64 serial = 0;                         ///< which arrival: late signals of a dropped decoder are not this one's
    std::shared_ptr<const QByteArray> buffer;   ///< the request whose bytes it decodes
    std::unique_ptr<ProgressiveImage> decoder;  ///< holds the arriving buffer while it reads it
    bool finishing = false;                     ///< every byte is in: the decoder is finishing
    bool cached = false;                        ///< the instance was checked and kept: it may be shown as whole
    bool ready = false;                         ///< the decoder finished: original and filtered below
    quint64 chainGeneration = 0;                ///< the filters it runs; others chosen since: only its original is kept
    QString chainDescription;
    std::shared_ptr<const DecodedImage> original, filtered;
};

namespace {

struct Loaded
{
    DecodedImage image;
    std::optional<PrerenderedFrame> frame;
};

/// `image` as read from the cache, and rendered with the window `render` holds when there is one.
Loaded loaded(DecodedImage image, const QString &key, const std::shared_ptr<NextWindowSlot> &render)
{
    Loaded out{std::move(image), std::nullopt};
    if (render) {
        std::optional<VoiWindow> window;
        {
            QMutexLocker lock(&render->mutex);
            window = render->window;
        }
        out.frame = prerenderFirstFrame(out.image, key, window);
    }
    return out;
}

/// `image`'s pixels through `chain`, as the image it shows (its size may change); null when the chain failed.
std::shared_ptr<const DecodedImage> filtered(const DecodedImage &image, const FilterChain &chain, Error *error = nullptr)
{
    noteFiltered(image.info.identity.sopInstanceUid);
    Result<PixelBuffer> pixels = applyFilters(chain, image.pixels, image.info, nullptr);
    if (!pixels.isOk()) {
        if (error)
            *error = pixels.error();
        return nullptr;
    }
    auto out = std::make_shared<DecodedImage>(DecodedImage{image.info, pixels.value()});
    out->info.columns = out->pixels.width();
    out->info.rows = out->pixels.height();
    return out;
}

} // namespace

StudyDecoder::StudyDecoder(BlobStore *store, ImageMemoryCache *images, StudyStreamer *streamer, QObject *parent)
    : QObject(parent), m_store(store), m_images(images), m_streamer(streamer)
{
    if (streamer) {
        connect(streamer, &StudyStreamer::instanceUpdated, this, &StudyDecoder::onUpdate);
        connect(streamer, &StudyStreamer::progress, this, &StudyDecoder::progressed);
    }
    connect(m_images, &ImageMemoryCache::inserted, this, [this](const QString &key) {
        m_pendingHere.remove(key);
        if (const auto it = m_wanted.find(key); it != m_wanted.end() && !it->job)
            m_wanted.erase(it);
        Q_EMIT ready(key);
    });
    connect(m_images, &ImageMemoryCache::pendingDropped, this, &StudyDecoder::onPendingDropped);
    connect(m_images, &ImageMemoryCache::notKept, this, [this](const QString &key, const std::shared_ptr<const DecodedImage> &image) {
        m_pendingHere.remove(key);
        if (m_givingUp.contains(key) || key.contains(QLatin1Char('\n')))
            return;  // its own (told already)
        // Another decoder's image, too large to keep: shown as it is by whoever waited for it here — never decoded
        // again and again, each decoder dropping what the other made.
        m_wanted.remove(key);
        Q_EMIT tooLarge(key, image, nullptr, QString());
    });
}

StudyDecoder::~StudyDecoder()
{
    // The memory cache outlives the decoder: nothing of it may call back into one half gone.
    disconnect(m_images, nullptr, this, nullptr);
    m_arriving.clear();
    QList<Job *> jobs;
    for (const Wanted &w : std::as_const(m_wanted)) {
        if (w.job)
            jobs << w.job;
    }
    m_wanted.clear();
    for (Job *job : std::as_const(jobs)) {
        disconnect(job, nullptr, this, nullptr);
        job->cancel();
    }
    // Decodes it started and will never hear back from: whoever else waits for them decodes them.
    for (const QString &key : std::as_const(m_pendingHere)) {
        if (!m_images->contains(key))
            m_images->setPending(key, false);
    }
}

void StudyDecoder::setPending(const QString &key, bool pending)
{
    if (pending)
        m_pendingHere.insert(key);
    else
        m_pendingHere.remove(key);
    m_images->setPending(key, pending);
}

bool StudyDecoder::inView(const QString &key) const
{
    for (const View &v : m_views) {
        if (v.key == key)
            return true;
    }
    return false;
}

bool StudyDecoder::isWanted(const QString &key) const
{
    if (m_wanted.contains(key))
        return true;
    for (const View &v : m_views) {
        if (v.key == key || v.near.contains(key))
            return true;
    }
    return false;
}

std::shared_ptr<NextWindowSlot> StudyDecoder::renderSlotFor(const QString &key) const
{
    for (const View &v : m_views) {
        if (v.key == key && v.render)
            return v.render;
    }
    return nullptr;
}

void StudyDecoder::setView(const QObject *viewer, const QString &key, const QSet<QString> &near, std::shared_ptr<NextWindowSlot> render)
{
    View &view = m_views[viewer];
    const QString before = std::exchange(view.key, key);
    view.near = near;
    view.render = std::move(render);
    if (before.isEmpty() || before == key || inView(before))
        return;
    // Scrolled on: the decode of the slice that was in view while it arrives is no longer wanted on screen. One that
    // has every byte is let finish: its image is kept once the instance is (never decoded again).
    if (const auto it = m_arriving.find(before); it != m_arriving.end() && !(*it)->finishing && !(*it)->ready)
        dropArriving(before);
}

void StudyDecoder::forget(const QObject *viewer)
{
    setView(viewer, QString());
    m_views.remove(viewer);
    release(viewer, {}, true);
}

void StudyDecoder::setFilters(const FilterChain &chain, const QString &description)
{
    if (description == m_chainDescription && chain.isEmpty() == m_chain.isEmpty())
        return;  // the same (a description names its chain, as the filtered images' keys do): every pane says it
    m_chain = chain;
    m_chainDescription = description;
    ++m_chainGeneration;
    // A decode still reading the arriving bytes ran the old chain: dropped, made again from the bytes with the new one
    // as they go on coming. One that has every byte is let finish: its original is kept (never decoded again), and
    // filtered anew where it is shown.
    const QStringList keys = m_arriving.keys();
    for (const QString &key : keys) {
        const std::shared_ptr<Arriving> a = m_arriving.value(key);
        if (!a->finishing && !a->ready)
            dropArriving(key);
    }
}

StudyDecoder::Load StudyDecoder::load(const QObject *viewer, const QString &key)
{
    if (m_images->contains(key))
        return Load::Here;
    m_wanted[key].by.insert(viewer);
    if (m_wanted.value(key).job || m_images->isPending(key))
        return Load::Coming;
    startLoad(key);
    return m_wanted.value(key).job ? Load::Started : Load::Coming;
}

void StudyDecoder::release(const QObject *viewer, const QSet<QString> &keep, bool cancelRunning)
{
    QList<Job *> cancel;
    for (auto it = m_wanted.begin(); it != m_wanted.end();) {
        // A read it asked for goes on unless it is to stop — still its own: nobody else stops it meanwhile.
        if (keep.contains(it.key()) || !it->by.contains(viewer) || (it->job && !cancelRunning)) {
            ++it;
            continue;
        }
        it->by.remove(viewer);
        if (!it->by.isEmpty()) {
            ++it;
            continue;
        }
        if (it->job)
            cancel << it->job;
        it = m_wanted.erase(it);
    }
    for (Job *job : std::as_const(cancel)) {
        job->cancel();
    }  // its finished() releases its pending mark
}

bool StudyDecoder::isLoading(const QString &key) const
{
    const auto it = m_wanted.constFind(key);
    return it != m_wanted.cend() && it->job;
}

void StudyDecoder::startLoad(const QString &key)
{
    if (m_retired || m_images->contains(key) || m_images->isPending(key) || isLoading(key))
        return;
    // The streamer's instance (before its listing, every one may be) until it is in the cache.
    if (m_streamer && m_streamer->isAwaited(key))
        return;  // read once it is here (onKept)
    // The slice in view is windowed on the pool too, as it is decoded (the GUI thread then only paints it).
    const std::shared_ptr<NextWindowSlot> render = renderSlotFor(key);
    ResultJob<Loaded> *job = nullptr;
    if (m_store->readsOnAnyThread()) {
        job = makeJob<Loaded>([store = m_store, key, render](const CancelToken &) -> Result<Loaded> {
            Result<DecodedImage> image = runSync(loadImage(store, key));
            if (!image.isOk())
                return image.error();
            return loaded(std::move(image.value()), key, render);
        });
    } else {
        job = chainJob<Loaded>(loadImage(m_store, key), [key, render](const DecodedImage &image, const CancelToken &) {
            return Result<Loaded>(loaded(image, key, render));
        });
    }
    m_wanted[key].job = job;
    setPending(key, true);  // whoever else wants it waits for this decode
    connect(job, &Job::finished, this, [this, job, key] {
        const auto it = m_wanted.find(key);
        const bool asked = it != m_wanted.end() && it->job == job;
        if (asked)
            it->job = nullptr;
        if (job->hasError()) {
            const Error e = job->error();
            const bool damaged = e.code() == ErrorCode::Corrupt && m_streamer;
            if (asked && !damaged)
                m_wanted.erase(it);  // those who asked hear why (a damaged copy: still wanted once fetched again)
            m_givingUp.insert(key);  // not asked again here: those who waited for it are told below
            setPending(key, false);
            m_givingUp.remove(key);
            if (damaged)
                m_streamer->refetch(key);  // dropped from the cache as damaged: never shown; fetched again
            Q_EMIT decodeFailed(key, e);
            return;
        }
        const Loaded &result = job->result().value();
        if (result.frame)
            Q_EMIT prerendered(key, *result.frame);
        keep(key, std::make_shared<const DecodedImage>(result.image), nullptr, m_chainGeneration);
    });
    job->start(ExecutionPolicy::Async);
}

void StudyDecoder::retire(const QSet<QString> &forgotten)
{
    m_retired = true;
    m_forgotten = forgotten;
    disconnect(m_images, nullptr, this, nullptr);  // nothing more is loaded for its panes
}

bool StudyDecoder::droppedRetired(const QString &key)
{
    const qsizetype newline = key.indexOf(QLatin1Char('\n'));  // a filtered version: "key\nfilters"
    if (!m_retired || !m_forgotten.contains(newline < 0 ? key : key.left(newline)))
        return false;
    // Its viewer closed and the memory cache forgot the image: not kept. Whoever else waits for it (the same study
    // opened again) decodes it — the mark ended only if it is this decoder's.
    if (m_pendingHere.remove(key))
        m_images->setPending(key, false);
    return true;
}

void StudyDecoder::keep(const QString &key, std::shared_ptr<const DecodedImage> original, std::shared_ptr<const DecodedImage> filtered, quint64 chainGeneration)
{
    if (droppedRetired(key)) {
        if (filtered)
            droppedRetired(ImageMemoryCache::filteredKey(key, m_chainDescription));
        return;
    }
    if (chainGeneration != m_chainGeneration)
        filtered.reset();  // other filters were chosen meanwhile: only its original is kept
    if (ImageMemoryCache::costOf(*original) > m_images->budget()) {
        // Too big to keep: shown all the same by whoever has it in view, and not asked for again here.
        m_wanted.remove(key);
        m_pendingHere.remove(key);
        Q_EMIT tooLarge(key, original, filtered, filtered ? m_chainDescription : QString());
        m_givingUp.insert(key);
        m_images->insert(key, original);  // not kept: ends its pending mark (notKept, to the other decoders)
        m_givingUp.remove(key);
        return;
    }
    // The filtered version first: the pane that sees the original inserted finds it, and filters nothing.
    if (filtered)
        m_images->insert(ImageMemoryCache::filteredKey(key, m_chainDescription), filtered);
    m_images->insert(key, original);  // ready()
}

void StudyDecoder::onPendingDropped(const QString &key)
{
    m_pendingHere.remove(key);
    if (m_givingUp.contains(key))
        return;
    // Whoever decoded it gave up: decoded here when it is wanted, from the cache.
    if (isWanted(key))
        startLoad(key);
    Q_EMIT ready(key);
}

void StudyDecoder::filter(const QString &key, const std::shared_ptr<const DecodedImage> &original, const FilterChain &chain, const QString &description)
{
    const QString filteredKey = ImageMemoryCache::filteredKey(key, description);
    if (m_images->contains(filteredKey) || m_images->isPending(filteredKey))
        return;  // made already, or being made: ready() says
    // On the blocking pool (drained before the store goes). Marked pending meanwhile, so that a pane showing the same
    // image waits for it instead of filtering it again.
    setPending(filteredKey, true);
    runOnPool<std::pair<std::shared_ptr<const DecodedImage>, Error>>(blockingPool(), this, [chain, original] {
        Error error;
        std::shared_ptr<const DecodedImage> out = filtered(*original, chain, &error);
        return std::make_pair(out, error);
    }, [this, key, original, filteredKey, description](std::pair<std::shared_ptr<const DecodedImage>, Error> &&made) {
        if (droppedRetired(filteredKey))
            return;
        if (made.first && ImageMemoryCache::costOf(*made.first) <= m_images->budget()) {
            m_images->insert(filteredKey, made.first);  // what it is made of is in its key: right whoever asked
            return;
        }
        m_givingUp.insert(filteredKey);
        setPending(filteredKey, false);
        m_givingUp.remove(filteredKey);
        if (made.first)
            Q_EMIT tooLarge(key, original, made.first, description);  // not kept: shown all the same
        else
            Q_EMIT decodeFailed(filteredKey, made.second);
    });
}

void StudyDecoder::onUpdate(const InstanceUpdate &update)
{
    switch (update.step) {
    case InstanceUpdate::Arriving:
        return onArriving(update);
    case InstanceUpdate::Whole:
        return onWhole(update.key, update.bytes);
    case InstanceUpdate::Stored:  // in the cache before the listing: shown from the provisional layout
    case InstanceUpdate::Kept:
        return onKept(update.key);
    case InstanceUpdate::Failed:
        if (m_arriving.contains(update.key))
            dropArriving(update.key);  // what arrived of it is never shown as if it were the image
        Q_EMIT fetchFailed(update.key, update.error);
        return;
    }
}

void StudyDecoder::onArriving(const InstanceUpdate &update)
{
    const QString &key = update.key;
    if (const auto it = m_arriving.find(key); it != m_arriving.end() && (*it)->buffer != update.arrival.buffer)
        dropArriving(key);  // another request for it (fetched again): its own bytes, its own decoder
    if (!m_arriving.contains(key)) {
        if (!inView(key) || m_images->contains(key) || m_images->isPending(key))
            return;  // only a slice in view is shown while it arrives, once
        auto a = std::make_shared<Arriving>();
        a->serial = ++m_arrivalSerial;
        a->buffer = update.arrival.buffer;
        a->chainGeneration = m_chainGeneration;
        a->chainDescription = m_chain.isEmpty() ? QString() : m_chainDescription;
        a->decoder = std::make_unique<ProgressiveImage>(m_chain);  // filtered while it arrives
        a->decoder->enablePreviews(40);
        m_arriving.insert(key, a);
        setPending(key, true);
        ProgressiveImage *decoder = a->decoder.get();
        // Queued signals of a decoder already dropped still arrive: only this arrival's count.
        auto current = [this, key, serial = a->serial]() -> Arriving * {
            const auto it = m_arriving.constFind(key);
            return it != m_arriving.cend() && (*it)->serial == serial ? it->get() : nullptr;
        };
        connect(decoder, &ProgressiveImage::previewReady, this,
                [this, key, current](const DecodedImage &image, int rows, const DecodedImage &original, int originalRows) {
                    const Arriving *now = current();
                    if (now && now->chainGeneration == m_chainGeneration)  // never under other filters' name
                        Q_EMIT previewReady(key, image, rows, original, originalRows, now->chainDescription);
                });
        connect(decoder, &ProgressiveImage::finished, this, [this, key, current](const DecodedImage &original, const DecodedImage &filtered) {
            Arriving *now = current();
            if (!now)
                return;
            now->original = std::make_shared<const DecodedImage>(original);
            now->filtered = now->chainDescription.isEmpty() || !isFilterable(original.pixels.format())
                                ? nullptr : std::make_shared<const DecodedImage>(filtered);
            now->ready = true;
            commitArriving(key);
        });
        connect(decoder, &ProgressiveImage::failed, this, [this, key, current](const Error &) {
            if (current())
                dropArriving(key);  // not decodable while it arrives (real values under filters, say): from the cache
        });
    }
    const std::shared_ptr<Arriving> a = m_arriving.value(key);  // held: a decoder that fails at once drops it
    if (a->finishing)
        return;
    a->decoder->bytesAvailable(update.arrival);
    if (update.arrival.isComplete() && m_arriving.value(key) == a) {
        a->finishing = true;
        a->decoder->finishAsync();
    }
}

void StudyDecoder::commitArriving(const QString &key)
{
    const std::shared_ptr<Arriving> a = m_arriving.value(key);
    if (!a || !a->ready || !a->cached)
        return;  // kept only once the instance is checked and in the cache, and decoded
    const QString patient = !m_streamer ? QString()
                            : m_streamer->isListed() ? m_streamer->study().identity.patientId : m_streamer->firstLook().identity.patientId;
    if (a->original->info.identity.sopInstanceUid != key || (!patient.isEmpty() && a->original->info.identity.patientId != patient)) {
        // What arrived on this request is not the instance (or the patient) the study's is: never kept under its key;
        // the cache holds the checked one.
        dropArriving(key);
        return startLoad(key);
    }
    m_arriving.remove(key);
    keep(key, a->original, a->filtered, a->chainGeneration);
}

void StudyDecoder::dropArriving(const QString &key)
{
    if (!m_arriving.remove(key))
        return;
    if (!m_images->contains(key))
        setPending(key, false);  // whoever waited for it decodes it (onPendingDropped)
}

void StudyDecoder::onWhole(const QString &key, const ByteView &bytes)
{
    if (m_images->contains(key) || m_images->isPending(key))
        return;  // decoded already, or being decoded (the slice in view, while it arrived)
    if (!isWanted(key))
        return;  // nobody shows it or keeps it near: read from the cache if it is ever asked for
    // Decoded (and filtered) once, from the bytes just written into the cache, on the blocking pool; kept in memory,
    // where the panes find it.
    setPending(key, true);
    struct Decoded
    {
        Result<DecodedImage> original = Error(ErrorCode::Internal, QString());
        std::shared_ptr<const DecodedImage> filtered;
    };
    runOnPool<Decoded>(blockingPool(), this, [bytes, chain = m_chain] {
        Decoded d;
        d.original = decodeDicom(bytes);
        if (d.original.isOk() && !chain.isEmpty() && isFilterable(d.original.value().pixels.format()))
            d.filtered = filtered(d.original.value(), chain);
        return d;
    }, [this, key, generation = m_chainGeneration](Decoded &&d) {
        if (!d.original.isOk())
            return setPending(key, false);  // read from the cache instead (which says why it fails)
        keep(key, std::make_shared<const DecodedImage>(d.original.takeValue()), d.filtered, generation);
    });
}

void StudyDecoder::onKept(const QString &key)
{
    if (const auto it = m_arriving.find(key); it != m_arriving.end()) {
        (*it)->cached = true;
        if ((*it)->finishing)
            return commitArriving(key);  // now, or once the decoder is done
        dropArriving(key);  // its last bytes never reached the decoder: read from the cache
    }
    if (isWanted(key))
        startLoad(key);
}

} // namespace spectrum
